"""What a look at the history is asked with, checked the same way for the API and the command line.

Each function takes the name the value was given under (`'limit'` for the API, `--limit` for the command), so
that a refusal names it: ValueError with one sentence saying what is wrong and what would do.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timezone, tzinfo

STATUSES = ("all", "finished", "unfinished")
FORMATS = ("csv", "json", "bgstats")


def _q(name: str) -> str:
    """A parameter's name as a message gives it: 'limit' for the API's, --limit as the command line spells it."""
    return name if name.startswith("-") else f"'{name}'"


def whole_number(name: str, raw: str | None, low: int, high: int, default: int) -> int:
    if raw is None:
        return default
    if not re.fullmatch(r"[0-9]{1,19}", raw.strip()) or not low <= int(raw) <= high:
        raise ValueError(f"{_q(name)} must be a whole number from {low} to {high}, not {raw[:40]!r}")
    return int(raw)


def moment(name: str, raw: str | None) -> datetime | None:
    """A date (2026-03-14, taken as midnight UTC) or a date and time with its offset (2026-03-14T18:00:00+01:00)."""
    if raw is None or raw == "":
        return None
    text = raw.strip()
    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            d = date.fromisoformat(text)
            return datetime(d.year, d.month, d.day, tzinfo=timezone.utc)
        t = datetime.fromisoformat(text)
    except ValueError:
        t = None
    if t is None or len(text) > 40:
        raise ValueError(f"{_q(name)} must be a date (2026-03-14) or a date and time with its offset "
                         f"(2026-03-14T18:00:00+01:00), not {raw[:40]!r}")
    if t.tzinfo is None:
        raise ValueError(f"{_q(name)} {raw[:40]!r} has no offset: add Z or +01:00, so it is one moment")
    return t


def span(since: datetime | None, until: datetime | None, names: tuple[str, str] = ("since", "until")) -> None:
    if since and until and until <= since:
        raise ValueError(f"{_q(names[1])} must come after {_q(names[0])}")


def status(name: str, raw: str | None) -> str:
    value = "all" if raw in (None, "") else raw
    if value not in STATUSES:
        raise ValueError(f"{_q(name)} must be one of {', '.join(STATUSES)}, not {value[:40]!r}")
    return value


def zone(name: str, raw: str | None) -> tzinfo | None:
    """A time zone by its IANA name (Europe/Berlin, UTC); None (absent or empty): the machine's own zone."""
    if raw in (None, ""):
        return None
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    text = raw.strip()
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_+\-]*(/[A-Za-z0-9_+\-]+){0,2}", text) or len(text) > 64:
        raise ValueError(f"{_q(name)} must be a time zone's name such as Europe/Berlin or UTC, not {raw[:40]!r}")
    try:
        return ZoneInfo(text)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise ValueError(f"{_q(name)} {text!r} is no time zone this machine knows (e.g. Europe/Berlin, UTC)") from None
