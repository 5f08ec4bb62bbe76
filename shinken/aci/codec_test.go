package aci_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"shinken.dev/go/internal/schematest"
	"shinken.dev/go/shinken/aci"
)

// TestGolden round-trips every golden message through the strict decoder and
// the encoder, and validates both forms against the schema.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/golden/*.json")
	if err != nil || len(files) < 30 {
		t.Fatalf("golden files: %v (%d found)", err, len(files))
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			def := ""
			if rest, ok := strings.CutPrefix(name, "def_"); ok {
				def, _, _ = strings.Cut(rest, "_")
			}
			schematest.Valid(t, def, data)
			var out []byte
			switch def {
			case "":
				m, err := aci.Unmarshal(data)
				if err != nil {
					t.Fatalf("Unmarshal: %v", err)
				}
				if out, err = aci.Marshal(m); err != nil {
					t.Fatal(err)
				}
			case "BinaryFrameHeader", "BinaryExecOutputHeader":
				// Wrap in a binary frame with a payload large enough for
				// every offset, and decode it back.
				frame := binary.LittleEndian.AppendUint32(nil, uint32(len(data)))
				frame = append(frame, data...)
				frame = append(frame, make([]byte, 4096)...)
				m, _, err := aci.DecodeBinaryFrame(frame)
				if err != nil {
					t.Fatalf("DecodeBinaryFrame: %v", err)
				}
				enc, err := aci.AppendBinaryFrame(nil, m)
				if err != nil {
					t.Fatal(err)
				}
				out = enc[4:]
			default:
				var v any
				switch def {
				case "ExecResult":
					v = new(aci.ExecResult)
				case "ActionBatch":
					v = new(aci.ActionBatch)
				default:
					t.Fatalf("no Go type for $def %s", def)
				}
				if err := aci.DecodeJSON(data, v); err != nil {
					t.Fatalf("DecodeJSON: %v", err)
				}
				if out, err = jsonMarshal(v); err != nil {
					t.Fatal(err)
				}
			}
			schematest.Valid(t, def, out)
			want, _ := schematest.Canonical(data)
			got, err := schematest.Canonical(out)
			if err != nil {
				t.Fatalf("encoded output is not JSON: %v\n%s", err, out)
			}
			if got != want {
				t.Errorf("round trip changed the message:\n got %s\nwant %s", got, want)
			}
			if !bytes.HasPrefix(out, []byte(`{"type":`)) && def == "" {
				t.Errorf("type is not first: %s", out)
			}
		})
	}
}

