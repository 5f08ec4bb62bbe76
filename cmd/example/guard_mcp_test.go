package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shinken.dev/go/escouade/gate/gatetest"
	"shinken.dev/go/internal/citest"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/mcpserver"
)

// hostilePerClass is how many lines of each class (a file of the gate's
// hostile corpus) TestMCPGuard sends through each tool: the first ones,
// which are each class's plainest forms.
const hostilePerClass = 3

// mcpTools is a Go SDK client's session on a daemon's /mcp.
type mcpTools struct {
	t    *testing.T
	ctx  context.Context
	sess *mcp.ClientSession
}

// call calls a tool and answers its structured result, or the ACI code of
// its failure ("" when it succeeded). A protocol error fails the test.
func (m mcpTools) call(name string, args map[string]any) (map[string]any, aci.Code) {
	m.t.Helper()
	res, err := m.sess.CallTool(m.ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		m.t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		code, _ := res.Meta[mcpserver.ErrorCodeMeta].(string)
		if code == "" {
			m.t.Fatalf("%s failed with no code: %+v", name, res.Content)
		}
		return nil, aci.Code(code)
	}
	var out map[string]any
	b, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(b, &out)
	return out, ""
}

// ok calls a tool that must succeed.
func (m mcpTools) ok(name string, args map[string]any) map[string]any {
	m.t.Helper()
	out, code := m.call(name, args)
	if code != "" {
		m.t.Fatalf("%s %v: %s", name, args, code)
	}
	return out
}

// refused calls a tool that the guard must refuse.
func (m mcpTools) refused(name string, args map[string]any) {
	m.t.Helper()
	if out, code := m.call(name, args); code != aci.CodePermissionDenied {
		m.t.Errorf("%s %v: %v %q, want permission_denied", name, args, out, code)
	}
}

// waitCommand polls command_output until the background command id has
// ended, and answers its exit code. Its state is the signal (an agent has
// no other over MCP); the test's context alone bounds a hang.
func (m mcpTools) waitCommand(id string) int {
	m.t.Helper()
	for {
		out := m.ok("command_output", map[string]any{"id": id})
		if code, ok := out["exit_code"].(float64); ok {
			return int(code)
		}
		if out["running"] != true {
			return -1 // killed or lost: ended all the same
		}
		select {
		case <-m.ctx.Done():
			m.t.Fatalf("the background command %s did not end: %v", id, m.ctx.Err())
		case <-time.After(20 * time.Millisecond): // polling the command's state, as an agent does
		}
	}
}

// shellCase runs a hostile case through the shell tool: a line that goes
// to the case's folder and runs it, its stdin as a here-document.
func (m mcpTools) shellCase(_ context.Context, r aci.ExecRequest) (int, error) {
	line := "cd " + shellQuote(r.Dir) + " && " + withEnv(r)
	if r.Stdin != nil {
		line += " <<'EOF'\n" + *r.Stdin + "\nEOF"
	}
	out, code := m.call("shell", map[string]any{"input": line, "wait_ms": 60000})
	if code != "" {
		return 0, aci.Errorf(code, "shell")
	}
	c, _ := out["exit_code"].(float64)
	return int(c), nil
}

// shellRuns types line at the shell tool and answers its output; the line
// must run to its end with exit code want.
func (m mcpTools) shellRuns(line string, want int) string {
	m.t.Helper()
	res, err := m.sess.CallTool(m.ctx, &mcp.CallToolParams{Name: "shell", Arguments: map[string]any{"input": line, "wait_ms": 120000}})
	if err != nil || res.IsError {
		m.t.Fatalf("shell %q: %v %+v", line, err, res)
	}
	var out strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			out.WriteString(tc.Text)
		}
	}
	if code, _ := res.StructuredContent.(map[string]any)["exit_code"].(float64); res.StructuredContent == nil || int(code) != want || !strings.Contains(out.String(), "[exit code") {
		m.t.Fatalf("shell %q: %q, want it ended with exit code %d", line, out.String(), want)
	}
	return out.String()
}

