package aci

import (
	"fmt"
	"math"
)

// The Validate methods check, in Go, every rule of aci-v0.schema.json that
// the Go types do not already enforce: enums, constants, ranges, and the
// conditional (allOf if/then) rules. Unmarshal calls them; a program that
// builds messages by hand can call them before sending.

func invalid(code Code, path, format string, args ...any) *Error {
	return &Error{Code: code, Detail: path + ": " + fmt.Sprintf(format, args...)}
}

func checkEnum[T ~string](code Code, path string, v T, allowed ...T) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return invalid(code, path, "%q is not one of %q", v, allowed)
}

// Validate checks a Hello.
func (m *Hello) Validate() error {
	if m.V != 0 {
		return invalid(CodeInvalidMessage, "$.v", "must be 0, got %d", m.V)
	}
	if m.Accept != nil {
		for i, t := range m.Accept.ObservationTypes {
			if err := checkObsType(fmt.Sprintf("$.accept.observation_types[%d]", i), t); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkObsType(path string, t ObservationType) error {
	return checkEnum(CodeInvalidMessage, path, t, ObsA11y, ObsScreenshot, ObsScreencast, ObsVideo, ObsSOM)
}

// Validate checks a Welcome.
func (m *Welcome) Validate() error {
	if m.V != 0 {
		return invalid(CodeInvalidMessage, "$.v", "must be 0, got %d", m.V)
	}
	if err := checkEnum(CodeInvalidMessage, "$.server.platform", m.Server.Platform, PlatformLinux, PlatformWindows, PlatformMacOS); err != nil {
		return err
	}
	c := &m.Capabilities
	if c.SchemaVersion != 0 {
		return invalid(CodeInvalidMessage, "$.capabilities.schema_version", "must be 0, got %d", c.SchemaVersion)
	}
	for i, v := range c.Verbs {
		if !v.Valid() {
			return invalid(CodeInvalidMessage, fmt.Sprintf("$.capabilities.verbs[%d]", i), "unknown verb %q", v)
		}
	}
	for i, t := range c.Targets {
		if err := checkEnum(CodeInvalidMessage, fmt.Sprintf("$.capabilities.targets[%d]", i), t, TargetPointPx, TargetPointNorm, TargetElementRef); err != nil {
			return err
		}
	}
	for i, t := range c.ObservationTypes {
		if err := checkObsType(fmt.Sprintf("$.capabilities.observation_types[%d]", i), t); err != nil {
			return err
		}
	}
	if c.MaxLongEdge < 0 {
		return invalid(CodeInvalidMessage, "$.capabilities.max_long_edge", "must be at least 1")
	}
	for i, f := range c.ImageFormats {
		if err := checkEnum(CodeInvalidMessage, fmt.Sprintf("$.capabilities.image_formats[%d]", i), f, FormatPNG, FormatJPEG); err != nil {
			return err
		}
	}
	return nil
}

// Validate checks a Query.
func (m *Query) Validate() error {
	return checkEnum(CodeInvalidMessage, "$.q", m.Q, QueryPlatform, QueryScreenSize, QueryReady, QueryListWindows)
}

// Validate checks an ActionMsg: its action, with paths under $.action.
func (m *ActionMsg) Validate() error { return m.Action.validate("$.action") }

// Validate checks an Action against every rule of the schema.
func (a *Action) Validate() error { return a.validate("$") }

func (a *Action) validate(p string) error {
	const c = CodeInvalidAction
	if !a.Verb.Valid() {
		return invalid(c, p+".verb", "unknown verb %q", a.Verb)
	}
	if a.Target != nil {
		if err := a.Target.validate(p + ".target"); err != nil {
			return err
		}
	}
	if a.To != nil {
		if err := a.To.validate(p + ".to"); err != nil {
			return err
		}
	}
	if a.Button != "" {
		if err := checkEnum(c, p+".button", a.Button, PointerLeft, PointerMiddle, PointerRight); err != nil {
			return err
		}
	}
	if a.DurationMS < 0 {
		return invalid(c, p+".duration_ms", "must be at least 0")
	}
	if a.Observe != nil {
		o := a.Observe
		if err := checkCapture(p+".observe", o.Scope, o.Format, o.Quality, o.MaxLongEdge); err != nil {
			return err
		}
	}
	if a.MS < 0 {
		return invalid(c, p+".ms", "must be at least 0")
	}
	if err := checkCapture(p, a.Scope, a.Format, a.Quality, a.MaxLongEdge); err != nil {
		return err
	}
	if a.FPS != nil && (*a.FPS < 0.1 || *a.FPS > 30 || math.IsNaN(*a.FPS)) {
		return invalid(c, p+".fps", "must be between 0.1 and 30, got %g", *a.FPS)
	}
	if a.SettleMS != nil && *a.SettleMS < 0 {
		return invalid(c, p+".settle_ms", "must be at least 0")
	}
	if a.Argv != nil && len(a.Argv) == 0 {
		return invalid(c, p+".argv", "must hold at least the program")
	}
	if a.TimeoutMS != nil && *a.TimeoutMS < 1 {
		return invalid(c, p+".timeout_ms", "must be at least 1")
	}
	if a.PTY != nil && *a.PTY {
		return invalid(c, p+".pty", "must be false: PTY exec is reserved")
	}
	if a.App != nil && *a.App == "" {
		return invalid(c, p+".app", "must not be empty")
	}

	// The schema's allOf rules, in its order.
	need := func(field string, present bool) error {
		if !present {
			return invalid(c, p, "%s requires %q", a.Verb, field)
		}
		return nil
	}
	only := func(field string, present bool, ok bool, verbs string) error {
		if present && !ok {
			return invalid(c, p+"."+field, "only allowed on %s, not on %s", verbs, a.Verb)
		}
		return nil
	}
	v := a.Verb
	switch v {
	case VerbClick, VerbDoubleClick, VerbRightClick, VerbMove, VerbScroll, VerbInvokeAction:
		if err := need("target", a.Target != nil); err != nil {
			return err
		}
	case VerbDrag:
		if err := need("target", a.Target != nil); err != nil {
			return err
		}
		if err := need("to", a.To != nil); err != nil {
			return err
		}
	case VerbTypeText, VerbClipboardSet:
		if err := need("text", a.Text != nil); err != nil {
			return err
		}
	case VerbKey:
		if err := need("keys", a.Keys != ""); err != nil {
			return err
		}
	case VerbSetValue:
		if err := need("target", a.Target != nil); err != nil {
			return err
		}
		if err := need("text", a.Text != nil); err != nil {
			return err
		}
	case VerbLaunchApp:
		if err := need("app", a.App != nil); err != nil {
			return err
		}
	case VerbActivateWindow:
		if a.WindowID == nil && a.App == nil {
			return invalid(c, p, "activate_window requires \"window_id\" or \"app\"")
		}
	case VerbExec:
		if (a.Argv != nil) == (a.Shell != nil) {
			return invalid(c, p, "exec requires exactly one of \"argv\" and \"shell\"")
		}
	}
	if err := only("observe", a.Observe != nil, v.Mutating(), "mutating verbs"); err != nil {
		return err
	}
	isObserve := v == VerbObserve
	for _, f := range []struct {
		name    string
		present bool
	}{{"structured", a.Structured != nil}, {"diff", a.Diff != nil}, {"settle_ms", a.SettleMS != nil}} {
		if err := only(f.name, f.present, isObserve, "observe"); err != nil {
			return err
		}
	}
	isExec := v == VerbExec
	for _, f := range []struct {
		name    string
		present bool
	}{{"argv", a.Argv != nil}, {"shell", a.Shell != nil}, {"cwd", a.Cwd != nil}, {"env", a.Env != nil},
		{"timeout_ms", a.TimeoutMS != nil}, {"stdin", a.Stdin != nil}, {"stream", a.Stream != nil}, {"pty", a.PTY != nil}} {
		if err := only(f.name, f.present, isExec, "exec"); err != nil {
			return err
		}
	}
	if err := only("args", a.Args != nil, v == VerbLaunchApp, "launch_app"); err != nil {
		return err
	}
	if err := only("window_id", a.WindowID != nil, v == VerbActivateWindow, "activate_window"); err != nil {
		return err
	}
	return only("app", a.App != nil, v == VerbLaunchApp || v == VerbActivateWindow, "launch_app and activate_window")
}

func checkCapture(p string, scope Scope, format ImageFormat, quality, maxLongEdge *int) error {
	const c = CodeInvalidAction
	if scope != "" && !scope.Valid() {
		return invalid(c, p+".scope", "%q is not screen, active_window or window:<id>", scope)
	}
	if format != "" {
		if err := checkEnum(c, p+".format", format, FormatPNG, FormatJPEG); err != nil {
			return err
		}
	}
	if quality != nil && (*quality < 1 || *quality > 100) {
		return invalid(c, p+".quality", "must be between 1 and 100, got %d", *quality)
	}
	if maxLongEdge != nil && *maxLongEdge < 1 {
		return invalid(c, p+".max_long_edge", "must be at least 1, got %d", *maxLongEdge)
	}
	return nil
}

// Validate checks a Target.
func (t *Target) Validate() error { return t.validate("$") }

func (t *Target) validate(p string) error {
	const c = CodeInvalidAction
	switch t.Kind {
	case TargetPointPx, TargetPointNorm:
		if t.X == nil || t.Y == nil {
			return invalid(c, p, "%s requires \"x\" and \"y\"", t.Kind)
		}
		if t.Ref != "" || t.Source != "" {
			return invalid(c, p, "%s takes only \"x\" and \"y\"", t.Kind)
		}
		if math.IsNaN(*t.X) || math.IsNaN(*t.Y) {
			return invalid(c, p, "coordinates must be numbers")
		}
		if t.Kind == TargetPointNorm && (*t.X < 0 || *t.X > 1 || *t.Y < 0 || *t.Y > 1) {
			return invalid(c, p, "point_norm coordinates must lie in [0, 1]")
		}
	case TargetElementRef:
		if t.Ref == "" {
			return invalid(c, p, "element_ref requires \"ref\"")
		}
		if t.X != nil || t.Y != nil {
			return invalid(c, p, "element_ref takes no \"x\" or \"y\"")
		}
		if t.Source != "" {
			if err := checkEnum(c, p+".source", t.Source, SourceATSPI, SourceUIA, SourceAX, SourceCDP, SourceSOM); err != nil {
				return err
			}
		}
	default:
		return invalid(c, p+".kind", "%q is not point_px, point_norm or element_ref", t.Kind)
	}
	return nil
}

// Validate checks an ActionBatch.
func (b *ActionBatch) Validate() error {
	if len(b.Actions) == 0 {
		return invalid(CodeInvalidAction, "$.actions", "must hold at least one action")
	}
	for i := range b.Actions {
		if err := b.Actions[i].validate(fmt.Sprintf("$.actions[%d]", i)); err != nil {
			return err
		}
	}
	return nil
}

// Validate checks an Observation, including the rules that tie stream, seq,
// tiles, image and not_modified together.
func (m *Observation) Validate() error {
	const c = CodeInvalidMessage
	if m.Display != nil {
		if err := m.Display.validate("$.display"); err != nil {
			return err
		}
	}
	if m.Tree != "" {
		if err := checkEnum(c, "$.tree", m.Tree, "full", "diff"); err != nil {
			return err
		}
	}
	if m.Revision < 0 {
		return invalid(c, "$.revision", "must be at least 1")
	}
	if m.DiffOf < 0 {
		return invalid(c, "$.diff_of", "must be at least 1")
	}
	if m.NodeCount != nil && *m.NodeCount < 0 {
		return invalid(c, "$.node_count", "must be at least 0")
	}
	if m.CaptureMS != nil && *m.CaptureMS < 0 {
		return invalid(c, "$.capture_ms", "must be at least 0")
	}
	for i := range m.Elements {
		if err := m.Elements[i].validate(fmt.Sprintf("$.elements[%d]", i)); err != nil {
			return err
		}
	}
	if m.Delta != nil {
		for i := range m.Delta.Added {
			if err := m.Delta.Added[i].validate(fmt.Sprintf("$.delta.added[%d]", i)); err != nil {
				return err
			}
		}
		for i := range m.Delta.Changed {
			if err := m.Delta.Changed[i].validate(fmt.Sprintf("$.delta.changed[%d]", i)); err != nil {
				return err
			}
		}
	}
	if m.Image != nil {
		if m.Image.Scope != "" && !m.Image.Scope.Valid() {
			return invalid(c, "$.image.scope", "%q is not a scope", m.Image.Scope)
		}
		if m.Image.Format != "" {
			if err := checkEnum(c, "$.image.format", m.Image.Format, FormatPNG, FormatJPEG); err != nil {
				return err
			}
		}
	}
	if m.Tiles != nil && len(m.Tiles) == 0 {
		return invalid(c, "$.tiles", "must hold at least one tile")
	}
	for i, t := range m.Tiles {
		if err := checkTile(fmt.Sprintf("$.tiles[%d]", i), t.X, t.Y, t.W, t.H); err != nil {
			return err
		}
	}
	if m.Pointer != nil && len(m.Pointer) != 2 {
		return invalid(c, "$.pointer", "must be [x, y]")
	}
	if err := checkStreamRules(m.Stream != "", m.Seq != nil, m.Image != nil, m.Tiles != nil); err != nil {
		return err
	}
	if m.NotModified {
		switch {
		case m.FrameHash == "":
			return invalid(c, "$", "not_modified requires \"frame_hash\"")
		case m.CallID == "":
			return invalid(c, "$", "not_modified requires \"cause\"")
		case m.Image != nil || m.Tiles != nil:
			return invalid(c, "$", "not_modified carries no image or tiles")
		}
	}
	return nil
}

func checkStreamRules(stream, seq, image, tiles bool) error {
	const c = CodeInvalidMessage
	switch {
	case stream && !seq:
		return invalid(c, "$", "a stream frame requires \"seq\"")
	case stream && !image && !tiles:
		return invalid(c, "$", "a stream frame requires \"image\" or \"tiles\"")
	case seq && !stream:
		return invalid(c, "$.seq", "only allowed on stream frames")
	case tiles && !stream:
		return invalid(c, "$.tiles", "only allowed on stream frames")
	case tiles && image:
		return invalid(c, "$", "a frame carries \"image\" or \"tiles\", not both")
	}
	return nil
}

func checkTile(p string, x, y, w, h int) error {
	if x < 0 || y < 0 {
		return invalid(CodeInvalidMessage, p, "tile origin must not be negative")
	}
	if w < 1 || h < 1 {
		return invalid(CodeInvalidMessage, p, "tile size must be at least 1×1")
	}
	return nil
}

func (e *Element) validate(p string) error {
	if len(e.BBox) != 4 {
		return invalid(CodeInvalidMessage, p+".bbox", "must be [x, y, w, h]")
	}
	if e.Source != "" {
		return checkEnum(CodeInvalidMessage, p+".source", e.Source, SourceATSPI, SourceUIA, SourceAX, SourceCDP, SourceSOM)
	}
	return nil
}

func (s *CoordinateSpace) validate(p string) error {
	const c = CodeInvalidMessage
	switch {
	case s.Origin != "top-left":
		return invalid(c, p+".origin", "must be \"top-left\"")
	case s.W < 1 || s.H < 1:
		return invalid(c, p, "w and h must be at least 1")
	case !(s.DPR > 0):
		return invalid(c, p+".dpr", "must be greater than 0")
	case s.SourceRect.W < 1 || s.SourceRect.H < 1:
		return invalid(c, p+".source_rect", "w and h must be at least 1")
	case s.Delivered.W < 1 || s.Delivered.H < 1:
		return invalid(c, p+".delivered", "w and h must be at least 1")
	}
	return nil
}

// Validate checks an ExecOutput.
func (m *ExecOutput) Validate() error {
	return checkEnum(CodeInvalidMessage, "$.channel", m.Channel, "stdout", "stderr")
}

// Validate checks an ExecExit.
func (m *ExecExit) Validate() error {
	if m.DurationMS < 0 {
		return invalid(CodeInvalidMessage, "$.duration_ms", "must be at least 0")
	}
	return nil
}

// Validate checks an ExecResult.
func (m *ExecResult) Validate() error {
	if m.DurationMS < 0 {
		return invalid(CodeInvalidMessage, "$.duration_ms", "must be at least 0")
	}
	return nil
}

// Validate checks a BinaryFrameHeader's own rules; DecodeBinaryFrame also
// checks its offsets against the payload.
func (h *BinaryFrameHeader) Validate() error {
	if h.Display != nil {
		if err := h.Display.validate("$.display"); err != nil {
			return err
		}
	}
	if h.Tiles != nil && len(h.Tiles) == 0 {
		return invalid(CodeInvalidMessage, "$.tiles", "must hold at least one tile")
	}
	for i, t := range h.Tiles {
		if err := checkTile(fmt.Sprintf("$.tiles[%d]", i), t.X, t.Y, t.W, t.H); err != nil {
			return err
		}
	}
	if h.Image != nil {
		if h.Image.Scope != "" && !h.Image.Scope.Valid() {
			return invalid(CodeInvalidMessage, "$.image.scope", "%q is not a scope", h.Image.Scope)
		}
		if h.Image.Format != "" {
			if err := checkEnum(CodeInvalidMessage, "$.image.format", h.Image.Format, FormatPNG, FormatJPEG); err != nil {
				return err
			}
		}
	}
	if h.Pointer != nil && len(h.Pointer) != 2 {
		return invalid(CodeInvalidMessage, "$.pointer", "must be [x, y]")
	}
	if h.Image == nil && h.Tiles == nil {
		return invalid(CodeInvalidMessage, "$", "a binary frame carries \"image\" or \"tiles\"")
	}
	return checkStreamRules(h.Stream != "", h.Seq != nil, h.Image != nil, h.Tiles != nil)
}

// Validate checks a BinaryExecOutputHeader.
func (h *BinaryExecOutputHeader) Validate() error {
	return checkEnum(CodeInvalidMessage, "$.channel", h.Channel, "stdout", "stderr")
}
