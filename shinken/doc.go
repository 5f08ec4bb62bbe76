// Package shinken lets a program be the computer an AI agent drives: it
// serves a desktop (a [Backend]) to agents over the Agent-Computer
// Interface, ACI v0.
//
// This package is for people who build a runtime or a backend. Agents talk
// to a runtime with package shinken/client; the messages themselves, their
// codec and their error codes are package shinken/aci.
//
// # Serving a backend
//
// A [Runtime] is an http.Handler that serves one backend to any number of
// clients:
//
//	rt := shinken.NewRuntime(desk, &shinken.RuntimeOptions{Token: token, Executor: osexec.New(nil)})
//	http.Handle("/aci", rt)
//
// It authenticates the hello, runs input verbs in arrival order (runtime
// wide: input is one shared device), and does once, for every backend, what
// agents need: gestures composed from primitive events, screenshots
// (downscale, frame-hash dedup, PNG and JPEG), screencasts of dirty tiles
// with keyframes and resume, exec with honest timeouts and budgets, and the
// structured observation engine ([Observer]: stable e<N> element refs,
// tree_text, diffs, settle).
//
// # Watching and taking over
//
// [RuntimeOptions.Feed] publishes every session's actions (outcome, ack
// and settle times), observations and exec runs to a [Feed]'s subscribers,
// never waiting for them; package shinken/record keeps them, with the
// screen, in one file. [Runtime.TakeOver] lets a person hold the input:
// the agent's mutating actions are refused with permission_denied until
// the [Takeover] is released.
//
// # Writing a backend
//
// A backend is any value implementing some of the small interfaces in this
// package: [Capturer], [Injector], [A11y] and [Executor] at the core, and
// the optional [Clipboard], [Windows], [Launcher], [PointerReporter],
// [ChangeWatcher], [DamageTracker], [Settler] and [PlatformReporter]. The
// Runtime finds them by type assertion and its welcome advertises exactly
// what it found.
// Each interface's documentation is its contract; package
// shinken/shinkentest checks a backend against all of them, directly and
// through a Runtime and a Client. Backends here: backend/headless (a
// pure-software desktop to unit-test agents against), backend/x11 (a real X
// server), backend/robotgo (cgo, macOS and Windows too), and backend/osexec
// (the OS executor every backend shares).
//
// Actions are settled: every request observes the effects of every action
// acked before it. The Runtime acks an input action only once the
// backend's [Settler] says the UI has handled it and is quiet (bounded by
// [RuntimeOptions.SettleCap]), so an agent that acts and then looks, with
// no sleep, never sees the past. settle.go says why the wait happens before
// the ack; [RuntimeOptions.OnSettle] reports each settle for metrics.
//
// Gestures are composed here from the backends' primitive events, so every
// backend honours the same fields (see aci.Action): keys held during a click,
// double click, right click, drag, scroll or mouse_down, the button of a
// click, double click, drag, mouse_down or mouse_up, ms holding a key. A
// field the runtime accepts does what it says; on a verb where it means
// nothing it is refused with invalid_action, never acked and ignored.
//
// Backend types and wire types are kept apart where they differ on purpose:
// a backend's [Node], [Window] and [Frame] carry Go values (image.Rectangle,
// *image.RGBA, its own identities), while aci.Element, aci.WindowInfo and
// aci.CoordinateSpace are the JSON the schema defines (bboxes as [x, y, w,
// h] arrays, refs instead of identities). The Runtime converts between them.
//
// Errors a backend returns reach the agent as "code: detail": return an
// *aci.Error (or wrap one of its sentinels) to choose the code, and wrap
// errors.ErrUnsupported for what cannot be done right now.
package shinken
