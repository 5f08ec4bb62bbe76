package wiretest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg" // decode delivered jpeg frames
	_ "image/png"  // decode delivered png frames
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/goleak"

	"shinken.dev/go/internal/procfs"
	"shinken.dev/go/internal/schematest"
	"shinken.dev/go/shinken/aci"
)

// The daemon binaries, built once by TestMain: raceBin with the race
// detector (every test but the memory one runs it, so a data race the
// hostile traffic provokes fails the test), plainBin without it (its memory
// figures are the real ones).
var raceBin, plainBin string

const token = "T0k3n-wiretest"

type mainRun struct{ m *testing.M }

// Run builds the daemon into a temporary directory, runs the tests, and
// removes the directory. goleak.VerifyTestMain calls it.
func (r mainRun) Run() int {
	// Prebuilt binaries may be named instead, to test a given build.
	raceBin, plainBin = os.Getenv("WIRETEST_RACE_BIN"), os.Getenv("WIRETEST_BIN")
	if raceBin != "" && plainBin != "" {
		return r.m.Run()
	}
	dir, err := os.MkdirTemp("", "wiretest")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	raceBin = filepath.Join(dir, "example-race")
	plainBin = filepath.Join(dir, "example")
	for _, b := range []struct {
		out   string
		flags []string
	}{{raceBin, []string{"-race"}}, {plainBin, nil}} {
		args := append([]string{"build"}, b.flags...)
		args = append(args, "-o", b.out, "shinken.dev/go/cmd/example")
		cmd := exec.Command("go", args...)
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "go %s: %v\n", strings.Join(args, " "), err)
			return 1
		}
	}
	return r.m.Run()
}

func TestMain(m *testing.M) { goleak.VerifyTestMain(mainRun{m}) }

// lockedBuffer collects a daemon's stderr.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// daemon is one running example daemon.
type daemon struct {
	cmd    *exec.Cmd
	pid    int
	url    string // ws://host:port/aci
	stderr *lockedBuffer
	exited chan struct{} // closed once the process is reaped
	state  *os.ProcessState
	// stopped says a test ended the daemon itself and checked its exit.
	stopped bool
}

var aciLine = regexp.MustCompile(`(?m)^ACI:\s+(ws://\S+)`)

// startDaemon runs the race-enabled daemon on a free port with the test
// token, without the shipped guard (-no-guard: these tests are the wire
// protocol's, exec's included, not a policy's); extra args follow. The daemon is stopped with SIGTERM when the
// test ends, and its stderr is checked for data races and panics.
func startDaemon(t *testing.T, args ...string) *daemon {
	t.Helper()
	return startBin(t, raceBin, args...)
}

func startBin(t *testing.T, bin string, args ...string) *daemon {
	t.Helper()
	all := append([]string{"-no-guard", "-listen", "127.0.0.1:0", "-token", token}, args...)
	cmd := exec.Command(bin, all...)
	cmd.Env = append(os.Environ(), "GORACE=halt_on_error=0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	d := &daemon{cmd: cmd, stderr: &lockedBuffer{}, exited: make(chan struct{})}
	cmd.Stderr = d.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d.pid = cmd.Process.Pid
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sent := false
		for sc.Scan() {
			if m := aciLine.FindStringSubmatch(sc.Text()); m != nil && !sent {
				urls <- m[1]
				sent = true
			}
		}
		cmd.Wait()
		d.state = cmd.ProcessState
		close(d.exited)
	}()
	t.Cleanup(func() { d.stop(t) })
	select {
	case d.url = <-urls:
	case <-d.exited:
		t.Fatalf("daemon exited before serving:\n%s", d.stderr)
	case <-time.After(30 * time.Second):
		t.Fatalf("daemon printed no ACI URL:\n%s", d.stderr)
	}
	return d
}

// alive reports whether the daemon process is still running.
func (d *daemon) alive() bool {
	select {
	case <-d.exited:
		return false
	default:
		return true
	}
}