// invalidMessages break one schema rule each. Both the schema and the Go
// decoder must reject every one.
var invalidMessages = []struct {
	name string
	json string
	code aci.Code
}{
	// Envelope and types.
	{"no type", `{"call_id":"c","q":"ready"}`, aci.CodeInvalidMessage},
	{"unknown type", `{"type":"bogus"}`, aci.CodeInvalidMessage},
	{"type not string", `{"type":7}`, aci.CodeInvalidMessage},
	{"hello v 1", `{"type":"hello","v":1,"client":{"name":"a","version":"1"}}`, aci.CodeInvalidMessage},
	{"hello no client", `{"type":"hello","v":0}`, aci.CodeInvalidMessage},
	{"hello client missing version", `{"type":"hello","v":0,"client":{"name":"a"}}`, aci.CodeInvalidMessage},
	{"hello unknown field", `{"type":"hello","v":0,"client":{"name":"a","version":"1"},"extra":1}`, aci.CodeInvalidMessage},
	{"hello token number", `{"type":"hello","v":0,"client":{"name":"a","version":"1"},"token":5}`, aci.CodeInvalidMessage},
	{"hello bad observation type", `{"type":"hello","v":0,"client":{"name":"a","version":"1"},"accept":{"observation_types":["x"]}}`, aci.CodeInvalidMessage},
	{"ping t string", `{"type":"ping","t":"now"}`, aci.CodeInvalidMessage},
	{"query bad q", `{"type":"query","call_id":"c","q":"everything"}`, aci.CodeInvalidMessage},
	{"query no call_id", `{"type":"query","q":"ready"}`, aci.CodeInvalidMessage},
	{"ack ok missing", `{"type":"ack","call_id":"c"}`, aci.CodeInvalidMessage},
	{"action no action", `{"type":"action","call_id":"c"}`, aci.CodeInvalidMessage},
	{"unknown verb", `{"type":"action","call_id":"c","action":{"verb":"explode"}}`, aci.CodeInvalidAction},
	{"action unknown field", `{"type":"action","call_id":"c","action":{"verb":"wait","sparkle":true}}`, aci.CodeInvalidAction},
	// Targets.
	{"click without target", `{"type":"action","call_id":"c","action":{"verb":"click"}}`, aci.CodeInvalidAction},
	{"double_click without target", `{"type":"action","call_id":"c","action":{"verb":"double_click"}}`, aci.CodeInvalidAction},
	{"right_click without target", `{"type":"action","call_id":"c","action":{"verb":"right_click"}}`, aci.CodeInvalidAction},
	{"move without target", `{"type":"action","call_id":"c","action":{"verb":"move"}}`, aci.CodeInvalidAction},
	{"scroll without target", `{"type":"action","call_id":"c","action":{"verb":"scroll","dy":1}}`, aci.CodeInvalidAction},
	{"drag without to", `{"type":"action","call_id":"c","action":{"verb":"drag","target":{"kind":"point_px","x":1,"y":1}}}`, aci.CodeInvalidAction},
	{"point_px without y", `{"type":"action","call_id":"c","action":{"verb":"click","target":{"kind":"point_px","x":1}}}`, aci.CodeInvalidAction},
	{"point_norm out of range", `{"type":"action","call_id":"c","action":{"verb":"click","target":{"kind":"point_norm","x":1.5,"y":0}}}`, aci.CodeInvalidAction},
	{"point_px with ref", `{"type":"action","call_id":"c","action":{"verb":"click","target":{"kind":"point_px","x":1,"y":1,"ref":"e1"}}}`, aci.CodeInvalidAction},
	{"element_ref without ref", `{"type":"action","call_id":"c","action":{"verb":"click","target":{"kind":"element_ref"}}}`, aci.CodeInvalidAction},
	{"unknown target kind", `{"type":"action","call_id":"c","action":{"verb":"click","target":{"kind":"pixel","x":1,"y":1}}}`, aci.CodeInvalidAction},
	{"bad button", `{"type":"action","call_id":"c","action":{"verb":"mouse_down","button":"fourth"}}`, aci.CodeInvalidAction},
	{"negative duration", `{"type":"action","call_id":"c","action":{"verb":"drag","target":{"kind":"point_px","x":1,"y":1},"to":{"kind":"point_px","x":2,"y":2},"duration_ms":-1}}`, aci.CodeInvalidAction},
	// Verb requirements.
	{"type_text without text", `{"type":"action","call_id":"c","action":{"verb":"type_text"}}`, aci.CodeInvalidAction},
	{"key without keys", `{"type":"action","call_id":"c","action":{"verb":"key"}}`, aci.CodeInvalidAction},
	{"invoke_action without target", `{"type":"action","call_id":"c","action":{"verb":"invoke_action"}}`, aci.CodeInvalidAction},
	{"set_value without target", `{"type":"action","call_id":"c","action":{"verb":"set_value","text":"x"}}`, aci.CodeInvalidAction},
	{"set_value without text", `{"type":"action","call_id":"c","action":{"verb":"set_value","target":{"kind":"element_ref","ref":"e1"}}}`, aci.CodeInvalidAction},
	{"clipboard_set without text", `{"type":"action","call_id":"c","action":{"verb":"clipboard_set"}}`, aci.CodeInvalidAction},
	{"launch_app without app", `{"type":"action","call_id":"c","action":{"verb":"launch_app"}}`, aci.CodeInvalidAction},
	{"launch_app empty app", `{"type":"action","call_id":"c","action":{"verb":"launch_app","app":""}}`, aci.CodeInvalidAction},
	{"activate_window without selector", `{"type":"action","call_id":"c","action":{"verb":"activate_window"}}`, aci.CodeInvalidAction},
	// observe only on mutating verbs.
	{"observe on screenshot", `{"type":"action","call_id":"c","action":{"verb":"screenshot","observe":{}}}`, aci.CodeInvalidAction},
	{"observe on exec", `{"type":"action","call_id":"c","action":{"verb":"exec","argv":["true"],"observe":{}}}`, aci.CodeInvalidAction},
	{"observe on wait", `{"type":"action","call_id":"c","action":{"verb":"wait","observe":{"scope":"screen"}}}`, aci.CodeInvalidAction},
	{"observe bad quality", `{"type":"action","call_id":"c","action":{"verb":"click","target":{"kind":"point_px","x":1,"y":1},"observe":{"quality":0}}}`, aci.CodeInvalidAction},
	{"observe unknown field", `{"type":"action","call_id":"c","action":{"verb":"click","target":{"kind":"point_px","x":1,"y":1},"observe":{"tree":true}}}`, aci.CodeInvalidAction},
	// structured, diff, settle_ms only on observe.
	{"structured on screenshot", `{"type":"action","call_id":"c","action":{"verb":"screenshot","structured":true}}`, aci.CodeInvalidAction},
	{"diff on click", `{"type":"action","call_id":"c","action":{"verb":"click","target":{"kind":"point_px","x":1,"y":1},"diff":true}}`, aci.CodeInvalidAction},
	{"settle_ms on wait", `{"type":"action","call_id":"c","action":{"verb":"wait","settle_ms":100}}`, aci.CodeInvalidAction},
	{"negative settle_ms", `{"type":"action","call_id":"c","action":{"verb":"observe","settle_ms":-5}}`, aci.CodeInvalidAction},
	// Exec-only fields and argv xor shell.
	{"argv on click", `{"type":"action","call_id":"c","action":{"verb":"click","target":{"kind":"point_px","x":1,"y":1},"argv":["ls"]}}`, aci.CodeInvalidAction},
	{"cwd on wait", `{"type":"action","call_id":"c","action":{"verb":"wait","cwd":"/"}}`, aci.CodeInvalidAction},
	{"env on key", `{"type":"action","call_id":"c","action":{"verb":"key","keys":"a","env":{}}}`, aci.CodeInvalidAction},
	{"timeout_ms on screenshot", `{"type":"action","call_id":"c","action":{"verb":"screenshot","timeout_ms":5}}`, aci.CodeInvalidAction},
	{"stdin on type_text", `{"type":"action","call_id":"c","action":{"verb":"type_text","text":"a","stdin":"b"}}`, aci.CodeInvalidAction},
	{"stream on observe", `{"type":"action","call_id":"c","action":{"verb":"observe","stream":true}}`, aci.CodeInvalidAction},
	{"pty on wait", `{"type":"action","call_id":"c","action":{"verb":"wait","pty":false}}`, aci.CodeInvalidAction},
	{"exec argv and shell", `{"type":"action","call_id":"c","action":{"verb":"exec","argv":["ls"],"shell":"ls"}}`, aci.CodeInvalidAction},
	{"exec neither argv nor shell", `{"type":"action","call_id":"c","action":{"verb":"exec"}}`, aci.CodeInvalidAction},
	{"exec empty argv", `{"type":"action","call_id":"c","action":{"verb":"exec","argv":[]}}`, aci.CodeInvalidAction},
	{"exec pty true", `{"type":"action","call_id":"c","action":{"verb":"exec","argv":["sh"],"pty":true}}`, aci.CodeInvalidAction},
	{"exec timeout 0", `{"type":"action","call_id":"c","action":{"verb":"exec","argv":["sh"],"timeout_ms":0}}`, aci.CodeInvalidAction},
	{"exec env not strings", `{"type":"action","call_id":"c","action":{"verb":"exec","argv":["sh"],"env":{"A":1}}}`, aci.CodeInvalidAction},
	// args, window_id, app.
	{"args on exec", `{"type":"action","call_id":"c","action":{"verb":"exec","argv":["ls"],"args":["-l"]}}`, aci.CodeInvalidAction},
	{"window_id on launch_app", `{"type":"action","call_id":"c","action":{"verb":"launch_app","app":"x","window_id":3}}`, aci.CodeInvalidAction},
	{"app on click", `{"type":"action","call_id":"c","action":{"verb":"click","target":{"kind":"point_px","x":1,"y":1},"app":"x"}}`, aci.CodeInvalidAction},
	{"negative window_id", `{"type":"action","call_id":"c","action":{"verb":"activate_window","window_id":-1}}`, aci.CodeInvalidAction},
	// Capture levers.
	{"bad scope", `{"type":"action","call_id":"c","action":{"verb":"screenshot","scope":"window:abc"}}`, aci.CodeInvalidAction},
	{"bad format", `{"type":"action","call_id":"c","action":{"verb":"screenshot","format":"gif"}}`, aci.CodeInvalidAction},
	{"quality 101", `{"type":"action","call_id":"c","action":{"verb":"screenshot","format":"jpeg","quality":101}}`, aci.CodeInvalidAction},
	{"max_long_edge 0", `{"type":"action","call_id":"c","action":{"verb":"screenshot","max_long_edge":0}}`, aci.CodeInvalidAction},
	{"fps 31", `{"type":"action","call_id":"c","action":{"verb":"start_screencast","fps":31}}`, aci.CodeInvalidAction},
	{"fps 0", `{"type":"action","call_id":"c","action":{"verb":"start_screencast","fps":0}}`, aci.CodeInvalidAction},
	// Observation rules.
	{"stream without seq", `{"type":"observation","obs_id":"o","stream":"s","image":{"ref":"x","w":1,"h":1}}`, aci.CodeInvalidMessage},
	{"stream without payload", `{"type":"observation","obs_id":"o","stream":"s","seq":0}`, aci.CodeInvalidMessage},
	{"seq without stream", `{"type":"observation","obs_id":"o","seq":1}`, aci.CodeInvalidMessage},
	{"tiles without stream", `{"type":"observation","obs_id":"o","tiles":[{"x":0,"y":0,"w":1,"h":1,"ref":"x"}]}`, aci.CodeInvalidMessage},
	{"tiles and image", `{"type":"observation","obs_id":"o","stream":"s","seq":0,"image":{"ref":"x","w":1,"h":1},"tiles":[{"x":0,"y":0,"w":1,"h":1,"ref":"x"}]}`, aci.CodeInvalidMessage},
	{"empty tiles", `{"type":"observation","obs_id":"o","stream":"s","seq":0,"tiles":[]}`, aci.CodeInvalidMessage},
	{"not_modified without hash", `{"type":"observation","obs_id":"o","cause":"c","not_modified":true}`, aci.CodeInvalidMessage},
	{"not_modified without cause", `{"type":"observation","obs_id":"o","not_modified":true,"frame_hash":"h"}`, aci.CodeInvalidMessage},
	{"not_modified with image", `{"type":"observation","obs_id":"o","cause":"c","not_modified":true,"frame_hash":"h","image":{"ref":"x","w":1,"h":1}}`, aci.CodeInvalidMessage},
	{"not_modified false", `{"type":"observation","obs_id":"o","not_modified":false}`, aci.CodeInvalidMessage},
	{"negative seq", `{"type":"observation","obs_id":"o","stream":"s","seq":-1,"image":{"ref":"x","w":1,"h":1}}`, aci.CodeInvalidMessage},
	{"pointer of three", `{"type":"observation","obs_id":"o","pointer":[1,2,3]}`, aci.CodeInvalidMessage},
	{"element without bbox", `{"type":"observation","obs_id":"o","elements":[{"ref":"e1","role":"label"}]}`, aci.CodeInvalidMessage},
	{"bbox of three", `{"type":"observation","obs_id":"o","elements":[{"ref":"e1","role":"label","bbox":[1,2,3]}]}`, aci.CodeInvalidMessage},
	{"bad tree", `{"type":"observation","obs_id":"o","tree":"partial"}`, aci.CodeInvalidMessage},
	{"display bad origin", `{"type":"observation","obs_id":"o","display":{"origin":"bottom-left","w":1,"h":1,"dpr":1,"source_rect":{"x":0,"y":0,"w":1,"h":1},"delivered":{"w":1,"h":1}}}`, aci.CodeInvalidMessage},
	{"display dpr 0", `{"type":"observation","obs_id":"o","display":{"origin":"top-left","w":1,"h":1,"dpr":0,"source_rect":{"x":0,"y":0,"w":1,"h":1},"delivered":{"w":1,"h":1}}}`, aci.CodeInvalidMessage},
	{"tile zero width", `{"type":"observation","obs_id":"o","stream":"s","seq":0,"tiles":[{"x":0,"y":0,"w":0,"h":1,"ref":"x"}]}`, aci.CodeInvalidMessage},
	{"image missing w", `{"type":"observation","obs_id":"o","image":{"ref":"x","h":1}}`, aci.CodeInvalidMessage},
	// Exec events.
	{"exec_output bad channel", `{"type":"exec_output","cause":"c","seq":0,"channel":"stdlog","data_b64":""}`, aci.CodeInvalidMessage},
	{"exec_exit without exit_code", `{"type":"exec_exit","cause":"c","timed_out":false,"duration_ms":1,"truncated":false}`, aci.CodeInvalidMessage},
	{"exec_exit exit_code string", `{"type":"exec_exit","cause":"c","exit_code":"0","timed_out":false,"duration_ms":1,"truncated":false}`, aci.CodeInvalidMessage},
	{"exec_exit negative duration", `{"type":"exec_exit","cause":"c","exit_code":0,"timed_out":false,"duration_ms":-1,"truncated":false}`, aci.CodeInvalidMessage},
	// Welcome.
	{"welcome bad platform", `{"type":"welcome","v":0,"server":{"name":"s","version":"1","platform":"beos"},"capabilities":{"schema_version":0,"verbs":[],"targets":[],"observation_types":[]}}`, aci.CodeInvalidMessage},
	{"welcome unknown capability", `{"type":"welcome","v":0,"server":{"name":"s","version":"1","platform":"linux"},"capabilities":{"schema_version":0,"verbs":[],"targets":[],"observation_types":[],"teleport":true}}`, aci.CodeInvalidMessage},
	{"welcome bad verb", `{"type":"welcome","v":0,"server":{"name":"s","version":"1","platform":"linux"},"capabilities":{"schema_version":0,"verbs":["fly"],"targets":[],"observation_types":[]}}`, aci.CodeInvalidMessage},
}

