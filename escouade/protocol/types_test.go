package protocol_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"shinken.dev/go/escouade/protocol"
)

// TestDecodeByName: each message decodes by its fields' names, in any
// order; a field it does not know is ignored; and each refusal is a
// FieldError naming the field's path and why.
func TestDecodeByName(t *testing.T) {
	project := `"project":{"id":"p","name":"P","private":true}`
	tests := []struct {
		name string
		v    interface{ UnmarshalJSON([]byte) error }
		in   string
		want any    // the decoded value, when accepted
		err  string // the error, when refused
	}{
		{"fact", new(protocol.Fact), `{"data":{"a":1},"at":"2026-01-02T03:04:05Z","seq":7,"version":1,"name":"agent.created","agent":{"id":"a","name":"A"},"later":[1]}`,
			&protocol.Fact{Name: "agent.created", Version: 1, Seq: 7, At: "2026-01-02T03:04:05Z", Agent: &protocol.Agent{ID: "a", Name: "A"}, Data: []byte(`{"a":1}`)}, ""},
		{"fact without data", new(protocol.Fact), `{"name":"x","version":1,"seq":1,"at":"t"}`, nil, "escouade: data: missing"},
		{"fact data not an object", new(protocol.Fact), `{"name":"x","version":1,"seq":1,"at":"t","data":[1]}`, nil, "escouade: data: want an object"},
		{"fact data null", new(protocol.Fact), `{"name":"x","version":1,"seq":1,"at":"t","data":null}`, nil, "escouade: data: want an object"},
		{"fact version fraction", new(protocol.Fact), `{"name":"x","version":1.0,"seq":1,"at":"t","data":{}}`, nil, "escouade: version: want an integer"},
		{"fact project null", new(protocol.Fact), `{"name":"x","version":1,"seq":1,"at":"t","data":{},"project":null}`, nil, "escouade: project: want an object"},
		{"project private not bool", new(protocol.Project), `{"id":"p","name":"P","private":"no"}`, nil, "escouade: private: want true or false"},
		{"ticket missing all", new(protocol.Ticket), `{}`, nil, "escouade: id: missing\nescouade: key: missing\nescouade: title: missing"},
		{"decide", new(protocol.DecideParams), `{` + project + `,"request":{"kind":"command","id":"r","input":{"command":"ls","n":[1,{"x":null}]}},"ticket":{"id":"t","key":"K-1","title":"T"}}`,
			&protocol.DecideParams{Request: protocol.PermissionRequest{ID: "r", Kind: "command", Input: map[string]any{"command": "ls", "n": []any{1.0, map[string]any{"x": nil}}}},
				Project: protocol.Project{ID: "p", Name: "P", Private: true}, Ticket: &protocol.Ticket{ID: "t", Key: "K-1", Title: "T"}}, ""},
		{"decide without project", new(protocol.DecideParams), `{"request":{"id":"r","kind":"k"}}`, nil, "escouade: project: missing"},
		{"decide kind in another case", new(protocol.DecideParams), `{"request":{"id":"r","Kind":"k"},` + project + `}`, nil, "escouade: request.kind: missing"},
		{"decide kind twice", new(protocol.DecideParams), `{"request":{"id":"r","kind":"k","kind":"j"},` + project + `}`, nil, "escouade: request.kind: given twice"},
		{"decide input not an object", new(protocol.DecideParams), `{"request":{"id":"r","kind":"k","input":[1]},` + project + `}`, nil, "escouade: request.input: want an object"},
		{"decide input with a key twice", new(protocol.DecideParams), `{"request":{"id":"r","kind":"k","input":{"a":1,"a":2}},` + project + `}`, nil, "escouade: request.input.a: given twice"},
		{"decide not an object", new(protocol.DecideParams), `[]`, nil, "escouade: want an object"},
		{"decision", new(protocol.Decision), `{"message":"no","decision":"deny","why":1}`, &protocol.Decision{Verdict: protocol.Deny, Message: "no"}, ""},
		{"decision other verdict", new(protocol.Decision), `{"decision":"maybe"}`, nil, `escouade: decision: want allow, deny or ask, not "maybe"`},
		{"decision message not a string", new(protocol.Decision), `{"decision":"allow","message":1}`, nil, "escouade: message: want a string"},
		{"initialize", new(protocol.InitializeParams), `{"protocolVersion":1,"escouade":{"version":"1.2.0"},"plugin":{"version":"0.1.0","id":"p"},"lang":"fr","capabilities":{"log":true,"batch":true,"future":1}}`,
			&protocol.InitializeParams{ProtocolVersion: 1, Escouade: protocol.HostInfo{Version: "1.2.0"}, Plugin: protocol.PluginInfo{ID: "p", Version: "0.1.0"}, Lang: "fr",
				Capabilities: protocol.Capabilities{Batch: true, Log: true}}, ""},
		{"initialize without plugin id", new(protocol.InitializeParams), `{"protocolVersion":1,"escouade":{"version":"1"},"plugin":{"version":"1"},"capabilities":{}}`, nil, "escouade: plugin.id: missing"},
		{"initialize capability not bool", new(protocol.InitializeParams), `{"protocolVersion":1,"escouade":{"version":"1"},"plugin":{"id":"p","version":"1"},"capabilities":{"secrets":1}}`, nil, "escouade: capabilities.secrets: want true or false"},
		{"initialize result", new(protocol.InitializeResult), `{"capabilities":{"x":{"y":true}},"protocolVersion":1}`, &protocol.InitializeResult{ProtocolVersion: 1, Capabilities: map[string]any{"x": map[string]any{"y": true}}}, ""},
		{"initialize result capabilities null", new(protocol.InitializeResult), `{"capabilities":null,"protocolVersion":1}`, nil, "escouade: capabilities: want an object"},
		{"attach", new(protocol.AttachParams), `{"agent":{"name":"A","id":"a"},"key":"k"}`, &protocol.AttachParams{Key: "k", Agent: protocol.Agent{ID: "a", Name: "A"}}, ""},
		{"attach agent name not a string", new(protocol.AttachParams), `{"key":"k","agent":{"id":"a","name":["A"]}}`, nil, "escouade: agent.name: want a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.v.UnmarshalJSON([]byte(tt.in))
			if tt.err == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if !reflect.DeepEqual(tt.v, tt.want) {
					t.Errorf("got  %+v\nwant %+v", tt.v, tt.want)
				}
				return
			}
			var fe *protocol.FieldError
			if err == nil || !errors.As(err, &fe) || err.Error() != tt.err {
				t.Errorf("got %v, want a FieldError %q", err, tt.err)
			}
		})
	}
}

// TestDecodeNotStrictJSON: a text that is not strict JSON is refused, with
// a FieldError, whatever the field it is in.
func TestDecodeNotStrictJSON(t *testing.T) {
	for _, in := range []string{
		`{"id":"a","name":"A"`, `{"id":"a","name":"A"} x`, `{"id":"\ud800","name":"A"}`, "{\"id\":\"\xff\",\"name\":\"A\"}",
		`{"id":"a","name":"A","x":` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `}`,
	} {
		var a protocol.Agent
		err := a.UnmarshalJSON([]byte(in))
		var fe *protocol.FieldError
		if !errors.As(err, &fe) {
			t.Errorf("%.60q: %v, want a FieldError", in, err)
		}
	}
}
