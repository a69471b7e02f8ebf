"""Helpers for the games' map data files (data/*.toml) and the players' completion of them.

The shipped files hold only what a rulebook states (each fact with its source under
[sources]). What the printed board alone shows, the players add once in a completion
file beside the config (`<config dir>/maps/<game>.toml`); it only ever adds to the
shipped map, is checked whole before anything uses it, and reaches the rules engines as
plain data (`MapForm.data`), so an engine stays a pure function of its state.
"""

from __future__ import annotations

import difflib
import json
import tomllib
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, Callable, Iterable, Mapping

from companion.foundation.toml_lines import locate, toml_value

FILE_VERSION = 1
MAX_NAME = 60            # longer than any printed territory name
MAX_NEW_TERRITORIES = 120
MAX_BORDERS = 400        # a board of ~100 territories has ~250
MAX_LIST = 120
MAX_FILE_BYTES = 64 * 1024  # the table's reader refuses a larger file before reading it


def symmetric_links(nodes: Iterable[str], table: Mapping[str, Iterable[str]],
                    resolve: Callable[[str], str]) -> dict[str, frozenset[str]]:
    """Neighbours of every node from a table listing each border once (a - b gives b - a too).

    `resolve` turns a name as written in the file into the node's canonical name (KeyError if unknown).
    """
    links: dict[str, set[str]] = {n: set() for n in nodes}
    for a, others in table.items():
        for b in others:
            na, nb = resolve(a), resolve(b)
            links.setdefault(na, set()).add(nb)
            links.setdefault(nb, set()).add(na)
    return {n: frozenset(v) for n, v in links.items()}


class MapFileError(ValueError):
    """A completion the tracker will not use; str() names the file and line, or the field."""


class MapWriteError(OSError):
    """The completion file could not be written (full disk, read-only folder, ...); the old file is kept.

    str() names the cause in words; `errno` is the first OSError's. Still an OSError, so a caller that
    caught the writer's OSError before keeps catching it.
    """

    def __init__(self, message: str, errno_: int | None):
        super().__init__(message)
        self.errno = errno_


