package toolset

import (
	"context"
	"encoding/json"
	"image"
	"testing"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/internal/imaging"
	"shinken.dev/go/shinken"
)

// BenchmarkAnthropicGlue is what the toolset adds to a left_click +
// screenshot turn on its side of the wire: decoding and checking the two
// calls, mapping the point, and the screenshot's base64 into its
// tool_result block (a 1920×1080 desktop's PNG at 1024×576).
func BenchmarkAnthropicGlue(b *testing.B) {
	ctx := context.Background()
	desk := headless.New(&headless.Options{Width: 1920, Height: 1080})
	desk.Launch(ctx, "notes", nil)
	desk.Launch(ctx, "form", nil)
	f, err := desk.Capture(ctx, shinken.ScopeScreen)
	if err != nil {
		b.Fatal(err)
	}
	png, err := imaging.EncodePNG(nil, imaging.Downscale(f.Image, 1024))
	if err != nil {
		b.Fatal(err)
	}
	sc := Scale{Screen: image.Pt(1920, 1080), Image: image.Pt(1024, 576), Model: image.Pt(1024, 576)}
	click := json.RawMessage(`{"coordinate": [512, 300]}`)
	shot := &Result{Image: &Image{Data: png, MediaType: "image/png", Width: 1024, Height: 576}}
	b.Logf("PNG of %d KiB", len(png)/1024)
	for b.Loop() {
		_, in, err := parseAnthropic(ComputerToolset20260801, "left_click", click)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := sc.ToScreen(image.Pt(in.Coordinate[0], in.Coordinate[1])); err != nil {
			b.Fatal(err)
		}
		if _, _, err := parseAnthropic(ComputerToolset20260801, "screenshot", json.RawMessage(`{}`)); err != nil {
			b.Fatal(err)
		}
		_ = shot.anthropicContent()
	}
}
