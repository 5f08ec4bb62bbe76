package imaging

import (
	"image"
	"image/color"
	"image/draw"
	"math"
	"math/rand/v2"
	"strings"
	"sync"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/font/gofont/gomono"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// desktop1080 is the frame the benchmarks encode: a synthetic 1920×1080
// desktop built once per test binary.
var desktop1080 = sync.OnceValue(func() *image.RGBA { return desktopFrame(1920, 1080) })

// desktopFrame synthesises a desktop-like screen: a gradient wallpaper, a
// panel, overlapping windows with drop shadows, anti-aliased proportional
// and monospace text, bitmap-font terminal text, flat widgets and a
// photo-like region with fine noise. The layout is fixed for 1920×1080 and
// clipped to smaller sizes; it is deterministic.
func desktopFrame(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	rng := rand.New(rand.NewPCG(1, 2))

	// Wallpaper: a smooth diagonal gradient with gentle waves.
	for y := range h {
		for x := range w {
			t := float64(x+y) / float64(w+h)
			wave := 12 * math.Sin(float64(x)/97) * math.Cos(float64(y)/61)
			i := img.PixOffset(x, y)
			img.Pix[i+0] = clamp8(30 + 60*t + wave)
			img.Pix[i+1] = clamp8(50 + 40*t)
			img.Pix[i+2] = clamp8(110 + 90*t - wave)
			img.Pix[i+3] = 255
		}
	}

	ui := newFace(goregular.TTF, 13)
	mono := newFace(gomono.TTF, 13)

	// Top panel.
	fill(img, image.Rect(0, 0, w, 28), color.RGBA{43, 43, 43, 255})
	text(img, image.Rect(10, 0, 600, 28), ui, color.RGBA{230, 230, 230, 255}, 19, 0, "Activities    Files    Edit    View    Go    Help")
	text(img, image.Rect(w/2-60, 0, w/2+120, 28), ui, color.RGBA{230, 230, 230, 255}, 19, 0, "Tue 14:32")

	// Editor window.
	ed := window(img, image.Rect(60, 60, 1160, 760), ui, "main.go — shinken — Editor")
	side := image.Rect(ed.Min.X, ed.Min.Y, ed.Min.X+220, ed.Max.Y)
	fill(img, side, color.RGBA{243, 243, 243, 255})
	files := []string{"backend/", "  headless/", "  x11/", "cmd/", "  example/", "internal/", "  imaging/", "    doc.go", "    png.go", "    hash.go", "    tiles.go", "shinken/", "  runtime.go", "  client.go", "go.mod", "README.md"}
	text(img, side, ui, color.RGBA{50, 50, 50, 255}, ed.Min.Y+22, 22, strings.Join(files, "\n"))
	code := image.Rect(side.Max.X, ed.Min.Y, ed.Max.X, ed.Max.Y)
	fill(img, code, color.RGBA{255, 255, 255, 255})
	var lines, nums []string
	for i := range 40 {
		lines = append(lines, codeLine(rng, i))
		nums = append(nums, itoa(i+1))
	}
	text(img, image.Rect(code.Min.X+8, code.Min.Y, code.Min.X+40, code.Max.Y), mono, color.RGBA{150, 150, 150, 255}, code.Min.Y+20, 16, strings.Join(nums, "\n"))
	colours := []color.RGBA{{0, 0, 180, 255}, {30, 30, 30, 255}, {160, 30, 30, 255}, {0, 120, 60, 255}}
	for i, l := range lines {
		text(img, image.Rect(code.Min.X+48, code.Min.Y, code.Max.X, code.Max.Y), mono, colours[i%len(colours)], code.Min.Y+20+16*i, 16, l)
	}

	// Image viewer with a photo-like picture.
	iv := window(img, image.Rect(1250, 80, 1850, 500), ui, "sunset.jpg — Image Viewer")
	photo(img, iv.Inset(10), rng)

	// Terminal, overlapping the editor.
	term := window(img, image.Rect(900, 380, 1800, 940), ui, "user@host: ~/src/shinken")
	fill(img, term, color.RGBA{30, 30, 30, 255})
	var out []string
	for i := range 36 {
		out = append(out, termLine(rng, i))
	}
	bitmap(img, term.Inset(6), color.RGBA{200, 220, 200, 255}, strings.Join(out, "\n"))

	// A settings dialog with flat widgets.
	dlg := window(img, image.Rect(300, 600, 820, 980), ui, "Preferences")
	fill(img, dlg, color.RGBA{246, 245, 244, 255})
	for i, label := range []string{"Name", "Email", "Server", "Port", "Proxy"} {
		y := dlg.Min.Y + 20 + 44*i
		text(img, image.Rect(dlg.Min.X+16, y, dlg.Min.X+120, y+30), ui, color.RGBA{40, 40, 40, 255}, y+19, 0, label)
		field := image.Rect(dlg.Min.X+130, y, dlg.Max.X-20, y+30)
		fill(img, field, color.RGBA{205, 199, 194, 255})
		fill(img, field.Inset(1), color.RGBA{255, 255, 255, 255})
		text(img, field.Inset(1), ui, color.RGBA{20, 20, 20, 255}, y+20, 0, "value-"+itoa(i*7919%1000))
	}
	for i, label := range []string{"Cancel", "Apply", "OK"} {
		b := image.Rect(dlg.Max.X-300+i*95, dlg.Max.Y-50, dlg.Max.X-215+i*95, dlg.Max.Y-18)
		fill(img, b, color.RGBA{53, 132, 228, 255})
		text(img, b, ui, color.RGBA{255, 255, 255, 255}, b.Min.Y+21, 0, "  "+label)
	}

	// Dock.
	dock := image.Rect(w/2-300, h-56, w/2+300, h-4)
	fill(img, dock, color.RGBA{20, 20, 20, 255})
	for i := range 10 {
		icon := image.Rect(dock.Min.X+12+58*i, dock.Min.Y+6, dock.Min.X+52+58*i, dock.Max.Y-6)
		fill(img, icon, color.RGBA{uint8(40 + 20*i), uint8(200 - 15*i), uint8(90 + 13*i), 255})
	}
	return img
}

// window draws a framed window with a drop shadow and a title bar and
// returns its client area.
func window(img *image.RGBA, r image.Rectangle, face font.Face, title string) image.Rectangle {
	for d := 12; d > 0; d-- {
		a := uint8(6 * (13 - d))
		blend(img, r.Add(image.Pt(2, 4)).Inset(-d), color.RGBA{0, 0, 0, a})
	}
	fill(img, r, color.RGBA{200, 200, 200, 255})
	bar := image.Rect(r.Min.X+1, r.Min.Y+1, r.Max.X-1, r.Min.Y+36)
	for y := bar.Min.Y; y < bar.Max.Y; y++ {
		v := uint8(235 - (y-bar.Min.Y)/3)
		fill(img, image.Rect(bar.Min.X, y, bar.Max.X, y+1), color.RGBA{v, v, v, 255})
	}
	text(img, bar, face, color.RGBA{30, 30, 30, 255}, bar.Min.Y+23, 0, "      "+title)
	for i, c := range []color.RGBA{{237, 106, 94, 255}, {245, 191, 79, 255}, {98, 197, 84, 255}} {
		disc(img, image.Pt(bar.Max.X-20-22*i, bar.Min.Y+18), 7, c)
	}
	client := image.Rect(r.Min.X+1, bar.Max.Y, r.Max.X-1, r.Max.Y-1)
	fill(img, client, color.RGBA{255, 255, 255, 255})
	return client.Intersect(img.Rect)
}

// photo paints value noise with fine per-pixel grain, standing in for a
// photograph.
func photo(img *image.RGBA, r image.Rectangle, rng *rand.Rand) {
	r = r.Intersect(img.Rect)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			fx, fy := float64(x-r.Min.X)/float64(r.Dx()), float64(y-r.Min.Y)/float64(r.Dy())
			sky := 1 - fy
			sun := math.Exp(-((fx-0.6)*(fx-0.6) + (fy-0.45)*(fy-0.45)) * 30)
			hills := 0.5 + 0.5*math.Sin(fx*17+math.Sin(fy*9)*2)*math.Cos(fy*11)
			n := func() float64 { return rng.NormFloat64() * 6 }
			i := img.PixOffset(x, y)
			img.Pix[i+0] = clamp8(90 + 120*sky + 140*sun + 30*hills + n())
			img.Pix[i+1] = clamp8(60 + 70*sky + 110*sun + 50*hills*fy + n())
			img.Pix[i+2] = clamp8(70 + 100*sky*(1-sun) + 20*hills + n())
			img.Pix[i+3] = 255
		}
	}
}

