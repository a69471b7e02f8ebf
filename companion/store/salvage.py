"""Salvage: the events still readable in a damaged database, put into the restored store.

A damaged database is not simply replaced by the backup: every event still readable in it, row by row,
is salvaged into the restored store, and the ones that could not be read are named.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from dataclasses import dataclass
from pathlib import Path

from companion.store.acked import AckCheck
from companion.store.errors import StoreError
from companion.store.files import _fsync_file
from companion.store.inspection import _row_problem
from companion.store.log import EventStore

PROBE_GAP = 10_000                             # salvage looks this far past the last readable event, no further


@dataclass
class Salvage:
    """What could be read, row by row, of a damaged database's events above some seq."""
    rows: dict[int, tuple] = None  # type: ignore[assignment]     # seq -> (seq, game_id, kind, body, source, at)
    unreadable: dict[int, str] = None  # type: ignore[assignment]  # seq -> why it could not be read
    hints: dict[int, int] = None  # type: ignore[assignment]       # seq -> game id, from the file's index
    upper: int = 0                                                 # the highest seq the file claims to hold

    def __post_init__(self):
        self.rows = dict(self.rows or {})
        self.unreadable = dict(self.unreadable or {})
        self.hints = dict(self.hints or {})

    def merge(self, other: "Salvage") -> None:
        for q, row in other.rows.items():
            self.rows.setdefault(q, row)
            self.unreadable.pop(q, None)
        for q, why in other.unreadable.items():
            if q not in self.rows:
                self.unreadable.setdefault(q, why)
        for q, g in other.hints.items():
            self.hints.setdefault(q, g)
        self.upper = max(self.upper, other.upper)


_COLUMNS = "seq, game_id, kind, body, source, at"


def salvage_events(path: Path, above: int, upper_hint: int = 0) -> Salvage:
    """Read every event after `above` that can still be read from the database at `path` (a copy: it may change).

    A damaged page makes a query fail where it lies, so the rows are read in order until a read fails, then
    looked up one seq at a time past the damage, resuming the scan after each one found. Text is read as
    bytes, so that one bad byte spoils one row, not the scan."""
    got = Salvage()
    try:
        con = sqlite3.connect(f"file:{path}?mode=rw", uri=True, isolation_level=None)
    except sqlite3.Error:
        return got
    con.text_factory = bytes
    try:
        try:
            # writable_schema: read a file shorter than its header says (SQLite refuses it otherwise); nothing here
            # writes. cell_size_check: a mangled cell is an error, not a row of garbage
            con.execute("PRAGMA writable_schema = ON")
            con.execute("PRAGMA cell_size_check = ON")
        except sqlite3.Error:
            pass
        uppers = [upper_hint]
        for sql in ("SELECT MAX(seq) FROM events", "SELECT seq FROM sqlite_sequence WHERE name = 'events'",
                    "SELECT MAX(seq) FROM events INDEXED BY events_game"):
            try:
                row = con.execute(sql).fetchone()
                if row and isinstance(row[0], int):
                    uppers.append(row[0])
            except sqlite3.Error:
                pass
        try:
            for game_id, seq in con.execute("SELECT game_id, seq FROM events INDEXED BY events_game "
                                            "WHERE game_id >= 0 AND seq > ?", (above,)):
                if isinstance(game_id, int) and isinstance(seq, int):
                    got.hints[seq] = game_id
        except sqlite3.Error:
            pass                        # the index is damaged too: what it gave so far stands
        claimed = max(uppers + [max(got.hints, default=0)])
        after = above
        while True:
            try:
                for row in con.execute(f"SELECT {_COLUMNS} FROM events WHERE seq > ? ORDER BY seq", (after,)):
                    if not isinstance(row[0], int) or row[0] <= after:
                        raise sqlite3.DatabaseError("rows out of order")
                    got.rows[row[0]] = row
                    after = row[0]
                break
            except sqlite3.Error:
                pass
            q = after + 1
            found = False
            # a damaged page may claim any seq: beyond the record, look only so far past the last row read
            while q <= max(upper_hint, min(claimed, after + PROBE_GAP)) and not found:
                try:
                    row = con.execute(f"SELECT {_COLUMNS} FROM events WHERE seq = ?", (q,)).fetchone()
                except sqlite3.Error:
                    got.unreadable[q] = "unreadable in the damaged file"
                else:
                    if row is not None:
                        got.rows[q] = row
                        after, found = q, True
                q += 1
            if not found:
                break
        limit = max(upper_hint, max(got.rows, default=above)) + PROBE_GAP
        got.hints = {q: g for q, g in got.hints.items() if q <= limit}
        got.upper = max([upper_hint, max(got.rows, default=0)] + [u for u in uppers + list(got.hints) if u <= limit])
    finally:
        con.close()
    return got


def _rebuild(path: Path, base: Path | None, got: Salvage, floor: int) -> tuple[Path, list[int], AckCheck]:
    """A new database beside `path`: a copy of `base` (or empty) plus the salvaged events after `floor`.

    (its temp path, the seqs added, what EventStore must check against the record). Each salvaged row is
    checked as the inspection checks rows; one that fails is left out and named."""
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".restore", dir=path.parent)
    os.close(fd)
    tmp = Path(name)
    added: list[int] = []
    reasons = dict(got.unreadable)
    try:
        if base is not None:
            shutil.copyfile(base, tmp)
        else:
            tmp.unlink()
        built = EventStore(tmp, record_acks=False)
        try:
            db = built._db
            games = {int(r[0]) for r in db.execute("SELECT seq FROM events WHERE kind = 'new_game'")}
            db.execute("BEGIN IMMEDIATE")
            for q in sorted(got.rows):
                if q <= floor:
                    continue
                row = _decoded(got.rows[q])
                problem = "text that is not UTF-8" if row is None else _row_problem(*row, games)
                if problem:
                    reasons[q] = problem
                    continue
                db.execute(f"INSERT INTO events ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)", row)
                if row[2] == "new_game":
                    games.add(q)
                added.append(q)
            db.execute("COMMIT")
        finally:
            built.close()
        _fsync_file(tmp)
    except (sqlite3.Error, OSError, StoreError) as exc:
        tmp.unlink(missing_ok=True)
        raise StoreError(f"{path}: could not rebuild the event store from its backup and what was salvaged: "
                         f"{exc}") from exc
    hints = dict(got.hints)
    for q, row in got.rows.items():
        if q not in hints and isinstance(row[1], int):
            hints[q] = row[1]
    salvaged_games = [q for q in added if got.rows[q][2] == b"new_game"]
    return tmp, added, AckCheck(floor=floor, ceiling=got.upper, hints=hints, reasons=reasons, games=salvaged_games)


def _decoded(row: tuple) -> tuple | None:
    try:
        return tuple(v.decode("utf-8") if isinstance(v, bytes) else v for v in row)
    except UnicodeDecodeError:
        return None
