package fence

import (
	"context"
	"errors"
	"slices"
	"testing"

	"shinken.dev/go/escouade/protocol"
	"shinken.dev/go/internal/strictjson"
)

// discard drops every notification.
type discard struct{}

func (discard) Notify(string, any) error { return nil }

// fieldPaths returns the paths of the FieldErrors err holds, joined or
// not.
func fieldPaths(err error) []string {
	var fe *protocol.FieldError
	if errors.As(err, &fe) && fe.Err != nil && !errors.As(fe.Err, new(*protocol.FieldError)) {
		return []string{fe.Path}
	}
	var paths []string
	switch e := err.(type) {
	case interface{ Unwrap() []error }:
		for _, e := range e.Unwrap() {
			paths = append(paths, fieldPaths(e)...)
		}
	case interface{ Unwrap() error }:
		paths = fieldPaths(e.Unwrap())
	}
	return paths
}

// TestParams pins how the fences read their params, field by field: a
// params that holds gets past decoding (to the fences, which refuse what a
// plugin with no permission asks), one that does not is invalidParams
// naming the field. Decoding by name instead of by position must keep
// every row.
func TestParams(t *testing.T) {
	in, _ := start(t, Config{}, &testHost{})
	for _, tt := range []struct {
		method, params string
		want           protocol.Code
		path           string // the FieldError's, for invalidParams
	}{
		{"timer/set", `{"ms":0}`, 0, ""},
		{"timer/set", `{"ms":1.5}`, 0, ""},
		{"timer/set", `{}`, protocol.CodeInvalidParams, "ms"},
		{"timer/set", `{"ms":null}`, protocol.CodeInvalidParams, "ms"},
		{"timer/set", `{"ms":"1"}`, protocol.CodeInvalidParams, "ms"},
		{"timer/set", `{"ms":1,"ms":2}`, protocol.CodeInvalidParams, "ms"},
		{"timer/set", `{"ms":1,"later":true}`, 0, ""}, // the protocol's params may grow
		{"timer/set", `[]`, protocol.CodeInvalidParams, ""},
		{"timer/cancel", `{"timer":99}`, 0, ""},
		{"timer/cancel", `{"timer":1.5}`, protocol.CodeInvalidParams, "timer"},
		{"timer/cancel", `{}`, protocol.CodeInvalidParams, "timer"},

		{"fs/read", `{"root":"temp","path":"a"}`, protocol.CodeRefused, ""},
		{"fs/read", `{"path":"/a"}`, protocol.CodeRefused, ""},
		{"fs/read", `{"root":"temp"}`, protocol.CodeInvalidParams, "path"},
		{"fs/read", `{"root":"etc","path":"a"}`, protocol.CodeInvalidParams, "root"},
		{"fs/read", `{"agent":1,"path":"a"}`, protocol.CodeInvalidParams, "agent"},
		{"fs/read", `{"path":"a","text":"x"}`, protocol.CodeRefused, ""}, // fs/read has no text: ignored
		{"fs/write", `{"root":"temp","path":"a","text":"x"}`, protocol.CodeRefused, ""},
		{"fs/write", `{"root":"temp","path":"a","dataBase64":"eA==","append":true}`, protocol.CodeRefused, ""},
		{"fs/write", `{"root":"temp","path":"a"}`, protocol.CodeInvalidParams, "text"},
		{"fs/write", `{"root":"temp","path":"a","text":"x","dataBase64":"eA=="}`, protocol.CodeInvalidParams, "dataBase64"},
		{"fs/write", `{"root":"temp","path":"a","dataBase64":"x"}`, protocol.CodeInvalidParams, "dataBase64"},
		{"fs/write", `{"root":"temp","path":"a","text":"x","append":"yes"}`, protocol.CodeInvalidParams, "append"},
		{"fs/stat", `{"path":7}`, protocol.CodeInvalidParams, "path"},
		{"fs/list", `{"path":"/"}`, protocol.CodeRefused, ""},
		{"fs/canon", `{"root":"plugin","path":"."}`, protocol.CodeRefused, ""},

		{"net/fetch", `{"url":"https://example.com/"}`, protocol.CodeRefused, ""},
		{"net/fetch", `{"url":"https://example.com/","method":"POST","headers":{"A":"b"},"body":"x"}`, protocol.CodeRefused, ""},
		{"net/fetch", `{"url":"https://example.com/","body":null}`, protocol.CodeRefused, ""},
		{"net/fetch", `{"url":"https://example.com/","bodyBase64":"eA=="}`, protocol.CodeRefused, ""},
		{"net/fetch", `{}`, protocol.CodeInvalidParams, "url"},
		{"net/fetch", `{"url":"https://example.com/","method":"GE T"}`, protocol.CodeInvalidParams, "method"},
		{"net/fetch", `{"url":"https://example.com/","headers":{"A b":"c"}}`, protocol.CodeInvalidParams, "headers.A b"},
		{"net/fetch", `{"url":"https://example.com/","headers":{"A":"b\r\nC: d"}}`, protocol.CodeInvalidParams, "headers.A"},
		{"net/fetch", `{"url":"https://example.com/","headers":{"A":1}}`, protocol.CodeInvalidParams, "headers.A"},
		{"net/fetch", `{"url":"https://example.com/","headers":[]}`, protocol.CodeInvalidParams, "headers"},
		{"net/fetch", `{"url":"https://example.com/","body":"a","bodyBase64":"eA=="}`, protocol.CodeInvalidParams, "bodyBase64"},
		{"net/fetch", `{"url":"https://example.com/","bodyBase64":"!"}`, protocol.CodeInvalidParams, "bodyBase64"},
		{"net/fetch", `{"url":"https://example.com/","sse":true}`, protocol.CodeRefused, ""}, // only net/stream has sse
		{"net/fetch", `{"url":"::"}`, protocol.CodeInvalidParams, "url"},
		{"net/stream", `{"url":"https://example.com/","sse":true}`, protocol.CodeRefused, ""},
		{"net/stream", `{"url":"https://example.com/","sse":1}`, protocol.CodeInvalidParams, "sse"},
		{"net/credit", `{"stream":1,"bytes":10}`, 0, ""},
		{"net/credit", `{"stream":1}`, protocol.CodeInvalidParams, "bytes"},
		{"net/credit", `{"bytes":1}`, protocol.CodeInvalidParams, "stream"},
		{"net/credit", `{"stream":1,"bytes":-1}`, protocol.CodeInvalidParams, "bytes"},
		{"net/cancel", `{"stream":1}`, 0, ""},
		{"net/cancel", `{"stream":"1"}`, protocol.CodeInvalidParams, "stream"},

		{"ws/open", `{"url":"wss://example.com/"}`, protocol.CodeRefused, ""},
		{"ws/open", `{"url":"wss://example.com/","headers":{"A":"b"}}`, protocol.CodeRefused, ""},
		{"ws/open", `{}`, protocol.CodeInvalidParams, "url"},
		{"ws/open", `{"url":"wss://example.com/","headers":{"A b":"c"}}`, protocol.CodeInvalidParams, "headers.A b"},
		{"ws/send", `{"socket":1,"text":"x"}`, protocol.CodeRefused, ""},
		{"ws/send", `{"socket":1,"dataBase64":"eA=="}`, protocol.CodeRefused, ""},
		{"ws/send", `{"socket":1}`, protocol.CodeInvalidParams, "text"},
		{"ws/send", `{"text":"x"}`, protocol.CodeInvalidParams, "socket"},
		{"ws/send", `{"socket":1,"text":"x","dataBase64":"eA=="}`, protocol.CodeInvalidParams, "dataBase64"},
		{"ws/send", `{"socket":1,"dataBase64":"x"}`, protocol.CodeInvalidParams, "dataBase64"},
		{"ws/close", `{"socket":1}`, protocol.CodeRefused, ""},
		{"ws/close", `{}`, protocol.CodeInvalidParams, "socket"},

		{"proc/spawn", `{"command":"ls"}`, protocol.CodeRefused, ""},
		{"proc/spawn", `{"command":"ls","args":["-l"],"dir":"project","agent":"a","project":"p","env":{"LANG":"C"}}`, protocol.CodeRefused, ""},
		{"proc/spawn", `{}`, protocol.CodeInvalidParams, "command"},
		{"proc/spawn", `{"command":"ls","args":"-l"}`, protocol.CodeInvalidParams, "args"},
		{"proc/spawn", `{"command":"ls","args":["-l",1]}`, protocol.CodeInvalidParams, "args[1]"},
		{"proc/spawn", `{"command":"ls","dir":"/srv"}`, protocol.CodeInvalidParams, "dir"},
		{"proc/spawn", `{"command":"ls","env":{"A":1}}`, protocol.CodeInvalidParams, "env.A"},
		{"proc/spawn", `{"command":"l\u0000s"}`, protocol.CodeInvalidParams, "command"},
		{"proc/spawn", `{"command":"ls","args":["\u0000"]}`, protocol.CodeInvalidParams, "args"},
		{"proc/write", `{"proc":1,"data":"x","close":true}`, protocol.CodeFailed, ""},
		{"proc/write", `{"data":"x"}`, protocol.CodeInvalidParams, "proc"},
		{"proc/write", `{"proc":1,"close":"yes"}`, protocol.CodeInvalidParams, "close"},
		{"proc/kill", `{"proc":1}`, protocol.CodeFailed, ""},
		{"proc/kill", `{"proc":true}`, protocol.CodeInvalidParams, "proc"},
	} {
		_, err := serve(t, in, tt.method, tt.params)
		if got := code(err); got != tt.want {
			t.Errorf("%s %s: %v, want %v", tt.method, tt.params, err, tt.want)
			continue
		}
		if tt.want == protocol.CodeInvalidParams && !slices.Contains(fieldPaths(err), tt.path) {
			t.Errorf("%s %s: %v, want the field %q named", tt.method, tt.params, err, tt.path)
		}
	}
	// No params at all reads as an empty object.
	if _, err := serve(t, in, "timer/set", ""); code(err) != protocol.CodeInvalidParams {
		t.Errorf("timer/set without params: %v", err)
	}
}