func newFace(ttf []byte, size float64) font.Face {
	f, err := opentype.Parse(ttf)
	if err != nil {
		panic(err)
	}
	face, err := opentype.NewFace(f, &opentype.FaceOptions{Size: size, DPI: 72, Hinting: font.HintingFull})
	if err != nil {
		panic(err)
	}
	return face
}

// text draws s, one line per '\n' spaced by lead pixels, with its first
// baseline at y, clipped to clip.
func text(img *image.RGBA, clip image.Rectangle, face font.Face, c color.RGBA, y, lead int, s string) {
	sub, ok := img.SubImage(clip).(*image.RGBA)
	if !ok || sub.Rect.Empty() {
		return
	}
	d := font.Drawer{Dst: sub, Src: image.NewUniform(c), Face: face}
	for i, line := range strings.Split(s, "\n") {
		d.Dot = fixed.P(clip.Min.X+6, y+lead*i)
		d.DrawString(line)
	}
}

// bitmap draws s in the 7×13 bitmap font, as a terminal would.
func bitmap(img *image.RGBA, clip image.Rectangle, c color.RGBA, s string) {
	text(img, clip, basicfont.Face7x13, c, clip.Min.Y+12, 15, s)
}

func fill(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	draw.Draw(img, r, image.NewUniform(c), image.Point{}, draw.Src)
}

