"""Python modules that stand in for those of OSWorld's VM where this machine's cannot run: a
folder put first on the module path of an environment's `python` (osworld/env.py), never
imported by roundhouse itself."""
