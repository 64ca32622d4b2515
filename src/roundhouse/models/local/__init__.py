"""Open computer-use models on an OpenAI-compatible server (vLLM, Ollama, LM Studio):
`uitars:MODEL`, `qwen-vl:MODEL`, `opencua:MODEL`. fake.py is a server that refuses what
vLLM refuses, and an image the model's processor would resize."""
