# The conformance suite's fixture application (see shinkentest): a window
# with a push button, a single-line entry and a label counting the button's
# activations, starting at "0".
#   fixture.py [TITLE]
import sys

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import Gtk

win = Gtk.Window(title=sys.argv[1] if len(sys.argv) > 1 else "shinkentest")
box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=6, margin=12)
count = Gtk.Label(label="0")
button = Gtk.Button(label="Press me")
entry = Gtk.Entry()


def pressed(_):
    count.set_text(str(int(count.get_text()) + 1))


button.connect("clicked", pressed)
box.pack_start(button, False, False, 0)
box.pack_start(entry, False, False, 0)
box.pack_start(count, False, False, 0)
win.add(box)
win.connect("destroy", Gtk.main_quit)
win.show_all()
Gtk.main()
