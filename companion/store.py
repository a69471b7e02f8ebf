"""The append-only event log (SQLite).

One row per event, one transaction per append, WAL with synchronous=FULL: once
`append` returns, the event survives a power cut. Nothing is ever updated or
deleted: undo is itself an event. A game is identified by the sequence number
of its `new_game` event.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 1


class StoreError(RuntimeError):
    """The database cannot be opened or written; the message says which file and why."""


@dataclass(frozen=True)
class Event:
    seq: int
    game_id: int
    kind: str          # "new_game" | "action" | "undo"
    body: dict
    source: str        # who caused it: "page", "button", "sensor", "demo", …
    at: str            # wall-clock time for people reading the log; never used for ordering

    def to_dict(self) -> dict:
        return {"seq": self.seq, "game_id": self.game_id, "kind": self.kind, "body": self.body,
                "source": self.source, "at": self.at}


class EventStore:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute("PRAGMA busy_timeout=5000")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS events ("
                " seq INTEGER PRIMARY KEY AUTOINCREMENT,"
                " game_id INTEGER NOT NULL,"
                " kind TEXT NOT NULL,"
                " body TEXT NOT NULL,"
                " source TEXT NOT NULL,"
                " at TEXT NOT NULL)"
            )
            self._db.execute("CREATE INDEX IF NOT EXISTS events_game ON events(game_id, seq)")
            self._db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            self._db.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: cannot open the event store: {exc}") from exc

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def append(self, game_id: int | None, kind: str, body: dict[str, Any], source: str) -> Event:
        """Write one event durably and return it; game_id None starts a new game (its id is its seq)."""
        text = json.dumps(body, separators=(",", ":"), sort_keys=True)
        at = datetime.now(timezone.utc).isoformat(timespec="seconds")
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                cur = self._db.execute(
                    "INSERT INTO events (game_id, kind, body, source, at) VALUES (?, ?, ?, ?, ?)",
                    (game_id if game_id is not None else 0, kind, text, source, at),
                )
                seq = cur.lastrowid
                if game_id is None:
                    game_id = seq
                    self._db.execute("UPDATE events SET game_id = ? WHERE seq = ?", (seq, seq))
                self._db.execute("COMMIT")
            except sqlite3.Error as exc:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise StoreError(f"{self.path}: could not record the event: {exc}") from exc
        return Event(seq, game_id, kind, body, source, at)

    def _rows(self, sql: str, args: tuple) -> list[Event]:
        with self._lock:
            try:
                rows = self._db.execute(sql, args).fetchall()
            except sqlite3.Error as exc:
                raise StoreError(f"{self.path}: cannot read events: {exc}") from exc
        return [Event(r[0], r[1], r[2], json.loads(r[3]), r[4], r[5]) for r in rows]

    def latest_game(self) -> int | None:
        rows = self._rows("SELECT seq, game_id, kind, body, source, at FROM events WHERE kind = 'new_game' "
                          "ORDER BY seq DESC LIMIT 1", ())
        return rows[0].game_id if rows else None

    def game_events(self, game_id: int, after: int = 0) -> list[Event]:
        return self._rows("SELECT seq, game_id, kind, body, source, at FROM events WHERE game_id = ? AND seq > ? "
                          "ORDER BY seq", (game_id, after))

    def events_after(self, seq: int, limit: int = 1000) -> list[Event]:
        return self._rows("SELECT seq, game_id, kind, body, source, at FROM events WHERE seq > ? ORDER BY seq LIMIT ?",
                          (seq, limit))

    def last_seq(self) -> int:
        with self._lock:
            row = self._db.execute("SELECT COALESCE(MAX(seq), 0) FROM events").fetchone()
        return int(row[0])

    def games(self, limit: int = 50) -> list[Event]:
        return self._rows("SELECT seq, game_id, kind, body, source, at FROM events WHERE kind = 'new_game' "
                          "ORDER BY seq DESC LIMIT ?", (limit,))

    def integrity_check(self) -> str:
        with self._lock:
            return str(self._db.execute("PRAGMA integrity_check").fetchone()[0])
