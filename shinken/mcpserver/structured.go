package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
)

// observeInput is the input of the observe tool.
type observeInput struct {
	Diff     bool `json:"diff,omitempty" jsonschema:"only what changed since the previous observe (lines marked + added, ~ changed, - removed)"`
	Desktop  bool `json:"desktop,omitempty" jsonschema:"every application, not just the active window's"`
	SettleMS int  `json:"settle_ms,omitempty" jsonschema:"wait for the UI to be quiet this many milliseconds first"`
}

// observeOutput is the structured result of observe.
type observeOutput struct {
	Tree      string `json:"tree" jsonschema:"full or diff"`
	Revision  int    `json:"revision" jsonschema:"this observation's revision"`
	DiffOf    int    `json:"diff_of,omitempty" jsonschema:"the revision a diff is against"`
	Focus     string `json:"focus,omitempty" jsonschema:"the ref of the focused element"`
	NodeCount int    `json:"node_count,omitempty" jsonschema:"elements in the tree"`
	TreeText  string `json:"tree_text" jsonschema:"the tree (or diff) as text, one element per line with its ref"`
}

// refInput names an element: by its ref, or by its role and name (as a
// client.Locator does: the one element of that role whose whole name is
// name, waited for until it can take the action, and refused when several
// match).
type refInput struct {
	Ref  string `json:"ref,omitempty" jsonschema:"an element ref from observe, such as e12; or give role and name instead"`
	Role string `json:"role,omitempty" jsonschema:"instead of ref: the element's role as observe shows it (push button, text, check box...)"`
	Name string `json:"name,omitempty" jsonschema:"instead of ref: the element's whole name as observe shows it, without quotes"`
}

// invokeInput is the input of invoke_action.
type invokeInput struct {
	Ref    string `json:"ref" jsonschema:"an element ref from observe, such as e12"`
	Action string `json:"action,omitempty" jsonschema:"the action's name as observe lists it (click, toggle, activate...); default the element's first"`
}

// setValueInput is the input of set_value: the element by its ref, or by
// its role and name as in refInput.
type setValueInput struct {
	Ref   string `json:"ref,omitempty" jsonschema:"an element ref from observe, such as e12; or give role and name instead"`
	Role  string `json:"role,omitempty" jsonschema:"instead of ref: the element's role as observe shows it (text, combo box...)"`
	Name  string `json:"name,omitempty" jsonschema:"instead of ref: the element's whole name as observe shows it, without quotes"`
	Value string `json:"value" jsonschema:"the new value or text"`
}

// doneResult is the structured result of an action.
type doneResult struct {
	OK bool `json:"ok" jsonschema:"the runtime did it"`
}

// waitForInput is the input of wait_for.
type waitForInput struct {
	Role      string `json:"role,omitempty" jsonschema:"the element's role as observe shows it (push button, text, check box...)"`
	Name      string `json:"name,omitempty" jsonschema:"a substring of the element's name, ignoring case"`
	Value     string `json:"value,omitempty" jsonschema:"a substring of the element's value, ignoring case"`
	Gone      bool   `json:"gone,omitempty" jsonschema:"wait until no element matches instead"`
	TimeoutMS int    `json:"timeout_ms,omitempty" jsonschema:"give up after this many milliseconds; default 10000, at most 120000"`
	Desktop   bool   `json:"desktop,omitempty" jsonschema:"look in every application, not just the active window's"`
	Exact     bool   `json:"exact,omitempty" jsonschema:"match as click_element does: the role, the whole name and the whole value, case included; wait until exactly one such element shows (with gone, until none shows); fails at once when several match"`
}

// waitForOutput is the structured result of wait_for.
type waitForOutput struct {
	Element   *element `json:"element,omitempty" jsonschema:"the first matching element (absent when waiting for it to be gone)"`
	Polls     int      `json:"polls" jsonschema:"observations taken (0 with exact, which counts none)"`
	ElapsedMS int64    `json:"elapsed_ms" jsonschema:"time waited"`
}

// element is one element of the accessibility tree.
type element struct {
	Ref    string    `json:"ref"`
	Role   string    `json:"role"`
	Name   string    `json:"name,omitempty"`
	Value  string    `json:"value,omitempty"`
	States []string  `json:"states,omitempty"`
	BBox   []float64 `json:"bbox" jsonschema:"[x, y, w, h] in screen pixels"`
}

