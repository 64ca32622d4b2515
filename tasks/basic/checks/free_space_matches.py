"""Exit 0 when the answer in RH_ANSWER names the free space of / as df does.

The answer quotes `df -h` ("78G free", "7.8G free"); the check asks `df` again, in bytes.
Free space moves while a suite runs (the runs themselves write to the disk), and df -h
rounds to its last digit, so an exact comparison would fail for the wrong reason: the two
may differ by 2 % plus one unit of that last digit."""

import os
import re
import subprocess
import sys

said = re.search(r"(\d+(?:\.(\d))?)([KMGT])i?B? free", os.environ.get("RH_ANSWER", ""))
if said is None:
    sys.exit("the answer names no free space")
unit = 1024 ** ("KMGT".index(said.group(3)) + 1)
claimed = float(said.group(1)) * unit
rounding = unit / 10 if said.group(2) else unit
df = subprocess.run(
    ["df", "-B1", "--output=avail", "/"], capture_output=True, text=True, timeout=30, check=True
)
actual = int(df.stdout.split()[-1])
print(f"answer {claimed / 2**30:.2f} GiB, df {actual / 2**30:.2f} GiB")
sys.exit(0 if abs(claimed - actual) <= 0.02 * actual + rounding else 1)
