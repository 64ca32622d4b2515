"""A small Qt 6 window for the desktop tests: a line edit, a button that changes a label, a
check box, and a list longer than its view (rows scrolled out of sight must not count as
visible controls); with --buttons N, a tight grid of N small buttons below (dense marks).
Run with the desktop's environment so that Qt exposes it over AT-SPI.

With --commands, it changes itself on lines read from its standard input, behind the back
of whoever reads it (tests/desktop/test_kept.py): "rename TEXT" renames the button, "row
TEXT" puts a row at the top of the list, "banner" shows a banner with a Dismiss button
inside the window and "dismiss" hides it again."""

from __future__ import annotations

import argparse
import sys

from PySide6.QtCore import QSocketNotifier
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QComboBox,
    QGridLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

TITLE = "Roundhouse Qt test"
LIST_ROWS = 40


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=LIST_ROWS, help="rows in the list")
    parser.add_argument("--scroll-to", type=int, default=0, help="show this row (1-based)")
    parser.add_argument("--buttons", type=int, default=0, help="a grid of this many buttons")
    parser.add_argument("--commands", action="store_true", help="obey lines on stdin")
    options, qt_args = parser.parse_known_args()
    app = QApplication([sys.argv[0], *qt_args])
    window = QWidget()
    window.setWindowTitle(TITLE)
    layout = QVBoxLayout(window)
    edit = QLineEdit()
    edit.setAccessibleName("Your name")
    label = QLabel("Not pressed yet")
    button = QPushButton("Press me")
    count = [0]

    def pressed() -> None:
        count[0] += 1
        label.setText(f"Pressed {count[0]} times")

    button.clicked.connect(pressed)
    check = QCheckBox("Remember me")
    combo = QComboBox()
    combo.setAccessibleName("Colour")
    combo.addItems(["red", "green", "blue"])
    rows = QListWidget()
    rows.setAccessibleName("Rows")
    rows.addItems([f"Row {number}" for number in range(1, options.rows + 1)])
    rows.setFixedHeight(120)
    if options.scroll_to:
        rows.scrollToItem(rows.item(options.scroll_to - 1), QListWidget.PositionAtTop)
    banner = QLabel("Saved elsewhere")
    dismiss = QPushButton("Dismiss")
    banner.hide()
    dismiss.hide()
    for widget in (edit, button, label, check, combo, rows, banner, dismiss):
        layout.addWidget(widget)
    if options.buttons:
        grid = QGridLayout()
        grid.setSpacing(2)
        for number in range(options.buttons):
            grid.addWidget(QPushButton(f"B{number + 1}"), number // 8, number % 8)
        layout.addLayout(grid)
    window.resize(400, 360)
    window.show()
    if options.commands:

        def obey() -> None:
            line = sys.stdin.readline()
            verb, _, text = line.strip().partition(" ")
            if verb == "rename":
                button.setText(text)
            elif verb == "row":
                rows.insertItem(0, text)
            elif verb in ("banner", "dismiss"):
                banner.setVisible(verb == "banner")
                dismiss.setVisible(verb == "banner")
            elif not line:
                notifier.setEnabled(False)  # stdin closed

        notifier = QSocketNotifier(sys.stdin.fileno(), QSocketNotifier.Type.Read)
        notifier.activated.connect(obey)
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
