"""Table time: the one clock that the arm's follower, the flight recorder and `companion replay` share.

Samples come from several reader threads; the page's and the buttons' changes come from
others. Whatever reaches the follower is given a time on this clock, in the order it is
handled (under the table lock), in seconds since the daemon started and rounded to the
microsecond a trace file carries. So a recording holds the very numbers the follower used,
and a replay of it makes the same decisions.

A change from the page or the buttons is stamped no earlier than the samples handled
before it, and every sample handled after it is stamped strictly later. A replay applies an
input after every row of its time or earlier and before every later row, so it sees the
game exactly as the daemon's follower did.
"""

from __future__ import annotations

import math

DIGITS = 6                     # a trace's times and accelerometer readings carry microseconds / micro-g
TICK = 10.0 ** -DIGITS
ACCEL = ("ax", "ay", "az")
ACCEL_LIMIT_G = 16.0           # what a trace can hold (companion.sensing.trace)
COUNTS_MIN, COUNTS_MAX = -0x800000, 0x7FFFFF


class TableTime:
    """Stamps samples and inputs. Not thread-safe by itself: callers hold the table lock."""

    def __init__(self, origin: float = 0.0):
        self.origin = origin
        self.last = -math.inf      # the latest time handed out
        self._after_input = False  # the next sample must come strictly after `last`

    def _on_clock(self, raw: float) -> float:
        return round(raw - self.origin, DIGITS)

    def sample(self, raw: float) -> float:
        t = self._on_clock(raw)
        floor = round(self.last + TICK, DIGITS) if self._after_input else self.last
        self._after_input = False
        if t < floor:
            t = floor
        self.last = t
        return t

    def mark(self) -> float:
        """Now, as the last time handed out, with every later sample strictly after it (a follower restart)."""
        self.last = max(self.last, 0.0)
        self._after_input = True
        return self.last

    def input(self, raw: float) -> float:
        t = max(self._on_clock(raw), self.last, 0.0)
        self.last = t
        self._after_input = True
        return t


def sample_value(sensor: str, value: float) -> float | int:
    """A sample as a trace file can carry it exactly (the follower is given this same value)."""
    if type(value) is int and COUNTS_MIN <= value <= COUNTS_MAX and sensor not in ACCEL and sensor != "tilt":
        return value        # a load cell's reading as a trace holds it: most of the rows of a replay
    if sensor in ACCEL:
        return round(min(ACCEL_LIMIT_G, max(-ACCEL_LIMIT_G, float(value))), DIGITS)
    if sensor == "tilt":
        return 1 if value >= 0.5 else 0
    return int(min(COUNTS_MAX, max(COUNTS_MIN, int(value))))
