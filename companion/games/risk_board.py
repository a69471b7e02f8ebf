"""Risk: Balance of Power -- the board and the box: the map data, the counts and tables the rules print,
territory names, which territories border and which battles an airfield reaches.

The shipped map (data/risk_map.toml) and the players' completion of it make up an Atlas;
the state carries the completion, so every rule below stays a function of the state.
"""

from __future__ import annotations

import difflib
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from companion.games.mapdata import MapForm, cached_atlas, symmetric_links
from companion.games.base import RuleError, require


MAP: dict[str, Any] = tomllib.loads((Path(__file__).parent / "data" / "risk_map.toml").read_text(encoding="utf-8"))

TERRITORIES: tuple[str, ...] = tuple(MAP["territories"])
TERRITORY_COUNT = len(TERRITORIES)
CITY_COUNT = 9
CARD_COUNT = TERRITORY_COUNT  # one card per territory
CARD_TROOPS = {2: 2, 3: 4, 4: 7, 5: 10, 6: 13, 7: 17, 8: 21, 9: 25, 10: 30}
MIN_BASE = 3
MISSIONS_TO_WIN = 3
MISSIONS_ON_BOARD = 8
NEUTRAL = "neutral"
NEUTRAL_TABLE = tuple(range(12, 2, -1))  # the numbers printed under the neutral's lost-troop slots
START_TROOPS = {"player": 27, NEUTRAL: 60}  # Command Post set-up
# The rulebook does not count the arrows in the box. Command Post sets out 114 troops in
# all (27 + 27 + 60), so no army on a real table comes near this; it also keeps the exact
# odds of the largest possible battle (100 against 100) a matter of a tenth of a second,
# computed while the table waits.
MAX_TROOPS = 100
# The four printed bonuses the text gives run from 2 to 5; six regions cannot add up to more.
MAX_REGION_BONUS = 30
PURCHASES = {
    "recon": (2, "Recon Mission"),
    "maneuver": (3, "Preemptive Maneuver"),
    "uprising": (6, "Uprising"),
    "troops": (7, "3 Additional Troops"),
    "special_forces": (8, "Special Forces"),
    "card": (9, "Card from the Deck"),
    "airfield": (10, "Airfield"),
}
VARIANTS = ("basic", "command_post")
PHASES = ("resistance", "support", "reinforce", "attack", "end")
PHASE_LABELS = {
    "resistance": "neutral resistance",
    "support": "rear support",
    "reinforce": "raising troops",
    "attack": "attacks",
    "end": "end of turn",
}


def _key(name: str) -> str:
    words = name.strip().lower().replace("-", " ").split()
    if words and words[0] == "the":
        words = words[1:]
    return " ".join(words)


_BY_KEY = {_key(t): t for t in TERRITORIES}
REGIONS: dict[str, dict[str, Any]] = MAP["regions"]
ROUGH_COUNT: int = MAP["rough_count"]
OBJECTS: dict[str, str] = {_BY_KEY[_key(t)]: kind for t, kind in MAP["objects"].items()}
MISSIONS: dict[str, dict[str, Any]] = MAP["missions"]
SETUPS: dict[int, dict[str, Any]] = {int(k): v for k, v in MAP["setups"].items()}


@dataclass(frozen=True)
class Atlas:
    """The board as far as the tracker knows it: the shipped map plus what the players completed."""

    adjacent: Mapping[str, frozenset[str]]
    borders_complete: frozenset[str]
    rough: frozenset[str]
    regions: Mapping[str, Mapping[str, Any]]   # {colour: {"bonus": n or None, "territories": [...]}}


