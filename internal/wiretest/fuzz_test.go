package wiretest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"

	"shinken.dev/go/internal/schematest"
)

// A jnode is a JSON value that keeps its object keys in order and may hold
// literals that are not JSON at all: the fuzzer's working form.
type jnode struct {
	kind  byte // 'o' object, 'a' array, 'l' literal
	keys  []string
	vals  []*jnode
	elems []*jnode
	raw   string // a literal's text, written as is
}

func parseJ(s string) *jnode {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	n, err := parseTok(dec)
	if err != nil {
		panic(fmt.Sprintf("seed %s: %v", s, err))
	}
	return n
}

func parseTok(dec *json.Decoder) (*jnode, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch v := tok.(type) {
	case json.Delim:
		if v == '{' {
			n := &jnode{kind: 'o'}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				val, err := parseTok(dec)
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, kt.(string))
				n.vals = append(n.vals, val)
			}
			_, err := dec.Token()
			return n, err
		}
		n := &jnode{kind: 'a'}
		for dec.More() {
			e, err := parseTok(dec)
			if err != nil {
				return nil, err
			}
			n.elems = append(n.elems, e)
		}
		_, err := dec.Token()
		return n, err
	default:
		b, _ := json.Marshal(v)
		return &jnode{kind: 'l', raw: string(b)}, nil
	}
}

func (n *jnode) write(b *bytes.Buffer) {
	switch n.kind {
	case 'o':
		b.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			kb, _ := json.Marshal(k)
			b.Write(kb)
			b.WriteByte(':')
			n.vals[i].write(b)
		}
		b.WriteByte('}')
	case 'a':
		b.WriteByte('[')
		for i, e := range n.elems {
			if i > 0 {
				b.WriteByte(',')
			}
			e.write(b)
		}
		b.WriteByte(']')
	default:
		b.WriteString(n.raw)
	}
}

func (n *jnode) clone() *jnode {
	c := &jnode{kind: n.kind, raw: n.raw, keys: slices.Clone(n.keys)}
	for _, v := range n.vals {
		c.vals = append(c.vals, v.clone())
	}
	for _, e := range n.elems {
		c.elems = append(c.elems, e.clone())
	}
	return c
}

// slot is a place holding a value: an object member or an array element.
type slot struct {
	parent *jnode
	i      int
	top    bool // a member of the top-level object
}

func (s slot) get() *jnode {
	if s.parent.kind == 'o' {
		return s.parent.vals[s.i]
	}
	return s.parent.elems[s.i]
}

func (s slot) set(v *jnode) {
	if s.parent.kind == 'o' {
		s.parent.vals[s.i] = v
	} else {
		s.parent.elems[s.i] = v
	}
}

func (s slot) key() string {
	if s.parent.kind == 'o' {
		return s.parent.keys[s.i]
	}
	return ""
}

// slots lists every slot of the tree, depth first.
func slots(root *jnode) []slot {
	var out []slot
	var walk func(n *jnode, top bool)
	walk = func(n *jnode, top bool) {
		switch n.kind {
		case 'o':
			for i, v := range n.vals {
				out = append(out, slot{n, i, top})
				walk(v, false)
			}
		case 'a':
			for i, e := range n.elems {
				out = append(out, slot{n, i, false})
				walk(e, false)
			}
		}
	}
	walk(root, true)
	return out
}

func objects(root *jnode) []*jnode {
	var out []*jnode
	var walk func(n *jnode)
	walk = func(n *jnode) {
		if n.kind == 'o' {
			out = append(out, n)
		}
		for _, v := range n.vals {
			walk(v)
		}
		for _, e := range n.elems {
			walk(e)
		}
	}
	walk(root)
	return out
}

func lit(s string) *jnode { return &jnode{kind: 'l', raw: s} }

func strLit(s string) *jnode {
	b, _ := json.Marshal(s)
	return lit(string(b))
}

