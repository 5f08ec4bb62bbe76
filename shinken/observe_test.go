package shinken_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"image"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// golden compares got with testdata/tree/<name>.txt, or rewrites it with
// -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "tree", name+".txt")
	// capture_ms and similar timings never reach tree_text, so the text is
	// deterministic as it stands.
	if *update {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func TestObserveGolden(t *testing.T) {
	e := newEnv(t, nil)
	c := e.dial(t, nil)
	ctx := testCtx(t)
	if err := c.LaunchApp(ctx, "notes"); err != nil {
		t.Fatal(err)
	}
	if err := c.LaunchApp(ctx, "form"); err != nil {
		t.Fatal(err)
	}
	full, err := c.Observe(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "form-full", full.TreeText)
	if full.Tree != "full" || full.Revision != 1 || full.DiffOf != 0 || *full.NodeCount != len(full.Elements) || full.CaptureMS == nil {
		t.Fatalf("observation fields %+v", full)
	}

	// No change: an explicit notice.
	same, err := c.Observe(ctx, &client.ObserveRequest{Diff: true})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "form-diff-nochange", same.TreeText)
	if same.Tree != "diff" || same.DiffOf != 1 || same.Revision != 2 {
		t.Fatalf("diff fields tree=%s diff_of=%d rev=%d", same.Tree, same.DiffOf, same.Revision)
	}

	// One field changed: a line or two.
	var name aci.Element
	for _, el := range full.Elements {
		if el.Role == "text" && el.Name == "Name" {
			name = el
		}
	}
	if name.Ref == "" {
		t.Fatalf("no Name entry in\n%s", full.TreeText)
	}
	if err := c.SetValue(ctx, aci.Ref(name.Ref), "Ada Lovelace"); err != nil {
		t.Fatal(err)
	}
	one, err := c.Observe(ctx, &client.ObserveRequest{Diff: true})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "form-diff-onefield", one.TreeText)
	if len(one.TreeText) > 200 {
		t.Errorf("a one-field diff takes %d bytes, over the 200-byte target", len(one.TreeText))
	}
	if len(one.Elements) != len(full.Elements) {
		t.Errorf("elements is not the full list: %d vs %d", len(one.Elements), len(full.Elements))
	}

	// Submitting adds text and removes nothing; closing the window removes
	// its elements, summarised as ranges.
	var submit aci.Element
	for _, el := range one.Elements {
		if el.Role == "push button" && el.Name == "Submit" {
			submit = el
		}
	}
	if err := c.InvokeAction(ctx, aci.Ref(submit.Ref), ""); err != nil {
		t.Fatal(err)
	}
	sub, err := c.Observe(ctx, &client.ObserveRequest{Diff: true})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "form-diff-submit", sub.TreeText)

	desk, err := c.Observe(ctx, &client.ObserveRequest{Desktop: true})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "desktop-full", desk.TreeText)
}