// fuzzMethods are the fences FuzzParams calls; with no permission, none
// reaches the network, a file or a program.
var fuzzMethods = []string{
	"timer/set", "timer/cancel", "fs/read", "fs/write", "fs/stat", "fs/list", "fs/canon",
	"net/fetch", "net/stream", "net/credit", "net/cancel", "ws/open", "ws/send", "ws/close",
	"proc/spawn", "proc/write", "proc/kill",
}

// FuzzParams: whatever strict JSON a plugin sends as params, a fence
// answers with the protocol's error or a FieldError, never another error
// (which the Host would answer internal) nor a panic.
func FuzzParams(f *testing.F) {
	for i, params := range []string{
		`{"ms":10}`, `{"timer":1}`, `{"root":"temp","path":"a"}`, `{"path":"/x","text":"a","append":true}`,
		`{"path":"."}`, `{"path":"/"}`, `{"root":"plugin","path":"."}`,
		`{"url":"https://a.example/","method":"PUT","headers":{"A":"b"},"bodyBase64":"eA=="}`,
		`{"url":"https://a.example/","sse":true,"body":null}`, `{"stream":1,"bytes":5}`, `{"stream":2}`,
		`{"url":"wss://a.example/","headers":{"X":"y"}}`, `{"socket":1,"text":"x"}`, `{"socket":1}`,
		`{"command":"ls","args":["-l"],"dir":"agent","agent":"a","env":{"LANG":"C"}}`, `{"proc":1,"data":"x","close":true}`, `{"proc":1}`,
	} {
		f.Add(uint8(i), []byte(params))
	}
	p := New(Config{}, &testHost{temp: f.TempDir()})
	f.Cleanup(p.Close)
	f.Fuzz(func(t *testing.T, which uint8, params []byte) {
		if strictjson.Validate(params) != nil {
			return // the connection answers parse before any method sees it
		}
		in := p.NewInstance(discard{}, nil)
		defer in.Close()
		m, _ := Lookup(fuzzMethods[int(which)%len(fuzzMethods)])
		_, err := m(context.Background(), in, answered{}, params)
		var e *protocol.Error
		var fe *protocol.FieldError
		if err != nil && !errors.As(err, &e) && !errors.As(err, &fe) {
			t.Fatalf("%s %s: an error that is not the protocol's: %v", fuzzMethods[int(which)%len(fuzzMethods)], params, err)
		}
	})
}
