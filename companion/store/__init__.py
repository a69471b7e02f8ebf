"""The append-only event log (SQLite), its rolling backups, and recovery from a damaged file.

One row per event, one transaction per append, WAL with synchronous=FULL: once
`append` returns, the event survives a power cut. Nothing is ever updated or
deleted: undo is itself an event. A game is identified by the sequence number
of its `new_game` event.

`open_store(path)` is how the daemon opens the log. It checks the file first
(on copies, so nothing is touched while it looks) and never refuses to start
over a damaged file: a database that is truncated, garbage or fails SQLite's
integrity check is moved aside and the newest good backup is restored (or the
store starts empty); a write-ahead log that does not belong to the database
(a "stale WAL", which SQLite would otherwise replay silently over it) is moved
aside. It returns a notice saying what it did, for the page and the log.

Backups: before each new game the store copies itself (SQLite's online backup)
into `backups/` beside the database, so every finished game is in a backup;
the newest few are kept.

Evidence outside SQLite: SQLite silently drops WAL frames whose checksums fail
(a failing SD card), a WAL cut short, or a WAL deleted, and with them acknowledged
events. So after every commit the store also records the last acknowledged event
and the newest games' ids in `<name>.acked` (two checksummed 512-byte slots,
overwritten in turn and fdatasync'ed). At start-up every acknowledged event the
store no longer holds is named in the notice (game, events), and seq numbers
are never handed out twice. A damaged database is not simply replaced by the
backup: every event still readable in it, row by row, is salvaged into the
restored store, and the ones that could not be read are named.

Imports: foundation only.
"""

from __future__ import annotations

import errno
import fcntl
import json
import zlib
import logging
import os
import re
import shutil
import sqlite3
import tempfile
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from companion.foundation.atomic import fsync_dir

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1
KINDS = ("new_game", "action", "undo")
DEFAULT_KEEP_BACKUPS = 5
SIDE_FILES = ("-wal", "-shm", "-journal")     # SQLite's companions of a database file
SHM_DMS_BYTE = 128                             # every open connection holds a shared lock on this byte of -shm
ACK_SUFFIX = ".acked"                          # beside the database: the last acknowledged event, outside SQLite
ACK_SLOT = 512
ACK_GAMES = 16                                 # game ids kept in the record: enough to name the games of a lost WAL
PROBE_GAP = 10_000                             # salvage looks this far past the last readable event, no further


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


@dataclass(frozen=True)
class Backup:
    path: Path
    last_seq: int


