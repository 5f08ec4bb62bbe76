// Package shinken lets a program be the computer an AI agent drives. It
// implements the Agent-Computer Interface, ACI v0: typed JSON (and binary
// media) messages on a WebSocket between an agent's client and a runtime
// inside the sandbox.
//
// The package has three parts:
//
//   - The wire: a Go type for every message of the schema (Hello, Action,
//     Observation...), a strict decoder ([Unmarshal]) that rejects unknown
//     fields, duplicate keys and every rule the schema states, with errors
//     that name the JSON path, and the binary frame codec.
//   - The [Runtime]: an http.Handler that serves one [Backend] to any number
//     of clients. A backend is any value implementing some of the small
//     interfaces in backend.go ([Capturer], [Injector], [A11y], [Executor]
//     and optional ones); the welcome advertises exactly what it found.
//     Gestures, screenshots (downscale, frame-hash dedup, PNG/JPEG),
//     screencasts (dirty tiles, keyframes, idle suppression, resume), exec
//     and the structured-observation engine ([Observer]: stable e<N> refs,
//     tree_text, diffs, settle) are done here once, for every backend.
//   - The [Client]: typed methods for every verb and query, a screenshot
//     cache, screencasts composited into whole frames, streamed exec, and
//     [Client.WaitFor] an element to appear, disappear or change.
//
// Actions are settled: every request observes the effects of every action
// acked before it. The Runtime acks an input action only once the
// backend's [Settler] says the UI has handled it and is quiet (bounded by
// [RuntimeOptions.SettleCap]), so an agent that acts and then looks, with
// no sleep, never sees the past. settle.go says why the wait happens before
// the ack; [RuntimeOptions.OnSettle] reports each settle for metrics.
//
// Backends live in their own packages: backend/headless (a pure-software
// desktop to unit-test agents against), backend/x11 (a real X server), and
// backend/osexec (the OS executor every backend shares).
//
// Wire errors read "code: detail". The codes are the Code constants; the
// Client returns them as *Error values that match the Err sentinels with
// errors.Is.
package shinken