// shellRefusedWhile starts line at the shell tool, a program that keeps
// the terminal, and checks that typed input is refused while it runs
// (naming it), never reaching it, and that an interrupt ends it.
func (m mcpTools) shellRefusedWhile(line, program string) {
	m.t.Helper()
	if out, code := m.call("shell", map[string]any{"input": line, "wait_ms": 50}); code != "" || out["running"] != true {
		m.t.Fatalf("%s: %v %s, want it running", line, out, code)
	}
	// The shell hands the terminal to the program a moment after it read
	// the line: until then input is refused as not at the prompt, then as
	// the program's. The refusal naming the program is the signal.
	for {
		res, err := m.sess.CallTool(m.ctx, &mcp.CallToolParams{Name: "shell", Arguments: map[string]any{"input": "echo reached-" + program}})
		if err != nil {
			m.t.Fatal(err)
		}
		text := ""
		if len(res.Content) > 0 {
			text = res.Content[0].(*mcp.TextContent).Text
		}
		if code, _ := res.Meta[mcpserver.ErrorCodeMeta].(string); !res.IsError || aci.Code(code) != aci.CodeInvalidAction {
			m.t.Fatalf("input while %s runs: %q, want it refused", line, text)
		}
		if strings.Contains(text, program+" runs in the shell's foreground") && strings.Contains(text, "command_start") {
			break
		}
		if !strings.Contains(text, "not at its prompt") && !strings.Contains(text, "a program the shell started runs") {
			m.t.Fatalf("input while %s runs: %q", line, text)
		}
	}
	var out strings.Builder
	for !strings.Contains(out.String(), "[exit code") {
		res, err := m.sess.CallTool(m.ctx, &mcp.CallToolParams{Name: "shell", Arguments: map[string]any{"interrupt": true, "wait_ms": 120000}})
		if err != nil || res.IsError {
			m.t.Fatalf("interrupt: %v %+v", err, res)
		}
		out.WriteString(res.Content[0].(*mcp.TextContent).Text)
	}
	if strings.Contains(out.String(), "reached-") {
		m.t.Fatalf("a refused input reached %s: %q", program, out.String())
	}
}

// hostileSample reads the gate's hostile corpus and keeps the first
// hostilePerClass cases of each class.
func hostileSample(t *testing.T) []gatetest.Case {
	t.Helper()
	all, err := gatetest.Read(filepath.Join("..", "..", "escouade", "gate", "testdata", "hostile"))
	if err != nil {
		t.Fatal(err)
	}
	var sample []gatetest.Case
	per := map[string]int{}
	for _, c := range all {
		class, _, _ := strings.Cut(c.Name, ":")
		if per[class] < hostilePerClass {
			per[class]++
			sample = append(sample, c)
		}
	}
	if len(per) < 9 {
		t.Fatalf("the corpus has %d classes, want the nine of the issue: %v", len(per), per)
	}
	return sample
}

