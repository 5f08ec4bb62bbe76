package guard_test

import (
	"fmt"
	"strings"

	"shinken.dev/go/escouade/gate"
	"shinken.dev/go/escouade/guard"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// A guard for a coding agent judges what the gate shows of each exec:
// every simple command, by its program's identity and arguments.
func Example() {
	g, err := guard.New(&guard.Policy{Allow: []string{"ls", "grep", "find", "git", "sort"}})
	if err != nil {
		panic(err)
	}
	for _, line := range []string{
		"git log --oneline | grep fix",
		"ls; find . -name '*.tmp' -delete",
		"sort -o notes.txt notes.txt",
		"$(echo rm) -rf .",
		"git push",
	} {
		req, err := gate.Request(shinken.AuthRequest{Verb: aci.VerbExec, Action: &aci.Action{Shell: &line}}, "1")
		if err != nil {
			panic(err)
		}
		d := g.Judge(req)
		fmt.Printf("%s: %s\n", line, strings.TrimSpace(string(d.Verdict)+" "+d.Message))
	}
	// Output:
	// git log --oneline | grep fix: allow
	// ls; find . -name '*.tmp' -delete: deny find: -delete runs a program, deletes or writes a file
	// sort -o notes.txt notes.txt: deny sort: -o writes a file
	// $(echo rm) -rf .: deny the line is dynamic: "$(echo rm)" is known only when it runs
	// git push: ask git: push changes the work tree or the history, or talks to a remote
}
