package shinken

import (
	"context"
	"fmt"
	"image"
	"time"

	"shinken.dev/go/internal/elementmatch"
	"shinken.dev/go/shinken/aci"
)

// A Backend is the computer the Runtime serves: any value implementing some
// of this package's interfaces, found by type assertion in the manner of
// database/sql/driver (one that implements none still answers ping and the
// platform query). A method whose signature is off by one type silently
// drops its capability, so assert at compile time what you mean to
// implement, and run the conformance suite (package shinkentest);
// [CheckBackend] finds near misses at run time:
//
//	var _ shinken.Capturer = (*Desktop)(nil)
//
// A method that a backend implements but cannot honour right now (a missing
// X extension, a feature a platform lacks) returns an error wrapping
// errors.ErrUnsupported.
type Backend any

// Display describes the global action space, in which every point_px
// target is expressed and every bbox reported (aci.CoordinateSpace).
type Display struct {
	W, H int     // size of the global action space, in action pixels
	DPR  float64 // device pixels per logical UI point; 1 when unknown
}

// A Frame is one capture: raw pixels and where they came from.
type Frame struct {
	// Image holds the captured pixels. Its bounds start at (0, 0) and its size
	// equals Source's size. The backend must never modify an image once it
	// has returned it, and the caller must not modify it either: a backend
	// may return the same image again while nothing has changed. Alpha is
	// always 255 inside the screen; pixels of Source that lie outside the
	// screen are zero.
	Image *image.RGBA
	// Source is the captured rectangle in global action pixels. It may
	// extend past the screen (negative X or Y for a window that is partly
	// off-screen).
	Source image.Rectangle
	// Display is the global action space at the time of capture.
	Display Display
}

// A Capturer captures pixels. Encoding, downscaling, hashing and tiling are
// the core's job, done once for every backend.
type Capturer interface {
	// Display reports the global action space. It is cheap and may be called
	// before every action to map normalised targets.
	Display(ctx context.Context) (Display, error)
	// Capture captures scope. An unknown window is an error wrapping
	// ErrNoSuchWindow.
	Capture(ctx context.Context, scope aci.Scope) (Frame, error)
}

// PointerKind says what a [PointerEvent] does.
type PointerKind uint8

// Pointer event kinds.
const (
	PointerMove   PointerKind = iota // move to (X, Y)
	PointerDown                      // move to (X, Y), then press Button
	PointerUp                        // move to (X, Y), then release Button
	PointerScroll                    // move to (X, Y), then scroll by (DX, DY) notches
)

// Button names a pointer button. The zero value is the left button. The
// wire names buttons with strings (aci.PointerButton); a backend gets this
// small enum, so a typo cannot reach it.
type Button uint8

// Pointer buttons.
const (
	ButtonLeft Button = iota
	ButtonMiddle
	ButtonRight
)

// A PointerEvent is one primitive pointer event, in global action pixels.
// Gestures (clicks, double clicks, drags) are composed by the core from these.
type PointerEvent struct {
	Kind   PointerKind
	X, Y   int
	Button Button // PointerDown and PointerUp only
	// DX and DY are scroll amounts in wheel notches for PointerScroll:
	// positive DY scrolls down (content moves up), positive DX scrolls right.
	DX, DY int
}

// A KeyEvent presses or releases one key.
type KeyEvent struct {
	// Key is an X keysym name, already normalised by the core ("Control_L",
	// "Return", "Page_Up", "F1", "space"...), or a single character such as
	// "a", "A", "1", "é" (any rune, given as itself).
	Key  string
	Down bool
}

// An Injector injects input. The core serialises calls runtime-wide, so an
// Injector needs no locking against itself, but it may be called from any
// goroutine.
type Injector interface {
	Pointer(ctx context.Context, ev PointerEvent) error
	Key(ctx context.Context, ev KeyEvent) error
	// Type types text as the user would, whatever its characters: accents,
	// symbols, CJK. It never leaves a modifier held.
	Type(ctx context.Context, text string) error
}

// A Node is one accessibility node as a backend sees it, in AT-SPI's
// vocabulary whatever the platform. Agents see it as an aci.Element, named
// by a ref the [Observer] binds to its ID (which agents never see).
type Node struct {
	// ID is the backend's identity for the node, stable for as long as the
	// node lives and never reused for another node: a widget id on headless,
	// "busname:/object/path" on AT-SPI. Element refs are bound to it.
	ID     string
	Parent int // index of the parent in Tree.Nodes, -1 for a root
	Depth  int // 0 for a root

	Role        string   // AT-SPI role name: "push button", "text", "frame"...
	Name        string   // accessible name
	Description string   // accessible description
	Value       string   // current value or text, when the node has one; a browser document's URL
	States      []string // AT-SPI state names: "focused", "checked"...
	Actions     []string // machine action names: "click", "activate"...
	BBox        image.Rectangle
	Focused     bool
	Window      uint64 // for a top-level window's node, its [Windows] id when known; else 0
	// Provenance is the backend-specific identity reported to clients, such
	// as {"bus": ..., "path": ...}. It may be nil.
	Provenance map[string]any
}

// A TreeScope selects which part of the desktop a snapshot covers.
type TreeScope uint8

// Snapshot scopes.
const (
	TreeActiveApp TreeScope = iota // the application of the active window
	TreeDesktop                    // every application
)

// SnapshotOptions bound a snapshot: what the [Observer] asks of a backend
// for one observation (see [ObserveOptions] for what a program asks of the
// Observer).
type SnapshotOptions struct {
	Scope    TreeScope
	MaxNodes int // 0 means the backend's default budget
	MaxDepth int // 0 means the backend's default cap
}

