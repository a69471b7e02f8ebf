"""What the Pi can say about an event's time besides the wall-clock label: a stamp for each event.

A Pi has no real-time clock. Until it reaches a time server its wall clock is whatever it was set to at boot
(1970, or the time `fake-hwclock` saved at the last shutdown), and it jumps when NTP syncs. So each event the
store writes carries, beside its `at` label, a stamp:

- `boot`: this boot's id (`/proc/sys/kernel/random/boot_id`), or None where the system has none;
- `mono`: the monotonic clock (seconds since boot; it never jumps), so that two events of one boot are exactly
  this far apart whatever the wall clock did;
- `synced`: whether the kernel says the wall clock is synchronised (adjtimex(2): no STA_UNSYNC, state not
  TIME_ERROR), None where it cannot be asked.

History turns these into times it can vouch for (companion/history/times.py): the label of a synced event is
real; an unsynced one is put right from a synced event of the same boot (same boot, so mono differences are
exact), and otherwise said to be unknown. Nothing here reads the wall clock for timing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import time
from functools import lru_cache
from pathlib import Path

BOOT_ID = Path("/proc/sys/kernel/random/boot_id")
STA_UNSYNC = 0x0040
TIME_ERROR = 5


@lru_cache(maxsize=1)
def boot_id() -> str | None:
    try:
        text = BOOT_ID.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return text[:64] or None


class _Timex(ctypes.Structure):
    # struct timex from <sys/timex.h> (Linux): the fields up to `tai`, then room for the reserved ones
    _fields_ = [("modes", ctypes.c_uint), ("offset", ctypes.c_long), ("freq", ctypes.c_long),
                ("maxerror", ctypes.c_long), ("esterror", ctypes.c_long), ("status", ctypes.c_int),
                ("constant", ctypes.c_long), ("precision", ctypes.c_long), ("tolerance", ctypes.c_long),
                ("time_sec", ctypes.c_long), ("time_usec", ctypes.c_long), ("tick", ctypes.c_long),
                ("ppsfreq", ctypes.c_long), ("jitter", ctypes.c_long), ("shift", ctypes.c_int),
                ("stabil", ctypes.c_long), ("jitcnt", ctypes.c_long), ("calcnt", ctypes.c_long),
                ("errcnt", ctypes.c_long), ("stbcnt", ctypes.c_long), ("tai", ctypes.c_int),
                ("reserved", ctypes.c_int * 11)]


@lru_cache(maxsize=1)
def _adjtimex():
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.adjtimex
    except (OSError, AttributeError):
        return None


def synced() -> bool | None:
    """Whether the kernel says the wall clock is synchronised to a time server (None: it cannot be asked)."""
    call = _adjtimex()
    if call is None:
        return None
    t = _Timex()           # modes = 0: read only, allowed without privileges
    try:
        state = call(ctypes.byref(t))
    except OSError:
        return None
    if state < 0:
        return None
    return state != TIME_ERROR and not (t.status & STA_UNSYNC)


def stamp() -> dict:
    """The stamp an event is written with: {"boot", "mono", "synced"}."""
    return {"boot": boot_id(), "mono": round(time.monotonic(), 3), "synced": synced()}
