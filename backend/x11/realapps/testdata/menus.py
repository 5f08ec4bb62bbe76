# A window with a menu three deep (File > More > Deeper > Leaf N) and a
# combo box, for the tests of pop-up items clicked by ref: each leaf and
# each option writes its name in the status label.
import gi

gi.require_version("Gtk", "3.0")
from gi.repository import Gtk

win = Gtk.Window(title="Menus")
win.set_default_size(400, 300)
box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=4)
status = Gtk.Label(label="status none")


def menu(parent, label):
    item = Gtk.MenuItem(label=label)
    sub = Gtk.Menu()
    item.set_submenu(sub)
    parent.append(item)
    return sub


bar = Gtk.MenuBar()
deeper = menu(menu(menu(bar, "File"), "More"), "Deeper")
for n in range(1, 4):
    leaf = Gtk.MenuItem(label="Leaf %d" % n)
    leaf.connect("activate", lambda w: status.set_text("status " + w.get_label()))
    deeper.append(leaf)
box.pack_start(bar, False, False, 0)

combo = Gtk.ComboBoxText()
for c in ("Red", "Green", "Blue"):
    combo.append_text(c)
combo.set_active(0)
combo.connect("changed", lambda w: status.set_text("status " + w.get_active_text()))
box.pack_start(combo, False, False, 0)
box.pack_start(status, False, False, 0)
win.add(box)
win.connect("destroy", Gtk.main_quit)
win.show_all()
Gtk.main()