// windows is the structured result of list_windows.
type windows struct {
	Windows []window `json:"windows"`
}

// window is one top-level window.
type window struct {
	ID     uint64 `json:"id"`
	Title  string `json:"title"`
	App    string `json:"app,omitempty"`
	BBox   []int  `json:"bbox,omitempty" jsonschema:"[x, y, w, h] in screen pixels"`
	Active bool   `json:"active,omitempty"`
	// The window manager's states, where the desktop reports them (see
	// machine.WindowControl.States).
	Minimized  bool `json:"minimized,omitempty" jsonschema:"minimised (iconified), where the desktop says"`
	Maximized  bool `json:"maximized,omitempty" jsonschema:"maximised, where the desktop says"`
	Fullscreen bool `json:"fullscreen,omitempty" jsonschema:"full screen, where the desktop says"`
}

// activateInput is the input of activate_window: exactly one of id and
// title.
type activateInput struct {
	ID    *uint64 `json:"id,omitempty" jsonschema:"the window's id from list_windows"`
	Title string  `json:"title,omitempty" jsonschema:"a substring of the window's title, ignoring case"`
}

// launchInput is the input of launch_app.
type launchInput struct {
	App  string   `json:"app" jsonschema:"the application to start"`
	Args []string `json:"args,omitempty" jsonschema:"its arguments, passed verbatim"`
}

// clipboardText is the clipboard's text, in and out.
type clipboardText struct {
	Text string `json:"text"`
}

// execInput is the input of exec: exactly one of argv and shell.
type execInput struct {
	Argv      []string          `json:"argv,omitempty" jsonschema:"the program and its arguments, run without a shell"`
	Shell     string            `json:"shell,omitempty" jsonschema:"a command line run by sh -c"`
	Cwd       string            `json:"cwd,omitempty" jsonschema:"the working directory"`
	Env       map[string]string `json:"env,omitempty" jsonschema:"variables added to the environment"`
	Stdin     string            `json:"stdin,omitempty" jsonschema:"text fed to the command's standard input"`
	TimeoutMS int               `json:"timeout_ms,omitempty" jsonschema:"kill the command after this many milliseconds; default the runtime's, 60000 unless configured"`
}

// execOutput is the structured result of exec.
type execOutput struct {
	ExitCode        *int    `json:"exit_code" jsonschema:"the exit status; null when killed by a signal"`
	Signal          int     `json:"signal,omitempty" jsonschema:"the signal that killed it"`
	TimedOut        bool    `json:"timed_out"`
	Stdout          string  `json:"stdout"`
	Stderr          string  `json:"stderr"`
	StdoutTruncated bool    `json:"stdout_truncated,omitempty"`
	StderrTruncated bool    `json:"stderr_truncated,omitempty"`
	DurationMS      float64 `json:"duration_ms"`
}

