"""Checking a database file: is it a good event store, and what does it hold.

`opening` inspects copies (the database alone, and with its write-ahead log), so that nothing is touched
while it looks; `salvage` checks each event it rescues by the same rules (`_row_problem`).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from companion.store.errors import StoreError
from companion.store.files import _side
from companion.store.log import KINDS, PEOPLE_GAME, SCHEMA_VERSION


@dataclass
class Inspection:
    """What a copy of a database file holds."""
    ok: bool
    problem: str | None = None
    events: int = 0
    last_seq: int = 0
    games: int = 0
    schema: int = SCHEMA_VERSION


def _inspect_copy(path: Path, workdir: Path, *, with_side_files: bool) -> Inspection:
    """Copy the database (and its -wal/-journal, if asked) into workdir and inspect the copy."""
    workdir.mkdir(parents=True, exist_ok=True)
    copy = workdir / path.name
    try:
        shutil.copyfile(path, copy)
        if with_side_files:
            for suffix in ("-wal", "-journal"):
                if _side(path, suffix).exists():
                    shutil.copyfile(_side(path, suffix), _side(copy, suffix))
    except OSError as exc:
        raise StoreError(f"{path}: cannot read the event store to check it: {exc}") from exc
    return inspect_database(copy)


def inspect_database(path: str | Path) -> Inspection:
    """Check one database file (it may be modified: SQLite replays its WAL); never raises for damage."""
    p = Path(path)
    if p.stat().st_size == 0:
        return Inspection(False, "the file is empty (0 bytes)")
    try:
        con = sqlite3.connect(f"file:{p}?mode=rw", uri=True, isolation_level=None)
    except sqlite3.Error as exc:
        return Inspection(False, str(exc))
    try:
        return _inspect(con)
    except sqlite3.Error as exc:
        return Inspection(False, str(exc))
    finally:
        con.close()


def _inspect(con: sqlite3.Connection) -> Inspection:
    result = [r[0] for r in con.execute("PRAGMA integrity_check(5)").fetchall()]
    if result != ["ok"]:
        return Inspection(False, "integrity check failed: " + "; ".join(str(r).replace("\n", " ") for r in result)[:300])
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not tables:
        return Inspection(False, "the database holds no tables")
    if not {"events", "meta"} <= tables:
        return Inspection(False, f"not a Table Companion event store (tables: {', '.join(sorted(tables))})")
    row = con.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
    try:
        schema = int(row[0]) if row else SCHEMA_VERSION
    except (TypeError, ValueError):
        return Inspection(False, f"the store's schema version is unreadable: {row[0]!r}")
    games: set[int] = set()
    events = last = 0
    for seq, game_id, kind, body, source, at in con.execute(
            "SELECT seq, game_id, kind, body, source, at FROM events ORDER BY seq"):
        problem = _row_problem(seq, game_id, kind, body, source, at, games)
        if problem:
            return Inspection(False, f"event {seq}: {problem}")
        if kind == "new_game":
            games.add(seq)
        events += 1
        last = seq
    return Inspection(True, None, events, last, len(games), schema)


def _row_problem(seq: Any, game_id: Any, kind: Any, body: Any, source: Any, at: Any, games: set[int]) -> str | None:
    if not isinstance(seq, int) or not isinstance(game_id, int):
        return "sequence number or game id is not a number"
    if kind not in KINDS:
        return f"unknown kind {kind!r}"
    if not isinstance(body, str) or not isinstance(source, str) or not isinstance(at, str):
        return "a text column holds something else"
    try:
        decoded = json.loads(body)
    except RecursionError:
        return "the body is nested too deeply"
    except ValueError:
        return "the body is not valid JSON"
    if not isinstance(decoded, dict):
        return "the body is not a JSON object"
    if kind == "new_game":
        if game_id != seq:
            return f"a new game whose id {game_id} is not its own sequence number"
    elif kind == "people":
        if game_id != PEOPLE_GAME:
            return f"a rename or merge of players given to game {game_id} (it belongs to none)"
    elif game_id not in games:
        return f"belongs to game {game_id}, which never started"
    return None
