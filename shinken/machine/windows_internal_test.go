package machine

import (
	"image"
	"strings"
	"testing"

	"shinken.dev/go/shinken/aci"
)

// TestParseWindowProbe reads a probe's output as the script prints it on
// an X11 desktop, and ignores what it does not know.
func TestParseWindowProbe(t *testing.T) {
	p := parseWindowProbe("has wmctrl\nhas xprop\nsize 1280 800\nclients 3\nknows 0x200003\nknows 0x400003\nnoise\nsize x y\n")
	if !p.has["wmctrl"] || !p.has["xprop"] || p.has["xdotool"] || p.size != (aci.ScreenSize{W: 1280, H: 800}) || p.known != 2 || p.clients != 3 {
		t.Fatalf("%+v", p)
	}
	if p := parseWindowProbe("has xdotool\nsize \n"); p.size != (aci.ScreenSize{}) || !p.has["xdotool"] {
		t.Fatalf("no display: %+v", p)
	}
	for out, want := range map[string]image.Point{"inc 6 13\n": {6, 13}, "": {1, 1}, "inc 0 -3": {1, 1}, "inc 99999999 2": {1, 2}} {
		if got := parseIncrement(out); got != want {
			t.Errorf("parseIncrement(%q) = %v, want %v", out, got, want)
		}
	}
}

// FuzzParseWindowProbe feeds the probe's and the resize script's parsers
// whatever a machine's programs might print: they never panic, never see
// a size that is not positive, and never a step below one.
func FuzzParseWindowProbe(f *testing.F) {
	f.Add("has wmctrl\nhas xdotool\nhas xprop\nsize 1280 800\nknows 0x200003\n")
	f.Add("inc 6 13\n")
	f.Add("size -1 0\nknows\n")
	f.Fuzz(func(t *testing.T, out string) {
		p := parseWindowProbe(out)
		if p.size != (aci.ScreenSize{}) && (p.size.W <= 0 || p.size.H <= 0) {
			t.Fatalf("size %v from %q", p.size, out)
		}
		if p.known > strings.Count(out, "knows") {
			t.Fatalf("%d known from %q", p.known, out)
		}
		if inc := parseIncrement(out); inc.X < 1 || inc.Y < 1 {
			t.Fatalf("step %v from %q", inc, out)
		}
	})
}
