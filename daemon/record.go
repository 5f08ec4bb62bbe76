package daemon

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/png"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/record"
)

// startRecording records the sessions (the screen and the feed) to path
// until the returned stop is called. At the stop the tree as it is then
// is observed and recorded too, so that a replay's end shows the desktop
// as the session left it, whoever observed last.
func startRecording(ctx context.Context, path string, fps float64, s *served, feed *shinken.Feed, log *slog.Logger) (stop func(), err error) {
	_, _, _, d := s.state()
	c, ok := d.Backend.(shinken.Capturer)
	if !ok {
		return nil, errors.New("daemon: Options.Record: the backend captures no screen")
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("daemon: Options.Record: %w", err)
	}
	// Large enough that a recorder behind by seconds of a busy session
	// loses nothing; what it still loses is said in the file.
	sub := feed.Subscribe(1<<16, timelineKinds...)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := record.Record(ctx, f, c, sub, &record.Options{Keep: recorded, FPS: fps}); err != nil {
			log.Error("recording stopped", "err", err)
		}
	}()
	return func() {
		publishFinalTree(s, feed, sub, log)
		cancel()
		<-done
		sub.Close()
		if err := f.Close(); err != nil {
			log.Error("recording", "err", err)
		}
		log.Info("recording saved", "path", path, "lost_events", sub.Lost())
	}, nil
}

// ExportMain is a program's "export" command: a recording (Options.Record)
// to MP4 (through ffmpeg) or to a folder of PNG frames, as its flags
// (-in, -out, -fps) say; what it did goes to out.
func ExportMain(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	in := fs.String("in", "", "the recording to export")
	dst := fs.String("out", "", "an .mp4 file (needs ffmpeg; without it, a folder of frames beside it), or a folder for PNG frames")
	fps := fs.Float64("fps", 10, "MP4 frame rate")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *in == "" || *dst == "" {
		return errors.New("export: -in and -out are required")
	}
	if *fps <= 0 || *fps > 60 {
		return fmt.Errorf("export: -fps %g: want (0, 60]", *fps)
	}
	f, err := os.Open(*in)
	if err != nil {
		return err
	}
	defer f.Close()
	target := *dst
	if strings.HasSuffix(target, ".mp4") {
		ffmpeg, err := exec.LookPath("ffmpeg")
		if err == nil {
			if err := exportMP4(context.Background(), ffmpeg, f, target, *fps); err != nil {
				return err
			}
			fmt.Fprintf(out, "wrote %s\n", target)
			return nil
		}
		target = strings.TrimSuffix(target, ".mp4") + "-frames"
		fmt.Fprintf(out, "ffmpeg is not installed: writing PNG frames instead\n")
	}
	n, err := exportFrames(f, target)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "wrote %d frames to %s (frame-<milliseconds>.png)\n", n, target)
	return nil
}

// exportMP4 pipes the recording to ffmpeg as raw frames at a constant
// rate: each output frame is the screen as it was at its time.
func exportMP4(ctx context.Context, ffmpeg string, in io.Reader, out string, fps float64) error {
	p := record.NewPlayer(in)
	at, img, err := p.NextFrame()
	if err != nil {
		return fmt.Errorf("export: no frame in the recording: %w", err)
	}
	w, h := img.Rect.Dx(), img.Rect.Dy()
	cmd := exec.CommandContext(ctx, ffmpeg, "-y", "-loglevel", "error",
		"-f", "rawvideo", "-pix_fmt", "rgba", "-s", fmt.Sprintf("%dx%d", w, h), "-r", fmt.Sprint(fps), "-i", "-",
		"-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2", "-c:v", "libx264", "-preset", "veryfast", "-crf", "23",
		"-pix_fmt", "yuv420p", "-movflags", "+faststart", out)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	step := time.Duration(float64(time.Second) / fps)
	cur := image.NewRGBA(img.Rect)
	copy(cur.Pix, img.Pix)
	nextAt, nextImg, nextErr := p.NextFrame()
	var werr error
	for t := at; werr == nil; t += step {
		for nextErr == nil && nextAt <= t {
			if nextImg.Rect.Size() == cur.Rect.Size() {
				copy(cur.Pix, nextImg.Pix)
			}
			nextAt, nextImg, nextErr = p.NextFrame()
		}
		if nextErr != nil && nextErr != io.EOF {
			werr = nextErr
			break
		}
		if _, werr = stdin.Write(cur.Pix); werr != nil {
			break
		}
		if nextErr == io.EOF {
			break
		}
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("ffmpeg: %v: %s", err, stderr.String())
	}
	return werr
}

// exportFrames writes each frame of the recording as a PNG named by its
// time in milliseconds.
func exportFrames(in io.Reader, dir string) (int, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	p := record.NewPlayer(in)
	n := 0
	for {
		at, img, err := p.NextFrame()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("frame-%09d.png", at.Milliseconds())))
		if err != nil {
			return n, err
		}
		err = png.Encode(f, img)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return n, err
		}
		n++
	}
}
