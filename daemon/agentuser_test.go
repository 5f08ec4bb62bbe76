package daemon

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"net/http/httptest"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/internal/agentusertest"
	"shinken.dev/go/internal/schematest"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
)

// boundaryFolder is a folder the agent's user can search but not write,
// as /etc/shinken would be: what it holds is checked for its own modes.
func boundaryFolder(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestAgentUserReach: New refuses to start when the agent's user can
// change the plugins folder, a file in it, or the token file (or create
// it), and warns when it can read the token file; with all of them out of
// reach it starts, and says which user the commands run as.
func TestAgentUserReach(t *testing.T) {
	u := agentusertest.Need(t)
	for _, tc := range []struct {
		name    string
		set     func(t *testing.T, dir string) // makes dir/plugins/p and dir/token
		refused string                         // New's error, or "" for a start
		warned  string
	}{
		{name: "out of reach"},
		{name: "plugins folder owned by the agent", refused: "can change the plugins",
			set: func(t *testing.T, dir string) { os.Chown(filepath.Join(dir, "plugins"), int(u.UID), -1) }},
		{name: "plugin file writable by every user", refused: "can change the plugins",
			set: func(t *testing.T, dir string) { os.Chmod(filepath.Join(dir, "plugins", "p", "plugin.json"), 0o666) }},
		{name: "plugin folder writable by the agent's group", refused: "writable by its group",
			set: func(t *testing.T, dir string) {
				p := filepath.Join(dir, "plugins", "p")
				os.Chown(p, 0, int(u.GID))
				os.Chmod(p, 0o775)
			}},
		{name: "folder above the plugins and the token writable by every user", refused: "is writable by every user (mode 0777)",
			set: func(t *testing.T, dir string) { os.Chmod(dir, 0o777) }},
		{name: "token file writable by every user", refused: "can write the token file",
			set: func(t *testing.T, dir string) { os.Chmod(filepath.Join(dir, "token"), 0o666) }},
		{name: "token file to be created in the agent's folder", refused: "can write the token file",
			set: func(t *testing.T, dir string) {
				os.Remove(filepath.Join(dir, "token"))
				os.Chown(dir, int(u.UID), int(u.GID))
			}},
		{name: "token file readable by every user", warned: "THE AGENT'S USER CAN READ THE TOKEN FILE",
			set: func(t *testing.T, dir string) { os.Chmod(filepath.Join(dir, "token"), 0o644) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := boundaryFolder(t)
			p := filepath.Join(dir, "plugins", "p")
			os.MkdirAll(p, 0o755)
			os.WriteFile(filepath.Join(p, "plugin.json"), []byte(`{}`), 0o644)
			os.WriteFile(filepath.Join(dir, "token"), []byte("t0k3n-reach\n"), 0o600)
			if tc.set != nil {
				tc.set(t, dir)
			}
			var logs bytes.Buffer
			opts := &Options{
				Desktop:   Desktop{Backend: headless.New(nil)},
				TokenFile: filepath.Join(dir, "token"),
				AgentUser: u.Name,
				Logger:    slog.New(slog.NewTextHandler(&logs, nil)),
			}
			// Only the reach check is under test: it runs before the
			// plugins start, so the folder's manifest is never read.
			_, err := newAgentBoundary(opts, nil, opts.Desktop.Backend, opts.Logger)
			if pl := (&Plugins{Dir: filepath.Join(dir, "plugins")}); err == nil {
				opts.Plugins = pl
				_, err = newAgentBoundary(opts, nil, opts.Desktop.Backend, opts.Logger)
			}
			switch {
			case tc.refused == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.refused != "" && (err == nil || !strings.Contains(err.Error(), tc.refused)):
				t.Fatalf("error %v, want one saying %q", err, tc.refused)
			case tc.warned != "" && !strings.Contains(logs.String(), tc.warned):
				t.Errorf("log lacks %q:\n%s", tc.warned, logs.String())
			case tc.refused == "" && !strings.Contains(logs.String(), "the agent's commands run as their own user"):
				t.Errorf("log does not say the commands run as %s:\n%s", u.Name, logs.String())
			}
		})
	}
}

// TestAgentUserOptions: what New refuses of the options, before it opens
// anything.
func TestAgentUserOptions(t *testing.T) {
	u := agentusertest.Need(t)
	for _, tc := range []struct {
		name string
		opts Options
		want string
	}{
		{"require without a user", Options{RequireAgentUser: true}, "RequireAgentUser needs Options.AgentUser"},
		{"no such user", Options{AgentUser: "no-such-user-zq"}, "no-such-user-zq"},
		{"root", Options{AgentUser: "root"}, "is root"},
		{"an executor of the caller's", Options{AgentUser: u.Name, Runtime: &shinken.RuntimeOptions{Executor: (&agentBoundary{}).executor()}}, "set the user there"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.opts
			o.Desktop = Desktop{Backend: headless.New(nil)}
			d, err := New(context.Background(), &o)
			if err == nil {
				d.Close()
				t.Fatalf("New started; want %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New: %v; want %q", err, tc.want)
			}
		})
	}
}

