"""A contact (a button, the tilt switch) believed only once it has held still: drivers and the sensor loop share it."""

from __future__ import annotations

import math


class Debouncer:
    """A contact is believed only after it has stayed the same for `hold_s` (monotonic time)."""

    def __init__(self, hold_s: float, initial: bool = False):
        self.hold_s = hold_s
        self.value = initial
        self._candidate = initial
        self._since = -math.inf

    def update(self, raw: bool, now: float) -> bool:
        if raw != self._candidate:
            self._candidate = raw
            self._since = now
        elif raw != self.value and now - self._since >= self.hold_s:
            self.value = raw
        return self.value
