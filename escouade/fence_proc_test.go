package escouade_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"shinken.dev/go/escouade"
	"shinken.dev/go/escouade/protocol"
	"shinken.dev/go/internal/procfs"
)

const procCommands = `,"permissions":{"commands":["echo hello *","echo exact","cat","env","pwd","seq 1 500000","sleep *","sh -c *","nosuchprogram"],"env":["FOO","KEEP"]}`

// procHost returns a Host with an agent whose environment and folders the
// programs get, and a private project.
func procHost(t *testing.T) (*escouade.Host, *journal, string, string) {
	t.Helper()
	base, _ := filepath.EvalSymlinks(t.TempDir())
	work, priv := filepath.Join(base, "work"), filepath.Join(base, "priv")
	os.Mkdir(work, 0o755)
	os.Mkdir(priv, 0o755)
	h, j := hookedHost(t, nil, nil, &escouade.Options{
		TempDir: base,
		Agents: escouade.AgentMap{
			"k1": {Agent: protocol.Agent{ID: "a1", Name: "Ada"}, Roots: escouade.AgentRoots{Agent: work}, Project: "pub",
				Env: []string{"PATH=/usr/bin:/bin", "HOME=" + base, "ESCOUADE_TOKEN=hush", "KEEP=1"}},
			"k2": {Agent: protocol.Agent{ID: "a2", Name: "Bob"}, Roots: escouade.AgentRoots{Agent: priv}, Project: "priv"},
		},
		Projects: escouade.ProjectMap{
			"pub":  {Project: protocol.Project{ID: "pub", Name: "Pub"}, Root: base},
			"priv": {Project: protocol.Project{ID: "priv", Name: "Priv", Private: true}, Root: priv},
		},
	})
	return h, j, work, base
}

// run spawns a program and returns all it wrote on stdout, and its code.
func (lp *linePlugin) run(t testing.TB, params map[string]any) (string, any) {
	t.Helper()
	var r struct{ Proc int64 }
	if err := lp.call("proc/spawn", params, &r); err != nil {
		t.Fatalf("spawn %v: %v", params, err)
	}
	return lp.output(t, r.Proc)
}

// output gathers what program id writes on stdout until it ends.
func (lp *linePlugin) output(t testing.TB, id int64) (string, any) {
	t.Helper()
	var out strings.Builder
	for {
		n := lp.next(t, "", func(n note) bool {
			return (n.method == "proc/out" || n.method == "proc/exit") && num(n.params["proc"]) == id
		})
		if n.method == "proc/exit" {
			return out.String(), n.params["code"]
		}
		if n.params["stream"] == "stdout" {
			out.WriteString(n.params["data"].(string))
		}
	}
}