func (s *Server) addStructuredTools() {
	addTool(s, &mcp.Tool{
		Name:        "observe",
		Description: "Read the accessibility tree of the active window (or the whole desktop) as text: one element per line with its ref (e12), role, name, value, states and actions. Refs stay valid while the element lives. With diff, only what changed since the previous observe.",
		Annotations: &mcp.ToolAnnotations{Title: "Observe the accessibility tree"},
		InputSchema: bounded[observeInput](map[string]float64{"settle_ms": 2000}),
	}, readLocal, func(ctx context.Context, _ *mcp.CallToolRequest, c *client.Client, in observeInput) (textResult[observeOutput], error) {
		if in.SettleMS < 0 {
			return textResult[observeOutput]{}, invalid("settle_ms %d is negative", in.SettleMS)
		}
		o, err := c.Observe(ctx, &client.ObserveRequest{Diff: in.Diff, Desktop: in.Desktop, Settle: time.Duration(in.SettleMS) * time.Millisecond})
		if err != nil {
			return textResult[observeOutput]{}, err
		}
		out := observeOutput{Tree: o.Tree, Revision: o.Revision, DiffOf: o.DiffOf, Focus: o.Focus, TreeText: o.TreeText}
		if o.NodeCount != nil {
			out.NodeCount = *o.NodeCount
		}
		return textResult[observeOutput]{o.TreeText, out}, nil
	})

	addTool(s, &mcp.Tool{
		Name:        "click_element",
		Description: "Click the left button at the centre of an element: by its ref from observe, or by its role and whole name (then it waits until exactly one such element shows, enabled and still, and fails naming them when several match).",
		Annotations: &mcp.ToolAnnotations{Title: "Click an element"},
	}, input, func(ctx context.Context, _ *mcp.CallToolRequest, c *client.Client, in refInput) (textResult[doneResult], error) {
		l, err := locate(c, in.Ref, in.Role, in.Name)
		if err != nil {
			return textResult[doneResult]{}, err
		}
		if l != nil {
			if err := l.Click(ctx); err != nil {
				return textResult[doneResult]{}, locatorErr(err)
			}
			return done("clicked " + l.String()), nil
		}
		if err := c.Click(ctx, aci.Ref(in.Ref)); err != nil {
			return textResult[doneResult]{}, err
		}
		return done("clicked " + in.Ref), nil
	})

	addTool(s, &mcp.Tool{
		Name:        "invoke_action",
		Description: "Perform an element's accessibility action (click, toggle, activate...) by its ref from observe, without moving the pointer.",
		Annotations: &mcp.ToolAnnotations{Title: "Invoke an element's action"},
	}, input, func(ctx context.Context, _ *mcp.CallToolRequest, c *client.Client, in invokeInput) (textResult[doneResult], error) {
		if err := c.InvokeAction(ctx, aci.Ref(in.Ref), in.Action); err != nil {
			return textResult[doneResult]{}, err
		}
		if in.Action == "" {
			return done("invoked " + in.Ref), nil
		}
		return done("invoked " + in.Action + " on " + in.Ref), nil
	})

	addTool(s, &mcp.Tool{
		Name:        "set_value",
		Description: "Set the value or text of an element (a text field, a slider...), replacing what it held: by its ref from observe, or by its role and whole name (then it waits until exactly one such element shows, enabled and still, and types the text when the element takes no value).",
		Annotations: &mcp.ToolAnnotations{Title: "Set an element's value"},
	}, overwrite, func(ctx context.Context, _ *mcp.CallToolRequest, c *client.Client, in setValueInput) (textResult[doneResult], error) {
		l, err := locate(c, in.Ref, in.Role, in.Name)
		if err != nil {
			return textResult[doneResult]{}, err
		}
		if l != nil {
			if err := l.Fill(ctx, in.Value); err != nil {
				return textResult[doneResult]{}, locatorErr(err)
			}
			return done("set " + l.String()), nil
		}
		if err := c.SetValue(ctx, aci.Ref(in.Ref), in.Value); err != nil {
			return textResult[doneResult]{}, err
		}
		return done("set " + in.Ref), nil
	})

	addTool(s, &mcp.Tool{
		Name:        "wait_for",
		Description: "Wait until an element matching a role and/or a name (or value) substring appears in the accessibility tree, or with gone, until none does. Returns the element with its ref. It observes the tree, so the next observe with diff is against what it saw last.",
		Annotations: &mcp.ToolAnnotations{Title: "Wait for an element"},
		InputSchema: bounded[waitForInput](map[string]float64{"timeout_ms": float64(maxWaitFor.Milliseconds())}),
	}, readLocal, s.waitFor)

	addTool(s, &mcp.Tool{
		Name:        "list_windows",
		Description: "List the top-level windows: id, title, application, bounds, which is active, and which are minimised, maximised or full screen where the desktop says.",
		Annotations: &mcp.ToolAnnotations{Title: "List windows"},
	}, readLocal, func(ctx context.Context, _ *mcp.CallToolRequest, c *client.Client, _ struct{}) (textResult[windows], error) {
		ws, err := c.ListWindows(ctx)
		if err != nil {
			return textResult[windows]{}, err
		}
		states := s.windowStates(ctx, c, ws)
		out := windows{Windows: []window{}}
		var b strings.Builder
		for _, w := range ws {
			st := states[w.ID]
			win := window{ID: w.ID, Title: w.Title, App: w.App, BBox: w.BBox, Active: w.Active != nil && *w.Active,
				Minimized: st.Minimized, Maximized: st.Maximized, Fullscreen: st.Fullscreen}
			out.Windows = append(out.Windows, win)
			fmt.Fprintf(&b, "%d %q", w.ID, w.Title)
			if w.App != "" {
				fmt.Fprintf(&b, " app=%s", w.App)
			}
			if win.Active {
				b.WriteString(" (active)")
			}
			for _, f := range []struct {
				on   bool
				name string
			}{{st.Minimized, "minimised"}, {st.Maximized, "maximised"}, {st.Fullscreen, "full screen"}} {
				if f.on {
					b.WriteString(" (" + f.name + ")")
				}
			}
			b.WriteByte('\n')
		}
		if len(ws) == 0 {
			b.WriteString("no windows\n")
		}
		return textResult[windows]{b.String(), out}, nil
	})

	addTool(s, &mcp.Tool{
		Name:        "activate_window",
		Description: "Raise and focus a window, by its id from list_windows or by a substring of its title.",
		Annotations: &mcp.ToolAnnotations{Title: "Activate a window"},
	}, inputIdempotent, func(ctx context.Context, _ *mcp.CallToolRequest, c *client.Client, in activateInput) (textResult[doneResult], error) {
		switch {
		case in.ID != nil && in.Title != "":
			return textResult[doneResult]{}, invalid("give the window's id or its title, not both")
		case in.ID != nil:
			if err := c.ActivateWindow(ctx, *in.ID); err != nil {
				return textResult[doneResult]{}, err
			}
			return done(fmt.Sprintf("activated window %d", *in.ID)), nil
		case in.Title != "":
			if err := c.ActivateWindowTitled(ctx, in.Title); err != nil {
				return textResult[doneResult]{}, err
			}
			return done(fmt.Sprintf("activated the window titled %q", in.Title)), nil
		}
		return textResult[doneResult]{}, invalid("give the window's id or its title")
	})

	addTool(s, &mcp.Tool{
		Name:        "launch_app",
		Description: "Start an application on the desktop. The runtime may refuse it.",
		Annotations: &mcp.ToolAnnotations{Title: "Launch an application"},
	}, hints{destructive: true, openWorld: true}, func(ctx context.Context, _ *mcp.CallToolRequest, c *client.Client, in launchInput) (textResult[doneResult], error) {
		if err := c.LaunchApp(ctx, in.App, in.Args...); err != nil {
			return textResult[doneResult]{}, err
		}
		return done("launched " + in.App), nil
	})

	addTool(s, &mcp.Tool{
		Name:        "clipboard_get",
		Description: "Read the clipboard's text.",
		Annotations: &mcp.ToolAnnotations{Title: "Read the clipboard"},
	}, readLocal, func(ctx context.Context, _ *mcp.CallToolRequest, c *client.Client, _ struct{}) (textResult[clipboardText], error) {
		t, err := c.ClipboardGet(ctx)
		if err != nil {
			return textResult[clipboardText]{}, err
		}
		return textResult[clipboardText]{t, clipboardText{t}}, nil
	})

	addTool(s, &mcp.Tool{
		Name:        "clipboard_set",
		Description: "Put text on the clipboard, replacing what it held.",
		Annotations: &mcp.ToolAnnotations{Title: "Set the clipboard"},
	}, hints{destructive: true, idempotent: true}, func(ctx context.Context, _ *mcp.CallToolRequest, c *client.Client, in clipboardText) (textResult[doneResult], error) {
		if err := c.ClipboardSet(ctx, in.Text); err != nil {
			return textResult[doneResult]{}, err
		}
		return done(fmt.Sprintf("the clipboard holds %d bytes", len(in.Text))), nil
	})

	addTool(s, &mcp.Tool{
		Name:        "exec",
		Description: "Run a command on the computer (argv without a shell, or a shell command line) and return its exit status and output once it ends. The runtime may refuse it, saying why.",
		Annotations: &mcp.ToolAnnotations{Title: "Run a command"},
		InputSchema: bounded[execInput](map[string]float64{"timeout_ms": float64(maxExecTimeout.Milliseconds())}),
	}, hints{destructive: true, openWorld: true}, s.exec)
}

