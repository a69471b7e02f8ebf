"""The daemon's game events as JSON lines: the same text in a misread report and in a replay's output.

Both write through `line_text`, so a report's daemon.jsonl and a replay of it compare line by line.
"""

from __future__ import annotations

import json
from typing import Any


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value


def line_text(line: dict) -> str:
    """One output line: its own keys (and a summary's) in order, everything inside them with sorted keys."""
    out = {k: ({kk: _sorted(vv) for kk, vv in v.items()} if k == "summary" else _sorted(v)) for k, v in line.items()}
    return json.dumps(out, ensure_ascii=False, separators=(", ", ": "))
