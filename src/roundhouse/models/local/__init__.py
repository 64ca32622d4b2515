"""`uitars:MODEL`, `qwen-vl:MODEL`, `opencua:MODEL`: open computer-use models on the
`openai` settings' endpoint (vLLM, Ollama, LM Studio). family.py picks the grammar;
uitars.py, qwen.py and opencua.py read each (pure); client.py speaks chat completions;
fake.py is a server that refuses what vLLM refuses."""
