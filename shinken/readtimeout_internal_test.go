package shinken

import (
	"encoding/binary"
	"testing"
)

// clientFrame encodes a masked client frame (the mask is zero: the scan
// reads headers only).
func clientFrame(fin bool, op byte, payload int) []byte {
	b0 := op
	if fin {
		b0 |= 0x80
	}
	var h []byte
	switch {
	case payload < 126:
		h = []byte{b0, 0x80 | byte(payload)}
	case payload < 1<<16:
		h = []byte{b0, 0x80 | 126, 0, 0}
		binary.BigEndian.PutUint16(h[2:], uint16(payload))
	default:
		h = make([]byte, 10)
		h[0], h[1] = b0, 0x80|127
		binary.BigEndian.PutUint64(h[2:], uint64(payload))
	}
	h = append(h, 0, 0, 0, 0)
	return append(h, make([]byte, payload)...)
}

func TestFrameScan(t *testing.T) {
	text := clientFrame(true, 1, 5)
	big := clientFrame(true, 2, 70000)
	tests := []struct {
		name  string
		parts [][]byte
		busy  []bool // after each part
		close bool   // a whole close frame was seen at the end
	}{
		{"whole frame", [][]byte{text}, []bool{false}, false},
		{"one header byte", [][]byte{text[:1]}, []bool{true}, false},
		{"header, no payload", [][]byte{text[:6]}, []bool{true}, false},
		{"half the payload, then the rest", [][]byte{text[:8], text[8:]}, []bool{true, false}, false},
		{"two frames, the second begun", [][]byte{append(append([]byte{}, text...), text[:3]...)}, []bool{true}, false},
		{"empty frame", [][]byte{clientFrame(true, 1, 0)}, []bool{false}, false},
		{"16-bit length", [][]byte{big[:4], big[4:60000], big[60000:]}, []bool{true, true, false}, false},
		{"64-bit length header split", [][]byte{clientFrame(true, 2, 1<<16)[:3], clientFrame(true, 2, 1<<16)[3:]}, []bool{true, false}, false},
		{"fragmented message", [][]byte{clientFrame(false, 1, 3), clientFrame(true, 9, 0), clientFrame(true, 0, 2)}, []bool{true, true, false}, false},
		{"pings between messages", [][]byte{clientFrame(true, 9, 4), clientFrame(true, 10, 4)}, []bool{false, false}, false},
		{"close frame with a code", [][]byte{clientFrame(true, 8, 2)}, []bool{false}, true},
		{"empty close frame", [][]byte{clientFrame(true, 8, 0)}, []bool{false}, true},
		{"close frame's header only", [][]byte{clientFrame(true, 8, 5)[:6]}, []bool{true}, false},
		{"close frame's payload in two parts", [][]byte{clientFrame(true, 8, 5)[:8], clientFrame(true, 8, 5)[8:]}, []bool{true, false}, true},
		{"a close after an empty text frame", [][]byte{append(append(clientFrame(true, 1, 0)[:6:6], 0x88, 0x80), 0, 0, 0, 0)}, []bool{false}, true},
		{"a close byte in a payload", [][]byte{append(clientFrame(true, 2, 2)[:6:6], 0x88, 0x80)}, []bool{false}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f frameScan
			for i, p := range tt.parts {
				if got := f.feed(p); got != tt.busy[i] {
					t.Fatalf("after part %d: busy %v, want %v", i, got, tt.busy[i])
				}
			}
			if f.closeSeen != tt.close {
				t.Errorf("close seen %v, want %v", f.closeSeen, tt.close)
			}
		})
	}
}

// FuzzFrameScan: any bytes, fed whole or in two parts at any split, leave
// the scan in the same state, and it never panics.
func FuzzFrameScan(f *testing.F) {
	f.Add(clientFrame(true, 1, 5), 3)
	f.Add(append(clientFrame(false, 1, 200), clientFrame(true, 0, 70000)...), 100)
	f.Add([]byte{0x81, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 1)
	f.Fuzz(func(t *testing.T, b []byte, split int) {
		var whole, parts frameScan
		busy := whole.feed(b)
		if len(b) > 0 {
			split = (split%len(b) + len(b)) % len(b)
		} else {
			split = 0
		}
		parts.feed(b[:split])
		if got := parts.feed(b[split:]); got != busy || parts != whole {
			t.Fatalf("split at %d: %+v (busy %v), whole: %+v (busy %v)", split, parts, got, whole, busy)
		}
	})
}
