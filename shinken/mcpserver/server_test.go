package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/backend/osexec"
	"shinken.dev/go/internal/schematest"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
	"shinken.dev/go/shinken/mcpserver"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// env is one MCP client connected in memory to a Server over a headless
// desktop, every ACI message the runtime sends validated by a schema proxy.
type env struct {
	desk *headless.Desktop
	rt   *shinken.Runtime
	sess *mcp.ClientSession
	srv  *mcpserver.Server

	// denyAll makes the Authorizer refuse every exec and launch_app.
	denyAll bool
	// denyDynamic makes it refuse what a machine tool shows as dynamic.
	denyDynamic bool

	mu             sync.Mutex
	progress       []string
	progressTokens []string      // the token of each, as fmt prints it
	progressed     chan struct{} // a token per notification, dropped when full
}

const token = "tok"

func newEnv(t testing.TB, opts *mcpserver.Options) *env {
	t.Helper()
	ctx := context.Background()
	e := &env{desk: headless.New(&headless.Options{Width: 1280, Height: 800}), progressed: make(chan struct{}, 64)}
	for _, app := range []string{"notes", "form"} {
		if err := e.desk.Launch(ctx, app, nil); err != nil {
			t.Fatal(err)
		}
	}
	e.rt = shinken.NewRuntime(e.desk, &shinken.RuntimeOptions{Token: token, Executor: osexec.New(nil), Authorizer: e})
	hs := httptest.NewServer(e.rt)
	proxy := schematest.NewProxy(t, "ws"+strings.TrimPrefix(hs.URL, "http"))
	t.Cleanup(func() {
		e.rt.Close()
		hs.Close()
	})
	dial := func(ctx context.Context) (*client.Client, error) {
		return client.Dial(ctx, proxy.URL, &client.DialOptions{Token: token})
	}
	c, err := dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	o := mcpserver.Options{Dial: dial, ProgressInterval: 5 * time.Millisecond, PollInterval: 5 * time.Millisecond}
	if opts != nil {
		o = *opts
		if o.Dial == nil {
			o.Dial = dial
		}
	}
	e.srv, err = mcpserver.New(ctx, c, &o)
	if err != nil {
		t.Fatal(err)
	}
	var done func()
	e.sess, done = connectInMemory(t, ctx, e.srv, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			e.mu.Lock()
			e.progress = append(e.progress, req.Params.Message)
			e.progressTokens = append(e.progressTokens, fmt.Sprint(req.Params.ProgressToken))
			e.mu.Unlock()
			select {
			case e.progressed <- struct{}{}:
			default:
			}
		},
	})
	t.Cleanup(done)
	return e
}

// connectInMemory connects an MCP client (with opts) to srv in memory;
// done closes the client's session and waits for the server's to end.
func connectInMemory(t testing.TB, ctx context.Context, srv *mcpserver.Server, opts *mcp.ClientOptions) (sess *mcp.ClientSession, done func()) {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	sess, err = mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, opts).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	return sess, func() {
		sess.Close()
		ss.Wait()
	}
}

// Authorize refuses rm, or everything when denyAll is set.
func (e *env) Authorize(_ context.Context, req shinken.AuthRequest) error {
	if e.denyAll {
		return errors.New("the policy forbids everything")
	}
	if e.denyDynamic && req.Intent != nil && req.Intent.Dynamic {
		return errors.New("the policy forbids what is known only when it runs")
	}
	if req.Verb == aci.VerbExec && len(req.Action.Argv) > 0 && req.Action.Argv[0] == "rm" {
		return errors.New("the policy forbids rm")
	}
	return nil
}

// call calls a tool and fails the test on a protocol error.
func (e *env) call(t *testing.T, name string, args any) *mcp.CallToolResult {
	t.Helper()
	return e.callMeta(t, name, args, nil)
}

