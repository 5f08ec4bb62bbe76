package jsonrpc

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"shinken.dev/go/internal/strictjson"
)

func TestParseSingle(t *testing.T) {
	tests := []struct {
		line   string
		kind   MessageKind
		id     string
		method string
		params string
		result string
		code   int64 // the error object of a response
	}{
		{line: `{"jsonrpc":"2.0","id":1,"method":"a/b","params":{"x":1}}`, kind: KindRequest, id: "1", method: "a/b", params: `{"x":1}`},
		{line: `{"method":"m","jsonrpc":"2.0","id":"s","params":[1]}`, kind: KindRequest, id: `"s"`, method: "m", params: `[1]`},
		{line: `{"jsonrpc":"2.0","id":null,"method":"m"}`, kind: KindRequest, id: "null", method: "m"},
		{line: `{"jsonrpc":"2.0","method":"log","params":{}}`, kind: KindNotification, method: "log", params: `{}`},
		{line: `{"jsonrpc":"2.0","id":7,"result":null}`, kind: KindResponse, id: "7", result: "null"},
		{line: `{"jsonrpc":"2.0","id":7,"error":{"code":-32004,"message":"failed","data":{"a":1}}}`, kind: KindResponse, id: "7", code: -32004},
		{line: `{"jsonr\u0070c":"2.0","id":1,"method":"m"}`, kind: KindRequest, id: "1", method: "m"}, // an escaped key is its unescaped self
	}
	for _, tt := range tests {
		items, batch, perr := Parse([]byte(tt.line), nil)
		if perr != nil || batch || len(items) != 1 {
			t.Errorf("Parse(%s) = %v, %v, %v", tt.line, items, batch, perr)
			continue
		}
		m := items[0]
		if m.Err != nil || m.Kind != tt.kind || string(m.ID) != tt.id || m.Method != tt.method ||
			string(m.Params) != tt.params || string(m.Result) != tt.result {
			t.Errorf("Parse(%s) = %+v", tt.line, m)
		}
		if tt.code != 0 && (m.Error == nil || m.Error.Code != tt.code) {
			t.Errorf("Parse(%s): error %+v, want code %d", tt.line, m.Error, tt.code)
		}
	}
}

