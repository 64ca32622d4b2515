"""Google's Gemini API generateContent with the computer_use tool (`gemini:MODEL`): tools.py
(its predefined functions as our tool calls, pure), client.py (the API over httpx, the
round's transcript), fake.py (a server that refuses what the API refuses)."""
