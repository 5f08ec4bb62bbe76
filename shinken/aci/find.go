package aci

import (
	"errors"
	"fmt"

	"shinken.dev/go/internal/elementmatch"
)

// ErrNoMatch is wrapped by the error of a Find ([Observation.Find],
// shinken.Tree.Find) that matched no element of that role and name; its
// message names the query. It is the caller's error, never on the wire.
var ErrNoMatch = errors.New("aci: no element matches")

// Find returns the first of o's elements, in tree order, whose role is role
// and whose name contains name; an empty role or name matches any. An
// element whose name equals a non-empty name is preferred to one whose
// name only contains it, so Find("push button", "OK") finds "OK" before
// "Not OK". When none matches, the error wraps [ErrNoMatch].
// shinken.Tree.Find follows the same rules.
func (o *Observation) Find(role, name string) (Element, error) {
	i := elementmatch.First(len(o.Elements), func(i int) (string, string) { return o.Elements[i].Role, o.Elements[i].Name }, role, name)
	if i < 0 {
		return Element{}, fmt.Errorf("%w: role %q, name %q", ErrNoMatch, role, name)
	}
	return o.Elements[i], nil
}

// FindAll returns every element of o, in tree order, whose role is role and
// whose name contains name; an empty role or name matches any.
func (o *Observation) FindAll(role, name string) []Element {
	var out []Element
	for _, e := range o.Elements {
		if elementmatch.Matches(e.Role, e.Name, role, name) {
			out = append(out, e)
		}
	}
	return out
}
