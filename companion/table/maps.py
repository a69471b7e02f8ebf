"""The players' completions of the game maps: one file per game beside the config.

Loaded whole at start (a bad file stops the daemon with FILE:LINE, as a bad
calibration file does: a half-read map would judge moves wrongly), added to from
the page, and written atomically, so a power cut leaves the old file or the new one.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Mapping

from companion.foundation.atomic import write_atomic
from companion.games.mapdata import MAX_FILE_BYTES, MapFileError, MapForm
from companion.games.registry import map_forms


def load_completion(form: MapForm, path: Path) -> dict[str, Any]:
    """The completion in `path` (empty when there is none); MapFileError as FILE:LINE: problem."""
    p = Path(path)
    try:
        if p.stat().st_size > MAX_FILE_BYTES:
            raise MapFileError(f"{p}:1: larger than {MAX_FILE_BYTES // 1024} KiB; this is not a map completion")
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        return form.empty()
    except (OSError, UnicodeDecodeError) as exc:
        raise MapFileError(f"{p}:1: cannot read: {exc}") from None
    return form.parse(text, str(p))


def save_completion(form: MapForm, path: Path, data: Mapping[str, Any]) -> Path:
    """Written whole or not at all (a power cut leaves the old file)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    return write_atomic(p, form.render(data))


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
