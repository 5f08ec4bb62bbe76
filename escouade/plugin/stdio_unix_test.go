//go:build unix

package plugin_test

import (
	"bufio"
	"context"
	"os"
	"strings"
	"syscall"
	"testing"

	"shinken.dev/go/escouade/plugin"
	"shinken.dev/go/escouade/protocol"
)

// Serve over real descriptors as a plugin process gets them: blocking
// pipes, and a socket that is both stdin and stdout (one open file, so
// making stdout non-blocking makes stdin non-blocking too). Every answer
// arrives, and Serve ends when the Host closes its end.
func TestServeOverDescriptors(t *testing.T) {
	t.Run("pipes", func(t *testing.T) {
		inR, inW := blockingPipe(t)
		outR, outW := blockingPipe(t)
		exchange(t, inR, outW, inW, outR)
	})
	t.Run("one socket", func(t *testing.T) {
		fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		if err != nil {
			t.Fatal(err)
		}
		plug := os.NewFile(uintptr(fds[0]), "plugin")
		host := os.NewFile(uintptr(fds[1]), "host")
		exchange(t, plug, plug, host, host)
	})
}

// blockingPipe returns a pipe whose ends are blocking descriptors, as
// exec gives them to a child.
func blockingPipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil {
		t.Fatal(err)
	}
	return os.NewFile(uintptr(p[0]), "r"), os.NewFile(uintptr(p[1]), "w")
}

func exchange(t *testing.T, in, out, toPlugin, fromPlugin *os.File) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		done <- plugin.Serve(context.Background(), in, out, plugin.Handlers{
			Decide: func(ctx context.Context, c *plugin.Conn, p protocol.DecideParams) (protocol.Decision, error) {
				return protocol.Decision{Verdict: protocol.Allow, Message: p.Request.ID}, nil
			},
		})
	}()
	answers := bufio.NewReader(fromPlugin)
	send := func(line string) {
		if _, err := toPlugin.WriteString(line + "\n"); err != nil {
			t.Fatal(err)
		}
	}
	read := func() string {
		l, err := answers.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSuffix(l, "\n")
	}
	send(initialize)
	if got := read(); !strings.Contains(got, `"protocolVersion":1`) {
		t.Fatalf("initialize: %s", got)
	}
	for i := range 200 {
		id := strings.Repeat("x", i%7) + string(rune('a'+i%26))
		send(`{"jsonrpc":"2.0","id":` + itoa(i+2) + `,"method":"permissions/decide","params":{"request":{"id":"` + id + `","kind":"command"},"project":{"id":"p","name":"P","private":false}}}`)
		want := `{"jsonrpc":"2.0","id":` + itoa(i+2) + `,"result":{"decision":"allow","message":"` + id + `"}}`
		if got := read(); got != want {
			t.Fatalf("got %s, want %s", got, want)
		}
	}
	// The Host goes away: a socket is shut down for writing, a pipe closed.
	if toPlugin == fromPlugin {
		syscall.Shutdown(int(toPlugin.Fd()), syscall.SHUT_WR)
	} else {
		toPlugin.Close()
	}
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}
	for _, f := range []*os.File{in, out, toPlugin, fromPlugin} {
		f.Close()
	}
}

func itoa(n int) string {
	b := []byte{}
	for {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
		if n == 0 {
			return string(b)
		}
	}
}
