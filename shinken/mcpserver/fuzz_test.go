package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shinken.dev/go/shinken/mcpserver"
)

// FuzzToolArguments calls every tool with any arguments and checks the
// server answers each call with a result or a tool error carrying an ACI
// code, never a protocol error, and stays up. The runtime's Authorizer
// refuses every exec and launch_app, so no fuzzed command runs; a call
// that waits (wait, hold_key, wait_for) is cancelled after a second.
func FuzzToolArguments(f *testing.F) {
	e := newEnv(f, nil)
	e.denyAll = true
	tools, err := e.sess.ListTools(context.Background(), nil)
	if err != nil {
		f.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	for i, seed := range []string{
		`{}`, `{"coordinate":[10,10]}`, `{"coordinate":[-1,99999]}`, `{"text":"ctrl+a"}`, `{"text":"é€𝄞","repeat":3}`,
		`{"ref":"e3","value":"x"}`, `{"ref":""}`, `{"diff":true}`, `{"name":"x","timeout_ms":1}`,
		`{"argv":["true"]}`, `{"shell":"echo"}`, `{"region":[0,0,10,10]}`, `{"region":[10,10,0,0]}`,
		`{"scroll_direction":"down","scroll_amount":1}`, `{"duration":0.001}`, `{"id":18446744073709551615}`,
		`[]`, `null`, `"x"`, `{"start_coordinate":[1,1],"coordinate":[2,2]}`,
	} {
		f.Add(uint8(i), []byte(seed))
	}
	f.Fuzz(func(t *testing.T, which uint8, args []byte) {
		if !json.Valid(args) {
			return // the client cannot send it
		}
		name := names[int(which)%len(names)]
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		res, err := e.sess.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
		switch {
		case errors.Is(err, context.DeadlineExceeded):
		case err != nil:
			t.Fatalf("%s %s: a protocol error: %v", name, args, err)
		case res.IsError:
			code, _ := res.Meta[mcpserver.ErrorCodeMeta].(string)
			if code == "" || !strings.HasPrefix(text(res), code+": ") {
				t.Fatalf("%s %s: an error without its code: %v %q", name, args, res.Meta, text(res))
			}
		case len(res.Content) == 0:
			t.Fatalf("%s %s: an empty result", name, args)
		}
		if err := e.sess.Ping(context.Background(), nil); err != nil {
			t.Fatalf("%s %s: the server is down: %v", name, args, err)
		}
	})
}
