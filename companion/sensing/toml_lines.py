"""Line numbers for TOML keys, so every problem in a config or calibration file says file:line.

tomllib gives values without positions; these helpers find where a table or a
key is written by reading the text the way a person would (header lines, then
`key =` lines), which is all the files we write and document use.
"""

from __future__ import annotations

import re

_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r"^\s*([A-Za-z0-9_\-\"']+)\s*=")


def _norm(name: str) -> str:
    return ".".join(part.strip().strip("\"'") for part in name.split("."))


def locate(text: str, table: str | None, key: str | None = None, *, occurrence: int = 0) -> int:
    """1-based line of `key` inside `table` ("" or None: the top level); `occurrence` picks the
    n-th [[table]] of an array. Falls back to the table's header line, then to line 1."""
    want = _norm(table) if table else ""
    current = ""
    seen = -1
    header_line = None
    top_key_line = None
    for number, line in enumerate(text.splitlines(), start=1):
        m = _HEADER.match(line)
        if m:
            current = _norm(m.group(2))
            if current == want:
                seen += 1
                if seen == occurrence:
                    header_line = number
            continue
        if key is None:
            continue
        k = _KEY.match(line)
        if k and k.group(1).strip("\"'") == key:
            if want == "" and current == "" and top_key_line is None:
                top_key_line = number
            elif current == want and seen == occurrence:
                return number
    if want == "":
        return top_key_line or 1
    return header_line or 1


def end_line(text: str) -> int:
    """The last line (where a missing table would have to be added)."""
    return max(1, len(text.splitlines()))
