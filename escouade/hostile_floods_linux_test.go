package escouade_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"shinken.dev/go/escouade"
	"shinken.dev/go/escouade/protocol"
	"shinken.dev/go/internal/procfs"
)

// The floods of TestHostileDecoderFloods, mounted through the engines: a
// run.js plugin with no permissions reaches the Host's decoder through the
// prelude (a toJSON in a call's params, or a JSON.stringify it replaced,
// which makes the prelude write any line), a run.wasm module by writing
// raw lines or calling escouade.call. Each once held a core of the Host
// (9.5–12 s of CPU in 10–12 s) or grew its memory by hundreds of MiB; now
// each line is refused with one error, and what the Host spends on the
// flood is measured beside a reference flood of the same bytes that is
// cheap to read.

// A hostCost is what an attack cost the Host's process, from its own
// rusage, its heap's statistics and its peak resident set.
type hostCost struct {
	cpu, wall time.Duration
	alloc     uint64 // bytes the Go heap allocated
	peak      int64  // KiB the resident set rose to, above where it began
}

func (c hostCost) String() string {
	return fmt.Sprintf("%v of CPU in %v (%.2f of a core), %d MiB allocated, peak RSS +%d MiB",
		c.cpu.Round(time.Millisecond), c.wall.Round(time.Millisecond), c.ratio(), c.alloc>>20, c.peak>>10)
}

// ratio is the share of a core the Host used over the attack.
func (c hostCost) ratio() float64 { return float64(c.cpu) / float64(max(c.wall, time.Millisecond)) }

// measure runs attack and says what it cost the Host's process. The peak
// resident set is reset first (clear_refs 5), so that the peak read after
// is this attack's.
func measure(t *testing.T, attack func()) hostCost {
	t.Helper()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	rss := procKiB(os.Getpid(), "status", "VmRSS:")
	cpu, start := hostCPU(t), time.Now()
	attack()
	c := hostCost{cpu: hostCPU(t) - cpu, wall: time.Since(start)}
	runtime.ReadMemStats(&after)
	c.alloc = after.TotalAlloc - before.TotalAlloc
	c.peak = procKiB(os.Getpid(), "status", "VmHWM:") - rss
	return c
}

// A wireRecord keeps what goes between a Host and its in-process or
// engine plugins, in order, for the validator to check once the attack is
// measured (checked as it goes, the lines of 90,000 keys would cost the
// test's decoder more than the Host's). A line of the plugin over
// recordMax is counted and dropped: it is the flood, and holds no request
// the Host answers but with a null id. Every line of the Host is kept.
type wireRecord struct {
	mu      sync.Mutex
	seq     []recorded
	sides   [2]recordSide // the plugin's, the Host's
	dropped int           // the plugin's lines over recordMax
	longest int           // the Host's longest line, or escouade.call answer
	written int64         // bytes the plugins wrote
	answers int64         // bytes the Host wrote, its escouade.call answers too
	hostMax int           // the Host's lines past it are counted, not kept
}

type recorded struct {
	fromHost bool
	abi      string // the method an escouade.call answer is for; "" for a line
	line     []byte
	head     bool // line is the head of a line of the Host over its bound
}

type recordSide struct {
	partial []byte
	skip    bool   // within a line over the bound
	head    []byte // its first bytes
}

// requestHead reads the id and method of a request of the prelude's or
// the module's, which write them first, from the head of a line.
var requestHead = regexp.MustCompile(`^\{"jsonrpc":"2\.0","id":([0-9]+),"method":("[^"\\]*")`)

// recordMax bounds the lines of the plugin that are kept.
const recordMax = 64 << 10

// hostMax bounds the lines of the Host that are kept: a batch's answer
// and a little more.
const hostMax = 9 << 20

func recordWire(h *escouade.Host) *wireRecord {
	r := &wireRecord{hostMax: hostMax}
	escouade.SetWireHooks(h, r.chunk, func(method string, answer []byte) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.longest = max(r.longest, len(answer))
		r.answers += int64(len(answer))
		r.seq = append(r.seq, recorded{fromHost: true, abi: method, line: append([]byte(nil), answer...)})
	})
	return r
}