// TestProcFences drives proc/spawn through its fences: matching word for
// word, names never paths, the environment's rules, the folders, four at
// once, input past 1 MiB.
func TestProcFences(t *testing.T) {
	h, j, work, base := procHost(t)
	v := newValidator(t)
	lp := startLinePlugin(t, h, v, "procs", procCommands, "")
	for _, k := range []string{"k1", "k2"} {
		if err := lp.p.Attach(context.Background(), k); err != nil {
			t.Fatal(err)
		}
	}
	type params = map[string]any
	for _, c := range []struct {
		name string
		p    params
		code protocol.Code
	}{
		{"a command not in the list", params{"command": "ls"}, protocol.CodeRefused},
		{"an extra word without *", params{"command": "echo", "args": []string{"exact", "more"}}, protocol.CodeRefused},
		{"a word that differs", params{"command": "echo", "args": []string{"hello!"}}, protocol.CodeRefused},
		{"an argument that holds a space", params{"command": "echo", "args": []string{"exact more"}}, protocol.CodeRefused},
		{"a path instead of a name", params{"command": "/bin/echo", "args": []string{"exact"}}, protocol.CodeRefused},
		{"a relative path", params{"command": "./echo", "args": []string{"exact"}}, protocol.CodeRefused},
		{"PATH", params{"command": "env", "env": params{"PATH": "/tmp"}}, protocol.CodeRefused},
		{"LD_PRELOAD", params{"command": "env", "env": params{"LD_PRELOAD": "/tmp/x.so"}}, protocol.CodeRefused},
		{"DYLD_INSERT_LIBRARIES", params{"command": "env", "env": params{"DYLD_INSERT_LIBRARIES": "x"}}, protocol.CodeRefused},
		{"ESCOUADE_*", params{"command": "env", "env": params{"ESCOUADE_TOKEN": "x"}}, protocol.CodeRefused},
		{"path, in lower case", params{"command": "env", "env": params{"path": "/tmp"}}, protocol.CodeRefused},
		{"a variable that is no name", params{"command": "env", "env": params{"A=B": "x"}}, protocol.CodeInvalidParams},
		{"dir agent without an agent", params{"command": "pwd", "dir": "agent"}, protocol.CodeInvalidParams},
		{"dir agent of a private project", params{"command": "pwd", "dir": "agent", "agent": "k2"}, protocol.CodeRefused},
		{"dir project, private", params{"command": "pwd", "dir": "project", "project": "priv"}, protocol.CodeRefused},
		{"dir as a path", params{"command": "pwd", "dir": "/tmp"}, protocol.CodeInvalidParams},
		{"an agent not attached", params{"command": "pwd", "agent": "k9"}, protocol.CodeRefused},
		{"not on the PATH", params{"command": "nosuchprogram", "agent": "k1"}, protocol.CodeFailed},
	} {
		wantCode(t, c.name, lp.call("proc/spawn", c.p, nil), c.code)
	}

	if out, code := lp.run(t, params{"command": "echo", "args": []string{"exact"}}); out != "exact\n" || code != 0.0 {
		t.Errorf("echo exact: %q %v", out, code)
	}
	if out, code := lp.run(t, params{"command": "echo", "args": []string{"hello", "a", "b c"}}); out != "hello a b c\n" || code != 0.0 {
		t.Errorf("echo hello *: %q %v", out, code)
	}
	if out, _ := lp.run(t, params{"command": "echo", "args": []string{"hello"}}); out != "hello\n" {
		t.Errorf("echo hello, nothing for *: %q", out)
	}
	env, _ := lp.run(t, params{"command": "env", "agent": "k1", "env": params{"FOO": "bar", "KEEP": "2"}})
	vars := strings.Split(strings.TrimSpace(env), "\n")
	for _, want := range []string{"FOO=bar", "KEEP=2", "PATH=/usr/bin:/bin"} {
		if !containsLine(vars, want) {
			t.Errorf("env lacks %s: %q", want, env)
		}
	}
	if strings.Contains(env, "ESCOUADE_") || strings.Contains(env, "KEEP=1") {
		t.Errorf("env holds what it should not: %q", env)
	}
	if out, _ := lp.run(t, params{"command": "pwd", "dir": "agent", "agent": "k1"}); out != work+"\n" {
		t.Errorf("pwd in the agent's folder: %q", out)
	}
	if out, _ := lp.run(t, params{"command": "pwd", "dir": "project", "agent": "k1"}); out != base+"\n" {
		t.Errorf("pwd in the agent's project: %q", out)
	}
	if out, _ := lp.run(t, params{"command": "pwd"}); !strings.HasPrefix(out, filepath.Join(base, "escouade-procs-")) {
		t.Errorf("pwd in the temporary folder: %q", out)
	}
	if _, code := lp.run(t, params{"command": "sh", "args": []string{"-c", "exit 3"}}); code != 3.0 {
		t.Errorf("exit 3: %v", code)
	}
	if es := j.find("procs", "proc/spawn"); len(es) < 8 || es[0].attrs["command"] != "echo" {
		t.Errorf("the starts were not journaled: %v", es)
	}

	// A character cut between two writes of the program waits for its end.
	var out strings.Builder
	var r struct{ Proc int64 }
	if err := lp.call("proc/spawn", params{"command": "sh", "args": []string{"-c", `printf '\303'; sleep 0.2; printf '\251'`}}, &r); err != nil {
		t.Fatal(err)
	}
	for {
		n := lp.next(t, "", func(n note) bool { return num(n.params["proc"]) == r.Proc })
		if n.method == "proc/exit" {
			break
		}
		d := n.params["data"].(string)
		if strings.ContainsRune(d, '\uFFFD') {
			t.Errorf("a piece holds a broken character: %q", d)
		}
		out.WriteString(d)
	}
	if out.String() != "é" {
		t.Errorf("the pieces make %q", out.String())
	}

	// Four at once, not five.
	var ids []int64
	for range 4 {
		if err := lp.call("proc/spawn", params{"command": "cat"}, &r); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.Proc)
	}
	wantCode(t, "a fifth program", lp.call("proc/spawn", params{"command": "cat"}, nil), protocol.CodeRefused)

	// Input: past 1 MiB it has not read, refused; closed, refused.
	big := strings.Repeat("i", 600<<10)
	if err := lp.call("proc/write", params{"proc": ids[0], "data": big}, nil); err != nil {
		t.Fatal(err)
	}
	if err := lp.call("proc/write", params{"proc": ids[1], "data": "x", "close": true}, nil); err != nil {
		t.Fatal(err)
	}
	wantCode(t, "a write after close", lp.call("proc/write", params{"proc": ids[1], "data": "y"}, nil), protocol.CodeFailed)
	wantCode(t, "a write to no program", lp.call("proc/write", params{"proc": 9999, "data": "y"}, nil), protocol.CodeFailed)
	wantCode(t, "a kill of no program", lp.call("proc/kill", params{"proc": 9999}, nil), protocol.CodeFailed)
	if _, code := lp.output(t, ids[1]); code != 0.0 {
		t.Errorf("cat with its input closed: %v", code)
	}
	for _, id := range []int64{ids[2], ids[3]} {
		if err := lp.call("proc/kill", params{"proc": id}, nil); err != nil {
			t.Fatal(err)
		}
		if _, code := lp.output(t, id); code != nil {
			t.Errorf("a killed program's code: %v", code)
		}
	}
	// cat echoes what it reads: a program that does not read is sleep.
	var sl struct{ Proc int64 }
	if err := lp.call("proc/spawn", params{"command": "sleep", "args": []string{"30"}}, &sl); err != nil {
		t.Fatal(err)
	}
	if err := lp.call("proc/write", params{"proc": sl.Proc, "data": big}, nil); err != nil {
		t.Fatal(err)
	}
	wantCode(t, "past 1 MiB unread", lp.call("proc/write", params{"proc": sl.Proc, "data": big}, nil), protocol.CodeFailed)
	for _, id := range []int64{ids[0], sl.Proc} {
		lp.call("proc/kill", params{"proc": id}, nil)
		lp.output(t, id)
	}
	v.need(t, "result:proc/spawn", "result:proc/write", "result:proc/kill", "proc/out", "proc/exit",
		"error:refused", "error:failed", "error:invalidParams")
}

