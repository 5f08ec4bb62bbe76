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
package protocol