// TestAgentUserExec: through a daemon with AgentUser, the agent's exec
// runs as that user, with its HOME, and without the daemon's token
// variable; /readyz with RequireAgentUser is ready.
func TestAgentUserExec(t *testing.T) {
	u := agentusertest.Need(t)
	t.Setenv(TokenEnv, "t0k3n-env")
	d, err := New(context.Background(), &Options{
		Desktop: Desktop{Backend: headless.New(nil)}, Token: "t", AgentUser: u.Name, RequireAgentUser: true,
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	// New ran the checks once: RequireAgentUser's passes.
	if r := d.ready.reason(); r != "" {
		t.Errorf("not ready: %s", r)
	}
	srv := httptest.NewServer(d.Handler())
	defer srv.Close()
	proxy := schematest.ProxyURL(t, "ws"+strings.TrimPrefix(srv.URL, "http"))
	c, err := client.Dial(context.Background(), proxy+PathACI, &client.DialOptions{Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.Exec(context.Background(), &aci.ExecRequest{Shell: `id -un; echo "$HOME"; env`})
	if err != nil {
		t.Fatal(err)
	}
	out := res.Stdout
	lines := strings.SplitN(out, "\n", 3)
	if len(lines) < 3 || lines[0] != u.Name || lines[1] != u.Home {
		t.Errorf("exec ran as %q with HOME %q; want %s, %s", lines[0], lines[1], u.Name, u.Home)
	}
	if strings.Contains(out, TokenEnv) {
		t.Errorf("the command's environment holds %s:\n%s", TokenEnv, out)
	}
}

// TestRequireAgentUserApps: with RequireAgentUser, /readyz is not ready
// while the desktop starts the agent's applications as the daemon's user
// (Desktop.AppsAsAgent says why), and ready once it starts them as the
// agent's.
func TestRequireAgentUserApps(t *testing.T) {
	u := agentusertest.Need(t)
	var refused atomic.Pointer[error]
	why := errors.New("it may not give the agent's user its files (CAP_CHOWN)")
	refused.Store(&why)
	d, err := New(context.Background(), &Options{
		Desktop: Desktop{Backend: headless.New(nil), AppsAsAgent: func() error {
			if p := refused.Load(); p != nil {
				return *p
			}
			return nil
		}},
		Token: "t", AgentUser: u.Name, RequireAgentUser: true, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if r := d.ready.reason(); !strings.Contains(r, "the agent user does not start the desktop's applications") {
		t.Errorf("ready %q, want not ready naming the applications", r)
	}
	refused.Store(nil)
	d.ready.runChecks(context.Background())
	if r := d.ready.reason(); r != "" {
		t.Errorf("not ready once the applications run as the agent: %s", r)
	}
}