@dataclass(frozen=True)
class MapForm:
    """What one game's completion may hold, and the shipped facts it must not contradict.

    names          canonical territory (or region) names the shipped map knows
    key            how a typed name is matched (case, a leading "the", ...)
    open_names     whether the players may add printed territories the shipped map lacks
    group          "regions" (Risk) or "empires" (Balance of Power), or "" for none
    group_ids      the groups there are; group_fields what each may get
    shipped_groups each group's shipped facts: {"bonus": n, "capital": "X", "territories": [...], "whole": bool}
    shipped_borders the shipped border pairs; borders_known: territories all of whose borders are shipped
    rough          how many rough-terrain territories the board has (0: the game has none to enter)
    max_bonus      bound on a region bonus; max_bonus_total on all of them together
    """

    game: str
    names: tuple[str, ...]
    key: Callable[[str], str]
    open_names: bool = False
    group: str = ""
    group_ids: tuple[str, ...] = ()
    group_fields: frozenset[str] = frozenset()
    shipped_groups: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    shipped_borders: frozenset[frozenset[str]] = frozenset()
    borders_known: frozenset[str] = frozenset()
    rough: int = 0
    max_bonus: int = 10
    max_bonus_total: int = 30

    # ------------------------------------------------------------ checking

    def check(self, raw: Mapping[str, Any], fail: Callable[[str | None, str | None, str], Exception]) -> dict[str, Any]:
        """The completion as canonical plain data, or `fail(table, key, message)` raised for the first problem."""
        allowed = {"version", "territories", "borders", "borders_complete"}
        if self.rough:
            allowed.add("rough")
        if self.group:
            allowed.add(self.group)
        for k in raw:
            if k not in allowed:
                raise fail(None, k, f"unknown key '{k}' (known: {', '.join(sorted(allowed))})")
        if "version" in raw and raw["version"] != FILE_VERSION:
            raise fail(None, "version", f"version must be {FILE_VERSION}, not {raw['version']!r}")

        known = {self.key(n): n for n in self.names}
        added: list[str] = []
        if raw.get("territories"):
            if not self.open_names:
                raise fail(None, "territories", f"the {self.game} map already names every territory; "
                           "use the names it has (misspelt names are refused with the nearest ones)")
            for i, name in enumerate(self._list(raw, None, "territories", MAX_NEW_TERRITORIES, fail)):
                text = self._text(name, None, "territories", i, fail)
                if self.key(text) in known:
                    raise fail(None, "territories", f"'territories' #{i + 1}: {known[self.key(text)]} is already on the map")
                known[self.key(text)] = text
                added.append(text)

        def canon(name: Any, table: str | None, key: str, index: int | None = None) -> str:
            text = self._text(name, table, key, index, fail)
            found = known.get(self.key(text))
            if found is None:
                near = [known[m] for m in difflib.get_close_matches(self.key(text), list(known), n=3, cutoff=0.6)]
                hint = f"; did you mean {' or '.join(near)}?" if near else ""
                extra = " (add a printed territory the map lacks to 'territories' first)" if self.open_names else ""
                raise fail(table, key, f"{self._where(table, key, index)}: {text!r} is not a territory of the map{hint}{extra}")
            return found

        borders: list[list[str]] = []
        seen: set[frozenset[str]] = set()
        for i, pair in enumerate(self._list(raw, None, "borders", MAX_BORDERS, fail)):
            if not isinstance(pair, list) or len(pair) != 2:
                raise fail(None, "borders", f"'borders' #{i + 1} must be a pair of names, like [\"A\", \"B\"]")
            a, b = canon(pair[0], None, "borders", i), canon(pair[1], None, "borders", i)
            if a == b:
                raise fail(None, "borders", f"'borders' #{i + 1}: {a} cannot border itself")
            link = frozenset((a, b))
            if link in seen or link in self.shipped_borders:
                continue  # said twice (or already shipped): harmless, kept once
            for end, other in ((a, b), (b, a)):
                if end in self.borders_known:
                    raise fail(None, "borders", f"'borders' #{i + 1}: the rulebook lists every border of {end}, "
                               f"and {other} is not among them")
            seen.add(link)
            borders.append(sorted((a, b)))

        complete = []
        for i, name in enumerate(self._list(raw, None, "borders_complete", MAX_LIST, fail)):
            t = canon(name, None, "borders_complete", i)
            if t not in complete and t not in self.borders_known:
                complete.append(t)

        rough = []
        if self.rough:
            for i, name in enumerate(self._list(raw, None, "rough", MAX_LIST, fail)):
                t = canon(name, None, "rough", i)
                if t not in rough:
                    rough.append(t)
            if len(rough) > self.rough:
                raise fail(None, "rough", f"'rough' names {len(rough)} territories; the board has {self.rough}")

        result: dict[str, Any] = {"territories": added, "borders": sorted(borders), "borders_complete": sorted(complete)}
        if self.rough:
            result["rough"] = sorted(rough)
        if self.group:
            result[self.group] = self._groups(raw, canon, fail)
        return result

    def _groups(self, raw, canon, fail) -> dict[str, dict[str, Any]]:
        table = raw.get(self.group, {})
        if not isinstance(table, Mapping):
            raise fail(None, self.group, f"'{self.group}' must be tables like [{self.group}.{self.group_ids[0]}]")
        out: dict[str, dict[str, Any]] = {}
        owner: dict[str, str] = {}
        for gid, spec in self.shipped_groups.items():
            for t in spec.get("territories", ()):
                owner[t] = gid
        for gid, spec in table.items():
            tname = f"{self.group}.{gid}"
            if gid not in self.group_ids:
                raise fail(tname, None, f"[{tname}]: unknown {self.group[:-1]} (known: {', '.join(self.group_ids)})")
            if not isinstance(spec, Mapping):
                raise fail(tname, None, f"[{tname}] must be a table")
            shipped = self.shipped_groups.get(gid, {})
            entry: dict[str, Any] = {}
            for k, v in spec.items():
                if k not in self.group_fields:
                    raise fail(tname, k, f"[{tname}] {k}: unknown key (known: {', '.join(sorted(self.group_fields))})")
                if k == "bonus":
                    if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= self.max_bonus:
                        raise fail(tname, k, f"[{tname}] bonus must be a whole number from 1 to {self.max_bonus}, not {v!r}")
                    if shipped.get("bonus") not in (None, v):
                        raise fail(tname, k, f"[{tname}] bonus: the rulebook gives {shipped['bonus']}, not {v}")
                    if shipped.get("bonus") is None:
                        entry["bonus"] = v
                elif k == "complete":
                    if not isinstance(v, bool):
                        raise fail(tname, k, f"[{tname}] complete must be true or false")
                    if v:
                        entry["complete"] = True
                elif k == "capital":
                    where = canon(v, tname, k)
                    if shipped.get("capital") not in (None, "", where):
                        raise fail(tname, k, f"[{tname}] capital: the rulebook puts it in {shipped['capital']}, not {where}")
                    if not shipped.get("capital"):
                        entry["capital"] = where
                elif k == "territories":
                    members = []
                    for i, name in enumerate(self._list(spec, tname, k, MAX_LIST, fail)):
                        t = canon(name, tname, k, i)
                        if t in shipped.get("territories", ()) or t in members:
                            continue
                        if owner.get(t, gid) != gid:
                            raise fail(tname, k, f"[{tname}] territories: {t} is already in {owner[t]}")
                        if shipped.get("whole"):
                            raise fail(tname, k, f"[{tname}] territories: the rulebook gives the whole of {gid}, without {t}")
                        owner[t] = gid
                        members.append(t)
                    if members:
                        entry["territories"] = members
            if "capital" in entry:
                where = entry["capital"]
                if owner.get(where, gid) != gid:
                    raise fail(tname, "capital", f"[{tname}] capital: {where} is in {owner[where]}")
                owner[where] = gid
            if entry:
                out[gid] = entry
        if "bonus" in self.group_fields:
            total = sum(spec.get("bonus") or 0 for spec in self.shipped_groups.values()) + \
                sum(e.get("bonus", 0) for e in out.values())
            if total > self.max_bonus_total:
                raise fail(self.group, None, f"the {self.group} bonuses add up to {total}; at most {self.max_bonus_total}")
        capitals = [e["capital"] for e in out.values() if "capital" in e] + \
            [s["capital"] for s in self.shipped_groups.values() if s.get("capital")]
        if len(set(capitals)) != len(capitals):
            raise fail(self.group, None, "two empires cannot share a capital")
        return out

    @staticmethod
    def _where(table: str | None, key: str, index: int | None) -> str:
        base = f"[{table}] {key}" if table else f"'{key}'"
        return base if index is None else f"{base} #{index + 1}"

    def _list(self, raw: Mapping[str, Any], table: str | None, key: str, most: int, fail) -> list:
        value = raw.get(key, [])
        if not isinstance(value, list):
            raise fail(table, key, f"{self._where(table, key, None)} must be a list")
        if len(value) > most:
            raise fail(table, key, f"{self._where(table, key, None)} has {len(value)} entries; at most {most}")
        return value

    def _text(self, name: Any, table: str | None, key: str, index: int | None, fail) -> str:
        if not isinstance(name, str) or not name.strip():
            raise fail(table, key, f"{self._where(table, key, index)} must be a territory name, not {name!r}")
        text = " ".join(name.split())
        if len(text) > MAX_NAME or not text.isprintable():
            raise fail(table, key, f"{self._where(table, key, index)}: a name is at most {MAX_NAME} printable characters")
        return text

    # ------------------------------------------------------------ files and additions

    def empty(self) -> dict[str, Any]:
        return self.check({}, _field_error)

    def parse(self, text: str, source: str) -> dict[str, Any]:
        """A completion file's text, checked whole; MapFileError as `source:LINE: problem`."""
        try:
            raw = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            msg = str(exc)
            line = int(msg.split("(at line ", 1)[1].split(",", 1)[0]) if "(at line " in msg else 1
            raise MapFileError(f"{source}:{line}: not valid TOML: {msg}") from None

        def fail(table: str | None, key: str | None, message: str) -> MapFileError:
            return MapFileError(f"{source}:{locate(text, table, key)}: {message}")

        return self.check(raw, fail)

    def add(self, current: Mapping[str, Any], addition: Any) -> dict[str, Any]:
        """`current` with `addition` (same shape as the file) added; MapFileError naming the field."""
        if not isinstance(addition, Mapping) or not addition:
            raise MapFileError("'add' must be an object with territories, borders, borders_complete"
                               + (", rough" if self.rough else "") + (f" or {self.group}" if self.group else ""))
        merged: dict[str, Any] = json.loads(json.dumps(dict(current)))
        for k, v in addition.items():
            if k in ("territories", "borders", "borders_complete", "rough"):
                if not isinstance(v, list):
                    raise MapFileError(f"'{k}' must be a list")
                merged[k] = list(merged.get(k, [])) + list(v)
            elif k == self.group and self.group:
                if not isinstance(v, Mapping):
                    raise MapFileError(f"'{k}' must be an object of {self.group}")
                groups = merged.setdefault(k, {})
                for gid, spec in v.items():
                    if not isinstance(spec, Mapping):
                        raise MapFileError(f"[{k}.{gid}] must be an object")
                    entry = groups.setdefault(gid, {}) if isinstance(groups.get(gid, {}), dict) else {}
                    for fk, fv in spec.items():
                        if fk == "territories" and isinstance(fv, list):
                            entry[fk] = list(entry.get(fk, [])) + fv
                        else:
                            entry[fk] = fv
            else:
                merged[k] = v  # refused by check() with the list of known keys
        return self.check(merged, _field_error)

    def render(self, data: Mapping[str, Any]) -> str:
        lines = [
            f"# {self.game}: what the printed board shows and the shipped map data lacks,",
            "# entered by the players (the page's Map form writes this file; it may be edited by hand).",
            f"version = {FILE_VERSION}",
        ]
        for k in ("territories", "borders", "borders_complete", "rough"):
            if data.get(k):
                lines.append(f"{k} = {toml_value(list(data[k]))}")
        for gid, spec in (data.get(self.group) or {}).items():
            lines += ["", f"[{self.group}.{gid}]"]
            lines += [f"{k} = {toml_value(v)}" for k, v in spec.items()]
        return "\n".join(lines) + "\n"