// TestMCPGuard drives the built daemon, guarded as by default (-write
// names the agent's folder, nothing else is set), over /mcp with the Go
// SDK's client, as an agent would:
//   - the first lines of each class of the gate's hostile corpus, each in a
//     folder of its own holding a victim file, through exec (argv, line,
//     env, stdin), command_start (and command_input to an allowed command)
//     and shell: each is refused, and every victim is whole on disk after;
//   - write_file, move and delete of a protected file of the folder, of a
//     file outside it and through a link out of it: refused, and the
//     files are as they were;
//   - the allowlisted commands and the file tools within the folder work.
func TestMCPGuard(t *testing.T) {
	citest.NeedPrograms(t, agentPrograms...)
	bin := build(t, t.TempDir(), ".", "example")
	work, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	outside, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	d := start(t, bin, "-write", work)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sess, err := mcp.NewClient(&mcp.Implementation{Name: "go-test", Version: "0"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: mcpURL(d.aci), HTTPClient: &http.Client{Transport: bearerTransport{"tok"}}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()

	t.Run("hostile", func(t *testing.T) {
		m := mcpTools{t: t, ctx: ctx, sess: sess}
		tools := map[string]gatetest.Exec{
			"exec": func(ctx context.Context, r aci.ExecRequest) (int, error) {
				args := map[string]any{"cwd": r.Dir}
				if r.Shell != "" {
					args["shell"] = r.Shell
				} else {
					args["argv"] = r.Argv
				}
				if r.Env != nil {
					args["env"] = r.Env
				}
				if r.Stdin != nil {
					args["stdin"] = *r.Stdin
				}
				out, code := m.call("exec", args)
				if code != "" {
					return 0, aci.Errorf(code, "exec")
				}
				c, _ := out["exit_code"].(float64)
				return int(c), nil
			},
			// command_start takes no env nor stdin: a case with stdin
			// starts its program and writes the stdin to it (judged as a
			// line), one with env sets it before the line.
			"command_start": func(ctx context.Context, r aci.ExecRequest) (int, error) {
				args := map[string]any{"cwd": r.Dir}
				if r.Shell != "" || r.Env != nil {
					args["line"] = withEnv(r)
				} else {
					args["argv"] = r.Argv
				}
				out, code := m.call("command_start", args)
				if code != "" {
					return 0, aci.Errorf(code, "command_start")
				}
				id, _ := out["id"].(string)
				if r.Stdin != nil {
					if _, code := m.call("command_input", map[string]any{"id": id, "input": *r.Stdin, "eof": true}); code != "" {
						m.call("command_kill", map[string]any{"id": id})
						return 0, aci.Errorf(code, "command_input")
					}
				}
				return m.waitCommand(id), nil
			},
			"shell": m.shellCase,
		}
		for _, c := range hostileSample(t) {
			for _, tool := range []string{"exec", "command_start", "shell"} {
				o := gatetest.Run(t, c, nil, tools[tool])
				refusal := aci.CodePermissionDenied
				if tool == "shell" && (c.Action.Stdin != nil || c.Action.Shell != nil && strings.Contains(*c.Action.Shell, "\n")) {
					refusal = aci.CodeInvalidAction // the shell takes one line per input: more (a here-document) is refused before any judgment
				}
				if !gatetest.Intact(o.Dir) {
					t.Errorf("%s through %s: the victim is gone (ran: %v, code %d, err %v)", c.Name, tool, o.Ran, o.Code, o.Err)
				} else if o.Ran || aci.CodeOf(o.Err) != refusal {
					// A hostile line the guard let run, harmlessly here:
					// still not what the default promises.
					t.Errorf("%s through %s: not refused (ran: %v, code %d, err %v)", c.Name, tool, o.Ran, o.Code, o.Err)
				}
			}
		}
	})

	// The shell's hostile lines without the guard (and with it, bash, typed
	// as is): many delete their victim, so the refusals above are of lines
	// with teeth.
	t.Run("hostile shell without the guard", func(t *testing.T) {
		free := start(t, bin, "-no-guard")
		fs, err := mcp.NewClient(&mcp.Implementation{Name: "go-test", Version: "0"}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: mcpURL(free.aci), HTTPClient: &http.Client{Transport: bearerTransport{"tok"}}, MaxRetries: -1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		m := mcpTools{t: t, ctx: ctx, sess: fs}
		var deleted []string
		sample := hostileSample(t)
		for _, c := range sample {
			if o := gatetest.Run(t, c, nil, m.shellCase); !gatetest.Intact(o.Dir) {
				deleted = append(deleted, c.Name)
			}
		}
		fs.Close()
		free.stop(t)
		t.Logf("without the guard, %d of %d shell lines deleted their victim: %v", len(deleted), len(sample), deleted)
		if len(deleted) < len(sample)/2 {
			t.Errorf("without the guard, only %d of %d shell lines deleted their victim: %v", len(deleted), len(sample), deleted)
		}
	})

	// The agent's folder: a repository with the files programs run, and a
	// link out of it; a victim outside it.
	for _, args := range [][]string{
		{"init", "-q", work},
		{"-C", work, "config", "user.email", "agent@example.com"},
		{"-C", work, "config", "user.name", "agent"},
		{"-C", work, "commit", "-q", "--allow-empty", "-m", "the first commit"},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	files := map[string]string{
		filepath.Join(work, ".bashrc"):   "# the agent's shell start-up\n",
		filepath.Join(work, "Makefile"):  "all:\n\techo built\n",
		filepath.Join(work, "ok.txt"):    "ok\n",
		filepath.Join(outside, "victim"): gatetest.VictimText,
	}
	for f, text := range files {
		if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hooks := filepath.Join(work, ".git", "hooks")
	victim := filepath.Join(outside, "victim")
	link := filepath.Join(work, "link")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	hostileText := "rm -f " + victim + "\n"

	t.Run("files", func(t *testing.T) {
		m := mcpTools{t: t, ctx: ctx, sess: sess}
		for _, f := range []string{filepath.Join(work, ".bashrc"), filepath.Join(work, "Makefile"), filepath.Join(hooks, "pre-commit"), victim, link} {
			m.refused("write_file", map[string]any{"path": f, "text": hostileText})
			m.refused("write_file", map[string]any{"path": f, "text": hostileText, "append": true})
			m.refused("delete", map[string]any{"path": f})
		}
		for _, mv := range [][2]string{
			{filepath.Join(work, "ok.txt"), filepath.Join(work, ".bashrc")}, // over a protected file
			{filepath.Join(work, "ok.txt"), filepath.Join(hooks, "post-checkout")},
			{filepath.Join(work, "ok.txt"), filepath.Join(outside, "moved")}, // out of the folder
			{victim, filepath.Join(work, "stolen")},                          // into it
			{link, filepath.Join(work, "stolen")},
			{filepath.Join(work, "Makefile"), filepath.Join(work, "Makefile.old")},
		} {
			m.refused("move", map[string]any{"from": mv[0], "to": mv[1], "overwrite": true})
		}
		m.refused("delete", map[string]any{"path": filepath.Join(work, ".git"), "recursive": true})
		m.refused("delete", map[string]any{"path": work, "recursive": true})
		m.refused("mkdir", map[string]any{"path": filepath.Join(outside, "new")})
		m.refused("read_file", map[string]any{"path": victim})
		m.refused("list_files", map[string]any{"path": outside})
		for f, text := range files {
			if b, err := os.ReadFile(f); err != nil || string(b) != text {
				t.Errorf("%s: %q %v, want %q as it was", f, b, err, text)
			}
		}
		for _, f := range []string{filepath.Join(hooks, "pre-commit"), filepath.Join(hooks, "post-checkout"),
			filepath.Join(outside, "moved"), filepath.Join(outside, "new"), filepath.Join(work, "stolen"), filepath.Join(work, "Makefile.old")} {
			if _, err := os.Lstat(f); err == nil {
				t.Errorf("%s was made", f)
			}
		}
		if target, err := os.Readlink(link); err != nil || target != victim {
			t.Errorf("the link: %q %v", target, err)
		}
	})

	t.Run("allowed", func(t *testing.T) {
		m := mcpTools{t: t, ctx: ctx, sess: sess}
		notes := filepath.Join(work, "notes.txt")
		m.ok("write_file", map[string]any{"path": notes, "text": "b\n"})
		m.ok("write_file", map[string]any{"path": notes, "text": "a\n", "append": true})
		if got := m.ok("read_file", map[string]any{"path": notes, "base64": true}); got["base64"] != base64.StdEncoding.EncodeToString([]byte("b\na\n")) {
			t.Errorf("read_file: %v", got)
		}
		m.ok("mkdir", map[string]any{"path": filepath.Join(work, "src")})
		moved := filepath.Join(work, "src", "notes.txt")
		m.ok("move", map[string]any{"from": notes, "to": moved})
		listed := m.ok("list_files", map[string]any{"path": filepath.Join(work, "src")})
		if b, _ := json.Marshal(listed["entries"]); !strings.Contains(string(b), `"notes.txt"`) {
			t.Errorf("list_files: %s", b)
		}
		if b, err := os.ReadFile(moved); err != nil || string(b) != "b\na\n" {
			t.Errorf("on disk: %q %v", b, err)
		}
		sorted := filepath.Join(work, "sorted.txt")
		for _, args := range []map[string]any{
			{"argv": []string{"ls", work}},
			{"argv": []string{"git", "status", "--short"}, "cwd": work},
			{"shell": "sort " + moved + " > " + sorted + " && wc -l " + sorted},
			{"shell": "grep -c a " + moved + " | head -n 1", "env": map[string]string{"LC_ALL": "C"}},
			{"argv": []string{"sed", "-n", "1p", moved}},
			{"argv": []string{"find", work, "-name", "*.txt"}},
		} {
			out := m.ok("exec", args)
			if out["exit_code"] != float64(0) {
				t.Errorf("exec %v: %v", args, out)
			}
		}
		if b, err := os.ReadFile(sorted); err != nil || string(b) != "a\nb\n" {
			t.Errorf("the redirection wrote %q %v", b, err)
		}
		started := m.ok("command_start", map[string]any{"argv": []string{"sort"}, "cwd": work})
		id, _ := started["id"].(string)
		m.ok("command_input", map[string]any{"id": id, "input": "echo\n", "eof": true})
		if code := m.waitCommand(id); code != 0 {
			t.Errorf("the background sort exited %d", code)
		}
		// Input sent at once reaches it whole (it was once dropped when
		// it came before the command's input was open).
		if out := m.ok("command_output", map[string]any{"id": id}); out["total"] != float64(len("echo\n")) {
			t.Errorf("the background sort printed %v bytes, want its input back", out["total"])
		}
		m.ok("delete", map[string]any{"path": moved})
		if _, err := os.Lstat(moved); err == nil {
			t.Error("delete left the file")
		}
		// The shell: an sh whose lines are each judged, typed only when it
		// reads them as command lines, its pagers and editors off.
		if out := m.shellRuns("cd "+work+" && ls", 0); !strings.Contains(out, "ok.txt") {
			t.Errorf("ls: %q", out)
		}
		if out := m.shellRuns("echo hello", 0); !strings.HasPrefix(out, "hello\n") {
			t.Errorf("echo: %q", out)
		}
		if out := m.shellRuns("cat ok.txt", 0); !strings.HasPrefix(out, "ok\n") {
			t.Errorf("cat: %q", out)
		}
		if out := m.shellRuns("git log", 0); !strings.Contains(out, "the first commit") {
			t.Errorf("git log: %q", out)
		}
		if out := m.shellRuns("git commit --allow-empty", 1); !strings.Contains(out, "editor") {
			t.Errorf("git commit without -m: %q, want the editor's failure", out)
		}
		if out := m.shellRuns("git log --oneline | wc -l", 0); !strings.HasPrefix(out, "1\n") {
			t.Errorf("after git commit without -m: %q, want no new commit", out)
		}
		// Each line is judged in the shell's working folder, where the
		// line before moved it: a relative write lands in the agent's
		// folder, a protected file there is refused by its relative name,
		// and a hook the operator left in the repository makes git
		// commit dynamic (judged in the daemon's folder, it would run).
		if out := m.shellRuns("echo made > made.txt && cat made.txt", 0); !strings.HasPrefix(out, "made\n") {
			t.Errorf("a relative write: %q", out)
		}
		if b, err := os.ReadFile(filepath.Join(work, "made.txt")); err != nil || string(b) != "made\n" {
			t.Errorf("made.txt: %q %v", b, err)
		}
		m.refused("shell", map[string]any{"input": "echo rm -f " + victim + " > .bashrc"})
		hook := filepath.Join(hooks, "pre-commit")
		if err := os.WriteFile(hook, []byte("#!/bin/sh\nrm -f "+victim+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		m.refused("shell", map[string]any{"input": "git commit -q --allow-empty -m typed"})
		if err := os.Remove(hook); err != nil {
			t.Fatal(err)
		}
		m.shellRefusedWhile("cat", "cat")
		m.shellRefusedWhile("tail -f ok.txt", "tail -f ok.txt")
		m.refused("shell", map[string]any{"input": "rm -f " + victim})
		m.refused("shell", map[string]any{"input": "echo rm -f " + victim + " > " + filepath.Join(work, ".bashrc")})
		if out := m.shellRuns("echo still", 0); !strings.HasPrefix(out, "still\n") {
			t.Errorf("after the refusals: %q", out)
		}
		if b, err := os.ReadFile(victim); err != nil || string(b) != gatetest.VictimText {
			t.Errorf("the victim: %q %v", b, err)
		}
		m.ok("shell", map[string]any{"close": true})
	})
	sess.Close()
	d.stop(t)
}

// withEnv is r's line, or its argv quoted, after its env's assignments.
func withEnv(r aci.ExecRequest) string {
	var words []string
	keys := make([]string, 0, len(r.Env))
	for k := range r.Env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		words = append(words, k+"="+shellQuote(r.Env[k]))
	}
	if r.Shell != "" {
		return strings.Join(append(words, r.Shell), " ")
	}
	for _, w := range r.Argv {
		words = append(words, shellQuote(w))
	}
	return strings.Join(words, " ")
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
