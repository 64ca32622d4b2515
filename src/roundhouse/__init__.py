"""roundhouse: a desktop-automation agent for Linux on the Round/Session design."""

__version__ = "0.1.0"
