"""Backups of the event log: an online copy before each new game, the newest few kept, found for a restore.

Backups: before each new game the store copies itself (SQLite's online backup)
into `backups/` beside the database, so every finished game is in a backup;
the newest few are kept. Each is named `<stem>-<last seq>-<UTC time>.sqlite3`, so
`list_backups` orders them without opening them; `opening` restores the newest that checks out.
"""

from __future__ import annotations

import logging
import os
import re
import sqlite3
import tempfile
from dataclasses import dataclass
from pathlib import Path

from companion.foundation.atomic import fsync_dir
from companion.store.errors import StoreError
from companion.store.files import _fsync_file, _stamp, glob_escape

log = logging.getLogger("companion.store")    # one logger for the whole store: its name is in every line logged

DEFAULT_KEEP_BACKUPS = 5


@dataclass(frozen=True)
class Backup:
    path: Path
    last_seq: int


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


def write_backup(db: sqlite3.Connection, path: Path, backups_dir: Path, keep: int) -> Path | None:
    """Copy the store at `path` (open as `db`) into backups_dir, keeping the newest `keep`; the backup's path.

    None when the store has no events yet. A backup already holding the newest event is reused.
    The caller holds the store's lock. StoreError if the copy cannot be written.
    """
    try:
        last = int(db.execute("SELECT COALESCE(MAX(seq), 0) FROM events").fetchone()[0])
    except sqlite3.Error as exc:
        raise StoreError(f"{path}: cannot read the store to back it up: {exc}") from exc
    if last == 0:
        return None
    existing = list_backups(backups_dir, path.stem)
    if existing and existing[0].last_seq == last:
        return existing[0].path
    stamp = _stamp()
    target = backups_dir / f"{path.stem}-{last:010d}-{stamp}.sqlite3"
    n = 1
    while target.exists():       # two backups within a second (the wall clock may even have gone back)
        n += 1
        target = backups_dir / f"{path.stem}-{last:010d}-{stamp}-{n}.sqlite3"
    tmp: Path | None = None
    try:
        backups_dir.mkdir(parents=True, exist_ok=True)
        # a temp file left by a backup that a crash interrupted: this process alone writes here
        for stale in backups_dir.glob(f".{glob_escape(path.stem)}-*.sqlite3.*.tmp"):
            stale.unlink(missing_ok=True)
        fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=backups_dir)
        os.close(fd)
        tmp = Path(name)
        dst = sqlite3.connect(str(tmp), isolation_level=None)
        try:
            db.backup(dst)
            # a standalone file: no write-ahead log beside the backup
            dst.execute("PRAGMA journal_mode=DELETE")
        finally:
            dst.close()
        _fsync_file(tmp)
        os.replace(tmp, target)
        tmp = None
        fsync_dir(backups_dir)
    except (sqlite3.Error, OSError) as exc:
        raise StoreError(f"{target}: could not write the backup: {exc}") from exc
    finally:
        if tmp is not None:
            tmp.unlink(missing_ok=True)
    for old in list_backups(backups_dir, path.stem)[keep:]:
        old.path.unlink(missing_ok=True)
    log.info("backed up the event store to %s", target)
    return target
