// Package elementmatch holds the one rule by which an accessibility element
// is found by role and name, shared by aci.Observation (the agent's view)
// and shinken.Tree (a backend's snapshot), so that a query finds the same
// element in both.
package elementmatch

import "strings"

// Matches reports whether an element with role gotRole and name gotName
// answers the query (role, name): its role is role and its name contains
// name, an empty role or name matching any.
func Matches(gotRole, gotName, role, name string) bool {
	return (role == "" || gotRole == role) && strings.Contains(gotName, name)
}

// First returns the index of the first of n elements, in order, that
// answers the query (role, name), or -1. at(i) gives the i-th element's role
// and name. An element whose name equals name is preferred to one whose
// name only contains it, so that ("push button", "OK") finds "OK" before
// "Not OK"; an empty name prefers nothing (the first element of the role,
// named or not).
func First(n int, at func(i int) (role, name string), role, name string) int {
	partial := -1
	for i := range n {
		r, nm := at(i)
		if !Matches(r, nm, role, name) {
			continue
		}
		if name != "" && nm == name {
			return i
		}
		if partial < 0 {
			partial = i
		}
	}
	return partial
}
