// Package protocol is the Escouade plugin protocol, version 1, as both of
// its sides see it: the messages (Fact, DecideParams, Decision,
// InitializeParams…), the method table (LookupMethod, MethodTimeout), the
// fact names (IsFact) and the error codes (Code, Error and its sentinels).
// The Host (package escouade) and the plugin SDK (package escouade/plugin)
// both import it, so that a plugin links this package and the JSON-RPC
// codec, never the Host's engines.
//
// The protocol is JSON-RPC 2.0, one message per line, over a plugin's
// standard input and output. Its contract is the JSON Schema of package
// schema; the method table, the timeouts, the fact names and the codes are
// read from it. The decoders here are strict: a key matches only as
// written, a field given twice is an error, and the error (a FieldError)
// names the field's path; fields a message does not know are ignored, as
// the protocol asks, so that messages may grow.
//
// # Decisions
//
// permissions/decide is sent to every plugin with permissions.decide; a
// deny wins, and an ask, a silence past 500 ms, an answer that does not
// hold, or a plugin that cannot answer (crashed and restarting, disabled
// past its crash budget) means ask: a decision fails closed. A request to
// run a program has the shape CommandInput describes (see KindCommand):
// input.command is always the whole command line.
//
// # Files
//
// files/read answers a regular file of the plugin's folder, by a path
// relative to it: no .., no absolute path, nothing hidden, not the
// manifest, no link that leaves the folder or names what is refused; a
// file with more than one name (a hard link: it may be any file of its
// owner, a key or another folder's .env) is refused, and so is a name
// swapped for a link while it is read. A FIFO, a device or a folder is
// notFound. The fs/* methods of script and module plugins follow the same
// rules under each of their roots, hard links refused under the root
// plugin; no write, and no root but plugin, reaches into any plugin's
// folder.
package protocol
