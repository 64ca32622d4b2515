"""Anthropic's Messages API with the computer tool (`anthropic:MODEL`): tools.py (which
tool version a model takes, and its actions as roundhouse's), client.py (the HTTP model),
fake.py (a fake server that refuses what the API refuses)."""
