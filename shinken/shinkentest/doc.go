// Package shinkentest is for the tests of code around a Shinken desktop: an
// agent's test drives a backend through a client in one line ([Serve]); a
// backend's test runs the conformance suite ([Run]), as testing/slogtest does.
//
// # Testing an agent
//
// [Serve] returns a [client.Client] connected to a backend served on a test
// HTTP server. With the headless desktop, an agent's test needs no display:
//
//	func TestForm(t *testing.T) {
//		desk := headless.New(nil)
//		shinkentest.Must(t, desk.Launch(t.Context(), "form", nil))
//		c := shinkentest.Serve(t, desk, nil)
//		ctx := t.Context()
//		shinkentest.Must(t, c.ByRole("text", "Name").Fill(ctx, "Ada"))
//		shinkentest.Must(t, c.ByRole("push button", "Submit").Click(ctx))
//		shinkentest.Expect(t, c.ByRole("label", "").Last()).ToHaveText("Submitted: Ada <no email>, newsletter: no.")
//	}
//
// A [client.Locator] finds an element by role and name and waits until it
// can act on it; [Expect] waits until its condition holds, or else fails
// the test with what it expected, what it last saw and the tree around the
// element.
//
// Under CI (the environment variable CI is "true"), or with [ServeTraced],
// Serve keeps a trace in memory: the actions, the screen after each one that
// changed it, the trees observed. If the test fails, the trace is written as
// a recording (package record) to the test's artifact folder (go test
// -artifacts) or else to shinken-traces under os.TempDir, and the test's log
// names the file, which the daemon's inspector page replays. A passing test
// leaves nothing.
//
// The third argument is the Runtime's [shinken.RuntimeOptions]; nil means
// the defaults, which run no commands: an agent that calls Exec needs an
// Executor (package shinken.dev/go/backend/osexec),
//
//	c := shinkentest.Serve(t, desk, &shinken.RuntimeOptions{Executor: osexec.New(nil)})
//
// # The conformance suite
//
// A backend's test gives [Run] a function making a fresh backend per case:
//
//	func TestConformance(t *testing.T) {
//		shinkentest.Run(t, func(t *testing.T) shinken.Backend {
//			b := mybackend.New(nil)
//			t.Cleanup(func() { b.Close() })
//			return b
//		})
//	}
//
// Each case is a subtest with its own backend, so a failure names the broken
// contract (TestConformance/ClickButton) and no case leaves state for the
// next; cases never run in parallel, as a backend may be a whole X server. A
// case skips, naming why, when the backend lacks the interface it checks or
// answers with an error wrapping errors.ErrUnsupported.
//
// # The fixture application
//
// The cases that click, type and read back need an application on screen,
// a window holding a push button, a single-line entry and a label counting
// the button's activations; a [Fixture] opens it and returns its parts as an
// [App]. [Run] uses [LaunchFixture]{}: it launches [FixtureApp] through the
// backend's [shinken.Launcher], waits for its window, activates it, and finds
// its parts in the accessibility tree by role:
//
//   - the button: role "push button";
//   - the entry: role "text" or "entry", state "editable", preferably "single line";
//   - the counter: role "label" whose text (name or value) is "0", set by the
//     application to the decimal count of the button's activations.
//
// Launching it twice must open two windows (the Windows case needs two), and
// Open must leave the new window raised, unobscured and active. The headless
// backend's test registers such an application built from its widgets; an
// X11 backend's test starts a small GTK program through [RunWith]:
//
//	func TestConformance(t *testing.T) {
//		shinkentest.RunWith(t, newXvfbBackend, &shinkentest.Options{
//			Fixture: shinkentest.LaunchFixture{
//				App:  "/usr/bin/python3",
//				Args: []string{"testdata/fixture.py"}, // GtkWindow: Button, Entry, Label("0")
//			},
//			Timeout: 10 * time.Second,
//		})
//	}
//
// A backend that cannot be driven so (no Launcher, no labels, a button that
// counts its clicks elsewhere) implements [Fixture] itself.
//
// # The cases
//
// Each case is one contract, run in this order as a subtest named after it,
// then under Wire through a [shinken.Runtime] and a [client.Client]: what a
// backend returns is what an agent sees. Wire skips SnapshotShape, Watch and
// UnknownKeyRefused (the wire carries no tree structure nor change
// notifications; its key verb sends whole combos). First, CheckBackend fails
// when [shinken.CheckBackend] finds a capability its signature misses.
//
//   - Display: a non-empty action space and a positive DPR, unchanged when idle.
//   - CaptureScreen: a screen capture's Source is (0,0)-(W,H) of the action
//     space, its image W×H at origin (0,0) and opaque.
//   - CaptureUnchanged: two captures with nothing changed have the same pixels.
//   - FrameKeepsPixels: a returned frame keeps its pixels when the screen
//     changes, and the next capture shows the change.
//   - CaptureWindow: an active, unobscured window's capture has its bbox (as
//     Windows lists it) for Source, and the screen's pixels there.
//   - CaptureActiveWindow: active_window captures the window Windows marks active.
//   - CaptureUnknownWindow: capturing a missing window fails with ErrNoSuchWindow.
//   - PointerPosition: it reports where a move put the pointer, corners included.
//   - ClickButton: a move, press and release on a button activate it exactly once.
//   - TypeText: text typed into a focused entry (ASCII, accents, symbols, CJK)
//     reads back as its accessible value.
//   - KeyCombos: key events edit a focused entry as a keyboard would:
//     BackSpace, Left, Home, End, shift+letter, ctrl+a to select all.
//   - UnknownKeyRefused: Key (press or release) fails with ErrInvalidAction
//     and types nothing for a name neither an X keysym name nor one character
//     ("frob", "F36", "ab", "ctrl": an alias the core resolves first); a combo
//     it breaks leaves no modifier held.
//   - ShiftClick: a click with Shift held (as the core composes a click whose
//     action holds keys) extends the entry's selection from the caret.
//   - Clipboard: text set on the clipboard reads back unchanged, non-ASCII too.
//   - ClipboardKeys: ctrl+c copies a focused entry's selection; ctrl+v pastes.
//   - Windows: each top-level window is listed once, with a title and a bbox;
//     Activate makes one the only active one, or fails with ErrNoSuchWindow.
//   - SnapshotShape: a snapshot is a well-formed pre-order tree (parents
//     before children, consistent depths, unique IDs) and honours MaxNodes.
//   - TreeMatchesPixels: the button's and the entry's bboxes lie on screen
//     inside their window's, and something is drawn there (not one colour).
//   - SetValue: set_value replaces an entry's text, which reads back.
//   - InvokeAction: invoke_action with no action name runs the button's first
//     action; an action the node lacks fails with ErrNoSuchAction.
//   - StaleElement: Perform on an ID never issued fails with ErrStaleElementRef.
//   - Watch: it sends after an accessible change, and closes when ctx is done.
//   - LaunchUnknownApp: launching a missing application fails with ErrNoSuchApp.
//   - Settled: through a Runtime, looking right after acting, the screenshot
//     after a click on the button differs, the next observe shows the new
//     count, and text typed right after a click on the entry lands in it.
//
// # Timing
//
// Input may land asynchronously (an X server, an AT-SPI bus): a case polls
// for the state it expects until [Options.Timeout], never sleeping.
package shinkentest
