"""The players' completions of the game maps: one file per game beside the config.

Loaded whole at start (a bad file stops the daemon with FILE:LINE, as a bad
calibration file does: a half-read map would judge moves wrongly), added to from
the page, and written atomically, so a power cut leaves the old file or the new one.
"""

from __future__ import annotations

import errno
import threading
from pathlib import Path
from typing import Any, Mapping

from companion.foundation.atomic import write_atomic
from companion.games.mapdata import MAX_FILE_BYTES, MapFileError, MapForm, MapWriteError
from companion.games.registry import map_forms


_WRITE_CAUSES = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is used up",
    errno.EROFS: "the maps folder is on a read-only file system",
    errno.EACCES: "the maps folder may not be written",
    errno.EPERM: "the maps folder may not be written",
}


def _check_size(size: int, source: str, tail: str = "; this is not a map completion") -> None:
    """The loader's bound on a file's size, shared with the writer so a saved file always loads."""
    if size > MAX_FILE_BYTES:
        raise MapFileError(f"{source}:1: larger than {MAX_FILE_BYTES // 1024} KiB{tail}")


def load_completion(form: MapForm, path: Path) -> dict[str, Any]:
    """The completion in `path` (empty when there is none); MapFileError as FILE:LINE: problem."""
    p = Path(path)
    try:
        _check_size(p.stat().st_size, str(p))
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        return form.empty()
    except (OSError, UnicodeDecodeError) as exc:
        raise MapFileError(f"{p}:1: cannot read: {exc}") from None
    return form.parse(text, str(p))


def save_completion(form: MapForm, path: Path, data: Mapping[str, Any]) -> Path:
    """Written whole or not at all (a power cut leaves the old file).

    The text is first put through the loader's own checks (its size bound, then parse: counts, name lengths),
    so a file this writes can never stop the next start; MapFileError (nothing written) when it would.
    An OSError while writing becomes MapWriteError naming the cause; write_atomic has kept the old file.
    """
    p = Path(path)
    text = form.render(data)
    try:
        # the loader bounds the file's bytes (st_size), not its characters: a non-ASCII name takes more
        _check_size(len(text.encode("utf-8")), str(p), tail="")
        form.parse(text, str(p))
    except MapFileError as exc:
        problem = str(exc).split(": ", 1)[-1]
        raise MapFileError(f"the map file would not load at the next start ({problem}); "
                           "the map already holds as much as its file can") from None
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        return write_atomic(p, text)
    except OSError as exc:
        cause = _WRITE_CAUSES.get(exc.errno) or (exc.strerror or str(exc))
        raise MapWriteError(f"the map file {p} could not be written: {cause}", exc.errno) from exc


class MapCompletions:
    def __init__(self, directory: Path):
        self.directory = Path(directory)
        self.forms = map_forms()
        self._lock = threading.Lock()
        self._data = {game: load_completion(form, self.path(game)) for game, form in self.forms.items()}

    def path(self, game: str) -> Path:
        return self.directory / f"{game}.toml"

    def all(self) -> dict[str, dict[str, Any]]:
        with self._lock:
            return {g: d for g, d in self._data.items()}

    def get(self, game: str) -> dict[str, Any]:
        self._form(game)
        with self._lock:
            return self._data[game]

    def add(self, game: str, addition: Mapping[str, Any]) -> dict[str, Any]:
        """Check `addition` with everything already entered, then write the file; nothing changes on a refusal."""
        form = self._form(game)
        with self._lock:
            merged = form.add(self._data[game], addition)
            save_completion(form, self.path(game), merged)
            self._data[game] = merged
            return merged

    def _form(self, game: str):
        if game not in self.forms:
            raise MapFileError(f"'game': the map of {game!r} cannot be completed (maps: {', '.join(self.forms)})")
        return self.forms[game]
