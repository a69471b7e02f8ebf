"""The players' completions of the game maps: one file per game beside the config.

Loaded whole at start (a bad file stops the daemon with FILE:LINE, as a bad
calibration file does: a half-read map would judge moves wrongly), added to from
the page, and written atomically, so a power cut leaves the old file or the new one.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Mapping

from companion.games.mapdata import MapFileError
from companion.games.registry import map_forms

MAPS_DIR = "maps"


class MapCompletions:
    def __init__(self, directory: Path):
        self.directory = Path(directory)
        self.forms = map_forms()
        self._lock = threading.Lock()
        self._data = {game: form.load(self.path(game)) for game, form in self.forms.items()}

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
            form.save(self.path(game), merged)
            self._data[game] = merged
            return merged

    def _form(self, game: str):
        if game not in self.forms:
            raise MapFileError(f"'game': the map of {game!r} cannot be completed (maps: {', '.join(self.forms)})")
        return self.forms[game]