func (e *env) callMeta(t *testing.T, name string, args any, meta mcp.Meta) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := e.sess.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args, Meta: meta})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// ok calls a tool that must succeed and returns its text.
func (e *env) ok(t *testing.T, name string, args any) string {
	t.Helper()
	res := e.call(t, name, args)
	if res.IsError {
		t.Fatalf("%s %v: tool error %s", name, args, text(res))
	}
	return text(res)
}

// fails calls a tool that must fail with code and returns its text.
func (e *env) fails(t *testing.T, name string, args any, code aci.Code) string {
	t.Helper()
	res := e.call(t, name, args)
	if !res.IsError {
		t.Fatalf("%s %v succeeded (%s), want %s", name, args, text(res), code)
	}
	if got := res.Meta[mcpserver.ErrorCodeMeta]; got != string(code) {
		t.Fatalf("%s: error code %v, want %s (%s)", name, got, code, text(res))
	}
	if s := text(res); !strings.HasPrefix(s, string(code)+": ") {
		t.Fatalf("%s: error text %q does not start with %s", name, s, code)
	}
	return text(res)
}

func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// structured decodes a result's structured content into v.
func structured(t *testing.T, res *mcp.CallToolResult, v any) {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
}

// node finds a node of the desktop's whole tree by role and name.
func (e *env) node(t *testing.T, role, name string) shinken.Node {
	t.Helper()
	tree, err := e.desk.Snapshot(context.Background(), shinken.SnapshotOptions{Scope: shinken.TreeDesktop})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range tree.Nodes {
		if n.Role == role && n.Name == name {
			return n
		}
	}
	t.Fatalf("no %s %q on the desktop", role, name)
	return shinken.Node{}
}

// refs observes and maps "role name" to refs.
func (e *env) refs(t *testing.T) map[string]string {
	t.Helper()
	res := e.call(t, "observe", map[string]any{})
	var o mcpserver.ObserveOutput
	structured(t, res, &o)
	refs := map[string]string{}
	for _, line := range strings.Split(o.TreeText, "\n") {
		// e3 text "Name" Value:"" ...
		ref, rest, ok := strings.Cut(strings.TrimLeft(line, " "), " ")
		if !ok || !strings.HasPrefix(ref, "e") {
			continue
		}
		role, name, ok := strings.Cut(rest, " \"")
		if !ok {
			continue
		}
		if i := strings.Index(role, " ("); i >= 0 {
			role = role[:i]
		}
		name, _, _ = strings.Cut(name, "\"")
		refs[role+" "+name] = ref
	}
	return refs
}

func (e *env) progressMessages() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.progress)
}

// progressOf waits until the call whose token prints as token has had a
// progress message, and returns its messages so far. The client handles
// notifications apart from answers: the ones a call sent before its
// answer may reach the handler after the call returned.
func (e *env) progressOf(token string) []string {
	deadline := time.Now().Add(time.Minute)
	for {
		e.mu.Lock()
		var out []string
		for i, m := range e.progress {
			if e.progressTokens[i] == token {
				out = append(out, m)
			}
		}
		e.mu.Unlock()
		if len(out) > 0 || time.Now().After(deadline) {
			return out
		}
		time.Sleep(10 * time.Millisecond) // polls the handler's record, bounded by the deadline
	}
}

