package contain

import (
	"bufio"
	"bytes"
	"testing"
)

// FuzzShepherdBoot feeds a shepherd's reader of its first line anything:
// it reads a program to start, or refuses, and never panics.
func FuzzShepherdBoot(f *testing.F) {
	for _, s := range []string{
		`{"path":"/bin/sh","args":["sh","-c","true"],"dir":"/tmp","env":["PATH=/bin"]}` + "\n",
		`{"path":"/proc/self/fd/3","args":["./guard"],"dir":"/tmp","env":[],"files":1}` + "\n",
		`{"path":"/bin/sh","args":["sh"],"files":17}` + "\n",
		`{"path":"/bin/sh","args":["sh"],"files":-1}` + "\n",
		`{"path":"/bin/sh","args":[]}` + "\n",
		`{"path":"","args":["x"]}` + "\n",
		`{"path":"x","args":["x"],"extra":1}` + "\n",
		`{"path":"x","args":["x"]}`,
		"\n",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		boot, err := readShepherdBoot(bufio.NewReaderSize(bytes.NewReader(data), 1<<10))
		if err == nil && (boot.Path == "" || len(boot.Args) == 0 || boot.Files < 0 || boot.Files > shepherdFilesMax) {
			t.Errorf("no program accepted: %+v", boot)
		}
	})
}

// FuzzShepherdReply feeds the Host's decoder of a shepherd's lines
// anything: what it accepts is a pid, an error or an end that can be so.
func FuzzShepherdReply(f *testing.F) {
	for _, s := range []string{
		`{"pid":1234}`,
		`{"error":"fork/exec /x: no such file or directory"}`,
		`{"ended":true,"code":3}`,
		`{"ended":true,"signal":9}`,
		`{"ended":true,"signal":900}`,
		`{"pid":-1}`,
		`{"pid":1,"Pid":2}`,
		`[]`,
		``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		r, err := parseShepherdReply(line)
		if err != nil {
			return
		}
		if r.Pid < 0 || r.Code < 0 || r.Code > 255 || r.Signal < 0 || r.Signal > 64 {
			t.Errorf("out of range accepted: %+v", r)
		}
		if end := r.ending(); end.How == "" {
			t.Errorf("an ending no one can read: %+v", r)
		}
	})
}