// stop ends the daemon with SIGTERM (SIGKILL after 20 s) and fails the test
// if it died on its own, crashed, raced or panicked.
func (d *daemon) stop(t *testing.T) {
	t.Helper()
	if d.stopped {
		return
	}
	if !d.alive() {
		t.Errorf("the daemon died during the test: %v\n%s", d.state, tail(d.stderr.String()))
		return
	}
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.exited:
	case <-time.After(20 * time.Second):
		d.cmd.Process.Kill()
		<-d.exited
		t.Errorf("the daemon ignored SIGTERM for 20 s")
	}
	d.checkLog(t)
	if !d.state.Success() {
		t.Errorf("daemon exit after SIGTERM: %v\n%s", d.state, tail(d.stderr.String()))
	}
}

// checkLog fails t when the daemon's log shows a data race or a panic,
// recovered or not.
func (d *daemon) checkLog(t *testing.T) {
	t.Helper()
	log := d.stderr.String()
	for _, bad := range []string{"WARNING: DATA RACE", "handler panic", "panic:", "fatal error:"} {
		if i := strings.Index(log, bad); i >= 0 {
			t.Errorf("daemon log shows %q:\n%s", bad, excerpt(log, i))
		}
	}
}

func excerpt(s string, i int) string {
	end := min(len(s), i+6000)
	return s[max(0, i-200):end]
}

func tail(s string) string {
	if len(s) > 4000 {
		return "..." + s[len(s)-4000:]
	}
	return s
}

// A frame is one message the daemon sent, validated and decoded.
type frame struct {
	Binary  bool
	Raw     []byte // the whole message
	Header  []byte // the JSON: the text message, or a binary frame's header
	Payload []byte // a binary frame's payload area
	M       msg
	Keys    map[string]json.RawMessage // the header's top-level fields
	At      time.Time
	N       int // arrival order on its connection, from 1
}

// msg holds the fields of every message kind the daemon sends.
type msg struct {
	Type   string          `json:"type"`
	CallID *string         `json:"call_id"`
	OK     *bool           `json:"ok"`
	Error  *string         `json:"error"`
	Value  json.RawMessage `json:"value"`

	V            *int          `json:"v"`
	Capabilities *capabilities `json:"capabilities"`
	T            *float64      `json:"t"`

	ObsID       string    `json:"obs_id"`
	Cause       string    `json:"cause"`
	Stream      string    `json:"stream"`
	Seq         *uint64   `json:"seq"`
	Display     *space    `json:"display"`
	Image       *imageRef `json:"image"`
	Tiles       []tileRef `json:"tiles"`
	FrameHash   string    `json:"frame_hash"`
	NotModified *bool     `json:"not_modified"`
	Pointer     []int     `json:"pointer"`
	Tree        string    `json:"tree"`
	TreeText    string    `json:"tree_text"`
	Revision    int       `json:"revision"`
	DiffOf      int       `json:"diff_of"`
	Focus       string    `json:"focus"`
	NodeCount   *int      `json:"node_count"`
	Elements    []element `json:"elements"`

	Channel    string          `json:"channel"`
	DataB64    *string         `json:"data_b64"`
	Data       *byteRange      `json:"data"`
	ExitCode   json.RawMessage `json:"exit_code"`
	Signal     json.RawMessage `json:"signal"`
	TimedOut   *bool           `json:"timed_out"`
	Truncated  *bool           `json:"truncated"`
	DurationMS *float64        `json:"duration_ms"`
}

type capabilities struct {
	SchemaVersion    int      `json:"schema_version"`
	Verbs            []string `json:"verbs"`
	Targets          []string `json:"targets"`
	ObservationTypes []string `json:"observation_types"`
	MaxLongEdge      int      `json:"max_long_edge"`
	ImageFormats     []string `json:"image_formats"`
	BinaryFrames     bool     `json:"binary_frames"`
	FrameDedup       bool     `json:"frame_dedup"`
	ObserveAfterAct  bool     `json:"observe_after_act"`
	Structured       bool     `json:"structured_observation"`
}

