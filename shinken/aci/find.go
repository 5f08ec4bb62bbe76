package aci

import "strings"

// Find returns the first of o's elements, in tree order, whose role is role
// and whose name contains name, or nil. An empty role or name matches any.
// An element whose name equals name is preferred to one whose name only
// contains it, so Find("push button", "OK") finds "OK" before "Not OK".
func (o *Observation) Find(role, name string) *Element {
	var partial *Element
	for i := range o.Elements {
		e := &o.Elements[i]
		if role != "" && e.Role != role || !strings.Contains(e.Name, name) {
			continue
		}
		if e.Name == name {
			return e
		}
		if partial == nil {
			partial = e
		}
	}
	return partial
}

// FindAll returns every element of o, in tree order, whose role is role and
// whose name contains name; an empty role or name matches any.
func (o *Observation) FindAll(role, name string) []Element {
	var out []Element
	for _, e := range o.Elements {
		if (role == "" || e.Role == role) && strings.Contains(e.Name, name) {
			out = append(out, e)
		}
	}
	return out
}
