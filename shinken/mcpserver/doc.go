// Package mcpserver serves an ACI session over the Model Context Protocol,
// so that any MCP client (a coding agent, a desktop assistant, an
// MCP-speaking framework) can see and drive the desktop with no code of
// ours on its side. It is built on the official Go SDK
// (github.com/modelcontextprotocol/go-sdk); [Server.MCP] hands out the
// SDK's server for anything this package does not do.
//
// A Server drives one [client.Client], local or remote. Serve it on any
// MCP transport: [Server.Run] with &mcp.StdioTransport{} for a client that
// starts the program, or [Server.Handler] for streamable HTTP behind a
// bearer token. The handler meets the transport's security rules on its
// own, wherever it is mounted: it refuses a foreign Origin and a Host that
// does not name the server with 403 (Options.AllowedOrigins and
// AllowedHosts widen them), a missing or wrong token with 401 and a
// WWW-Authenticate challenge, and a request without its session's
// Mcp-Session-Id with 400.
//
// # Tools
//
// The Anthropic computer-use member tools, under their trained names and
// inputs (those of computer_toolset_20260801): screenshot, zoom,
// cursor_position, mouse_move, left_click, right_click, middle_click,
// double_click, triple_click, left_click_drag, left_mouse_down,
// left_mouse_up, scroll, type, key, hold_key and wait. The toolset package
// runs them and owns their scaling: screenshots come at the model's size
// (Options.Screen, XGA by default, aspect ratio kept), coordinates are
// read in that space and mapped back to screen pixels exactly, and zoom
// captures at native resolution. Each MCP call is one member call: MCP has
// no turn, so stopping a turn at its first failure is the client's to do.
//
// The structured tools work on the accessibility tree and the desktop:
// observe (tree_text, full or diff), click_element, invoke_action and
// set_value by element ref (click_element and set_value also by role and
// whole name, resolved by the rules of a client.Locator: strict, waiting
// until the element can take the action), wait_for an element (with
// exact, by the same rules), list_windows,
// activate_window, launch_app, clipboard_get, clipboard_set and exec (a
// buffered command, refused with the runtime's Authorizer's reason when
// its gate says no).
//
// The machine's tools: read_file and write_file (binary-safe: base64, or
// text; by offset and length, or appending, so a file of any size moves
// in chunks), list_files (in pages, with a cursor), stat, exists, mkdir,
// move and delete; shell, a persistent bash on an 80×24 terminal whose
// working directory, variables and jobs last from call to call, which
// runs a line to its end and answers its exit code (or that it still
// runs), bounds its output (16 KiB by default, 1 MiB at most, with what
// was cut), interrupts, ends the input of, or kills its foreground
// program, refuses a call made while another runs as busy, and ends with
// the MCP session, with close, or after 30 idle minutes, everything it
// started with it; screen_size; open, a file or a URL with its
// default application; and key_down and key_up, which hold a modifier for
// the session's later computer-use calls (ACI holds keys for one action at
// a time, so each click, scroll, drag, move and key is made with it down,
// and nothing is left held when the session ends). ACI has no verbs of their own for these: they
// are made of exec and launch_app (see package machine's files, Shell
// and Open), so the runtime's Authorizer and plugins judge them. A file
// tool's exec is fixed plumbing the runtime recognizes: its Authorizer is
// shown what the call does (shinken.AuthRequest.Intent, a read or an
// edit of the absolute path; open, the opener's command line, dynamic),
// never the script; so are the shell started (an interactive command) and
// each line typed at it (a command; dynamic, since whatever reads the
// terminal reads it, unless Options.ShellLines makes the shell one that
// types a line only when it reads it as a command line, as a guard that
// allows the shell needs). open is offered only where an opener
// reaches the desktop (never on the headless one).
//
// Background commands (e2b's commands.run with background, list,
// connect, sendStdin and kill): command_start runs a line or an argv in
// the background and answers its handle; command_list lists the
// commands with their pids and states; command_output reads one's output
// (stdout and stderr together, its most recent 1 MiB kept on the
// machine) from an offset, bounded, with what was cut, and its exit
// code once it ended; command_input writes to its standard input, or
// ends it; command_kill kills it, by handle or by pid, with everything it
// started. They run on the MCP session's own ACI session when
// Options.Dial is set, and end with the MCP session whichever way it
// ends. A plugin judges starting one as the command it runs and its
// input as a command line; listing, reading and killing are let through.
// An unknown or ended handle is invalid_action. command_list and
// command_output are read-only; command_start and command_input are
// destructive, non-idempotent and open-world; command_kill is destructive
// and idempotent.
//
// The window tools: close_window, minimize_window, maximize_window,
// move_window and resize_window, by a window's id from list_windows, each
// offered only where the runtime can carry it out (New asks once, see
// machine.Tools.WindowControl): on an X11 desktop with wmctrl, xdotool
// and xprop all five, made of exec (with xdotool and no wmctrl, all but
// maximize_window); on the headless desktop close_window (activate_window
// and alt+F4), move_window (a drag of the title bar) and resize_window (a
// drag of the frame's bottom right corner).
// Each reads the window back and fails when it is not as asked.
//
// # Results and errors
//
// screenshot and zoom answer with MCP image content (a PNG). Every other
// tool answers with a short text for the model and structured content
// described by its output schema. A failure is an MCP tool error (isError,
// so the model sees it), never a protocol error: its text is the ACI wire
// error, "code: detail" ("stale_element_ref: e42 is gone…"), and
// _meta[ErrorCodeMeta] carries the code alone. Arguments that break a
// tool's schema are refused the same way.
//
// # Images
//
// MCP has no binary framing: an image travels as base64 in the JSON-RPC
// answer, a third larger than the PNG. What made it slow was not base64
// but encoding/json around it: the SDK nests three MarshalJSON calls
// around an image, and encoding/json re-scans the output of each one, so
// a screenshot's hundred kilobytes of base64 were scanned three times.
// [Server.Run] on a stdio transport, and [Server.Handler] and
// [Server.TokenHandler], keep the image out of encoding/json: the SDK
// encodes a tool result holding a short random placeholder, and the
// writer of the answer puts the image's base64 in its place as it writes
// it, which is byte for byte the message the SDK would have written. A
// screenshot then costs about a tenth more than the ACI one (binary
// frames, no base64) over stdio and a fifth more over HTTP, where it cost
// half as much again. The SDK's own transports and handlers, connected to
// [Server.MCP] directly, still encode images through encoding/json.
//
// # Annotations
//
// Every tool states every hint, truthfully: reading tools (screenshot,
// zoom, cursor_position, observe, wait_for, list_windows, clipboard_get,
// wait) are read-only and closed-world. Input reaches whatever app has the
// focus, a browser included, so the input tools are open-world, and
// destructive (a click or a key may delete, send or buy) except those
// whose repetition changes nothing more: mouse_move and activate_window
// are non-destructive and idempotent, set_value and clipboard_set are
// destructive but idempotent. exec and launch_app are destructive,
// non-idempotent and open-world. read_file, list_files and screen_size are
// read-only; write_file is destructive and idempotent; shell and open are
// destructive, non-idempotent and open-world. close_window is destructive
// and idempotent (the window may hold unsaved work); minimize_window,
// maximize_window, move_window and resize_window only rearrange the
// screen: non-destructive and idempotent. All five are closed-world.
//
// # Long calls
//
// exec, wait_for, hold_key and wait report progress to a client that sends
// a progress token: once when they start, then every
// Options.ProgressInterval. Cancelling a call (notifications/cancelled)
// cancels its ACI call. ACI v0 has no message that cancels one call, so,
// when Options.Dial is set, each exec and each hold_key runs on an ACI
// session of its own, which a cancellation closes: the runtime then kills
// the command with its process group, or releases the held keys (which
// would otherwise hold every session's input until the hold ends).
// wait_for stops polling at once; a cancelled wait holds nothing. Run's
// stdio transport and the Server's HTTP handler write no answer to a
// cancelled call, as MCP asks.
//
// # Sessions
//
// All the MCP sessions of one Server share its ACI session: one pointer,
// one set of element refs, one diff baseline (wait_for observes too, so a
// diff after it is against what it saw). That is the desktop's nature (it
// has one pointer and one focus); a program that wants separate diff
// baselines gives each MCP client a Server of its own.
//
// The ACI session may end under the MCP sessions: the runtime's token was
// rotated, its desktop restarted, a remote runtime came back. With
// Options.Dial the Server opens a new one and its MCP sessions go on: a
// program that knows of the change calls [Server.Reconnect] (then the
// next call, whatever it is, runs on the new session); otherwise the first
// call to find the session closed opens the new one, and is made again on
// it if it only reads (screenshot, observe, list_windows...); an input
// call fails with a closed error instead, since it may or may not have
// taken effect. The runtime numbers elements per session: after a new
// session, refs are stale until the next observe.
package mcpserver
