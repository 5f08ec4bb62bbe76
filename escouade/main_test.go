package escouade_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"shinken.dev/go/escouade"
	"shinken.dev/go/escouade/js"
	"shinken.dev/go/escouade/manifest"
	"shinken.dev/go/escouade/plugin"
	"shinken.dev/go/escouade/protocol"
	"shinken.dev/go/escouade/wasm"
	"shinken.dev/go/internal/procfs"
)

// languages are the engines every test's Host is given.
var languages = []escouade.Language{js.Language(), wasm.Language()}

// The plugins run as processes are this test binary, run again with
// "escouade-test-plugin <mode>": no script, no tool, nothing to build.
const pluginArg = "escouade-test-plugin"

// testTemp is a folder for the whole run: the wasip1 test plugin, the
// compilation cache.
var testTemp string

func TestMain(m *testing.M) {
	escouade.EngineMain(languages...) // the isolated engines of run.js and run.wasm plugins
	if len(os.Args) >= 3 && strings.HasPrefix(os.Args[1], pluginArg) {
		// pluginArg=<folder>: where withTranscript says which folder
		// the plugins' transcripts go to (plugins get none of the
		// test's environment).
		_, run, _ := strings.Cut(os.Args[1], "=")
		os.Exit(runTestPlugin(run, os.Args[2], os.Args[3:]))
	}
	// The programs get the private mounts, as they do in production: the
	// test plugins report their pids as references (pidRef), which the
	// tests turn into their own /proc's pids (hostPID).
	//
	// ESCOUADE_TEST_CONTAINMENT=shepherd (or group) runs every test with
	// the programs' descendants held that way, rather than by a cgroup.
	if mode := os.Getenv("ESCOUADE_TEST_CONTAINMENT"); mode != "" {
		escouade.SetContainment(mode)
	}
	// Plugins built with -race would otherwise sleep a second at exit,
	// waiting for reports: past a test's StopGrace.
	os.Setenv("GORACE", "atexit_sleep_ms=0")
	var err error
	if testTemp, err = os.MkdirTemp("", "escouade-test-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if err := buildWASMPlugin(testTemp); err != nil {
		fmt.Fprintln(os.Stderr, "the wasip1 test plugin does not build:", err)
		os.RemoveAll(testTemp)
		os.Exit(2)
	}
	code := m.Run()
	os.RemoveAll(testTemp)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goroutines leaked:", err)
			code = 1
		}
		if pids := strayProcesses(); len(pids) > 0 {
			fmt.Fprintln(os.Stderr, "plugin processes left running:", pids)
			code = 1
		}
	}
	os.Exit(code)
}

