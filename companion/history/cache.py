"""The plays' cached summaries: a file beside the event store, rebuilt from the events whenever it disagrees.

One row per game: the game's last seq and number of events when it was summarised, and the summary. The event
store never reuses a seq and never changes an event, so a game whose last seq and count are unchanged has the
same events and its summary holds; any other row is summarised again from the events. A `fingerprint` (the
summary code's version, the package's version, the balance model) is kept with the rows: when it changes
every row is dropped. The cache is only ever a copy: deleting the file loses nothing, and a file that cannot
be read or written is set aside and the history kept in memory (said in the log).
"""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path

log = logging.getLogger("companion.history")


class SummaryCache:
    def __init__(self, path: Path | None, fingerprint: str):
        self.path = path
        self.fingerprint = fingerprint
        self.problem: str | None = None
        self._db: sqlite3.Connection | None = None
        try:
            self._open()
        except (sqlite3.Error, OSError) as exc:
            self._give_up(f"cannot open {path}: {exc}")

    def _open(self) -> None:
        self._db = sqlite3.connect(str(self.path) if self.path else ":memory:", check_same_thread=False,
                                   isolation_level=None)
        db = self._db
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")   # a copy: losing its last write costs a re-fold, nothing more
        db.execute("CREATE TABLE IF NOT EXISTS plays (game_id INTEGER PRIMARY KEY, last_seq INTEGER NOT NULL, "
                   "events INTEGER NOT NULL, summary TEXT NOT NULL)")
        db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        row = db.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()
        if row is None or row[0] != self.fingerprint:
            db.execute("BEGIN IMMEDIATE")
            db.execute("DELETE FROM plays")
            db.execute("INSERT OR REPLACE INTO meta VALUES ('fingerprint', ?)", (self.fingerprint,))
            db.execute("COMMIT")

    def _give_up(self, why: str) -> None:
        """Carry on with an empty cache in memory (the plays are folded again: slower, never wrong)."""
        self.problem = why
        log.warning("the plays' summary cache is not used: %s", why)
        if self._db is not None:
            try:
                self._db.close()
            except sqlite3.Error:
                pass
        if self.path is not None:
            try:
                if self.path.exists():
                    self.path.replace(self.path.with_name(self.path.name + ".unreadable"))
            except OSError:
                pass
        self.path = None
        self._open()

    def load(self) -> dict[int, tuple[int, int, dict]]:
        """{game id: (last seq, events, summary)} of every row that can be read."""
        try:
            rows = self._db.execute("SELECT game_id, last_seq, events, summary FROM plays").fetchall()
        except sqlite3.Error as exc:
            self._give_up(f"cannot read {self.path}: {exc}")
            return {}
        out = {}
        for game_id, last, n, text in rows:
            try:
                summary = json.loads(text)
            except ValueError:
                continue           # summarised again from the events
            if isinstance(summary, dict):
                out[int(game_id)] = (int(last), int(n), summary)
        return out

    def save(self, rows: dict[int, tuple[int, int, dict]], drop: list[int] = ()) -> None:
        if not rows and not drop:
            return
        try:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.executemany("INSERT OR REPLACE INTO plays VALUES (?, ?, ?, ?)",
                                 [(g, last, n, json.dumps(s, separators=(",", ":"), allow_nan=False))
                                  for g, (last, n, s) in rows.items()])
            if drop:
                self._db.executemany("DELETE FROM plays WHERE game_id = ?", [(g,) for g in drop])
            self._db.execute("COMMIT")
        except (sqlite3.Error, ValueError) as exc:
            try:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            self._give_up(f"cannot write {self.path}: {exc}")

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