type space struct {
	Origin     string  `json:"origin"`
	W          int     `json:"w"`
	H          int     `json:"h"`
	DPR        float64 `json:"dpr"`
	SourceRect struct {
		X, Y, W, H int
	} `json:"source_rect"`
	Delivered struct {
		W, H int
	} `json:"delivered"`
}

type imageRef struct {
	Ref    *string `json:"ref"`
	Off    *int    `json:"off"`
	Len    *int    `json:"len"`
	W      int     `json:"w"`
	H      int     `json:"h"`
	Scope  string  `json:"scope"`
	Format string  `json:"format"`
}

type tileRef struct {
	X, Y, W, H int
	Ref        *string `json:"ref"`
	Off        *int    `json:"off"`
	Len        *int    `json:"len"`
}

type byteRange struct {
	Off int `json:"off"`
	Len int `json:"len"`
}

type element struct {
	Ref     string    `json:"ref"`
	Role    string    `json:"role"`
	Name    string    `json:"name"`
	Value   string    `json:"value"`
	States  []string  `json:"states"`
	Actions []string  `json:"actions"`
	Focused bool      `json:"focused"`
	BBox    []float64 `json:"bbox"`
}

// has reports whether the message carries the top-level field key.
func (f *frame) has(key string) bool { _, ok := f.Keys[key]; return ok }

// id returns the call_id a reply answers: call_id on ack and result, cause
// on observations and exec events.
func (f *frame) id() string {
	if f.M.CallID != nil {
		return *f.M.CallID
	}
	return f.M.Cause
}

// isReply reports whether f is an ack, a result, or an observation caused
// by a call (the first message answering a call_id).
func (f *frame) isReply() bool {
	switch f.M.Type {
	case "ack", "result":
		return true
	case "observation":
		return f.M.Cause != "" && f.M.Stream == ""
	}
	return false
}

// imageBytes returns the codec bytes of the frame's image.
func (f *frame) imageBytes() ([]byte, error) {
	im := f.M.Image
	if im == nil {
		return nil, errors.New("no image")
	}
	if f.Binary {
		return f.Payload[*im.Off : *im.Off+*im.Len], nil
	}
	return base64.StdEncoding.DecodeString(*im.Ref)
}

func (f *frame) String() string {
	h := f.Header
	if len(h) > 400 {
		h = append(slices.Clip(h[:400]), "..."...)
	}
	if f.Binary {
		return fmt.Sprintf("binary[%d] %s", len(f.Raw), h)
	}
	return string(h)
}

// wire is a raw protocol client: one reader goroutine validates and decodes
// everything the daemon sends and queues it for the test.
type wire struct {
	t  testing.TB
	ws *websocket.Conn

	mu      sync.Mutex
	pending []*frame
	arrived chan struct{} // closed and replaced whenever a frame arrives
	all     int           // frames received
	readErr error         // why the reader stopped
	done    chan struct{} // closed when the reader stops
	lenient bool          // do not fail the test on schema violations
	invalid []string      // schema violations seen when lenient
}

// dialRaw opens a WebSocket to the daemon without saying hello.
func dialRaw(t testing.TB, d *daemon) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, d.url, nil)
	if err != nil {
		t.Fatalf("dial %s: %v", d.url, err)
	}
	ws.SetReadLimit(-1)
	t.Cleanup(func() { closeGently(ws) })
	return ws
}

// newWire starts the reader on ws.
func newWire(t testing.TB, ws *websocket.Conn) *wire {
	w := &wire{t: t, ws: ws, arrived: make(chan struct{}), done: make(chan struct{})}
	go w.read()
	t.Cleanup(func() {
		closeGently(ws)
		<-w.done
	})
	return w
}

// closeGently ends a connection with a close handshake, so the daemon has
// finished with it by the time the test stops the daemon, then drops it.
// (Tests that want a connection live at shutdown say so.)
func closeGently(ws *websocket.Conn) {
	ws.Close(websocket.StatusNormalClosure, "")
	ws.CloseNow()
}

