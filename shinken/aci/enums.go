package aci

import (
	"slices"
	"strconv"
	"strings"
)

// A Verb is an action's verb.
type Verb string

// The verbs of ACI v0.
const (
	VerbClick           Verb = "click"
	VerbDoubleClick     Verb = "double_click"
	VerbRightClick      Verb = "right_click"
	VerbMove            Verb = "move"
	VerbDrag            Verb = "drag"
	VerbMouseDown       Verb = "mouse_down"
	VerbMouseUp         Verb = "mouse_up"
	VerbScroll          Verb = "scroll"
	VerbTypeText        Verb = "type_text"
	VerbKey             Verb = "key"
	VerbScreenshot      Verb = "screenshot"
	VerbStartScreencast Verb = "start_screencast"
	VerbStopScreencast  Verb = "stop_screencast"
	VerbWait            Verb = "wait"
	VerbObserve         Verb = "observe"
	VerbInvokeAction    Verb = "invoke_action"
	VerbSetValue        Verb = "set_value"
	VerbExec            Verb = "exec"
	VerbClipboardGet    Verb = "clipboard_get"
	VerbClipboardSet    Verb = "clipboard_set"
	VerbLaunchApp       Verb = "launch_app"
	VerbActivateWindow  Verb = "activate_window"
)

// verbs lists every verb, in the schema's order.
var verbs = []Verb{
	VerbClick, VerbDoubleClick, VerbRightClick, VerbMove, VerbDrag, VerbMouseDown,
	VerbMouseUp, VerbScroll, VerbTypeText, VerbKey, VerbScreenshot, VerbStartScreencast,
	VerbStopScreencast, VerbWait, VerbObserve, VerbInvokeAction, VerbSetValue, VerbExec,
	VerbClipboardGet, VerbClipboardSet, VerbLaunchApp, VerbActivateWindow,
}

// Verbs returns every verb of ACI v0, in the schema's order, in a slice of
// its own.
func Verbs() []Verb { return slices.Clone(verbs) }

// Valid reports whether v is a verb of ACI v0.
func (v Verb) Valid() bool {
	for _, w := range verbs {
		if v == w {
			return true
		}
	}
	return false
}

// Mutating reports whether v mutates guest state, and so admits observe.
func (v Verb) Mutating() bool {
	switch v {
	case VerbClick, VerbDoubleClick, VerbRightClick, VerbMove, VerbDrag, VerbMouseDown,
		VerbMouseUp, VerbScroll, VerbTypeText, VerbKey, VerbInvokeAction, VerbSetValue,
		VerbClipboardSet, VerbLaunchApp, VerbActivateWindow:
		return true
	}
	return false
}

// A TargetKind says how a Target names a place.
type TargetKind string

// Target kinds.
const (
	TargetPointPx    TargetKind = "point_px"
	TargetPointNorm  TargetKind = "point_norm"
	TargetElementRef TargetKind = "element_ref"
)

// An ObservationType is a kind of observation a runtime can produce.
type ObservationType string

// Observation types.
const (
	ObsA11y       ObservationType = "a11y"
	ObsScreenshot ObservationType = "screenshot"
	ObsScreencast ObservationType = "screencast"
	ObsVideo      ObservationType = "video"
	ObsSOM        ObservationType = "som"
)

// A Platform is an operating system family.
type Platform string

// Platforms.
const (
	PlatformLinux   Platform = "linux"
	PlatformWindows Platform = "windows"
	PlatformMacOS   Platform = "macos"
)

// An ImageFormat is a wire image codec.
type ImageFormat string

// Image formats.
const (
	FormatPNG  ImageFormat = "png"
	FormatJPEG ImageFormat = "jpeg"
)

// A PointerButton names a button on the wire. Empty means left.
type PointerButton string

// Pointer buttons on the wire.
const (
	PointerLeft   PointerButton = "left"
	PointerMiddle PointerButton = "middle"
	PointerRight  PointerButton = "right"
)

// An ElementSource says which accessibility system produced an element.
type ElementSource string

// Element sources.
const (
	SourceATSPI ElementSource = "atspi"
	SourceUIA   ElementSource = "uia"
	SourceAX    ElementSource = "ax"
	SourceCDP   ElementSource = "cdp"
	SourceSOM   ElementSource = "som"
)

// A Scope is a capture region: "screen", "active_window" or "window:<id>"
// with a decimal or 0x-hex id.
type Scope string

// Fixed scopes.
const (
	ScopeScreen       Scope = "screen"
	ScopeActiveWindow Scope = "active_window"
)

// WindowScope returns the scope of the window with id.
func WindowScope(id uint64) Scope { return Scope("window:" + strconv.FormatUint(id, 10)) }

// WindowID returns the window id of a window:<id> scope.
func (s Scope) WindowID() (id uint64, ok bool) {
	rest, found := strings.CutPrefix(string(s), "window:")
	if !found || rest == "" {
		return 0, false
	}
	if hex, isHex := strings.CutPrefix(rest, "0x"); isHex {
		if hex == "" || !isHexDigits(hex) {
			return 0, false
		}
		id, err := strconv.ParseUint(hex, 16, 64)
		return id, err == nil
	}
	if !isDecDigits(rest) {
		return 0, false
	}
	id, err := strconv.ParseUint(rest, 10, 64)
	return id, err == nil
}

// Valid reports whether s is a well-formed scope, as the schema's pattern
// says. A window id too large for 64 bits is well-formed; it names no
// window.
func (s Scope) Valid() bool {
	if s == ScopeScreen || s == ScopeActiveWindow {
		return true
	}
	rest, ok := strings.CutPrefix(string(s), "window:")
	if !ok || rest == "" {
		return false
	}
	if hex, isHex := strings.CutPrefix(rest, "0x"); isHex {
		return hex != "" && isHexDigits(hex)
	}
	return isDecDigits(rest)
}

func isDecDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func isHexDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}
