"""GNOME (Mutter and GNOME Shell): remote-desktop input, Shell screenshots and windows."""