type helloOpts struct {
	binary bool
	token  *string
}

// dialWire connects and completes the handshake; it fails the test unless
// the daemon answers with a valid welcome.
func dialWire(t testing.TB, d *daemon, o *helloOpts) (*wire, *frame) {
	t.Helper()
	if o == nil {
		o = &helloOpts{}
	}
	w := newWire(t, dialRaw(t, d))
	hello := map[string]any{"type": "hello", "v": 0, "client": map[string]any{"name": "wiretest", "version": "0"}}
	tok := token
	if o.token != nil {
		tok = *o.token
	}
	hello["token"] = tok
	if o.binary {
		hello["accept"] = map[string]any{"binary_frames": true}
	}
	w.send(hello)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f, err := w.next(ctx)
	if err != nil {
		t.Fatalf("handshake: %v", err)
	}
	if f.M.Type != "welcome" {
		t.Fatalf("handshake: got %s, want a welcome", f)
	}
	return w, f
}

func (w *wire) read() {
	defer close(w.done)
	for {
		typ, data, err := w.ws.Read(context.Background())
		if err != nil {
			w.mu.Lock()
			w.readErr = err
			close(w.arrived)
			w.mu.Unlock()
			return
		}
		f, verr := decodeFrame(typ, data)
		if verr != nil {
			w.mu.Lock()
			w.invalid = append(w.invalid, verr.Error())
			w.mu.Unlock()
			if !w.lenient {
				w.t.Errorf("daemon sent an invalid message: %v", verr)
			}
		}
		if f == nil {
			continue
		}
		w.mu.Lock()
		w.all++
		f.N = w.all
		w.pending = append(w.pending, f)
		close(w.arrived)
		w.arrived = make(chan struct{})
		w.mu.Unlock()
	}
}

// decodeFrame validates one message against the schema and decodes it. A
// schema violation is returned with the frame, so that tests can go on;
// a frame that cannot be decoded at all comes back nil.
func decodeFrame(typ websocket.MessageType, data []byte) (*frame, error) {
	f := &frame{Raw: data, At: time.Now()}
	var problems []string
	if typ == websocket.MessageBinary {
		f.Binary = true
		if len(data) < 4 {
			return nil, fmt.Errorf("binary frame of %d bytes", len(data))
		}
		n := binary.LittleEndian.Uint32(data)
		if uint64(n) > uint64(len(data)-4) {
			return nil, fmt.Errorf("binary header_len %d runs past the %d-byte frame", n, len(data))
		}
		f.Header, f.Payload = data[4:4+n], data[4+n:]
	} else {
		f.Header = data
	}
	if err := json.Unmarshal(f.Header, &f.Keys); err != nil {
		return nil, fmt.Errorf("not a JSON object: %v: %s", err, trunc(f.Header))
	}
	if err := json.Unmarshal(f.Header, &f.M); err != nil {
		problems = append(problems, fmt.Sprintf("decode: %v", err))
	}
	def := ""
	if f.Binary {
		def = "BinaryFrameHeader"
		if f.M.Type == "exec_output" {
			def = "BinaryExecOutputHeader"
		}
	}
	if err := schematest.Check(def, f.Header); err != nil {
		problems = append(problems, fmt.Sprintf("schema %q: %v", def, err))
	}
	problems = append(problems, checkPayload(f)...)
	if len(problems) > 0 {
		return f, fmt.Errorf("%s\n%s", strings.Join(problems, "\n"), f)
	}
	return f, nil
}

