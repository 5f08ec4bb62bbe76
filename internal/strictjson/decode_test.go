package strictjson

import (
	"encoding/json"
	"strings"
	"testing"
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
