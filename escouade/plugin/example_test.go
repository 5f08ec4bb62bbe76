package plugin_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"shinken.dev/go/escouade/plugin"
	"shinken.dev/go/escouade/protocol"
)

// A guard, served on a pair of pipes as it would be on a program's stdin
// and stdout: it judges input.command, the whole command line, which every
// form of exec carries (see protocol.CommandInput).
func ExampleServe() {
	ctx := context.Background()
	inR, inW := io.Pipe()   // the Host's lines to the plugin
	outR, outW := io.Pipe() // the plugin's lines to the Host
	done := make(chan error, 1)
	go func() {
		done <- plugin.Serve(ctx, inR, outW, plugin.Handlers{
			Decide: func(_ context.Context, _ *plugin.Conn, p protocol.DecideParams) (protocol.Decision, error) {
				in, err := p.Request.Command()
				if err != nil {
					return protocol.Decision{Verdict: protocol.Ask}, nil
				}
				if strings.HasPrefix(in.Command, "rm ") {
					return protocol.Decision{Verdict: protocol.Deny, Message: "no rm"}, nil
				}
				return protocol.Decision{Verdict: protocol.Allow}, nil
			},
		})
	}()
	lines := bufio.NewReader(outR)
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"escouade":{"version":"1.0.0"},"plugin":{"id":"guard","version":"1.0.0"},"capabilities":{}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"permissions/decide","params":{"request":{"id":"r1","kind":"command","tool":"exec","input":{"command":"rm -rf /","argv":["rm","-rf","/"]}},"project":{"id":"p","name":"P","private":false}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"permissions/decide","params":{"request":{"id":"r2","kind":"command","tool":"exec","input":{"command":"npm test","argv":["/bin/sh","-c","npm test"]}},"project":{"id":"p","name":"P","private":false}}}`,
	} {
		fmt.Fprintln(inW, line)
		answer, _ := lines.ReadString('\n')
		fmt.Print(answer)
	}
	inW.Close()
	fmt.Println(<-done)
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"capabilities":{}}}
	// {"jsonrpc":"2.0","id":2,"result":{"decision":"deny","message":"no rm"}}
	// {"jsonrpc":"2.0","id":3,"result":{"decision":"allow"}}
	// <nil>
}