func done(text string) textResult[doneResult] {
	return textResult[doneResult]{text, doneResult{OK: true}}
}

// locate returns the Locator that role and name describe, or nil when the
// element is named by ref; exactly one of the two ways is accepted.
func locate(c *client.Client, ref, role, name string) (*client.Locator, error) {
	switch {
	case ref != "" && (role != "" || name != ""):
		return nil, invalid("give the element's ref, or its role and name, not both")
	case ref != "":
		return nil, nil
	case role == "" && name == "":
		return nil, invalid("give the element's ref, or its role and name")
	}
	return c.ByRole(role, name), nil
}

// locatorErr gives a locator's failure the code an agent acts on: several
// matches are an invalid action (name the element better); a timeout, a
// refusal or a stale ref keep theirs.
func locatorErr(err error) error {
	if errors.Is(err, client.ErrStrict) {
		return &aci.Error{Code: aci.CodeInvalidAction, Detail: err.Error(), Err: err}
	}
	if ae := (*aci.Error)(nil); errors.As(err, &ae) {
		return &aci.Error{Code: ae.Code, Detail: err.Error(), Err: err}
	}
	return err
}

// exec runs a buffered exec; see Options.Dial for how cancellation reaches
// the command.
func (s *Server) exec(ctx context.Context, req *mcp.CallToolRequest, c *client.Client, in execInput) (textResult[execOutput], error) {
	var zero textResult[execOutput]
	x := &aci.ExecRequest{Argv: in.Argv, Shell: in.Shell, Dir: in.Cwd, Env: in.Env}
	switch {
	case len(in.Argv) > 0 && in.Shell != "":
		return zero, invalid("give argv or shell, not both")
	case len(in.Argv) == 0 && in.Shell == "":
		return zero, invalid("give argv or shell")
	}
	if in.Stdin != "" {
		x.Stdin = &in.Stdin
	}
	if in.TimeoutMS < 0 {
		return zero, invalid("timeout_ms %d is negative", in.TimeoutMS)
	}
	x.Timeout = time.Duration(in.TimeoutMS) * time.Millisecond
	if a := x.Action(false); a.Validate() != nil {
		return zero, a.Validate()
	}
	sess, mark := c, func(err error) error { return err }
	if s.opts.Dial != nil {
		c, err := s.opts.Dial(ctx)
		if err != nil {
			return zero, own(err)
		}
		// Closing the session ends the command if it still runs: that is
		// how a cancelled call reaches the runtime.
		defer c.Close()
		sess, mark = c, own
	}
	what := in.Shell
	if what == "" {
		what = strings.Join(in.Argv, " ")
	}
	stop := newProgress(req).every(ctx, s.opts.ProgressInterval, func(d time.Duration) string {
		if d == 0 {
			return "started: " + what
		}
		return fmt.Sprintf("running for %.1f s", d.Seconds())
	})
	res, err := sess.Exec(ctx, x)
	stop()
	if err != nil {
		return zero, mark(err)
	}
	out := execOutput{ExitCode: res.ExitCode, TimedOut: res.TimedOut, Stdout: res.Stdout, Stderr: res.Stderr,
		StdoutTruncated: res.StdoutTruncated, StderrTruncated: res.StderrTruncated, DurationMS: res.DurationMS}
	if res.Signal != nil {
		out.Signal = *res.Signal
	}
	return textResult[execOutput]{execText(&out), out}, nil
}

