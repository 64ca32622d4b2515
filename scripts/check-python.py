"""Fail early, and say why, when the interpreter is too old for roundhouse."""

import sys

if sys.version_info < (3, 11):
    sys.exit(f"roundhouse needs Python >= 3.11; {sys.executable} is {sys.version.split()[0]}")
