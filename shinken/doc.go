// Package shinken lets a program be the computer an AI agent drives: it
// serves a desktop (a [Backend]) to agents over the Agent-Computer
// Interface, ACI v0. It is for people who build a runtime or a backend;
// agents use package shinken/client, and the messages, their codec and
// their error codes are package shinken/aci.
//
// A [Runtime] is an http.Handler serving one backend to any number of
// clients (the package's Example serves the headless desktop):
//
//	rt := shinken.NewRuntime(desk, &shinken.RuntimeOptions{Token: token, Executor: osexec.New(nil)})
//	http.Handle("/aci", rt)
//
// It authenticates the hello, runs input verbs in arrival order (input is
// one shared device), and does once, for every backend, what agents need:
// gestures composed from primitive events (a field that means nothing on a
// verb is refused with invalid_action, never acked and ignored),
// screenshots with frame-hash dedup, screencasts of dirty tiles, exec with
// honest timeouts, and the observation engine ([Observer]: stable e<N>
// refs, tree_text, diffs). It acks an input action once the backend's
// [Settler] says the UI has handled it and gone quiet, so an agent that acts
// and then looks, with no sleep, never sees the past.
//
// It reports what it does as [Event] values, to a [Recorder] (metrics) and
// to a [Feed]'s subscribers, which never hold it up (ExampleFeed).
// [Runtime.TakeOver] lets a person hold the input (ExampleRuntime_TakeOver).
//
// # Writing a backend
//
// A backend is any value implementing some of the small interfaces here:
// [Capturer], [Injector], [A11y] and [Executor] at the core, and the
// optional [Clipboard], [Windows], [Launcher], [Locator], [PointerReporter],
// [ChangeWatcher], [DamageTracker], [Settler] and [PlatformReporter]. The
// Runtime finds them by type assertion and its welcome advertises exactly
// what it found. Each interface's documentation is its contract, which
// package shinken/shinkentest checks. A backend's error reaches the agent
// as "code: detail": return an *aci.Error (or wrap one of its sentinels) to
// choose the code, and wrap errors.ErrUnsupported for what cannot be done.
// Backends here: backend/headless, backend/x11, backend/robotgo, and
// backend/osexec, the OS executor every backend shares.
package shinken
