package escouade

import (
	"bufio"
	"bytes"
	"encoding/json"
	"log/slog"
	"testing"
	"time"
	"unicode/utf8"

	"shinken.dev/go/escouade/internal/engine"
)

// FuzzEngineReport feeds the Host's decoder of an engine's reports
// anything: it journals what holds, refuses the rest, and never panics.
func FuzzEngineReport(f *testing.F) {
	for _, s := range []string{
		`{"level":8,"msg":"script interrupted: a turn ran past 1s"}`,
		`{"level":0,"msg":"uncaught: x","limited":true,"attrs":{"stream":"script"}}`,
		`{"level":8,"msg":"does not compile","fatal":true}`,
		`{"level":"ERROR","msg":1}`,
		`{"level":8,"level":8,"msg":""}`,
		`{"msg":"x","other":1}`,
		`[]`,
		``,
	} {
		f.Add([]byte(s))
	}
	h := New(&Options{Journal: slog.DiscardHandler})
	f.Fuzz(func(t *testing.T, params []byte) {
		e := &engineProcess{inst: &instance{p: &Plugin{h: h, j: newJournal(h, "fuzz")}}, says: newLimiter(journalRate, journalBurst)}
		e.report(params)
		// What is kept of a fatal report is a journal line: UTF-8, cut.
		if !utf8.ValidString(e.failure) || len(e.failure) > maxJournalLine {
			t.Errorf("failure kept as %q", e.failure)
		}
	})
}

// FuzzEngineBoot feeds an engine's reader of its first line anything: it
// reads what holds within its bounds, refuses the rest, and never panics.
func FuzzEngineBoot(f *testing.F) {
	good, _ := json.Marshal(engineBoot{Kind: "js", Name: "main.js", ID: "p", Code: 10, Memory: 1 << 20, CPU: time.Second, Script: engine.ScriptBounds{MaxLine: 1 << 20, MaxIn: 1 << 20, Turn: time.Second, Heap: 1 << 20}})
	for _, s := range []string{
		string(good) + "\n0123456789",
		`{"kind":"wasm","code":-1,"memory":1,"cpu":1}` + "\n",
		`{"kind":"js","memory":1,"cpu":1,"extra":true}` + "\n",
		`{"kind":"js"}`,
		"\n",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		boot, err := readBoot(bufio.NewReaderSize(bytes.NewReader(data), engineBootMax))
		if err != nil {
			return
		}
		if boot.Code < 0 || boot.Code > maxWASM || boot.Memory <= 0 || boot.CPU <= 0 {
			t.Errorf("bounds out of range accepted: %+v", boot)
		}
	})
}
