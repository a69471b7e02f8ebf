"""How the store names and syncs its files: the small steps the rest of the store shares.

A module of its own so that each of them takes these from below, never from one another.
"""

from __future__ import annotations

import os
import re
from datetime import datetime, timezone
from pathlib import Path


def glob_escape(text: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", text)


def _side(path: Path, suffix: str) -> Path:
    return path.with_name(path.name + suffix)


def _stamp() -> str:
    # wall-clock time only names files for people; nothing is ordered by it
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
