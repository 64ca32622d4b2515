"""One implementation of the device contract: a Linux desktop, its accessibility tree,
its display server and its applications; tools.py serves them as the desktop tools."""
