"""OSWorld's small rule language for one value: {"method": ..., "ref": ...}.

- "re" or "re.FLAG.FLAG": the value matches the regular expression (re.search);
- "eq", "ne", "lt", "le", "gt", "ge": compared with ref;
- "approx:T": a number within T of ref;
- "range.XY": ref[0] <(=) value <(=) ref[1], X and Y being "e" (or equal) or "t" (than);
- "str_list_eq" / "str_set_eq": the value, split on commas (quotes stripped), equals ref as a
  list / set;
- "spreadsheet_range": cell ranges within [ref[0], ref[1]] (openpyxl's MultiCellRange).
"""

from __future__ import annotations

import operator
import re
from typing import Any

COMPARISONS = {"eq", "ne", "lt", "le", "gt", "ge"}


def value_matches(value: Any, rule: dict[str, Any]) -> bool:
    method: str = rule["method"]
    ref: Any = rule.get("ref")
    if method.startswith("re"):
        flags = re.RegexFlag(0)
        for name in method.split(".")[1:]:
            flags |= getattr(re, name)
        return re.search(ref, value, flags) is not None
    if method in COMPARISONS:
        return bool(getattr(operator, method)(value, ref))
    if method.startswith("approx"):
        threshold = float(method.split(":")[1])
        try:
            number = float(value)
        except (TypeError, ValueError):
            return False
        return bool(abs(number - ref) <= threshold)
    if method == "spreadsheet_range":
        from openpyxl.worksheet.cell_range import MultiCellRange

        low, high = MultiCellRange(ref[0]), MultiCellRange(ref[1])
        return all(r in value for r in low) and all(r in high for r in value)
    if method.startswith("range."):
        left, right = method[6], method[7]
        return bool(
            getattr(operator, "l" + left)(ref[0], value)
            and getattr(operator, "l" + right)(value, ref[1])
        )
    if method in ("str_list_eq", "str_set_eq"):
        parts = value.strip("\"'").split(",")
        if method == "str_list_eq":
            return list(parts) == list(ref)
        return set(parts) == set(ref)
    raise NotImplementedError(f"rule method {method!r}")
