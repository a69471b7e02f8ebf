"""A play's times from its events' stamps, said as well as the Pi knows them.

Each event carries its wall-clock label `at` and, since issue 33, a stamp (foundation/wall_clock.py): the boot it
was written in, the monotonic clock then, and whether the kernel said the wall clock was synced. From these:

- **played time** is the sum of the gaps between a play's consecutive events written in the same boot, from the
  monotonic clock (exact whatever the wall clock did). A gap longer than `BREAK_S`, or across a restart, is a
  break, not play: it is counted apart (`breaks`), so a game left overnight and resumed says how long it was
  played, not how long it lay there.
- **start and end** are the wall-clock labels of the first and last events, each with how far they can be
  trusted: `synced` (the clock was synced when the event was written), `worked_back` (it was not, but the same
  boot synced later or earlier: the time is moved by what the sync showed, exactly, through the monotonic clock),
  `unsynced` (the Pi's clock had not been set: the label may be years off) or `unknown` (an event from before
  the stamps, or one salvaged from a damaged store, without one).

Nothing here reads a clock: everything is arithmetic on what the events say.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any, Iterable, Mapping

BREAK_S = 45 * 60.0          # no event for this long: the table was not playing
QUALITIES = ("synced", "worked_back", "unsynced", "unknown")


def parse_at(at: Any) -> datetime | None:
    """An event's `at` label (ISO 8601, UTC) as an aware datetime; None if it is not one."""
    if not isinstance(at, str):
        return None
    try:
        t = datetime.fromisoformat(at)
    except ValueError:
        return None
    return t if t.tzinfo is not None else t.replace(tzinfo=timezone.utc)


def _point(at: str, clock: Mapping[str, Any] | None) -> dict:
    c = clock or {}
    mono = c.get("mono")
    return {"at": at, "boot": c.get("boot") if isinstance(c.get("boot"), str) else None,
            "mono": float(mono) if isinstance(mono, (int, float)) and not isinstance(mono, bool) else None,
            "synced": c.get("synced") if isinstance(c.get("synced"), bool) else None}


def clock_facts(events: Iterable[Any]) -> dict:
    """What a play's events say of its time (kept in its summary): first and last event, the played seconds,
    breaks, and an anchor per boot (its first synced event: mono and label) for working other times back."""
    first = last = prev = None
    played = 0.0
    breaks = 0
    anchors: dict[str, list] = {}
    timed = True
    for ev in events:
        p = _point(ev.at, ev.clock)
        if first is None:
            first = p
        if p["synced"] and p["boot"] and p["mono"] is not None and parse_at(p["at"]) is not None:
            anchors.setdefault(p["boot"], [p["mono"], p["at"]])
        if prev is not None:
            if p["boot"] and p["boot"] == prev["boot"] and p["mono"] is not None and prev["mono"] is not None:
                gap = p["mono"] - prev["mono"]
                if 0 <= gap <= BREAK_S:
                    played += gap
                else:
                    breaks += 1
            else:
                breaks += 1
                if p["mono"] is None or prev["mono"] is None:
                    timed = False      # an event without a stamp: the play's length is not known
        prev = p
        last = p
    return {"first": first, "last": last, "played_s": round(played, 1) if timed else None, "breaks": breaks,
            "anchors": anchors}


def when(point: Mapping[str, Any] | None, anchors: Mapping[str, list]) -> dict:
    """An event's time as well as it is known: {"at": ISO UTC or None, "quality": one of QUALITIES}.

    `anchors` maps boot ids to a synced event of that boot ([mono, at]), from any play in the store."""
    if not point:
        return {"at": None, "quality": "unknown"}
    label = parse_at(point.get("at"))
    if point.get("synced") is True and label is not None:
        return {"at": label.isoformat(timespec="seconds"), "quality": "synced"}
    boot, mono = point.get("boot"), point.get("mono")
    anchor = anchors.get(boot) if boot else None
    if anchor is not None and mono is not None:
        base = parse_at(anchor[1])
        if base is not None:
            t = base + timedelta(seconds=mono - anchor[0])
            return {"at": t.isoformat(timespec="seconds"), "quality": "worked_back"}
    if point.get("synced") is None and point.get("boot") is None and point.get("mono") is None:
        return {"at": label.isoformat(timespec="seconds") if label else None, "quality": "unknown"}
    return {"at": label.isoformat(timespec="seconds") if label else None, "quality": "unsynced"}
