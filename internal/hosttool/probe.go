package hosttool

import (
	"errors"
	"fmt"
	"regexp"
)

// KindProbe is the kind of the window tools' probe: a fixed script that
// reads which window programs the machine has and whether they reach the
// desktop's display, and runs nothing the agent chose. The runtime lets
// it through without asking its Authorizer (the agent's plugins are not
// asked about the runtime's own look at itself), so that a guard that
// refuses sh does not take the window tools away unseen. The operations
// those tools carry out later are commands, judged as such.
const KindProbe = "probe"

// MaxProbed bounds the windows the probe looks for.
const MaxProbed = 8

// WindowProbe prints "has P" for each of wmctrl, xdotool, xprop and
// xdg-open found, the display's size, how many clients the window manager
// lists, and "knows W" for each window id given ($1…, at most MaxProbed)
// that the display knows.
var WindowProbe = &Script{Tool: "window_probe", Text: `for p in wmctrl xdotool xprop xdg-open; do command -v "$p" >/dev/null 2>&1 && echo "has $p"; done
[ -n "$DISPLAY" ] || exit 0
if command -v xdotool >/dev/null 2>&1; then echo "size $(xdotool getdisplaygeometry 2>/dev/null)"
elif command -v wmctrl >/dev/null 2>&1; then wmctrl -d 2>/dev/null | sed -n '1s/.*DG: \([0-9]*\)x\([0-9]*\).*/size \1 \2/p'; fi
command -v xprop >/dev/null 2>&1 || exit 0
echo "clients $(xprop -root _NET_CLIENT_LIST 2>/dev/null | grep -o '0x[0-9a-fA-F]*' | wc -l)"
for w in "$@"; do xprop -id "$w" WM_STATE >/dev/null 2>&1 && echo "knows $w"; done
exit 0`, Intent: windowProbeIntent}

var windowIDRE = regexp.MustCompile(`^0x[0-9a-f]{1,8}$`)

func windowProbeIntent(args []string, stdin *string) (Intent, error) {
	if stdin != nil || len(args) > MaxProbed {
		return Intent{}, errors.New("arguments that do not fit the script")
	}
	for _, a := range args {
		if !windowIDRE.MatchString(a) {
			return Intent{}, fmt.Errorf("%q is not a window id", a)
		}
	}
	return Intent{Kind: KindProbe}, nil
}
