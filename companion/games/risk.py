"""Risk: Balance of Power -- reinforcements, exact battle odds, missions and the Command Post tables.

The tracker sits beside the real board: it never needs to know where every army
stands. Players enter (or let battles update) a few counts per side, and the
tracker does the sums the table would otherwise do by hand. Where the map data
in data/risk_map.toml is complete enough it checks more (rough terrain, cities,
capitals, mission territories); where it is not, it trusts the counts and the
ticks on the page.
"""

from __future__ import annotations

import copy
import difflib
import tomllib
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from math import ceil
from pathlib import Path
from typing import Any, Mapping

from companion.games.mapdata import MapForm, cached_atlas, symmetric_links, with_map
from companion.games import dice
from companion.games.base import Engine, RuleError, field, require

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


# ---------------------------------------------------------------- pure rules


def _whole(name: str, value: Any, low: int = 0, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be a whole number, not {value!r}")
    if value < low or (high is not None and value > high):
        bound = f"from {low} to {high}" if high is not None else f"at least {low}"
        raise ValueError(f"{name} must be {bound}, not {value}")
    return value


def card_troops(stars: int) -> int:
    """Troops for turning in cards worth `stars` (0 means no cards turned in)."""
    _whole("stars", stars)
    if stars == 0:
        return 0
    if stars not in CARD_TROOPS:
        raise ValueError(f"cards are turned in for 2 to 10 stars, not {stars}")
    return CARD_TROOPS[stars]


def reinforcement_breakdown(
    territories: int, cities: int = 0, region_bonus: int = 0, capitals: int = 0, stars: int = 0
) -> dict[str, int]:
    """Each term of a player's new troops, and their total."""
    _whole("territories", territories, 0, TERRITORY_COUNT)
    _whole("cities", cities, 0, CITY_COUNT)
    _whole("region_bonus", region_bonus)
    _whole("capitals", capitals, 0, 2)
    if cities > territories:
        raise ValueError("a city stands on a territory: cities cannot outnumber territories")
    if capitals > territories:
        raise ValueError("a capital stands on a territory: capitals cannot outnumber territories")
    cards = card_troops(stars)
    counted = territories + cities
    base = max(MIN_BASE, counted // 3)
    return {
        "counted": counted,
        "base": base,
        "regions": region_bonus,
        "capitals": capitals,
        "cards": cards,
        "total": base + region_bonus + capitals + cards,
    }


def reinforcements(territories: int, cities: int = 0, region_bonus: int = 0, capitals: int = 0, stars: int = 0) -> int:
    """New troops at the start of a turn; ValueError for counts no board allows."""
    return reinforcement_breakdown(territories, cities, region_bonus, capitals, stars)["total"]


def roll_odds(
    attack_dice: int,
    defend_dice: int,
    attacker_airfield: bool = False,
    defender_airfield: bool = False,
    recon: int = 0,
) -> dict[tuple[int, int], Fraction]:
    """Exact {(attacker losses, defender losses): probability} for one roll."""
    _whole("attack_dice", attack_dice, 1, 3)
    _whole("defend_dice", defend_dice, 1, 2)
    _whole("recon", recon, 0)
    return dict(dice.roll_distribution(attack_dice, defend_dice, int(attacker_airfield), int(defender_airfield), min(recon, attack_dice)))


def _attack_cap(rough: bool, special_forces: bool) -> int:
    return 2 if rough and not special_forces else 3


def attack_odds(
    attackers: int,
    defenders: int,
    rough: bool = False,
    special_forces: bool = False,
    attacker_airfield: bool = False,
    defender_airfield: bool = False,
    recon: int = 0,
) -> dict[tuple[str, int], Fraction]:
    """Exact distribution of a fight to the finish, both sides always rolling all the dice they may.

    `attackers` counts only the armies able to attack (the one left behind is
    not included). Keys are ("won", attackers left) and ("lost", defenders left).
    """
    _whole("attackers", attackers, 0, MAX_TROOPS)
    _whole("defenders", defenders, 0, MAX_TROOPS)
    _whole("recon", recon, 0)
    return dice.attack_outcomes(
        attackers,
        defenders,
        _attack_cap(rough, special_forces),
        2,
        int(attacker_airfield),
        int(defender_airfield),
        min(recon, 3),
    )


def conquest_probability(
    attackers: int,
    defenders: int,
    rough: bool = False,
    special_forces: bool = False,
    attacker_airfield: bool = False,
    defender_airfield: bool = False,
    recon: int = 0,
) -> Fraction:
    """Exact chance that `attackers` (able to attack) take a territory held by `defenders`."""
    outcomes = attack_odds(attackers, defenders, rough, special_forces, attacker_airfield, defender_airfield, recon)
    return sum((p for (kind, _), p in outcomes.items() if kind == "won"), Fraction(0))


@lru_cache(maxsize=256)
def uprising_probability(attackers: int, defenders: int, rough: bool = False, defender_airfield: bool = False) -> Fraction:
    """Chance that an uprising takes the territory before the neutral loses a troop.

    The neutral keeps rolling all the dice it may; the fight stops at its first
    loss unless that same roll also empties the territory.
    """
    _whole("attackers", attackers, 1, MAX_TROOPS)
    _whole("defenders", defenders, 0, MAX_TROOPS)
    ad = min(attackers, _attack_cap(rough, False))
    # Built up from one defender, so a long fight needs no deep recursion.
    chance = [Fraction(1)]
    for left in range(1, defenders + 1):
        dd = min(left, 2)
        total = Fraction(0)
        for (la, ld), p in dice.roll_distribution(ad, dd, 0, int(defender_airfield), 0).items():
            if left - ld == 0:
                total += p
            elif la == 0:
                total += p * chance[left - ld]
        chance.append(total)
    return chance[defenders]


def resistance_threshold(lost: int) -> int:
    """The number printed under the rightmost filled slot of the neutral's table."""
    _whole("lost", lost, 1, len(NEUTRAL_TABLE))
    return NEUTRAL_TABLE[lost - 1]


def resistance_return(lost: int, roll_total: int) -> int:
    """Neutral troops that go back on the board after the resistance roll."""
    _whole("roll_total", roll_total, 2, 12)
    if lost == 0:
        return 0
    return ceil(lost / 2) if roll_total >= resistance_threshold(lost) else 0


def two_dice_at_least(target: int) -> Fraction:
    """Chance that two six-sided dice sum to `target` or more."""
    hits = sum(1 for a in range(1, 7) for b in range(1, 7) if a + b >= target)
    return Fraction(hits, 36)


# ---------------------------------------------------------------- engine helpers


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


def _opponent(state: Mapping[str, Any], player: str) -> str:
    a, b = state["players"]
    return b if player == a else a


def _side(state: Mapping[str, Any], action: Mapping[str, Any], key: str = "player", neutral: bool = True) -> str:
    name = field(action, key, str)
    if neutral and name.lower() == NEUTRAL:
        return NEUTRAL
    require(name in state["players"], f"'{key}': {name!r} is not a player in this game")
    return name


def _flag(action: Mapping[str, Any], key: str) -> bool | None:
    return field(action, key, (bool, type(None)), default=None)


def _maybe_count(action: Mapping[str, Any], key: str, high: int) -> Any:
    value = field(action, key, (int, type(None)), default=...)
    if value is not None:
        require(value >= 0, f"'{key}' cannot be negative")
        require(value <= high, f"'{key}' cannot exceed {high}")
    return value


def _phase_index(phase: str) -> int:
    return PHASES.index(phase)


def _start_phase(state: Mapping[str, Any]) -> str:
    if state["variant"] == "basic":
        return "reinforce"
    return "resistance" if state["sides"][NEUTRAL]["lost"] > 0 else "support"


def _new_turn(number: int, player: str) -> dict[str, Any]:
    return {
        "number": number,
        "player": player,
        "phase": "reinforce",
        "reinforcements": None,
        "stars_turned_in": 0,
        "bought": [],
        "special_forces": False,
        "recon": 0,
        "uprisings": 0,
        "maneuver_done": False,
        "conquered_enemy": False,
        "mission": None,
        "card_drawn": False,
    }


def _region_bonus(state: Mapping[str, Any], side: Mapping[str, Any]) -> int | None:
    if side["region_bonus"] is not None:
        return side["region_bonus"]
    if side.get("region_bonus_due"):
        return None
    regions = side["regions"] or []
    bonuses = [_atlas(state).regions[r]["bonus"] for r in regions]
    if any(b is None for b in bonuses):
        return None
    return sum(bonuses)


def _region_members(state: Mapping[str, Any], region: str) -> list[str]:
    return list(_atlas(state).regions[region]["territories"])


def _lose_regions(state: dict[str, Any], loser: str, taken: str) -> None:
    """Stop paying the bonus of any region `loser` held that includes the conquered `taken`."""
    side = state["sides"][loser]
    for region in REGIONS:
        members = _region_members(state, region)
        if taken not in members:
            continue
        ticked = side["regions"] is not None and region in side["regions"]
        # Without ticks, the owners entered at the table can still show the whole region held.
        by_owners = side["regions"] is None and all(state["owners"].get(t) == loser for t in members)
        if not (ticked or by_owners):
            continue
        if ticked:
            side["regions"].remove(region)
        if side["region_bonus"] is None:
            continue
        printed = _atlas(state).regions[region]["bonus"]
        if printed is not None:
            side["region_bonus"] = max(0, side["region_bonus"] - printed)
        else:
            # The typed number counted a bonus the map data does not know, so the rest of it
            # cannot be worked out: the ticks take over, or the table types it again.
            side["region_bonus"] = None
            if side["regions"] is None:
                side["region_bonus_due"] = True


def _breakdown(state: Mapping[str, Any], player: str) -> dict[str, Any] | None:
    """The live reinforcement breakdown, or None while a needed count is unknown."""
    side = state["sides"][player]
    bonus = _region_bonus(state, side)
    if side["territories"] is None or bonus is None:
        return None
    try:
        parts = reinforcement_breakdown(
            side["territories"],
            side["cities"] or 0,
            bonus,
            len(side["capitals"]),
            state["turn"]["stars_turned_in"] if state["turn"]["player"] == player else 0,
        )
    except ValueError:
        # Counts that no longer fit together (e.g. more capitals than territories after a
        # conquest the tracker could not place) wait for the players to correct them.
        return None
    return {**parts, "territories": side["territories"], "cities": side["cities"] or 0}


def _advance(state: dict[str, Any], phase: str) -> None:
    """Move the turn forward to `phase`; steps skipped on the way are settled as not taken."""
    turn = state["turn"]
    current, target = _phase_index(turn["phase"]), _phase_index(phase)
    require(
        current <= target,
        f"{PHASE_LABELS[phase]} is over for this turn (now: {PHASE_LABELS[turn['phase']]})",
    )
    if current == target:
        return
    if turn["phase"] == "resistance":
        # Skipping the roll is allowed: every lost neutral troop goes back in the box.
        state["sides"][NEUTRAL]["lost"] = 0
    if current <= _phase_index("reinforce") < target:
        breakdown = _breakdown(state, turn["player"])
        turn["reinforcements"] = breakdown
        troops = state["sides"][turn["player"]]["troops"]
        if breakdown is not None and troops is not None:
            state["sides"][turn["player"]]["troops"] = min(MAX_TROOPS, troops + breakdown["total"])
    turn["phase"] = phase


def _lose(state: dict[str, Any], side_name: str, n: int) -> None:
    side = state["sides"][side_name]
    if side["troops"] is not None:
        side["troops"] = max(0, side["troops"] - n)
    if state["variant"] != "command_post" or n == 0:
        return
    capacity = len(NEUTRAL_TABLE) if side_name == NEUTRAL else (state["lost_table_size"] or MAX_TROOPS)
    room = max(0, capacity - side["lost"])
    side["lost"] += min(n, room)


def _draw(state: dict[str, Any], player: str, stars: int) -> None:
    if state["deck"] == 0:
        require(state["discard"] > 0, "no cards left: every card is in a hand")
        state["deck"], state["discard"] = state["discard"], 0
        state["reshuffles"] += 1
    state["deck"] -= 1
    state["sides"][player]["cards"].append(stars)


def _stars(action: Mapping[str, Any], key: str = "stars") -> int:
    stars = field(action, key, int)
    require(stars in (1, 2), f"'{key}': a card carries 1 or 2 stars, not {stars}")
    return stars


def _known_owner(state: Mapping[str, Any], name: str) -> str | None:
    return state["owners"].get(name)


def mission_status(state: Mapping[str, Any], player: str, mission: str) -> bool | None:
    """Whether `player` meets `mission` now: True, False, or None when the tracker cannot tell."""
    spec = MISSIONS[mission]
    side = state["sides"][player]
    kind = spec["kind"]
    if kind in ("region", "regions"):
        held = side["regions"]
        if held is None:
            members = _region_members(state, spec["region"]) if kind == "region" else []
            if kind == "region" and members:
                owners = [_known_owner(state, t) for t in members]
                if any(o is not None and o != player for o in owners):
                    return False
            return None
        return spec["region"] in held if kind == "region" else len(held) >= spec["count"]
    if kind == "territories":
        owners = [_known_owner(state, _BY_KEY[_key(t)]) for t in spec["territories"]]
        if any(o is not None and o != player for o in owners):
            return False
        return True if all(o == player for o in owners) else None
    if kind == "cities":
        return None if side["cities"] is None else side["cities"] >= spec["count"]
    if kind == "eliminate_neutral":
        neutral = state["sides"][NEUTRAL]
        if neutral["territories"] is not None:
            return neutral["territories"] == 0
        if neutral["troops"] is not None and neutral["troops"] > 0:
            return False
        return None
    if kind == "rough":
        rough = _atlas(state).rough
        held = sum(1 for t in rough if _known_owner(state, t) == player)
        others = sum(1 for t in rough if _known_owner(state, t) not in (None, player))
        if held >= spec["count"]:
            return True
        # the rulebook's count stands for the rough territories nobody has named yet
        if ROUGH_COUNT - others < spec["count"]:
            return False
        return None
    raise RuleError(f"mission {mission!r} has an unknown kind {kind!r} in risk_map.toml")


def _win(state: dict[str, Any], player: str, reason: str) -> None:
    state["winner"] = player
    state["win_reason"] = reason


def _check_elimination(state: dict[str, Any]) -> None:
    for player in state["players"]:
        if state["sides"][player]["territories"] == 0 and state["winner"] is None:
            _win(state, _opponent(state, player), f"{player} has no territory left")


# ---------------------------------------------------------------- new


OPTION_KEYS = ("players", "colours", "variant", "setup", "missions", "cities", "capitals", "first", "lost_table_size",
               "airfield_reach")


def _option_players(options: Mapping[str, Any]) -> list[str]:
    players = options.get("players", ["Red", "Blue"])
    if type(players) is int:
        require(players == 2, f"'players': Risk: Balance of Power is for 2 players, not {players}")
        players = ["Red", "Blue"]
    require(isinstance(players, (list, tuple)) and len(players) == 2, "'players' must list the two players")
    names = []
    for name in players:
        require(isinstance(name, str) and name.strip(), "'players' must be non-empty names")
        require(name.strip().lower() != NEUTRAL, "'players': 'neutral' is the third army, not a player")
        names.append(name.strip())
    require(names[0] != names[1], "'players' must be two different names")
    return names


def new(options: Mapping[str, Any], map_data: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A game before the first turn. See OPTION_KEYS; every option is checked."""
    require(isinstance(options, Mapping), "options must be a mapping")
    for key in options:
        require(key in OPTION_KEYS, f"unknown option '{key}' (known: {', '.join(OPTION_KEYS)})")
    players = _option_players(options)
    colours = options.get("colours", {players[0]: "red", players[1]: "blue"})
    require(isinstance(colours, Mapping) and set(colours) == set(players), "'colours' must give a colour to each player")
    require(all(isinstance(c, str) and c for c in colours.values()), "'colours' must be colour names")
    variant = options.get("variant", "basic")
    require(variant in VARIANTS, f"'variant' must be one of {', '.join(VARIANTS)}, not {variant!r}")

    if variant == "basic":
        setup = options.get("setup", 1)
        require(type(setup) is int and setup in SETUPS, f"'setup' must be a Basic Training set-up 1-4, not {setup!r}")
        require("missions" not in options, "'missions': Basic Training takes its missions from the set-up")
        require("cities" not in options, "'cities': Basic Training takes its cities from the set-up")
        require("lost_table_size" not in options, "'lost_table_size' is a Command Post option")
        missions = list(SETUPS[setup]["missions"])
        cities: list[str] | None = [territory(c, "cities") for c in SETUPS[setup]["cities"]]
        lost_table_size = None
    else:
        require("setup" not in options, "'setup': Command Post has no numbered set-up")
        missions = options.get("missions")
        require(isinstance(missions, (list, tuple)), "'missions': give the 8 missions drawn for the board")
        require(len(missions) == MISSIONS_ON_BOARD, f"'missions' must name {MISSIONS_ON_BOARD} missions, not {len(missions)}")
        for m in missions:
            require(isinstance(m, str) and m in MISSIONS, f"'missions': unknown mission {m!r}")
        require(len(set(missions)) == len(missions), "'missions' names a mission twice")
        missions = list(missions)
        cities = options.get("cities")
        if cities is not None:
            require(isinstance(cities, (list, tuple)) and len(cities) == CITY_COUNT, f"'cities' must name the {CITY_COUNT} city territories")
            cities = [territory(c, "cities") for c in cities]
            require(len(set(cities)) == CITY_COUNT, "'cities' names a territory twice")
        lost_table_size = options.get("lost_table_size")
        require(
            lost_table_size is None or (type(lost_table_size) is int and 1 <= lost_table_size <= MAX_TROOPS),
            f"'lost_table_size' must be a whole number from 1 to {MAX_TROOPS} (or left out for no limit)",
        )
        setup = None

    capital_sites = {p: None for p in players}
    given = options.get("capitals", {})
    require(isinstance(given, Mapping), "'capitals' must map each player to a territory")
    for player, where in given.items():
        require(player in players, f"'capitals': {player!r} is not a player")
        capital_sites[player] = territory(where, "capitals")
        require(
            variant != "command_post" or capital_sites[player] not in OBJECTS,
            f"'capitals': {capital_sites[player]} holds the {OBJECTS.get(capital_sites[player])} and starts with the neutral army in Command Post,"
            " so no capital goes there",
        )
    placed = [t for t in capital_sites.values() if t is not None]
    require(len(set(placed)) == len(placed), "'capitals': two capitals cannot share a territory")

    first = options.get("first", players[0])
    require(first in players, f"'first' must be one of the players, not {first!r}")
    reach = options.get("airfield_reach", "attacked")
    require(reach in AIRFIELD_REACHES, f"'airfield_reach' must be one of {', '.join(AIRFIELD_REACHES)}, not {reach!r}")

    sides: dict[str, Any] = {}
    for player in players:
        sides[player] = {
            "territories": None,
            "cities": None,
            "troops": START_TROOPS["player"] if variant == "command_post" else None,
            "regions": None,
            "region_bonus": None,
            "capitals": [player],
            "cards": [],
            "missions": [],
            "lost": 0,
            "airfield": None,
        }
    sides[NEUTRAL] = {
        "territories": None,
        "cities": None,
        "troops": START_TROOPS[NEUTRAL] if variant == "command_post" else None,
        "lost": 0,
    }
    owners: dict[str, str] = {}
    if variant == "command_post":
        owners.update({t: NEUTRAL for t in OBJECTS})
    for player, where in capital_sites.items():
        if where is not None:
            owners[where] = player
    state: dict[str, Any] = {
        "game": "risk",
        "variant": variant,
        "setup": setup,
        "players": players,
        "colours": dict(colours),
        "sides": sides,
        "owners": owners,
        "cities": cities,
        "capital_sites": capital_sites,
        "board_missions": missions,
        "lost_table_size": lost_table_size,
        "airfield_reach": reach,
        "deck": CARD_COUNT,
        "discard": 0,
        "reshuffles": 0,
        "turn": _new_turn(1, first),
        "attack": None,
        "last_battle": None,
        "last_resistance": None,
        "winner": None,
        "win_reason": None,
        "map": dict(map_data or {}),
    }
    state["turn"]["phase"] = _start_phase(state)
    return state


# ---------------------------------------------------------------- actions


def _ticks_differ(old: list[str] | None, new: list[str] | None) -> bool:
    if old is None or new is None:
        return old is not new
    return sorted(old) != sorted(new)


def _set_counts(state: dict[str, Any], action: Mapping[str, Any]) -> None:
    name = _side(state, action)
    side = state["sides"][name]
    updates: dict[str, Any] = {}
    for key, high in (("territories", TERRITORY_COUNT), ("cities", CITY_COUNT), ("troops", MAX_TROOPS), ("lost", MAX_TROOPS)):
        if key in action:
            updates[key] = _maybe_count(action, key, high)
    if "lost" in updates:
        require(state["variant"] == "command_post", "'lost': lost-troop tables belong to Command Post")
        require(updates["lost"] is not None, "'lost' must be a number")
        if name == NEUTRAL:
            require(updates["lost"] <= len(NEUTRAL_TABLE), f"'lost': the neutral table has {len(NEUTRAL_TABLE)} slots")
        elif state["lost_table_size"] is not None:
            require(updates["lost"] <= state["lost_table_size"], f"'lost': the table has {state['lost_table_size']} slots")
    if name == NEUTRAL:
        for key in ("regions", "region_bonus", "capitals"):
            require(key not in action, f"'{key}': the neutral army collects no troops")
    else:
        if "regions" in action:
            regions = field(action, "regions", (list, type(None)))
            if regions is not None:
                regions = [_region(r, "regions") for r in regions]
                require(len(set(regions)) == len(regions), "'regions' names a region twice")
                other = state["sides"][_opponent(state, name)]["regions"] or []
                clash = sorted(set(regions) & set(other))
                require(not clash, f"'regions': {', '.join(clash)} is already held by {_opponent(state, name)}")
            updates["regions"] = regions
        if "region_bonus" in action:
            updates["region_bonus"] = _maybe_count(action, "region_bonus", MAX_REGION_BONUS)
        elif "regions" in updates and _ticks_differ(side["regions"], updates["regions"]):
            # A typed bonus stood for the regions held when it was typed; new ticks count again.
            updates["region_bonus"] = None
        if "regions" in updates or "region_bonus" in updates:
            updates["region_bonus_due"] = False
        if "capitals" in action:
            capitals = field(action, "capitals", list)
            for owner in capitals:
                require(owner in state["players"], f"'capitals': {owner!r} is not a player's capital")
            require(len(set(capitals)) == len(capitals), "'capitals' names a capital twice")
            other = _opponent(state, name)
            taken = set(capitals) & set(state["sides"][other]["capitals"])
            require(not taken, f"'capitals': {other} holds {', '.join(sorted(taken))}'s capital")
            updates["capitals"] = capitals
    require(updates, "enter at least one count to save")
    merged = {**side, **updates}
    if merged["territories"] is not None:
        if merged["cities"] is not None:
            require(merged["cities"] <= merged["territories"], "'cities': a city stands on a territory, so cities cannot outnumber territories")
        if name != NEUTRAL:
            require(len(merged["capitals"]) <= merged["territories"], "'capitals': each capital stands on a territory held")
    totals = {key: 0 for key in ("territories", "cities")}
    for other_name, other in state["sides"].items():
        source = merged if other_name == name else other
        for key in totals:
            totals[key] += source[key] or 0
    require(totals["territories"] <= TERRITORY_COUNT, f"'territories': the board has only {TERRITORY_COUNT} territories in all")
    require(totals["cities"] <= CITY_COUNT, f"'cities': the board has only {CITY_COUNT} cities in all")
    side.update(updates)
    _check_elimination(state)


def _set_owner(state: dict[str, Any], action: Mapping[str, Any]) -> None:
    where = territory(field(action, "territory", str))
    owner = field(action, "owner", (str, type(None)))
    if owner is None:
        state["owners"].pop(where, None)
        return
    owner = _side(state, action, "owner")
    state["owners"][where] = owner


def _neutral_resistance(state: dict[str, Any], action: Mapping[str, Any]) -> None:
    require(state["variant"] == "command_post", "neutral resistance is a Command Post step")
    turn = state["turn"]
    require(turn["phase"] == "resistance", "neutral resistance is rolled only at the very start of a turn with lost neutral troops")
    lost = state["sides"][NEUTRAL]["lost"]
    if field(action, "decline", bool, default=False):
        returned, total = 0, None
    else:
        roll = field(action, "roll", list)
        require(len(roll) == 2, "'roll' must be the two dice rolled")
        for die in roll:
            require(type(die) is int and 1 <= die <= 6, f"'roll': {die!r} is not a die value 1-6")
        total = sum(roll)
        returned = resistance_return(lost, total)
    neutral = state["sides"][NEUTRAL]
    if neutral["troops"] is not None:
        neutral["troops"] = min(MAX_TROOPS, neutral["troops"] + returned)
    state["last_resistance"] = {
        "lost": lost,
        "needed": resistance_threshold(lost),
        "roll": total,
        "returned": returned,
        "boxed": lost - returned,
    }
    neutral["lost"] = 0
    turn["phase"] = "support"


def _buy(state: dict[str, Any], action: Mapping[str, Any]) -> None:
    require(state["variant"] == "command_post", "rear support is bought only in Command Post")
    item = field(action, "item", str)
    require(item in PURCHASES, f"'item': {item!r} is not for sale ({', '.join(PURCHASES)})")
    cost, label = PURCHASES[item]
    player = state["turn"]["player"]
    side = state["sides"][player]
    _advance(state, "support")
    require(side["lost"] >= cost, f"{label} costs {cost} lost troops; {player} has {side['lost']} in the table")
    turn = state["turn"]
    if item == "special_forces":
        # The same ability may be bought more than once; a second one this turn adds nothing.
        turn["special_forces"] = True
    elif item == "recon":
        turn["recon"] += 1
    elif item == "uprising":
        turn["uprisings"] += 1
    elif item == "troops":
        if side["troops"] is not None:
            side["troops"] = min(MAX_TROOPS, side["troops"] + 3)
    elif item == "card":
        _draw(state, player, _stars(action))
    elif item == "airfield":
        require(side["airfield"] is None, f"{player} already has an airfield on the board")
        where = action.get("territory")
        if where is not None:
            where = territory(where)
            owner = _known_owner(state, where)
            require(owner in (None, player), f"'territory': {where} is held by {owner}, not {player}")
            state["owners"][where] = player
        side["airfield"] = {"territory": where}
    side["lost"] -= cost
    turn["bought"].append(item)


def _turn_in(state: dict[str, Any], action: Mapping[str, Any]) -> None:
    turn = state["turn"]
    player = turn["player"]
    require(turn["stars_turned_in"] == 0, f"{player} has already turned in cards this turn")
    stars = field(action, "stars", list)
    hand = list(state["sides"][player]["cards"])
    for s in stars:
        require(type(s) is int and s in (1, 2), f"'stars': {s!r} is not a card's star count")
        require(s in hand, f"'stars': {player} has no more {s}-star cards")
        hand.remove(s)
    total = sum(stars)
    require(total in CARD_TROOPS, f"cards are turned in for 2 to 10 stars, not {total}")
    _advance(state, "reinforce")
    state["sides"][player]["cards"] = hand
    state["discard"] += len(stars)
    turn["stars_turned_in"] = total


def _reinforce(state: dict[str, Any], action: Mapping[str, Any]) -> None:
    player = state["turn"]["player"]
    side = state["sides"][player]
    require(side["territories"] is not None, f"enter {player}'s territory and city counts first, to work out the troops")
    if side.get("region_bonus_due"):
        raise RuleError(f"{player} lost a region the typed region bonus counted: enter region_bonus again (or tick the regions held)")
    require(_region_bonus(state, side) is not None, f"a region {player} holds has no bonus in the map data: enter region_bonus")
    require(_breakdown(state, player) is not None, f"{player}'s counts do not fit together (capitals or cities exceed territories): correct them")
    _advance(state, "attack")


def _attack(state: dict[str, Any], action: Mapping[str, Any]) -> None:
    require(state["attack"] is None, "finish or call off the attack under way first")
    turn = state["turn"]
    player = turn["player"]
    uprising = field(action, "uprising", bool, default=False)
    held_by = None if action.get("to") is None else _known_owner(state, territory(action["to"], "to"))
    if "defender" in action or held_by is None:
        defender = _side(state, action, "defender")
    else:
        # The tracker already knows who holds the target (in Command Post the neutral starts
        # on every object), so the table need not say.
        require(uprising or held_by != player, f"'to': {territory(action['to'], 'to')} is {player}'s own territory")
        defender = held_by
    if uprising:
        require(turn["uprisings"] > 0, f"{player} has no Uprising to use this turn")
        require(defender == _opponent(state, player), "'defender': an uprising strikes the opponent's territory")
        require(turn["phase"] in ("support", "reinforce", "attack"), "an uprising happens during the turn, before its end")
        attacker = NEUTRAL
    else:
        require(defender != player, "'defender': a player cannot attack himself")
        _advance(state, "attack")
        attacker = player
    attackers = field(action, "attackers", int)
    defenders = field(action, "defenders", int)
    require(attackers >= 1, "'attackers': at least one army must be able to attack (one always stays behind)")
    require(defenders >= 1, "'defenders': the attacked territory holds at least one army")
    require(attackers <= MAX_TROOPS, f"'attackers': an army has at most {MAX_TROOPS} troops, not {attackers}")
    require(defenders <= MAX_TROOPS, f"'defenders': an army has at most {MAX_TROOPS} troops, not {defenders}")
    source = action.get("from")
    target = action.get("to")
    if source is not None:
        source = territory(source, "from")
        owner = _known_owner(state, source)
        require(owner in (None, attacker), f"'from': {source} is held by {owner}")
    if target is not None:
        target = territory(target, "to")
        owner = _known_owner(state, target)
        require(owner in (None, defender), f"'to': {target} is held by {owner}, not {defender}")
        require(source is None or source != target, "'to' must differ from 'from'")
        atlas = _atlas(state)
        if source is not None and (source in atlas.borders_complete or target in atlas.borders_complete):
            require(target in atlas.adjacent[source], f"'to': {target} does not border {source}")
    rough = bool(_flag(action, "rough")) or (target in _atlas(state).rough)
    is_object = bool(_flag(action, "object")) or (target in OBJECTS)
    city = _flag(action, "city")
    if city is None:
        city = target is not None and state["cities"] is not None and target in state["cities"]
    capital = None
    if target is not None:
        capital = next((p for p, where in state["capital_sites"].items() if where == target), None)
    given_capital = action.get("capital")
    if given_capital is not None:
        require(given_capital in state["players"], f"'capital': {given_capital!r} is not a player's capital")
        capital = given_capital

    unsure: list[dict[str, Any]] = []

    def airfield(side_name: str, key: str) -> bool:
        flag = _flag(action, key)
        if side_name == NEUTRAL:
            require(not flag, f"'{key}': airfields never help neutral dice")
            return False
        strip = state["sides"][side_name]["airfield"]
        if flag is not None:
            require(not flag or strip is not None, f"'{key}': {side_name} has no airfield")
            return flag
        if strip is None:
            return False
        reaches = airfield_reaches(strip["territory"], source, target, state.get("airfield_reach", "attacked"), _atlas(state))
        if reaches is None:
            # Left without the bonus, but the page says so: the table knows where it stands.
            unsure.append({"player": side_name, "territory": strip["territory"], "flag": key})
        return bool(reaches)

    state["attack"] = {
        "attacker": attacker,
        "defender": defender,
        "attackers": attackers,
        "defenders": defenders,
        "start": [attackers, defenders],
        "from": source,
        "to": target,
        "rough": rough,
        "special_forces": turn["special_forces"] and not uprising,
        "object": is_object,
        "recon": turn["recon"] if is_object and not uprising else 0,
        "attacker_airfield": airfield(attacker, "attacker_airfield"),
        "defender_airfield": airfield(defender, "defender_airfield"),
        "airfield_unsure": unsure,
        "city": bool(city),
        "capital": capital,
        "uprising": uprising,
        "rolls": [],
    }


def _dice_list(action: Mapping[str, Any], key: str, most: int) -> list[int]:
    values = field(action, key, list)
    require(1 <= len(values) <= most, f"'{key}': roll 1 to {most} dice here, not {len(values)}")
    for v in values:
        require(type(v) is int and 1 <= v <= 6, f"'{key}': {v!r} is not a die value 1-6")
    return values


def _battle(state: dict[str, Any], action: Mapping[str, Any]) -> None:
    attack = state["attack"]
    require(attack is not None, "declare an attack before rolling a battle")
    cap = _attack_cap(attack["rough"], attack["special_forces"])
    most_attack = min(attack["attackers"], cap)
    attack_dice = _dice_list(action, "attacker_dice", most_attack)
    most_defend = min(attack["defenders"], 2)
    defend_dice = _dice_list(action, "defender_dice", most_defend)
    if attack["defender"] == NEUTRAL:
        require(len(defend_dice) == most_defend, f"'defender_dice': the neutral army defends with {most_defend} dice here")
    protected = min(attack["recon"], len(attack_dice))
    require(
        sum(1 for v in attack_dice if v == 1) <= len(attack_dice) - protected,
        f"'attacker_dice': Recon rerolls ones on {protected} of these dice",
    )
    attacker_losses, defender_losses = dice.compare_dice(
        attack_dice, defend_dice, int(attack["attacker_airfield"]), int(attack["defender_airfield"])
    )
    attack["attackers"] -= attacker_losses
    attack["defenders"] -= defender_losses
    attack["rolls"].append(
        {
            "attacker_dice": sorted(attack_dice, reverse=True),
            "defender_dice": sorted(defend_dice, reverse=True),
            "attacker_losses": attacker_losses,
            "defender_losses": defender_losses,
        }
    )
    _lose(state, attack["attacker"], attacker_losses)
    _lose(state, attack["defender"], defender_losses)
    if attack["defenders"] == 0:
        _conquer(state, attack)
        _close_attack(state, "conquered")
    elif attack["attackers"] == 0:
        _close_attack(state, "repelled")
    elif attack["uprising"] and attacker_losses > 0:
        _close_attack(state, "uprising spent")


def _conquer(state: dict[str, Any], attack: Mapping[str, Any]) -> None:
    winner, loser = state["sides"][attack["attacker"]], state["sides"][attack["defender"]]
    keys = ["territories"] + (["cities"] if attack["city"] else [])
    for key in keys:
        if winner[key] is not None:
            winner[key] = min(winner[key] + 1, TERRITORY_COUNT if key == "territories" else CITY_COUNT)
        if loser[key] is not None:
            loser[key] = max(0, loser[key] - 1)
    if loser["territories"] is not None and loser["cities"] is not None:
        # A lost territory whose city the tracker did not know about still took that city along.
        loser["cities"] = min(loser["cities"], loser["territories"])
    capital = attack["capital"]
    if capital is not None and attack["defender"] != NEUTRAL and capital in loser["capitals"]:
        loser["capitals"].remove(capital)
        if attack["attacker"] != NEUTRAL:
            winner["capitals"].append(capital)
    if attack["to"] is not None:
        if attack["defender"] != NEUTRAL:
            _lose_regions(state, attack["defender"], attack["to"])
        state["owners"][attack["to"]] = attack["attacker"]
        if attack["defender"] != NEUTRAL:
            strip = loser["airfield"]
            if strip is not None and strip["territory"] == attack["to"]:
                loser["airfield"] = None
    if attack["attacker"] == state["turn"]["player"] and attack["defender"] != NEUTRAL:
        state["turn"]["conquered_enemy"] = True
    _check_elimination(state)


def _close_attack(state: dict[str, Any], outcome: str) -> None:
    attack = state["attack"]
    if attack["uprising"]:
        state["turn"]["uprisings"] -= 1
    state["last_battle"] = {**attack, "outcome": outcome}
    state["attack"] = None


def _stop_attack(state: dict[str, Any], action: Mapping[str, Any]) -> None:
    attack = state["attack"]
    require(attack is not None, "there is no attack to call off")
    require(not attack["uprising"], "an uprising fights on until it takes the territory or loses a troop")
    _close_attack(state, "called off")


def _take_mission(state: dict[str, Any], action: Mapping[str, Any]) -> None:
    require(state["attack"] is None, "finish the attack under way before taking a mission")
    turn = state["turn"]
    player = turn["player"]
    mission = field(action, "mission", str)
    require(mission in MISSIONS, f"'mission': unknown mission {mission!r}")
    require(mission in state["board_missions"], f"'mission': {MISSIONS[mission]['title']} is not on the board")
    taken_by = next((p for p in state["players"] if mission in state["sides"][p]["missions"]), None)
    require(taken_by is None, f"'mission': {taken_by} already took {MISSIONS[mission]['title']}")
    require(turn["mission"] is None, f"{player} already took a mission this turn")
    require(not turn["maneuver_done"] and not turn["card_drawn"], "missions are taken before the troop movement and the card")
    status = mission_status(state, player, mission)
    require(status is not False, f"by the tracker's counts {player} does not meet '{MISSIONS[mission]['title']}': update the counts first")
    _advance(state, "end")
    state["sides"][player]["missions"].append(mission)
    turn["mission"] = mission


def _maneuver(state: dict[str, Any], action: Mapping[str, Any]) -> None:
    require(state["attack"] is None, "finish the attack under way before moving troops")
    turn = state["turn"]
    require(not turn["maneuver_done"], "only one troop movement is allowed at the end of a turn")
    _advance(state, "end")
    turn["maneuver_done"] = True


def _card_due(state: Mapping[str, Any]) -> bool:
    turn = state["turn"]
    return turn["conquered_enemy"] and turn["mission"] is None and not turn["card_drawn"]


def _draw_card(state: dict[str, Any], action: Mapping[str, Any]) -> None:
    require(state["attack"] is None, "finish the attack under way first")
    turn = state["turn"]
    player = turn["player"]
    require(not turn["card_drawn"], f"{player} has already drawn this turn's card")
    require(turn["mission"] is None, "no card in a turn in which a mission was taken")
    require(turn["conquered_enemy"], f"{player} conquered no enemy territory this turn (neutral ones do not count)")
    stars = _stars(action)
    _advance(state, "end")
    _draw(state, player, stars)
    turn["card_drawn"] = True


def _remove_airfield(state: dict[str, Any], action: Mapping[str, Any]) -> None:
    player = _side(state, action, neutral=False)
    require(state["sides"][player]["airfield"] is not None, f"{player} has no airfield")
    state["sides"][player]["airfield"] = None


def _end_turn(state: dict[str, Any], action: Mapping[str, Any]) -> None:
    require(state["attack"] is None, "finish or call off the attack under way first")
    turn = state["turn"]
    player = turn["player"]
    require(
        not _card_due(state) or state["deck"] + state["discard"] == 0,
        f"{player} conquered an enemy territory this turn: draw a card first (say how many stars it shows)",
    )
    _advance(state, "end")
    side = state["sides"][player]
    if len(side["missions"]) >= MISSIONS_TO_WIN and player in side["capitals"]:
        _win(state, player, f"{player} completed {len(side['missions'])} missions holding the capital")
        return
    state["turn"] = _new_turn(turn["number"] + 1, _opponent(state, player))
    state["turn"]["phase"] = _start_phase(state)


# Actions anyone at the table may enter at any time, e.g. to correct a count.
TABLE_ACTIONS = {"set_counts": _set_counts, "set_owner": _set_owner, "remove_airfield": _remove_airfield}
TURN_ACTIONS = {
    "neutral_resistance": _neutral_resistance,
    "buy": _buy,
    "turn_in": _turn_in,
    "reinforce": _reinforce,
    "attack": _attack,
    "battle": _battle,
    "stop_attack": _stop_attack,
    "take_mission": _take_mission,
    "maneuver": _maneuver,
    "draw_card": _draw_card,
    "end_turn": _end_turn,
}
ACTION_TYPES = tuple(TABLE_ACTIONS) + tuple(TURN_ACTIONS)


def act(state: Mapping[str, Any], action: Mapping[str, Any]) -> dict[str, Any]:
    """Apply one action to a copy of `state`; RuleError if the rules forbid it."""
    require(isinstance(action, Mapping), "an action must be a mapping")
    kind = field(action, "type", str)
    require(kind in ACTION_TYPES, f"unknown action type {kind!r} (known: {', '.join(ACTION_TYPES)})")
    require(state["winner"] is None, f"the game is over: {state['winner']} won")
    if kind in TURN_ACTIONS and "player" in action:
        # A button or page naming the actor lets the tracker catch out-of-turn presses.
        actor = field(action, "player", str)
        require(actor == state["turn"]["player"], f"it is {state['turn']['player']}'s turn, not {actor}'s")
    new_state = copy.deepcopy(dict(state))
    handler = TABLE_ACTIONS.get(kind) or TURN_ACTIONS[kind]
    handler(new_state, action)
    return new_state


# ---------------------------------------------------------------- view


def _ratio(p: Fraction) -> float:
    return float(p)


def _attack_view(state: Mapping[str, Any], attack: Mapping[str, Any]) -> dict[str, Any]:
    cap = _attack_cap(attack["rough"], attack["special_forces"])
    attack_dice = min(attack["attackers"], cap)
    defend_dice = min(attack["defenders"], 2)
    roll = dice.roll_distribution(
        attack_dice, defend_dice, int(attack["attacker_airfield"]), int(attack["defender_airfield"]), min(attack["recon"], attack_dice)
    )
    view: dict[str, Any] = {
        key: attack[key]
        for key in (
            "attacker", "defender", "attackers", "defenders", "from", "to", "rough", "special_forces",
            "object", "recon", "attacker_airfield", "defender_airfield", "city", "capital", "uprising",
        )
    }
    view["airfield_unsure"] = [dict(u) for u in attack.get("airfield_unsure", [])]
    view["start"] = list(attack["start"])
    view["rolls"] = [dict(r) for r in attack["rolls"]]
    view["attacker_dice"] = attack_dice
    view["defender_dice"] = defend_dice
    view["next_roll"] = [
        {"attacker_losses": la, "defender_losses": ld, "p": _ratio(p), "exact": f"{p.numerator}/{p.denominator}"}
        for (la, ld), p in roll.items()
    ]
    if attack["uprising"]:
        view["conquest"] = _ratio(uprising_probability(attack["attackers"], attack["defenders"], attack["rough"], attack["defender_airfield"]))
        view["outcomes"] = []
        return view
    outcomes = attack_odds(
        attack["attackers"], attack["defenders"], attack["rough"], attack["special_forces"],
        attack["attacker_airfield"], attack["defender_airfield"], attack["recon"],
    )
    conquest = sum((p for (kind, _), p in outcomes.items() if kind == "won"), Fraction(0))
    view["conquest"] = _ratio(conquest)
    view["expected_attacker_losses"] = _ratio(
        sum((p * (attack["attackers"] - left) for (kind, left), p in outcomes.items() if kind == "won"), Fraction(0))
        + sum((p * attack["attackers"] for (kind, _), p in outcomes.items() if kind == "lost"), Fraction(0))
    )
    view["outcomes"] = [{"result": kind, "left": left, "p": _ratio(p)} for (kind, left), p in outcomes.items()]
    return view


def _player_view(state: Mapping[str, Any], player: str) -> dict[str, Any]:
    side = state["sides"][player]
    statuses = {m: mission_status(state, player, m) for m in state["board_missions"] if m not in _taken(state)}
    return {
        "name": player,
        "colour": state["colours"][player],
        "territories": side["territories"],
        "cities": side["cities"],
        "troops": side["troops"],
        "regions": list(side["regions"]) if side["regions"] is not None else None,
        "region_bonus": _region_bonus(state, side),
        "region_bonus_typed": side["region_bonus"],
        "region_bonus_due": bool(side.get("region_bonus_due")),
        "capitals": list(side["capitals"]),
        "holds_own_capital": player in side["capitals"],
        "cards": list(side["cards"]),
        "card_stars": sum(side["cards"]),
        "card_troops": CARD_TROOPS.get(min(sum(side["cards"]), 10), 0),
        "missions": [{"id": m, "title": MISSIONS[m]["title"]} for m in side["missions"]],
        "missions_done": len(side["missions"]),
        "missions_ready": [m for m, ok in statuses.items() if ok],
        "lost": side["lost"],
        "airfield": dict(side["airfield"]) if side["airfield"] is not None else None,
        "capital_site": state["capital_sites"][player],
    }


def _taken(state: Mapping[str, Any]) -> set[str]:
    return {m for p in state["players"] for m in state["sides"][p]["missions"]}


def _message(state: Mapping[str, Any]) -> str:
    if state["winner"] is not None:
        return f"{state['winner']} wins: {state['win_reason']}."
    turn = state["turn"]
    player = turn["player"]
    if state["attack"] is not None:
        attack = state["attack"]
        who = "the neutral uprising" if attack["uprising"] else player
        return f"Battle: {who} ({attack['attackers']}) against {attack['defender']} ({attack['defenders']}) - roll the dice."
    phase = turn["phase"]
    if phase == "resistance":
        lost = state["sides"][NEUTRAL]["lost"]
        return f"{player}: roll two dice for neutral resistance ({lost} lost, need {resistance_threshold(lost)}+), or skip it."
    if phase == "support":
        return f"{player}: buy rear support with {state['sides'][player]['lost']} lost troops, or go on to raise troops."
    if phase == "reinforce":
        if state["sides"][player]["territories"] is None:
            return f"{player}: enter territory and city counts to work out new troops."
        return f"{player}: turn in cards if you wish, then take your new troops."
    if phase == "attack":
        return f"{player}: attack, or take a mission and end the turn."
    if _card_due(state):
        return f"{player}: draw your card, then end the turn."
    return f"{player}: move troops once if you wish, then end the turn."


def view(state: Mapping[str, Any]) -> dict[str, Any]:
    """Everything the page shows, as JSON-safe data."""
    turn = state["turn"]
    player = turn["player"]
    taken = {m: p for p in state["players"] for m in state["sides"][p]["missions"]}
    breakdown = turn["reinforcements"] if _phase_index(turn["phase"]) > _phase_index("reinforce") else _breakdown(state, player)
    neutral = state["sides"][NEUTRAL]
    resistance = None
    if state["variant"] == "command_post" and neutral["lost"] > 0:
        needed = resistance_threshold(neutral["lost"])
        resistance = {
            "lost": neutral["lost"],
            "needed": needed,
            "chance": _ratio(two_dice_at_least(needed)),
            "would_return": ceil(neutral["lost"] / 2),
        }
    lost_now = state["sides"][player]["lost"]
    return {
        "game": "risk",
        "title": ENGINE.title,
        "variant": state["variant"],
        "setup": state["setup"],
        "airfield_reach": state.get("airfield_reach", "attacked"),
        "players": [_player_view(state, p) for p in state["players"]],
        "neutral": {
            "territories": neutral["territories"],
            "cities": neutral["cities"],
            "troops": neutral["troops"],
            "lost": neutral["lost"],
            "table": list(NEUTRAL_TABLE),
        },
        "turn": {
            "number": turn["number"],
            "player": player,
            "phase": turn["phase"],
            "phase_label": PHASE_LABELS[turn["phase"]],
            "phases": [p for p in PHASES if state["variant"] == "command_post" or p not in ("resistance", "support")],
            "stars_turned_in": turn["stars_turned_in"],
            "bought": list(turn["bought"]),
            "special_forces": turn["special_forces"],
            "recon": turn["recon"],
            "uprisings": turn["uprisings"],
            "maneuver_done": turn["maneuver_done"],
            "conquered_enemy": turn["conquered_enemy"],
            "mission": turn["mission"],
            "card_due": _card_due(state),
            "card_drawn": turn["card_drawn"],
        },
        "reinforcements": dict(breakdown) if breakdown is not None else None,
        "reinforcements_frozen": _phase_index(turn["phase"]) > _phase_index("reinforce"),
        "card_table": [{"stars": s, "troops": t} for s, t in CARD_TROOPS.items()],
        "attack": _attack_view(state, state["attack"]) if state["attack"] is not None else None,
        "last_battle": _last_battle_view(state["last_battle"]),
        "resistance": resistance,
        "last_resistance": dict(state["last_resistance"]) if state["last_resistance"] else None,
        "purchases": [
            {"item": item, "label": label, "cost": cost, "affordable": lost_now >= cost}
            for item, (cost, label) in PURCHASES.items()
        ] if state["variant"] == "command_post" else [],
        "missions": [
            {
                "id": m,
                "title": MISSIONS[m]["title"],
                "taken_by": taken.get(m),
                "status": {p: mission_status(state, p, m) for p in state["players"]},
            }
            for m in state["board_missions"]
        ],
        "missions_to_win": MISSIONS_TO_WIN,
        "deck": state["deck"],
        "discard": state["discard"],
        "territory_names": list(TERRITORIES),
        "owners": {t: state["owners"][t] for t in TERRITORIES if t in state["owners"]},
        "regions": {name: {"bonus": r["bonus"], "territories": list(r["territories"])} for name, r in _atlas(state).regions.items()},
        "map": _map_view(state),
        "winner": state["winner"],
        "over": state["winner"] is not None,
        "message": _message(state),
    }


def _map_view(state: Mapping[str, Any]) -> dict[str, Any]:
    """What the page's Map form needs: the names, and what is known or still missing."""
    atlas = _atlas(state)
    return {
        "game": "risk",
        "borders_known": sorted(atlas.borders_complete),
        "rough": sorted(atlas.rough),
        "rough_count": ROUGH_COUNT,
        "regions_missing_bonus": [r for r, spec in atlas.regions.items() if spec["bonus"] is None],
        "completed": dict(state.get("map") or {}),
    }


def _last_battle_view(last: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if last is None:
        return None
    return {
        "attacker": last["attacker"],
        "defender": last["defender"],
        "from": last["from"],
        "to": last["to"],
        "outcome": last["outcome"],
        "start": list(last["start"]),
        "end": [last["attackers"], last["defenders"]],
        "rolls": [dict(r) for r in last["rolls"]],
    }


def scores(state: Mapping[str, Any]) -> dict[str, int]:
    """Missions completed per player."""
    return {p: len(state["sides"][p]["missions"]) for p in state["players"]}


ENGINE = Engine(name="risk", title="Risk: Balance of Power", new=new, act=act, view=view, scores=scores, seats=(2, 2, 2),
                default_names=("Red", "Blue"), colours=("red", "blue", "green", "yellow", "black", "white"),
                setup_options=(
                    {"key": "setup", "label": "Set-up", "kind": "choice",
                     "help": "which Basic Training leaflet the board was filled from (its missions and cities come with it), "
                             "or Command Post with the missions drawn for it",
                     "choices": [{"label": f"Basic Training {n}", "options": {"variant": "basic", "setup": n}} for n in sorted(SETUPS)]
                     + [{"label": "Command Post", "options": {"variant": "command_post"}}]},
                    {"key": "missions", "label": f"The {MISSIONS_ON_BOARD} missions drawn for the board", "kind": "pick",
                     "count": MISSIONS_ON_BOARD, "when": {"variant": "command_post"},
                     "help": "tick the mission cards laid out at the start",
                     "choices": [{"value": m, "label": spec["title"]} for m, spec in MISSIONS.items()]},
                    {"key": "airfield_reach", "label": "Airfields help", "kind": "choice",
                     "help": "where an airfield adds its +1 when the map cannot say which territories it borders",
                     "choices": [{"label": "attacks into or out of its own territory (our reading)", "options": {"airfield_reach": "attacked"}},
                                 {"label": "also every attack from a territory next to it", "options": {"airfield_reach": "either"}}]},
                ),
                option_keys=OPTION_KEYS)


def engine(map_data: Mapping[str, Any] | None = None) -> Engine:
    """The engine with the players' completion of the map (MAP_FORM-checked data) in every state it sees."""
    if not map_data:
        return ENGINE
    return with_map(ENGINE, new, act, view, map_data)