// strayProcesses waits a moment for the processes running this test
// binary, other than this one, to end, and lists those that do not.
func strayProcesses() []int {
	deadline := time.Now().Add(5 * time.Second)
	for {
		pids := testProcesses()
		if len(pids) == 0 || time.Now().After(deadline) {
			return pids
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// testProcesses lists the live processes, other than this one, that run
// this test binary: plugins and what they started.
func testProcesses() []int {
	self, _ := os.Executable()
	var pids []int
	all, _ := procfs.PIDs()
	for _, pid := range all {
		if pid == os.Getpid() {
			continue
		}
		exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		if err != nil || exe != self {
			continue
		}
		if procfs.Alive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// childOf returns a live child of the process ppid, or 0.
func childOf(ppid int) int {
	all, _ := procfs.All()
	for _, p := range all {
		if p.PPID == ppid && p.Live() {
			return p.PID
		}
	}
	return 0
}

// transcriptFile, in the run's folder, names the folder where the plugins
// started now write their transcripts, while a test wants them.
const transcriptFile = "transcripts"

// runTestPlugin is main for the plugins the tests run as processes; run is
// the test run's folder, or "".
func runTestPlugin(run, mode string, args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	in, out := io.Reader(os.Stdin), io.Writer(os.Stdout)
	var dir string
	if run != "" {
		b, _ := os.ReadFile(filepath.Join(run, transcriptFile))
		dir = string(b)
	}
	if dir != "" {
		// Every line both ways goes to a transcript, one per process, that
		// the test checks against the protocol's schema.
		f, err := os.Create(filepath.Join(dir, pidRef(os.Getpid())))
		if err != nil {
			return 2
		}
		defer f.Close()
		t := &transcript{w: f}
		in = io.TeeReader(in, t.side('<'))
		out = io.MultiWriter(out, t.side('>'))
	}
	switch mode {
	case "good":
		return serve(ctx, in, out, goodHandlers)
	case "deserter":
		// Clears its own parent-death signal and leaves its cgroup for
		// its parent's, then says its pid and serves: it must still end
		// with its Host.
		if !desert() {
			return 2
		}
		os.WriteFile(args[0], []byte(pidRef(os.Getpid())), 0o600)
		return serve(ctx, in, out, meekHandlers)
	case "marked":
		// marked <file> <mark>: says who started, then serves.
		f, err := os.OpenFile(args[0], os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return 2
		}
		fmt.Fprintf(f, "%s %s\n", args[1], pidRef(os.Getpid()))
		f.Close()
		return serve(ctx, in, out, goodHandlers)
	case "garbage":
		io.WriteString(out, "not json\n{\"jsonrpc\":\"2.0\",\"Method\":\"log\"}\n[]\n\x00\xff\n{\"jsonrpc\":\"2.0\",\"id\":99,\"result\":1}\n")
		return serve(ctx, in, out, meekHandlers)
	case "huge":
		chunk := []byte(strings.Repeat("x", 1<<20))
		for range 100 {
			out.Write(chunk)
		}
		io.WriteString(out, "\n")
		return serve(ctx, in, out, meekHandlers)
	case "stderr":
		go func() {
			line := []byte(strings.Repeat("e", 100) + "\n")
			for {
				os.Stderr.Write(line)
			}
		}()
		return serve(ctx, in, out, meekHandlers)
	case "children":
		// A child in the plugin's group, and a grandchild, that ignore
		// SIGTERM: they must die with the group.
		child := exec.Command(os.Args[0], pluginArg, "spawner")
		child.Stdout, child.Stderr = nil, nil
		if err := child.Start(); err != nil {
			return 3
		}
		os.WriteFile(args[0], []byte(pidRef(child.Process.Pid)), 0o600)
		go child.Wait()
		hs := meekHandlers
		if len(args) > 1 && args[1] == "crash" {
			hs.Initialize = func(context.Context, *plugin.Conn, protocol.InitializeParams) (map[string]any, error) {
				time.AfterFunc(50*time.Millisecond, func() { os.Exit(4) })
				return nil, nil
			}
		}
		return serve(ctx, in, out, hs)
	case "spawner":
		signal.Ignore(syscall.SIGTERM)
		gc := exec.Command(os.Args[0], pluginArg, "sleeper")
		gc.Start()
		select {}
	case "cgroup-escape":
		// A child that stays, whose own child moves itself into the
		// cgroup whose cgroup.procs is args[0] (the Host's) and writes its
		// pid to args[1].
		child := exec.Command(os.Args[0], pluginArg, "escape-middle", args[0], args[1])
		if err := child.Start(); err != nil {
			return 3
		}
		go child.Wait()
		return serve(ctx, in, out, meekHandlers)
	case "escape-middle":
		signal.Ignore(syscall.SIGTERM)
		gc := exec.Command(os.Args[0], pluginArg, "escaper", args[0], args[1])
		gc.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // out of the group too
		gc.Start()
		select {}
	case "escaper":
		signal.Ignore(syscall.SIGTERM)
		pid := strconv.Itoa(os.Getpid()) // as its namespace numbers it, for cgroup.procs
		if os.WriteFile(args[0], []byte(pid), 0) != nil {
			return 3
		}
		os.WriteFile(args[1], []byte(pidRef(os.Getpid())), 0o600)
		select {}
	case "sleeper":
		signal.Ignore(syscall.SIGTERM)
		select {}
	case "orphan-escape", "orphan-escape-1", "orphan-escape-2", "orphan-escape-3",
		"regicide", "regicide-child", "ns-siblings", "ns-siblings-child", "ns-sleeper":
		// Plugins, and what they start, that try to leave what holds
		// them (pidns_helpers_linux_test.go).
		return runNamespaceHelper(ctx, in, out, mode, args)
	case "tty-host", "tty-typer":
		// A Host under a terminal, and its plugin that types into it
		// (hostile_terminal_linux_test.go).
		return runTerminalHelper(ctx, in, out, mode, args)
	case "envdump":
		// Writes its environment to args[0], one variable a line.
		if err := os.WriteFile(args[0], []byte(strings.Join(os.Environ(), "\n")), 0o600); err != nil {
			return 3
		}
		return serve(ctx, in, out, meekHandlers)
	case "proc-reader":
		// Tries to open args[1] in /proc of the process args[0] (its
		// Host) for reading, and says "<what> readable" or "<what> refused" a line
		// each in args[2].
		var said strings.Builder
		for _, f := range strings.Split(args[1], ",") {
			// The open is where the kernel checks (mem at offset 0 reads
			// nothing: no page is mapped there).
			file, err := os.Open("/proc/" + args[0] + "/" + f)
			if err == nil {
				file.Close()
				fmt.Fprintf(&said, "%s readable\n", f)
			} else {
				fmt.Fprintf(&said, "%s refused\n", f)
			}
		}
		os.WriteFile(args[2]+".tmp", []byte(said.String()), 0o600)
		os.Rename(args[2]+".tmp", args[2])
		return serve(ctx, in, out, meekHandlers)
	case "parricide":
		// Once initialized, kills its parent: its shepherd, where one
		// holds it.
		hs := meekHandlers
		hs.Initialize = func(context.Context, *plugin.Conn, protocol.InitializeParams) (map[string]any, error) {
			time.AfterFunc(50*time.Millisecond, func() { syscall.Kill(os.Getppid(), syscall.SIGKILL) })
			return nil, nil
		}
		return serve(ctx, in, out, hs)
	case "mute":
		// Reads everything and answers nothing, initialize included.
		io.Copy(io.Discard, in)
		return 0
	case "escapees":
		// Two children that leave the plugin's group, one by setsid, one
		// by setpgid, and ignore SIGTERM: they must die with the plugin
		// where its descendants are contained.
		var pids []string
		for _, attr := range []*syscall.SysProcAttr{{Setsid: true}, {Setpgid: true}} {
			child := exec.Command(os.Args[0], pluginArg, "sleeper")
			child.SysProcAttr = attr
			if err := child.Start(); err != nil {
				return 3
			}
			pids = append(pids, pidRef(child.Process.Pid))
			go child.Wait()
		}
		os.WriteFile(args[0], []byte(strings.Join(pids, " ")), 0o600)
		return serve(ctx, in, out, meekHandlers)
	case "silent":
		// Answers initialize, then nothing: not decide, not shutdown; and
		// ignores the end of its input and SIGTERM.
		signal.Ignore(syscall.SIGTERM)
		return raw(in, out, func(id json.RawMessage, method string) []string {
			if method == "initialize" {
				return []string{`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"protocolVersion":1,"capabilities":{}}}`}
			}
			return nil
		}, true)
	case "twice":
		return raw(in, out, func(id json.RawMessage, method string) []string {
			switch method {
			case "initialize":
				return []string{`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"protocolVersion":1,"capabilities":{}}}`}
			case "permissions/decide":
				return []string{
					`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"decision":"allow","message":"first"}}`,
					`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"decision":"deny","message":"second"}}`,
				}
			case "shutdown":
				return []string{`{"jsonrpc":"2.0","id":` + string(id) + `,"result":null}`}
			}
			return nil
		}, false)
	case "flood-keys", "flood-batch":
		// Once initialized, writes floodLines lines meant to cost the Host
		// the most per byte: one object of 90,000 keys (once a quadratic
		// duplicate check), or a batch of tiny items (once an error per
		// item, in one answer the Host held).
		line := floodLine(mode)
		return raw(in, out, func(id json.RawMessage, method string) []string {
			switch method {
			case "initialize":
				lines := []string{`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"protocolVersion":1,"capabilities":{}}}`}
				for range floodLines {
					lines = append(lines, line)
				}
				return lines
			case "permissions/decide":
				return []string{`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"decision":"allow"}}`}
			case "shutdown":
				return []string{`{"jsonrpc":"2.0","id":` + string(id) + `,"result":null}`}
			}
			return nil
		}, false)
	case "version2":
		return raw(in, out, func(id json.RawMessage, method string) []string {
			switch method {
			case "initialize":
				return []string{`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"protocolVersion":2,"capabilities":{}}}`}
			case "shutdown":
				return []string{`{"jsonrpc":"2.0","id":` + string(id) + `,"result":null}`}
			}
			return nil
		}, false)
	case "exit":
		// Exits in the middle of a decision.
		return serve(ctx, in, out, plugin.Handlers{
			Decide: func(ctx context.Context, c *plugin.Conn, p protocol.DecideParams) (protocol.Decision, error) {
				os.Exit(3)
				return protocol.Decision{}, nil
			},
		})
	case "host":
		// A Host in a process of its own, for the test of its death.
		h := escouade.New(&escouade.Options{Secrets: escouade.SecretMap{}, Journal: slog.DiscardHandler, Languages: languages})
		if _, err := h.Start(ctx, args[0]); err != nil {
			return 5
		}
		os.WriteFile(args[1], []byte(strconv.Itoa(childOf(os.Getpid()))), 0o600)
		select {}
	case "host-contained":
		// A Host in a process of its own that holds its programs' descendants
		// as args[0] says (see SetContainment), for the test of its death.
		// fixed-init: as a program that does not call EngineMain, with the
		// Host's fixed init above its programs rather than a shepherd.
		if args[0] == "fixed-init" {
			escouade.SetShepherds(false)
			args[0] = "auto"
		}
		escouade.SetContainment(args[0])
		h := escouade.New(&escouade.Options{Secrets: escouade.SecretMap{}, Journal: slog.DiscardHandler, Languages: languages})
		if _, err := h.Start(ctx, args[1]); err != nil {
			return 5
		}
		select {}
	case "shared-server":
		// The process of launch.shared: an HTTP server on 127.0.0.1 that
		// says its port.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 6
		}
		fmt.Printf("starting\nlistening on %s\n", ln.Addr())
		http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "shared %s", r.URL.Path)
		}))
		return 0
	case "shared-liar":
		// A process of launch.shared that prints a port it does not listen
		// on (another server's), and waits.
		signal.Ignore(syscall.SIGTERM)
		fmt.Printf("listening on 127.0.0.1:%s\n", args[0])
		select {}
	case "naive":
		// The reference for the round trip: a plugin written the plain way,
		// encoding/json's Decoder and Encoder on stdin and stdout.
		dec, enc := json.NewDecoder(in), json.NewEncoder(out)
		for {
			var req struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Method  string          `json:"method"`
				Params  struct {
					Request protocol.PermissionRequest `json:"request"`
					Project protocol.Project           `json:"project"`
				} `json:"params"`
			}
			if dec.Decode(&req) != nil {
				return 0
			}
			enc.Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": map[string]any{"decision": "allow"}})
		}
	case "bench":
		return serve(ctx, in, out, plugin.Handlers{
			Decide: func(ctx context.Context, c *plugin.Conn, p protocol.DecideParams) (protocol.Decision, error) {
				return protocol.Decision{Verdict: protocol.Allow}, nil
			},
		})
	}
	return 2
}

