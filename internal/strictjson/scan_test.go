package strictjson

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	deep := strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)
	tooDeep := strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)
	var many strings.Builder
	many.WriteString("{")
	for i := range 40 {
		if i > 0 {
			many.WriteString(",")
		}
		many.WriteString(`"k` + strconv.Itoa(i) + `":1`)
	}
	manyOK := many.String() + "}"
	manyDup := many.String() + `,"k3":2}`

	valid := []string{
		`{}`, `[]`, `0`, `-0`, `1.5e+10`, `-12.25E-3`, `"a"`, `true`, `false`, `null`,
		` {"a" : [1, {"b": null}], "A": 2} `, // keys differ by case: both kept
		`"é 日本 \u00e9 \ud83d\ude00"`,
		`{"a":{"x":1},"b":{"x":2}}`, // the same key in two objects is no duplicate
		deep, manyOK,
	}
	for _, s := range valid {
		if err := Validate([]byte(s)); err != nil {
			t.Errorf("Validate(%.40q) = %v, want nil", s, err)
		}
		if !json.Valid([]byte(s)) {
			t.Errorf("encoding/json disagrees on %.40q", s)
		}
	}

	syntax := []string{
		``, ` `, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `[1 2]`, `01`, `1.`, `.5`, `1e`, `-`, `+1`,
		`"abc`, `"\x"`, `"\u12"`, "\"a\x01\"", `tru`, `nul`, `{} {}`, `{'a':1}`, `NaN`,
		"\"\xff\"", "\"\xc3\"", // invalid UTF-8
		`"\ud800"`, `"\udc00"`, `"\ud800\u0041"`, `"\ud800x"`, // lone surrogates
		tooDeep,
	}
	for _, s := range syntax {
		err := Validate([]byte(s))
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Validate(%.40q) = %v, want a *SyntaxError", s, err)
		}
	}

	dups := []string{
		`{"a":1,"a":2}`,
		`{"a":1,"\u0061":2}`, // the same key once unescaped
		`{"x":{"m":1,"m":1}}`,
		`[{"id":1},{"id":1,"id":2}]`,
		manyDup,
	}
	for _, s := range dups {
		err := Validate([]byte(s))
		var de *DuplicateKeyError
		if !errors.As(err, &de) {
			t.Errorf("Validate(%.40q) = %v, want a *DuplicateKeyError", s, err)
		}
	}
}

func TestValueReaders(t *testing.T) {
	if s, err := String([]byte(`"a\"b\\c\/\n\u00e9\ud83d\ude00"`)); err != nil || s != "a\"b\\c/\né😀" {
		t.Errorf("String = %q, %v", s, err)
	}
	for _, bad := range []string{`a`, `"a`, `"a"b"`, `1`, `""x`} {
		if _, err := String([]byte(bad)); err == nil {
			t.Errorf("String(%q) succeeded", bad)
		}
	}
	ints := map[string]int64{`0`: 0, `-1`: -1, `9223372036854775807`: math.MaxInt64, `-9223372036854775808`: math.MinInt64}
	for s, want := range ints {
		if n, err := Int([]byte(s)); err != nil || n != want {
			t.Errorf("Int(%s) = %d, %v", s, n, err)
		}
	}
	for _, bad := range []string{`1.0`, `1e3`, `01`, `-`, ``, `9223372036854775808`, `"1"`, `99999999999999999999`} {
		if _, err := Int([]byte(bad)); err == nil {
			t.Errorf("Int(%q) succeeded", bad)
		}
	}
	if f, err := Number([]byte(`1.5e2`)); err != nil || f != 150 {
		t.Errorf("Number = %v, %v", f, err)
	}
	if _, err := Number([]byte(`1.5x`)); err == nil {
		t.Error("Number(1.5x) succeeded")
	}
	if b, err := Bool([]byte(`true`)); err != nil || !b {
		t.Errorf("Bool = %v, %v", b, err)
	}
	if _, err := Bool([]byte(`1`)); err == nil {
		t.Error("Bool(1) succeeded")
	}

	var keys []string
	var vals []string
	err := Members([]byte(` { "a" : 1 , "b\u0063":{"x":[1,"]"]}, "d":"}" } `), func(k, v []byte) error {
		keys = append(keys, string(k))
		vals = append(vals, string(v))
		return nil
	})
	if err != nil || strings.Join(keys, ",") != "a,bc,d" || strings.Join(vals, " ") != `1 {"x":[1,"]"]} "}"` {
		t.Errorf("Members: keys %q vals %q err %v", keys, vals, err)
	}
	if err := Members([]byte(`[1]`), func(k, v []byte) error { return nil }); err == nil {
		t.Error("Members on an array succeeded")
	}
	stop := errors.New("stop")
	if err := Members([]byte(`{"a":1,"b":2}`), func(k, v []byte) error { return stop }); err != stop {
		t.Errorf("Members did not return fn's error: %v", err)
	}
	var elems []string
	if err := Elements([]byte(`[1, [2,3] ,{"a":"]"}]`), func(i int, v []byte) error {
		elems = append(elems, string(v))
		return nil
	}); err != nil || strings.Join(elems, " ") != `1 [2,3] {"a":"]"}` {
		t.Errorf("Elements = %q, %v", elems, err)
	}
	// Never a panic on text that was not validated.
	for _, s := range []string{`{"a":`, `{"a":1`, `{"a" 1}`, `{"a":[1,}`, `{"a":"x`, `[1,`, `[`} {
		_ = Members([]byte(s), func(k, v []byte) error { return nil })
		_ = Elements([]byte(s), func(i int, v []byte) error { return nil })
	}
}

func TestAppendString(t *testing.T) {
	for _, s := range []string{"", "plain", "q\"b\\s", "\n\r\t\x00\x1f", "é😀", "bad\xffutf8", "<&>"} {
		enc := AppendString(nil, s)
		if err := Validate(enc); err != nil {
			t.Errorf("AppendString(%q) = %s: %v", s, enc, err)
			continue
		}
		got, err := String(enc)
		want := strings.ToValidUTF8(s, "\uFFFD")
		if err != nil || got != want {
			t.Errorf("AppendString(%q) round trip = %q, %v", s, got, err)
		}
	}
}