class EventStore:
    """The log itself. `backups_dir` (optional) turns on a backup before every new game."""

    def __init__(self, path: str | Path, *, backups_dir: str | Path | None = None,
                 keep_backups: int = DEFAULT_KEEP_BACKUPS, record_acks: bool | None = None,
                 check: "AckCheck | None" = None):
        self.path = Path(path)
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

    def _append(self, game_id: int | None, entries: list[tuple[str, dict[str, Any]]], source: str) -> list[Event]:
        # allow_nan=False: NaN would be stored as a bare word no page can parse (callers refuse it first, by name)
        texts = [(kind, body, json.dumps(body, separators=(",", ":"), sort_keys=True, allow_nan=False))
                 for kind, body in entries]
        at = datetime.now(timezone.utc).isoformat(timespec="seconds")
        events = []
        with self._lock:
            if texts[0][0] == "new_game" and self.backups_dir is not None:
                self._automatic_backup()
            try:
                self._db.execute("BEGIN IMMEDIATE")
                for kind, body, text in texts:
                    cur = self._db.execute(
                        "INSERT INTO events (game_id, kind, body, source, at) VALUES (?, ?, ?, ?, ?)",
                        (game_id if game_id is not None else 0, kind, text, source, at),
                    )
                    seq = cur.lastrowid
                    if game_id is None:
                        game_id = seq
                        self._db.execute("UPDATE events SET game_id = ? WHERE seq = ?", (seq, seq))
                    events.append(Event(seq, game_id, kind, body, source, at))
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
            return [Event(r[0], r[1], r[2], json.loads(r[3]), r[4], r[5]) for r in rows]
        except ValueError as exc:
            raise StoreError(f"{self.path}: an event's body is not valid JSON: {exc}") from exc

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
        try:
            last = int(self._db.execute("SELECT COALESCE(MAX(seq), 0) FROM events").fetchone()[0])
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: cannot read the store to back it up: {exc}") from exc
        if last == 0:
            return None
        existing = list_backups(self.backups_dir, self.path.stem)
        if existing and existing[0].last_seq == last:
            return existing[0].path
        stamp = _stamp()
        target = self.backups_dir / f"{self.path.stem}-{last:010d}-{stamp}.sqlite3"
        n = 1
        while target.exists():       # two backups within a second (the wall clock may even have gone back)
            n += 1
            target = self.backups_dir / f"{self.path.stem}-{last:010d}-{stamp}-{n}.sqlite3"
        tmp: Path | None = None
        try:
            self.backups_dir.mkdir(parents=True, exist_ok=True)
            # a temp file left by a backup that a crash interrupted: this process alone writes here
            for stale in self.backups_dir.glob(f".{glob_escape(self.path.stem)}-*.sqlite3.*.tmp"):
                stale.unlink(missing_ok=True)
            fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=self.backups_dir)
            os.close(fd)
            tmp = Path(name)
            dst = sqlite3.connect(str(tmp), isolation_level=None)
            try:
                self._db.backup(dst)
                # a standalone file: no write-ahead log beside the backup
                dst.execute("PRAGMA journal_mode=DELETE")
            finally:
                dst.close()
            _fsync_file(tmp)
            os.replace(tmp, target)
            tmp = None
            fsync_dir(self.backups_dir)
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"{target}: could not write the backup: {exc}") from exc
        finally:
            if tmp is not None:
                tmp.unlink(missing_ok=True)
        for old in list_backups(self.backups_dir, self.path.stem)[self.keep_backups:]:
            old.path.unlink(missing_ok=True)
        log.info("backed up the event store to %s", target)
        return target


# --- the acknowledgement record

class AckRecordError(ValueError):
    """The acknowledgement record exists but neither of its slots can be read."""


@dataclass(frozen=True)
class AckState:
    seq: int                 # the last acknowledged event
    games: list[int]         # the newest games' ids (their first events), oldest first
    n: int                   # how many times the record was written: the newer slot wins


def ack_path(db: str | Path) -> Path:
    p = Path(db)
    return p.with_name(p.name + ACK_SUFFIX)


