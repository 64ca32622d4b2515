"""Around each action of the desktop tools: the action itself (acting), the look and settle
around it (observing, settle, effects), what it reads off the screen (screenshots, marks) and
which route a click takes (pointing)."""
