"""The games the daemon can host, built from the config."""

from __future__ import annotations

from typing import Any, Mapping

from companion.games import balance_duels
from companion.games.balance_model import Model
from companion.games.base import Engine

# engines that need nothing from the config; imported here so a missing module fails loudly at start
OTHER_GAMES = ("imperial", "risk", "balance_of_power", "global_powers")
# games whose map the players may complete (their modules offer MAP_FORM and engine(map_data))
MAP_GAMES = ("risk", "balance_of_power")


def engines(model: Model, maps: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, Engine]:
    """Every engine; `maps` holds the players' completions ({game: MAP_FORM-checked data})."""
    import importlib

    found = {"balance_duels": balance_duels.engine(model)}
    for name in OTHER_GAMES:
        module = importlib.import_module(f"companion.games.{name}")
        found[name] = module.engine((maps or {}).get(name)) if name in MAP_GAMES else module.ENGINE
    return found


def map_forms() -> dict[str, Any]:
    import importlib

    return {name: importlib.import_module(f"companion.games.{name}").MAP_FORM for name in MAP_GAMES}
