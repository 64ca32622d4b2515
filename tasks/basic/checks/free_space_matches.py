"""Exit 0 when the answer in RH_ANSWER names the free space of / within 2 %.

Free space moves while a suite runs (the runs themselves write to the disk), so an exact
or rounded comparison would fail for the wrong reason."""

import os
import re
import shutil
import sys

UNITS = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}

said = re.search(r"([\d.]+) (B|KiB|MiB|GiB|TiB) free", os.environ.get("RH_ANSWER", ""))
if said is None:
    sys.exit("the answer names no free space")
claimed = float(said.group(1)) * UNITS[said.group(2)]
actual = shutil.disk_usage("/").free
print(f"answer {claimed / 2**30:.2f} GiB, disk {actual / 2**30:.2f} GiB")
sys.exit(0 if abs(claimed - actual) <= 0.02 * actual else 1)