// TestInvalidMessages checks that the schema and the Go decoder agree on a
// table of invalid messages covering every allOf rule.
func TestInvalidMessages(t *testing.T) {
	if len(invalidMessages) < 40 {
		t.Fatalf("only %d invalid cases", len(invalidMessages))
	}
	for _, tc := range invalidMessages {
		t.Run(tc.name, func(t *testing.T) {
			if err := schematest.Check("", []byte(tc.json)); err == nil {
				t.Errorf("the schema accepts %s", tc.json)
			}
			_, err := aci.Unmarshal([]byte(tc.json))
			if err == nil {
				t.Fatalf("Unmarshal accepts %s", tc.json)
			}
			var e *aci.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v (%T) is not a *shinken.Error", err, err)
			}
			if e.Code != tc.code {
				t.Errorf("code = %s, want %s (%v)", e.Code, tc.code, err)
			}
			if !strings.Contains(err.Error(), "$") {
				t.Errorf("error %q names no JSON path", err)
			}
		})
	}
}

// TestStrictness covers what the schema cannot say: duplicate and
// case-variant keys, broken JSON and bad UTF-8.
func TestStrictness(t *testing.T) {
	for _, s := range []string{
		`{"type":"ping","t":1,"t":2}`,
		`{"type":"ping","type":"ping"}`,
		`{"type":"query","call_id":"c","Q":"ready"}`,
		`{"type":"action","call_id":"c","action":{"verb":"wait","VERB":"click"}}`,
		`{"type":"ping"`,
		`{"type":"ping"} {}`,
		`{"type":"ping","t":01}`,
		`{"type":"ping","t":1.}`,
		"{\"type\":\"query\",\"call_id\":\"\xff\",\"q\":\"ready\"}",
		`{"type":"query","call_id":"\x","q":"ready"}`,
		`[]`,
		`"hello"`,
		``,
		strings.Repeat("[", 100) + strings.Repeat("]", 100),
	} {
		if _, err := aci.Unmarshal([]byte(s)); err == nil {
			t.Errorf("Unmarshal accepts %q", s)
		}
	}
}

