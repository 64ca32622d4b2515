"""The offline planner: the embedded default model, deterministic, with no network
(model.py is the door; shell.py and gui.py plan, ops.py and apps.py are their vocabulary)."""
