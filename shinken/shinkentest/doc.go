// Package shinkentest is the conformance suite for Shinken backends, in the
// manner of testing/slogtest and testing/fstest: one suite, run against every
// implementation, each case named and explaining the contract it checks.
//
// # Running it
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
// Display, CaptureScreen, CaptureUnchanged, CaptureWindow,
// CaptureActiveWindow and CaptureUnknownWindow check the coordinate spaces
// of captures. PointerPosition checks where moves leave the pointer.
// ClickButton, TypeText (ASCII, "é", "✓", "日本"...), KeyCombos,
// ShiftClick and ClipboardKeys drive the fixture with the Injector and read
// it back through A11y. Clipboard is a round trip. Windows lists and activates two windows.
// SnapshotShape checks the tree's form and budgets; TreeMatchesPixels that
// bboxes agree with what is drawn. SetValue, InvokeAction and StaleElement
// check A11y.Do and its errors; Watch the change notifications;
// LaunchUnknownApp the Launcher's error. The comment on each case in the
// source states its contract.
//
// # Timing
//
// A backend may apply input asynchronously (an X server, an AT-SPI bus).
// After each action a case polls for the expected state until
// [Options.Timeout]; it never sleeps a fixed time. A synchronous backend such
// as headless passes on the first poll.
package shinkentest