func TestParseRefusals(t *testing.T) {
	tests := []struct {
		line    string
		code    int64 // of the whole line, or of its one item
		whole   bool  // refused as a whole
		keepsID bool  // the answer may carry the message's id
	}{
		{line: `not json`, code: CodeParse, whole: true},
		{line: `{"jsonrpc":"2.0","id":1,"method":"m"`, code: CodeParse, whole: true},
		{line: "{\"jsonrpc\":\"2.0\",\"method\":\"\xff\"}", code: CodeParse, whole: true},
		{line: `42`, code: CodeInvalidRequest, whole: true},
		{line: `"x"`, code: CodeInvalidRequest, whole: true},
		{line: `[]`, code: CodeInvalidRequest, whole: true},
		{line: `{"id":1,"method":"m"}`, code: CodeInvalidRequest, keepsID: true},
		{line: `{"jsonrpc":"1.0","id":1,"method":"m"}`, code: CodeInvalidRequest, keepsID: true},
		{line: `{"jsonrpc":2,"id":1,"method":"m"}`, code: CodeInvalidRequest, keepsID: true},
		{line: `{"jsonrpc":"2.0","id":1,"Method":"m"}`, code: CodeInvalidRequest}, // no method: maybe a broken response
		{line: `{"jsonrpc":"2.0","id":1,"method":"a","method":"b"}`, code: CodeInvalidRequest},
		{line: `{"jsonrpc":"2.0","id":1,"method":"a","params":{"k":1,"k":2}}`, code: CodeInvalidRequest},
		{line: `{"jsonrpc":"2.0","id":1,"method":"a","params":null}`, code: CodeInvalidRequest, keepsID: true},
		{line: `{"jsonrpc":"2.0","id":1,"method":"a","params":"x"}`, code: CodeInvalidRequest, keepsID: true},
		{line: `{"jsonrpc":"2.0","id":1,"method":""}`, code: CodeInvalidRequest, keepsID: true},
		{line: `{"jsonrpc":"2.0","id":1,"method":3}`, code: CodeInvalidRequest, keepsID: true},
		{line: `{"jsonrpc":"2.0","id":{},"method":"m"}`, code: CodeInvalidRequest},
		{line: `{"jsonrpc":"2.0","id":[1],"method":"m"}`, code: CodeInvalidRequest},
		{line: `{"jsonrpc":"2.0","id":1,"method":"m","result":1}`, code: CodeInvalidRequest, keepsID: true},
		{line: `{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"x"}}`, code: CodeInvalidRequest},
		{line: `{"jsonrpc":"2.0","result":1}`, code: CodeInvalidRequest},
		{line: `{"jsonrpc":"2.0","id":1}`, code: CodeInvalidRequest},
		{line: `{"jsonrpc":"2.0","id":1,"result":1,"params":{}}`, code: CodeInvalidRequest},
		{line: `{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}`, code: CodeInvalidRequest},
		{line: `{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"m"}}`, code: CodeInvalidRequest},
		{line: `{"jsonrpc":"2.0","id":1,"error":{"code":1}}`, code: CodeInvalidRequest},
		{line: `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","Data":1}}`, code: CodeInvalidRequest},
		{line: `{"jsonrpc":"2.0","id":1,"error":"boom"}`, code: CodeInvalidRequest},
		{line: `{"jsonrpc":"2.0","id":1,"method":"m","extra":true}`, code: CodeInvalidRequest, keepsID: true},
		// The bounds on one line's work: an object's keys, a batch's
		// messages (refused whole, with one answer).
		{line: string(wideObject(strictjson.MaxKeys + 1)), code: CodeParse, whole: true},
		{line: `{"jsonrpc":"2.0","method":"m",` + strings.TrimSuffix(strings.TrimPrefix(string(wideObject(strictjson.MaxKeys-1)), `{"jsonrpc":"2.0","id":1,"method":"m","params":{`), "}"), code: CodeParse, whole: true},
		{line: "[" + strings.Repeat("1,", MaxBatch) + "1]", code: CodeInvalidRequest, whole: true},
		{line: "[" + strings.Repeat(`{"jsonrpc":"2.0","method":"n"},`, MaxBatch) + `{"jsonrpc":"2.0","method":"n"}]`, code: CodeInvalidRequest, whole: true},
	}
	for _, tt := range tests {
		items, _, perr := Parse([]byte(tt.line), nil)
		if tt.whole {
			if perr == nil || perr.Code != tt.code {
				t.Errorf("Parse(%s): line error %v, want code %d", tt.line, perr, tt.code)
			}
			continue
		}
		if perr != nil || len(items) != 1 || items[0].Err == nil || items[0].Err.Code != tt.code {
			t.Errorf("Parse(%s) = %+v, %v; want an item refused with %d", tt.line, items, perr, tt.code)
			continue
		}
		if got := items[0].ID != nil; got != tt.keepsID {
			t.Errorf("Parse(%s): answer carries id %s, want kept=%v", tt.line, items[0].ID, tt.keepsID)
		}
	}
}

func TestParseBatch(t *testing.T) {
	line := `[{"jsonrpc":"2.0","id":1,"method":"a"}, {"jsonrpc":"2.0","method":"n"}, 5,
	          {"jsonrpc":"2.0","id":2,"method":"b","params":{"x":1,"x":2}}, {"jsonrpc":"2.0","id":3,"result":{}}]`
	items, batch, perr := Parse([]byte(line), nil)
	if perr != nil || !batch || len(items) != 5 {
		t.Fatalf("Parse(batch) = %d items, %v, %v", len(items), batch, perr)
	}
	if items[0].Kind != KindRequest || items[1].Kind != KindNotification || items[4].Kind != KindResponse {
		t.Errorf("kinds: %v %v %v", items[0].Kind, items[1].Kind, items[4].Kind)
	}
	if items[2].Err == nil || items[3].Err == nil || items[0].Err != nil {
		t.Errorf("only the third and fourth should be refused: %v %v %v", items[0].Err, items[2].Err, items[3].Err)
	}
}

