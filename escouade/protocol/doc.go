// Package protocol is the Escouade plugin protocol, version 1, as both
// sides see it: the messages (Fact, DecideParams, Decision,
// InitializeParams…), the method table (LookupMethod, MethodTimeout), the
// fact names (IsFact) and the error codes (Code, Error and its sentinels).
// The Host (package escouade) and the plugin SDK (escouade/plugin) import
// it: a plugin links it and the JSON-RPC codec, never the Host's engines.
//
// The protocol is JSON-RPC 2.0, one message per line, over a plugin's
// standard input and output. Its contract is package schema's JSON Schema,
// whence the method table, timeouts, fact names and codes. The decoders
// are strict: keys match only as written, a field given twice is an
// error, each error a FieldError naming the field's path; unknown fields
// are ignored, so that messages may grow.
//
// # Decisions
//
// permissions/decide goes to every plugin with permissions.decide: a deny
// wins; an ask, a silence past 500 ms, an answer that does not hold, or a
// plugin that cannot answer (restarting, disabled) means ask, so that a
// decision fails closed. KindCommand describes a request to run a program.
//
// # Files
//
// files/read answers a regular file of the plugin's folder by a relative
// path: no .., nothing hidden, not the manifest, no link leaving the
// folder or naming what is refused, no file with more than one name (a
// hard link may be any file of its owner: a key, another folder's .env),
// no name swapped for a link while read. A FIFO, a device or a folder is
// notFound. The fs/* methods of script and module plugins follow the same
// rules under each root, hard links refused under root plugin; no write,
// and no root but plugin, reaches into any plugin's folder.
package protocol