// TestStructuredTools runs every structured tool once against the headless
// desktop and checks the desktop's state after each.
func TestStructuredTools(t *testing.T) {
	e := newEnv(t, nil)

	// observe: the form is the active window; its tree has refs.
	res := e.call(t, "observe", map[string]any{})
	var o mcpserver.ObserveOutput
	structured(t, res, &o)
	if o.Tree != "full" || o.Revision != 1 || !strings.Contains(o.TreeText, `e3 text (focused) "Name"`) || text(res) != o.TreeText {
		t.Fatalf("observe: %+v\ntext %q", o, text(res))
	}
	refs := e.refs(t)
	name, email, news, submit := refs["text Name"], refs["text Email"], refs["check box Subscribe to the newsletter"], refs["push button Submit"]
	if name == "" || email == "" || news == "" || submit == "" {
		t.Fatalf("refs %v", refs)
	}

	// set_value, invoke_action, click_element: fill and submit the form.
	e.ok(t, "set_value", map[string]any{"ref": name, "value": "Ada Lovelace"})
	if v := e.node(t, "text", "Name").Value; v != "Ada Lovelace" {
		t.Fatalf("Name holds %q", v)
	}
	e.ok(t, "set_value", map[string]any{"ref": email, "value": "ada@example.com"})
	e.ok(t, "invoke_action", map[string]any{"ref": news, "action": "toggle"})
	if !slices.Contains(e.node(t, "check box", "Subscribe to the newsletter").States, "checked") {
		t.Fatal("the check box is not checked")
	}
	e.ok(t, "click_element", map[string]any{"ref": submit})
	e.node(t, "label", "Submitted: Ada Lovelace <ada@example.com>, newsletter: yes.")

	// observe with diff shows just the changes.
	res = e.call(t, "observe", map[string]any{"diff": true})
	structured(t, res, &o)
	if o.Tree != "diff" || o.DiffOf == 0 || !strings.Contains(o.TreeText, "Submitted: Ada Lovelace") || strings.Contains(o.TreeText, "Subscribe") && !strings.Contains(o.TreeText, "~") {
		t.Fatalf("diff observe: %+v", o)
	}

	// wait_for: present now, and gone.
	res = e.call(t, "wait_for", map[string]any{"role": "label", "name": "submitted: ada"})
	var w mcpserver.WaitForOutput
	structured(t, res, &w)
	if res.IsError || w.Element == nil || !strings.HasPrefix(w.Element.Name, "Submitted: Ada") || w.Polls != 1 {
		t.Fatalf("wait_for: %s %+v", text(res), w)
	}
	e.ok(t, "wait_for", map[string]any{"name": "Please enter a name", "gone": true})

	// list_windows and activate_window.
	res = e.call(t, "list_windows", map[string]any{})
	var ws mcpserver.Windows
	structured(t, res, &ws)
	if len(ws.Windows) != 2 {
		t.Fatalf("windows %+v", ws)
	}
	var notes mcpserver.Window
	for _, w := range ws.Windows {
		if w.Title == "Notes" {
			notes = w
		}
		if w.Title == "Form" && !w.Active {
			t.Fatalf("the form is not active: %+v", ws)
		}
	}
	e.ok(t, "activate_window", map[string]any{"id": notes.ID})
	if !e.active(t, "Notes") {
		t.Fatal("notes is not active after activate_window by id")
	}
	e.ok(t, "activate_window", map[string]any{"title": "form"})
	if !e.active(t, "Form") {
		t.Fatal("form is not active after activate_window by title")
	}

	// launch_app opens a second notes window.
	e.ok(t, "launch_app", map[string]any{"app": "notes", "args": []string{"hello"}})
	wins, _ := e.desk.Windows(context.Background())
	if len(wins) != 3 {
		t.Fatalf("%d windows after launch_app", len(wins))
	}

	// clipboard_set and clipboard_get.
	e.ok(t, "clipboard_set", map[string]any{"text": "copié"})
	if got, _ := e.desk.ClipboardText(context.Background()); got != "copié" {
		t.Fatalf("clipboard holds %q", got)
	}
	res = e.call(t, "clipboard_get", map[string]any{})
	var cb mcpserver.ClipboardText
	structured(t, res, &cb)
	if cb.Text != "copié" || text(res) != "copié" {
		t.Fatalf("clipboard_get %+v %q", cb, text(res))
	}

	// exec: output and exit status, structured and as text.
	res = e.call(t, "exec", map[string]any{"argv": []string{"sh", "-c", "echo out; echo err >&2; exit 3"}})
	var x mcpserver.ExecOutput
	structured(t, res, &x)
	if res.IsError || x.ExitCode == nil || *x.ExitCode != 3 || x.Stdout != "out\n" || x.Stderr != "err\n" {
		t.Fatalf("exec %+v %s", x, text(res))
	}
	if s := text(res); !strings.HasPrefix(s, "exit status 3") || !strings.Contains(s, "--- stdout ---\nout\n") {
		t.Fatalf("exec text %q", s)
	}
	e.ok(t, "exec", map[string]any{"shell": "cat", "stdin": "fed"})
}