func TestBinaryFrame(t *testing.T) {
	seq := uint64(3)
	h := &aci.BinaryFrameHeader{ObsID: "o1", Stream: "s", Seq: &seq, Tiles: []aci.BinaryTile{
		{X: 0, Y: 0, W: 64, H: 64, Off: 0, Len: 3}, {X: 64, Y: 0, W: 64, H: 64, Off: 3, Len: 2},
	}}
	frame, err := aci.AppendBinaryFrame(nil, h, []byte("abc"), []byte("de"))
	if err != nil {
		t.Fatal(err)
	}
	m, payload, err := aci.DecodeBinaryFrame(frame)
	if err != nil {
		t.Fatal(err)
	}
	got := m.(*aci.BinaryFrameHeader)
	if string(payload) != "abcde" || len(got.Tiles) != 2 || *got.Seq != 3 {
		t.Fatalf("decoded %+v, payload %q", got, payload)
	}
	schematest.Valid(t, "BinaryFrameHeader", frame[4:4+binary.LittleEndian.Uint32(frame)])

	x := &aci.BinaryExecOutputHeader{CallID: "c", Seq: 1, Channel: "stdout", Data: aci.ByteRange{Len: 4}}
	frame, _ = aci.AppendBinaryFrame(nil, x, []byte{0xff, 0, 1, 2})
	m, payload, err = aci.DecodeBinaryFrame(frame)
	if err != nil {
		t.Fatal(err)
	}
	if b := m.(*aci.BinaryExecOutputHeader).Data.Bytes(payload); !bytes.Equal(b, []byte{0xff, 0, 1, 2}) {
		t.Fatalf("payload %x", b)
	}

	bad := [][]byte{
		nil,
		{1, 2},
		binary.LittleEndian.AppendUint32(nil, 100),
		binary.LittleEndian.AppendUint32(nil, 0xffffffff),
		append(binary.LittleEndian.AppendUint32(nil, 2), "{}"...),
		withHeader(`{"type":"observation","obs_id":"o","image":{"off":0,"len":10,"w":1,"h":1}}`, 5),
		withHeader(`{"type":"observation","obs_id":"o","image":{"off":6,"len":0,"w":1,"h":1}}`, 5),
		withHeader(`{"type":"observation","obs_id":"o","image":{"off":9223372036854775807,"len":9223372036854775807,"w":1,"h":1}}`, 5),
		withHeader(`{"type":"exec_output","cause":"c","seq":0,"channel":"stdout","data":{"off":4,"len":2}}`, 5),
		withHeader(`{"type":"exec_output","cause":"c","seq":0,"channel":"stdout","data":{"off":-1,"len":2}}`, 5),
		withHeader(`{"type":"observation","obs_id":"o"}`, 0),
		withHeader(`{"type":"ack","call_id":"c","ok":true}`, 0),
	}
	for i, f := range bad {
		if _, _, err := aci.DecodeBinaryFrame(f); err == nil {
			t.Errorf("case %d: DecodeBinaryFrame accepts %q", i, f)
		}
	}
}

