"""Sensor trace files: `t,sensor,value` rows in time order (DESIGN.md, "Sensor trace files").

`t` is seconds on a monotonic clock (a recording starts near 0); `sensor` is a load
cell (load0, load1, … — raw HX711 counts, whole numbers), `ax`/`ay`/`az` (the
accelerometer, in g) or `tilt` (1 closed, 0 open). Each sensor samples at its own
rate; rows of one instant share `t`.

Reading checks every row and stops at the first bad one with `FILE:LINE: what is
wrong`, so nobody mistakes half a trace for a whole one.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Iterable, Iterator

HEADER = "t,sensor,value"
ACCEL = ("ax", "ay", "az")
COUNTS_MIN, COUNTS_MAX = -0x800000, 0x7FFFFF
ACCEL_LIMIT_G = 16.0          # the widest range of the supported chips


class TraceError(ValueError):
    """A trace that cannot be used; str() is `FILE:LINE: problem`."""

    def __init__(self, path: str, line: int, message: str):
        super().__init__(f"{path}:{line}: {message}")
        self.path = path
        self.line = line
        self.message = message


def read_trace(path: str | Path, *, load_cells: Iterable[str]) -> Iterator[tuple[float, str, float]]:
    """Rows of a trace, checked one by one; `load_cells` are the names the config knows."""
    cells = set(load_cells)
    name = str(path)
    try:
        f = open(path, encoding="utf-8", newline="")
    except FileNotFoundError:
        raise TraceError(name, 1, "no such trace file") from None
    except OSError as exc:
        raise TraceError(name, 1, f"cannot read: {exc.strerror or exc}") from None
    with f:
        try:
            yield from _rows(f, name, cells)
        except UnicodeDecodeError as exc:
            raise TraceError(name, 1, f"not a text file ({exc.reason})") from None


def _rows(f, name: str, cells: set[str]) -> Iterator[tuple[float, str, float]]:
    first = f.readline()
    if not first:
        raise TraceError(name, 1, f"empty file: a trace starts with the header {HEADER!r}")
    if first.strip().lstrip("\ufeff") != HEADER:
        raise TraceError(name, 1, f"the first line must be {HEADER!r}, not {first.strip()[:60]!r}")
    last_t = -math.inf
    known = sorted(cells) + list(ACCEL) + ["tilt"]
    for number, line in enumerate(f, start=2):
        text = line.rstrip("\r\n")
        if not text.strip():
            continue
        parts = text.split(",")
        if len(parts) != 3:
            raise TraceError(name, number, f"expected 3 fields t,sensor,value, found {len(parts)}: {text[:60]!r}")
        t_text, sensor, v_text = parts[0].strip(), parts[1].strip(), parts[2].strip()
        try:
            t = float(t_text)
        except ValueError:
            raise TraceError(name, number, f"time {t_text!r} is not a number") from None
        if not math.isfinite(t):
            raise TraceError(name, number, f"time {t_text!r} is not a finite number")
        if t < last_t:
            raise TraceError(name, number, f"time goes backwards: {t_text} after {last_t:.6f} (rows must be in time "
                                           "order)")
        last_t = t
        if sensor in cells:
            try:
                value = int(v_text)
            except ValueError:
                raise TraceError(name, number, f"{sensor}: {v_text!r} is not a whole number of counts") from None
            if not COUNTS_MIN <= value <= COUNTS_MAX:
                raise TraceError(name, number, f"{sensor}: {value} is outside an HX711's 24-bit range")
        elif sensor in ACCEL:
            try:
                value = float(v_text)
            except ValueError:
                raise TraceError(name, number, f"{sensor}: {v_text!r} is not a number (g)") from None
            if not math.isfinite(value) or abs(value) > ACCEL_LIMIT_G:
                raise TraceError(name, number, f"{sensor}: {v_text!r} is not a reading in g (|value| ≤ 16)")
        elif sensor == "tilt":
            if v_text not in ("0", "1"):
                raise TraceError(name, number, f"tilt: {v_text!r} must be 1 (closed) or 0 (open)")
            value = int(v_text)
        elif sensor.startswith("load") and sensor[4:].isdigit():
            raise TraceError(name, number, f"unknown sensor {sensor!r}: the config names "
                                           f"{', '.join(sorted(cells)) or 'no load cells'}")
        else:
            raise TraceError(name, number, f"unknown sensor {sensor!r} (known: {', '.join(known)})")
        yield t, sensor, value


def format_row(t: float, sensor: str, value: float) -> str:
    """One row as read_trace reads it back: counts and the switch as whole numbers, g to a millionth."""
    if sensor == "tilt" or sensor.startswith("load"):
        return f"{t:.6f},{sensor},{int(value)}"
    return f"{t:.6f},{sensor},{value:.6f}"
