package strictjson

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

type inner struct {
	N int `json:"n" wire:"required"`
}

type outer struct {
	S    string            `json:"s"`
	F    *float64          `json:"f"`
	U    uint16            `json:"u"`
	B    bool              `json:"b" wire:"true"`
	In   *inner            `json:"in"`
	Open *inner            `json:"open" wire:"open"`
	List []inner           `json:"list"`
	M    map[string]string `json:"m"`
	Any  any               `json:"any"`
	Raw  json.RawMessage   `json:"raw"`
	Null *int              `json:"null" wire:"required"`
}

func TestDecode(t *testing.T) {
	var o outer
	err := Schema.Unmarshal([]byte(`{"s":"a\u00e9\ud83d\ude00\n","f":-1.5e2,"u":65535,"b":true,"in":{"n":1},
		"open":{"n":2,"extra":[1,{"x":null}]},"list":[{"n":3}],"m":{"k":"v"},"any":{"a":[1,"x",true,null]},
		"raw":{"z" : 1},"null":null}`), &o)
	if err != nil {
		t.Fatal(err)
	}
	if o.S != "aé😀\n" || *o.F != -150 || o.U != 65535 || !o.B || o.In.N != 1 || o.Open.N != 2 || o.List[0].N != 3 ||
		o.M["k"] != "v" || string(o.Raw) != `{"z" : 1}` || o.Null != nil {
		t.Fatalf("decoded %+v", o)
	}
}

func TestErrorsNamePaths(t *testing.T) {
	cases := []struct{ in, path, msg string }{
		{`{"in":{"n":"x"},"null":1}`, "$.in.n", "expected integer"},
		{`{"list":[{"n":1},{"n":1.5}],"null":1}`, "$.list[1].n", "expected integer"},
		{`{"list":[{}],"null":1}`, "$.list[0]", `missing required field "n"`},
		{`{"in":{"n":1,"n":2},"null":1}`, "$.in.n", "duplicate key"},
		{`{"S":"x","null":1}`, "$.S", "unknown field"},
		{`{"u":1.5,"null":1}`, "$.u", "expected integer"},
		{`{"u":-1,"null":1}`, "$.u", "non-negative"},
		{`{"b":false,"null":1}`, "$.b", "must be true"},
		{`{"m":{"a":"1","a":"2"},"null":1}`, "$.m.a", "duplicate key"},
		{`{"any":{"a":1,"a":2},"null":1}`, "$.any.a", "duplicate key"},
		{`{"open":{"n":1,"x":1,"x":2},"null":1}`, "$.open.x", "duplicate key"},
		{`{"s":"\ud800x","null":1}`, "", ""}, // a lone surrogate becomes U+FFFD: accepted
		{`{}`, "$", `missing required field "null"`},
		{`{"null":1} x`, "$", "after the top-level value"},
		{`{"s":"a` + "\x01" + `","null":1}`, "$.s", "control character"},
	}
	for _, tc := range cases {
		var o outer
		err := Schema.Unmarshal([]byte(tc.in), &o)
		if tc.path == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.in, err)
			}
			continue
		}
		e, ok := err.(*Error)
		if !ok || e.Path != tc.path || !strings.Contains(e.Msg, tc.msg) {
			t.Errorf("%s: got %v, want %s: ...%s", tc.in, err, tc.path, tc.msg)
		}
	}
}

func TestIntegersSaturate(t *testing.T) {
	var o outer
	if err := Schema.Unmarshal([]byte(`{"u":70000,"null":1e308}`), &o); err != nil || o.U != 65535 || *o.Null != int(^uint(0)>>1) {
		t.Fatalf("saturation: %v %+v", err, o)
	}
	if err := Schema.Unmarshal([]byte(`{"null":-1e400}`), &o); err == nil {
		t.Fatal("-1e400 accepted")
	}
	if err := Schema.Unmarshal([]byte(`{"null":-1e300}`), &o); err != nil || *o.Null != -int(^uint(0)>>1)-1 {
		t.Fatalf("negative saturation: %v %v", err, *o.Null)
	}
}

func TestTopString(t *testing.T) {
	if s, ok := TopString([]byte(` {"a":[1,{"type":"no"}],"type":"yes"}`), "type"); !ok || s != "yes" {
		t.Fatalf("TopString = %q %v", s, ok)
	}
	for _, in := range []string{`[]`, `{"type":1}`, `{"a":1}`, `{"type"`, ``} {
		if _, ok := TopString([]byte(in), "type"); ok {
			t.Errorf("TopString(%q) found a type", in)
		}
	}
}

