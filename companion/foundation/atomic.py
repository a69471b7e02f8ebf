"""Atomic file writes for config, calibration and backups.

`write_atomic(path, text)` either leaves the old file in place or puts the
whole new one there, even across a power cut: the new content goes to a temp
file in the same directory, is flushed and fsync'ed, renamed over the target
(an atomic step on POSIX file systems), and the directory itself is fsync'ed
so the rename is durable too. A reader never sees a half-written file.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

DEFAULT_MODE = 0o644


def fsync_dir(directory: str | os.PathLike) -> None:
    """Make a rename or a new file in `directory` durable."""
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic_bytes(path: str | os.PathLike, data: bytes, *, mode: int | None = None) -> Path:
    """Replace `path` with `data` atomically and durably; returns the path.

    The file keeps the permission bits of the file it replaces (or gets `mode`, default 0o644 for a
    new file). On any error the target is untouched, the temp file is removed and the OSError is raised.
    """
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    if mode is None:
        try:
            mode = os.stat(target).st_mode & 0o7777
        except FileNotFoundError:
            mode = DEFAULT_MODE
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fchmod(f.fileno(), mode)
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass  # the rename had already happened, or mkstemp's file is gone: nothing to clean up
        raise
    fsync_dir(directory)
    return target


def write_atomic(path: str | os.PathLike, text: str, *, encoding: str = "utf-8", mode: int | None = None) -> Path:
    """Replace the text file `path` with `text` atomically and durably (see write_atomic_bytes)."""
    return write_atomic_bytes(path, text.encode(encoding), mode=mode)
