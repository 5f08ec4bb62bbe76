package aci

import "encoding/json"

// A Message is one text message of ACI v0: *Hello, *Welcome, *Ping, *Pong,
// *Query, *Result, *ActionMsg, *Ack, *Observation, *ExecOutput or
// *ExecExit. [Marshal] encodes one and [Unmarshal] decodes one strictly.
//
// Optional fields left at their zero value (or nil, for pointers) are absent
// on the wire. Pointers mark the fields whose zero value is meaningful.
type Message interface {
	// MessageType returns the value of the message's "type" field.
	MessageType() string
}

// Hello opens a session. It must be the first message a client sends.
type Hello struct {
	V      int        `json:"v" wire:"required"` // always 0
	Client ClientInfo `json:"client" wire:"required,open"`
	Accept *Accept    `json:"accept,omitempty" wire:"open"`
	// Token is the bearer token every TCP runtime requires.
	Token string `json:"token,omitempty"`
}

// ClientInfo names the client software.
type ClientInfo struct {
	Name    string `json:"name" wire:"required"`
	Version string `json:"version" wire:"required"`
}

// Accept is what the client can take.
type Accept struct {
	ObservationTypes []ObservationType `json:"observation_types,omitempty"`
	// BinaryFrames opts in to binary media framing (see [BinaryFrameHeader]).
	BinaryFrames bool `json:"binary_frames,omitempty"`
}

// Welcome answers a hello.
type Welcome struct {
	V            int          `json:"v" wire:"required"` // always 0
	Server       ServerInfo   `json:"server" wire:"required,open"`
	Capabilities Capabilities `json:"capabilities" wire:"required"`
}

// ServerInfo names the runtime software and its platform.
type ServerInfo struct {
	Name     string   `json:"name" wire:"required"`
	Version  string   `json:"version" wire:"required"`
	Platform Platform `json:"platform" wire:"required"`
}

// Capabilities is what the runtime can do, advertised in the welcome.
type Capabilities struct {
	SchemaVersion    int               `json:"schema_version" wire:"required"` // always 0
	Verbs            []Verb            `json:"verbs" wire:"required"`
	Targets          []TargetKind      `json:"targets" wire:"required"`
	ObservationTypes []ObservationType `json:"observation_types" wire:"required"`
	MaxLongEdge      int               `json:"max_long_edge,omitempty"`
	ImageFormats     []ImageFormat     `json:"image_formats,omitempty"`
	BinaryFrames     bool              `json:"binary_frames,omitempty"`
	FrameDedup       bool              `json:"frame_dedup,omitempty"`
	ObserveAfterAct  bool              `json:"observe_after_act,omitempty"`
	// StructuredObservation says the runtime ships the observation engine;
	// whether the backend can read a tree right now is answered by errors.
	StructuredObservation bool `json:"structured_observation,omitempty"`
}

// Ping asks for a Pong carrying the same T.
type Ping struct {
	T *float64 `json:"t,omitempty"`
}

// Pong answers a Ping.
type Pong struct {
	T *float64 `json:"t,omitempty"`
}

// A QueryKind names a query.
type QueryKind string

// Queries.
const (
	QueryPlatform    QueryKind = "platform"
	QueryScreenSize  QueryKind = "screen_size"
	QueryReady       QueryKind = "ready"
	QueryListWindows QueryKind = "list_windows"
)

// Query asks the runtime a question; it is answered with a Result.
type Query struct {
	CallID string    `json:"call_id" wire:"required"`
	Q      QueryKind `json:"q" wire:"required"`
}

// Result answers a Query, a buffered exec or clipboard_get.
type Result struct {
	CallID string          `json:"call_id" wire:"required"`
	OK     bool            `json:"ok" wire:"required"`
	Value  json.RawMessage `json:"value,omitempty"`
	Error  string          `json:"error,omitempty"`
}

// ActionMsg carries one Action.
type ActionMsg struct {
	CallID string `json:"call_id" wire:"required"`
	Action Action `json:"action" wire:"required"`
}

// Ack answers most actions.
type Ack struct {
	CallID string `json:"call_id" wire:"required"`
	OK     bool   `json:"ok" wire:"required"`
	Error  string `json:"error,omitempty"`
}

