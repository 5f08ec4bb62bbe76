package daemon

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/internal/procfs"
	"shinken.dev/go/shinken/mcpserver"
)

// policyPlugins builds the command plugin of cmd/example's tests into a
// plugins folder: a plugin that runs as a process.
func policyPlugins(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "plugins")
	pdir := filepath.Join(dir, "policy")
	if err := os.MkdirAll(pdir, 0o755); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join("..", "cmd", "example", "testdata", "policy")
	manifest, err := os.ReadFile(filepath.Join(src, "plugin.json"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(pdir, "plugin.json"), manifest, 0o644)
	cmd := exec.Command("go", "build", "-o", filepath.Join(pdir, "policy"), "./"+src)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go build the policy plugin: %v", err)
	}
	return dir
}

// TestStartErrorsLeaveNothing: each way New can fail once things are
// open (a listen that fails, a recording it cannot create, a plugin that
// does not start) closes everything it opened: the plugins' processes,
// the MCP server, the listeners opened before, the desktop, and every
// goroutine.
func TestStartErrorsLeaveNothing(t *testing.T) {
	plugins := policyPlugins(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	for _, tc := range []struct {
		name string
		set  func(*Options)
		want string
	}{
		{"listen", func(o *Options) { o.Listen = append(o.Listen, taken.Addr().String()) }, "listen"},
		{"bad address", func(o *Options) { o.Listen = append(o.Listen, "vsock:seven") }, "vsock:PORT"},
		{"recording", func(o *Options) { o.Record = filepath.Join(t.TempDir(), "no", "such", "dir", "x.rec") }, "Record"},
		{"record rate", func(o *Options) { o.RecordFPS = -1 }, "RecordFPS"},
		{"plugin", func(o *Options) { o.Plugins.Go = []GoPlugin{failingPlugin(t)} }, "broken"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			before, _ := procfs.Descendants(os.Getpid())
			free, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			first := free.Addr().String()
			free.Close()
			closed := false
			tokenFile := filepath.Join(t.TempDir(), "token")
			os.WriteFile(tokenFile, []byte("tok\n"), 0o600)
			opts := &Options{
				Desktop:   Desktop{Backend: headless.New(nil), Close: func() { closed = true }},
				Listen:    []string{first},
				TokenFile: tokenFile,
				MCP:       &mcpserver.Options{},
				Metrics:   &MetricsOptions{},
				Page:      true,
				Plugins:   &Plugins{Dir: plugins},
				Logger:    slog.New(slog.DiscardHandler),
			}
			tc.set(opts)
			d, err := New(context.Background(), opts)
			if err == nil {
				d.Close()
				t.Fatal("New succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not name %q", err, tc.want)
			}
			if !closed {
				t.Error("the desktop was not closed")
			}
			if after, _ := procfs.Descendants(os.Getpid()); len(after) > len(before) {
				var left []string
				for _, pid := range after {
					if !slices.Contains(before, pid) {
						argv, _ := procfs.Cmdline(pid)
						left = append(left, strings.Join(argv, " "))
					}
				}
				if len(left) > 0 {
					t.Errorf("processes left: %q", left)
				}
			}
			l, err := net.Listen("tcp", first)
			if err != nil {
				t.Errorf("the first listener was left open: %v", err)
			} else {
				l.Close()
			}
		})
	}
}

// TestNewRefuses: options the daemon cannot honour fail New with a
// message saying what to change, and close the desktop given.
func TestNewRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
		want string
	}{
		{"no backend", Options{}, "Desktop.Backend"},
		{"on ask", Options{Plugins: &Plugins{OnAsk: "maybe"}}, "OnAsk"},
		{"origin", Options{Origins: []string{"not an origin"}}, "origin"},
		{"go plugin", Options{Plugins: &Plugins{Go: []GoPlugin{{}}}}, "Manifest"},
		{"project", Options{Plugins: unknownProject()}, "Plugins.Project \"web\""},
		{"check", Options{Ready: []Check{{Name: "db"}}}, "Check"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			closed := false
			tc.opts.Desktop.Close = func() { closed = true }
			if tc.name != "no backend" {
				tc.opts.Desktop.Backend = headless.New(nil)
			}
			tc.opts.Logger = slog.New(slog.DiscardHandler)
			_, err := New(context.Background(), &tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one naming %q", err, tc.want)
			}
			if tc.name == "no backend" && !errors.Is(err, ErrNoDesktop) {
				t.Errorf("not ErrNoDesktop: %v", err)
			}
			if !closed {
				t.Error("the desktop was not closed")
			}
		})
	}
}

// TestNoPluginsWarns: a daemon whose agent's commands nothing judges says
// so at start; one with plugins does not.
func TestNoPluginsWarns(t *testing.T) {
	for _, plugins := range []*Plugins{nil, {}} {
		log := newSyncWriter()
		ctx, cancel := context.WithCancel(t.Context())
		d, err := New(ctx, &Options{
			Desktop: Desktop{Backend: headless.New(nil)},
			Listen:  []string{"127.0.0.1:0"},
			Token:   "tok",
			Plugins: plugins,
			Logger:  slog.New(slog.NewTextHandler(log, nil)),
		})
		if err != nil {
			t.Fatal(err)
		}
		cancel()
		d.Close()
		warned := strings.Contains(log.String(), "no plugins: every command the agent sends runs")
		if warned != (plugins == nil) {
			t.Errorf("Plugins %v: warned %v:\n%s", plugins, warned, log.String())
		}
	}
}
