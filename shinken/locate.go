package shinken

import (
	"context"
	"image"
	"strings"

	"shinken.dev/go/shinken/aci"
)

// A Locator finds where an accessibility node can be clicked now, without
// a new snapshot: element verbs on the pointer (click, drag... on an
// element_ref) then cost a few calls instead of a walk.
type Locator interface {
	// Locate returns the visible part of the node id in global pixels: its
	// extents, read now, clipped to those of its ancestors (outermost
	// last: its window, the page's viewport, any scrolled container). A
	// node not wholly visible is first scrolled into view when the toolkit
	// can. An empty rectangle means nothing of it is visible. ancestors
	// are the IDs of its ancestors in the last snapshot, nearest first. A
	// node that is gone is an error wrapping ErrStaleElementRef.
	Locate(ctx context.Context, id string, ancestors []string) (image.Rectangle, error)
}

// refErr rewrites a backend's error about node id so that it names ref,
// the element's ref, instead: the backend's node IDs mean nothing to an
// agent.
func refErr(err error, id, ref string) error {
	if err == nil || id == "" || !strings.Contains(err.Error(), id) {
		return err
	}
	code := aci.CodeOf(err)
	msg := strings.ReplaceAll(err.Error(), id, ref)
	msg = strings.TrimPrefix(strings.TrimPrefix(msg, string(code)+":"), " ")
	return &aci.Error{Code: code, Detail: msg, Err: err}
}