func FuzzUnmarshal(f *testing.F) {
	f.Add([]byte(`{"s":"x","in":{"n":1},"list":[{"n":2}],"any":[1,{"a":null}],"null":null}`))
	f.Add([]byte(`{"s":"\u00e9\ud83d\ude00","raw":[1,2],"null":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var o outer
		err := Schema.Unmarshal(data, &o)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error %T is not *Error", err)
			}
			return
		}
		// What strictjson accepts, encoding/json accepts too.
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			t.Fatalf("accepted %q that encoding/json rejects: %v", data, err)
		}
	})
}

func TestTopStringPastHostileFields(t *testing.T) {
	deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	for _, in := range []string{
		`{"type":` + deep + `,"call_id":"c1"}`,
		`{"action":{"a":1,"a":2,"b":{"c":[1,{"d":null}]}},"call_id":"c1"}`,
		`{"x":{},"y":[],"z":"s","call_id":"c1","after":` + deep + `}`,
	} {
		if s, ok := TopString([]byte(in), "call_id"); !ok || s != "c1" {
			t.Errorf("TopString(%.60q...) = %q, %v", in, s, ok)
		}
	}
	for _, in := range []string{`{"a":[1,2,"call_id":"c1"}`, `{"a":{1:2},"call_id":"c1"}`, `{"a":[}],"call_id":"c1"}`} {
		if _, ok := TopString([]byte(in), "call_id"); ok {
			t.Errorf("TopString(%q) accepted broken JSON", in)
		}
	}
}

// FuzzOptions holds the strictest reading to the scanner and to itself:
// what it accepts, Validate accepts; a text Validate refuses as not JSON,
// it refuses; and gathering problems (Report) changes what is named, not
// what is accepted: it fails only on a text that is not strict JSON, and
// reports nothing exactly when the decoding that stops at the first
// problem succeeds. The seed corpus is testdata/fuzz/FuzzOptions.
func FuzzOptions(f *testing.F) {
	f.Add([]byte(`{"s":"x","in":{"n":1},"list":[{"n":2}],"any":[1,{"a":null}],"null":1}`))
	f.Add([]byte(`{"u":1.5,"list":[{},{"n":"x"}],"open":{"n":1,"x":[1,2],"x":3},"S":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var o outer
		err := Unmarshal(data, &o)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error %T is not *Error", err)
			}
		}
		verr := Validate(data)
		if err == nil && verr != nil {
			t.Fatalf("decoded %q that Validate refuses: %v", data, verr)
		}
		var se *SyntaxError
		if errors.As(verr, &se) && err == nil {
			t.Fatalf("decoded %q, not JSON: %v", data, verr)
		}
		var reports []*Error
		var all outer
		rerr := Options{Report: func(e *Error) { reports = append(reports, e) }}.Unmarshal(data, &all)
		if rerr != nil && !errors.As(rerr, &se) {
			t.Fatalf("gathering failed on %q with a problem that is not syntax: %v", data, rerr)
		}
		if (err == nil) != (rerr == nil && len(reports) == 0) {
			t.Fatalf("%q: stopping %v, gathering %v and %d problems", data, err, rerr, len(reports))
		}
		for _, e := range reports {
			if errors.As(e, &se) || e.Path == "" || e.Path[0] != '$' {
				t.Fatalf("%q: reported %v", data, e)
			}
		}
	})
}

