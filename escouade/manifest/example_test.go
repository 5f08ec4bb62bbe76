package manifest_test

import (
	"errors"
	"fmt"

	"shinken.dev/go/escouade/manifest"
	"shinken.dev/go/escouade/protocol"
)

// A manifest is parsed strictly: every problem names its field.
func ExampleParse() {
	_, err := manifest.Parse([]byte(`{
		"id": "jira", "version": "1.0.0", "protocolVersion": 1,
		"run": {"command": ["jira-plugin"]},
		"permissions": {"events": ["ticket.moved"], "files": {"agentRepo": "rw"}},
		"colour": "blue"
	}`))
	fmt.Println(err)
	fmt.Println(errors.Is(err, protocol.ErrUnknownField))
	// Output:
	// escouade: colour: unknown field
	// escouade: permissions.events[0]: "ticket.moved" is not a fact of the protocol
	// escouade: permissions.files.agentRepo: want read or write, not "rw"
	// true
}
