//go:build robotgo

package robotgo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"time"

	"github.com/go-vgo/robotgo"
	"github.com/go-vgo/robotgo/clipboard"
)

// A Clipboard is robotgo's clipboard: the system's on macOS and Windows;
// on X11 the CLIPBOARD selection, through the xclip or xsel program. It
// implements [shinken.Clipboard]. Get one from [Backend.Clipboard].
type Clipboard struct {
	b *Backend
}

// Clipboard returns the Backend's clipboard, or an error wrapping
// errors.ErrUnsupported when robotgo's clipboard cannot work here (X11
// without xclip or xsel on $PATH when the program started).
func (b *Backend) Clipboard() (*Clipboard, error) {
	if clipboard.Unsupported {
		return nil, fmt.Errorf("robotgo: clipboard: neither xclip nor xsel is installed: %w", errors.ErrUnsupported)
	}
	return &Clipboard{b: b}, nil
}

// ClipboardText implements [shinken.Clipboard]. An empty X11 clipboard
// (no owner, or no text in it) reads as "".
func (c *Clipboard) ClipboardText(ctx context.Context) (string, error) {
	if err := c.b.check(ctx); err != nil {
		return "", err
	}
	text, err := runClipboard(ctx, robotgo.ReadAll)
	var exit *exec.ExitError
	if errors.As(err, &exit) && bytes.Contains(exit.Stderr, []byte("not available")) {
		// xclip's words for a selection nobody owns or that holds no text.
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("robotgo: reading the clipboard: %w", err)
	}
	return text, nil
}

// SetClipboardText implements [shinken.Clipboard]. On X11 the text stays
// available while the xclip or xsel process robotgo starts owns the
// selection, after this program exits too, until another client takes the
// selection. Those programs cannot own an empty selection, so setting ""
// there fails with an error wrapping errors.ErrUnsupported.
//
// xclip takes the selection in a background process after robotgo's call
// returns, so on X11 SetClipboardText returns once the clipboard reads back
// text, and fails if it does not within clipboardSettle.
func (c *Clipboard) SetClipboardText(ctx context.Context, text string) error {
	if err := c.b.check(ctx); err != nil {
		return err
	}
	if text == "" && isX11 {
		return fmt.Errorf("robotgo: xclip and xsel cannot hold an empty clipboard: %w", errors.ErrUnsupported)
	}
	_, err := runClipboard(ctx, func() (string, error) { return "", robotgo.WriteAll(text) })
	if err != nil {
		return fmt.Errorf("robotgo: setting the clipboard: %w", err)
	}
	if !isX11 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, clipboardSettle)
	defer cancel()
	pause := time.Millisecond
	for {
		got, err := c.ClipboardText(ctx)
		if err == nil && got == text {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("robotgo: the clipboard does not hold the text set (last read %q, %v): %w", got, err, ctx.Err())
		case <-time.After(pause):
		}
		pause = min(2*pause, 50*time.Millisecond)
	}
}

// clipboardSettle bounds the wait for xclip to take the selection.
const clipboardSettle = 2 * time.Second

// runClipboard runs one of robotgo's clipboard functions, which take no
// context, and returns early when ctx is done. The call itself then ends
// in the background when the clipboard program does.
func runClipboard(ctx context.Context, f func() (string, error)) (string, error) {
	type result struct {
		text string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		text, err := f()
		done <- result{text, err}
	}()
	select {
	case r := <-done:
		return r.text, r.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}