// execText is exec's answer for the model: how it ended, then its output.
func execText(o *execOutput) string {
	var b strings.Builder
	switch {
	case o.TimedOut:
		fmt.Fprintf(&b, "timed out after %.0f ms", o.DurationMS)
	case o.ExitCode == nil:
		fmt.Fprintf(&b, "killed by signal %d after %.0f ms", o.Signal, o.DurationMS)
	default:
		fmt.Fprintf(&b, "exit status %d after %.0f ms", *o.ExitCode, o.DurationMS)
	}
	for _, ch := range []struct {
		name, text string
		cut        bool
	}{{"stdout", o.Stdout, o.StdoutTruncated}, {"stderr", o.Stderr, o.StderrTruncated}} {
		if ch.text == "" {
			continue
		}
		fmt.Fprintf(&b, "\n--- %s", ch.name)
		if ch.cut {
			b.WriteString(" (truncated)")
		}
		b.WriteString(" ---\n")
		b.WriteString(ch.text)
	}
	return b.String()
}

// Limits of wait_for, and the longest exec timeout the schema admits (the
// runtime clamps it to its own cap, ExecOptions.MaxTimeout, 10 minutes by
// default).
const (
	defaultWaitFor = 10 * time.Second
	maxWaitFor     = 2 * time.Minute
	maxExecTimeout = time.Hour
)