class AckRecord:
    """`<db>.acked`: two fixed slots, each a line `TCACK <n> <crc32> <json>` padded to 512 bytes.

    A write overwrites the older slot in place and fdatasyncs it: one small write of a block the file
    already has, no rename, no directory sync. A write cut short by a power cut spoils only that slot;
    the other still holds the previous event, which is all a client had been told about at that moment.
    """

    def __init__(self, path: Path):
        self.path = path
        self._fd: int | None = None
        self._n = 0
        self._seq = 0
        self._games: list[int] = []

    def load(self) -> AckState | None:
        """What the record says; None when there is none; AckRecordError when both slots are unreadable.

        Later writes number themselves on from it."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return None
        if not data:
            return None        # created but never written: a crash right after the file was made
        states = [st for st in (_parse_slot(data[i * ACK_SLOT:(i + 1) * ACK_SLOT]) for i in range(2)) if st]
        if not states:
            raise AckRecordError(f"{len(data)} bytes, neither slot valid")
        newest = max(states, key=lambda st: st.n)
        self._n = max(self._n, newest.n)
        return newest

    def reset(self, seq: int, games: list[int]) -> None:
        """Start the record over from what the store holds (both slots, synced, with the directory)."""
        created = not self.path.exists()
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        self._seq, self._games = seq, list(games)[-ACK_GAMES:]
        for _ in range(2):
            self._put()
        if created:
            fsync_dir(self.path.parent)

    def write(self, seq: int, new_games: list[int]) -> None:
        if self._fd is None:
            raise OSError(errno.EBADF, "the record is not open")
        self._seq = seq
        if new_games:
            self._games = (self._games + new_games)[-ACK_GAMES:]
        self._put()

    def _put(self) -> None:
        self._n += 1
        body = json.dumps({"seq": self._seq, "games": self._games}, separators=(",", ":"))
        text = f"{self._n} {body}"
        line = f"TCACK {zlib.crc32(text.encode()):08x} {text}".encode()
        if len(line) >= ACK_SLOT:
            raise OSError(errno.EOVERFLOW, "the acknowledgement record outgrew its slot")
        os.pwrite(self._fd, line.ljust(ACK_SLOT - 1) + b"\n", (self._n % 2) * ACK_SLOT)
        os.fdatasync(self._fd)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _parse_slot(raw: bytes) -> AckState | None:
    try:
        magic, crc, text = raw.rstrip(b" \n").decode("ascii").split(" ", 2)
        if magic != "TCACK" or int(crc, 16) != zlib.crc32(text.encode()):
            return None
        n, body = text.split(" ", 1)
        data = json.loads(body)
        seq, games = data["seq"], data["games"]
        if not isinstance(seq, int) or not all(isinstance(g, int) for g in games):
            return None
        return AckState(seq, [int(g) for g in games], int(n))
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        return None


@dataclass(frozen=True)
class LostRun:
    """Consecutive missing events of one game (game None: which game is not known)."""
    game: int | None
    first: int
    last: int
    why: str | None = None


@dataclass
class AckCheck:
    """What open_store knows beyond the record when it opens a rebuilt store.

    floor: events up to it are known to be complete (a restored backup); None: the store's last event.
    ceiling: the highest event the damaged file claimed; hints: seq -> game read from its index;
    reasons: seq -> why the event could not be salvaged; games: game ids seen in the damaged file."""
    floor: int | None = None
    ceiling: int = 0
    hints: dict[int, int] = None  # type: ignore[assignment]
    reasons: dict[int, str] = None  # type: ignore[assignment]
    games: list[int] = None  # type: ignore[assignment]

    def __post_init__(self):
        self.hints = dict(self.hints or {})
        self.reasons = dict(self.reasons or {})
        self.games = list(self.games or [])


def lost_runs(missing: list[int], games: list[int], reliable_from: int | None, hints: dict[int, int],
              reasons: dict[int, str]) -> list[LostRun]:
    """Group missing seqs into runs per game: an event belongs to the newest game started at or before it.

    That is certain from the oldest game the record lists on (it lists every game since); before it only
    the damaged file's index (hints) can tell."""
    import bisect

    def game_of(q: int) -> int | None:
        if q in hints:
            return hints[q]
        i = bisect.bisect_right(games, q)
        g = games[i - 1] if i else None
        if g is None or reliable_from is None or g < reliable_from:
            return None
        return g

    runs: list[LostRun] = []
    for q in missing:
        g, why = game_of(q), reasons.get(q)
        if runs and runs[-1].last == q - 1 and runs[-1].game == g and runs[-1].why == why:
            runs[-1] = LostRun(g, runs[-1].first, q, why)
        else:
            runs.append(LostRun(g, q, q, why))
    return runs


def describe_runs(runs: list[LostRun], limit: int = 12) -> str:
    """`game 398: events 412–437; game ?: event 3 (its body is not valid JSON)` (stable: tests and benches parse it)."""
    parts = []
    for r in runs[:limit]:
        span = f"event {r.first}" if r.first == r.last else f"events {r.first}–{r.last}"
        whole = " (from the game's first event)" if r.game == r.first else ""
        why = f" ({r.why})" if r.why else ""
        parts.append(f"game {r.game if r.game is not None else '?'}: {span}{whole}{why}")
    if len(runs) > limit:
        parts.append(f"and {len(runs) - limit} more run(s)")
    return "; ".join(parts)


_BACKUP_NAME = re.compile(r"-(\d{10})-(\d{8}T\d{6}Z(?:-\d+)?)\.sqlite3$")


