// Package shinkentest is for the tests of code around a Shinken desktop:
// an agent's tests drive any backend through a connected client in one line
// ([Serve]), and a backend's tests run the conformance suite every backend
// must pass ([Run]), in the manner of testing/slogtest and testing/fstest.
//
// # Testing an agent
//
// [Serve] runs a [shinken.Runtime] for a backend on a test HTTP server and
// returns a [client.Client] connected to it, all closed when the test ends.
// With the headless desktop, an agent's test needs no display:
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
// A [client.Locator] names an element by role and name and waits until it
// can act on it; [Expect] waits until its condition holds, and otherwise
// fails the test with what it expected, what it last saw and the tree
// around the element.
//
// Under CI (the environment variable CI is "true"), Serve traces the
// session: the actions, the screen after each one that changed it, and the
// trees observed, kept in memory. When the test fails, the trace is written
// as a recording (package record's format) to the test's artifact folder
// (testing.T.ArtifactDir, with go test -artifacts) or else under
// [TraceDir] in the system's temporary folder, and the test's log names
// the file; the daemon's inspector page replays it (its Replay… button). A
// passing test leaves nothing. [ServeWith] and [ServeOptions.Trace] turn
// tracing on or off anywhere.
//
// The third argument takes the [shinken.RuntimeOptions] of the Runtime (an
// Authorizer, a Feed...); nil means the defaults, which run no commands:
// an agent that calls Exec needs an Executor,
//
//	c := shinkentest.Serve(t, desk, &shinken.RuntimeOptions{Executor: osexec.New(nil)})
//
// (osexec is shinken.dev/go/backend/osexec). An agent's test binary links
// this package's helpers and the client, not the suite's machinery: no
// schema validator comes with it.
//
// # The conformance suite
//
// A backend's test calls [Run] with a function that makes a fresh backend for
// each case:
//
//	func TestConformance(t *testing.T) {
//		shinkentest.Run(t, func(t *testing.T) shinken.Backend {
//			b := mybackend.New(nil)
//			t.Cleanup(func() { b.Close() })
//			return b
//		})
//	}
//
// Every case runs as a subtest of t with its own backend, so a failure names
// the contract that broke (TestConformance/ClickButton) and one case cannot
// leave state behind for the next. Cases never run in parallel: a backend may
// be a whole X server.
//
// A case skips when the backend lacks the interface it checks, or when the
// backend answers with an error wrapping errors.ErrUnsupported. The skip
// message names the interface or the error, so `go test -v` shows what a
// backend does not do.
//
// # The fixture application
//
// The cases that click, type and read back need an application on screen
// with known parts. A [Fixture] opens it and says where its parts are, as an
// [App]: a top-level window holding a push button, a single-line entry, and
// a way to count the button's activations.
//
// [Run] uses [LaunchFixture] with its defaults: it launches the application
// named "shinkentest" through the backend's [shinken.Launcher], waits for its
// window to appear, activates it, and finds its parts in the accessibility
// tree by role:
//
//   - a node with role "push button": the button;
//   - a node with role "text" or "entry" and the state "editable", preferring
//     one that is also "single line": the entry;
//   - a node with role "label" whose text (name or value) is "0": the
//     counter. The application sets it to the decimal number of the button's
//     activations, so a click that worked reads back as "1".
//
// Launching it twice must open two windows (the Windows case needs two), and
// Open must leave the new window raised, unobscured and active. Any toolkit
// can provide such an application in a few lines. The headless
// backend's test registers one built from its widgets. An X11 backend's test
// starts a small GTK program and passes its path through [RunWith]:
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
// A backend whose fixture cannot be found that way (no Launcher, no labels,
// a button that reports its clicks elsewhere) implements [Fixture] itself and
// returns an [App] whose Activations reads the count however it likes.
//
// # The cases
//
// Each case is one contract; [Run] runs them in this order, as subtests
// named after them. They run twice: against the backend itself, and then,
// under the subtest Wire, against the same backend served by a
// [shinken.Runtime] and seen through a [client.Client], so that what a
// backend returns is also what an agent observes. The wire run leaves out
// SnapshotShape, Watch and UnknownKeyRefused: the wire carries neither the
// tree's structure nor change notifications, and its key verb sends whole
// combos. Before the cases, CheckBackend fails when
// [shinken.CheckBackend] finds a capability missed by its signature.
// [Options.Proxy] puts a proxy of the test's choosing between the suite's
// clients and its Runtimes: this module's backends check every message
// against the ACI schema that way.
//
//   - Display: Display reports a non-empty action space with a positive DPR,
//     and the same answer twice when nothing changed.
//   - CaptureScreen: A screen capture covers the whole action space: Source is
//     (0,0)-(W,H), the image is W×H, its origin is (0,0), and every pixel is
//     opaque.
//   - CaptureUnchanged: Capturing twice with nothing changed gives the same
//     pixels.
//   - FrameKeepsPixels: A returned frame keeps its pixels after the screen
//     changes (the backend never redraws an image it handed out), and the next
//     capture shows the change.
//   - CaptureWindow: A window capture's Source is the window's bbox as Windows
//     lists it, and its pixels are the screen's pixels there (the fast path
//     agrees with the general one) for an active, unobscured window.
//   - CaptureActiveWindow: active_window captures the window Windows reports
//     as active.
//   - CaptureUnknownWindow: Capturing a window that does not exist fails with
//     ErrNoSuchWindow.
//   - PointerPosition: After a pointer move, PointerPosition reports where the
//     pointer went, corners included.
//   - ClickButton: A click (move, press, release) inside a push button's bbox
//     activates the button exactly once.
//   - TypeText: Text typed into a focused entry reads back as the entry's
//     accessible value, whatever its characters: ASCII, accents, symbols, CJK.
//   - KeyCombos: Key events edit a focused entry as a person's keyboard would:
//     BackSpace, Left, Home, End, shift+letter, and ctrl+a to select all.
//   - UnknownKeyRefused: An unknown key name is refused: Key fails with
//     ErrInvalidAction for a name that is neither an X keysym name nor a
//     single character ("frob", the alias "ctrl" the core resolves before a
//     backend sees it, "F36", "ab"), pressed or released, and nothing is
//     typed. A combo broken by such a name leaves no modifier held: the next
//     text types as itself.
//   - ShiftClick: A click with Shift held extends the entry's selection from
//     the caret to the click, as the core composes a click whose action holds
//     keys.
//   - Clipboard: Text set on the clipboard reads back unchanged, non-ASCII
//     included.
//   - ClipboardKeys: ctrl+c in a focused entry copies its selection to the
//     clipboard, and ctrl+v pastes the clipboard into it.
//   - Windows: Windows lists each top-level window once, with a title and a
//     bbox; Activate makes the named window the only active one; activating an
//     unknown window fails with ErrNoSuchWindow.
//   - SnapshotShape: A snapshot is a well-formed pre-order tree (parents
//     before children, depths consistent, IDs unique) and honours MaxNodes.
//   - TreeMatchesPixels: The tree agrees with the pixels: the button's and the
//     entry's bboxes lie inside their window's bbox and on screen, and
//     something is drawn there (the pixels are not one flat colour).
//   - SetValue: set_value replaces an entry's text, and the new text reads
//     back.
//   - InvokeAction: invoke_action with no action name runs the button's first
//     action; an action the node lacks fails with ErrNoSuchAction.
//   - StaleElement: An ID the backend never issued is stale: Perform fails
//     with ErrStaleElementRef rather than acting on some other node.
//   - Watch: Watch delivers a value after an accessible change, and closes its
//     channel when its context is done.
//   - LaunchUnknownApp: Launching an application that does not exist fails
//     with ErrNoSuchApp.
//   - Settled: Through a Runtime and a Client, with no wait between acting and
//     looking: the screenshot right after a click on the button differs from
//     the one before, the next observe shows the counter it changed, and text
//     typed right after a click on the entry lands in the entry.
//
// # Timing
//
// A backend may apply input asynchronously (an X server, an AT-SPI bus).
// After each action a case polls for the expected state until
// [Options.Timeout]; it never sleeps a fixed time. A synchronous backend such
// as headless passes on the first poll.
package shinkentest