// TestOptions: the zero Options read the strictest; Schema reads as the
// ACI's schema does; Open skips unknown keys everywhere; Report names
// every problem and goes on.
func TestOptions(t *testing.T) {
	for _, tt := range []struct {
		in     string
		strict string // the zero Options' error, "" when accepted
		schema string // Schema's
	}{
		{`{"null":1.0}`, "$.null: expected integer, got number", ""},
		{`{"null":1e3}`, "$.null: expected integer, got number", ""},
		{`{"null":9223372036854775808}`, "$.null: expected integer, got number", ""},
		{`{"null":null}`, "$.null: expected integer, got null", ""},
		{`{"s":"\ud800","null":1}`, "$.s: lone high surrogate", ""},
		{`{"s":"\udc00\ud800","null":1}`, "$.s: lone low surrogate", ""},
		{`{"in":null,"null":1}`, "$.in: expected object, got null", ""},
		{`{"raw":null,"null":1}`, "", ""},
		{`{"u":70000,"null":1}`, "$.u: 70000 is out of range", ""},
		{`{"null":1,"x":` + strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth) + `}`, `$.x: unknown field "x"`, `$.x: unknown field "x"`},
		{`{"null":1,"any":` + strings.Repeat("[", MaxDepth-1) + strings.Repeat("]", MaxDepth-1) + `}`, "", ""},
		{`{"null":1,"any":` + strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth) + `}`, "nesting deeper than 128", "nesting deeper than 128"},
	} {
		var o outer
		check := func(reading string, err error, want string) {
			switch {
			case want == "" && err != nil:
				t.Errorf("%s: %.60s: %v", reading, tt.in, err)
			case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
				t.Errorf("%s: %.60s: %v, want %q", reading, tt.in, err, want)
			}
		}
		check("strict", Unmarshal([]byte(tt.in), &o), tt.strict)
		check("schema", Schema.Unmarshal([]byte(tt.in), &o), tt.schema)
	}
	var got inner
	if err := (Options{Open: true}).Unmarshal([]byte(`{"x":{"y":[1]},"n":3,"z":1}`), &got); err != nil || got.N != 3 {
		t.Errorf("open: %+v, %v", got, err)
	}
	if err := (Options{Open: true}).Unmarshal([]byte(`{"x":1,"n":3,"x":2}`), &got); err == nil || !errors.Is(err, ErrDuplicateKey) {
		t.Errorf("open, an unknown key twice: %v", err)
	}
	var problems []string
	var o outer
	err := Options{Report: func(e *Error) { problems = append(problems, e.Error()) }}.Unmarshal(
		[]byte(`{"s":1,"u":-1,"b":false,"in":{},"list":[{"n":"x"},{"n":2}],"m":{"a":"1","a":"2"},"zz":[1],"null":1}`), &o)
	want := []string{`$.s: expected string, got number`, `$.u: expected a non-negative integer, got -1`, `$.b: must be true when present`,
		`$.in: missing required field "n"`, `$.list[0].n: expected integer, got string`, `$.m.a: duplicate key "a"`, `$.zz: unknown field "zz"`}
	if err != nil || strings.Join(problems, "\n") != strings.Join(want, "\n") || len(o.List) != 2 || o.List[1].N != 2 {
		t.Errorf("Report: %v\n%s\nwant\n%s\n%+v", err, strings.Join(problems, "\n"), strings.Join(want, "\n"), o)
	}
	if err := (Options{Report: func(*Error) {}}).Unmarshal([]byte(`{"s":1,"null":1`), &o); err == nil {
		t.Error("Report: a text cut short decoded")
	}
}

// TestManyUnknownKeys decodes, twice over the pooled decoder, an object
// whose unknown keys outgrow the small set into its map: emptying the set
// for the next use must not reach past the small set (it once panicked,
// from a plugin's params of 17 unknown keys).
func TestManyUnknownKeys(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"a":"x"`)
	for i := range 100 {
		fmt.Fprintf(&b, `,"k%d":%d`, i, i)
	}
	b.WriteString("}")
	for range 3 {
		var v struct {
			A string `json:"a"`
		}
		if err := (Options{Open: true}).Unmarshal([]byte(b.String()), &v); err != nil || v.A != "x" {
			t.Fatalf("open: %+v, %v", v, err)
		}
		if err := Unmarshal([]byte(b.String()), &v); !errors.Is(err, ErrUnknownField) {
			t.Fatalf("strict: %v, want an unknown field", err)
		}
	}
}

// TestErrorsStaySmall: an error names what is wrong without repeating it
// whole, however long the text's number or key: an answer that quotes it
// would be as large as the request.
func TestErrorsStaySmall(t *testing.T) {
	long := strings.Repeat("7", 1<<20)
	var v struct {
		N   int64             `json:"n"`
		U   uint8             `json:"u"`
		F   float32           `json:"f"`
		Env map[string]string `json:"env"`
	}
	for _, text := range []string{
		`{"n":` + long + `}`,
		`{"n":1.` + long + `}`,
		`{"u":-` + long + `}`,
		`{"f":` + long + `}`,
		`{"` + long + `":1}`,
		`{"env":{"` + long + `":1}}`,
		`{"env":{"` + long + `":"a","` + long + `":"b"}}`,
	} {
		err := Unmarshal([]byte(text), &v)
		if err == nil || len(err.Error()) > 512 {
			t.Errorf("%.20s…: an error of %d bytes (%.80v)", text, len(fmt.Sprint(err)), err)
		}
	}
}

// TestPathCutsWholeCharacters: a long key cut in a path is cut between
// characters, so that the error stays UTF-8 (a WebSocket close reason
// must be).
func TestPathCutsWholeCharacters(t *testing.T) {
	var v struct {
		Env map[string]string `json:"env"`
	}
	err := Unmarshal([]byte(`{"env":{"a`+strings.Repeat("😀", 40)+`":1}}`), &v)
	if err == nil || !utf8.ValidString(err.Error()) {
		t.Fatalf("%q: want a UTF-8 error", err)
	}
}
