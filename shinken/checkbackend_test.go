package shinken_test

import (
	"context"
	"strings"
	"testing"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// almostCapturer means to be a Capturer but takes its scope as a string.
type almostCapturer struct{}

func (almostCapturer) Display(ctx context.Context) (shinken.Display, error) {
	return shinken.Display{}, nil
}

func (almostCapturer) Capture(ctx context.Context, scope string) (shinken.Frame, error) {
	return shinken.Frame{}, nil
}

func (almostCapturer) Platform() aci.Platform { return aci.PlatformLinux }

func TestCheckBackend(t *testing.T) {
	if err := shinken.CheckBackend(headless.New(nil)); err != nil {
		t.Errorf("headless: %v", err)
	}
	if err := shinken.CheckBackend(nil); err != nil {
		t.Errorf("nil: %v", err)
	}
	err := shinken.CheckBackend(almostCapturer{})
	if err == nil || !strings.Contains(err.Error(), "Capture(context.Context, string)") || !strings.Contains(err.Error(), "it is no Capturer") {
		t.Fatalf("a Capture method with the wrong signature: %v", err)
	}
	if strings.Contains(err.Error(), "PlatformReporter") || strings.Contains(err.Error(), "Display") {
		t.Errorf("a capability it has was reported: %v", err)
	}
}
