"""The plays' cached summaries: a file beside the event store, rebuilt from the events whenever it disagrees.

One row per game: the game's last seq and number of events when it was summarised, and the summary. The event
store never reuses a seq and never changes an event, so a game whose last seq and count are unchanged has the
same events and its summary holds; any other row is summarised again from the events. A `fingerprint` (the
summary code's version, the package's version, the balance model) is kept with the rows: when it changes
every row is dropped. The cache is only ever a copy: deleting the file loses nothing, and a file that cannot
be read or written is set aside and the history kept in memory (said in the log).

Opened `read_only` (by `companion plays`, beside a daemon that may be running), the file is only read: nothing
is created, saved, dropped or set aside, and rows kept under another fingerprint are not used.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import urllib.parse
from pathlib import Path

log = logging.getLogger("companion.history")


def beside(store_path: Path | str) -> Path | None:
    """Where the cache of the store at `store_path` lives: `<store>.plays.sqlite3` (None for a store in memory)."""
    path = Path(store_path)
    return None if str(store_path) == ":memory:" else path.with_name(path.stem + ".plays.sqlite3")


class SummaryCache:
    def __init__(self, path: Path | None, fingerprint: str, *, read_only: bool = False):
        self.path = path
        self.fingerprint = fingerprint
        self.read_only = read_only
        self.problem: str | None = None
        self._db: sqlite3.Connection | None = None
        self._usable = True
        # the history is built in a thread of its own while the daemon may be stopping: a connection closed under
        # a write in another thread crashed the process (make test, 2026-12-07: a segfault in `save` during `close`)
        self._lock = threading.RLock()
        self._closed = False
        if read_only:
            self._open_read_only()
            return
        try:
            self._open()
        except (sqlite3.Error, OSError) as exc:
            self._give_up(f"cannot open {path}: {exc}")

    def _open_read_only(self) -> None:
        if self.path is None or not self.path.is_file():
            self._usable = False
            return
        try:
            uri = "file:" + urllib.parse.quote(str(self.path.resolve())) + "?mode=ro"
            self._db = sqlite3.connect(uri, uri=True, check_same_thread=False, isolation_level=None)
            row = self._db.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()
            self._usable = row is not None and row[0] == self.fingerprint
        except sqlite3.Error as exc:
            self.problem = f"cannot read {self.path}: {exc}"
            self._usable = False

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
        """{game id: (last seq, events, summary)} of every row that can be read (none once closed)."""
        with self._lock:
            return self._load()

    def _load(self) -> dict[int, tuple[int, int, dict]]:
        if self._closed or self.read_only and not self._usable:
            return {}
        try:
            rows = self._db.execute("SELECT game_id, last_seq, events, summary FROM plays").fetchall()
        except sqlite3.Error as exc:
            if self.read_only:
                self.problem = f"cannot read {self.path}: {exc}"
                return {}
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
        """Keep `rows` and drop the games `drop`; nothing once closed (a build still running as the daemon stops)."""
        with self._lock:
            self._save(rows, drop)

    def _save(self, rows: dict[int, tuple[int, int, dict]], drop: list[int]) -> None:
        if self._closed or self.read_only or not rows and not drop:
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
        with self._lock:
            if not self._closed:
                self._closed = True
                if self._db is not None:
                    self._db.close()