func withHeader(h string, payload int) []byte {
	f := binary.LittleEndian.AppendUint32(nil, uint32(len(h)))
	f = append(f, h...)
	return append(f, make([]byte, payload)...)
}

func TestWireError(t *testing.T) {
	err := aci.Errorf(aci.CodeStaleElementRef, "e42 is gone, observe again")
	if got := aci.WireError(err); got != "stale_element_ref: e42 is gone, observe again" {
		t.Fatalf("WireError = %q", got)
	}
	back := aci.ParseWireError(aci.WireError(err))
	if !errors.Is(back, aci.ErrStaleElementRef) || errors.Is(back, aci.ErrNoSuchAction) {
		t.Fatalf("ParseWireError lost the code: %#v", back)
	}
	if got := aci.WireError(errors.ErrUnsupported); !strings.HasPrefix(got, "unsupported: ") {
		t.Fatalf("unsupported maps to %q", got)
	}
	if got := aci.ParseWireError("weird thing"); got.Code != aci.CodeBackend {
		t.Fatalf("unknown prefix maps to %s", got.Code)
	}
}

// TestErrorfNamesItsCodeOnce formats an error that carries its code
// already, as a tool that wraps a refusal does (key_down's unknown key
// read invalid_action: invalid_action: unknown key "banana"): the code
// is written once, and another code's prefix stays in the detail.
func TestErrorfNamesItsCodeOnce(t *testing.T) {
	inner := fmt.Errorf("%w: unknown key %q", aci.ErrInvalidAction, "banana")
	for _, tc := range []struct {
		err  error
		want string
	}{
		{aci.Errorf(aci.CodeInvalidAction, "%v", inner), `invalid_action: unknown key "banana"`},
		{aci.Errorf(aci.CodeInvalidAction, "%w", inner), `invalid_action: unknown key "banana"`},
		{aci.Errorf(aci.CodeInvalidAction, "%v", aci.Errorf(aci.CodeInvalidAction, "unknown key %q", "banana")), `invalid_action: unknown key "banana"`},
		{aci.Errorf(aci.CodeInvalidAction, "%v", aci.ErrInvalidAction), "invalid_action"},
		{aci.Errorf(aci.CodeTimeout, "%v", inner), `timeout: invalid_action: unknown key "banana"`},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
		if got := aci.WireError(tc.err); got != tc.want {
			t.Errorf("WireError = %q, want %q", got, tc.want)
		}
	}
}

