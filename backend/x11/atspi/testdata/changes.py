# A window that changes itself when its buttons are pressed, for the tests
# of the mirror (a repeated snapshot that reads only what changed): "Add"
# appends a row, "Remove" removes the last, "Rename" renames the window and
# the status label, "Hide" hides or shows the status label, "Move" moves
# it into the rows' box or back; a check box and
# an entry change their state and text as usual; a grid of 30 labels
# stays as it is.
import gi

gi.require_version("Gtk", "3.0")
from gi.repository import Gtk

win = Gtk.Window(title="Changes")
box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=4, margin=12)
rows = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=2)
status = Gtk.Label(label="status 0")
renamed = [0]


def add(_):
    row = Gtk.Label(label="Row %d" % (len(rows.get_children()) + 1))
    rows.pack_start(row, False, False, 0)
    row.show()


def remove(_):
    kids = rows.get_children()
    if kids:
        rows.remove(kids[-1])


def rename(_):
    renamed[0] += 1
    win.set_title("Changes %d" % renamed[0])
    status.set_text("status %d" % renamed[0])


def hide(_):
    status.set_visible(not status.get_visible())


def move(_):
    # The status label moves between the main box and the end of the rows.
    parent = status.get_parent()
    parent.remove(status)
    (rows if parent is box else box).pack_start(status, False, False, 0)


for name, fn in (("Add", add), ("Remove", remove), ("Rename", rename), ("Hide", hide), ("Move", move)):
    b = Gtk.Button(label=name)
    b.connect("clicked", fn)
    box.pack_start(b, False, False, 0)
box.pack_start(Gtk.CheckButton(label="Check"), False, False, 0)
box.pack_start(Gtk.Entry(), False, False, 0)
box.pack_start(status, False, False, 0)
box.pack_start(rows, False, False, 0)
grid = Gtk.Grid()
for i in range(30):
    grid.attach(Gtk.Label(label="Cell %d" % i), i % 6, i // 6, 1, 1)
box.pack_start(grid, False, False, 0)
win.add(box)
win.connect("destroy", Gtk.main_quit)
win.show_all()
Gtk.main()