// chunk splits what a side wrote into lines, dropping what passes its
// bound as it streams by.
func (r *wireRecord) chunk(fromHost bool, b []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	side, bound := &r.sides[0], recordMax
	if fromHost {
		side, bound = &r.sides[1], r.hostMax
		r.answers += int64(len(b))
	} else {
		r.written += int64(len(b))
	}
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		piece := b
		if i >= 0 {
			piece = b[:i]
		}
		if !side.skip {
			if len(side.partial)+len(piece) > bound {
				side.head = append(side.partial, piece...)[:256]
				side.skip, side.partial = true, nil
			} else {
				side.partial = append(side.partial, piece...)
			}
		}
		if i < 0 {
			return
		}
		switch {
		case side.skip && fromHost:
			r.longest = max(r.longest, r.hostMax+1)
			r.seq = append(r.seq, recorded{fromHost: true, line: side.head, head: true})
		case side.skip:
			// A request's id and method are kept, for its answer.
			r.dropped++
			if m := requestHead.FindSubmatch(side.head); m != nil {
				r.seq = append(r.seq, recorded{line: fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"method":%s}`, m[1], m[2])})
			}
		case len(side.partial) > 0:
			if fromHost {
				r.longest = max(r.longest, len(side.partial))
			}
			r.seq = append(r.seq, recorded{fromHost: fromHost, line: side.partial})
		}
		side.partial, side.skip, side.head = nil, false, nil
		b = b[i+1:]
	}
}

// keepHostLines makes the Host's lines past max bytes counted, and not
// kept (nor checked): for a flood answered by hundreds of MiB, whose
// keeping would cost the test more than the Host.
func (r *wireRecord) keepHostLines(max int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hostMax = max
}

// dump returns the start of each line recorded, for a failure's message.
func (r *wireRecord) dump() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for _, x := range r.seq {
		fmt.Fprintf(&b, "\n%v %.200s", x.fromHost, x.line)
	}
	return b.String()
}

// pluginBytes says how many bytes the plugins wrote so far.
func (r *wireRecord) pluginBytes() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.written
}

// moved says how many bytes went between the Host and its plugins so
// far, either way.
func (r *wireRecord) moved() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.written + r.answers
}

// floodWait waits until cond holds while the flood moves: it fails once
// neither the wire, either way, nor the journal changed for hangGuard. A
// loaded machine slows a flood down (a line of 90,000 keys takes seconds
// under the race detector, a whole flood minutes), which is not what is
// tested; a flood that stopped is a failure.
func floodWait(t *testing.T, j *journal, rec *wireRecord, what string, cond func() bool) {
	t.Helper()
	moved := func() int64 {
		j.mu.Lock()
		n := len(j.entries)
		j.mu.Unlock()
		return rec.moved() + int64(n)
	}
	last, since := moved(), time.Now()
	for !cond() {
		if m := moved(); m != last {
			last, since = m, time.Now()
		} else if time.Since(since) > hangGuard {
			t.Fatalf("never: %s; nothing moved on the wire or in the journal for %v, which holds:\n%s", what, hangGuard, j.dump())
		}
		time.Sleep(2 * time.Millisecond) // polls cond, and the flood's progress
	}
}

// floodSaid waits, as floodWait does, until the journal holds an entry of
// plugin whose message holds msg.
func floodSaid(t *testing.T, j *journal, rec *wireRecord, plugin, msg string) {
	t.Helper()
	floodWait(t, j, rec, fmt.Sprintf("%s said %q", plugin, msg), func() bool { return len(j.find(plugin, msg)) > 0 })
}

// pluginSaid reports whether a line of the plugins recorded holds s.
func (r *wireRecord) pluginSaid(s string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, x := range r.seq {
		if !x.fromHost && bytes.Contains(x.line, []byte(s)) {
			return true
		}
	}
	return false
}

// processCPU is the CPU time this process has used, for a benchmark (which
// hostCPU, for tests, does not serve).
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// hostLines counts the lines of the Host recorded so far that hold s, and
// says how long the longest line of the Host was.
func (r *wireRecord) hostLines(s string) (n, longest int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, x := range r.seq {
		if x.fromHost && x.abi == "" && bytes.Contains(x.line, []byte(s)) {
			n++
		}
	}
	return n, r.longest
}

// check hands what was recorded to v, in order, and forgets it.
func (r *wireRecord) check(v *validator) {
	r.mu.Lock()
	seq := r.seq
	r.seq = nil
	r.mu.Unlock()
	for _, x := range seq {
		switch {
		case x.head:
		case x.abi != "":
			v.abiAnswer(x.abi, x.line)
		case x.fromHost:
			v.fromHost(x.line)
		default:
			v.fromPlugin(x.line)
		}
	}
}

// floodHost returns a Host whose engines run as e, every line to and from
// its plugins recorded and checked against the schema at the test's end,
// and a guard that denies rm. Turns are long: a script's turn or a
// module's writes on a loaded machine under the race detector are not
// what is tested.
func floodHost(t *testing.T, e escouade.Engine) (*escouade.Host, *journal, *wireRecord) {
	t.Helper()
	return floodHostWorkers(t, e, 0)
}

// floodHostWorkers is floodHost whose plugins' requests are served
// workers at once (0 for the default).
func floodHostWorkers(t *testing.T, e escouade.Engine, workers int) (*escouade.Host, *journal, *wireRecord) {
	t.Helper()
	v := newValidator(t)
	var rec *wireRecord
	// Registered before the Host's Close, so run after it: cleanups run
	// last first.
	t.Cleanup(func() {
		if rec == nil {
			return
		}
		rec.check(v)
		v.mu.Lock()
		defer v.mu.Unlock()
		if v.checked == 0 {
			t.Error("no line of the Host was checked against the schema")
		}
	})
	h, j := newHost(t, &escouade.Options{
		Engine:       e,
		Projects:     projects(),
		ScriptTurn:   30 * time.Second,
		WASMCacheDir: wasmCache(t),
		Workers:      workers,
	})
	rec = recordWire(h)
	startScript(t, h, "guard", guardJS)
	return h, j, rec
}

// afterFlood checks that the Host still serves once the flood is read: the
// guard's deny wins, the hostile plugin runs (it only wrote lines that were
// refused), and Close keeps a deadline of 2 s, its engines gone.
func afterFlood(t *testing.T, h *escouade.Host, j *journal, p *escouade.Plugin) {
	t.Helper()
	if d := decide(t, h, "rm"); d.Verdict != protocol.Deny || d.Plugin != "guard" {
		t.Errorf("Decide(rm) after the flood = %+v", d)
	}
	if p.State() != escouade.StateRunning || len(j.find(p.ID(), "plugin ended")) > 0 {
		t.Errorf("the flooding plugin: state %s; the journal holds:\n%s", p.State(), j.dump())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	if err := h.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}
	t.Logf("Close took %v", time.Since(start).Round(time.Millisecond))
	if pids := enginePids(p.ID()); len(pids) > 0 {
		t.Errorf("engine processes left after Close: %v", pids)
	}
}

// floodBounds are what a flood of floodLines lines of a MiB may cost the
// Host, beside ref, a flood of the same bytes that the Host reads to its
// end: the flood once cost 12 s of CPU a line, and 47 MiB of answer a
// line (686 MiB of RSS for the whole). In-process, the engine's own work
// (a script's building and writing 90,000 keys) is the Host's process's
// too, and the reference's: only the comparison holds there.
func floodBounds(t *testing.T, e escouade.Engine, c, ref hostCost) {
	t.Helper()
	besideReference(t, c, ref)
	hostBounds(t, e, c, 256<<20, 192<<10)
}

// besideReference checks that c costs the Host at most twice what ref does,
// and a little more: what starts the plugin is in both.
func besideReference(t *testing.T, c, ref hostCost) {
	t.Helper()
	t.Logf("the flood: %v", c)
	t.Logf("the reference: %v", ref)
	t.Logf("CPU %.2f× the reference's, allocations %.2f×", float64(c.cpu)/float64(max(ref.cpu, time.Millisecond)), float64(c.alloc)/float64(max(ref.alloc, 1)))
	if c.cpu > 2*ref.cpu+time.Second {
		t.Errorf("the flood took %v of the Host's CPU, the reference %v", c.cpu, ref.cpu)
	}
	if c.alloc > 2*ref.alloc+64<<20 {
		t.Errorf("the flood made the Host allocate %d MiB, the reference %d MiB", c.alloc>>20, ref.alloc>>20)
	}
	if c.peak > ref.peak+128<<10 {
		t.Errorf("the flood grew the Host's RSS by %d MiB, the reference by %d MiB", c.peak>>10, ref.peak>>10)
	}
}

// hostBounds are what floodLines lines of a few MiB may cost the Host, its
// engines isolated, at most: 5 s of CPU (the key flood once took 12 s a
// line), alloc bytes allocated, its RSS grown by peak KiB. In-process, the
// engine's own work is the Host's process's too: no bound of the Host's
// alone holds there.
func hostBounds(t *testing.T, e escouade.Engine, c hostCost, alloc uint64, peak int64) {
	t.Helper()
	if e != escouade.EngineIsolated {
		return
	}
	if c.cpu > 5*time.Second {
		t.Errorf("the Host spent %v of CPU", c.cpu)
	}
	if c.alloc > alloc {
		t.Errorf("the Host allocated %d MiB", c.alloc>>20)
	}
	if c.peak > peak {
		t.Errorf("the Host's RSS grew by %d MiB", c.peak>>10)
	}
}

// jsFlood is a script with no permissions that, once it has answered
// initialize, runs setup (JavaScript) and sends floodLines messages, one a
// turn, through send, then says "flood done". Its top level does nothing
// else: it runs within initialize's 10 s, which building 90,000 keys and
// writing the first line of a MiB passed, under the race detector on a
// loaded machine.
func jsFlood(setup, send string) string {
	return fmt.Sprintf(`escouade.onInitialize(() => { setTimeout(flood, 0); });
function flood() {
%s
let n = 0;
(function next() {
	if (n === %d) { escouade.log("info", "flood done"); return; }
	%s;
	n++;
	setTimeout(next, 0);
})();
}`, setup, floodLines, send)
}

// jsKeys is a log's params of 90,000 keys, built once: what a toJSON
// returns.
const jsKeys = `const big = { level: "info", message: "x" };
for (let i = 0; i < 90000; i++) big["k" + i] = 1;
const params = { toJSON() { return big; } };
`

// jsNested is the reference of jsKeys: the same 90,000 keys, which cost
// the script as much to write, in 90 objects of 1000, each within the
// bound: the Host reads the whole line, and checks every key.
const jsNested = `const big = { level: "debug", message: "reference line" };
for (let i = 0; i < 90000; i++) (big["g" + (i % 90)] ||= {})["k" + i] = 1;
const params = { toJSON() { return big; } };
`

// jsRaw makes the prelude write line as it is: it writes what
// JSON.stringify returns, and a script may replace JSON.stringify.
func jsRaw(line string) string {
	b, _ := json.Marshal(line)
	return `const line = ` + string(b) + `;
const stringify = JSON.stringify;
function raw() { JSON.stringify = () => line; try { escouade.notify("raw"); } finally { JSON.stringify = stringify; } }
`
}

// A jsRun is a run.js plugin's flood, measured, and what it ran in.
type jsRun struct {
	h    *escouade.Host
	j    *journal
	rec  *wireRecord
	p    *escouade.Plugin
	cost hostCost
}

// runJSFlood starts src as the plugin "flood" with no permissions in a
// Host whose engines run as e, and measures the Host until the script said
// "flood done" and the journal says says floodLines times (and the Host's
// lines hold answer as often, unless it is "").
func runJSFlood(t *testing.T, e escouade.Engine, src, says, answer string) jsRun {
	t.Helper()
	var r jsRun
	r.h, r.j, r.rec = floodHost(t, e)
	r.cost = measure(t, func() {
		r.p = startFloodJS(t, r.h, "flood", src)
		floodSaid(t, r.j, r.rec, "flood", "flood done")
		floodWait(t, r.j, r.rec, "every line answered", func() bool { return len(r.j.find("flood", says)) >= floodLines })
		if answer != "" {
			floodWait(t, r.j, r.rec, "every answer", func() bool { n, _ := r.rec.hostLines(answer); return n >= floodLines })
		}
	})
	if n := len(r.j.find("flood", says)); n != floodLines {
		t.Errorf("the journal said %q %d times, want %d", says, n, floodLines)
	}
	return r
}

// startFloodJS starts the script src as the plugin id, with no
// permissions.
func startFloodJS(t *testing.T, h *escouade.Host, id, src string) *escouade.Plugin {
	t.Helper()
	dir := writePlugin(t, id, `"run":{"js":"main.js"}`, map[string]string{"main.js": src})
	p, err := h.Start(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestHostileFloodJS: a run.js plugin with no permissions floods the Host
// through the prelude, in an engine's process and in the Host's own: a
// call's and a notification's params whose toJSON returns an object of
// 90,000 keys, and raw lines of 90,000 keys or of a batch of tiny items,
// written by a JSON.stringify the script replaced.
func TestHostileFloodJS(t *testing.T) {
	attacks := []struct {
		name, src, says string
	}{
		{"call-tojson", jsFlood(jsKeys, `escouade.call("log", params).catch(() => {})`), "not JSON"},
		{"notify-tojson", jsFlood(jsKeys, `escouade.notify("log", params)`), "not JSON"},
		{"raw-keys", jsFlood(jsRaw(floodLine("flood-keys")), `raw()`), "not JSON"},
		{"raw-batch", jsFlood(jsRaw(floodLine("flood-batch")), `raw()`), "not JSON-RPC 2.0"},
	}
	reference := jsFlood(jsNested, `escouade.notify("log", params)`)
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			// The reference runs whichever attack is run alone.
			// Its lines are logs, journaled.
			r := runJSFlood(t, eng.engine, reference, "reference line", "")
			afterFlood(t, r.h, r.j, r.p)
			ref := r.cost
			for _, a := range attacks {
				t.Run(a.name, func(t *testing.T) {
					r := runJSFlood(t, eng.engine, a.src, a.says, "")
					floodBounds(t, eng.engine, r.cost, ref)
					afterFlood(t, r.h, r.j, r.p)
				})
			}
		})
	}
}

// wasmFlood is the module of testdata/wasmflood, built once.
var wasmFlood = sync.OnceValues(func() ([]byte, error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return nil, err
	}
	out := filepath.Join(testTemp, "flood.wasm")
	cmd := exec.Command(goTool, "build", "-trimpath", "-o", out, "./testdata/wasmflood")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false")
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%v: %s", err, b)
	}
	return os.ReadFile(out)
})

// warmFloodModule builds the flood module and starts it once, which
// compiles it into the cache every later start reads: a compilation is
// not what is measured.
func warmFloodModule(t *testing.T) {
	t.Helper()
	if _, err := wasmFlood(); err != nil {
		t.Fatal("the flood module does not build:", err)
	}
	h, j, _ := floodHost(t, escouade.EngineInProcess)
	j.wait(t, startFloodWASM(t, h, "idle").ID(), "flood done")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// startFloodWASM starts the flood module as the plugin flood-<mode>,
// which tells it what to send.
func startFloodWASM(t *testing.T, h *escouade.Host, mode string) *escouade.Plugin {
	t.Helper()
	code, err := wasmFlood()
	if err != nil {
		t.Fatal(err)
	}
	// big.txt is what flood-bomb reads: as large as files/read returns.
	dir := writePlugin(t, "flood-"+mode, `"run":{"wasm":"plugin.wasm"}`, map[string]string{"big.txt": strings.Repeat("x", 256<<10)})
	if err := os.WriteFile(filepath.Join(dir, "plugin.wasm"), code, 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := h.Start(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestHostileFloodWASM: a run.wasm module floods the Host, in an engine's
// process and in the Host's own: raw lines of 90,000 keys, batches of tiny
// items, and escouade.call with params of 90,000 keys.
func TestHostileFloodWASM(t *testing.T) {
	warmFloodModule(t)
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			// The references run whichever attack is run alone.
			refs := map[string]hostCost{}
			for _, mode := range []string{"plain", "abi-plain"} {
				h, j, rec := floodHost(t, eng.engine)
				var p *escouade.Plugin
				refs[mode] = measure(t, func() {
					p = startFloodWASM(t, h, mode)
					floodSaid(t, j, rec, p.ID(), "flood done")
				})
				afterFlood(t, h, j, p)
			}
			for _, a := range []struct{ mode, says, ref string }{
				{"keys", "not JSON", "plain"},
				{"batch", "not JSON-RPC 2.0", "plain"},
				{"abi-keys", "", "abi-plain"},
			} {
				t.Run(a.mode, func(t *testing.T) {
					h, j, rec := floodHost(t, eng.engine)
					var p *escouade.Plugin
					c := measure(t, func() {
						p = startFloodWASM(t, h, a.mode)
						floodSaid(t, j, rec, p.ID(), "flood done")
						if a.says != "" {
							floodWait(t, j, rec, "every line answered", func() bool { return len(j.find(p.ID(), a.says)) >= floodLines })
						}
					})
					if a.says == "" {
						// escouade.call's params are refused invalidParams,
						// each, by the Host or the engine's process.
						if e := j.find(p.ID(), "flood done"); !strings.Contains(e[0].msg, fmt.Sprintf("%d refused", floodLines)) {
							t.Errorf("the module said %q, want %d calls refused", e[0].msg, floodLines)
						}
					} else if n := len(j.find(p.ID(), a.says)); n != floodLines {
						t.Errorf("%d lines answered, want one answer each: %d", n, floodLines)
					}
					floodBounds(t, eng.engine, c, refs[a.ref])
					afterFlood(t, h, j, p)
				})
			}
		})
	}
}

// The siblings of the floods, on the engines' paths: each line is of a
// kind a decoder or an answer might spend more on than the line's bytes,
// and each must be answered as escouade/REFERENCE.md says, the Host
// bounded.

// siblingBounds are what floodLines lines of the siblings may cost the
// Host (of a few MiB each at most): far below what a superlinear check or
// an answer that repeats what it refuses would cost, far above what
// reading them does. A batch of files/read holds a worker's answers at
// once, and the batch's answer: the most of the siblings, some 160 MiB.
func siblingBounds(t *testing.T, e escouade.Engine, c hostCost) {
	t.Helper()
	t.Logf("%v", c)
	// 768 MiB: the batch bomb allocates ~400–530 MiB, more when the load
	// lets more of its batches be answered than refused; far below what
	// answering its batches whole would take (64 MiB an answer).
	hostBounds(t, e, c, 768<<20, 256<<10)
}

// TestHostileFloodSiblingsJS: a run.js plugin with no permissions sends,
// back to back, a string of a million escapes, a key of a million
// escapes, params nested past the depth bound, params whose toJSON throws
// (the script's own error: the Host sees nothing), and settings/get for a
// project named by a MiB.
func TestHostileFloodSiblingsJS(t *testing.T) {
	probes := []struct {
		name, src string
		says      string // in the journal, floodLines times
		answer    string // in the Host's lines, floodLines times
		escaped   bool   // measured beside the reference
	}{
		{name: "escaped-string", src: jsFlood(`const params = { level: "info", message: "\u0001".repeat(1 << 20) };`, `escouade.notify("log", params)`), says: "\u0001\u0001\u0001", escaped: true},
		{name: "escaped-key", src: jsFlood(`const params = { level: "info", message: "escaped key", ["\u0001".repeat(1 << 20)]: 1 };`, `escouade.notify("log", params)`), says: "escaped key", escaped: true},
		{name: "deep", src: jsFlood(`let deep = 1; for (let i = 0; i < 200; i++) deep = [deep];
const params = { toJSON() { return { level: "info", message: "x", deep: deep }; } };`, `escouade.notify("log", params)`), says: "not JSON"},
		{name: "tojson-throws", src: jsFlood(`const params = { toJSON() { throw new Error("no JSON here"); } };`,
			`escouade.call("log", params).catch((e) => escouade.log("info", "rejected: " + e.message))`), says: "rejected: no JSON here"},
		{name: "settings-project", src: jsFlood(`const project = "\x7f".repeat(1 << 20);`,
			`escouade.settings(project).then(() => escouade.log("info", "settings answered"))`), says: "settings answered", answer: `"result":{}`},
	}
	// The reference of the escapes: lines of the same bytes, none escaped
	// (JSON.stringify writes \u0001 as six).
	reference := jsFlood(`const params = { level: "info", message: "reference " + "x".repeat(6 << 20) };`, `escouade.notify("log", params)`)
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			// The reference runs whichever probe is run alone.
			r := runJSFlood(t, eng.engine, reference, "reference x", "")
			afterFlood(t, r.h, r.j, r.p)
			ref := r.cost
			for _, pr := range probes {
				t.Run(pr.name, func(t *testing.T) {
					r := runJSFlood(t, eng.engine, pr.src, pr.says, pr.answer)
					if _, longest := r.rec.hostLines(""); longest > 4<<10 {
						t.Errorf("the Host wrote a line of %d bytes", longest)
					}
					if pr.escaped {
						besideReference(t, r.cost, ref)
					} else {
						siblingBounds(t, eng.engine, r.cost)
					}
					afterFlood(t, r.h, r.j, r.p)
				})
			}
		})
	}
}

// TestHostileFloodSiblingsWASM: a run.wasm module writes, back to back,
// lines of a million nested arrays, requests whose params hold a number of
// a MiB, one line of 256 MiB, and batches of 256 files/read whose answers
// would make 64 MiB: each is answered as REFERENCE.md says (parse,
// invalidParams, a line over the cap discarded, a batch's answer within 8
// MiB), the Host bounded.
func TestHostileFloodSiblingsWASM(t *testing.T) {
	warmFloodModule(t)
	probes := []struct {
		mode    string
		says    string // in the journal, lines times
		answer  string // in the Host's lines, lines times
		lines   int
		longest int // the Host's longest line
	}{
		{mode: "deep", says: "not JSON", lines: floodLines, longest: 4 << 10},
		{mode: "number", answer: `"code":-32602`, lines: floodLines, longest: 4 << 10},
		{mode: "nonl", says: "over the cap", lines: 1, longest: 4 << 10},
		// Each batch is answered in one line, its calls beyond the Host's
		// workers refused failed, busy, the line within the 8 MiB of a
		// batch's answer: bombBounds.
		{mode: "bomb", answer: `[{"jsonrpc":"2.0"`, lines: bombBatches, longest: 8<<20 + 64<<10},
	}
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			for _, pr := range probes {
				t.Run(pr.mode, func(t *testing.T) {
					var ref hostCost
					workers := 0
					if pr.mode == "bomb" {
						workers = bombWorkers
						ref = readsReference(t, eng.engine)
					}
					h, j, rec := floodHostWorkers(t, eng.engine, workers)
					t.Cleanup(func() {
						if t.Failed() {
							t.Logf("the lines recorded: %s", rec.dump())
						}
					})
					var p *escouade.Plugin
					c := measure(t, func() {
						p = startFloodWASM(t, h, pr.mode)
						floodSaid(t, j, rec, p.ID(), "flood done")
						floodWait(t, j, rec, "every line answered", func() bool {
							n, _ := rec.hostLines(pr.answer)
							return (pr.says == "" || len(j.find(p.ID(), pr.says)) >= pr.lines) && (pr.answer == "" || n >= pr.lines)
						})
					})
					if pr.says != "" {
						if n := len(j.find(p.ID(), pr.says)); n != pr.lines {
							t.Errorf("the journal said %q %d times, want %d", pr.says, n, pr.lines)
						}
					}
					n, longest := rec.hostLines(pr.answer)
					if pr.answer != "" && n != pr.lines {
						t.Errorf("%d lines of the Host hold %q, want %d", n, pr.answer, pr.lines)
					}
					if longest > pr.longest {
						t.Errorf("the Host wrote a line of %d bytes, want %d at most", longest, pr.longest)
					}
					if pr.mode == "bomb" {
						bombBounds(t, eng.engine, rec, c, ref)
					} else {
						siblingBounds(t, eng.engine, c)
					}
					afterFlood(t, h, j, p)
				})
			}
		})
	}
}

// The batch bomb (flood-bomb) sends bombBatches batches of 256 files/read
// of 256 KiB, each once the last is answered, to a Host that serves
// bombWorkers requests at once: each batch has at least bombWorkers of its
// calls served, whose answers (12 MiB) pass what a batch's answer may
// hold, and the others refused busy. Then what the bomb costs, and that
// its answers are cut, does not depend on how many of its calls the load
// let through (with the Host's 16 workers, 3 a batch under load, and
// their answers fit).
const (
	bombBatches = 2
	bombWorkers = 48
)

// readsReference measures the reference of the batch bomb: a benign
// module making the same files/read calls, one at a time, each answered
// whole.
func readsReference(t *testing.T, e escouade.Engine) hostCost {
	t.Helper()
	h, j, rec := floodHostWorkers(t, e, bombWorkers)
	rec.keepHostLines(4 << 10) // 128 MiB of answers
	var p *escouade.Plugin
	c := measure(t, func() {
		p = startFloodWASM(t, h, "reads")
		floodSaid(t, j, rec, p.ID(), "flood done")
	})
	want := fmt.Sprintf("flood done: %d read", bombBatches*256)
	if e := j.find(p.ID(), "flood done"); e[0].msg != want {
		t.Errorf("the reference said %q, want %q", e[0].msg, want)
	}
	afterFlood(t, h, j, p)
	return c
}

// bombBounds checks that each of the bomb's batches had answers cut, and
// that the bomb cost the Host, recorded by rec, half of what ref did at
// most, and a little more: each batch's calls are served bombWorkers at a
// time and the others refused busy, its answer cut to 8 MiB, so that the
// bomb reads a fifth of what ref does (0.3× its CPU and allocations seen,
// at rest and under load alike). Served whole, its calls would cost what
// ref's do; its answers whole, a batch would be answered by 12 MiB or
// more.
func bombBounds(t *testing.T, e escouade.Engine, rec *wireRecord, c, ref hostCost) {
	t.Helper()
	served, busy, cut := rec.hostCount(`"result"`), rec.hostCount("too many requests"), rec.hostCount("answer too large")
	t.Logf("the bomb: %v; %d calls answered, %d refused busy, %d cut", c, served, busy, cut)
	t.Logf("the reference: %v", ref)
	t.Logf("CPU %.2f× the reference's, allocations %.2f×", float64(c.cpu)/float64(max(ref.cpu, time.Millisecond)), float64(c.alloc)/float64(max(ref.alloc, 1)))
	if cut < bombBatches {
		t.Errorf("%d answers cut to fit their batch's answer, want some in each of the %d batches", cut, bombBatches)
	}
	if c.cpu > ref.cpu/2+time.Second {
		t.Errorf("the bomb took %v of the Host's CPU, the reference %v", c.cpu, ref.cpu)
	}
	if c.alloc > ref.alloc/2+64<<20 {
		t.Errorf("the bomb made the Host allocate %d MiB, the reference %d MiB", c.alloc>>20, ref.alloc>>20)
	}
	// In-process, the module's memory is the Host's: only the isolated
	// Host's RSS is its own.
	if e == escouade.EngineIsolated && c.peak > ref.peak+256<<10 {
		t.Errorf("the bomb grew the Host's RSS by %d MiB, the reference by %d MiB", c.peak>>10, ref.peak>>10)
	}
}

// hostCount counts s in the Host's lines recorded so far.
func (r *wireRecord) hostCount(s string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, x := range r.seq {
		if x.fromHost {
			n += bytes.Count(x.line, []byte(s))
		}
	}
	return n
}

// TestHostileFloodJSToJSONRecursion: a toJSON that returns an object
// holding itself makes JSON.stringify recurse without end in goja's Go
// code, each toJSON returning before the next is called (no bound on
// nested calls stops it, and goja's check for cycles makes each level
// slower than the last): the turn's bound ends it, the instance with it,
// and the Host, in-process too, survives with the other plugins.
func TestHostileFloodJSToJSONRecursion(t *testing.T) {
	src := `const params = { toJSON() { return { level: "info", message: "x", again: params }; } };
setTimeout(() => escouade.call("log", params), 0);`
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			o := hostileOptions()
			o.Engine = eng.engine
			h, j := hookedHost(t, nil, newValidator(t), o)
			startScript(t, h, "guard", guardJS)
			p := startFloodJS(t, h, "recurse", src)
			j.wait(t, "recurse", "script interrupted: a turn ran past")
			j.wait(t, "recurse", "plugin restarted")
			waitFor(t, "the plugin running again", func() bool { return p.State() == escouade.StateRunning })
			if d := decide(t, h, "rm"); d.Verdict != protocol.Deny || d.Plugin != "guard" {
				t.Errorf("Decide(rm) = %+v", d)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			if err := h.Close(ctx); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
	}
}

// TestHostileFloodEndlessLine: a module writes a line that never ends.
// The Host discards it as it streams by (a line past the cap is never
// held), spends on it what reading a pipe costs, and Close ends the
// plugin within its deadline, mid-line.
func TestHostileFloodEndlessLine(t *testing.T) {
	warmFloodModule(t)
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			h, j, rec := floodHost(t, eng.engine)
			var p *escouade.Plugin
			c := measure(t, func() {
				p = startFloodWASM(t, h, "endless")
				// What the Host read of it: readiness, not a wait.
				floodWait(t, j, rec, "256 MiB written", func() bool { return rec.pluginBytes() >= 256<<20 })
			})
			t.Logf("256 MiB of a line: %v", c)
			// The line is gathered up to the cap before it is known to
			// pass it (8 MiB, grown by appends: some 48 MiB allocated, the
			// collector's to free when it will), then discarded: what it
			// costs does not grow with its length, half of which would
			// pass the bounds.
			// The module's own memory is the Host's in-process, and its
			// writing the Host's CPU: the memory bounds hold in both.
			if c.alloc > 128<<20 {
				t.Errorf("the Host allocated %d MiB for a line it discards", c.alloc>>20)
			}
			if c.peak > 128<<10 {
				t.Errorf("the Host's RSS grew by %d MiB for a line it discards", c.peak>>10)
			}
			hostBounds(t, eng.engine, c, 128<<20, 128<<10)
			if len(j.find(p.ID(), "over the cap")) > 0 {
				t.Errorf("a line that has not ended was journaled as over the cap")
			}
			var pid int
			if eng.engine == escouade.EngineIsolated {
				pid = enginePid(t, p.ID())
			}
			afterFlood(t, h, j, p)
			if pid != 0 && procfs.Alive(pid) {
				t.Errorf("the engine's process %d outlived Close", pid)
			}
		})
	}
}

// BenchmarkFloodLine is what one flood line of about a MiB, written by a
// run.wasm module, costs the Host, beside the reference: a line of the
// same bytes, a notification of no method whose params hold one long
// string, which the Host reads to its end. host-cpu-ms/line is the Host's
// own CPU (its rusage), the engine's included in-process; ns/op the wall
// time a line takes to be read and answered.
func BenchmarkFloodLine(b *testing.B) {
	code, err := wasmFlood()
	if err != nil {
		b.Fatal("the flood module does not build:", err)
	}
	for _, eng := range engines {
		for _, kind := range []string{"unknown", "keys", "batch"} {
			b.Run(eng.name+"/"+kind, func(b *testing.B) {
				h, _ := newHost(b, &escouade.Options{Engine: eng.engine, Projects: projects(), ScriptTurn: time.Minute, WASMCacheDir: wasmCache(b)})
				rec := recordWire(h)
				dir := writePlugin(b, "flood-bench-"+kind, `"run":{"wasm":"plugin.wasm"},"permissions":{"events":["agent.created"]}`, nil)
				if err := os.WriteFile(filepath.Join(dir, "plugin.wasm"), code, 0o644); err != nil {
					b.Fatal(err)
				}
				p, err := h.Start(context.Background(), dir)
				if err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				b.ResetTimer()
				cpu := processCPU()
				if _, err := h.Fact(context.Background(), "agent.created", map[string]any{"n": b.N}, escouade.About{Project: "p"}); err != nil {
					b.Fatal(err)
				}
				// The Host reads its lines in order: once it has read the
				// module's "bench done", it has read every flood line.
				for deadline := time.Now().Add(time.Minute); !rec.pluginSaid("bench done"); {
					if time.Now().After(deadline) {
						b.Fatalf("%s never said bench done", p.ID())
					}
					time.Sleep(time.Millisecond)
				}
				b.StopTimer()
				b.ReportMetric(float64(processCPU()-cpu)/float64(time.Millisecond)/float64(b.N), "host-cpu-ms/line")
			})
		}
	}
}
