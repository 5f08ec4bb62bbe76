# A GTK 3 window with many rows, for the walk's large-tree benchmark.
#   rows.py N listbox   a Gtk.ListBox of N rows, each a label (2 nodes a row);
#                       the list box manages its descendants, so no toolkit
#                       cache holds them
#   rows.py N box       a vertical Gtk.Box of N labels (1 node a row), all
#                       held in the toolkit's cache
import sys

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import Gtk

n = int(sys.argv[1])
kind = sys.argv[2] if len(sys.argv) > 2 else "listbox"
win = Gtk.Window(title="Rows %d %s" % (n, kind))
win.set_default_size(400, 600)
scroll = Gtk.ScrolledWindow()
container = Gtk.ListBox() if kind == "listbox" else Gtk.Box(orientation=Gtk.Orientation.VERTICAL)
for i in range(n):
    container.add(Gtk.Label(label="Row %d" % i))
scroll.add(container)
win.add(scroll)
win.connect("destroy", Gtk.main_quit)
win.show_all()
Gtk.main()
