package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/record"
)

// TestRecordAndExport records a daemon's session with -record, then
// exports it to MP4 with ffmpeg, and to PNG frames without it.
func TestRecordAndExport(t *testing.T) {
	ffmpeg, err := exec.LookPath("ffmpeg")
	if err != nil {
		t.Fatal("ffmpeg is not installed (scripts/test installs it)")
	}
	dir := t.TempDir()
	bin := build(t, dir, ".", "example")
	rec := filepath.Join(dir, "session.rec")
	d := start(t, bin, "-record", rec)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := dial(t, ctx, d)
	obs, err := c.Observe(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	name, err := obs.Find("text", "Name")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Click(ctx, aci.Ref(name.Ref)); err != nil {
		t.Fatal(err)
	}
	if err := c.TypeText(ctx, "Ada é✓"); err != nil {
		t.Fatal(err)
	}
	c.Close()
	d.stop(t)

	data, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	p := record.NewPlayer(bytes.NewReader(data))
	frames := 0
	for {
		_, _, err := p.NextFrame()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		frames++
	}
	verbs := map[string]bool{}
	for _, e := range p.Events {
		verbs[string(e.Verb)] = true
	}
	if frames < 1 || !verbs["click"] || !verbs["type_text"] || !verbs["observe"] {
		t.Fatalf("the recording holds %d frames and the verbs %v", frames, verbs)
	}

	mp4 := filepath.Join(dir, "session.mp4")
	out, err := exec.Command(bin, "export", "-in", rec, "-out", mp4).CombinedOutput()
	if err != nil {
		t.Fatalf("export: %v\n%s", err, out)
	}
	head := make([]byte, 12)
	f, err := os.Open(mp4)
	if err != nil {
		t.Fatal(err)
	}
	io.ReadFull(f, head)
	f.Close()
	if string(head[4:8]) != "ftyp" {
		t.Errorf("the export is not an MP4: % x", head)
	}
	probe, err := exec.Command(filepath.Join(filepath.Dir(ffmpeg), "ffprobe"), "-v", "error", "-show_entries", "stream=codec_name", "-of", "csv=p=0", mp4).Output()
	if err == nil && strings.TrimSpace(string(probe)) != "h264" {
		t.Errorf("ffprobe says %q", probe)
	}

	// Without ffmpeg on PATH: a folder of frames.
	cmd := exec.Command(bin, "export", "-in", rec, "-out", filepath.Join(dir, "nof.mp4"))
	cmd.Env = append(os.Environ(), "PATH="+t.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "ffmpeg is not installed") {
		t.Fatalf("export without ffmpeg: %v\n%s", err, out)
	}
	pngs, _ := filepath.Glob(filepath.Join(dir, "nof-frames", "frame-*.png"))
	if len(pngs) != frames {
		t.Errorf("%d PNG frames for %d recorded", len(pngs), frames)
	}
	if out, err := exec.Command(bin, "export", "-in", filepath.Join(dir, "missing.rec"), "-out", mp4).CombinedOutput(); err == nil {
		t.Errorf("exporting a missing file succeeded:\n%s", out)
	}
}
