package daemon_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"time"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/daemon"
	"shinken.dev/go/escouade/guard"
	"shinken.dev/go/escouade/manifest"
	"shinken.dev/go/escouade/plugin"
	"shinken.dev/go/escouade/protocol"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
	"shinken.dev/go/shinken/machine"
	"shinken.dev/go/shinken/mcpserver"
)

// A bespoke sandbox daemon: a headless desktop, the shipped guard as an
// in-process plugin (the programs of a coding agent, each pinned by its
// file's identity, and changes in its workspace only), /healthz and
// /readyz, the token from a file (rotated by renaming a new file over
// it), and a drain at SIGTERM or when ctx ends.
func Example() {
	dir, _ := os.MkdirTemp("", "sandbox")
	defer os.RemoveAll(dir)
	tokenFile := filepath.Join(dir, "token")
	os.WriteFile(tokenFile, []byte("s3cret\n"), 0o600)
	workspace := filepath.Join(dir, "work")
	os.Mkdir(workspace, 0o755)

	g, err := guard.New(&guard.Policy{
		Allow: []string{"ls", "cat", "grep", "find", "git", "python3", "make", "echo", "sed", "head", "tail", "wc", "sort"},
		Write: []string{workspace},
		// Dynamic lines ($VAR, $(…), globs) are refused: the default. The
		// shell is allowed, each line typed at it judged: the runtime types
		// a line only when the shell reads it as a command line, never to
		// a program it started (a pager, an editor).
		OnInteractive: protocol.Allow,
		TypedAtPrompt: true,
	})
	if err != nil {
		panic(err)
	}
	manifest, err := manifest.ParseFunc([]byte(`{"id": "guard", "version": "1.0.0",
		"protocolVersion": 1, "permissions": {"decide": true}}`))
	if err != nil {
		panic(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	d, err := daemon.New(ctx, &daemon.Options{
		Desktop:   daemon.Desktop{Backend: headless.New(nil)},
		Listen:    []string{"127.0.0.1:0"},
		TokenFile: tokenFile,
		Plugins:   &daemon.Plugins{Go: []daemon.GoPlugin{{Manifest: manifest, Handlers: plugin.Handlers{Decide: g.Decide}}}},
		Logger:    slog.New(slog.DiscardHandler),
	})
	if err != nil {
		panic(err)
	}
	done := make(chan error)
	go func() { done <- d.Run(ctx) }()

	// An agent of the sandbox.
	c, err := client.Dial(ctx, d.Endpoints()[0].ACI, &client.DialOptions{Token: "s3cret"})
	if err != nil {
		panic(err)
	}
	for _, tc := range []struct {
		what string
		req  *aci.ExecRequest
	}{
		{"rm -rf the sandbox", &aci.ExecRequest{Argv: []string{"rm", "-rf", dir}}},
		{"a line that hides it", &aci.ExecRequest{Shell: "echo hi; rm -rf " + dir}},
		{"find -delete", &aci.ExecRequest{Shell: "find . -delete", Dir: workspace}},
		{"a dynamic line", &aci.ExecRequest{Shell: "$(echo rm) -rf .", Dir: workspace}},
		{"a write in the workspace", &aci.ExecRequest{Shell: "echo hi > notes.txt && cat notes.txt", Dir: workspace}},
	} {
		res, err := c.Exec(ctx, tc.req)
		if errors.Is(err, aci.ErrPermissionDenied) {
			fmt.Println(tc.what, "refused")
			continue
		} else if err != nil {
			panic(err)
		}
		fmt.Printf("%s printed %q\n", tc.what, res.Stdout)
	}
	// A shell of command lines (machine.ShellOptions.Lines, as the MCP
	// server's with mcpserver.Options.ShellLines): each line judged.
	sh, err := machine.New(c, nil).StartShell(ctx, &machine.ShellOptions{Lines: true, Dir: workspace})
	if err != nil {
		panic(err)
	}
	for _, line := range []struct{ what, line string }{
		{"cat", "cat notes.txt"},
		{"rm", "rm -rf " + dir},
	} {
		res, err := sh.Run(ctx, line.line, &machine.RunOptions{Wait: time.Minute, Quiet: -1})
		if errors.Is(err, aci.ErrPermissionDenied) {
			fmt.Println("shell:", line.what, "refused")
			continue
		} else if err != nil {
			panic(err)
		}
		fmt.Printf("shell: %s printed %q, exit code %d\n", line.what, res.Output, *res.ExitCode)
	}
	sh.Close(ctx)
	c.Close()
	stop()
	fmt.Println("stopped:", <-done)
	// Output:
	// rm -rf the sandbox refused
	// a line that hides it refused
	// find -delete refused
	// a dynamic line refused
	// a write in the workspace printed "hi\n"
	// shell: cat printed "hi\n", exit code 0
	// shell: rm refused
	// stopped: <nil>
}

// A daemon's routes on a server of your own, beside your own handlers:
// with no Listen, the daemon opens no listener.
func ExampleDaemon_Handler() {
	d, err := daemon.New(context.Background(), &daemon.Options{
		Desktop: daemon.Desktop{Backend: headless.New(nil)},
		Token:   "s3cret",
		Logger:  slog.New(slog.DiscardHandler),
	})
	if err != nil {
		panic(err)
	}
	defer d.Close()
	mux := http.NewServeMux()
	mux.Handle("/", d.Handler())
	mux.HandleFunc("/version", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "v1") })
	srv := httptest.NewServer(mux)
	defer srv.Close()

	for _, path := range []string{"/version", daemon.PathHealthz, daemon.PathReadyz} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			panic(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Printf("%s %d %s", path, resp.StatusCode, body)
	}
	// Output:
	// /version 200 v1
	// /healthz 200 {"alive":true}
	// /readyz 200 {"ready":true}
}

// Everything a daemon can serve: MCP, metrics, the page, a recording, and
// a readiness check of the program's own beside the desktop's.
func Example_everything() {
	dir, _ := os.MkdirTemp("", "sandbox")
	defer os.RemoveAll(dir)
	d, err := daemon.New(context.Background(), &daemon.Options{
		Desktop: daemon.Desktop{Backend: headless.New(nil)},
		Listen:  []string{"127.0.0.1:0"},
		Token:   "s3cret",
		MCP:     &mcpserver.Options{Name: "my-sandbox"},
		Metrics: &daemon.MetricsOptions{},
		Page:    true,
		Record:  filepath.Join(dir, "session.rec"),
		Ready: []daemon.Check{{Name: "the workspace", Func: func(ctx context.Context) error {
			if _, err := os.Stat(dir); err != nil {
				return daemon.NotReady("the workspace", "is missing", err)
			}
			return nil
		}}},
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		panic(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- d.Run(ctx) }()

	e := d.Endpoints()[0]
	for _, url := range []string{e.Page, e.Metrics, e.MCP} {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if url != e.MCP { // an MCP client sends it, and speaks MCP
			req.Header.Set("Authorization", "Bearer s3cret")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		resp.Body.Close()
		fmt.Println(strings.TrimPrefix(url, "http://"+req.Host), resp.Status)
	}
	stop()
	fmt.Println("stopped:", <-done)
	_, err = os.Stat(filepath.Join(dir, "session.rec"))
	fmt.Println("recorded:", err == nil)
	// Output:
	// / 200 OK
	// /metrics 200 OK
	// /mcp 401 Unauthorized
	// stopped: <nil>
	// recorded: true
}
