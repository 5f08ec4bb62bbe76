package shinkentest

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/record"
)

// traceDir is the folder under os.TempDir where a failed test's trace goes
// when go test runs without -artifacts.
const traceDir = "shinken-traces"

// traceFPS is the rate the screen is captured between actions: low, since
// every action that changes the screen is captured anyway as the runtime
// answered it.
const traceFPS = 0.5

// startTrace records the session of b, through feed, in memory, and, when
// t fails, writes the recording where the test's artifacts go and names
// the file in the test's log. It registers its cleanup on t.
func startTrace(t testing.TB, b shinken.Backend, feed *shinken.Feed) {
	c, ok := b.(shinken.Capturer)
	if !ok {
		t.Logf("shinkentest: no trace: the backend captures no screen")
		return
	}
	sub := feed.Subscribe(1<<14, shinken.EventAction, shinken.EventObservation, shinken.EventExec)
	var buf bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- record.Record(ctx, &buf, c, sub, &record.Options{FPS: traceFPS})
	}()
	t.Cleanup(func() {
		if t.Failed() {
			finalTree(b, feed)
		}
		cancel()
		err := <-done
		sub.Close()
		if !t.Failed() {
			return
		}
		if err != nil {
			t.Logf("shinkentest: the trace stopped early: %v", err)
		}
		path, werr := writeTrace(t, buf.Bytes())
		if werr != nil {
			t.Logf("shinkentest: the trace could not be written: %v", werr)
			return
		}
		t.Logf("shinkentest: trace of the failed test: %s\n\treplay it in the inspector page (the daemon's page, \"Replay…\"), or export it: example export -in %s -out trace.mp4", path, path)
	})
}

// finalTree publishes the tree as the test left it, for the trace's end.
func finalTree(b shinken.Backend, feed *shinken.Feed) {
	if _, ok := b.(shinken.A11y); !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), defaultTimeout)
	defer cancel()
	obs, err := shinken.NewObserver(b).Observe(ctx, shinken.ObserveOptions{})
	if err != nil {
		return
	}
	feed.Publish(shinken.Event{Kind: shinken.EventObservation, Client: "shinkentest-trace", Verb: aci.VerbObserve, OK: true,
		Revision: obs.Revision, Bytes: len(obs.TreeText), TreeText: obs.TreeText})
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// writeTrace writes data to the test's artifact folder (with -artifacts)
// or to traceDir, and returns the file's path.
func writeTrace(t testing.TB, data []byte) (string, error) {
	dir := filepath.Join(os.TempDir(), traceDir)
	if f := flag.Lookup("test.artifacts"); f != nil && f.Value.String() == "true" {
		if a, ok := t.(interface{ ArtifactDir() string }); ok {
			dir = a.ArtifactDir()
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	name := fmt.Sprintf("%s-%s.shinkenrec", unsafeName.ReplaceAllString(t.Name(), "_"), time.Now().UTC().Format("20060102T150405.000"))
	path := filepath.Join(dir, name)
	return path, os.WriteFile(path, data, 0o644)
}
