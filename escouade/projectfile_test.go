package escouade_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"shinken.dev/go/escouade"
)

func TestParseProjectFile(t *testing.T) {
	got, err := escouade.ParseProjectFile([]byte("name: x\nplugins:\n  a: {n: 1, s: hi, b: true, f: 1.5}\n  b: {n: 2}\n"), "a")
	if err != nil || !reflect.DeepEqual(got, map[string]any{"n": 1, "s": "hi", "b": true, "f": 1.5}) {
		t.Errorf("ParseProjectFile = %v, %v", got, err)
	}
	if got, err := escouade.ParseProjectFile([]byte("other: 1\n"), "a"); err != nil || got != nil {
		t.Errorf("no plugins section: %v, %v", got, err)
	}
	for _, bad := range []string{"plugins: [", "plugins:\n  a: {n: 1, n: 2}\n", "plugins:\n  a: [1]\n", "plugins:\n  b: {n: 1, n: 2}\n  a: {}\n",
		"base: &b {n: 1}\nplugins:\n  a: {<<: *b}\n"} {
		if _, err := escouade.ParseProjectFile([]byte(bad), "a"); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
	if got, err := escouade.ParseProjectFile([]byte("base: &b hi\nplugins:\n  a: {s: *b}\n"), "a"); err != nil || got["s"] != "hi" {
		t.Errorf("an alias: %v, %v", got, err)
	}
}

// TestHostileProjectFile: a .escouade.yml is a file a plugin that may write
// a project's files can write. yaml.v3 compares each key of a mapping with
// every later one: 60,000 keys took 8 s of the Host's CPU. Aliases of
// aliases multiply a small file. Each is refused at once.
func TestHostileProjectFile(t *testing.T) {
	var wide strings.Builder
	wide.WriteString("plugins:\n  a:\n")
	for i := range 60000 {
		fmt.Fprintf(&wide, "    k%d: 1\n", i)
	}
	bomb := "l0: &l0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n"
	for i := 1; i < 9; i++ {
		bomb += fmt.Sprintf("l%d: &l%d [*l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	bomb += "plugins:\n  a: {x: *l8}\n"
	for _, tt := range []struct{ name, file, want string }{
		{"wide", wide.String(), "a mapping of more than 1024 keys"},
		{"aliases", bomb, "aliases expanded"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			_, err := escouade.ParseProjectFile([]byte(tt.file), "a")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseProjectFile = %v, want %q", err, tt.want)
			}
			t.Logf("refused in %v", time.Since(start))
		})
	}
}