def list_backups(backups_dir: str | Path, stem: str) -> list[Backup]:
    """Backups of the database named `stem` (e.g. "companion") in backups_dir, newest first."""
    d = Path(backups_dir)
    if not d.is_dir():
        return []
    found = []
    for p in d.glob(f"{glob_escape(stem)}-*.sqlite3"):
        m = _BACKUP_NAME.search(p.name)
        if m and p.name[:m.start()] == stem:
            found.append((int(m.group(1)), m.group(2), p))
    found.sort(reverse=True)
    return [Backup(p, seq) for seq, _, p in found]


def glob_escape(text: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", text)


# --- opening with recovery

@dataclass
class Inspection:
    """What a copy of a database file holds."""
    ok: bool
    problem: str | None = None
    events: int = 0
    last_seq: int = 0
    games: int = 0
    schema: int = SCHEMA_VERSION


def open_store(path: str | Path, backups_dir: str | Path | None = None, *,
               keep_backups: int = DEFAULT_KEEP_BACKUPS) -> tuple[EventStore, str | None]:
    """Open the event log at `path`, recovering from damage; (store, notice or None).

    Never refuses a damaged file: it is moved aside (renamed `<name>.damaged-<UTC time>`, with its
    -wal/-shm beside it) and the newest good backup from `backups_dir` (default: `backups/` beside the
    database) is restored, or the store starts empty; every event still readable in the damaged file
    after that backup is salvaged into it. Acknowledged events that are gone (compared with the record
    beside the database, `<name>.acked`) are named. The notice says what happened, in words for the
    page; it is also logged as an error. StoreError only when the file cannot be used at all: another
    process has it open, it was written by a newer version, or the directory is not writable.

    Call it before anything else in this process opens the same database.
    """
    path = Path(path)
    backups = Path(backups_dir) if backups_dir is not None else path.parent / "backups"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(f"{path.parent}: cannot create the event store's directory: {exc}") from exc
    for stale in path.parent.glob(f".{glob_escape(path.name)}.*.restore*"):
        stale.unlink(missing_ok=True)        # a restore that a crash interrupted; the database was not replaced
    notice, check = _recover(path, backups)
    if notice:
        log.error("%s", notice)
    store = EventStore(path, backups_dir=backups, keep_backups=keep_backups, check=check)
    said = " ".join(n for n in (notice, store.lost_notice) if n)
    return store, said or None


def _peek_acked(path: Path) -> AckState | None:
    try:
        return AckRecord(ack_path(path)).load()
    except (AckRecordError, OSError):
        return None      # EventStore says so when it opens the record


def _recover(path: Path, backups: Path) -> tuple[str | None, AckCheck | None]:
    wal = _side(path, "-wal")
    if not path.exists():
        strays = [s for s in SIDE_FILES if _side(path, s).exists() and s != "-shm"]
        if strays:
            aside = _move_aside(path, "stray", include_main=False)
            return (f"The event store {path} was missing but its write-ahead log was still there; the log was moved "
                    f"aside to {aside} so that it is not replayed into a new database, and the companion started "
                    f"with an empty store."), None
        return None, None
    _refuse_if_in_use(path)
    acked = _peek_acked(path)
    with tempfile.TemporaryDirectory(prefix="companion-check-") as tmp:
        full = _inspect_copy(path, Path(tmp) / "full", with_side_files=True)
        has_wal = wal.exists() and wal.stat().st_size > 0
        main = _inspect_copy(path, Path(tmp) / "main", with_side_files=False) if has_wal else full
        if has_wal and full.ok and main.ok:
            lost = _missing_rows(Path(tmp) / "main" / path.name, Path(tmp) / "full" / path.name)
            if lost:
                _refuse_if_newer(path, main)
                aside = _move_aside(path, "stale", include_main=False)
                return (f"The event store's write-ahead log did not belong to {path.name} (replaying it would have "
                        f"replaced or removed {lost} recorded events); it was moved aside to {aside}. The database "
                        f"itself is intact: {main.events} events up to event {main.last_seq}."), None
        if full.ok:
            _refuse_if_newer(path, full)
            if acked is not None and acked.seq > full.last_seq:
                if not has_wal:
                    return (f"The event store's write-ahead log was missing (deleted, or lost by the file system) "
                            f"while the database file alone lacks events."), None
                # SQLite will checkpoint the WAL it accepted and reuse the file: keep the frames it rejected
                kept = _copy_aside(path, "lost")
                return (f"SQLite rejected part of the event store's write-ahead log (damaged or cut short, as a "
                        f"failing SD card or a power cut can leave it); the files as they were are kept at "
                        f"{kept}."), None
            return None, None
        upper = acked.seq if acked else 0
        if has_wal and main.ok:
            _refuse_if_newer(path, main)
            got = salvage_events(Path(tmp) / "full" / path.name, main.last_seq, upper)
            rebuilt, added, check = _rebuild(path, Path(tmp) / "main" / path.name, got, main.last_seq)
            aside = _move_aside(path, "damaged", include_main=False)
            _install(rebuilt, path)
            return (f"The event store's write-ahead log was damaged ({full.problem}); it was moved aside to {aside}. "
                    f"The database itself is intact: {main.events} events up to event {main.last_seq}"
                    f"{_salvaged_text(added, 'the damaged log')}."), check
        chosen, skipped = _choose_backup(path, backups, Path(tmp) / "backup")
        floor = chosen[1].last_seq if chosen else 0
        got = salvage_events(Path(tmp) / "full" / path.name, floor, upper)
        if has_wal:
            got.merge(salvage_events(Path(tmp) / "main" / path.name, floor, upper))
        rebuilt, added, check = _rebuild(path, chosen[0].path if chosen else None, got, floor)
        aside = _move_aside(path, "damaged", include_main=True)
        _install(rebuilt, path)
        said = (f"The event store {path} could not be used ({full.problem}); it was moved aside to {aside}.")
    skipped_text = f" ({len(skipped)} damaged backup(s) skipped: {', '.join(p.name for p in skipped)})" if skipped else ""
    if chosen is None:
        if added:
            return said + (f" No good backup was found in {backups}{skipped_text}; the store was rebuilt from the "
                           f"{len(added)} event(s) still readable in the damaged file ({_spans(added)})."), check
        return said + (f" No good backup was found in {backups}{skipped_text}, and no event of the damaged file "
                       f"could be read, so the companion started with an empty store."), check
    backup, info = chosen
    return (said + f" Restored the newest good backup, {backup.path.name}: {info.events} events in {info.games} "
            f"game(s), up to event {info.last_seq}{skipped_text}"
            + (f"{_salvaged_text(added, 'the damaged file')}." if added
               else ". Nothing recorded after that backup could be read from the damaged file.")), check


def _salvaged_text(added: list[int], source: str) -> str:
    if not added:
        return ""
    return f"; the {len(added)} later event(s) still readable in {source} were salvaged ({_spans(added)})"


def _spans(seqs: list[int], limit: int = 8) -> str:
    runs: list[list[int]] = []
    for q in seqs:
        if runs and runs[-1][1] == q - 1:
            runs[-1][1] = q
        else:
            runs.append([q, q])
    text = ", ".join(f"{a}" if a == b else f"{a}–{b}" for a, b in runs[:limit])
    return text + (f" and {len(runs) - limit} more" if len(runs) > limit else "")


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


def _install(rebuilt: Path, path: Path) -> None:
    try:
        os.replace(rebuilt, path)
        fsync_dir(path.parent)
    except OSError as exc:
        rebuilt.unlink(missing_ok=True)
        raise StoreError(f"{path}: could not put the rebuilt event store in place: {exc}") from exc


def _side(path: Path, suffix: str) -> Path:
    return path.with_name(path.name + suffix)


def _stamp() -> str:
    # wall-clock time only names files for people; nothing is ordered by it
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def _refuse_if_in_use(path: Path) -> None:
    """StoreError if another process has the database open (it holds a shared lock on -shm's DMS byte)."""
    shm = _side(path, "-shm")
    try:
        fd = os.open(shm, os.O_RDWR)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StoreError(f"{shm}: cannot check whether the event store is in use: {exc}") from exc
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, SHM_DMS_BYTE, os.SEEK_SET)
    except OSError as exc:
        if exc.errno in (errno.EAGAIN, errno.EACCES):
            raise StoreError(f"{path}: the event store is in use by another process (is a second companion "
                             "running?)") from None
        raise StoreError(f"{shm}: cannot check whether the event store is in use: {exc}") from exc
    else:
        fcntl.lockf(fd, fcntl.LOCK_UN, 1, SHM_DMS_BYTE, os.SEEK_SET)
    finally:
        os.close(fd)