def _build_atlas(extra: Mapping[str, Any]) -> Atlas:
    table = {a: list(b) for a, b in MAP.get("adjacent", {}).items()}
    for a, b in extra.get("borders", []):
        table.setdefault(a, []).append(b)
    regions = {}
    for name, spec in REGIONS.items():
        more = extra.get("regions", {}).get(name, {})
        bonus = spec.get("bonus", more.get("bonus"))
        regions[name] = {"bonus": bonus, "territories": [_BY_KEY[_key(t)] for t in spec["territories"]] + list(more.get("territories", []))}
    return Atlas(
        adjacent=symmetric_links(TERRITORIES, table, lambda name: _BY_KEY[_key(name)]),
        borders_complete=frozenset(_BY_KEY[_key(t)] for t in [*MAP.get("borders_complete", []), *extra.get("borders_complete", [])]),
        rough=frozenset(_BY_KEY[_key(t)] for t in [*MAP.get("rough", []), *extra.get("rough", [])]),
        regions=regions,
    )


_atlas_of = cached_atlas(_build_atlas)


def _atlas(state: Mapping[str, Any]) -> Atlas:
    # the completion rides in the state as plain data, so the rules stay functions of the state
    return _atlas_of(state.get("map"))


SHIPPED = _atlas_of({})
# kept for callers that read the shipped map directly
ADJACENT = SHIPPED.adjacent
BORDERS_COMPLETE = SHIPPED.borders_complete
ROUGH = SHIPPED.rough

MAP_FORM = MapForm(
    game="risk",
    names=TERRITORIES,
    key=_key,
    group="regions",
    group_ids=tuple(REGIONS),
    group_fields=frozenset({"bonus", "territories"}),
    shipped_groups={name: {"bonus": spec.get("bonus"), "territories": [_BY_KEY[_key(t)] for t in spec["territories"]],
                           "whole": bool(spec.get("whole"))} for name, spec in REGIONS.items()},
    shipped_borders=frozenset(frozenset((a, b)) for a, bs in SHIPPED.adjacent.items() for b in bs),
    borders_known=SHIPPED.borders_complete,
    rough=ROUGH_COUNT,
    max_bonus=10,
)
# Which battles an airfield reaches: those on the attacked territory (the default), or also
# those launched from a territory on or next to it.
AIRFIELD_REACHES = ("attacked", "either")


def borders(a: str, b: str, atlas: Atlas = SHIPPED) -> bool | None:
    """Whether two territories share a border; None when the map data cannot tell."""
    if b in atlas.adjacent[a]:
        return True
    if a in atlas.borders_complete or b in atlas.borders_complete:
        return False
    return None


def airfield_reaches(strip: str | None, source: str | None, target: str | None, reach: str = "attacked",
                     atlas: Atlas = SHIPPED) -> bool | None:
    """Whether an airfield on `strip` adds its +1 to a battle from `source` into `target`.

    None when the tracker cannot tell (the airfield or the territories are not named, or the
    map data lacks the border in question).
    """
    if strip is None:
        return None
    # The attack rule makes the target border the source, so an airfield on either end
    # always reaches the battle, whatever borders the map data knows.
    if strip in (source, target):
        return True
    sites = [target] + ([source] if reach == "either" else [])
    answers = [None if site is None else borders(strip, site, atlas) for site in sites]
    if True in answers:
        return True
    return None if None in answers else False


# ---------------------------------------------------------------- names the table types


def territory(name: Any, key: str = "territory") -> str:
    """The canonical spelling of a board territory; RuleError naming `key` otherwise."""
    require(isinstance(name, str), f"'{key}' must be a territory name")
    found = _BY_KEY.get(_key(name))
    if found is None:
        near = [_BY_KEY[k] for k in difflib.get_close_matches(_key(name), list(_BY_KEY), n=3, cutoff=0.6)]
        hint = f"; did you mean {' or '.join(near)}?" if near else ""
        raise RuleError(f"'{key}': {name!r} is not a territory of this board{hint}")
    return found


def _region(name: Any, key: str) -> str:
    require(isinstance(name, str) and name.strip().lower() in REGIONS, f"'{key}': {name!r} is not a region ({', '.join(REGIONS)})")
    return name.strip().lower()
