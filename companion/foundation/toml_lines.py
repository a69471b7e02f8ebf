"""TOML text by hand: line numbers for keys, and literals for values.

tomllib gives values without positions; these helpers find where a table or a
key is written by reading the text the way a person would (header lines, then
`key =` lines), which is all the files we write and document use, so every
problem in a config or calibration file says file:line. tomllib writes nothing;
`toml_value` writes the plain values our own files need.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Mapping

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


def _key(k: str) -> str:
    return k if k and all(ch.isalnum() and ch.isascii() or ch in "-_" for ch in k) else json.dumps(k, ensure_ascii=False)


def toml_value(v: Any) -> str:
    """A TOML literal for plain data: scalars, lists and inline tables (TOML has no null: None values are left out)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(toml_value(x) for x in v if x is not None) + "]"
    if isinstance(v, Mapping):
        return "{ " + ", ".join(f"{_key(str(k))} = {toml_value(x)}" for k, x in v.items() if x is not None) + " }"
    raise TypeError(f"no TOML literal for {v!r}")