def _refuse_if_newer(path: Path, info: Inspection) -> None:
    if info.schema > SCHEMA_VERSION:
        raise StoreError(f"{path}: written by a newer version of the companion (store schema {info.schema}; this "
                         f"version knows {SCHEMA_VERSION}); upgrade it, or move the file away to start fresh")


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
    elif game_id not in games:
        return f"belongs to game {game_id}, which never started"
    return None


def _missing_rows(main_copy: Path, full_copy: Path) -> int:
    """How many events of the main file alone are missing or different once its WAL is applied.

    The log is append-only, so a WAL that belongs to the file only ever adds events; one that
    removes or rewrites events is from another database, or an older moment of this one.
    """
    con = sqlite3.connect(f"file:{main_copy}?mode=rw", uri=True)
    try:
        con.execute("ATTACH DATABASE ? AS full", (f"file:{full_copy}?mode=rw",))
        return int(con.execute(
            "SELECT COUNT(*) FROM main.events m LEFT JOIN full.events f ON f.seq = m.seq "
            "WHERE f.seq IS NULL OR f.game_id IS NOT m.game_id OR f.kind IS NOT m.kind OR f.body IS NOT m.body "
            "OR f.source IS NOT m.source OR f.at IS NOT m.at").fetchone()[0])
    finally:
        con.close()


