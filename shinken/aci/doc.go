// Package aci is the wire of the Agent-Computer Interface, ACI v0: a Go
// type for every message and definition of the schema ([Schema], JSON
// Schema draft 2020-12), the strict codec, the binary media frames, and the
// error codes.
//
// It is shared by both ends: package shinken/client (the agent's side) and
// package shinken (the runtime) speak it, and a program that speaks ACI
// some other way can use it alone.
//
// # Decoding
//
// [Unmarshal] decodes one text message strictly: unknown fields, duplicate
// keys, case-variant keys and every conditional rule the schema states are
// errors, each naming the JSON path. The text must be strict JSON, by the
// rules every decoder of the module shares: valid UTF-8, arrays and objects
// nested at most 128 deep, an object of at most 1024 members. Values are
// read as the schema's validators read them: null is an optional field left
// out, a whole number such as 1.0 is an integer, a lone surrogate escape is
// U+FFFD. [DecodeBinaryFrame] splits a binary
// frame into its JSON header and payload, checking every offset.
// [Marshal] and [AppendBinaryFrame] encode.
//
// # Errors
//
// Wire errors read "code: detail". The codes are the [Code] constants; an
// [*Error] carries one, and matches the Err sentinels with errors.Is by
// code ([ErrStaleElementRef], [ErrPermissionDenied]...). [WireError] renders
// any error for the wire; [ParseWireError] reads one back.
//
// # Targets
//
// Pointer actions take a [Target]: [Px] for action pixels, [Norm] for
// normalised coordinates, [Ref] for an element ref from an observation
// ([Observation.Find] looks one up by role and name).
package aci
