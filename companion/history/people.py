"""People across games: the names typed at New game, renames and merges (as `people` events), and guests.

A player is a person, not a seat. Names are matched case- and accent-insensitively (`key`: "Zoë " and "zoe" are
one person); each person is shown by their newest spelling, or by the name a rename gave them. A rename or a
merge is a `people` event in the store, so the history and every rating are recomputed from the events and an
undo (another `people` event) takes the latest one back; nothing already written is changed.

A guest stays a guest: a seat left at the game's own name for it (the page's placeholder: "black", "Player 2",
"Red", an empire's title) or a name starting with "Guest" is no person. It is never offered at New game, has no
stats or rating of its own, and cannot be renamed or merged.

The fold (`Roster.build`) takes the plays' names and the people events in the order of their sequence numbers:
a name first typed after a rename of it belongs to the renamed person.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

MAX_NAME = 24               # the engines keep at most this much of a name
OPS = ("rename", "merge", "undo")


class PeopleError(ValueError):
    """A rename, merge or undo that cannot be done; `status` is the HTTP status that fits (400, 404 or 409)."""

    def __init__(self, message: str, status: int = 409):
        super().__init__(message)
        self.status = status


def key(name: str) -> str:
    """The name as it is compared: accents dropped, case folded, spaces collapsed."""
    decomposed = unicodedata.normalize("NFKD", name)
    bare = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(bare.casefold().split())


_PLAYER_N = re.compile(r"^(player|seat) ?\d+$")


def is_guest(name: str, defaults: Iterable[str] = ()) -> bool:
    """A seat's name that stands for no person: a game's default name for a seat, "Player 3", or "Guest…"."""
    k = key(name)
    if not k or k.startswith("guest") or _PLAYER_N.match(k):
        return True
    return k in {key(d) for d in defaults}


def clean_name(value: Any, what: str) -> str:
    """A name from a request: a string of 1 to MAX_NAME characters once trimmed, no control characters."""
    if not isinstance(value, str):
        raise PeopleError(f"'{what}' must be a name (a string)", 400)
    name = " ".join(value.split())
    if not name:
        raise PeopleError(f"'{what}' is empty: give a name", 400)
    if len(name) > MAX_NAME:
        raise PeopleError(f"'{what}' is {len(name)} characters long; a name has at most {MAX_NAME}", 400)
    if any(unicodedata.category(c) in ("Cc", "Cf", "Cs", "Co", "Cn") for c in name):
        raise PeopleError(f"'{what}' holds a control or unassigned character", 400)
    return name


@dataclass
class Person:
    id: str                      # the key of the first name the person was known by (stable across renames)
    name: str                    # how they are shown
    renamed: bool = False        # `name` was fixed by a rename or a merge (else: the spelling most typed)
    aliases: set[str] = field(default_factory=set)
    last_seq: int = 0            # the last play they were seated in (by its newest event)
    plays: int = 0
    spellings: dict[str, list[int]] = field(default_factory=dict)   # name as typed -> [times, newest seq]


@dataclass
class Roster:
    people: dict[str, Person]
    alias: dict[str, str]                    # key -> person id
    standing: list[int]                      # seqs of the rename/merge events not undone, oldest first
    problems: list[str]
    guest_names: frozenset[str] = frozenset()   # every game's default names for its seats (keys)

    def person(self, name: str, defaults: Iterable[str] = ()) -> Person | None:
        """The person behind a seat's name, or None for a guest (or a name never seen)."""
        if is_guest(name, defaults):
            return None
        pid = self.alias.get(key(name))
        return self.people.get(pid) if pid else None

    # ------------------------------------------------------------------ the fold
    @classmethod
    def build(cls, seatings: Sequence[tuple[int, int, Sequence[tuple[str, Sequence[str]]]]],
              events: Sequence[Any], guest_names: Iterable[str] = ()) -> "Roster":
        """`seatings`: (first seq, last seq, [(name, the game's default names)]) per play; `events`: the people
        events (objects with .seq and .body), oldest first; `guest_names`: every game's default names."""
        undone = {ev.body.get("undoes") for ev in events if ev.body.get("op") == "undo"}
        ops = [ev for ev in events if ev.body.get("op") in ("rename", "merge") and ev.seq not in undone]
        roster = cls({}, {}, [], [], frozenset(key(n) for n in guest_names))
        items: list[tuple[int, int, Any]] = [(first, 0, (last, names)) for first, last, names in seatings]
        items += [(ev.seq, 1, ev) for ev in ops]
        for seq, kind, item in sorted(items, key=lambda x: (x[0], x[1])):
            if kind == 0:
                roster._seat(*item)
            else:
                roster._apply(item)
        return roster

    def _seat(self, last: int, names: Sequence[tuple[str, Sequence[str]]]) -> None:
        for name, defaults in names:
            if is_guest(name, defaults):
                continue
            k = key(name)
            pid = self.alias.get(k)
            if pid is None:
                pid = k
                while pid in self.people:          # a key once used by someone merged away
                    pid += "'"
                self.people[pid] = Person(pid, name, aliases={k})
                self.alias[k] = pid
            p = self.people[pid]
            p.plays += 1
            p.last_seq = max(p.last_seq, last)
            seen = p.spellings.setdefault(name, [0, 0])
            seen[0] += 1
            seen[1] = max(seen[1], last)
            if not p.renamed:
                # shown as they are most often typed ("Zoë" over one "zoe"), the newest of equals
                p.name = max(p.spellings, key=lambda n: tuple(p.spellings[n]))
            p.aliases.add(k)

    def _apply(self, ev: Any) -> None:
        body = ev.body
        try:
            if body["op"] == "rename":
                self.rename(body["name"], body["to"], check=False)
            else:
                self.merge(body["name"], body["into"], check=False)
            self.standing.append(ev.seq)
        except (PeopleError, KeyError, TypeError) as exc:
            self.problems.append(f"people event {ev.seq} no longer applies and was skipped: {exc}")

    # ------------------------------------------------------------------ the changes (checked first by the API)
    def _guest(self, name: str) -> bool:
        return is_guest(name) or key(name) in self.guest_names

    def _find(self, name: str, what: str) -> Person:
        if self._guest(name):
            raise PeopleError(f"{name!r} is a guest's name: a guest stays a guest, so it cannot be renamed or merged")
        pid = self.alias.get(key(name))
        if pid is None:
            raise PeopleError(f"nobody called {name!r} has played here ('{what}')", 404)
        return self.people[pid]

    def rename(self, name: str, to: str, check: bool = True, dry: bool = False) -> Person:
        p = self._find(name, "name")
        if self._guest(to):
            raise PeopleError(f"{to!r} is how guests are named (a seat's default, \"Player N\" or \"Guest…\"); "
                              "choose another name")
        other = self.alias.get(key(to))
        if other is not None and other != p.id:
            raise PeopleError(f"{self.people[other].name!r} is someone else already: merge the two instead")
        if check and to == p.name:
            raise PeopleError(f"{p.name!r} is called that already")
        if dry:
            return p
        p.name = to
        p.renamed = True
        p.aliases.add(key(to))
        self.alias[key(to)] = p.id
        return p

    def merge(self, name: str, into: str, check: bool = True, dry: bool = False) -> Person:
        src = self._find(name, "name")
        dst = self._find(into, "into")
        if src.id == dst.id:
            raise PeopleError(f"{name!r} and {into!r} are the same person already: nothing to merge")
        if dry:
            return dst
        for k in src.aliases:
            self.alias[k] = dst.id
        dst.aliases |= src.aliases
        dst.plays += src.plays
        for name, (times, newest) in src.spellings.items():
            seen = dst.spellings.setdefault(name, [0, 0])
            seen[0] += times
            seen[1] = max(seen[1], newest)
        if src.last_seq > dst.last_seq:
            dst.last_seq = src.last_seq
        dst.renamed = True                # shown by the name merged into from now on
        del self.people[src.id]
        return dst

    def suggestions(self, q: str = "", limit: int = 20) -> list[Person]:
        """People whose name (or a spelling they were known by) starts with `q`, or has a word that does,
        matched case- and accent-insensitively; the most recently seated first."""
        want = key(q)
        found = []
        for p in sorted(self.people.values(), key=lambda p: -p.last_seq):
            words = {key(p.name)} | p.aliases
            if not want or any(w.startswith(want) or any(part.startswith(want) for part in w.split()) for w in words):
                found.append(p)
                if len(found) >= limit:
                    break
        return found


def check_body(body: Mapping[str, Any]) -> dict:
    """A people event's body as the API takes it; PeopleError (400) naming what is wrong."""
    op = body.get("op")
    if op == "rename":
        return {"op": "rename", "name": clean_name(body.get("name"), "name"), "to": clean_name(body.get("to"), "to")}
    if op == "merge":
        return {"op": "merge", "name": clean_name(body.get("name"), "name"),
                "into": clean_name(body.get("into"), "into")}
    raise PeopleError(f"'op' must be one of {', '.join(OPS)}", 400)
