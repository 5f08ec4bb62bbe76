package headless

import (
	"image"
	"slices"

	"shinken.dev/go/shinken"
)

// A MenuBar is the row of menus along a window's top edge. Its accessible
// node has the role "menu bar"; each menu is a child with role "menu", its
// title as name and the action "click", which opens or closes it; a menu's
// items are its children, with role "menu item" and the action "click",
// which runs the item (closed or open, as GTK's menu items do), "showing"
// while their menu is open.
//
// A click on a title opens its menu; with one open, pointing at another
// title opens that one instead. F10 opens the first menu; in an open menu
// Up and Down move the highlight, Left and Right go to the neighbouring
// menu, Return or space run the highlighted item and Escape closes.
type MenuBar struct {
	widget
	menus []*Menu
	cur   *menuPopup // the open menu, if any
}

// A Menu is one menu of a menu bar. Make one with MenuBar.AddMenu.
type Menu struct {
	bar   *MenuBar
	id    uint64
	title string
	items []*MenuItem
}

// A MenuItem is an entry of a menu. Make one with Menu.AddItem.
type MenuItem struct {
	menu     *Menu
	id       uint64
	text     string
	disabled bool
	onClick  func()
}

// menuPopup is an open menu.
type menuPopup struct {
	m       *Menu
	byHover bool // opened by pointing at its title while another was open
	rows
}

// AddMenuBar adds a menu bar, which spans the window's top edge whatever
// the order of the Add calls. A window has at most one: a second call
// returns the first.
func (w *Window) AddMenuBar() *MenuBar {
	if bar := w.lockedMenuBar(); bar != nil {
		return bar
	}
	b := &MenuBar{}
	w.add(b)
	w.d.lock()
	defer w.d.unlock()
	// The bar goes first: the layout puts the first widget at the top.
	if i := slices.Index(w.widgets, control(b)); i > 0 {
		w.widgets = slices.Insert(slices.Delete(w.widgets, i, i+1), 0, control(b))
		w.relayout()
	}
	return b
}

// lockedMenuBar is menuBar under the desktop's lock.
func (w *Window) lockedMenuBar() *MenuBar {
	w.d.lock()
	defer w.d.unlock()
	return w.menuBar()
}

// menuBar returns the window's menu bar, or nil.
func (w *Window) menuBar() *MenuBar {
	if len(w.widgets) > 0 {
		if b, ok := w.widgets[0].(*MenuBar); ok {
			return b
		}
	}
	return nil
}

// AddMenu appends a menu titled title to the bar.
func (b *MenuBar) AddMenu(title string) *Menu {
	d := b.win.d
	d.lock()
	defer d.unlock()
	m := &Menu{bar: b, id: d.newID(), title: title}
	b.menus = append(b.menus, m)
	d.objects[m.id] = m
	b.changed()
	return m
}

// AddItem appends an item to the menu; onClick, if not nil, runs when the
// user clicks it, presses Return on it or invokes it through the
// accessibility tree.
func (m *Menu) AddItem(text string, onClick func()) *MenuItem {
	d := m.bar.win.d
	d.lock()
	defer d.unlock()
	it := &MenuItem{menu: m, id: d.newID(), text: text, onClick: onClick}
	m.items = append(m.items, it)
	d.objects[it.id] = it
	d.notify()
	return it
}

// SetEnabled enables or disables the item. A disabled item is drawn dimmed
// and does nothing.
func (it *MenuItem) SetEnabled(enabled bool) {
	d := it.menu.bar.win.d
	d.lock()
	defer d.unlock()
	it.disabled = !enabled
	if p := it.menu.bar.cur; p != nil && p.m == it.menu {
		d.damageRect(p.at)
	}
	d.notify()
}

// click runs the item and closes its menu.
func (it *MenuItem) click() {
	bar := it.menu.bar
	if it.disabled || bar.disabled {
		return
	}
	bar.win.closePopup()
	if it.onClick != nil {
		bar.win.d.later(it.onClick)
	}
}

func (b *MenuBar) forget() {
	for _, m := range b.menus {
		delete(b.win.d.objects, m.id)
		for _, it := range m.items {
			delete(b.win.d.objects, it.id)
		}
	}
	b.widget.forget()
}

// title is menu i's title in screen pixels.
func (b *MenuBar) title(i int) image.Rectangle {
	d, m := b.win.d, b.win.d.m
	r := b.screen()
	x := r.Min.X + m.gap/2
	for j := range i {
		x += d.text.width(b.menus[j].title) + 2*m.inset
	}
	return image.Rect(x, r.Min.Y, x+d.text.width(b.menus[i].title)+2*m.inset, r.Max.Y)
}

// titleAt returns the menu whose title is under p, or -1.
func (b *MenuBar) titleAt(p image.Point) int {
	for i := range b.menus {
		if p.In(b.title(i)) {
			return i
		}
	}
	return -1
}

// rowsOf lays out menu i's items where the menu opens.
func (b *MenuBar) rowsOf(i int) rows {
	m := b.menus[i]
	text := make([]string, len(m.items))
	for j, it := range m.items {
		text[j] = it.text
	}
	return newRows(b.win.d, b.title(i), 8*b.win.d.m.gap, text)
}

// open opens menu i, highlighting its first usable item when opened from
// the keyboard.
func (b *MenuBar) open(i int) {
	if i < 0 || i >= len(b.menus) || b.disabled {
		return
	}
	p := &menuPopup{m: b.menus[i], rows: b.rowsOf(i)}
	b.win.openPopup(p)
	b.cur = p
	b.damage()
}

