package headless

import (
	"context"
	"fmt"
	"image"
	"image/draw"
	"slices"

	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// maxDamage is how many separate damaged rectangles are kept before they are
// merged into their bounding box: past a few, one larger repaint is cheaper
// than many small ones.
const maxDamage = 16

// crop is a window capture, kept while the frame and the window's place
// stay the same.
type crop struct {
	frame *image.RGBA
	rect  image.Rectangle
	img   *image.RGBA
}

// Display implements shinken.Capturer.
func (d *Desktop) Display(ctx context.Context) (shinken.Display, error) {
	if err := ctx.Err(); err != nil {
		return shinken.Display{}, err
	}
	return d.display(), nil
}

// display reports the action space, which never changes.
func (d *Desktop) display() shinken.Display {
	return shinken.Display{W: d.size.X, H: d.size.Y, DPR: d.dpr}
}

// Capture implements shinken.Capturer. While nothing has changed it returns
// the image it returned last, without copying; after a change it copies the
// last frame and repaints only the damaged areas. A window capture (also
// active_window) covers the window's frame, title bar included, with zero
// pixels where the window is off screen.
func (d *Desktop) Capture(ctx context.Context, scope aci.Scope) (shinken.Frame, error) {
	if err := ctx.Err(); err != nil {
		return shinken.Frame{}, err
	}
	d.lock()
	defer d.unlock()
	d.render()
	f := shinken.Frame{Display: d.display()}
	var w *Window
	switch scope {
	case aci.ScopeScreen:
		f.Image, f.Source = d.frame, d.screen
		return f, nil
	case aci.ScopeActiveWindow:
		if w = d.active; w == nil {
			return shinken.Frame{}, fmt.Errorf("%w: no window is active", aci.ErrNoSuchWindow)
		}
	default:
		id, ok := scope.WindowID()
		if !ok {
			return shinken.Frame{}, fmt.Errorf("%w: bad capture scope %q", aci.ErrInvalidAction, scope)
		}
		var err error
		if w, err = d.window(id); err != nil {
			return shinken.Frame{}, err
		}
	}
	f.Image, f.Source = d.crop(w), w.frame
	return f, nil
}

// crop returns w's part of the current frame.
func (d *Desktop) crop(w *Window) *image.RGBA {
	r := w.frame
	if c, ok := d.crops[w.id]; ok && c.frame == d.frame && c.rect == r {
		return c.img
	}
	img := image.NewRGBA(image.Rect(0, 0, r.Dx(), r.Dy()))
	vis := r.Intersect(d.screen)
	for y := vis.Min.Y; y < vis.Max.Y; y++ {
		row := d.frame.Pix[d.frame.PixOffset(vis.Min.X, y):d.frame.PixOffset(vis.Max.X, y)]
		copy(img.Pix[img.PixOffset(vis.Min.X-r.Min.X, y-r.Min.Y):], row)
	}
	d.crops[w.id] = crop{frame: d.frame, rect: r, img: img}
	return img
}

// damageRect marks r as needing a repaint before the next capture.
func (d *Desktop) damageRect(r image.Rectangle) {
	r = r.Intersect(d.screen)
	if r.Empty() {
		return
	}
	for i := 0; i < len(d.damage); {
		if d.damage[i].Overlaps(r) {
			r = r.Union(d.damage[i])
			d.damage = slices.Delete(d.damage, i, i+1)
			i = 0
			continue
		}
		i++
	}
	d.damage = append(d.damage, r)
	if len(d.damage) > maxDamage {
		u := image.Rectangle{}
		for _, r := range d.damage {
			u = u.Union(r)
		}
		d.damage = append(d.damage[:0], u)
	}
}

// render brings the frame up to date. The frame handed out last is never
// touched: the new one starts as its copy.
func (d *Desktop) render() {
	if len(d.damage) == 0 {
		return
	}
	next := image.NewRGBA(d.screen)
	if d.frame != nil {
		copy(next.Pix, d.frame.Pix)
	}
	for _, r := range d.damage {
		d.paintRegion(clipTo(next, r))
	}
	d.frame = next
	d.damage = d.damage[:0]
}

// paintRegion paints everything visible in dst's bounds, back to front.
func (d *Desktop) paintRegion(dst *image.RGBA) {
	r := dst.Bounds()
	draw.Draw(dst, r, d.wall, r.Min, draw.Src)
	for _, w := range d.stack {
		if w.outer().Overlaps(r) {
			w.paint(dst)
		}
	}
	if d.taskbar().Overlaps(r) {
		d.paintTaskbar(dst)
	}
}

// taskbar is the strip along the bottom of the screen listing the windows.
func (d *Desktop) taskbar() image.Rectangle {
	return image.Rect(0, d.size.Y-d.m.taskbar, d.size.X, d.size.Y)
}

// launcher is the decorative application-menu button at the taskbar's
// left end.
func (d *Desktop) launcher() image.Rectangle {
	tb, g := d.taskbar(), d.m.gap/2
	return image.Rect(tb.Min.X+g, tb.Min.Y+g, tb.Min.X+tb.Dy()-g, tb.Max.Y-g)
}

// taskButtons returns the taskbar's window buttons, oldest window first.
func (d *Desktop) taskButtons() ([]*Window, []image.Rectangle) {
	wins := d.byAge()
	if len(wins) == 0 {
		return nil, nil
	}
	tb, m := d.taskbar(), d.m
	g := m.gap / 2
	start := d.launcher().Max.X + m.gap
	width := min(7*m.title, (tb.Max.X-m.gap-start)/len(wins)-g)
	rects := make([]image.Rectangle, len(wins))
	for i := range wins {
		x := start + i*(width+g)
		rects[i] = image.Rect(x, tb.Min.Y+g, x+width, tb.Max.Y-g)
	}
	return wins, rects
}

// taskButtonAt returns the window whose taskbar button is under p.
func (d *Desktop) taskButtonAt(p image.Point) *Window {
	wins, rects := d.taskButtons()
	for i, r := range rects {
		if p.In(r) {
			return wins[i]
		}
	}
	return nil
}

// paintTaskbar paints the taskbar into dst.
func (d *Desktop) paintTaskbar(dst *image.RGBA) {
	m := d.m
	tb := d.taskbar()
	fill(dst, tb, colTaskbar)
	fill(dst, image.Rect(tb.Min.X, tb.Min.Y, tb.Max.X, tb.Min.Y+m.border), colTaskActive)
	// The launcher: a grid of nine squares, as application menus draw it.
	l := d.launcher()
	roundRect(dst, l, m.radius, colTaskIdle)
	cell := l.Dx() / 5
	for i := range 9 {
		x := l.Min.X + cell + (i%3)*cell + cell/4
		y := l.Min.Y + cell + (i/3)*cell + cell/4
		roundRect(dst, image.Rect(x, y, x+cell/2+1, y+cell/2+1), 1, colTaskText)
	}
	wins, rects := d.taskButtons()
	for i, w := range wins {
		r := rects[i]
		body := colTaskIdle
		if w == d.active {
			body = colTaskActive
		}
		roundRect(dst, r, m.radius, body)
		if w == d.active {
			fill(dst, image.Rect(r.Min.X+m.radius, r.Max.Y-m.focus, r.Max.X-m.radius, r.Max.Y), colAccent)
		}
		title := ellipsize(d.text, w.title, r.Dx()-2*m.inset)
		d.text.draw(clipTo(dst, r), r.Min.X+m.inset, centredBaseline(d.text, r), title, colTaskText)
	}
}