func TestStaleRefs(t *testing.T) {
	e := newEnv(t, nil)
	c := e.dial(t, nil)
	ctx := testCtx(t)
	if err := c.LaunchApp(ctx, "notes"); err != nil {
		t.Fatal(err)
	}
	obs, err := c.Observe(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var save string
	for _, el := range obs.Elements {
		if el.Name == "Save" {
			save = el.Ref
		}
	}
	ws, _ := c.ListWindows(ctx)
	if err := e.desk.CloseWindow(ctx, ws[0].ID); err != nil {
		t.Fatal(err)
	}
	// The window is gone: its refs are stale for every verb.
	for name, err := range map[string]error{
		"click":  c.Click(ctx, aci.Ref(save)),
		"invoke": c.InvokeAction(ctx, aci.Ref(save), "click"),
		"set":    c.SetValue(ctx, aci.Ref(save), "x"),
	} {
		if !errors.Is(err, aci.ErrStaleElementRef) || !strings.Contains(err.Error(), save) {
			t.Errorf("%s on a closed window's ref: %v", name, err)
		}
	}
	// A new window never reuses the old refs.
	if err := c.LaunchApp(ctx, "notes"); err != nil {
		t.Fatal(err)
	}
	obs2, err := c.Observe(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	old := map[string]bool{}
	for _, el := range obs.Elements {
		old[el.Ref] = true
	}
	for _, el := range obs2.Elements {
		if old[el.Ref] {
			t.Errorf("ref %s reused for a new element", el.Ref)
		}
	}
	// Unknown action names and refs that were never minted are typed too.
	for _, el := range obs2.Elements {
		if el.Name == "Save" {
			if err := c.InvokeAction(ctx, aci.Ref(el.Ref), "fly"); !errors.Is(err, aci.ErrNoSuchAction) {
				t.Errorf("unknown action: %v", err)
			}
			if err := c.Click(ctx, aci.Ref(el.Ref)); err != nil {
				t.Errorf("click by ref: %v", err)
			}
		}
	}
	if err := c.Click(ctx, aci.Ref("e100000")); !errors.Is(err, aci.ErrStaleElementRef) {
		t.Errorf("never-minted ref: %v", err)
	}
}

// TestElementVerbs drives the form app by refs alone.
func TestElementVerbs(t *testing.T) {
	e := newEnv(t, nil)
	c := e.dial(t, nil)
	ctx := testCtx(t)
	if err := c.LaunchApp(ctx, "form"); err != nil {
		t.Fatal(err)
	}
	obs, _ := c.Observe(ctx, nil)
	refs := map[string]string{}
	for _, el := range obs.Elements {
		refs[el.Role+":"+el.Name] = el.Ref
	}
	if err := c.Click(ctx, aci.Ref(refs["text:Name"])); err != nil {
		t.Fatal(err)
	}
	if err := c.TypeText(ctx, "Grace"); err != nil {
		t.Fatal(err)
	}
	if err := c.DoubleClick(ctx, aci.Ref(refs["text:Email"])); err != nil {
		t.Fatal(err)
	}
	if err := c.SetValue(ctx, aci.Ref(refs["text:Email"]), "grace@example.com"); err != nil {
		t.Fatal(err)
	}
	if err := c.Click(ctx, aci.Ref(refs["push button:Submit"])); err != nil {
		t.Fatal(err)
	}
	after, err := c.Observe(ctx, &client.ObserveRequest{Settle: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(after.TreeText, "Grace") || !strings.Contains(after.TreeText, "grace@example.com") {
		t.Fatalf("summary not shown:\n%s", after.TreeText)
	}
}

// TestSettleUnderBurst changes the UI in a burst while an observation waits
// for it to settle: the observation must see the end of the burst.
func TestSettleUnderBurst(t *testing.T) {
	e := newEnv(t, nil)
	c := e.dial(t, nil)
	ctx := testCtx(t)
	if err := c.LaunchApp(ctx, "form"); err != nil {
		t.Fatal(err)
	}
	// Refs belong to a session: the typing client observes for its own.
	typer := e.dial(t, nil)
	obs, _ := typer.Observe(ctx, nil)
	var entry string
	for _, el := range obs.Elements {
		if el.Role == "text" {
			entry = el.Ref
			break
		}
	}
	started := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 20 {
			if err := typer.SetValue(ctx, aci.Ref(entry), fmt.Sprintf("v%02d", i)); err != nil {
				t.Error(err)
			}
			if i == 0 {
				close(started)
			}
		}
	}()
	<-started
	got, err := c.Observe(ctx, &client.ObserveRequest{Settle: 300 * time.Millisecond})
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got.TreeText, `Value:"v19"`) {
		t.Fatalf("settled observation missed the end of the burst:\n%s", got.TreeText)
	}
}

// fakeA11y is a synthetic tree for the property test: nodes come and go at
// random, and the engine must keep refs stable.
type fakeA11y struct {
	mu    sync.Mutex
	nodes []shinken.Node
}

func (f *fakeA11y) Snapshot(ctx context.Context, opts shinken.SnapshotOptions) (*shinken.Tree, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return &shinken.Tree{App: "fake", Window: "w", Nodes: append([]shinken.Node(nil), f.nodes...)}, nil
}

func (f *fakeA11y) Perform(ctx context.Context, id string, act shinken.ElementAction) error {
	return aci.ErrNoSuchAction
}

func TestRefStabilityProperty(t *testing.T) {
	fa := &fakeA11y{}
	rng := rand.New(rand.NewPCG(1, 2))
	nextID := 0
	newNode := func() shinken.Node {
		nextID++
		return shinken.Node{ID: fmt.Sprintf("n%d", nextID), Parent: 0, Depth: 1, Role: "push button",
			Name: fmt.Sprintf("b%d", nextID), BBox: image.Rect(0, 0, 10, 10)}
	}
	fa.nodes = []shinken.Node{{ID: "root", Parent: -1, Role: "frame", Name: "root"}}
	for range 20 {
		fa.nodes = append(fa.nodes, newNode())
	}
	obs := shinken.NewObserver(fa)
	ctx := context.Background()

	refOf := map[string]string{} // node ID -> ref
	retired := map[string]bool{}
	for round := range 100 {
		fa.mu.Lock()
		switch rng.IntN(3) {
		case 0: // remove a few
			for range rng.IntN(4) {
				if len(fa.nodes) > 2 {
					i := 1 + rng.IntN(len(fa.nodes)-1)
					fa.nodes = append(fa.nodes[:i], fa.nodes[i+1:]...)
				}
			}
		case 1: // add a few
			for range rng.IntN(4) {
				fa.nodes = append(fa.nodes, newNode())
			}
		case 2: // rename one
			i := 1 + rng.IntN(len(fa.nodes)-1)
			fa.nodes[i].Name += "'"
		}
		live := map[string]bool{}
		for _, n := range fa.nodes {
			live[n.ID] = true
		}
		fa.mu.Unlock()
		o, err := obs.Observe(ctx, shinken.ObserveOptions{Diff: round%2 == 0})
		if err != nil {
			t.Fatal(err)
		}
		// Map refs back to IDs through the element order, which follows the
		// snapshot's node order.
		fa.mu.Lock()
		nodes := append([]shinken.Node(nil), fa.nodes...)
		fa.mu.Unlock()
		for i, n := range nodes {
			ref := o.Elements[i].Ref
			if prev, ok := refOf[n.ID]; ok && prev != ref {
				t.Fatalf("round %d: node %s changed ref %s -> %s", round, n.ID, prev, ref)
			}
			if retired[ref] {
				t.Fatalf("round %d: retired ref %s came back for %s", round, ref, n.ID)
			}
			refOf[n.ID] = ref
		}
		for id, ref := range refOf {
			if !live[id] {
				retired[ref] = true
				delete(refOf, id)
			}
		}
	}
}

var refPattern = regexp.MustCompile(`^e[1-9][0-9]*$`)

func TestRefFormat(t *testing.T) {
	e := newEnv(t, nil)
	c := e.dial(t, nil)
	ctx := testCtx(t)
	c.LaunchApp(ctx, "form")
	obs, err := c.Observe(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, el := range obs.Elements {
		if !refPattern.MatchString(el.Ref) {
			t.Errorf("ref %q is not e<N>", el.Ref)
		}
	}
}
