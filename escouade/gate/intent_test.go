package gate_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/backend/osexec"
	"shinken.dev/go/escouade"
	"shinken.dev/go/escouade/gate"
	"shinken.dev/go/escouade/manifest"
	"shinken.dev/go/escouade/plugin"
	"shinken.dev/go/escouade/plugin/plugintest"
	"shinken.dev/go/escouade/protocol"
	"shinken.dev/go/internal/hosttool"
	"shinken.dev/go/internal/schematest"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
	"shinken.dev/go/shinken/machine"
)

// seen is what a recording guard was shown.
type seen struct {
	mu   sync.Mutex
	reqs []protocol.PermissionRequest
}

func (s *seen) take() []protocol.PermissionRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.reqs
	s.reqs = nil
	return r
}

// toolRig is a headless runtime running exec on this machine behind a gate
// whose one plugin records each request and allows what a strict guard of
// the machine tools would: a read or an edit of a path under root, and no
// command at all.
func toolRig(t *testing.T, root string) (*client.Client, *machine.Tools, *seen) {
	t.Helper()
	ctx := t.Context()
	h := escouade.New(&escouade.Options{Journal: slog.DiscardHandler})
	t.Cleanup(func() { h.Close(context.Background()) })
	m, err := manifest.Parse([]byte(`{"id":"recorder","version":"1.0.0","protocolVersion":1,
		"run":{"command":["recorder"]},"permissions":{"decide":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	rec := &seen{}
	guard := plugin.Handlers{Decide: func(_ context.Context, _ *plugin.Conn, p protocol.DecideParams) (protocol.Decision, error) {
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, p.Request)
		rec.mu.Unlock()
		path, _ := p.Request.Input["path"].(string)
		to, _ := p.Request.Input["to"].(string)
		under := func(s string) bool { return s == root || strings.HasPrefix(s, root+"/") }
		switch {
		case p.Request.Kind == protocol.KindRead && under(path),
			p.Request.Kind == protocol.KindEdit && under(path) && (to == "" || under(to)):
			return protocol.Decision{Verdict: protocol.Allow}, nil
		}
		return protocol.Decision{Verdict: protocol.Deny, Message: "not a file under the root"}, nil
	}}
	if _, err := plugintest.Connect(ctx, h, m, "", guard); err != nil {
		t.Fatal(err)
	}
	url, _ := schematest.ServeURL(t, headless.New(nil), &shinken.RuntimeOptions{Executor: osexec.New(nil), Authorizer: gate.New(h, nil)})
	c := schematest.Dial(t, url, nil)
	return c, machine.New(c, &machine.Options{Home: root}), rec
}

// TestMachineToolsJudgedByWhatTheyDo drives every file tool under a
// strict guard: each works, and the guard is shown one read or edit of
// the absolute path (a relative path resolved), never the script, its
// rm -f, its mktemp or its $1. Outside the root each is refused, and the
// file is left alone.
func TestMachineToolsJudgedByWhatTheyDo(t *testing.T) {
	root := t.TempDir()
	_, c, rec := toolRig(t, root)
	ctx := t.Context()
	abs := func(p string) string { return filepath.Join(root, p) }
	steps := []struct {
		name string
		do   func() error
		kind string
		path string
		to   string
	}{
		{"write", func() error { return c.WriteFile(ctx, "notes.txt", []byte("hello")) }, "edit", abs("notes.txt"), ""},
		{"append", func() error { return c.AppendFile(ctx, "notes.txt", []byte("!")) }, "edit", abs("notes.txt"), ""},
		{"write at", func() error { return c.WriteFileAt(ctx, "~/notes.txt", []byte("J"), 0) }, "edit", abs("notes.txt"), ""},
		{"read", func() error {
			b, err := c.ReadFile(ctx, "notes.txt", nil)
			if err == nil && string(b) != "Jello!" {
				err = errors.New("read " + string(b))
			}
			return err
		}, "read", abs("notes.txt"), ""},
		{"stat", func() error { _, err := c.Stat(ctx, "./notes.txt"); return err }, "read", abs("notes.txt"), ""},
		{"exists", func() error { _, err := c.Exists(ctx, "notes.txt"); return err }, "read", abs("notes.txt"), ""},
		{"list", func() error { _, err := c.ListDirPage(ctx, ".", nil); return err }, "read", root, ""},
		{"mkdir", func() error { return c.MkdirAll(ctx, "a/b") }, "edit", abs("a/b"), ""},
		{"move", func() error { return c.Rename(ctx, "notes.txt", "a/b/-n.txt", nil) }, "edit", abs("notes.txt"), abs("a/b/-n.txt")},
		{"delete", func() error { return c.RemoveAll(ctx, "a") }, "edit", abs("a"), ""},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		reqs := rec.take()
		if len(reqs) != 1 {
			t.Fatalf("%s: the guard was asked %d times: %+v", st.name, len(reqs), reqs)
		}
		r := reqs[0]
		raw, _ := json.Marshal(r)
		if r.Kind != st.kind || r.Input["path"] != st.path || (st.to != "" && r.Input["to"] != st.to) || len(r.Input) != map[bool]int{true: 1, false: 2}[st.to == ""] {
			t.Errorf("%s: the guard saw %s; want %s of %s", st.name, raw, st.kind, st.path)
		}
		for _, plumbing := range []string{"rm -f", "mktemp", "$1", "/bin/sh", hosttool.Arg0, "base64"} {
			if strings.Contains(string(raw), plumbing) {
				t.Errorf("%s: the guard saw the plumbing (%q): %s", st.name, plumbing, raw)
			}
		}
	}
	// Outside the root: refused, and nothing touched.
	outside := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(outside, []byte("keep"), 0o644)
	for name, do := range map[string]func() error{
		"write":  func() error { return c.WriteFile(ctx, outside, []byte("x")) },
		"delete": func() error { return c.Remove(ctx, outside) },
		"escape": func() error {
			return c.WriteFile(ctx, "../"+filepath.Base(filepath.Dir(outside))+"/victim", []byte("x"))
		},
		"move": func() error { return c.Rename(ctx, outside, abs("stolen"), nil) },
		"read": func() error { _, err := c.ReadFile(ctx, outside, nil); return err },
	} {
		if err := do(); !errors.Is(err, aci.ErrPermissionDenied) {
			t.Errorf("%s outside the root: %v, want permission_denied", name, err)
		}
	}
	if got, _ := os.ReadFile(outside); string(got) != "keep" {
		t.Fatalf("the victim reads %q", got)
	}
	rec.take()
	// open is the opener's command line, dynamic (it runs the user's
	// associations): this guard refuses it.
	if err := c.Open(ctx, "https://example.com/"); !errors.Is(err, aci.ErrPermissionDenied) {
		t.Fatalf("open: %v", err)
	}
	r := rec.take()
	if len(r) != 1 {
		t.Fatalf("open: the guard was asked %d times", len(r))
	}
	in, err := r[0].Command()
	if err != nil || r[0].Kind != protocol.KindCommand || !in.Dynamic || strings.Join(in.Argv, " ") != "xdg-open https://example.com/" {
		t.Fatalf("open: the guard saw %+v (%+v, %v)", r[0], in, err)
	}
}

// TestPlumbingByHand sends the file tools' plumbing over plain exec, as an
// agent may: word for word, it gets the tool's judgment; changed by a
// byte, or given env or another $0, it is judged as the command it is
// (and this guard refuses commands); with arguments that do not fit it,
// it is refused as invalid_action before any plugin is asked.
func TestPlumbingByHand(t *testing.T) {
	root := t.TempDir()
	c, _, rec := toolRig(t, root)
	ctx := t.Context()
	victim := filepath.Join(root, "victim")
	os.WriteFile(victim, []byte("keep"), 0o644)
	argv := hosttool.Delete.Argv(victim, "0")
	// Another root's file, by hand: judged as an edit of it, and refused.
	other := filepath.Join(t.TempDir(), "f")
	os.WriteFile(other, nil, 0o644)
	if _, err := c.Exec(ctx, &aci.ExecRequest{Argv: hosttool.Delete.Argv(other, "0")}); !errors.Is(err, aci.ErrPermissionDenied) {
		t.Fatalf("the plumbing by hand outside the root: %v", err)
	}
	if r := rec.take(); len(r) != 1 || r[0].Kind != protocol.KindEdit || r[0].Input["path"] != other {
		t.Fatalf("the guard saw %+v", r)
	}
	for name, req := range map[string]*aci.ExecRequest{
		"env":            {Argv: argv, Env: map[string]string{"X": "1"}},
		"argv[0] sh":     {Argv: append([]string{"sh"}, argv[1:]...)},
		"another $0":     {Argv: append(append([]string{}, argv[:3]...), append([]string{"sh"}, argv[4:]...)...)},
		"a byte changed": {Argv: append(append([]string{}, argv[:2]...), append([]string{argv[2] + "\n"}, argv[3:]...)...)},
	} {
		_, err := c.Exec(ctx, req)
		if !errors.Is(err, aci.ErrPermissionDenied) {
			t.Errorf("%s: %v, want permission_denied", name, err)
		}
		r := rec.take()
		if len(r) != 1 || r[0].Kind != protocol.KindCommand || r[0].Tool != protocol.ToolExec {
			t.Errorf("%s: the guard saw %+v, want the plain exec", name, r)
		}
	}
	for name, args := range map[string][]string{
		"relative":   {"victim", "0"},
		"dot-dot":    {root + "/../" + filepath.Base(root) + "/victim", "0"},
		"extra":      {victim, "0", "x"},
		"a flag":     {victim, "-rf"},
		"empty path": {"", "0"},
	} {
		_, err := c.Exec(ctx, &aci.ExecRequest{Argv: hosttool.Delete.Argv(args...)})
		if !errors.Is(err, aci.ErrInvalidAction) {
			t.Errorf("%s: %v, want invalid_action", name, err)
		}
		if r := rec.take(); len(r) != 0 {
			t.Errorf("%s: the guard was asked %+v", name, r)
		}
	}
	if got, _ := os.ReadFile(victim); string(got) != "keep" {
		t.Fatalf("the victim reads %q", got)
	}
	// Word for word, inside the root: the tool's judgment, and it runs.
	if res, err := c.Exec(ctx, &aci.ExecRequest{Argv: argv}); err != nil || res.ExitCode == nil || *res.ExitCode != 0 {
		t.Fatalf("the plumbing by hand: %+v, %v", res, err)
	}
	if _, err := os.Stat(victim); !os.IsNotExist(err) {
		t.Fatalf("the victim is still there: %v", err)
	}
}
