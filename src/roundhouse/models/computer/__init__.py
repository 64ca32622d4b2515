"""What every computer-use family shares: the screenshot's size sent and the map of a
model's point back onto the desktop (screen.py), and what a computer-use agent shows a
model each step (observation.py). Each vendor's protocol is a folder of its own beside
this one (models/anthropic/)."""
