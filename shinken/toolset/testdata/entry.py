# The X11 tests' fixture: a window titled "toolset-entry" filled by one GTK
# entry holding TEXT. It prints "ready" once mapped, and the entry's text
# when Return is pressed in it, then exits.
#   entry.py TEXT
import sys

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import Gtk

win = Gtk.Window(title="toolset-entry")
win.set_default_size(640, 60)
entry = Gtk.Entry()
entry.set_text(sys.argv[1] if len(sys.argv) > 1 else "")


def activated(_):
    print(entry.get_text(), flush=True)
    Gtk.main_quit()


def mapped(*_):
    print("ready", flush=True)


entry.connect("activate", activated)
win.add(entry)
win.connect("destroy", Gtk.main_quit)
win.connect("map-event", mapped)
win.show_all()
Gtk.main()
