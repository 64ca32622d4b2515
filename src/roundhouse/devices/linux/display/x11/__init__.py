"""X11: XTest input, mss and XComposite screenshots, EWMH windows, on the desktop's display."""
