"""The display server behind one seam (base.py): input, the screen, the windows. X11 is
display/x11; the backend for a desktop is chosen by open_display (choose.py)."""
