"""KDE Plasma (KWin): fake input, ScreenShot2, and scripting for the windows."""