func containsLine(lines []string, want string) bool {
	for _, l := range lines {
		if l == want {
			return true
		}
	}
	return false
}

// TestProcOutputBackpressure has a program write 3.4 MB while the plugin
// reads nothing: the Host stops reading the program at 256 KiB waiting,
// and the program waits; once the plugin reads, all of it comes, in order,
// then proc/exit.
func TestProcOutputBackpressure(t *testing.T) {
	h, _, _, _ := procHost(t)
	lp := startLinePlugin(t, h, nil, "flood", procCommands, "")
	var r struct{ Proc int64 }
	if err := lp.call("proc/spawn", map[string]any{"command": "seq", "args": []string{"1", "500000"}}, &r); err != nil {
		t.Fatal(err)
	}
	lp.hold.Store(true) // from the next read on, the plugin reads nothing
	waitFor(t, "256 KiB waiting", func() bool { return escouade.ProcPending(lp.p, r.Proc) >= escouade.ProcOutLimit })
	if pending := escouade.ProcPending(lp.p, r.Proc); pending > escouade.ProcOutLimit+64<<10 {
		t.Errorf("%d bytes wait: past the bound and one read", pending)
	}
	if !seqRunning() {
		t.Error("the program ended while the plugin read nothing: its output was not held back")
	}
	lp.hold.Store(false)
	close(lp.free)
	var want strings.Builder
	for i := 1; i <= 500000; i++ {
		want.WriteString(strconv.Itoa(i))
		want.WriteByte('\n')
	}
	out, code := lp.output(t, r.Proc)
	if code != 0.0 || out != want.String() {
		t.Errorf("code %v, %d bytes (want %d); equal: %v", code, len(out), want.Len(), out == want.String())
	}
}

