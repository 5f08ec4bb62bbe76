package agentuser

import (
	"strconv"
	"strings"
	"testing"
)

// TestInIDMap: an id is mapped when it lies in a range of the map.
func TestInIDMap(t *testing.T) {
	for _, tc := range []struct {
		idMap string
		id    uint32
		want  bool
	}{
		{"         0          0 4294967295\n", 1001, true},
		{"         0       1000          1\n", 0, true},
		{"         0       1000          1\n", 1001, false},
		{"0 100000 65536\n", 65535, true},
		{"0 100000 65536\n", 65536, false},
		{"", 0, false},
		{"0 0\n", 0, false},
		{"x 0 10\n", 0, false},
	} {
		if got := inIDMap([]byte(tc.idMap), tc.id); got != tc.want {
			t.Errorf("inIDMap(%q, %d) = %v, want %v", tc.idMap, tc.id, got, tc.want)
		}
	}
}

// FuzzInIDMap: any text is read without a panic, and an id the map's one
// well-formed line covers is found.
func FuzzInIDMap(f *testing.F) {
	f.Add([]byte("         0          0 4294967295\n"), uint32(1001))
	f.Add([]byte("0 100000 65536\n1 2 3\n"), uint32(65536))
	f.Fuzz(func(t *testing.T, idMap []byte, id uint32) {
		inIDMap(idMap, id)
		line := strconv.FormatUint(uint64(id), 10) + " 0 1\n"
		if !strings.Contains(string(idMap), "\r") && !inIDMap(append(append([]byte{}, idMap...), "\n"+line...), id) {
			t.Errorf("%d not found after a line that maps it", id)
		}
	})
}
