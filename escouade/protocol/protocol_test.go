package protocol_test

import (
	"errors"
	"testing"
	"time"

	"shinken.dev/go/escouade/protocol"
)

// TestTable: the codes' names, the methods and the facts the package
// names are the schema's (TestCodesAreTheSchemas checks the codes).
func TestTable(t *testing.T) {
	for name, code := range map[string]protocol.Code{
		"parse": protocol.CodeParse, "invalidRequest": protocol.CodeInvalidRequest, "methodNotFound": protocol.CodeMethodNotFound,
		"invalidParams": protocol.CodeInvalidParams, "internal": protocol.CodeInternal, "notYours": protocol.CodeNotYours,
		"keychain": protocol.CodeKeychain, "refused": protocol.CodeRefused, "failed": protocol.CodeFailed, "notFound": protocol.CodeNotFound,
	} {
		if code.String() != name {
			t.Errorf("%s: the package names %d %s", name, code, code)
		}
	}
	if m, ok := protocol.LookupMethod("permissions/decide"); !ok || !m.ToPlugin || m.Notification || m.Timeout != 500*time.Millisecond {
		t.Errorf("permissions/decide: %+v %v", m, ok)
	}
	if m, ok := protocol.LookupMethod("log"); !ok || m.ToPlugin || !m.Notification || m.Timeout != 0 {
		t.Errorf("log: %+v %v", m, ok)
	}
	if _, ok := protocol.LookupMethod("nope"); ok || protocol.MethodTimeout("nope") != 0 {
		t.Error("a method the protocol does not name")
	}
	if !protocol.IsFact("agent.created") || protocol.IsFact("agent.exploded") {
		t.Error("IsFact")
	}
	err := error(&protocol.Error{Code: protocol.CodeRefused, Message: "refused: no"})
	if !errors.Is(err, protocol.ErrRefused) || errors.Is(err, protocol.ErrFailed) {
		t.Error("Error.Is compares codes")
	}
}
