# Widgets for the element verbs' edge cases: a read-only entry, a slider
# from 0 to 10, a spin button from 0 to 100, a plain button and a label.
import gi

gi.require_version("Gtk", "3.0")
from gi.repository import Gtk

win = Gtk.Window(title="Widgets")
box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=6, margin=12)
readonly = Gtk.Entry(text="fixed")
readonly.set_editable(False)
scale = Gtk.Scale.new_with_range(Gtk.Orientation.HORIZONTAL, 0, 10, 1)
spin = Gtk.SpinButton.new_with_range(0, 100, 1)
button = Gtk.Button(label="Plain")
label = Gtk.Label(label="Just text")
for w in (readonly, scale, spin, button, label):
    box.pack_start(w, False, False, 0)
win.add(box)
win.connect("destroy", Gtk.main_quit)
win.show_all()
Gtk.main()
