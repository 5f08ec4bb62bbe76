package headless

import "image"

// OpenDialog opens a modal dialog over w and returns it: a window of its
// own, titled title, centred over w, with the accessible role "dialog" and
// the "modal" state. build fills it with widgets, as an application's build
// function fills its window; it is shown once build returns. Until the
// dialog closes (its Close, its title bar's close button, alt+F4, or Escape
// when its focused widget does not use the key), w takes no input: a click
// on w raises the dialog instead, activating w activates the dialog, and
// the accessible actions of w's widgets fail with
// aci.ErrElementNotActionable. Closing w closes the dialog first. A
// dialog opened over a window that already has one opens over that dialog;
// one opened over a window not on screen (still being built, or closed)
// is closed at once.
func (w *Window) OpenDialog(title string, build func(dialog *Window)) *Window {
	d := w.d
	d.lock()
	for w.modal != nil {
		w = w.modal
	}
	dlg := &Window{d: d, id: d.newID(), app: w.app, title: title, content: image.Pt(360, 160), owner: w}
	d.objects[dlg.id] = dlg
	d.unlock()
	if build != nil {
		build(dlg)
	}
	d.lock()
	defer d.unlock()
	if dlg.closed {
		return dlg
	}
	if w.closed || !w.shown || w.modal != nil {
		// The owner went away, or another dialog took its place, while
		// build ran.
		dlg.owner = nil
		d.closeWindow(dlg)
		return dlg
	}
	w.closePopup()
	w.modal = dlg
	dlg.layout()
	sz := dlg.frameSize()
	at := w.frame.Min.Add(w.frame.Size().Sub(sz).Div(2))
	at.X = max(0, min(at.X, d.size.X-sz.X))
	at.Y = max(0, min(at.Y, d.size.Y-d.m.taskbar-sz.Y))
	dlg.frame = image.Rectangle{at, at.Add(sz)}
	dlg.shown = true
	d.stack = append(d.stack, dlg)
	if dlg.focus == nil {
		dlg.focus = dlg.nextFocus(nil, false)
	}
	d.activate(dlg)
	d.damageRect(dlg.outer())
	d.damageRect(d.taskbar())
	d.notify()
	return dlg
}

// Dialog returns the modal dialog open over the window, or nil.
func (w *Window) Dialog() *Window {
	w.d.lock()
	defer w.d.unlock()
	return w.modal
}