// floodLines is how many lines a flood plugin writes.
const floodLines = 10

// floodLine is a line of a flood plugin, under a MiB.
func floodLine(mode string) string {
	var b strings.Builder
	if mode == "flood-batch" {
		b.WriteString("[1")
		for b.Len() < 1<<20-4 {
			b.WriteString(",1")
		}
		b.WriteString("]")
		return b.String()
	}
	b.WriteString(`{"jsonrpc":"2.0","method":"log","params":{"level":"info","message":"x"`)
	for i := range 90000 {
		fmt.Fprintf(&b, `,"k%d":1`, i)
	}
	b.WriteString("}}")
	return b.String()
}

func serve(ctx context.Context, in io.Reader, out io.Writer, hs plugin.Handlers) int {
	if err := plugin.Serve(ctx, in, out, hs); err != nil {
		return 1
	}
	return 0
}

// goodHandlers deny what removes files, allow the rest, and log facts.
var goodHandlers = plugin.Handlers{
	Decide: func(ctx context.Context, c *plugin.Conn, p protocol.DecideParams) (protocol.Decision, error) {
		if cmd, _ := p.Request.Input["command"].(string); strings.HasPrefix(cmd, "rm ") {
			return protocol.Decision{Verdict: protocol.Deny, Message: "no rm here"}, nil
		}
		return protocol.Decision{Verdict: protocol.Allow}, nil
	},
	Fact: func(ctx context.Context, c *plugin.Conn, f protocol.Fact) {
		c.Log(slog.LevelInfo, fmt.Sprintf("fact %s %d", f.Name, f.Seq))
	},
}