// Values the fuzzer puts in place of others. Strings come from this fixed
// list only (a mutated shell field must never become a real command).
var (
	numbers = []string{"0", "-1", "1", "1.5", "-0", "1e2", "10.0", "1E400", "-1e400", "1e308", "1e-400", "2.5e-7",
		"9007199254740993", "9223372036854775807", "9223372036854775808", "18446744073709551615",
		"18446744073709551616", "-9223372036854775809", "123456789012345678901234567890", "4294967296"}
	nanLike  = []string{"NaN", "-NaN", "Infinity", "-Infinity", "nan", "undefined", "+1", "01", ".5", "1.", "0x10", "1e", "--1", "True", "nul"}
	safeStrs = []string{"", "x", "é", "e3", "e0", "e-1", "window:", "window:0x", "window:-1", "screen ", "SCREEN", "png ", "left\u0000",
		"\u202e", "\ufeff", "ok", "null", "stdout", "point_px", "click", "exec", "hello", "\\", "\"", strings.Repeat("z", 3000)}
	verbsAll = []string{"click", "double_click", "right_click", "move", "drag", "mouse_down", "mouse_up", "scroll", "type_text", "key",
		"screenshot", "start_screencast", "stop_screencast", "wait", "observe", "invoke_action", "set_value", "exec",
		"clipboard_get", "clipboard_set", "launch_app", "activate_window"}
	badVerbs = []string{"Click", "CLICK", "click ", " click", "clicks", "fly", "", "screenshot\u0000", "exec;", "launch-app", "ping", "hello", "query"}
)

// seeds are valid messages; CID stands for the call_id.
var seeds = []string{
	`{"type":"ping","t":1.5}`,
	`{"type":"query","call_id":"CID","q":"platform"}`,
	`{"type":"query","call_id":"CID","q":"screen_size"}`,
	`{"type":"query","call_id":"CID","q":"ready"}`,
	`{"type":"query","call_id":"CID","q":"list_windows"}`,
	`{"type":"action","call_id":"CID","action":{"verb":"screenshot","max_long_edge":48,"format":"jpeg","quality":30,"scope":"active_window"}}`,
	`{"type":"action","call_id":"CID","action":{"verb":"screenshot","max_long_edge":32,"if_none_match":"abc"}}`,
	`{"type":"action","call_id":"CID","action":{"verb":"observe","diff":true,"settle_ms":0}}`,
	`{"type":"action","call_id":"CID","action":{"verb":"observe","structured":true,"scope":"screen"}}`,
	`{"type":"action","call_id":"CID","action":{"verb":"click","target":{"kind":"point_px","x":300,"y":200}}}`,
	`{"type":"action","call_id":"CID","action":{"verb":"double_click","target":{"kind":"point_norm","x":0.5,"y":0.25}}}`,
	`{"type":"action","call_id":"CID","action":{"verb":"right_click","target":{"kind":"element_ref","ref":"e3","source":"atspi"}}}`,
	`{"type":"action","call_id":"CID","action":{"verb":"move","target":{"kind":"point_px","x":10,"y":10}}}`,
	`{"type":"action","call_id":"CID","action":{"verb":"drag","target":{"kind":"point_px","x":10,"y":10},"to":{"kind":"point_norm","x":0.1,"y":0.1},"duration_ms":0,"button":"left"}}`,
	`{"type":"action","call_id":"CID","action":{"verb":"mouse_down","target":{"kind":"point_px","x":5,"y":790},"button":"right"}}`,
	`{"type":"action","call_id":"CID","action":{"verb":"mouse_up","button":"right"}}`,
	`{"type":"action","call_id":"CID","action":{"verb":"scroll","target":{"kind":"point_px","x":700,"y":200},"dx":0,"dy":-1.5}}`,
	`{"type":"action","call_id":"CID","action":{"verb":"type_text","text":"ab"}}`,
	`{"type":"action","call_id":"CID","action":{"verb":"key","keys":"ctrl+a"}}`,
	`{"type":"action","call_id":"CID","action":{"verb":"wait","ms":1}}`,
	`{"type":"action","call_id":"CID","action":{"verb":"start_screencast","fps":1,"max_long_edge":32,"delta":true,"format":"jpeg","quality":20}}`,
	`{"type":"action","call_id":"CID","action":{"verb":"stop_screencast"}}`,
	`{"type":"action","call_id":"CID","action":{"verb":"invoke_action","target":{"kind":"element_ref","ref":"e3"},"text":"activate"}}`,
	`{"type":"action","call_id":"CID","action":{"verb":"set_value","target":{"kind":"element_ref","ref":"e5"},"text":"v"}}`,
	`{"type":"action","call_id":"CID","action":{"verb":"exec","argv":["true"]}}`,
	`{"type":"action","call_id":"CID","action":{"verb":"exec","shell":"exit 3","stream":true}}`,
	`{"type":"action","call_id":"CID","action":{"verb":"exec","argv":["echo","x"],"env":{"A":"b"},"cwd":"/","stdin":"s","timeout_ms":5000,"pty":false}}`,
	`{"type":"action","call_id":"CID","action":{"verb":"clipboard_get"}}`,
	`{"type":"action","call_id":"CID","action":{"verb":"clipboard_set","text":"c"}}`,
	`{"type":"action","call_id":"CID","action":{"verb":"launch_app","app":"form","args":[]}}`,
	`{"type":"action","call_id":"CID","action":{"verb":"activate_window","window_id":1}}`,
	`{"type":"action","call_id":"CID","action":{"verb":"activate_window","app":"notes"}}`,
	`{"type":"action","call_id":"CID","action":{"verb":"click","target":{"kind":"point_px","x":100,"y":100},"observe":{"scope":"screen","max_long_edge":32,"format":"jpeg","quality":10}}}`,
}