// openFromKeys opens menu i with its first usable item highlighted.
func (b *MenuBar) openFromKeys(i int) {
	b.open(i)
	if b.cur != nil {
		b.cur.step(1, b.cur.usable)
	}
}

// index is menu m's position in the bar.
func (b *MenuBar) index(m *Menu) int { return slices.Index(b.menus, m) }

func (b *MenuBar) measure(int) (int, bool) { return b.win.d.m.row + b.win.d.m.gap/2, false }

func (b *MenuBar) paint(dst *image.RGBA, r image.Rectangle, _ bool) {
	d, m := b.win.d, b.win.d.m
	fill(dst, r, colButton)
	fill(dst, image.Rect(r.Min.X, r.Max.Y-m.border, r.Max.X, r.Max.Y), colBorder)
	for i, menu := range b.menus {
		t := b.title(i)
		col := b.textColor()
		if b.cur != nil && b.cur.m == menu {
			fill(dst, t.Inset(m.border), colAccent)
			col = colOnAccent
		}
		d.text.draw(dst, t.Min.X+m.inset, centredBaseline(d.text, t), menu.title, col)
	}
}

func (b *MenuBar) describe(n *shinken.Node) {
	n.Role = "menu bar"
	n.States = b.nodeStates(n.States)
}

func (b *MenuBar) parts() []part {
	ps := make([]part, len(b.menus))
	for i, m := range b.menus {
		ps[i] = m
	}
	return ps
}

func (b *MenuBar) pointerDown(p image.Point) { b.open(b.titleAt(p)) }

func (m *Menu) owner() control { return m.bar }
func (m *Menu) partID() uint64 { return m.id }

func (m *Menu) isOpen() bool { return m.bar.cur != nil && m.bar.cur.m == m }

func (m *Menu) invokePart(string) {
	if m.isOpen() {
		m.bar.win.closePopup()
		return
	}
	m.bar.open(m.bar.index(m))
}

func (m *Menu) describePart(n *shinken.Node) {
	b := m.bar
	n.Role, n.Name, n.BBox = "menu", m.title, b.title(b.index(m))
	n.Provenance = map[string]any{"widget": b.id, "menu": b.index(m)}
	n.States = append(b.nodeStates(n.States), "selectable")
	if m.isOpen() {
		n.States = append(n.States, "selected", "expanded")
	}
	n.Actions = []string{"click"}
}

func (m *Menu) parts() []part {
	ps := make([]part, len(m.items))
	for i, it := range m.items {
		ps[i] = it
	}
	return ps
}

func (it *MenuItem) owner() control    { return it.menu.bar }
func (it *MenuItem) partID() uint64    { return it.id }
func (it *MenuItem) invokePart(string) { it.click() }
func (it *MenuItem) describePart(n *shinken.Node) {
	m := it.menu
	b := m.bar
	i := slices.Index(m.items, it)
	at := b.rowsOf(b.index(m))
	n.Role, n.Name, n.BBox = "menu item", it.text, at.row(i)
	n.Provenance = map[string]any{"widget": b.id, "menu": b.index(m), "item": i}
	n.States = at.rowStates(n.States, i, m.isOpen(), !it.disabled && !b.disabled)
	n.Actions = []string{"click"}
}

func (p *menuPopup) usable(i int) bool { return !p.m.items[i].disabled }

func (p *menuPopup) bounds() image.Rectangle { return p.at }
func (p *menuPopup) paintRows(dst *image.RGBA) {
	p.paint(dst, -1, p.usable)
}

func (p *menuPopup) hover(pt image.Point) {
	b := p.m.bar
	if i := b.titleAt(pt); i >= 0 && b.menus[i] != p.m {
		b.open(i) // pointing at another title opens its menu
		b.cur.byHover = true
		return
	}
	if i := p.rowAt(pt); i >= 0 && p.usable(i) {
		p.setHot(i)
	}
}

func (p *menuPopup) release(pt image.Point) {
	if i := p.rowAt(pt); i >= 0 {
		p.m.items[i].click()
	}
}

func (p *menuPopup) outside(pt image.Point) {
	b := p.m.bar
	switch i := b.titleAt(pt); {
	case i >= 0 && b.menus[i] != p.m:
		b.open(i)
	case i >= 0 && p.byHover:
		// A click on the title that pointing at it opened keeps the menu
		// open: the click meant to open it.
		p.byHover = false
	default:
		b.win.closePopup()
	}
}

func (p *menuPopup) key(k keyInput) bool {
	b := p.m.bar
	n := len(b.menus)
	switch k.sym {
	case "Up", "KP_Up":
		p.step(-1, p.usable)
	case "Down", "KP_Down":
		p.step(1, p.usable)
	case "Left", "KP_Left":
		b.openFromKeys((b.index(p.m) + n - 1) % n)
	case "Right", "KP_Right":
		b.openFromKeys((b.index(p.m) + 1) % n)
	case "Return", "KP_Enter", "space":
		if p.hot >= 0 {
			p.m.items[p.hot].click()
		}
	default:
		return false
	}
	return true
}

func (p *menuPopup) highlighted() uint64 {
	if p.hot < 0 {
		return p.m.id
	}
	return p.m.items[p.hot].id
}

func (p *menuPopup) closed() {
	b := p.m.bar
	if b.cur == p {
		b.cur = nil
		b.damage()
	}
}