def _field_error(table: str | None, key: str | None, message: str) -> MapFileError:
    return MapFileError(message)


def frozen_key(data: Mapping[str, Any] | None) -> str:
    """A cache key for a completion (plain data in, the same string for the same content)."""
    return json.dumps(data or {}, sort_keys=True)


def cached_atlas(build: Callable[[Mapping[str, Any]], Any]) -> Callable[[Mapping[str, Any] | None], Any]:
    """`build(completion)` as a function of the completion, built once per distinct completion (the rules ask for
    the map at every action; a completion changes once an evening)."""
    @lru_cache(maxsize=8)
    def from_key(key: str) -> Any:
        return build(json.loads(key))

    return lambda data: from_key(frozen_key(data))


def with_map(engine: Any, new: Callable, act: Callable, view: Callable, map_data: Mapping[str, Any], **changes: Any) -> Any:
    """`engine` with the players' completion of its map in every state it sees: the completion rides in the state
    as plain data, so the rules stay functions of the state. `changes` replace other fields of the engine."""
    data = dict(map_data)

    def stamp(state: Mapping[str, Any]) -> dict[str, Any]:
        return {**state, "map": data}

    return replace(engine, new=lambda options: new(options, data), act=lambda state, action: act(stamp(state), action),
                   view=lambda state: view(stamp(state)), **changes)
