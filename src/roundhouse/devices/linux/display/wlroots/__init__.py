"""wlroots compositors (sway, Hyprland, labwc, river): virtual pointer and keyboard,
screencopy, and sway's IPC for the windows."""
