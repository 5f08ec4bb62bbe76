package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"shinken.dev/go/internal/strictjson"
)

// FuzzParse holds the codec to encoding/json on what is JSON, to a reference
// check on duplicate keys, and to itself on round trips; and it must never
// panic. The seed corpus is in testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"permissions/decide","params":{"request":{"id":"r","kind":"command"}}}`,
		`{"jsonrpc":"2.0","method":"events/fact","params":{"name":"agent.created","seq":1,"data":{}}}`,
		`{"jsonrpc":"2.0","id":"a","result":{"decision":"deny","message":"no"}}`,
		`{"jsonrpc":"2.0","id":2,"error":{"code":-32001,"message":"not yours","data":[1]}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"}]`,
		`{"jsonrpc":"2.0","id":1,"method":"a","method":"b"}`,
		`{"jsonrpc":"2.0","id":1,"Method":"a"}`,
		`{"jsonr\u0070c":"2.0","id":1,"method":"\u0061"}`,
		`{"a":"\ud83d\ude00","a\u0000":1}`,
		"{\"jsonrpc\":\"2.0\",\"method\":\"\xff\"}",
		`[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]`,
		`-0.5e-7`, `[]`, `{}`, ``, `nul`,
	} {
		f.Add([]byte(s))
	}
	// An object at the bound of its keys, and past it; a batch past its
	// bound.
	f.Add(wideObject(strictjson.MaxKeys))
	f.Add(wideObject(strictjson.MaxKeys + 1))
	f.Add([]byte("[" + strings.Repeat("1,", MaxBatch) + "1]"))
	f.Fuzz(func(t *testing.T, line []byte) {
		items, _, perr := Parse(line, nil)
		verr := strictjson.Validate(line)
		if verr == nil && !json.Valid(line) {
			t.Fatalf("accepted what encoding/json refuses: %q", line)
		}
		var se *strictjson.SyntaxError
		if perr != nil && perr.Code == CodeParse && !errors.As(verr, &se) {
			t.Fatalf("Parse refused as not JSON but Validate says %v: %q", verr, line)
		}
		dup, depth, widest, ok := reference(line)
		if verr == nil && (dup || !ok) {
			t.Fatalf("accepted a duplicate key or a text the reference refuses: %q", line)
		}
		if ok && !dup && depth <= strictjson.MaxDepth && widest <= strictjson.MaxKeys && utf8.Valid(line) && !bytes.ContainsRune(line, '\\') && verr != nil {
			t.Fatalf("refused valid, duplicate-free JSON: %v: %q", verr, line)
		}
		var de *strictjson.DuplicateKeyError
		if errors.As(verr, &de) && !dup {
			t.Fatalf("a duplicate the reference does not see: %v: %q", verr, line)
		}
		for _, it := range items {
			if it.Err != nil {
				continue
			}
			var again []byte
			switch it.Kind {
			case KindRequest:
				again = AppendNotification(nil, it.Method, it.Params) // the id is ours to choose
			case KindNotification:
				again = AppendNotification(nil, it.Method, it.Params)
			case KindResponse:
				if it.Error != nil {
					again = AppendError(nil, it.ID, it.Error)
				} else {
					again = AppendResult(nil, it.ID, it.Result)
				}
			}
			back, _, err := Parse(again, nil)
			if err != nil || len(back) != 1 || back[0].Err != nil || back[0].Method != it.Method ||
				!bytes.Equal(back[0].Params, it.Params) || !bytes.Equal(back[0].Result, it.Result) {
				t.Fatalf("round trip of %q gave %q: %+v %v", line, again, back, err)
			}
		}
	})
}

// reference reports, with encoding/json's tokenizer, whether text holds a
// duplicate key, how deep it nests and the most keys of one of its objects;
// ok is false when it is not JSON.
func reference(text []byte) (dup bool, depth, widest int, ok bool) {
	if !json.Valid(text) {
		return false, 0, 0, false
	}
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	type frame struct {
		object bool
		keys   map[string]bool
		key    bool // the next string token is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return dup, depth, widest, true
		}
		if err != nil {
			return dup, depth, widest, false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if k, isKey := tok.(string); isKey && top != nil && top.object && top.key {
			if top.keys[k] {
				dup = true
			}
			top.keys[k] = true
			widest = max(widest, len(top.keys))
			top.key = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{object: true, keys: map[string]bool{}, key: true})
			depth = max(depth, len(stack))
			continue
		case json.Delim('['):
			stack = append(stack, &frame{})
			depth = max(depth, len(stack))
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].key = true
		}
	}
}

// wideObject is a request whose params hold n keys.
func wideObject(n int) []byte {
	b := []byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":{`)
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `"k`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `":1`...)
	}
	return append(b, "}}"...)
}