// checkPayload checks what the schema cannot: offsets inside the payload,
// tiles concatenated in order, image bytes that decode to the advertised
// size and format, error strings shaped "code: detail".
func checkPayload(f *frame) []string {
	var p []string
	m := &f.M
	inRange := func(what string, off, n *int) bool {
		if off == nil || n == nil {
			p = append(p, what+": no off/len")
			return false
		}
		if *off < 0 || *n < 0 || *off > len(f.Payload) || *n > len(f.Payload)-*off {
			p = append(p, fmt.Sprintf("%s: bytes [%d,+%d) outside the %d-byte payload", what, *off, *n, len(f.Payload)))
			return false
		}
		return true
	}
	decodes := func(what string, b []byte, w, h int, format string) {
		cfg, got, err := image.DecodeConfig(bytes.NewReader(b))
		if err != nil {
			p = append(p, fmt.Sprintf("%s: %d bytes do not decode: %v", what, len(b), err))
			return
		}
		if format == "" {
			format = "png"
		}
		if got != format {
			p = append(p, fmt.Sprintf("%s: format says %s, bytes are %s", what, format, got))
		}
		if cfg.Width != w || cfg.Height != h {
			p = append(p, fmt.Sprintf("%s: says %dx%d, bytes are %dx%d", what, w, h, cfg.Width, cfg.Height))
		}
	}
	format := ""
	if m.Image != nil {
		format = m.Image.Format
		if f.Binary {
			if inRange("image", m.Image.Off, m.Image.Len) {
				decodes("image", f.Payload[*m.Image.Off:*m.Image.Off+*m.Image.Len], m.Image.W, m.Image.H, format)
			}
		} else if m.Image.Ref != nil {
			b, err := base64.StdEncoding.DecodeString(*m.Image.Ref)
			if err != nil {
				p = append(p, "image.ref is not base64: "+err.Error())
			} else {
				decodes("image", b, m.Image.W, m.Image.H, format)
			}
		}
	}
	next := 0
	for i, t := range m.Tiles {
		what := fmt.Sprintf("tiles[%d]", i)
		if f.Binary {
			if inRange(what, t.Off, t.Len) {
				if *t.Off != next {
					p = append(p, fmt.Sprintf("%s: off %d, want %d (tiles concatenated in order)", what, *t.Off, next))
				}
				next = *t.Off + *t.Len
				decodes(what, f.Payload[*t.Off:*t.Off+*t.Len], t.W, t.H, "")
			}
		} else if t.Ref != nil {
			b, err := base64.StdEncoding.DecodeString(*t.Ref)
			if err != nil {
				p = append(p, what+".ref is not base64")
			} else {
				decodes(what, b, t.W, t.H, "")
			}
		}
	}
	if m.Type == "exec_output" && f.Binary && m.Data != nil {
		inRange("data", &m.Data.Off, &m.Data.Len)
	}
	if m.Type == "exec_output" && !f.Binary && m.DataB64 != nil {
		if _, err := base64.StdEncoding.DecodeString(*m.DataB64); err != nil {
			p = append(p, "data_b64 is not base64")
		}
	}
	if m.Display != nil && m.Image != nil {
		if m.Display.Delivered.W != m.Image.W || m.Display.Delivered.H != m.Image.H {
			p = append(p, fmt.Sprintf("display.delivered %dx%d but the image is %dx%d",
				m.Display.Delivered.W, m.Display.Delivered.H, m.Image.W, m.Image.H))
		}
	}
	if m.Error != nil {
		if err := checkWireError(*m.Error); err != nil {
			p = append(p, err.Error())
		}
	}
	if m.OK != nil && *m.OK && m.Error != nil {
		p = append(p, "ok=true with an error")
	}
	if m.OK != nil && !*m.OK && m.Error == nil {
		p = append(p, "ok=false without an error")
	}
	return p
}

// knownCodes are the wire error codes of the protocol.
var knownCodes = map[string]bool{}

func init() {
	for _, c := range []aci.Code{aci.CodeInvalidMessage, aci.CodeInvalidAction, aci.CodeUnsupportedVerb,
		aci.CodeUnsupported, aci.CodeUnauthorized, aci.CodePermissionDenied, aci.CodeStaleElementRef,
		aci.CodeElementNotActionable, aci.CodeNoSuchAction, aci.CodeA11yUnavailable, aci.CodeNoSuchWindow,
		aci.CodeNoSuchApp, aci.CodeExecSpawnFailed, aci.CodeTooManyExecs, aci.CodeTooLarge,
		aci.CodeTimeout, aci.CodeBackend, aci.CodeInternal, aci.CodeClosed} {
		knownCodes[string(c)] = true
	}
}

