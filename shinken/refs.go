package shinken

import (
	"errors"
	"strings"

	"shinken.dev/go/shinken/aci"
)

// withRef rewrites a backend's error about node id so that it names the
// element by the ref the agent knows: the agent never saw the backend's
// identities (a widget id, an AT-SPI object path). The code is kept, and
// the original error stays wrapped.
func withRef(err error, id, ref string) error {
	if err == nil || id == "" {
		return err
	}
	msg := err.Error()
	if !strings.Contains(msg, id) {
		return err
	}
	code := aci.CodeBackend
	if e := (*aci.Error)(nil); errors.As(err, &e) {
		code = e.Code
	} else if errors.Is(err, errors.ErrUnsupported) {
		code = aci.CodeUnsupported
	}
	detail := strings.TrimPrefix(strings.TrimPrefix(msg, string(code)+":"), " ")
	return &aci.Error{Code: code, Detail: strings.ReplaceAll(detail, id, ref), Err: err}
}
