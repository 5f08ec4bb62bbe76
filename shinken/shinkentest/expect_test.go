package shinkentest_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/internal/schematest"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/client"
	"shinken.dev/go/shinken/record"
	"shinken.dev/go/shinken/shinkentest"
)

// serve is shinkentest.Serve with every message checked against the ACI
// schema on its way.
func serve(t *testing.T, b shinken.Backend) *client.Client {
	return shinkentest.ServeProxied(t, b, nil, schematest.ProxyURL)
}

// formTest is the headless form's test as a newcomer writes it with
// locators: no observation, no ref, no wait.
func formTest(t *testing.T, want string) {
	desk := headless.New(nil)
	shinkentest.Must(t, desk.Launch(t.Context(), "form", nil))
	c := serve(t, desk)
	ctx := t.Context()
	shinkentest.Must(t, c.ByRole("text", "Name").Fill(ctx, "Ada"))
	shinkentest.Must(t, c.ByRole("text", "Email").Fill(ctx, "ada@example.com"))
	shinkentest.Must(t, c.ByRole("check box", "Subscribe to the newsletter").Check(ctx))
	shinkentest.Must(t, c.ByRole("push button", "Submit").Click(ctx))
	shinkentest.Expect(t, c.ByRole("label", "").Last()).ToHaveText(want)
}

func TestFormByLocators(t *testing.T) {
	formTest(t, "Submitted: Ada <ada@example.com>, newsletter: yes.")
}

// TestFormByLocatorsWrong is TestFormByLocators expecting the wrong text:
// it runs only as TestFormFailsWithTrace's subprocess.
func TestFormByLocatorsWrong(t *testing.T) {
	if os.Getenv("SHINKENTEST_WRONG") != "1" {
		t.Skip("run by TestFormFailsWithTrace")
	}
	formTest(t, "Submitted: Ada <ada@example.com>, newsletter: no.")
}

// TestFormFailsWithTrace runs the form's test in a test binary of its own,
// under CI (where traces are on): expecting the wrong text, it fails with
// the expected and the last seen texts, the tree around the label, and a
// trace file that package record reads; expecting the right one, it passes
// and leaves no trace.
func TestFormFailsWithTrace(t *testing.T) {
	run := func(test, wrong string) (string, string, error) {
		tmp := t.TempDir()
		cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^"+test+"$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), "CI=true", "TMPDIR="+tmp, "SHINKENTEST_WRONG="+wrong)
		out, err := cmd.CombinedOutput()
		return string(out), tmp, err
	}

	out, tmp, err := run("TestFormByLocatorsWrong", "1")
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("the wrong expectation did not fail the test (%v):\n%s", err, out)
	}
	for _, want := range []string{
		`expected label (last) to have text "Submitted: Ada <ada@example.com>, newsletter: no."`,
		`last seen: e8 label "Submitted: Ada <ada@example.com>, newsletter: yes."`,
		"tree around it:",
		`→   e8 label "Submitted: Ada <ada@example.com>, newsletter: yes."`,
		`e6 check box (checked) "Subscribe to the newsletter"`,
		"trace of the failed test: ",
		`replay it in the inspector page`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the failure does not say %q:\n%s", want, out)
		}
	}
	traces, _ := filepath.Glob(filepath.Join(tmp, traceDir, "TestFormByLocatorsWrong-*.shinkenrec"))
	if len(traces) != 1 {
		t.Fatalf("traces: %v\n%s", traces, out)
	}
	if !strings.Contains(out, traces[0]) {
		t.Errorf("the log does not name %s:\n%s", traces[0], out)
	}
	data, err := os.ReadFile(traces[0])
	if err != nil {
		t.Fatal(err)
	}
	verbs, frames, trees := readTrace(t, data)
	for _, v := range []string{"set_value", "click"} {
		if !strings.Contains(verbs, v) {
			t.Errorf("the trace's actions %q lack %s", verbs, v)
		}
	}
	if frames < 2 || !strings.Contains(trees, "newsletter: yes.") {
		t.Errorf("the trace holds %d frames, and trees:\n%s", frames, trees)
	}

	out, tmp, err = run("TestFormByLocators", "")
	if err != nil {
		t.Fatalf("the right expectation failed: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(tmp, traceDir)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a passing test left %s behind (%v)", traceDir, err)
	}
}

// TestTracedWrong fails a short test served by ServeTraced, tracing as
// SHINKENTEST_TRACE says: it runs only as TestServeTraced's subprocess.
func TestTracedWrong(t *testing.T) {
	mode := os.Getenv("SHINKENTEST_TRACE")
	if mode == "" {
		t.Skip("run by TestServeTraced")
	}
	desk := headless.New(nil)
	shinkentest.Must(t, desk.Launch(t.Context(), "form", nil))
	c := shinkentest.ServeTraced(t, desk, nil, mode == "on")
	shinkentest.Must(t, c.ByRole("push button", "Submit").Click(t.Context()))
	shinkentest.Expect(t, c.ByRole("label", "").Last()).ToHaveText("not this")
}

// TestServeTraced: ServeTraced traces where CI is not set, and does not
// where it is, as asked.
func TestServeTraced(t *testing.T) {
	for _, tc := range []struct{ mode, ci string }{{"on", ""}, {"off", "true"}} {
		t.Run(tc.mode, func(t *testing.T) {
			tmp := t.TempDir()
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestTracedWrong$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), "CI="+tc.ci, "TMPDIR="+tmp, "SHINKENTEST_TRACE="+tc.mode)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || !strings.Contains(string(out), `expected label (last) to have text "not this"`) {
				t.Fatalf("the test did not fail on its expectation (%v):\n%s", err, out)
			}
			traces, _ := filepath.Glob(filepath.Join(tmp, traceDir, "TestTracedWrong-*.shinkenrec"))
			if got := len(traces) == 1 && strings.Contains(string(out), "trace of the failed test: "); got != (tc.mode == "on") {
				t.Errorf("traced: %v (%v), want %v:\n%s", got, traces, tc.mode == "on", out)
			}
		})
	}
}

// traceDir is where the package doc says a failed test's trace goes
// without -artifacts, under os.TempDir.
const traceDir = "shinken-traces"

// readTrace returns a recording's action verbs, its number of frames and
// its trees.
func readTrace(t *testing.T, data []byte) (verbs string, frames int, trees string) {
	t.Helper()
	r := record.NewReader(bytes.NewReader(data))
	for {
		e, err := r.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		switch e.Kind {
		case record.KindKeyframe, record.KindTiles:
			frames++
		case record.KindEvent:
			if e.Event.Kind == shinken.EventAction {
				verbs += string(e.Event.Verb) + " "
			}
			trees += e.Event.TreeText
		}
	}
}
