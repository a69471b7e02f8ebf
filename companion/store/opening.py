"""Opening the event log at start-up: its checks, the recovery from a damaged file, and the notice.

`open_store(path)` is how the daemon opens the log. It checks the file first
(on copies, so nothing is touched while it looks) and never refuses to start
over a damaged file: a database that is truncated, garbage or fails SQLite's
integrity check is moved aside and the newest good backup is restored (or the
store starts empty); a write-ahead log that does not belong to the database
(a "stale WAL", which SQLite would otherwise replay silently over it) is moved
aside. It returns a notice saying what it did, for the page and the log.
"""

from __future__ import annotations

import errno
import fcntl
import logging
import os
import shutil
import sqlite3
import tempfile
from pathlib import Path

from companion.foundation.atomic import fsync_dir
from companion.store.acked import AckCheck, AckRecord, AckRecordError, AckState, ack_path
from companion.store.backups import DEFAULT_KEEP_BACKUPS, Backup, list_backups
from companion.store.errors import StoreError
from companion.store.files import _fsync_file, _side, _stamp, glob_escape
from companion.store.inspection import Inspection, _inspect_copy
from companion.store.log import SCHEMA_VERSION, EventStore
from companion.store.salvage import _rebuild, salvage_events

log = logging.getLogger("companion.store")    # one logger for the whole store: its name is in every line logged

SIDE_FILES = ("-wal", "-shm", "-journal")     # SQLite's companions of a database file
SHM_DMS_BYTE = 128                             # every open connection holds a shared lock on this byte of -shm


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


def _install(rebuilt: Path, path: Path) -> None:
    try:
        os.replace(rebuilt, path)
        fsync_dir(path.parent)
    except OSError as exc:
        rebuilt.unlink(missing_ok=True)
        raise StoreError(f"{path}: could not put the rebuilt event store in place: {exc}") from exc


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
