package manifest

import (
	"bytes"
	"errors"

	"shinken.dev/go/escouade/protocol"
	"shinken.dev/go/internal/strictjson"
)

// ParseFunc is Parse for a plugin that runs in the program's own process
// (escouade.Host.StartFunc, a daemon's GoPlugin): its manifest names no
// run, and the Manifest's Run is empty.
func ParseFunc(data []byte) (*Manifest, error) {
	if err := strictjson.Validate(data); err != nil {
		return nil, &protocol.FieldError{Err: err}
	}
	data = bytes.TrimSpace(data)
	if strictjson.KindOf(data) != strictjson.KindObject {
		return Parse(data) // Parse names what is wrong
	}
	hasRun, members := false, 0
	strictjson.Members(data, func(key, _ []byte) error {
		members++
		hasRun = hasRun || string(key) == "run"
		return nil
	})
	if hasRun {
		return nil, &protocol.FieldError{Path: "run", Err: errors.New("an in-process plugin's manifest names no run: the program hands the Host what to run")}
	}
	// Parse it as a manifest whose run is a command: every other rule is
	// Parse's, and no problem can name that run.
	spliced := []byte(`{"run":{"command":["in-process"]}`)
	if members > 0 {
		spliced = append(spliced, ',')
	}
	spliced = append(spliced, data[1:]...)
	m, err := Parse(spliced)
	if err != nil {
		return nil, err
	}
	m.Run = Run{}
	return m, nil
}