// waitFor waits with the Client's WaitFor, reporting its observations as
// progress.
func (s *Server) waitFor(ctx context.Context, req *mcp.CallToolRequest, c *client.Client, in waitForInput) (textResult[waitForOutput], error) {
	var zero textResult[waitForOutput]
	if in.Role == "" && in.Name == "" && in.Value == "" {
		return zero, invalid("give a role, a name or a value to wait for")
	}
	if in.TimeoutMS < 0 || time.Duration(in.TimeoutMS)*time.Millisecond > maxWaitFor {
		return zero, invalid("timeout_ms %d is outside 0 to %d", in.TimeoutMS, maxWaitFor.Milliseconds())
	}
	timeout := defaultWaitFor
	if in.TimeoutMS > 0 {
		timeout = time.Duration(in.TimeoutMS) * time.Millisecond
	}
	if in.Exact {
		return waitExact(ctx, c, in, timeout)
	}
	what := describeMatch(in)
	start := time.Now()
	prog := newProgress(req)
	var polls int
	var lastReport time.Time
	wr := client.WaitForRequest{
		Role: in.Role, Name: in.Name, Value: in.Value, IgnoreCase: true,
		Until: client.WaitAppears, Timeout: timeout, Interval: s.opts.PollInterval, Desktop: in.Desktop,
		Observed: func(n int) {
			polls = n
			if n == 1 || time.Since(lastReport) >= s.opts.ProgressInterval {
				lastReport = time.Now()
				prog.report(ctx, fmt.Sprintf("waiting for %s: %d observations in %d ms", what, n, time.Since(start).Milliseconds()))
			}
		},
	}
	if in.Gone {
		wr.Until = client.WaitDisappears
	}
	el, err := c.WaitFor(ctx, wr)
	// The observation that ended the wait is the one after the last
	// reported.
	polls++
	elapsed := time.Since(start).Milliseconds()
	if err != nil {
		if aci.CodeOf(err) == aci.CodeTimeout && ctx.Err() == nil {
			state := "no"
			if in.Gone {
				state = "still a"
			}
			return zero, aci.Errorf(aci.CodeTimeout, "%s %s after %d ms (%d observations)", state, what, elapsed, polls-1)
		}
		return zero, err
	}
	out := waitForOutput{Polls: polls, ElapsedMS: elapsed}
	when := "already"
	if polls > 1 {
		when = fmt.Sprintf("after %d ms", elapsed)
	}
	if in.Gone {
		return textResult[waitForOutput]{fmt.Sprintf("no %s (%s)", what, when), out}, nil
	}
	out.Element = &element{Ref: el.Ref, Role: el.Role, Name: el.Name, Value: el.Value, States: el.States, BBox: el.BBox}
	return textResult[waitForOutput]{fmt.Sprintf("%s %s %q (%s)", el.Ref, el.Role, el.Name, when), out}, nil
}

func describeMatch(in waitForInput) string {
	var parts []string
	if in.Role != "" {
		parts = append(parts, in.Role)
	} else {
		parts = append(parts, "element")
	}
	if in.Name != "" {
		parts = append(parts, fmt.Sprintf("named like %q", in.Name))
	}
	if in.Value != "" {
		parts = append(parts, fmt.Sprintf("with a value like %q", in.Value))
	}
	return strings.Join(parts, " ")
}

// waitExact is wait_for by the locator rules: the element whose role, name
// and value are those given, strictly.
func waitExact(ctx context.Context, c *client.Client, in waitForInput, timeout time.Duration) (textResult[waitForOutput], error) {
	var zero textResult[waitForOutput]
	l := c.Locate(client.By{Role: in.Role, Name: in.Name, Value: in.Value}).WithTimeout(timeout)
	if in.Desktop {
		l = l.OnDesktop()
	}
	start := time.Now()
	if in.Gone {
		if err := l.Expect().ToBeHidden(ctx); err != nil {
			return zero, locatorErr(err)
		}
		return textResult[waitForOutput]{fmt.Sprintf("no %s shows (after %d ms)", l, time.Since(start).Milliseconds()), waitForOutput{ElapsedMS: time.Since(start).Milliseconds()}}, nil
	}
	if err := l.Expect().ToBeVisible(ctx); err != nil {
		return zero, locatorErr(err)
	}
	el, err := l.Element(ctx)
	if err != nil {
		return zero, locatorErr(err)
	}
	elapsed := time.Since(start).Milliseconds()
	out := waitForOutput{ElapsedMS: elapsed, Element: &element{Ref: el.Ref, Role: el.Role, Name: el.Name, Value: el.Value, States: el.States, BBox: el.BBox}}
	return textResult[waitForOutput]{fmt.Sprintf("%s %s %q (after %d ms)", el.Ref, el.Role, el.Name, elapsed), out}, nil
}