// A mutation changes a message. Its name is kept for the report.
type mutation struct {
	name string
	// tree mutations change the parsed message; text ones, the bytes.
	tree func(r *rand.Rand, root *jnode) bool
	text func(r *rand.Rand, b []byte) []byte
}

func pick[T any](r *rand.Rand, s []T) T { return s[r.IntN(len(s))] }

func pickSlot(r *rand.Rand, root *jnode, keep func(slot) bool) (slot, bool) {
	var ok []slot
	for _, s := range slots(root) {
		if keep(s) {
			ok = append(ok, s)
		}
	}
	if len(ok) == 0 {
		return slot{}, false
	}
	return pick(r, ok), true
}

func any_(slot) bool { return true }

func nested(r *rand.Rand, depth int) string {
	open, close := "[", "]"
	if r.IntN(2) == 0 {
		open, close = `{"a":`, "}"
	}
	return strings.Repeat(open, depth) + "1" + strings.Repeat(close, depth)
}

var mutations = []mutation{
	{name: "drop field", tree: func(r *rand.Rand, root *jnode) bool {
		objs := slices.DeleteFunc(objects(root), func(o *jnode) bool { return len(o.keys) == 0 })
		if len(objs) == 0 {
			return false
		}
		o := pick(r, objs)
		i := r.IntN(len(o.keys))
		o.keys = slices.Delete(o.keys, i, i+1)
		o.vals = slices.Delete(o.vals, i, i+1)
		return true
	}},
	{name: "duplicate field", tree: func(r *rand.Rand, root *jnode) bool {
		objs := slices.DeleteFunc(objects(root), func(o *jnode) bool { return len(o.keys) == 0 })
		if len(objs) == 0 {
			return false
		}
		o := pick(r, objs)
		i := r.IntN(len(o.keys))
		v := o.vals[i].clone()
		if r.IntN(2) == 0 {
			v = strLit(pick(r, safeStrs))
		}
		o.keys = append(o.keys, o.keys[i])
		o.vals = append(o.vals, v)
		return true
	}},
	{name: "retype value", tree: func(r *rand.Rand, root *jnode) bool {
		s, ok := pickSlot(r, root, any_)
		if !ok {
			return false
		}
		s.set(pick(r, []*jnode{lit("null"), lit("true"), lit("false"), lit("0"), lit("-3.25"), strLit(pick(r, safeStrs)),
			lit("{}"), lit("[]"), lit(`[1,"a",null]`), lit(`{"x":1}`), lit(`[{"kind":"point_px"}]`)}))
		return true
	}},
	{name: "huge number", tree: func(r *rand.Rand, root *jnode) bool {
		s, ok := pickSlot(r, root, func(s slot) bool { n := s.get(); return n.kind == 'l' && n.raw != "" && n.raw[0] != '"' })
		if !ok {
			s, ok = pickSlot(r, root, any_)
		}
		if !ok {
			return false
		}
		s.set(lit(pick(r, numbers)))
		return true
	}},
	{name: "nan-like literal", tree: func(r *rand.Rand, root *jnode) bool {
		s, ok := pickSlot(r, root, func(s slot) bool { return s.key() != "call_id" })
		if !ok {
			return false
		}
		s.set(lit(pick(r, nanLike)))
		return true
	}},
	{name: "deep nesting", tree: func(r *rand.Rand, root *jnode) bool {
		s, ok := pickSlot(r, root, func(s slot) bool { return s.key() != "call_id" })
		if !ok {
			return false
		}
		s.set(lit(nested(r, pick(r, []int{63, 64, 65, 66, 200, 5000, 100000}))))
		return true
	}},
	{name: "invalid utf-8", tree: func(r *rand.Rand, root *jnode) bool {
		s, ok := pickSlot(r, root, func(s slot) bool { n := s.get(); return n.kind == 'l' && strings.HasPrefix(n.raw, `"`) })
		if !ok {
			return false
		}
		bad := pick(r, []string{"\xff", "\xc3", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xc0\xaf", "\x80"})
		raw := s.get().raw
		at := 1 + r.IntN(len(raw)-1)
		s.set(lit(raw[:at] + bad + raw[at:]))
		return true
	}},
	{name: "lone surrogate escape", tree: func(r *rand.Rand, root *jnode) bool {
		s, ok := pickSlot(r, root, func(s slot) bool { n := s.get(); return n.kind == 'l' && strings.HasPrefix(n.raw, `"`) })
		if !ok {
			return false
		}
		// Unique, so that two messages whose call_id it replaces do not
		// share one: that would be the client's mistake, not the daemon's.
		s.set(lit(fmt.Sprintf(`"a\ud800b%d"`, r.Int64())))
		return true
	}},
	{name: "control character", tree: func(r *rand.Rand, root *jnode) bool {
		s, ok := pickSlot(r, root, func(s slot) bool { n := s.get(); return n.kind == 'l' && strings.HasPrefix(n.raw, `"`) })
		if !ok {
			return false
		}
		raw := s.get().raw
		s.set(lit(raw[:1] + "\x01\n" + raw[1:]))
		return true
	}},
	{name: "giant string", tree: func(r *rand.Rand, root *jnode) bool {
		s, ok := pickSlot(r, root, func(s slot) bool { return s.key() != "call_id" })
		if !ok {
			return false
		}
		s.set(strLit(strings.Repeat("g", pick(r, []int{70_000, 300_000}))))
		return true
	}},
	{name: "unknown verb", tree: func(r *rand.Rand, root *jnode) bool {
		for _, s := range slots(root) {
			if s.key() == "verb" {
				s.set(strLit(pick(r, badVerbs)))
				return true
			}
		}
		return false
	}},
	{name: "other verb", tree: func(r *rand.Rand, root *jnode) bool {
		for _, s := range slots(root) {
			if s.key() == "verb" {
				s.set(strLit(pick(r, verbsAll)))
				return true
			}
		}
		return false
	}},
	{name: "graft fields", tree: func(r *rand.Rand, root *jnode) bool {
		var act *jnode
		for _, s := range slots(root) {
			if s.key() == "action" && s.get().kind == 'o' {
				act = s.get()
			}
		}
		if act == nil {
			return false
		}
		donor := parseJ(strings.ReplaceAll(pick(r, seeds[5:]), "CID", "x"))
		for _, s := range slots(donor) {
			if s.key() == "action" && s.get().kind == 'o' {
				d := s.get()
				i := r.IntN(len(d.keys))
				if d.keys[i] != "verb" {
					act.keys = append(act.keys, d.keys[i])
					act.vals = append(act.vals, d.vals[i])
				}
			}
		}
		return true
	}},
	{name: "wrong call_id", tree: func(r *rand.Rand, root *jnode) bool {
		for _, s := range slots(root) {
			if s.top && s.key() == "call_id" {
				// String ids stay unique, so replies can be told apart.
				id := s.get().raw
				if len(id) < 2 || id[0] != '"' {
					id = `"?"`
				}
				id = id[1 : len(id)-1]
				s.set(pick(r, []*jnode{lit("5"), lit("null"), lit("{}"), lit(`["CID"]`), lit("true"), strLit(""),
					strLit(strings.Repeat("c", 5000) + id), lit(`"\u00e9\ud83d\ude00` + id + `"`)}))
				return true
			}
		}
		return false
	}},
	{name: "unknown field", tree: func(r *rand.Rand, root *jnode) bool {
		o := pick(r, objects(root))
		o.keys = append(o.keys, pick(r, []string{"extra", "Call_ID", "VERB", "__proto__", "", "call_id\u0000", "ok", "obs_id"}))
		o.vals = append(o.vals, lit("1"))
		return true
	}},
	{name: "case-variant key", tree: func(r *rand.Rand, root *jnode) bool {
		objs := slices.DeleteFunc(objects(root), func(o *jnode) bool { return len(o.keys) == 0 })
		if len(objs) == 0 {
			return false
		}
		o := pick(r, objs)
		i := r.IntN(len(o.keys))
		if o.keys[i] == "call_id" {
			return false
		}
		o.keys[i] = strings.ToUpper(o.keys[i][:1]) + o.keys[i][1:]
		return true
	}},
	{name: "other type", tree: func(r *rand.Rand, root *jnode) bool {
		for _, s := range slots(root) {
			if s.top && s.key() == "type" {
				s.set(strLit(pick(r, []string{"Action", "query ", "ping", "pong", "hello", "ack", "result", "observation", "exec_exit", "x", ""})))
				return true
			}
		}
		return false
	}},
	{name: "shuffle keys", tree: func(r *rand.Rand, root *jnode) bool {
		o := pick(r, objects(root))
		r.Shuffle(len(o.keys), func(i, j int) {
			o.keys[i], o.keys[j] = o.keys[j], o.keys[i]
			o.vals[i], o.vals[j] = o.vals[j], o.vals[i]
		})
		return true
	}},
	{name: "truncate", text: func(r *rand.Rand, b []byte) []byte { return b[:r.IntN(len(b))] }},
	{name: "trailing data", text: func(r *rand.Rand, b []byte) []byte {
		return append(b, pick(r, []string{"x", "{}", " 1", ",", "\x00", "\n\n"})...)
	}},
	{name: "leading bytes", text: func(r *rand.Rand, b []byte) []byte {
		return append([]byte(pick(r, []string{"\ufeff", " \t\r\n", "\x00", "//c\n"})), b...)
	}},
	{name: "flip byte", text: func(r *rand.Rand, b []byte) []byte {
		b = slices.Clone(b)
		b[r.IntN(len(b))] ^= byte(1 << r.IntN(8))
		return b
	}},
	{name: "not an object", text: func(r *rand.Rand, b []byte) []byte {
		return []byte(pick(r, []string{"[" + string(b) + "]", `"` + "action" + `"`, "null", "42", "[]", "{}", ""}))
	}},
}

// expectation says what a fuzzed message may be answered with.
type expectation struct {
	callID    string // a reply is required for this call_id
	schemaOK  bool   // the schema accepts the message
	dupKeys   bool
	typ, verb string
	observe   bool // a mutating action with observe
	stream    bool // a streamed exec
	plain     bool // one type, one action, one string verb: the reply shape is known
}

// analyse decides what the daemon owes a message: a reply when it is UTF-8,
// well-formed JSON with a top-level string call_id; otherwise a reply or a
// close.
func analyse(data []byte) expectation {
	var e expectation
	if !utf8.Valid(data) || !json.Valid(data) {
		return e
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	root, err := parseTok(dec)
	if err != nil || root.kind != 'o' {
		return e
	}
	if _, err := dec.Token(); err != io.EOF {
		return e
	}
	for _, o := range objects(root) {
		seen := map[string]bool{}
		for _, k := range o.keys {
			if seen[k] {
				e.dupKeys = true
			}
			seen[k] = true
		}
	}
	ids, types, actions, verbs := 0, 0, 0, 0
	for i, k := range root.keys {
		v := root.vals[i]
		switch k {
		case "call_id":
			ids++
			var s string
			if v.kind == 'l' && json.Unmarshal([]byte(v.raw), &s) == nil {
				e.callID = s
			}
		case "type":
			types++
			json.Unmarshal([]byte(v.raw), &e.typ)
		case "action":
			actions++
			if v.kind == 'o' {
				for j, ak := range v.keys {
					switch ak {
					case "verb":
						verbs++
						json.Unmarshal([]byte(v.vals[j].raw), &e.verb)
					case "observe":
						e.observe = true
					case "stream":
						e.stream = v.vals[j].raw == "true"
					}
				}
			}
		}
	}
	if ids != 1 {
		e.callID = ""
	}
	e.plain = !e.dupKeys && types == 1 && (e.typ == "query" && actions == 0 ||
		e.typ == "action" && actions == 1 && verbs == 1 && slices.Contains(verbsAll, e.verb))
	e.schemaOK = schematest.Check("", data) == nil
	return e
}

// slow reports whether a message the schema accepts would run long enough
// to stall the fuzzer (a long wait, drag, settle, big typing, a busy
// screencast); such messages are drawn again.
func slow(data []byte) bool {
	var m struct {
		Action map[string]any `json:"action"`
	}
	if json.Unmarshal(data, &m) != nil || m.Action == nil {
		return false
	}
	num := func(k string) float64 {
		f, _ := m.Action[k].(float64)
		return f
	}
	verb, _ := m.Action["verb"].(string)
	text, _ := m.Action["text"].(string)
	keys, _ := m.Action["keys"].(string)
	switch {
	case num("ms") > 200, num("duration_ms") > 200, num("settle_ms") > 200:
		return true
	case len(text) > 2000 && (verb == "type_text" || verb == "set_value" || verb == "invoke_action"):
		return true
	case len(keys) > 2000:
		return true
	case verb == "start_screencast" && (num("fps") > 5 || num("max_long_edge") == 0 || num("max_long_edge") > 128):
		return true
	case verb == "exec" && num("timeout_ms") > 5000:
		return true
	}
	return false
}

// fuzzConn is the fuzzer's current connection and what it was answered.
type fuzzConn struct {
	w       *wire
	replied map[string]*frame      // first reply per call_id
	exp     map[string]expectation // what each call asked for
	extra   map[string]int         // follow-ups per call_id
}

// fuzzReport gathers what a fuzz run found, by kind, with a few examples.
type fuzzReport struct {
	stats    map[string]int
	examples map[string][]string
}

func (r *fuzzReport) add(kind, example string) {
	r.stats["found: "+kind]++
	if len(r.examples[kind]) < 4 {
		r.examples[kind] = append(r.examples[kind], example)
	}
}

// fail reports every kind as one error of t.
func (r *fuzzReport) fail(t *testing.T) {
	t.Helper()
	for _, k := range slices.Sorted(maps.Keys(r.examples)) {
		t.Errorf("%s (%d times), e.g.:\n  %s", k, r.stats["found: "+k], strings.Join(r.examples[k], "\n  "))
	}
}

func newReport() *fuzzReport {
	return &fuzzReport{stats: map[string]int{}, examples: map[string][]string{}}
}

// TestWireFuzz mutates valid messages (dropped, duplicated and retyped
// fields, huge and NaN-like numbers, deep nesting, invalid UTF-8, giant
// strings up to the read limit, unknown verbs and types, wrong call_id
// types, truncation...) and sends them one at a time, with a fixed seed,
// stopping after 3000 messages or 20 s. Its subtests report:
//
//   - invariants: every message that is UTF-8 JSON with one top-level
//     string call_id gets exactly one in-band reply, in its verb's reply
//     shape, ok=false with a known "code: detail" whenever the schema
//     rejects it; any other message gets a reply or closes the connection
//     with a refusal code and a reason (1009 over the read limit). The
//     daemon never dies, and a second client keeps getting pongs and
//     screenshots throughout.
//   - schema_agreement: the daemon does not reject, as malformed, a
//     message the schema accepts.
func TestWireFuzz(t *testing.T) {
	d := startDaemon(t, "-log", "warn")
	side, _ := dialWire(t, d, nil)
	r := rand.New(rand.NewPCG(20260601, 7))
	const maxMsgs = 3000
	deadline := time.Now().Add(20 * time.Second)
	hard, soft := newReport(), newReport()

	var fc *fuzzConn
	conns := 0
	connect := func() {
		// Element refs exist once an observe seed has run on the
		// connection; before that, element verbs meet stale refs. Every
		// other connection takes binary frames.
		conns++
		w, _ := dialWire(t, d, &helloOpts{binary: conns%2 == 0})
		fc = &fuzzConn{w: w, replied: map[string]*frame{}, exp: map[string]expectation{}, extra: map[string]int{}}
	}
	connect()

	numRE := regexp.MustCompile(`[0-9]+`)
	stats := hard.stats
	sent := 0
	for ; sent < maxMsgs && time.Now().Before(deadline); sent++ {
		if !d.alive() {
			t.Fatalf("the daemon died after %d messages:\n%s", sent, tail(d.stderr.String()))
		}
		id := "f" + strconv.Itoa(sent)
		data, names, e := fuzzMessage(r, id)
		binaryMsg := false
		// Now and then: a message near the read limit, over it, or binary.
		special := ""
		switch {
		case sent%500 == 250:
			special = "near the read limit"
			data = []byte(`{"type":"action","call_id":"` + id + `","action":{"verb":"clipboard_set","text":"` +
				strings.Repeat("n", 16<<20-200) + `","x":1}}`)
			e = expectation{callID: id, typ: "action", verb: "clipboard_set", plain: true}
		case sent%500 == 499:
			special = "over the read limit"
			data = []byte(`{"type":"action","call_id":"` + id + `","action":{"verb":"clipboard_set","text":"` + strings.Repeat("o", 16<<20) + `"}}`)
			e = expectation{}
		case sent%97 == 50:
			special = "binary message"
			binaryMsg = true
			e = expectation{}
		}
		if special != "" {
			names = []string{special}
		}
		for _, n := range names {
			stats["mutation: "+n]++
		}
		label := strings.Join(names, "+")
		example := func(what string) string { return fmt.Sprintf("[%s] %s %s", label, trunc(data), what) }

		typ := websocket.MessageText
		if binaryMsg {
			typ = websocket.MessageBinary
		}
		wctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		werr := fc.w.ws.Write(wctx, typ, data)
		cancel()

		// Wait for the reply, or the end of the connection.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		var reply *frame
		var rerr error
		if e.callID != "" {
			reply, rerr = fc.w.reply(ctx, e.callID)
		} else {
			// Nothing is owed: a ping barrier tells an ignored message
			// from a close.
			rerr = fc.w.trySend(fmt.Sprintf(`{"type":"ping","t":%d}`, sent))
			if rerr == nil {
				_, rerr = fc.w.take(ctx, func(f *frame) bool {
					return (f.M.Type == "pong" && f.M.T != nil && *f.M.T == float64(sent)) ||
						(f.isReply() && f.id() == id)
				})
			}
		}
		cancel()
		if werr != nil && rerr == nil {
			rerr = werr
		}

		if rerr != nil {
			if fc.w.isOpen() && ctxErr(rerr) {
				hard.add("no reply and no close within 10 s", example(""))
				fc.w.ws.CloseNow()
				connect()
				continue
			}
			code, reason, cerr := fc.w.closed(ctxT(t, 10*time.Second))
			stats[fmt.Sprintf("close %d", code)]++
			switch {
			case cerr != nil:
				hard.add("the connection ended without a close frame", example(cerr.Error()))
			case reason == "":
				hard.add("close without a reason", example(fmt.Sprint(code)))
			case len(reason) > 123 || !utf8.ValidString(reason):
				hard.add("close reason over 123 bytes or not UTF-8", example(fmt.Sprintf("%q", reason)))
			case !slices.Contains([]websocket.StatusCode{websocket.StatusProtocolError, websocket.StatusUnsupportedData,
				websocket.StatusInvalidFramePayloadData, websocket.StatusPolicyViolation, websocket.StatusMessageTooBig}, code):
				hard.add("close with a code that is no refusal", example(fmt.Sprintf("%d %q", code, reason)))
			}
			if special == "over the read limit" && code != websocket.StatusMessageTooBig {
				hard.add("a message over the read limit closed without 1009", example(fmt.Sprintf("%d %q", code, reason)))
			}
			if e.callID != "" {
				why := "other"
				for _, m := range []string{"deep nesting", "huge number", "lone surrogate escape", "giant string"} {
					if strings.Contains(label, m) {
						why = m
						break
					}
				}
				hard.add("closed the connection instead of replying to a JSON message with a string call_id (mutations include "+why+")",
					example(fmt.Sprintf("-> close %d %q", code, reason)))
			}
			connect()
			continue
		}
		if special == "over the read limit" {
			hard.add("a message over the 16 MiB read limit did not close the connection", example(""))
		}
		if reply == nil {
			continue
		}
		stats["replies"]++
		fc.replied[e.callID] = reply
		fc.exp[e.callID] = e
		ok := reply.M.OK == nil || *reply.M.OK
		if ok {
			stats["replies ok=true"]++
		}
		switch {
		case ok && (!e.schemaOK || e.dupKeys) && special == "":
			hard.add("accepted a message the schema rejects", example("-> "+reply.String()))
		case !ok && e.schemaOK && !e.dupKeys:
			code, detail, _ := strings.Cut(*reply.M.Error, ": ")
			if (code == "invalid_message" || code == "invalid_action") && strings.HasPrefix(detail, "$") {
				key := code + ": " + numRE.ReplaceAllString(detail, "N")
				if len(key) > 100 {
					key = key[:100]
				}
				soft.add("rejected a message the schema accepts: "+key, example("-> "+reply.String()))
			}
		}
		if want := e.replyTypes(ok); !slices.Contains(want, reply.M.Type) {
			hard.add(fmt.Sprintf("reply of the wrong shape (%s %s ok=%v answered with %s)", e.typ, e.verb, ok, reply.M.Type),
				example("-> "+reply.String()))
		}

		// Follow-ups and duplicates for this connection's earlier calls.
		for _, f := range fc.w.snapshot() {
			if f.M.Stream != "" || f.M.Type == "pong" {
				fc.w.drop(func(g *frame) bool { return g == f })
				continue
			}
			first, seen := fc.replied[f.id()]
			if !seen {
				continue
			}
			fc.w.drop(func(g *frame) bool { return g == f })
			fc.extra[f.id()]++
			okFirst := first.M.OK != nil && *first.M.OK
			switch {
			case f.M.Type == "observation" && first.M.Type == "ack" && okFirst && fc.extra[f.id()] == 1:
			case f.M.Type == "ack" && f.M.OK != nil && !*f.M.OK && first.M.Type == "ack" && okFirst &&
				fc.exp[f.id()].observe && fc.extra[f.id()] == 1:
				// The observation an ack promised could not be taken.
			case (f.M.Type == "exec_output" || f.M.Type == "exec_exit") && first.M.Type == "ack" && okFirst:
			default:
				hard.add("a second message for one call_id", fmt.Sprintf("%s after %s", f, first))
			}
		}

		if sent%25 == 0 {
			if err := side.ping(ctxT(t, 10*time.Second), float64(sent)); err != nil {
				t.Fatalf("the side client got no pong after %d fuzzed messages: %v", sent, err)
			}
			if sent%250 == 0 {
				mustOK(t, side.do(fmt.Sprintf("side%d", sent), map[string]any{"verb": "screenshot", "max_long_edge": 64}), "observation")
			}
		}
	}
	if !d.alive() {
		t.Fatalf("the daemon died:\n%s", tail(d.stderr.String()))
	}
	if err := side.ping(ctxT(t, 10*time.Second), -1); err != nil {
		t.Fatalf("side client at the end: %v", err)
	}
	var lines []string
	for k, v := range stats {
		lines = append(lines, fmt.Sprintf("%6d %s", v, k))
	}
	sort.Strings(lines)
	t.Logf("%d messages:\n%s", sent, strings.Join(lines, "\n"))
	t.Run("invariants", hard.fail)
	t.Run("schema_agreement", soft.fail)
}

// fuzzMessage draws a seed, applies one to three mutations, and returns the
// message, the mutations' names and what the daemon owes it.
func fuzzMessage(r *rand.Rand, id string) ([]byte, []string, expectation) {
	for {
		var data []byte
		var names []string
		root := parseJ(strings.ReplaceAll(pick(r, seeds), "CID", id))
		for range 1 + r.IntN(3) {
			m := pick(r, mutations)
			if root == nil {
				break
			}
			if m.tree != nil && m.tree(r, root) {
				names = append(names, m.name)
			}
			if m.text != nil {
				var b bytes.Buffer
				root.write(&b)
				data = m.text(r, b.Bytes())
				names = append(names, m.name)
				root = nil
			}
		}
		if root != nil {
			var b bytes.Buffer
			root.write(&b)
			data = b.Bytes()
		}
		if len(names) == 0 {
			continue
		}
		e := analyse(data)
		if e.schemaOK && !e.dupKeys && slow(data) {
			continue
		}
		return data, names, e
	}
}

// replyTypes lists the message types that may answer e. Only a message
// whose shape is unambiguous (one "type", one "action" with a string verb)
// is held to its verb's reply type; for the rest, ack or result will do.
func (e expectation) replyTypes(ok bool) []string {
	if !e.plain {
		return []string{"ack", "result", "observation"}
	}
	switch {
	case e.typ == "query":
		return []string{"result"}
	case e.verb == "exec" && e.stream && ok:
		return []string{"ack"}
	case e.verb == "exec" && e.stream:
		// The refusal of a streamed exec is TestStreamedExecRefusalShape's.
		return []string{"ack", "result"}
	case e.verb == "exec", e.verb == "clipboard_get":
		return []string{"result"}
	case ok && (e.verb == "screenshot" || e.verb == "observe"):
		return []string{"observation"}
	}
	return []string{"ack"}
}

func ctxErr(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "deadline exceeded") || strings.Contains(err.Error(), "context canceled"))
}

// TestCallIDAfterOddValues puts a call_id after a value the strict decoder
// refuses but any JSON parser reads past: an array nested 65 deep, a number
// past float64's range. The message is invalid, and its call_id is a plain
// top-level string, so the daemon owes an in-band ok=false reply, whatever
// the order of the keys.
func TestCallIDAfterOddValues(t *testing.T) {
	d := startDaemon(t)
	for i, odd := range []string{
		strings.Repeat("[", 65) + strings.Repeat("]", 65),
		`{"a":` + strings.Repeat("[", 64) + strings.Repeat("]", 64) + `}`,
		"1e400",
		"-1e400",
		`"\ud800"`,
	} {
		for _, first := range []bool{true, false} {
			id := fmt.Sprintf("c%d-%v", i, first)
			msg := `{"type":"query","x":` + odd + `,"call_id":"` + id + `","q":"platform"}`
			if !first {
				msg = `{"type":"query","call_id":"` + id + `","q":"platform","x":` + odd + `}`
			}
			w, _ := dialWire(t, d, nil)
			w.send(msg)
			ctx := ctxT(t, 10*time.Second)
			r, err := w.reply(ctx, id)
			if err != nil {
				code, reason, _ := w.closed(ctx)
				t.Errorf("%s: no reply; the connection closed with %d %q", msg, code, reason)
				continue
			}
			mustFail(t, r, "result", "invalid_message")
		}
	}
}
