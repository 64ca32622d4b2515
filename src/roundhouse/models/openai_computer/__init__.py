"""OpenAI's Responses API with the computer_use_preview tool (`openai-computer:MODEL`):
tools.py (the tool, its actions as roundhouse's), client.py (the HTTP model), fake.py (a
fake server that refuses what the API refuses)."""
