"""A small Qt 6 window for the desktop tests: a line edit, a button that changes a label, a
check box, and a list longer than its view (rows scrolled out of sight must not count as
visible controls). Run with the desktop's environment so that Qt exposes it over AT-SPI."""

from __future__ import annotations

import sys

from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QComboBox,
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
    app = QApplication(sys.argv)
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
    rows.addItems([f"Row {number}" for number in range(1, LIST_ROWS + 1)])
    rows.setFixedHeight(120)
    for widget in (edit, button, label, check, combo, rows):
        layout.addWidget(widget)
    window.resize(400, 360)
    window.show()
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
