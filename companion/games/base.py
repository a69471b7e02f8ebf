"""What every game engine offers the daemon.

Engines are pure: a state is plain data, an action is a JSON-like dict, and
`act` returns a new state or raises `RuleError` without touching the old one.
Randomness (dice) is decided by the shell and carried inside the action, so a
game replays identically from its event log.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping


class RuleError(ValueError):
    """An action the rules do not allow. The message names the rule."""


@dataclass(frozen=True)
class Engine:
    """The daemon-facing face of one game.

    name     -- stable id used in events and URLs (e.g. "balance_duels")
    title    -- what the page shows
    new      -- options (validated dict) -> initial state
    act      -- (state, action dict) -> new state; RuleError if not allowed
    view     -- state -> JSON-safe dict for the page and /api/state
    scores   -- state -> {player label: number} for the score history
    seats    -- (fewest, most, usual) players the game takes, for the page's New game form
    default_names -- what players are called when the form leaves a name blank (as `new` names them)
    seat_choice   -- a choice each player makes at New game besides a name: {key, label, options: [{value, label}]}
    colours       -- the colours players choose from at New game (empty: each seat's colour is fixed)
    setup_options -- the variants and house rules New game offers, each a labelled control with a line saying what
                     it does: {key, label, help, kind: "bool", default} or {key, label, help, kind: "choice",
                     choices: [{label, options}]} (a choice's `options` are merged into the game's options) or
                     {key, label, help, kind: "pick", count, choices: [{value, label}]} (exactly `count` of them, as a
                     list); any with `when` ({option: value}) counts only when the options chosen so far match it
    option_keys   -- every option `new` takes (anything else it refuses by name)
    """

    name: str
    title: str
    new: Callable[[Mapping[str, Any]], Any]
    act: Callable[[Any, Mapping[str, Any]], Any]
    view: Callable[[Any], dict]
    scores: Callable[[Any], dict]
    seats: tuple[int, int, int] = (2, 6, 2)
    default_names: tuple[str, ...] = ()
    seat_choice: Mapping[str, Any] | None = None
    colours: tuple[str, ...] = ()
    setup_options: tuple[Mapping[str, Any], ...] = ()
    option_keys: tuple[str, ...] = ()


def hides_cash(view: Any) -> bool:
    """Whether a game's view keeps some player's cash secret (Imperial's Separate Funds lists them in
    `cash_hidden`): then the events behind it are shown in outline only, for a body may hold the figure."""
    return isinstance(view, Mapping) and bool(view.get("cash_hidden"))


def require(condition: bool, message: str) -> None:
    """Raise RuleError(message) unless condition holds."""
    if not condition:
        raise RuleError(message)


def field(action: Mapping[str, Any], key: str, kind: type | tuple[type, ...], *, default: Any = ...) -> Any:
    """Fetch action[key], checking its type; a missing or mistyped key is a RuleError naming it."""
    if key not in action:
        if default is ...:
            raise RuleError(f"action is missing '{key}'")
        return default
    value = action[key]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    # bool is an int in Python; a JSON true must not pass as a number
    if isinstance(value, bool) and bool not in kinds:
        raise RuleError(f"'{key}' must be {_kinds(kinds)}, not {value!r}")
    if not isinstance(value, kinds):
        raise RuleError(f"'{key}' must be {_kinds(kinds)}, not {value!r}")
    return value


# a JSON type as a refusal names it
_KIND_WORDS = {int: "a whole number", float: "a number", str: "text", bool: "true or false", list: "a list",
               tuple: "a list", dict: "an object", type(None): "left empty"}


def _kinds(kinds: tuple[type, ...]) -> str:
    return " or ".join(_KIND_WORDS.get(k, k.__name__) for k in kinds)
