"""The append-only event log (SQLite): EventStore and its events, one transaction per append.

One row per event, one transaction per append, WAL with synchronous=FULL: once
`append` returns, the event survives a power cut. Nothing is ever updated or
deleted: undo is itself an event. A game is identified by the sequence number
of its `new_game` event. A `people` event (a rename or merge of players, or its
undoing; the history's) belongs to no game: its game id is 0. Each event is
written with a clock stamp (`clock`: boot, monotonic time, whether the wall clock
was synced; foundation/wall_clock.py) so the history can tell when it happened.

After each commit the log writes the acknowledgement record (`acked`), and before a new game it backs
itself up (`backups`). Checking a file that may be damaged before it is opened is `opening`'s work.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import urllib.parse
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from companion.foundation import wall_clock
from companion.store.acked import (ACK_GAMES, AckCheck, AckRecord, AckRecordError, LostRun, ack_path, describe_runs,
                                   lost_runs)
from companion.store.backups import DEFAULT_KEEP_BACKUPS, Backup, list_backups, write_backup
from companion.store.errors import StoreError

log = logging.getLogger("companion.store")    # one logger for the whole store: its name is in every line logged

SCHEMA_VERSION = 1
KINDS = ("new_game", "action", "undo", "people")
PEOPLE_GAME = 0          # the game id of a `people` event (a rename or a merge): it belongs to no game


@dataclass(frozen=True)
class Event:
    seq: int
    game_id: int
    kind: str          # "new_game" | "action" | "undo" | "people" (a rename or merge of players, game id 0)
    body: dict
    source: str        # who caused it: "page", "button", "sensor", "demo", …
    at: str            # wall-clock time for people reading the log; never used for ordering
    clock: dict | None = None   # the stamp it was written with (foundation.wall_clock); None: not known

    def to_dict(self) -> dict:
        return {"seq": self.seq, "game_id": self.game_id, "kind": self.kind, "body": self.body,
                "source": self.source, "at": self.at}

    def outline(self) -> dict:
        """What happened and when, never what was sent: shown where the body may hold a secret (hidden cash)."""
        return {"seq": self.seq, "game_id": self.game_id, "kind": self.kind, "at": self.at}


class EventStore:
    """The log itself. `backups_dir` (optional) turns on a backup before every new game.

    `read_only=True` opens an existing store for reading only (SQLite's mode=ro; `companion plays`): nothing is
    created, added, reconciled or backed up, the file is never written, and an append raises StoreError. It may
    be read while the daemon has it open (WAL lets a reader see every committed event)."""

    def __init__(self, path: str | Path, *, backups_dir: str | Path | None = None,
                 keep_backups: int = DEFAULT_KEEP_BACKUPS, record_acks: bool | None = None,
                 check: "AckCheck | None" = None, stamp=None, read_only: bool = False):
        self.path = Path(path)
        self.read_only = read_only
        self._stamp = stamp or wall_clock.stamp     # each event's clock stamp (tests give their own)
        self.backups_dir = Path(backups_dir) if backups_dir is not None else None
        self.keep_backups = max(1, keep_backups)
        self.backup_problem: str | None = None   # the last failed automatic backup, for the page
        self.ack_problem: str | None = None      # the last failed write of the acknowledgement record, for the page
        self.lost: list[LostRun] = []            # acknowledged events found missing when the store was opened
        self.lost_notice: str | None = None
        self._lock = threading.Lock()
        self._closed = False
        self._db: sqlite3.Connection | None = None
        self._acks: AckRecord | None = None
        if read_only:
            self.backups_dir = None
            self._open_read_only()
            return
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
            columns = {r[1] for r in self._db.execute("PRAGMA table_info(events)")}
            if "clock" not in columns:
                # added for the plays' times (issue 33); events written before it have none, and say so
                self._db.execute("ALTER TABLE events ADD COLUMN clock TEXT")
            self._db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            self._db.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
            if record_acks is None:
                record_acks = str(path) != ":memory:"
            if record_acks:
                self._acks = AckRecord(ack_path(self.path))
                try:
                    self._reconcile(check or AckCheck())
                except OSError as exc:
                    # the evidence cannot be kept: said on the page, but the table still plays
                    self.ack_problem = f"{self._acks.path}: {exc}"
                    log.error("cannot keep the record of acknowledged events: %s", self.ack_problem)
                    self._acks.close()
                    self._acks = None
        except (sqlite3.Error, OSError) as exc:
            if self._db is not None:
                self._db.close()
            if self._acks is not None:
                self._acks.close()
            raise StoreError(f"{self.path}: cannot open the event store: {exc}") from exc

    def _open_read_only(self) -> None:
        if not self.path.is_file():
            raise StoreError(f"{self.path}: no event store there")
        uri = "file:" + urllib.parse.quote(str(self.path.resolve())) + "?mode=ro"
        try:
            self._db = sqlite3.connect(uri, uri=True, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA busy_timeout=5000")
            tables = {r[0] for r in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if "events" not in tables:
                raise StoreError(f"{self.path}: not an event store (it has no events table)")
            if "meta" in tables:
                row = self._db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
                if row is not None and str(row[0]).isdigit() and int(row[0]) > SCHEMA_VERSION:
                    raise StoreError(f"{self.path}: written by a newer version of the companion (store schema "
                                     f"{row[0]}; this version knows {SCHEMA_VERSION})")
            columns = {r[1] for r in self._db.execute("PRAGMA table_info(events)")}
            if "clock" not in columns:
                # a store from before the clock stamps, which only a writer may add the column to: a view in this
                # connection's own temporary schema (searched first) gives its events an unknown stamp
                self._db.execute("CREATE TEMP VIEW events AS SELECT seq, game_id, kind, body, source, at, "
                                 "NULL AS clock FROM main.events")
        except StoreError:
            self._db.close()
            raise
        except sqlite3.Error as exc:
            if self._db is not None:
                self._db.close()
            raise StoreError(f"{self.path}: cannot open the event store to read it: {exc}") from exc

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                self._db.close()
                if self._acks is not None:
                    self._acks.close()

    def append(self, game_id: int | None, kind: str, body: dict[str, Any], source: str) -> Event:
        """Write one event durably and return it; game_id None starts a new game (its id is its seq)."""
        return self._append(game_id, [(kind, body)], source)[0]

    def append_game(self, new_game: dict[str, Any], steps: list[tuple[str, dict[str, Any]]],
                    source: str) -> list[Event]:
        """Write a new game and its later events (kind, body) in one transaction: all of them durably, or none."""
        return self._append(None, [("new_game", new_game), *steps], source)

    def append_people(self, body: dict[str, Any], source: str) -> Event:
        """Write one `people` event (a rename, a merge, or the undoing of one): it belongs to no game."""
        return self._append(PEOPLE_GAME, [("people", body)], source)[0]

    def _append(self, game_id: int | None, entries: list[tuple[str, dict[str, Any]]], source: str) -> list[Event]:
        if self.read_only:
            raise StoreError(f"{self.path}: opened read-only; nothing can be written")
        # allow_nan=False: NaN would be stored as a bare word no page can parse (callers refuse it first, by name)
        texts = [(kind, body, json.dumps(body, separators=(",", ":"), sort_keys=True, allow_nan=False))
                 for kind, body in entries]
        at = datetime.now(timezone.utc).isoformat(timespec="seconds")
        clock = self._stamp()
        clock_text = json.dumps(clock, separators=(",", ":"), sort_keys=True, allow_nan=False)
        events = []
        with self._lock:
            if texts[0][0] == "new_game" and self.backups_dir is not None:
                self._automatic_backup()
            try:
                self._db.execute("BEGIN IMMEDIATE")
                for kind, body, text in texts:
                    cur = self._db.execute(
                        "INSERT INTO events (game_id, kind, body, source, at, clock) VALUES (?, ?, ?, ?, ?, ?)",
                        (game_id if game_id is not None else 0, kind, text, source, at, clock_text),
                    )
                    seq = cur.lastrowid
                    if game_id is None:
                        game_id = seq
                        self._db.execute("UPDATE events SET game_id = ? WHERE seq = ?", (seq, seq))
                    events.append(Event(seq, game_id, kind, body, source, at, clock))
                self._db.execute("COMMIT")
            except sqlite3.Error as exc:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                what = "the event" if len(texts) == 1 else f"the {len(texts)} events (none was written)"
                raise StoreError(f"{self.path}: could not record {what}: {exc}") from exc
            if self._acks is not None:
                # after the commit, before the caller acknowledges: the record never claims an event SQLite
                # did not take, and holds every event a client was told about
                try:
                    self._acks.write(events[-1].seq, [e.seq for e in events if e.kind == "new_game"])
                    self.ack_problem = None
                except OSError as exc:
                    # the event itself is durable; only the evidence of a later loss is missing
                    if self.ack_problem is None:
                        log.warning("could not record the acknowledged event in %s: %s", self._acks.path, exc)
                    self.ack_problem = f"{self._acks.path}: {exc}"
        return events

    def _rows(self, sql: str, args: tuple) -> list[Event]:
        with self._lock:
            try:
                rows = self._db.execute(sql, args).fetchall()
            except sqlite3.Error as exc:
                raise StoreError(f"{self.path}: cannot read events: {exc}") from exc
        try:
            return [Event(r[0], r[1], r[2], json.loads(r[3]), r[4], r[5], _clock(r[6]) if len(r) > 6 else None)
                    for r in rows]
        except ValueError as exc:
            raise StoreError(f"{self.path}: an event's body is not valid JSON: {exc}") from exc

    def latest_game(self) -> int | None:
        rows = self._rows("SELECT seq, game_id, kind, body, source, at FROM events WHERE kind = 'new_game' "
                          "ORDER BY seq DESC LIMIT 1", ())
        return rows[0].game_id if rows else None

    def game_events(self, game_id: int, after: int = 0) -> list[Event]:
        return self._rows("SELECT seq, game_id, kind, body, source, at FROM events WHERE game_id = ? AND seq > ? "
                          "ORDER BY seq", (game_id, after))

    def game_events_stamped(self, game_id: int) -> list[Event]:
        """A game's events with their clock stamps (for the plays' times)."""
        return self._rows("SELECT seq, game_id, kind, body, source, at, clock FROM events WHERE game_id = ? "
                          "ORDER BY seq", (game_id,))

    def game_spans(self) -> list[tuple[int, int, int]]:
        """(game id, its last seq, its number of events) for every game, oldest first: what a cached summary of a
        game is checked against (seqs are never reused, so a game whose span is unchanged has the same events)."""
        with self._lock:
            try:
                rows = self._db.execute("SELECT game_id, MAX(seq), COUNT(*) FROM events WHERE game_id > 0 "
                                        "GROUP BY game_id ORDER BY game_id").fetchall()
            except sqlite3.Error as exc:
                raise StoreError(f"{self.path}: cannot read events: {exc}") from exc
        return [(int(g), int(last), int(n)) for g, last, n in rows]

    def changed_since(self, seq: int) -> tuple[list[tuple[int, int, int]], bool]:
        """What changed after `seq`: the spans (as game_spans) of the games with an event after it, and whether a
        people event came after it."""
        with self._lock:
            try:
                rows = self._db.execute(
                    "SELECT game_id, MAX(seq), COUNT(*) FROM events WHERE game_id IN "
                    "(SELECT DISTINCT game_id FROM events WHERE seq > ? AND game_id > 0) GROUP BY game_id", (seq,)
                ).fetchall()
                people = self._db.execute("SELECT 1 FROM events WHERE seq > ? AND kind = 'people' LIMIT 1",
                                          (seq,)).fetchone()
            except sqlite3.Error as exc:
                raise StoreError(f"{self.path}: cannot read events: {exc}") from exc
        return [(int(g), int(last), int(n)) for g, last, n in rows], people is not None

    def resumed_by(self, game_id: int, after: int = 0) -> int | None:
        """The game that resumed `game_id` (its new_game names it as `resumes`), if any; only events after
        `after` are looked at (a scan of the whole log takes tens of ms on a big store: do that first, outside
        any lock, then look again at what came since)."""
        with self._lock:
            try:
                row = self._db.execute("SELECT seq FROM events WHERE seq > ? AND kind = 'new_game' AND "
                                       "instr(body, '\"resumes\":') AND json_extract(body, '$.resumes') = ? "
                                       "ORDER BY seq LIMIT 1", (after, game_id)).fetchone()
            except sqlite3.Error as exc:
                raise StoreError(f"{self.path}: cannot read events: {exc}") from exc
        return int(row[0]) if row else None

    def people_events(self) -> list[Event]:
        """Every `people` event (renames and merges of players), oldest first."""
        return self._rows("SELECT seq, game_id, kind, body, source, at, clock FROM events WHERE kind = 'people' "
                          "ORDER BY seq", ())

    def events_after(self, seq: int, limit: int = 1000) -> list[Event]:
        return self._rows("SELECT seq, game_id, kind, body, source, at FROM events WHERE seq > ? ORDER BY seq LIMIT ?",
                          (seq, limit))

    def last_seq(self) -> int:
        with self._lock:
            try:
                row = self._db.execute("SELECT COALESCE(MAX(seq), 0) FROM events").fetchone()
            except sqlite3.Error as exc:
                raise StoreError(f"{self.path}: cannot read events: {exc}") from exc
        return int(row[0])

    def games(self, limit: int = 50) -> list[Event]:
        return self._rows("SELECT seq, game_id, kind, body, source, at FROM events WHERE kind = 'new_game' "
                          "ORDER BY seq DESC LIMIT ?", (limit,))

    def integrity_check(self) -> str:
        with self._lock:
            try:
                return str(self._db.execute("PRAGMA integrity_check").fetchone()[0])
            except sqlite3.Error as exc:
                raise StoreError(f"{self.path}: integrity check could not run: {exc}") from exc

    # --- the acknowledgement record
    def _reconcile(self, check: "AckCheck") -> None:
        """Compare the store with the last acknowledged event recorded outside it; name what is missing."""
        assert self._acks is not None
        db = self._db
        last = int(db.execute("SELECT COALESCE(MAX(seq), 0) FROM events").fetchone()[0])
        store_games = [int(r[0]) for r in db.execute(
            "SELECT seq FROM events WHERE kind = 'new_game' ORDER BY seq DESC LIMIT ?", (ACK_GAMES,))]
        try:
            acked = self._acks.load()
        except AckRecordError as exc:
            acked = None
            self.lost_notice = (f"The record of acknowledged events, {self._acks.path}, could not be read ({exc}), so "
                                f"the companion cannot tell whether any were lost; it starts a new record.")
            log.error("%s", self.lost_notice)
        acked_seq = acked.seq if acked else 0
        ceiling = max(acked_seq, check.ceiling)
        floor = last if check.floor is None else check.floor
        if ceiling > floor:
            have = {int(r[0]) for r in db.execute("SELECT seq FROM events WHERE seq > ? AND seq <= ?",
                                                  (floor, ceiling))}
            missing = [q for q in range(floor + 1, ceiling + 1) if q not in have]
            if missing:
                games = set(store_games) | set(check.games) | (set(acked.games) if acked else set())
                games |= {int(r[0]) for r in db.execute("SELECT seq FROM events WHERE kind = 'new_game' AND seq > ?",
                                                        (floor,))}
                reliable_from = min(acked.games) if acked and acked.games else None
                self.lost = lost_runs(missing, sorted(games), reliable_from, check.hints, check.reasons)
        seq_floor = int((db.execute("SELECT seq FROM sqlite_sequence WHERE name = 'events'").fetchone() or (0,))[0])
        if ceiling > max(last, seq_floor):
            # a lost seq is never handed out again: a tablet that saw it would take the new event for one it has
            db.execute("BEGIN IMMEDIATE")
            db.execute("DELETE FROM sqlite_sequence WHERE name = 'events'")
            db.execute("INSERT INTO sqlite_sequence (name, seq) VALUES ('events', ?)", (ceiling,))
            db.execute("COMMIT")
        if self.lost:
            total = sum(r.last - r.first + 1 for r in self.lost)
            self.lost_notice = (f"Lost: {total} recorded event(s) are not in the event store: "
                                f"{describe_runs(self.lost)}. The last event recorded was {ceiling} "
                                f"(as {self._acks.path.name} says); new events are numbered from {ceiling + 1}.")
            log.error("%s", self.lost_notice)
        # the record restarts from what the store holds now, so the same loss is told once
        self._acks.reset(last, sorted(store_games))

    # --- backups
    def backup(self) -> Path | None:
        """Copy the whole store into backups_dir now (e.g. when a game ends); the path of the backup.

        None when the store has no events yet. A backup already holding the newest event is reused.
        StoreError if the copy cannot be written.
        """
        if self.backups_dir is None:
            raise StoreError(f"{self.path}: no backups directory was given to this store")
        with self._lock:
            return self._backup_locked()

    def backups(self) -> list[Backup]:
        """The backups of this store, newest first."""
        if self.backups_dir is None:
            return []
        return list_backups(self.backups_dir, self.path.stem)

    def _automatic_backup(self) -> None:
        try:
            self._backup_locked()
            self.backup_problem = None
        except StoreError as exc:
            # a failed backup must not stop the new game; it is logged and shown (backup_problem)
            self.backup_problem = str(exc)
            log.warning("backup before the new game failed: %s", exc)

    def _backup_locked(self) -> Path | None:
        assert self.backups_dir is not None
        return write_backup(self._db, self.path, self.backups_dir, self.keep_backups)


def _clock(text: str | None) -> dict | None:
    if not text:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None         # a stamp that cannot be read is an unknown time, never a broken store
    return value if isinstance(value, dict) else None