func blend(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	draw.Draw(img, r, image.NewUniform(c), image.Point{}, draw.Over)
}

func disc(img *image.RGBA, at image.Point, radius int, c color.RGBA) {
	for dy := -radius; dy <= radius; dy++ {
		for dx := -radius; dx <= radius; dx++ {
			if dx*dx+dy*dy <= radius*radius && at.Add(image.Pt(dx, dy)).In(img.Rect) {
				img.SetRGBA(at.X+dx, at.Y+dy, c)
			}
		}
	}
}

var words = strings.Fields("func return if err nil for range var const type struct interface map chan go defer select case default package import img buf dst src rect bounds stride pix width height hash frame tile encode decode png jpeg level band rows")

func codeLine(rng *rand.Rand, i int) string {
	indent := strings.Repeat("\t", i%4)
	n := 3 + rng.IntN(8)
	var b strings.Builder
	b.WriteString(strings.ReplaceAll(indent, "\t", "    "))
	for j := range n {
		if j > 0 {
			b.WriteString(" ")
		}
		b.WriteString(words[rng.IntN(len(words))])
	}
	if i%5 == 0 {
		b.WriteString(" {")
	}
	return b.String()
}

func termLine(rng *rand.Rand, i int) string {
	if i%6 == 0 {
		return "user@host:~/src/shinken$ go test -race ./internal/imaging/"
	}
	var b strings.Builder
	b.WriteString("ok   shinken.dev/go/")
	for range 1 + rng.IntN(4) {
		b.WriteString(words[rng.IntN(len(words))])
		b.WriteString("/")
	}
	b.WriteString("   ")
	b.WriteString(itoa(rng.IntN(900) + 100))
	b.WriteString("ms  coverage: ")
	b.WriteString(itoa(rng.IntN(60) + 40))
	b.WriteString(".")
	b.WriteString(itoa(rng.IntN(10)))
	b.WriteString("% of statements")
	return b.String()
}

func clamp8(v float64) uint8 {
	return uint8(max(0, min(255, math.Round(v))))
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

// photo1080 is a worst case for lossless encoding: a 1920×1080 photo-like
// picture with per-pixel grain over the whole screen.
var photo1080 = sync.OnceValue(func() *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, 1920, 1080))
	photo(img, img.Rect, rand.New(rand.NewPCG(5, 6)))
	return img
})
