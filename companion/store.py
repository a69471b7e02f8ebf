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
"""

from __future__ import annotations

import errno
import fcntl
import json
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

from companion.atomic import fsync_dir

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1
KINDS = ("new_game", "action", "undo")
DEFAULT_KEEP_BACKUPS = 5
SIDE_FILES = ("-wal", "-shm", "-journal")     # SQLite's companions of a database file
SHM_DMS_BYTE = 128                             # every open connection holds a shared lock on this byte of -shm


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
                 keep_backups: int = DEFAULT_KEEP_BACKUPS):
        self.path = Path(path)
        self.backups_dir = Path(backups_dir) if backups_dir is not None else None
        self.keep_backups = max(1, keep_backups)
        self.backup_problem: str | None = None   # the last failed automatic backup, for the page
        self._lock = threading.Lock()
        self._closed = False
        self._db: sqlite3.Connection | None = None
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
        except (sqlite3.Error, OSError) as exc:
            if self._db is not None:
                self._db.close()
            raise StoreError(f"{self.path}: cannot open the event store: {exc}") from exc

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                self._db.close()

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
    database) is restored, or the store starts empty. The notice says what happened, in words for the
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
    for stale in path.parent.glob(f".{glob_escape(path.name)}.*.restore"):
        stale.unlink(missing_ok=True)        # a restore that a crash interrupted; the database was not replaced
    notice = _recover(path, backups)
    if notice:
        log.error("%s", notice)
    return EventStore(path, backups_dir=backups, keep_backups=keep_backups), notice


def _recover(path: Path, backups: Path) -> str | None:
    wal = _side(path, "-wal")
    if not path.exists():
        strays = [s for s in SIDE_FILES if _side(path, s).exists() and s != "-shm"]
        if strays:
            aside = _move_aside(path, "stray", include_main=False)
            return (f"The event store {path} was missing but its write-ahead log was still there; the log was moved "
                    f"aside to {aside} so that it is not replayed into a new database, and the companion started "
                    f"with an empty store.")
        return None
    _refuse_if_in_use(path)
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
                        f"itself is intact: {main.events} events up to event {main.last_seq}.")
        if full.ok:
            _refuse_if_newer(path, full)
            return None
        if has_wal and main.ok:
            _refuse_if_newer(path, main)
            aside = _move_aside(path, "damaged", include_main=False)
            return (f"The event store's write-ahead log was damaged ({full.problem}); it was moved aside to {aside}. "
                    f"The database itself is intact: {main.events} events up to event {main.last_seq}; changes "
                    f"made after the last checkpoint may be lost.")
        aside = _move_aside(path, "damaged", include_main=True)
        said = (f"The event store {path} could not be used ({full.problem}); it was moved aside to {aside}.")
        restored, skipped = _restore_newest_backup(path, backups, Path(tmp) / "backup")
    skipped_text = f" ({len(skipped)} damaged backup(s) skipped: {', '.join(p.name for p in skipped)})" if skipped else ""
    if restored is None:
        return said + f" No good backup was found in {backups}{skipped_text}, so the companion started with an empty store."
    backup, info = restored
    return (said + f" Restored the newest good backup, {backup.path.name}: {info.events} events in {info.games} "
            f"game(s), up to event {info.last_seq}{skipped_text}. Anything recorded after that backup is lost.")


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


def _move_aside(path: Path, label: str, *, include_main: bool) -> Path:
    """Rename the database (if asked) and its side files to `<name>.<label>-<time>[-wal|-shm|-journal]`."""
    stamp = _stamp()
    base = path.with_name(f"{path.name}.{label}-{stamp}")
    n = 1
    while any(_side(base, s).exists() for s in ("",) + SIDE_FILES):
        n += 1
        base = path.with_name(f"{path.name}.{label}-{stamp}-{n}")
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


def _restore_newest_backup(path: Path, backups: Path, workdir: Path) -> tuple[tuple[Backup, Inspection] | None, list[Path]]:
    """Copy the newest backup that checks out to `path`; ((backup, what it holds) or None, damaged backups)."""
    skipped: list[Path] = []
    for i, backup in enumerate(list_backups(backups, path.stem)):
        info = _inspect_copy(backup.path, workdir / str(i), with_side_files=False)
        if not info.ok or info.schema > SCHEMA_VERSION:
            log.warning("backup %s is not usable: %s", backup.path, info.problem or "newer schema")
            skipped.append(backup.path)
            continue
        tmp: Path | None = None
        try:
            fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".restore", dir=path.parent)
            os.close(fd)
            tmp = Path(name)
            shutil.copyfile(backup.path, tmp)
            _fsync_file(tmp)
            os.replace(tmp, path)
            tmp = None
            fsync_dir(path.parent)
        except OSError as exc:
            raise StoreError(f"{path}: could not restore the backup {backup.path}: {exc}") from exc
        finally:
            if tmp is not None:
                tmp.unlink(missing_ok=True)
        return (backup, info), skipped
    return None, skipped


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
