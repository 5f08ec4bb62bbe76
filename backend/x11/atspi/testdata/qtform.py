"""A Qt form for the accessibility tests: labelled line edits, a combo
box, check boxes, radio buttons, a spin box, a slider, a list and buttons.
  qtform.py [TITLE [5|6]]
The window title is the first argument, the Qt version the second (PyQt5,
the default, or PyQt6). Submit prints the form's values on standard
output, one "field=value" per line."""
import sys

if len(sys.argv) > 2 and sys.argv[2] == "6":
    from PyQt6.QtWidgets import (QApplication, QCheckBox, QComboBox, QFormLayout,
                                 QLineEdit, QListWidget, QPushButton, QRadioButton,
                                 QSlider, QSpinBox, QVBoxLayout, QWidget, QLabel)
    from PyQt6.QtCore import Qt
else:
    from PyQt5.QtWidgets import (QApplication, QCheckBox, QComboBox, QFormLayout,
                                 QLineEdit, QListWidget, QPushButton, QRadioButton,
                                 QSlider, QSpinBox, QVBoxLayout, QWidget, QLabel)
    from PyQt5.QtCore import Qt

app = QApplication(sys.argv[:1])
w = QWidget()
w.setWindowTitle(sys.argv[1] if len(sys.argv) > 1 else "Qt form")
form = QFormLayout()
name = QLineEdit()
email = QLineEdit()
email.setPlaceholderText("you@example.com")
form.addRow("Name", name)
form.addRow("Email", email)
color = QComboBox()
color.setAccessibleName("Colour")
color.addItems(["Red", "Green", "Blue"])
form.addRow("Colour", color)
count = QSpinBox()
count.setRange(0, 100)
form.addRow("Count", count)
level = QSlider(Qt.Orientation.Horizontal)
level.setRange(0, 10)
form.addRow("Level", level)
subscribe = QCheckBox("Subscribe")
form.addRow(subscribe)
small = QRadioButton("Small")
large = QRadioButton("Large")
small.setChecked(True)
form.addRow(small)
form.addRow(large)
items = QListWidget()
items.addItems(["Item %d" % i for i in range(1, 31)])
form.addRow("Items", items)
status = QLabel("ready")
submit = QPushButton("Submit")


def done():
    for k, v in (("name", name.text()), ("email", email.text()),
                 ("colour", color.currentText()), ("count", count.value()),
                 ("level", level.value()), ("subscribe", subscribe.isChecked()),
                 ("size", "large" if large.isChecked() else "small")):
        print("%s=%s" % (k, v))
    sys.stdout.flush()
    status.setText("submitted")


submit.clicked.connect(done)
box = QVBoxLayout(w)
box.addLayout(form)
box.addWidget(status)
box.addWidget(submit)
w.resize(420, 560)
w.show()
sys.exit(app.exec())