// seqRunning reports whether a seq program of this test runs.
func seqRunning() bool {
	pids, _ := procfs.PIDs()
	for _, pid := range pids {
		args, _ := procfs.Cmdline(pid)
		if len(args) >= 2 && args[0] == "seq" && (args[1] == "500000" || len(args) >= 3 && args[1] == "1" && args[2] == "500000") && procfs.Alive(pid) {
			return true
		}
	}
	return false
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// TestProcEndsWithThePlugin checks that the programs, and what they
// started, end with the plugin's instance.
func TestProcEndsWithThePlugin(t *testing.T) {
	h, _, _, _ := procHost(t)
	lp := startLinePlugin(t, h, nil, "ends", procCommands, "")
	var r struct{ Proc int64 }
	if err := lp.call("proc/spawn", map[string]any{"command": "sh", "args": []string{"-c", `sleep 60 & ` + hostPIDsScript + `echo $hostpid $hostkids; wait`}}, &r); err != nil {
		t.Fatal(err)
	}
	n := lp.next(t, "proc/out", nil)
	pids, ok := hostPIDs(n.params["data"].(string)) // references (hostPIDsScript)
	if !ok || len(pids) != 2 {
		t.Fatalf("the program said %q", n.params["data"])
	}
	if err := lp.p.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		waitFor(t, fmt.Sprintf("process %d gone", pid), func() bool { return !procfs.Alive(pid) })
	}
}

// TestProcNoSessionBus: a proc/spawn program run in an agent's
// environment gets no session-bus address unless its plugin's manifest
// names DBUS_SESSION_BUS_ADDRESS in permissions.env; a command plugin
// gets the Host's only then too (CommandEnv).
func TestProcNoSessionBus(t *testing.T) {
	const bus = "DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus"
	for _, tc := range []struct {
		name, env, want string
	}{
		{"not named", `"env":["KEEP"]`, "none\n"},
		{"named", `"env":["DBUS_SESSION_BUS_ADDRESS"]`, "unix:path=/run/user/1000/bus\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, _ := hookedHost(t, nil, nil, &escouade.Options{
				TempDir: t.TempDir(),
				Agents: escouade.AgentMap{"k1": {Agent: protocol.Agent{ID: "a1", Name: "Ada"},
					Env: []string{"PATH=/usr/bin:/bin", bus}}},
			})
			lp := startLinePlugin(t, h, nil, "bus", `,"permissions":{"commands":["sh -c *"],`+tc.env+`}`, "")
			if err := lp.p.Attach(context.Background(), "k1"); err != nil {
				t.Fatal(err)
			}
			out, _ := lp.run(t, map[string]any{"command": "sh", "agent": "k1", "args": []string{"-c", "echo ${DBUS_SESSION_BUS_ADDRESS-none}"}})
			if out != tc.want {
				t.Errorf("the program's session bus: %q, want %q", out, tc.want)
			}
		})
	}
}