// Action is one typed action. Which fields a verb takes is checked by
// [Action.Validate], following the schema's rules.
//
// Where the schema leaves a choice to the runtime, this runtime:
//   - scrolls by wheel notches: dx and dy are rounded, a small non-zero
//     amount counts as one notch, positive dy scrolls down, positive dx
//     scrolls right;
//   - holds keys, one combination such as "shift" or "ctrl+shift", during
//     a click, double_click, right_click, move, drag, scroll or mouse_down: the
//     keys go down before the gesture and come up after it, even when it
//     fails; a mouse_down's keys stay down until that button's mouse_up
//     (or the connection's end), so mouse_down, moves and mouse_up make one
//     modified drag;
//   - presses button (left, middle, right; empty is left) on click,
//     double_click, mouse_down, mouse_up and drag;
//   - times presses as a hand does: at least 10 ms apart, and a
//     double_click no sooner than 500 ms after the previous press, so the
//     application counts its clicks afresh; a double_click followed by a
//     click at the same point is a triple click;
//   - holds a key action's combination for ms milliseconds before
//     releasing it (hold_key), refused like wait past MaxWait;
//   - refuses with invalid_action any field on a verb that gives it no
//     meaning (keys, button, ms, dx, dy, duration_ms, target, to, text and
//     the capture levers elsewhere than above), rather than ignore it;
//   - takes the action name of invoke_action from text ("click",
//     "toggle"...); without text it invokes the element's first action;
//   - observes the active window's application by default, and the whole
//     desktop when observe's scope is "screen";
//   - answers a mouse_down or mouse_up without a target at the pointer's
//     position;
//   - refuses with invalid_action, naming the bound, a wait's (or a key
//     hold's) ms past RuntimeOptions.MaxWait, and clamps a drag's
//     duration_ms to RuntimeOptions.MaxDragDuration.
type Action struct {
	Verb   Verb          `json:"verb" wire:"required"`
	Target *Target       `json:"target,omitempty"`
	To     *Target       `json:"to,omitempty"`     // drag destination
	Button PointerButton `json:"button,omitempty"` // click, double_click, drag, mouse_down, mouse_up; empty = left
	// DurationMS spreads a drag over time; the runtime clamps it.
	DurationMS int          `json:"duration_ms,omitempty"`
	Observe    *ObserveSpec `json:"observe,omitempty"`
	Text       *string      `json:"text,omitempty"` // type_text, set_value, clipboard_set
	Keys       string       `json:"keys,omitempty"` // key: "ctrl+s"; held during a pointer gesture: "shift"
	DX         float64      `json:"dx,omitempty"`   // scroll, in wheel notches
	DY         float64      `json:"dy,omitempty"`
	MS         int          `json:"ms,omitempty"` // wait; key: hold that long
	Scope      Scope        `json:"scope,omitempty"`
	// Screenshot and screencast levers.
	FPS          *float64    `json:"fps,omitempty"`
	MaxLongEdge  *int        `json:"max_long_edge,omitempty"`
	Format       ImageFormat `json:"format,omitempty"`
	Quality      *int        `json:"quality,omitempty"`
	Delta        bool        `json:"delta,omitempty"`
	ResumeStream string      `json:"resume_stream,omitempty"`
	IfNoneMatch  string      `json:"if_none_match,omitempty"`
	// Observe levers.
	Structured *bool `json:"structured,omitempty"`
	Diff       *bool `json:"diff,omitempty"`
	SettleMS   *int  `json:"settle_ms,omitempty"`
	// Exec.
	Argv      []string          `json:"argv,omitempty"`
	Shell     *string           `json:"shell,omitempty"`
	Cwd       *string           `json:"cwd,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
	TimeoutMS *int              `json:"timeout_ms,omitempty"`
	Stdin     *string           `json:"stdin,omitempty"`
	Stream    *bool             `json:"stream,omitempty"`
	PTY       *bool             `json:"pty,omitempty"` // reserved; only false is accepted
	// Desktop verbs.
	App      *string  `json:"app,omitempty"`
	Args     []string `json:"args,omitempty"`
	WindowID *uint64  `json:"window_id,omitempty"`
}

// Target names where an action acts: a point in action pixels, a
// normalised point, or an element ref. Build one with [Px], [Norm] or [Ref].
type Target struct {
	Kind   TargetKind    `json:"kind" wire:"required"`
	X      *float64      `json:"x,omitempty"`
	Y      *float64      `json:"y,omitempty"`
	Ref    string        `json:"ref,omitempty"`
	Source ElementSource `json:"source,omitempty"`
}

// Px returns a point_px target.
func Px(x, y float64) *Target { return &Target{Kind: TargetPointPx, X: &x, Y: &y} }

// Norm returns a point_norm target; x and y are in [0, 1].
func Norm(x, y float64) *Target { return &Target{Kind: TargetPointNorm, X: &x, Y: &y} }

// Ref returns an element_ref target.
func Ref(ref string) *Target { return &Target{Kind: TargetElementRef, Ref: ref} }

// ObserveSpec asks for an observation after a mutating action.
type ObserveSpec struct {
	Scope       Scope       `json:"scope,omitempty"`
	Format      ImageFormat `json:"format,omitempty"`
	Quality     *int        `json:"quality,omitempty"`
	MaxLongEdge *int        `json:"max_long_edge,omitempty"`
}

// ActionBatch is the client-side batching convention: never on the wire.
type ActionBatch struct {
	BatchID     string   `json:"batch_id,omitempty"`
	StopOnError *bool    `json:"stop_on_error,omitempty"` // nil means true
	Actions     []Action `json:"actions" wire:"required"`
}

// Observation is an ObservationMsg: a screenshot, a screencast frame, a
// structured observation or a not_modified answer.
type Observation struct {
	ObsID   string           `json:"obs_id" wire:"required"`
	CallID  string           `json:"cause,omitempty"` // the call_id it answers: the wire names it "cause"
	Stream  string           `json:"stream,omitempty"`
	Seq     *uint64          `json:"seq,omitempty"`
	Display *CoordinateSpace `json:"display,omitempty"`
	// Structured observation.
	Tree      string        `json:"tree,omitempty"` // "full" or "diff"
	TreeText  string        `json:"tree_text,omitempty"`
	Revision  int           `json:"revision,omitempty"`
	DiffOf    int           `json:"diff_of,omitempty"`
	Focus     string        `json:"focus,omitempty"`
	NodeCount *int          `json:"node_count,omitempty"`
	CaptureMS *float64      `json:"capture_ms,omitempty"`
	Elements  []Element     `json:"elements,omitempty"`
	Delta     *ElementDelta `json:"delta,omitempty" wire:"open"`
	// Pixels.
	Image       *ImageRef `json:"image,omitempty" wire:"open"`
	Tiles       []Tile    `json:"tiles,omitempty"`
	FrameHash   string    `json:"frame_hash,omitempty"`
	NotModified bool      `json:"not_modified,omitempty" wire:"true"`
	Pointer     []int     `json:"pointer,omitempty"` // [x, y]
}

// ElementDelta lists element changes.
type ElementDelta struct {
	Added   []Element `json:"added,omitempty"`
	Removed []string  `json:"removed,omitempty"`
	Changed []Element `json:"changed,omitempty"`
}

// ImageRef is an image carried in a text observation.
type ImageRef struct {
	Ref    string      `json:"ref" wire:"required"` // base64 of the codec bytes
	W      int         `json:"w" wire:"required"`
	H      int         `json:"h" wire:"required"`
	Scope  Scope       `json:"scope,omitempty"`
	Format ImageFormat `json:"format,omitempty"` // empty means png
}

// Tile is one dirty tile of a screencast delta frame.
type Tile struct {
	X   int    `json:"x" wire:"required"`
	Y   int    `json:"y" wire:"required"`
	W   int    `json:"w" wire:"required"`
	H   int    `json:"h" wire:"required"`
	Ref string `json:"ref" wire:"required"` // base64 of the codec bytes
}

// Element is one accessibility element.
type Element struct {
	Ref         string         `json:"ref" wire:"required"`
	Role        string         `json:"role" wire:"required"`
	Name        string         `json:"name,omitempty"`
	Description string         `json:"description,omitempty"`
	Value       string         `json:"value,omitempty"`
	States      []string       `json:"states,omitempty"`
	Actions     []string       `json:"actions,omitempty"`
	Focused     bool           `json:"focused,omitempty"`
	BBox        []float64      `json:"bbox" wire:"required"` // [x, y, w, h] in display pixels
	Source      ElementSource  `json:"source,omitempty"`
	Provenance  map[string]any `json:"provenance,omitempty"`
}

// CoordinateSpace says how an observation's pixels map to the action space.
type CoordinateSpace struct {
	Origin     string         `json:"origin" wire:"required"` // always "top-left"
	W          int            `json:"w" wire:"required"`
	H          int            `json:"h" wire:"required"`
	DPR        float64        `json:"dpr" wire:"required"`
	SourceRect CoordinateRect `json:"source_rect" wire:"required"`
	Delivered  CoordinateSize `json:"delivered" wire:"required"`
}

// CoordinateRect is a rectangle in global action pixels.
type CoordinateRect struct {
	X int `json:"x" wire:"required"`
	Y int `json:"y" wire:"required"`
	W int `json:"w" wire:"required"`
	H int `json:"h" wire:"required"`
}

// CoordinateSize is a size in pixels.
type CoordinateSize struct {
	W int `json:"w" wire:"required"`
	H int `json:"h" wire:"required"`
}

// ExecOutput is one chunk of a streamed exec's output, in text form.
type ExecOutput struct {
	CallID  string `json:"cause" wire:"required"` // the call_id it answers: the wire names it "cause"
	Seq     uint64 `json:"seq" wire:"required"`
	Channel string `json:"channel" wire:"required"` // "stdout" or "stderr"
	DataB64 string `json:"data_b64" wire:"required"`
}

// ExecExit ends a streamed exec.
type ExecExit struct {
	CallID     string  `json:"cause" wire:"required"`     // the call_id it answers: the wire names it "cause"
	ExitCode   *int    `json:"exit_code" wire:"required"` // nil: killed or never spawned
	Signal     *int    `json:"signal,omitempty"`
	TimedOut   bool    `json:"timed_out" wire:"required"`
	DurationMS float64 `json:"duration_ms" wire:"required"`
	Truncated  bool    `json:"truncated" wire:"required"`
	Error      string  `json:"error,omitempty"`
}

// ExecResult is the value of the Result answering a buffered exec.
type ExecResult struct {
	ExitCode        *int    `json:"exit_code" wire:"required"` // nil when killed by a signal
	Signal          *int    `json:"signal,omitempty"`
	TimedOut        bool    `json:"timed_out" wire:"required"`
	Stdout          string  `json:"stdout" wire:"required"`
	Stderr          string  `json:"stderr" wire:"required"`
	StdoutTruncated bool    `json:"stdout_truncated" wire:"required"`
	StderrTruncated bool    `json:"stderr_truncated" wire:"required"`
	DurationMS      float64 `json:"duration_ms" wire:"required"`
}

// BinaryFrameHeader is the JSON header of a binary media frame: an
// Observation whose image or tiles point into the payload by offset.
type BinaryFrameHeader struct {
	ObsID     string           `json:"obs_id" wire:"required"`
	CallID    string           `json:"cause,omitempty"` // the call_id it answers: the wire names it "cause"
	Stream    string           `json:"stream,omitempty"`
	Seq       *uint64          `json:"seq,omitempty"`
	Display   *CoordinateSpace `json:"display,omitempty"`
	Image     *BinaryImage     `json:"image,omitempty"`
	Tiles     []BinaryTile     `json:"tiles,omitempty"`
	FrameHash string           `json:"frame_hash,omitempty"`
	Pointer   []int            `json:"pointer,omitempty"`
}

// BinaryImage locates an image in a binary frame's payload.
type BinaryImage struct {
	Off    int         `json:"off" wire:"required"`
	Len    int         `json:"len" wire:"required"`
	W      int         `json:"w" wire:"required"`
	H      int         `json:"h" wire:"required"`
	Scope  Scope       `json:"scope,omitempty"`
	Format ImageFormat `json:"format,omitempty"`
}

// BinaryTile locates a tile in a binary frame's payload.
type BinaryTile struct {
	X   int `json:"x" wire:"required"`
	Y   int `json:"y" wire:"required"`
	W   int `json:"w" wire:"required"`
	H   int `json:"h" wire:"required"`
	Off int `json:"off" wire:"required"`
	Len int `json:"len" wire:"required"`
}

// BinaryExecOutputHeader is the JSON header of a binary exec-output frame.
type BinaryExecOutputHeader struct {
	CallID  string    `json:"cause" wire:"required"` // the call_id it answers: the wire names it "cause"
	Seq     uint64    `json:"seq" wire:"required"`
	Channel string    `json:"channel" wire:"required"`
	Data    ByteRange `json:"data" wire:"required"`
}

// ByteRange locates bytes in a binary frame's payload.
type ByteRange struct {
	Off int `json:"off" wire:"required"`
	Len int `json:"len" wire:"required"`
}

// MessageType implements Message.
func (*Hello) MessageType() string { return "hello" }

// MessageType implements Message.
func (*Welcome) MessageType() string { return "welcome" }

// MessageType implements Message.
func (*Ping) MessageType() string { return "ping" }

// MessageType implements Message.
func (*Pong) MessageType() string { return "pong" }

// MessageType implements Message.
func (*Query) MessageType() string { return "query" }

// MessageType implements Message.
func (*Result) MessageType() string { return "result" }

// MessageType implements Message.
func (*ActionMsg) MessageType() string { return "action" }

// MessageType implements Message.
func (*Ack) MessageType() string { return "ack" }

// MessageType implements Message.
func (*Observation) MessageType() string { return "observation" }

// MessageType implements Message.
func (*ExecOutput) MessageType() string { return "exec_output" }

// MessageType implements Message.
func (*ExecExit) MessageType() string { return "exec_exit" }

// MessageType returns "observation", the header's kind discriminator.
func (*BinaryFrameHeader) MessageType() string { return "observation" }

// MessageType returns "exec_output", the header's kind discriminator.
func (*BinaryExecOutputHeader) MessageType() string { return "exec_output" }