// TestImports keeps the core free of backends and test machinery.
func TestImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "shinken.dev/go/shinken").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		switch {
		case dep == "testing", strings.Contains(dep, "jezek/xgb"), strings.Contains(dep, "godbus"),
			strings.Contains(dep, "jsonschema"):
			t.Errorf("package shinken depends on %s", dep)
		}
	}
}

func FuzzUnmarshal(f *testing.F) {
	files, _ := filepath.Glob("testdata/golden/*.json")
	for _, file := range files {
		data, _ := os.ReadFile(file)
		f.Add(data)
	}
	for _, tc := range invalidMessages {
		f.Add([]byte(tc.json))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := aci.Unmarshal(data)
		if err != nil {
			var e *aci.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is not a *shinken.Error", err)
			}
			return
		}
		// Whatever decodes must encode, and decode again to the same thing.
		out, err := aci.Marshal(m)
		if err != nil {
			t.Fatalf("Marshal after Unmarshal: %v", err)
		}
		m2, err := aci.Unmarshal(out)
		if err != nil {
			t.Fatalf("re-decoding %s: %v", out, err)
		}
		out2, _ := aci.Marshal(m2)
		if !bytes.Equal(out, out2) {
			t.Fatalf("unstable round trip:\n%s\n%s", out, out2)
		}
	})
}

func FuzzDecodeBinaryFrame(f *testing.F) {
	f.Add(withHeader(`{"type":"observation","obs_id":"o","image":{"off":0,"len":3,"w":1,"h":1}}`, 5))
	f.Add(withHeader(`{"type":"exec_output","cause":"c","seq":0,"channel":"stdout","data":{"off":1,"len":2}}`, 5))
	f.Add(withHeader(`{"type":"observation","obs_id":"o","stream":"s","seq":1,"tiles":[{"x":0,"y":0,"w":1,"h":1,"off":0,"len":2}]}`, 4))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, frame []byte) {
		m, payload, err := aci.DecodeBinaryFrame(frame)
		if err != nil {
			return
		}
		switch h := m.(type) {
		case *aci.BinaryFrameHeader:
			if h.Image != nil {
				_ = payload[h.Image.Off : h.Image.Off+h.Image.Len]
			}
			for _, tl := range h.Tiles {
				_ = payload[tl.Off : tl.Off+tl.Len]
			}
		case *aci.BinaryExecOutputHeader:
			_ = h.Data.Bytes(payload)
		}
	})
}