func TestAppenders(t *testing.T) {
	lines := []string{
		string(AppendRequest(nil, 12, "events/fact", []byte(`{"a":1}`))),
		string(AppendRequest(nil, 1, "shutdown", nil)),
		string(AppendNotification(nil, "log", []byte(`{"level":"info","message":"hi"}`))),
		string(AppendResult(nil, []byte(`"x"`), []byte(`{"ok":true}`))),
		string(AppendResult(nil, []byte(`3`), nil)),
		string(AppendError(nil, nil, &Error{Code: -32001, Message: "not \"yours\""})),
		string(AppendError(nil, []byte(`4`), &Error{Code: 1, Message: "m", Data: []byte(`[1]`)})),
	}
	for _, l := range lines {
		items, _, perr := Parse([]byte(l), nil)
		if perr != nil || len(items) != 1 || items[0].Err != nil {
			t.Errorf("our own line %s does not parse: %v %+v", l, perr, items)
		}
	}
	if !strings.Contains(lines[1], `"method":"shutdown"}`) || strings.Contains(lines[1], "params") {
		t.Errorf("nil params must be left out: %s", lines[1])
	}
}

// BenchmarkParse decodes a fact as a plugin receives it.
func BenchmarkParse(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","method":"events/fact","params":{"name":"agent.status","version":1,"seq":123456,"at":"2026-11-29T23:30:07.123456789Z","project":{"id":"p","name":"Shop","private":false},"agent":{"id":"a1","name":"Ada"},"data":{"status":"working","was":"idle"}}}`)
	items := make([]Item, 0, 1)
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		var err *Error
		items, _, err = Parse(line, items[:0])
		if err != nil || items[0].Err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseHostile parses the lines that cost the most a byte, each
// near a MiB, beside encoding/json's Valid on the same bytes (which looks
// for no duplicate key): an object at MaxKeys members, repeated; one object
// of 90,000 members (refused at its 1025th); a batch of half a million 1s
// (refused at its 257th item).
func BenchmarkParseHostile(b *testing.B) {
	var wide []byte
	wide = append(wide, `{"jsonrpc":"2.0","method":"log","params":[`...)
	for i := 0; len(wide) < 1<<20; i++ {
		if i > 0 {
			wide = append(wide, ',')
		}
		o := wideObject(strictjson.MaxKeys)
		wide = append(wide, o[len(`{"jsonrpc":"2.0","id":1,"method":"m","params":`):len(o)-1]...)
	}
	wide = append(wide, "]}"...)
	huge := []byte(`{"jsonrpc":"2.0","method":"log"`)
	for i := 0; i < 90000; i++ {
		huge = append(huge, `,"k`...)
		huge = strconv.AppendInt(huge, int64(i), 10)
		huge = append(huge, `":1`...)
	}
	huge = append(huge, '}')
	batch := []byte("[1" + strings.Repeat(",1", 1<<19) + "]")
	for _, tt := range []struct {
		name string
		line []byte
	}{{"objects-at-MaxKeys", wide}, {"one-object-of-90000", huge}, {"batch-of-ones", batch}} {
		b.Run(tt.name+"/Parse", func(b *testing.B) {
			b.SetBytes(int64(len(tt.line)))
			for b.Loop() {
				Parse(tt.line, nil)
			}
		})
		b.Run(tt.name+"/json.Valid", func(b *testing.B) {
			b.SetBytes(int64(len(tt.line)))
			for b.Loop() {
				json.Valid(tt.line)
			}
		})
	}
}

// TestErrorsQuoteKeysShort: an error names a key by its first bytes, so
// that a key of a megabyte makes no answer, and no journal entry, of a
// megabyte.
func TestErrorsQuoteKeysShort(t *testing.T) {
	key := strings.Repeat("k", 1<<20)
	items, _, perr := Parse([]byte(`{"jsonrpc":"2.0","id":1,"method":"m","`+key+`":1}`), nil)
	if perr != nil || len(items) != 1 || items[0].Err == nil {
		t.Fatalf("Parse = %+v, %v", items, perr)
	}
	if n := len(items[0].Err.Message); n > 200 || !strings.Contains(items[0].Err.Message, "(1048576 bytes)") {
		t.Errorf("the error of an unknown member of a MiB: %d bytes: %.300s", n, items[0].Err.Message)
	}
	err := strictjson.Validate([]byte(`{"` + key + `":1,"` + key + `":2}`))
	if err == nil || len(err.Error()) > 200 {
		t.Errorf("the error of a duplicate key of a MiB: %.300v", err)
	}
}
