"""A small Qt 6 window for the desktop tests: a line edit, a button that changes a label, a
check box. Run with the desktop's environment so that Qt exposes it over AT-SPI."""

from __future__ import annotations

import sys

from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

TITLE = "Roundhouse Qt test"


def main() -> int:
    app = QApplication(sys.argv)
    window = QWidget()
    window.setWindowTitle(TITLE)
    layout = QVBoxLayout(window)
    edit = QLineEdit()
    edit.setAccessibleName("Your name")
    label = QLabel("Not pressed yet")
    label.setAccessibleName("Status")
    button = QPushButton("Press me")
    count = [0]

    def pressed() -> None:
        count[0] += 1
        label.setText(f"Pressed {count[0]} times")
        label.setAccessibleName(f"Status: pressed {count[0]} times")

    button.clicked.connect(pressed)
    check = QCheckBox("Remember me")
    for widget in (edit, button, label, check):
        layout.addWidget(widget)
    window.resize(400, 220)
    window.show()
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