// checkWireError checks the "code: detail" shape with a known code.
func checkWireError(s string) error {
	code, detail, ok := strings.Cut(s, ": ")
	if !ok || detail == "" {
		return fmt.Errorf("error %q is not \"code: detail\"", s)
	}
	if !knownCodes[code] {
		return fmt.Errorf("error %q has an unknown code %q", s, code)
	}
	return nil
}

func errCode(s *string) string {
	if s == nil {
		return ""
	}
	code, _, _ := strings.Cut(*s, ":")
	return code
}

func trunc(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "..."
	}
	return string(b)
}

// send encodes v as JSON (or sends it as is, if it is a []byte or string)
// in one text message.
func (w *wire) send(v any) {
	w.t.Helper()
	if err := w.trySend(v); err != nil {
		w.t.Fatalf("send: %v", err)
	}
}

func (w *wire) trySend(v any) error {
	var data []byte
	switch v := v.(type) {
	case []byte:
		data = v
	case string:
		data = []byte(v)
	default:
		var err error
		if data, err = json.Marshal(v); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return w.ws.Write(ctx, websocket.MessageText, data)
}

// take removes and returns the first pending frame for which match is true,
// waiting for one until ctx ends or the connection closes.
func (w *wire) take(ctx context.Context, match func(*frame) bool) (*frame, error) {
	for {
		w.mu.Lock()
		for i, f := range w.pending {
			if match(f) {
				w.pending = slices.Delete(w.pending, i, i+1)
				w.mu.Unlock()
				return f, nil
			}
		}
		arrived, readErr := w.arrived, w.readErr
		w.mu.Unlock()
		if readErr != nil {
			return nil, fmt.Errorf("connection ended: %w", readErr)
		}
		select {
		case <-arrived:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// next returns the next frame, whatever it is.
func (w *wire) next(ctx context.Context) (*frame, error) {
	return w.take(ctx, func(*frame) bool { return true })
}

// drop forgets the pending frames for which match is true.
func (w *wire) drop(match func(*frame) bool) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(w.pending)
	w.pending = slices.DeleteFunc(w.pending, match)
	return n - len(w.pending)
}

// snapshot returns a copy of the pending frames.
func (w *wire) snapshot() []*frame {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.pending)
}

// reply waits for the first reply to callID.
func (w *wire) reply(ctx context.Context, callID string) (*frame, error) {
	return w.take(ctx, func(f *frame) bool { return f.isReply() && f.id() == callID })
}

// mustReply is reply with a 20 s deadline that fails the test.
func (w *wire) mustReply(callID string) *frame {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	f, err := w.reply(ctx, callID)
	if err != nil {
		w.t.Fatalf("no reply to %s: %v", callID, err)
	}
	return f
}

// closed waits for the connection to end and returns how: the close code
// and reason the daemon sent, or an error when it ended without one.
func (w *wire) closed(ctx context.Context) (websocket.StatusCode, string, error) {
	select {
	case <-w.done:
	case <-ctx.Done():
		return -1, "", fmt.Errorf("still open: %w", ctx.Err())
	}
	var ce websocket.CloseError
	if errors.As(w.readErr, &ce) {
		return ce.Code, ce.Reason, nil
	}
	return -1, "", fmt.Errorf("ended without a close frame: %w", w.readErr)
}

// isOpen reports whether the reader still runs.
func (w *wire) isOpen() bool {
	select {
	case <-w.done:
		return false
	default:
		return true
	}
}

// ping sends a ping with t and waits for the pong carrying it back.
func (w *wire) ping(ctx context.Context, t float64) error {
	if err := w.trySend(map[string]any{"type": "ping", "t": t}); err != nil {
		return err
	}
	f, err := w.take(ctx, func(f *frame) bool { return f.M.Type == "pong" && f.M.T != nil && *f.M.T == t })
	if err != nil {
		return fmt.Errorf("no pong for %g: %w", t, err)
	}
	_ = f
	return nil
}

// act sends an action and returns its call_id.
func (w *wire) act(callID string, action map[string]any) string {
	w.t.Helper()
	w.send(map[string]any{"type": "action", "call_id": callID, "action": action})
	return callID
}

// query sends a query and returns its call_id.
func (w *wire) query(callID, q string) string {
	w.t.Helper()
	w.send(map[string]any{"type": "query", "call_id": callID, "q": q})
	return callID
}

// do sends an action and waits for its reply.
func (w *wire) do(callID string, action map[string]any) *frame {
	w.t.Helper()
	w.act(callID, action)
	return w.mustReply(callID)
}

// mustOK fails the test unless f is a successful reply of type typ.
func mustOK(t testing.TB, f *frame, typ string) {
	t.Helper()
	if f.M.Type != typ {
		t.Fatalf("reply %s: type %s, want %s", f, f.M.Type, typ)
	}
	if typ != "observation" && (f.M.OK == nil || !*f.M.OK) {
		t.Fatalf("reply %s: want ok=true", f)
	}
}

// mustFail fails the test unless f is an ok=false reply of type typ with
// error code code.
func mustFail(t testing.TB, f *frame, typ, code string) {
	t.Helper()
	if f.M.Type != typ || f.M.OK == nil || *f.M.OK || errCode(f.M.Error) != code {
		t.Fatalf("reply %s: want %s ok=false with a %s error", f, typ, code)
	}
}

// children lists the live (not zombie) children of pid.
func children(pid int) []procfs.Stat {
	all, _ := procfs.All()
	var out []procfs.Stat
	for _, p := range all {
		if p.PPID == pid && p.Live() {
			out = append(out, p)
		}
	}
	return out
}

// inGroup lists the live processes of process group pgid.
func inGroup(pgid int) []procfs.Stat {
	all, _ := procfs.All()
	var out []procfs.Stat
	for _, p := range all {
		if p.PGID == pgid && p.Live() {
			out = append(out, p)
		}
	}
	return out
}

// poll calls cond until it returns true or the deadline passes.
func poll(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, within)
		}
		pollWait()
	}
}

