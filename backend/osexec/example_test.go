//go:build linux

package osexec_test

import (
	"context"
	"fmt"
	"io"
	"time"

	"shinken.dev/go/backend/osexec"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// The buffered form: run a command to completion, keep a budget of each
// channel, and read the result as text.
func Example() {
	e := osexec.New(nil)
	p, err := e.Start(context.Background(), aci.ExecRequest{
		Shell:   `printf 'hello %s\n' "$WHO"; echo warning >&2; exit 2`,
		Env:     map[string]string{"WHO": "agent"},
		Timeout: 10 * time.Second,
	})
	if err != nil {
		fmt.Println(aci.WireError(err))
		return
	}
	out, err := shinken.Collect(p, 1<<20)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("stdout %q\n", shinken.OutputText(out.Stdout, out.StdoutTruncated))
	fmt.Printf("stderr %q\n", shinken.OutputText(out.Stderr, out.StderrTruncated))
	fmt.Println("exit code", out.Status.Code)
	// Output:
	// stdout "hello agent\n"
	// stderr "warning\n"
	// exit code 2
}

// The streamed form: chunks arrive as they are read, and the child waits
// while the caller is busy with one.
func ExampleProcess_Next() {
	e := osexec.New(&osexec.Options{ChunkSize: 4})
	p, err := e.Start(context.Background(), aci.ExecRequest{Argv: []string{"printf", "0123456789"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for {
		c, err := p.Next()
		if err == io.EOF {
			break
		}
		fmt.Printf("%d %q\n", c.Channel, c.Data)
	}
	st, _ := p.Wait()
	fmt.Println("exited", st.Exited, "code", st.Code)
	// Output:
	// 0 "0123"
	// 0 "4567"
	// 0 "89"
	// exited true code 0
}

// A deadline kills the whole process group, and says so.
func ExampleExecutor_Start_timeout() {
	e := osexec.New(nil)
	p, err := e.Start(context.Background(), aci.ExecRequest{
		Shell:   "sleep 60 & sleep 60",
		Timeout: 50 * time.Millisecond,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	st, _ := p.Wait()
	fmt.Println("timed out", st.TimedOut, "signal", st.Signal, "exited", st.Exited)
	// Output:
	// timed out true signal 9 exited false
}

// A program that cannot be started is an exec_spawn_failed error.
func ExampleExecutor_Start_spawnFailed() {
	e := osexec.New(nil)
	_, err := e.Start(context.Background(), aci.ExecRequest{Argv: []string{"/no/such/program"}})
	fmt.Println(aci.WireError(err))
	// Output:
	// exec_spawn_failed: /no/such/program: no such file or directory
}
