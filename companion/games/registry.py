"""The games the daemon can host, built from the config."""

from __future__ import annotations

from companion.games import balance_duels
from companion.games.balance_model import Model
from companion.games.base import Engine

# engines that need nothing from the config; imported here so a missing module fails loudly at start
OTHER_GAMES = ("imperial", "risk", "balance_of_power", "global_powers")


def engines(model: Model) -> dict[str, Engine]:
    import importlib

    found = {"balance_duels": balance_duels.engine(model)}
    for name in OTHER_GAMES:
        module = importlib.import_module(f"companion.games.{name}")
        found[name] = module.ENGINE
    return found