// pollWait spaces the checks of a poll, so that it does not spin a core on
// a shared machine; the condition, not the wait, decides.
func pollWait() {
	t := time.NewTimer(5 * time.Millisecond)
	<-t.C
}

// ctxT returns a context that ends after d or with the test.
func ctxT(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// welcomeOf decodes a welcome's capabilities.
func welcomeOf(t testing.TB, f *frame) *capabilities {
	t.Helper()
	if f.M.Capabilities == nil {
		t.Fatalf("welcome without capabilities: %s", f)
	}
	return f.M.Capabilities
}

// screenSize asks the screen_size query.
func screenSize(t testing.TB, w *wire, callID string) (int, int) {
	t.Helper()
	r := w.mustReply(w.query(callID, "screen_size"))
	mustOK(t, r, "result")
	var sz struct{ W, H int }
	if err := json.Unmarshal(r.M.Value, &sz); err != nil {
		t.Fatalf("screen_size value %s: %v", r.M.Value, err)
	}
	return sz.W, sz.H
}

type windowInfo struct {
	ID     uint64 `json:"id"`
	Title  string `json:"title"`
	App    string `json:"app"`
	BBox   []int  `json:"bbox"`
	Active *bool  `json:"active"`
}

// listWindows asks the list_windows query.
func listWindows(t testing.TB, w *wire, callID string) []windowInfo {
	t.Helper()
	r := w.mustReply(w.query(callID, "list_windows"))
	mustOK(t, r, "result")
	var ws []windowInfo
	if err := json.Unmarshal(r.M.Value, &ws); err != nil {
		t.Fatalf("list_windows value %s: %v", r.M.Value, err)
	}
	return ws
}
