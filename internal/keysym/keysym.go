// Package keysym is the one vocabulary of key names the backends accept: X
// keysym names (keysymdef.h) and single characters, mapped to keysyms. A
// name it does not know is refused by every backend alike, so a typo that
// fails on a real X server fails on the headless desktop too.
package keysym

import (
	"strconv"
	"unicode"
	"unicode/utf8"
)

// named maps the key names a KeyEvent may carry, their common aliases and
// the ASCII punctuation names to keysyms.
var named = map[string]uint32{
	"BackSpace": 0xff08, "Tab": 0xff09, "Linefeed": 0xff0a, "Clear": 0xff0b,
	"Return": 0xff0d, "Pause": 0xff13, "Scroll_Lock": 0xff14, "Sys_Req": 0xff15,
	"Escape": 0xff1b, "Delete": 0xffff, "Multi_key": 0xff20,
	"Home": 0xff50, "Left": 0xff51, "Up": 0xff52, "Right": 0xff53, "Down": 0xff54,
	"Prior": 0xff55, "Page_Up": 0xff55, "Next": 0xff56, "Page_Down": 0xff56,
	"End": 0xff57, "Begin": 0xff58, "Select": 0xff60, "Print": 0xff61,
	"Execute": 0xff62, "Insert": 0xff63, "Undo": 0xff65, "Redo": 0xff66,
	"Menu": 0xff67, "Find": 0xff68, "Cancel": 0xff69, "Help": 0xff6a,
	"Break": 0xff6b, "Mode_switch": 0xff7e, "Num_Lock": 0xff7f,
	"KP_Space": 0xff80, "KP_Tab": 0xff89, "KP_Enter": 0xff8d,
	"KP_F1": 0xff91, "KP_F2": 0xff92, "KP_F3": 0xff93, "KP_F4": 0xff94,
	"KP_Home": 0xff95, "KP_Left": 0xff96, "KP_Up": 0xff97, "KP_Right": 0xff98,
	"KP_Down": 0xff99, "KP_Prior": 0xff9a, "KP_Page_Up": 0xff9a, "KP_Next": 0xff9b,
	"KP_Page_Down": 0xff9b, "KP_End": 0xff9c, "KP_Begin": 0xff9d, "KP_Insert": 0xff9e,
	"KP_Delete": 0xff9f, "KP_Equal": 0xffbd, "KP_Multiply": 0xffaa, "KP_Add": 0xffab,
	"KP_Separator": 0xffac, "KP_Subtract": 0xffad, "KP_Decimal": 0xffae,
	"KP_Divide": 0xffaf,
	"KP_0":      0xffb0, "KP_1": 0xffb1, "KP_2": 0xffb2, "KP_3": 0xffb3, "KP_4": 0xffb4,
	"KP_5": 0xffb5, "KP_6": 0xffb6, "KP_7": 0xffb7, "KP_8": 0xffb8, "KP_9": 0xffb9,
	"Shift_L": 0xffe1, "Shift_R": 0xffe2, "Control_L": 0xffe3, "Control_R": 0xffe4,
	"Caps_Lock": 0xffe5, "Shift_Lock": 0xffe6, "Meta_L": 0xffe7, "Meta_R": 0xffe8,
	"Alt_L": 0xffe9, "Alt_R": 0xffea, "Super_L": 0xffeb, "Super_R": 0xffec,
	"Hyper_L": 0xffed, "Hyper_R": 0xffee, "ISO_Level3_Shift": 0xfe03,
	"ISO_Left_Tab":         0xfe20,
	"XF86AudioLowerVolume": 0x1008ff11, "XF86AudioMute": 0x1008ff12,
	"XF86AudioRaiseVolume": 0x1008ff13, "XF86AudioPlay": 0x1008ff14,
	"XF86AudioStop": 0x1008ff15, "XF86AudioPrev": 0x1008ff16, "XF86AudioNext": 0x1008ff17,
	"XF86AudioPause": 0x1008ff31,
	"space":          0x20, "exclam": 0x21, "quotedbl": 0x22, "numbersign": 0x23,
	"dollar": 0x24, "percent": 0x25, "ampersand": 0x26, "apostrophe": 0x27,
	"parenleft": 0x28, "parenright": 0x29, "asterisk": 0x2a, "plus": 0x2b,
	"comma": 0x2c, "minus": 0x2d, "period": 0x2e, "slash": 0x2f, "colon": 0x3a,
	"semicolon": 0x3b, "less": 0x3c, "equal": 0x3d, "greater": 0x3e,
	"question": 0x3f, "at": 0x40, "bracketleft": 0x5b, "backslash": 0x5c,
	"bracketright": 0x5d, "asciicircum": 0x5e, "underscore": 0x5f, "grave": 0x60,
	"braceleft": 0x7b, "bar": 0x7c, "braceright": 0x7d, "asciitilde": 0x7e,
}

// aliases are the names that share a keysym with a preferred one: Name
// gives the preferred one.
var aliases = map[string]bool{"Prior": true, "Next": true, "KP_Prior": true, "KP_Next": true}

// names maps the keysyms of named, characters excepted, back to their
// preferred names.
var names = map[uint32]string{}

func init() {
	for i := 1; i <= 35; i++ {
		named["F"+strconv.Itoa(i)] = 0xffbe + uint32(i) - 1
	}
	for name, ks := range named {
		if Rune(ks) < 0 && !aliases[name] {
			names[ks] = name
		}
	}
}

// Lookup returns the keysym of a key name: an X keysym name from the table
// above ("Return", "Control_L", "F5", "KP_Enter", "plus") or a single
// character ("a", "é", "日", "\n"). Anything else is unknown.
func Lookup(name string) (uint32, bool) {
	if ks, ok := named[name]; ok {
		return ks, true
	}
	if r, size := utf8.DecodeRuneInString(name); size == len(name) && r != utf8.RuneError {
		return ForRune(r)
	}
	return 0, false
}

// ForRune returns the keysym that types r: the code point for Latin-1,
// 0x01000000|r beyond, and the function keys for the few control
// characters that have one (newline and carriage return are Return).
func ForRune(r rune) (uint32, bool) {
	switch {
	case r == '\n' || r == '\r':
		return 0xff0d, true
	case r == '\t':
		return 0xff09, true
	case r == '\b':
		return 0xff08, true
	case r == 0x1b:
		return 0xff1b, true
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r > unicode.MaxRune:
		return 0, false
	case r < 0x100:
		return uint32(r), true
	default:
		return 0x01000000 | uint32(r), true
	}
}

// Rune is ForRune's inverse for character keysyms; -1 for the others.
func Rune(ks uint32) rune {
	switch {
	case ks >= 0x20 && ks <= 0x7e, ks >= 0xa0 && ks <= 0xff:
		return rune(ks)
	case ks >= 0x01000100 && ks <= 0x0110ffff:
		return rune(ks & 0xffffff)
	}
	return -1
}

// Name returns the preferred name of a keysym that is not a character
// ("Page_Up" for the keysym "Prior" also names), or "" for a character
// keysym or one the table lacks.
func Name(ks uint32) string { return names[ks] }
