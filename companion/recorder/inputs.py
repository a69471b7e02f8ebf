"""The inputs file of a replay: what the table did besides moving pawns, one JSON object per line.

Each line has `t` (seconds on the trace's clock) and exactly one of

- `"new_game": {"game": NAME, "options": {...}}` — a new game, as the page starts one;
- `"action": {...}` — any action the page sends (a roll with its value, a pass, a tip, …);
- `"answer": {"kind": …, "from_holder": …, …}` — the move the players named when the companion asked
  which move was made (the fields of the move, never an option number, so the line keeps its meaning
  when the questions change);
- `"undo": true`;
- `"follower": {...}` — written by the flight recorder only: the daemon started its arm follower
  afresh here from what it had learned (companion/sensing/memory.py), and so does the replay.

Lines are in time order. An input at time t is applied after every trace row of time t or
earlier and before every later row; inputs of one time keep their order. Reading checks every
line and stops at the first bad one with `FILE:LINE: what is wrong`.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from companion.config import GAMES

KINDS = ("new_game", "action", "answer", "undo", "follower")
MOVE_FIELDS = ("kind", "seat", "roll", "size", "from_holder", "to_holder", "beats", "beaten_seat", "beaten_size")
MAX_FILE_BYTES = 64 * 1024 * 1024
MAX_LINES = 1_000_000
MAX_LINE_BYTES = 64 * 1024          # as much as the page may send in one request
MAX_T = 1e7                         # seconds: about four months of table time


class InputError(ValueError):
    """A bad inputs file; str() is `FILE:LINE: problem`."""

    def __init__(self, path: str, line: int, message: str):
        super().__init__(f"{path}:{line}: {message}")
        self.path = path
        self.line = line
        self.message = message


@dataclass(frozen=True)
class Input:
    t: float
    kind: str                 # one of KINDS
    body: Any                 # the object after the kind's key (True for an undo)
    line: int = 0             # where it was read from (0: made in memory)

    def to_json(self) -> dict:
        return {"t": self.t, self.kind: self.body}

    def text(self) -> str:
        return json.dumps(self.to_json(), ensure_ascii=False, separators=(",", ":"))

    def describe(self) -> str:
        if self.kind == "action" and isinstance(self.body, Mapping):
            return f"action {self.body.get('type', '?')}"
        return self.kind.replace("_", " ")


def _scalar(v: Any) -> bool:
    return v is None or isinstance(v, str) or (isinstance(v, int) and not isinstance(v, bool))


def parse_input(data: Any, *, line: int = 0) -> Input:
    """One input from its decoded JSON; ValueError with the reason (no file or line in it)."""
    if not isinstance(data, dict):
        raise ValueError("each line must be a JSON object like {\"t\": 1.5, \"action\": {...}}")
    if "t" not in data:
        raise ValueError("no \"t\" (the time in seconds on the trace's clock)")
    t = data["t"]
    if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t):
        raise ValueError(f"\"t\" must be a number of seconds, not {t!r}")
    if not 0 <= t <= MAX_T:
        raise ValueError(f"\"t\" must be from 0 to {MAX_T:.0f} seconds, not {t!r}")
    keys = [k for k in data if k != "t"]
    unknown = [k for k in keys if k not in KINDS]
    if unknown:
        raise ValueError(f"unknown key {unknown[0]!r} (a line has \"t\" and one of {', '.join(KINDS)})")
    if len(keys) != 1:
        raise ValueError(f"a line has exactly one of {', '.join(KINDS)}, not {len(keys)}"
                         + (f" ({', '.join(keys)})" if keys else ""))
    kind = keys[0]
    body = data[kind]
    if kind == "undo":
        if body is not True:
            raise ValueError("\"undo\" must be true")
    elif kind == "follower":
        if not isinstance(body, dict):
            raise ValueError("\"follower\" must be the follower's memory, an object (as the flight recorder writes it)")
    elif kind == "new_game":
        if not isinstance(body, dict):
            raise ValueError("\"new_game\" must be an object {\"game\": NAME, \"options\": {...}}")
        extra = sorted(set(body) - {"game", "options"})
        if extra:
            raise ValueError(f"new_game: unknown key {extra[0]!r} (it has game and options)")
        if body.get("game") not in GAMES:
            raise ValueError(f"new_game: game must be one of {', '.join(GAMES)}, not {body.get('game')!r}")
        if not isinstance(body.get("options", {}), dict):
            raise ValueError("new_game: options must be an object")
        body = {"game": body["game"], "options": dict(body.get("options", {}))}
    elif kind == "action":
        if not isinstance(body, dict) or not body:
            raise ValueError("\"action\" must be an action object, as the page sends (e.g. {\"type\": \"roll\", "
                             "\"value\": 4})")
        if not isinstance(body.get("type"), str):
            raise ValueError("action: every action has a \"type\" (a string)")
    else:
        if not isinstance(body, dict):
            raise ValueError("\"answer\" must be the move's fields, e.g. {\"kind\": \"advance\", \"from_holder\": "
                             "\"E3\", \"to_holder\": \"E7\"}")
        extra = sorted(set(body) - set(MOVE_FIELDS))
        if extra:
            raise ValueError(f"answer: {extra[0]!r} is not a field of a move (fields: {', '.join(MOVE_FIELDS)})")
        if body.get("kind") not in ("place", "advance"):
            raise ValueError(f"answer: kind must be \"place\" or \"advance\" (the moves the sensors ask about), "
                             f"not {body.get('kind')!r}")
        bad = next((k for k, v in body.items() if not _scalar(v)), None)
        if bad is not None:
            raise ValueError(f"answer: {bad} must be a string, a whole number or null")
    return Input(float(t), kind, body, line)


def parse_lines(lines: Iterable[str], name: str) -> list[Input]:
    out: list[Input] = []
    last = -math.inf
    for number, text in enumerate(lines, start=1):
        if number > MAX_LINES:
            raise InputError(name, number, f"more than {MAX_LINES} lines")
        if len(text) > MAX_LINE_BYTES:
            raise InputError(name, number, f"the line is longer than {MAX_LINE_BYTES // 1024} kB")
        if not text.strip():
            continue
        try:
            data = json.loads(text)
        except RecursionError:
            raise InputError(name, number, "the JSON is nested too deeply") from None
        except ValueError as exc:
            raise InputError(name, number, f"not JSON: {exc}") from None
        try:
            item = parse_input(data, line=number)
        except RecursionError:
            raise InputError(name, number, "the JSON is nested too deeply") from None
        except ValueError as exc:
            raise InputError(name, number, str(exc)) from None
        if item.t < last:
            raise InputError(name, number, f"time goes backwards: {item.t:g} after {last:g} (lines must be in time "
                                           "order)")
        last = item.t
        out.append(item)
    return out


def read_inputs(path: str | Path) -> list[Input]:
    """Every input of a file, checked whole (InputError at the first bad line)."""
    name = str(path)
    p = Path(path)
    try:
        size = p.stat().st_size
    except FileNotFoundError:
        raise InputError(name, 1, "no such inputs file") from None
    except OSError as exc:
        raise InputError(name, 1, f"cannot read: {exc.strerror or exc}") from None
    if size > MAX_FILE_BYTES:
        raise InputError(name, 1, f"the file has {size} bytes; at most {MAX_FILE_BYTES // (1024 * 1024)} MB are read")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(name, 1, f"not a UTF-8 text file ({exc.reason})") from None
    except OSError as exc:
        raise InputError(name, 1, f"cannot read: {exc.strerror or exc}") from None
    return parse_lines(text.lstrip("\ufeff").splitlines(), name)


def write_inputs(inputs: Iterable[Input]) -> str:
    return "".join(i.text() + "\n" for i in inputs)