func (e *env) active(t *testing.T, title string) bool {
	t.Helper()
	ws, err := e.desk.Windows(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		if w.Title == title {
			return w.Active
		}
	}
	return false
}

// TestToolErrors checks that failures are tool errors (not protocol
// errors) carrying the ACI code, and that the server stays up.
func TestToolErrors(t *testing.T) {
	e := newEnv(t, nil)
	e.fails(t, "click_element", map[string]any{"ref": "e999"}, aci.CodeStaleElementRef)
	e.fails(t, "invoke_action", map[string]any{"ref": "bogus"}, aci.CodeInvalidAction)
	s := e.fails(t, "exec", map[string]any{"argv": []string{"rm", "-rf", "/tmp/x"}}, aci.CodePermissionDenied)
	if !strings.Contains(s, "the policy forbids rm") {
		t.Fatalf("refusal %q does not give the authorizer's reason", s)
	}
	e.fails(t, "exec", map[string]any{}, aci.CodeInvalidAction)
	e.fails(t, "exec", map[string]any{"argv": []string{"true"}, "shell": "true"}, aci.CodeInvalidAction)
	e.fails(t, "exec", map[string]any{"argv": []string{"/no/such/program"}}, aci.CodeExecSpawnFailed)
	e.fails(t, "activate_window", map[string]any{"title": "no such window"}, aci.CodeNoSuchWindow)
	e.fails(t, "activate_window", map[string]any{}, aci.CodeInvalidAction)
	e.fails(t, "launch_app", map[string]any{"app": "nonesuch"}, aci.CodeNoSuchApp)
	e.fails(t, "wait_for", map[string]any{}, aci.CodeInvalidAction)
	e.fails(t, "wait_for", map[string]any{"name": "never there", "timeout_ms": 20}, aci.CodeTimeout)
	e.fails(t, "observe", map[string]any{"settle_ms": -1}, aci.CodeInvalidAction)

	// Arguments outside the schema are refused by the SDK's validation,
	// with the code the runtime gives a rule broken.
	e.fails(t, "set_value", map[string]any{"ref": 3}, aci.CodeInvalidAction)
	e.fails(t, "observe", map[string]any{"bogus": true}, aci.CodeInvalidAction)
	// An unknown tool is a protocol error.
	if _, err := e.sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "nonesuch"}); err == nil {
		t.Fatal("an unknown tool was called")
	}
	e.ok(t, "list_windows", map[string]any{})
}

// TestProgress checks that exec and wait_for report progress to a client
// that asks for it.
func TestProgress(t *testing.T) {
	e := newEnv(t, nil)
	e.callMeta(t, "exec", map[string]any{"argv": []string{"true"}}, mcp.Meta{"progressToken": "x1"})
	if p := e.progressOf("x1"); len(p) == 0 || p[0] != "started: true" {
		t.Fatalf("exec progress %q", p)
	}
	res := e.callMeta(t, "wait_for", map[string]any{"name": "never there", "timeout_ms": 30}, mcp.Meta{"progressToken": 7})
	if !res.IsError {
		t.Fatal(text(res))
	}
	if p := e.progressOf("7"); len(p) == 0 || !strings.HasPrefix(p[0], `waiting for element named like "never there"`) {
		t.Fatalf("wait_for progress %q", p)
	}
}

// TestCancelWaitFor cancels a wait_for once it has reported progress: the
// call ends at once with the cancellation, and the server serves on.
func TestCancelWaitFor(t *testing.T) {
	e := newEnv(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := e.sess.CallTool(ctx, &mcp.CallToolParams{Name: "wait_for", Meta: mcp.Meta{"progressToken": "w"},
			Arguments: map[string]any{"name": "never there", "timeout_ms": 120000}})
		done <- err
	}()
	<-e.progressed
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait_for: %v", err)
	}
	e.ok(t, "list_windows", map[string]any{})
}

