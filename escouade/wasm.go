package escouade

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"shinken.dev/go/escouade/internal/jsonrpc"
	"shinken.dev/go/escouade/protocol"
	"shinken.dev/go/internal/strictjson"
)

// Bounds of what a plugin's folder gives to run in-process.
const (
	maxWASM   = 64 << 20 // a module
	maxScript = 4 << 20  // a script
)

// cacheDir returns the folder of the compilation cache that dir names (""
// for the default), made if need be.
func cacheDir(dir string) (string, error) {
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(base, "escouade", "wasm")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	return dir, nil
}

// callABI serves a call made by escouade.call, and encodes its answer.
func (inst *instance) callABI(ctx context.Context, method string, params []byte, done <-chan struct{}) []byte {
	params, answer := abiParams(params)
	if answer != nil {
		return answer
	}
	if ms, ok := protocol.LookupMethod(method); ok && ms.ToPlugin {
		return appendABIError(nil, errorf(protocol.CodeMethodNotFound, "method not found: %s goes from the Host to the plugin", method))
	}
	if t := inst.p.methodTimeout(method); t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t)
		defer cancel()
	}
	res, err := inst.serve(ctx, method, params, &call{inst: inst, done: done})
	if err != nil {
		e := wireError(err)
		if e == nil {
			inst.p.protocolEvent(jsonrpc.Event{Kind: jsonrpc.EventHandler, Method: method, Err: err})
			e = &protocol.Error{Code: protocol.CodeInternal, Message: "internal error"}
		}
		return appendABIError(nil, e)
	}
	raw, err := marshalResult(res)
	if err != nil {
		inst.p.protocolEvent(jsonrpc.Event{Kind: jsonrpc.EventHandler, Method: method, Err: err})
		return appendABIError(nil, &protocol.Error{Code: protocol.CodeInternal, Message: "internal error"})
	}
	b := make([]byte, 0, len(raw)+11)
	b = append(b, `{"result":`...)
	b = append(b, raw...)
	return append(b, '}')
}

// abiParams checks the params of an escouade.call: strict JSON, an object
// or null. It returns them, nil for none, or the answer that refuses them.
func abiParams(params []byte) ([]byte, []byte) {
	if len(params) == 0 {
		return nil, nil
	}
	if err := strictjson.Validate(params); err != nil {
		return nil, appendABIError(nil, &protocol.Error{Code: protocol.CodeInvalidParams, Message: "invalid params: not strict JSON: " + err.Error()})
	}
	switch strictjson.KindOf(params) {
	case strictjson.KindNull:
		return nil, nil
	case strictjson.KindObject:
		return params, nil
	}
	return nil, appendABIError(nil, &protocol.Error{Code: protocol.CodeInvalidParams, Message: "invalid params: want an object"})
}

func appendABIError(b []byte, e *protocol.Error) []byte {
	b = append(b, `{"error":{"code":`...)
	b = fmt.Appendf(b, "%d", int64(e.Code))
	b = append(b, `,"message":`...)
	b = strictjson.AppendString(b, e.Message)
	return append(b, `}}`...)
}

// marshalResult encodes a method's result: nil is null.
func marshalResult(v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return []byte("null"), nil
	case json.RawMessage:
		return v, nil
	}
	return json.Marshal(v)
}
