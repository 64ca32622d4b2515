"""The offline planner: the embedded default model, deterministic, with no network
(model.py is the door; shell.py, host.py and subtask.py plan, ops.py, apps.py and saving.py
are their vocabulary)."""
