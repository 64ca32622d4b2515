"""Exit 0 when the answer in RH_ANSWER states the machine's uptime as `uptime -p` does now,
within a few minutes (the check runs a little after the answer was given)."""

import os
import re
import subprocess
import sys

MINUTES = {"week": 7 * 24 * 60, "day": 24 * 60, "hour": 60, "minute": 1}


def minutes(text: str) -> int | None:
    found = re.findall(r"(\d+) (week|day|hour|minute)s?", text)
    return sum(int(count) * MINUTES[unit] for count, unit in found) if found else None


claimed = minutes(os.environ.get("RH_ANSWER", ""))
if claimed is None:
    sys.exit("the answer states no uptime")
now = subprocess.run(["uptime", "-p"], capture_output=True, text=True, timeout=30, check=True)
actual = minutes(now.stdout)
print(f"answer {claimed} min, uptime -p {now.stdout.strip()!r}")
sys.exit(0 if actual is not None and 0 <= actual - claimed <= 5 else 1)
