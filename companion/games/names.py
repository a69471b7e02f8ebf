"""What the players type into a game: names, places and notes, each with a bound and no hidden characters.

Whatever a game keeps as text reaches every tablet in every `/api/state`, the page's layout, the
MQTT state and the hall. A name of 10,000 characters made each change send half a megabyte and
the page scroll sideways (issue 34), and a newline or a right-to-left override in a name garbles
every line that quotes it. So every engine checks its typed text here, by one rule, and refuses
(never cuts) what breaks it, naming the field and showing the start of what was given.

The colours are each game's own list; `colour` checks a choice against it, so that nothing but a
colour the page knows ever reaches a style (a colour of `red;position:fixed;…` once covered the page).
"""

from __future__ import annotations

import unicodedata
from typing import Any, Sequence

from companion.games.base import RuleError

# the page's name field holds 24 characters (its maxlength), and Balance Duels always kept 24
NAME_MOST = 24
# a territory or city the table types in: 1815's capitals and added territories, Imperial's city names
PLACE_MOST = 40
# a line kept with a move (Global Powers' failed proposal, an Imperial correction's reason)
NOTE_MOST = 100
# control characters (newlines among them), format characters (bidi overrides, zero-width ones),
# lone surrogates (which cannot even be written out as UTF-8) and the line and paragraph separators
HIDDEN = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
# how much of a refused text the message repeats: enough to recognise it, never the whole of it
SHOWN = 24


def shown(text: str) -> str:
    """The start of `text` for a message, quoted, with hidden characters escaped (repr does that)."""
    return repr(text[:SHOWN] + "…" if len(text) > SHOWN else text)


def check_text(text: str, what: str, most: int) -> str:
    """`text` itself if it is at most `most` characters with none hidden; else a RuleError naming `what`."""
    if len(text) > most:
        raise RuleError(f"{what} is at most {most} characters: {shown(text)}")
    hidden = next((c for c in text if unicodedata.category(c) in HIDDEN), None)
    if hidden is not None:
        raise RuleError(f"{what} cannot hold control characters (U+{ord(hidden):04X}): {shown(text)}")
    return text


def player_name(text: str, what: str = "a player's name") -> str:
    """A player's name as the engine keeps it (already stripped by the engine), checked by the shared rule."""
    return check_text(text, what, NAME_MOST)


def place_name(text: str, what: str) -> str:
    """A territory or city name the table typed, checked by the shared rule."""
    return check_text(text, what, PLACE_MOST)


def note(text: str, what: str) -> str:
    """A free line kept with a move, checked by the shared rule."""
    return check_text(text, what, NOTE_MOST)


def colour(value: Any, allowed: Sequence[str], what: str) -> str:
    """One of the game's `allowed` colours (any case, spaces around ignored); else a RuleError naming `what`."""
    chosen = value.strip().lower() if isinstance(value, str) else ""
    if chosen not in allowed:
        given = shown(value) if isinstance(value, str) else repr(value)[:SHOWN]
        raise RuleError(f"{what} must be one of {', '.join(allowed)}, not {given}")
    return chosen
