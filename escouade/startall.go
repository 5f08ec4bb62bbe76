package escouade

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"shinken.dev/go/escouade/manifest"
)

// A StartError is the failure of one folder in StartAll.
type StartError struct {
	Dir string
	Err error
}

// Error names the folder and why.
func (e *StartError) Error() string { return fmt.Sprintf("escouade: plugin in %s: %v", e.Dir, e.Err) }

// Unwrap returns why.
func (e *StartError) Unwrap() error { return e.Err }

// StartAll starts the plugins in dirs all at once and returns those
// started, by id: a folder that fails is journaled, returned as a
// *StartError, and holds up none of the others; folders claiming one id
// are all refused.
func (h *Host) StartAll(ctx context.Context, dirs []string) ([]*Plugin, []error) {
	var (
		mu      sync.Mutex
		started []*Plugin
		errs    []error
	)
	fail := func(dir string, err error) {
		h.log.Error("plugin not started", "dir", dir, "error", err.Error())
		mu.Lock()
		errs = append(errs, &StartError{Dir: dir, Err: err})
		mu.Unlock()
	}
	byID := map[string][]string{}
	for _, dir := range dirs {
		m, err := manifest.Read(dir)
		if err != nil {
			fail(dir, err)
			continue
		}
		byID[m.ID] = append(byID[m.ID], dir)
	}
	var wg sync.WaitGroup
	for id, ds := range byID {
		if len(ds) > 1 {
			for _, dir := range ds {
				fail(dir, fmt.Errorf("%w: %s is claimed by the folders %s", ErrDuplicate, id, strings.Join(ds, ", ")))
			}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, err := h.Start(ctx, ds[0])
			if err != nil {
				fail(ds[0], err)
				return
			}
			mu.Lock()
			started = append(started, p)
			mu.Unlock()
		}()
	}
	wg.Wait()
	slices.SortFunc(started, func(a, b *Plugin) int { return strings.Compare(a.m.ID, b.m.ID) })
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return started, errs
}