def _aside_name(path: Path, label: str) -> Path:
    """`<name>.<label>-<time>`, numbered on when that (or a side file of it) is taken already."""
    stamp = _stamp()
    base = path.with_name(f"{path.name}.{label}-{stamp}")
    n = 1
    while any(_side(base, s).exists() for s in ("",) + SIDE_FILES):
        n += 1
        base = path.with_name(f"{path.name}.{label}-{stamp}-{n}")
    return base


def _move_aside(path: Path, label: str, *, include_main: bool) -> Path:
    """Rename the database (if asked) and its side files to `<name>.<label>-<time>[-wal|-shm|-journal]`."""
    base = _aside_name(path, label)
    moved = []
    try:
        if include_main:
            os.replace(path, base)
            moved.append(base)
        for suffix in SIDE_FILES:
            src = _side(path, suffix)
            if src.exists():
                dst = _side(base, suffix)
                os.replace(src, dst)
                moved.append(dst)
        fsync_dir(path.parent)
    except OSError as exc:
        raise StoreError(f"{path}: damaged, and it could not be moved aside: {exc}") from exc
    return moved[0] if moved else base


def _choose_backup(path: Path, backups: Path, workdir: Path) -> tuple[tuple[Backup, Inspection] | None, list[Path]]:
    """The newest backup that checks out; ((backup, what it holds) or None, damaged backups skipped)."""
    skipped: list[Path] = []
    for i, backup in enumerate(list_backups(backups, path.stem)):
        info = _inspect_copy(backup.path, workdir / str(i), with_side_files=False)
        if not info.ok or info.schema > SCHEMA_VERSION:
            log.warning("backup %s is not usable: %s", backup.path, info.problem or "newer schema")
            skipped.append(backup.path)
            continue
        return (backup, info), skipped
    return None, skipped


def _copy_aside(path: Path, label: str) -> Path:
    """Copy the database and its side files to `<name>.<label>-<time>[-wal|-journal]`, leaving them in place."""
    base = _aside_name(path, label)
    try:
        for suffix in ("", "-wal", "-journal"):
            if _side(path, suffix).exists():
                shutil.copyfile(_side(path, suffix), _side(base, suffix))
                _fsync_file(_side(base, suffix))
        fsync_dir(path.parent)
    except OSError as exc:
        log.warning("could not keep a copy of the event store at %s: %s", base, exc)
    return base


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
