"""Google's Gemini API generateContent with the computer_use tool (`gemini:MODEL`).
fake.py is a server that refuses what the API refuses."""