// meekHandlers allow everything and log facts: a hostile plugin's handlers,
// so that a deny comes from the good one.
var meekHandlers = plugin.Handlers{
	Decide: func(ctx context.Context, c *plugin.Conn, p protocol.DecideParams) (protocol.Decision, error) {
		return protocol.Decision{Verdict: protocol.Allow}, nil
	},
	Fact: goodHandlers.Fact,
}

// raw serves lines by hand, for plugins that break the protocol on purpose.
// answer returns the lines to write for a request. hang: at the end of the
// input, wait to be killed.
func raw(in io.Reader, out io.Writer, answer func(id json.RawMessage, method string) []string, hang bool) int {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(sc.Bytes(), &msg) != nil || msg.ID == nil {
			continue
		}
		for _, l := range answer(msg.ID, msg.Method) {
			io.WriteString(out, l+"\n")
		}
	}
	if hang {
		select {}
	}
	return 0
}

// A transcript records lines, each prefixed with its direction.
type transcript struct {
	mu sync.Mutex
	w  io.Writer
}

func (t *transcript) side(dir byte) io.Writer {
	var partial []byte
	return writerFunc(func(b []byte) (int, error) {
		t.mu.Lock()
		defer t.mu.Unlock()
		partial = append(partial, b...)
		for {
			i := strings.IndexByte(string(partial), '\n')
			if i < 0 {
				break
			}
			if i < 1<<20 { // a hostile plugin's 100 MiB line is not kept
				t.w.Write(append([]byte{dir}, partial[:i+1]...))
			}
			partial = partial[i+1:]
		}
		if len(partial) > 1<<20 {
			partial = partial[:0]
		}
		return len(b), nil
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

// journal records a Host's journal for tests.
type journal struct {
	mu      sync.Mutex
	entries []entry
	changed chan struct{}
}

type entry struct {
	level slog.Level
	msg   string
	attrs map[string]string
}

func (e entry) String() string { return fmt.Sprintf("%v %q %v", e.level, e.msg, e.attrs) }

func newJournal() *journal { return &journal{changed: make(chan struct{}, 1)} }

func (j *journal) handler() slog.Handler { return &journalHandler{j: j} }

type journalHandler struct {
	j     *journal
	attrs []slog.Attr
}

func (h *journalHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *journalHandler) WithGroup(string) slog.Handler            { return h }
func (h *journalHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &journalHandler{j: h.j, attrs: append(append([]slog.Attr(nil), h.attrs...), as...)}
}

func (h *journalHandler) Handle(_ context.Context, r slog.Record) error {
	e := entry{level: r.Level, msg: r.Message, attrs: map[string]string{}}
	for _, a := range h.attrs {
		e.attrs[a.Key] = a.Value.String()
	}
	r.Attrs(func(a slog.Attr) bool {
		e.attrs[a.Key] = a.Value.String()
		return true
	})
	h.j.mu.Lock()
	h.j.entries = append(h.j.entries, e)
	h.j.mu.Unlock()
	select {
	case h.j.changed <- struct{}{}:
	default:
	}
	return nil
}

// find returns the entries of plugin whose message holds msg.
func (j *journal) find(plugin, msg string) []entry {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []entry
	for _, e := range j.entries {
		if strings.Contains(e.msg, msg) && (plugin == "" || e.attrs["plugin"] == plugin) {
			out = append(out, e)
		}
	}
	return out
}

// wait waits for an entry of plugin whose message holds msg.
func (j *journal) wait(t *testing.T, plugin, msg string) entry {
	t.Helper()
	deadline := time.After(hangGuard)
	for {
		if es := j.find(plugin, msg); len(es) > 0 {
			return es[0]
		}
		select {
		case <-j.changed:
		case <-deadline:
			t.Fatalf("the journal never said %q for %s; it holds:\n%s", msg, plugin, j.dump())
		}
	}
}

func (j *journal) dump() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	var b strings.Builder
	for _, e := range j.entries {
		fmt.Fprintln(&b, e)
	}
	return b.String()
}

// hangGuard bounds a wait for the journal or a state: it guards against a
// hang and paces nothing. A flood of a few MiB a line under the race
// detector, on a machine busy with other work, takes tens of seconds.
const hangGuard = 3 * time.Minute

// waitFor polls cond until it holds, failing after hangGuard.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// writePlugin writes a plugin folder: fields are plugin.json's fields
// beyond id, version and protocolVersion, as JSON without its braces.
func writePlugin(t testing.TB, id, fields string, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	m := fmt.Sprintf(`{"id":%q,"version":"1.0.0","protocolVersion":1,%s}`, id, fields)
	if err := os.WriteFile(filepath.Join(dir, manifest.Name), []byte(m), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// commandManifest is the run field of a plugin run as this test binary.
func commandManifest(mode string, args ...string) string {
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	argv := append([]string{exe, pluginArg + "=" + testTemp, mode}, args...)
	b, _ := json.Marshal(argv)
	return `"run":{"command":` + string(b) + `}`
}

// parseManifest parses a manifest given as for writePlugin.
func parseManifest(t testing.TB, id, fields string) *manifest.Manifest {
	t.Helper()
	m, err := manifest.Parse([]byte(fmt.Sprintf(`{"id":%q,"version":"1.0.0","protocolVersion":1,"run":{"command":["unused"]}%s}`, id, fields)))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// newHost returns a Host for a test, closed at its end, with a journal.
func newHost(t testing.TB, opts *escouade.Options) (*escouade.Host, *journal) {
	t.Helper()
	j := newJournal()
	var o escouade.Options
	if opts != nil {
		o = *opts
	}
	o.Journal = j.handler()
	if o.StopGrace == 0 {
		o.StopGrace = 200 * time.Millisecond
	}
	if o.Backoff == 0 {
		o.Backoff = 5 * time.Millisecond
	}
	if o.Secrets == nil {
		o.Secrets = escouade.SecretMap{}
	}
	if o.Languages == nil {
		o.Languages = languages
	}
	h := escouade.New(&o)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := h.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return h, j
}