// A Tree is a snapshot of the accessibility tree.
type Tree struct {
	Nodes       []Node   // in depth-first pre-order: a node's children follow it
	App, Window string   // what the snapshot is rooted at, for tree_text's header
	Others      []string // the titles of top-level windows outside the snapshot
	// OtherWindows, when the backend knows them, lists the top-level
	// windows outside the snapshot with their ids (which activate_window
	// takes), those of applications with no accessibility tree included;
	// tree_text then names them, title and id, instead of Others.
	OtherWindows []Window
	Truncated    bool   // a budget, a depth cap or a timeout cut the walk
	TruncatedWhy string // which
	// Source says which accessibility system the nodes come from
	// (SourceATSPI on Linux desktops); empty for a backend's own tree.
	Source aci.ElementSource
}

// Find returns the first node of t whose role is role and whose name
// contains name, by the rules of aci.Observation.Find; when none matches,
// the error wraps aci.ErrNoMatch.
func (t *Tree) Find(role, name string) (Node, error) {
	i := elementmatch.First(len(t.Nodes), func(i int) (string, string) { return t.Nodes[i].Role, t.Nodes[i].Name }, role, name)
	if i < 0 {
		return Node{}, fmt.Errorf("%w: role %q, name %q", aci.ErrNoMatch, role, name)
	}
	return t.Nodes[i], nil
}

// ElementOp says what [A11y.Perform] does to a node.
type ElementOp uint8

// Element operations.
const (
	OpInvoke   ElementOp = iota // invoke the action named Action, or the first one
	OpSetValue                  // set the node's value or text to Text
)

// An ElementAction is an operation on one accessibility node.
type ElementAction struct {
	Op     ElementOp
	Action string // OpInvoke: the machine action name; "" means the first
	Text   string // OpSetValue
}

// A11y exposes the accessibility tree. Stable refs, tree_text and diffs are
// the core's job, one engine for every backend.
type A11y interface {
	Snapshot(ctx context.Context, opts SnapshotOptions) (*Tree, error)
	// Perform performs act on the node whose ID is id. A node that is gone is an
	// error wrapping ErrStaleElementRef; an unknown action wraps ErrNoSuchAction;
	// a node that cannot take the operation wraps ErrElementNotActionable.
	Perform(ctx context.Context, id string, act ElementAction) error
}

// A ChangeWatcher reports accessibility changes, so an observation can wait
// for the UI to settle instead of sleeping.
type ChangeWatcher interface {
	// Watch returns a channel that receives a value after changes (sends are
	// coalesced and never block the backend). The channel is closed when ctx
	// is done.
	Watch(ctx context.Context) <-chan struct{}
}

// OutputChannel names an output channel of a process.
type OutputChannel uint8

// Output channels.
const (
	Stdout OutputChannel = iota
	Stderr
)

// An OutputChunk is a piece of a process's output.
type OutputChunk struct {
	Channel OutputChannel
	Data    []byte // valid until the next call to Next
}

// ExitStatus is how a process ended, as an [Executor] reports it. The
// Runtime turns it into the wire's aci.ExecResult or aci.ExecExit.
type ExitStatus struct {
	Code     int  // exit code when Exited
	Exited   bool // false when killed by a signal
	Signal   int  // the signal that killed it, when one did
	TimedOut bool // the executor killed the group at the deadline
	Duration time.Duration
}

// A Process is a running command.
type Process interface {
	// Next returns the next chunk of output, from either channel, in the
	// order it was read. It returns io.EOF once both channels are closed.
	// Until Next is called again the process may be paused by a full pipe:
	// that is the backpressure.
	Next() (OutputChunk, error)
	// Wait waits for the process to end and releases its resources. Output
	// not yet read is discarded.
	Wait() (ExitStatus, error)
	// Kill kills the process's whole group. It is safe to call at any time,
	// more than once.
	Kill() error
}

// An Executor starts commands. Each runs in its own process group, which is
// killed when ctx is done, at its timeout, or when the runtime dies.
type Executor interface {
	// Start starts req. A spawn failure (no such program, bad directory) is
	// an error wrapping ErrExecSpawnFailed.
	Start(ctx context.Context, req aci.ExecRequest) (Process, error)
}

// A Clipboard holds text.
type Clipboard interface {
	ClipboardText(ctx context.Context) (string, error)
	SetClipboardText(ctx context.Context, text string) error
}

// A Window is a top-level window. Its wire form, with the bbox as an
// [x, y, w, h] array, is aci.WindowInfo.
type Window struct {
	ID     uint64
	Title  string
	App    string          // "" when unknown
	PID    int             // 0 when unknown
	BBox   image.Rectangle // empty when unknown; global action pixels
	Active bool
}

// Windows lists and activates top-level windows.
type Windows interface {
	Windows(ctx context.Context) ([]Window, error)
	// Activate raises and focuses the window. An unknown window is an error
	// wrapping ErrNoSuchWindow.
	Activate(ctx context.Context, id uint64) error
}

// A Launcher starts applications.
type Launcher interface {
	// Launch starts app (a name or an absolute path, per the backend) with
	// args passed verbatim. An app that cannot be found wraps ErrNoSuchApp.
	Launch(ctx context.Context, app string, args []string) error
}

// A PointerReporter reports where the pointer is.
type PointerReporter interface {
	PointerPosition(ctx context.Context) (image.Point, error)
}

// A PlatformReporter says which platform a backend drives (else: linux).
type PlatformReporter interface {
	Platform() aci.Platform
}
