"""Watching a desktop live on a local web page, taking control from it, and every run as a
video: frames.py (the desktop's picture as JPEG frames), gate.py (the page's token),
feed.py (the run's steps as they happen), control.py (the person's input, hand back, stop),
server.py (the page's server), video.py (a run's video, for report.html)."""