// TestBounds checks that the schemas refuse what the tools would clamp.
func TestBounds(t *testing.T) {
	e := newEnv(t, nil)
	e.fails(t, "observe", map[string]any{"settle_ms": 2001}, aci.CodeInvalidAction)
	e.fails(t, "wait_for", map[string]any{"name": "x", "timeout_ms": 120001}, aci.CodeInvalidAction)
	e.fails(t, "exec", map[string]any{"argv": []string{"true"}, "timeout_ms": -1}, aci.CodeInvalidAction)
	e.ok(t, "observe", map[string]any{"settle_ms": 0})
}

// TestConcurrentCalls runs tools from several goroutines at once over one
// MCP session: each answers as alone.
func TestConcurrentCalls(t *testing.T) {
	e := newEnv(t, nil)
	calls := []struct {
		name string
		args map[string]any
	}{
		{"observe", map[string]any{}},
		{"screenshot", map[string]any{}},
		{"list_windows", map[string]any{}},
		{"cursor_position", map[string]any{}},
		{"exec", map[string]any{"argv": []string{"echo", "x"}}},
		{"clipboard_get", map[string]any{}},
	}
	var wg sync.WaitGroup
	errs := make(chan string, 4*len(calls))
	for i := range 4 {
		for _, c := range calls {
			wg.Go(func() {
				token := fmt.Sprint(c.name, i)
				res, err := e.sess.CallTool(context.Background(), &mcp.CallToolParams{Name: c.name, Arguments: c.args, Meta: mcp.Meta{"progressToken": token}})
				if err != nil || res.IsError {
					errs <- fmt.Sprintf("%s: %v %v", c.name, err, res)
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for s := range errs {
		t.Error(s)
	}
}

// TestWaitFor waits for what a later action causes, reporting progress
// meanwhile, and matches values ignoring case.
func TestWaitFor(t *testing.T) {
	e := newEnv(t, nil)
	refs := e.refs(t)
	e.ok(t, "set_value", map[string]any{"ref": refs["text Name"], "value": "Ada"})
	got := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := e.sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "wait_for", Meta: mcp.Meta{"progressToken": "w"},
			Arguments: map[string]any{"role": "LABEL", "name": "submitted: ada", "timeout_ms": 60000}})
		if err != nil {
			res = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}
		}
		got <- res
	}()
	select {
	case <-e.progressed: // the wait has observed the tree once, without the label
	case res := <-got:
		t.Fatalf("wait_for ended before the label could appear: %s", text(res))
	}
	e.ok(t, "click_element", map[string]any{"ref": refs["push button Submit"]})
	res := <-got
	if res.IsError {
		t.Fatal(text(res))
	}
	var out mcpserver.WaitForOutput
	structured(t, res, &out)
	if out.Element == nil || !strings.HasPrefix(out.Element.Name, "Submitted: Ada") || out.Polls < 2 || !strings.Contains(text(res), " (after ") {
		t.Fatalf("wait_for answered %q, %+v", text(res), out)
	}
	if p := e.progressMessages(); len(p) == 0 || !strings.HasPrefix(p[0], `waiting for LABEL named like "submitted: ada": 1 observations`) {
		t.Fatalf("progress %q", p)
	}

	e.ok(t, "set_value", map[string]any{"ref": refs["text Email"], "value": "Ada@Example.com"})
	res = e.call(t, "wait_for", map[string]any{"value": "ADA@EXAMPLE"})
	structured(t, res, &out)
	if out.Element == nil || out.Element.Ref != refs["text Email"] || out.Polls != 1 || !strings.HasSuffix(text(res), "(already)") {
		t.Fatalf("wait_for by value answered %q, %+v", text(res), out)
	}
	s := e.fails(t, "wait_for", map[string]any{"name": "email", "gone": true, "timeout_ms": 30}, aci.CodeTimeout)
	if !strings.Contains(s, "still a element named like") || !strings.Contains(s, "observations)") {
		t.Fatalf("timeout text %q", s)
	}
}
