"""Risk: Balance of Power -- reinforcements, exact battle odds, missions and the Command Post tables.

The tracker sits beside the real board: it never needs to know where every army
stands. Players enter (or let battles update) a few counts per side, and the
tracker does the sums the table would otherwise do by hand. Where the map data
in data/risk_map.toml is complete enough it checks more (rough terrain, cities,
capitals, mission territories); where it is not, it trusts the counts and the
ticks on the page.

The board and the box's tables live in risk_board.py, the arithmetic of troops in
risk_rules.py, the battle odds in risk_odds.py, the helpers the actions share in
risk_state.py, and the actions of a family each in risk_combat.py,
risk_missions_cards.py and risk_command_post.py. This module sets a game up, takes
the table's corrections and the turn's remaining steps, and builds the page's view:
it is the engine the daemon loads, and every name the rest of the code reads from
it is here.
"""

from __future__ import annotations

import copy
from fractions import Fraction
from math import ceil
from typing import Any, Mapping

from companion.games.mapdata import with_map
from companion.games import dice
from companion.games.base import Engine, RuleError, field, require
from companion.games.names import colour, player_name
from companion.games.risk_board import (
    ADJACENT,
    AIRFIELD_REACHES,
    BORDERS_COMPLETE,
    CARD_COUNT,
    CARD_TROOPS,
    CITY_COUNT,
    MAP,
    MAP_FORM,
    MAX_REGION_BONUS,
    MAX_TROOPS,
    MIN_BASE,
    MISSIONS,
    MISSIONS_ON_BOARD,
    MISSIONS_TO_WIN,
    NEUTRAL,
    NEUTRAL_TABLE,
    OBJECTS,
    PHASES,
    PHASE_LABELS,
    PURCHASES,
    REGIONS,
    ROUGH,
    ROUGH_COUNT,
    SETUPS,
    SHIPPED,
    START_TROOPS,
    TERRITORIES,
    TERRITORY_COUNT,
    VARIANTS,
    Atlas,
    _atlas,
    _region,
    airfield_reaches,
    borders,
    territory,
)
from companion.games.risk_rules import (
    card_troops,
    reinforcement_breakdown,
    reinforcements,
    resistance_return,
    resistance_threshold,
    two_dice_at_least,
)
from companion.games.risk_odds import (
    _attack_cap,
    attack_odds,
    conquest_probability,
    roll_odds,
    uprising_probability,
)
from companion.games.risk_state import (
    _advance,
    _breakdown,
    _check_elimination,
    _destroy_airfields,
    _maybe_count,
    _new_turn,
    _opponent,
    _phase_index,
    _region_bonus,
    _side,
    _start_phase,
    _win,
)
from companion.games.risk_missions_cards import (
    _card_due,
    _draw_card,
    _take_mission,
    _turn_in,
    mission_status,
)
from companion.games.risk_combat import (
    _attack,
    _battle,
    _stop_attack,
)
from companion.games.risk_command_post import (
    _buy,
    _neutral_resistance,
)

__all__ = [
    "ADJACENT",
    "AIRFIELD_REACHES",
    "Atlas",
    "BORDERS_COMPLETE",
    "CARD_COUNT",
    "CARD_TROOPS",
    "CITY_COUNT",
    "ENGINE",
    "MAP",
    "MAP_FORM",
    "MAX_REGION_BONUS",
    "MAX_TROOPS",
    "MIN_BASE",
    "MISSIONS",
    "MISSIONS_ON_BOARD",
    "MISSIONS_TO_WIN",
    "NEUTRAL",
    "NEUTRAL_TABLE",
    "OBJECTS",
    "PHASES",
    "PHASE_LABELS",
    "PURCHASES",
    "REGIONS",
    "ROUGH",
    "ROUGH_COUNT",
    "SETUPS",
    "SHIPPED",
    "START_TROOPS",
    "TERRITORIES",
    "TERRITORY_COUNT",
    "VARIANTS",
    "act",
    "airfield_reaches",
    "attack_odds",
    "borders",
    "card_troops",
    "conquest_probability",
    "dice",
    "engine",
    "mission_status",
    "new",
    "reinforcement_breakdown",
    "reinforcements",
    "resistance_return",
    "resistance_threshold",
    "roll_odds",
    "scores",
    "territory",
    "two_dice_at_least",
    "uprising_probability",
    "view",
]


# ---------------------------------------------------------------- new


# what a player may choose at New game (the page offers these and paints them)
COLOURS = ("red", "blue", "green", "yellow", "black", "white")
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
        names.append(player_name(name.strip(), "'players': a player's name"))
    require(names[0] != names[1], "'players' must be two different names")
    return names


def new(options: Mapping[str, Any], map_data: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A game before the first turn. See OPTION_KEYS; every option is checked."""
    require(isinstance(options, Mapping), "options must be a mapping")
    for key in options:
        require(key in OPTION_KEYS, f"unknown option '{key}' (known: {', '.join(OPTION_KEYS)})")
    players = _option_players(options)
    given_colours = options.get("colours", {players[0]: "red", players[1]: "blue"})
    require(isinstance(given_colours, Mapping) and set(given_colours) == set(players), "'colours' must give a colour to each player")
    # only the game's own colours: the page paints them, so anything else would be style text from a stranger
    colours = {p: colour(given_colours[p], COLOURS, f"'colours': {p}'s colour") for p in players}
    require(colours[players[0]] != colours[players[1]], f"'colours': both players chose {colours[players[0]]}")
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
    _destroy_airfields(state, where, owner)


def _reinforce(state: dict[str, Any], action: Mapping[str, Any]) -> None:
    player = state["turn"]["player"]
    side = state["sides"][player]
    require(side["territories"] is not None, f"enter {player}'s territory and city counts first, to work out the troops")
    if side.get("region_bonus_due"):
        raise RuleError(f"{player} lost a region the typed region bonus counted: enter region_bonus again (or tick the regions held)")
    require(_region_bonus(state, side) is not None, f"a region {player} holds has no bonus in the map data: enter region_bonus")
    require(_breakdown(state, player) is not None, f"{player}'s counts do not fit together (capitals or cities exceed territories): correct them")
    _advance(state, "attack")


def _maneuver(state: dict[str, Any], action: Mapping[str, Any]) -> None:
    require(state["attack"] is None, "finish the attack under way before moving troops")
    turn = state["turn"]
    require(not turn["maneuver_done"], "only one troop movement is allowed at the end of a turn")
    _advance(state, "end")
    turn["maneuver_done"] = True


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
        if _card_due(state):
            # End turn waits for the card: the prompt says so, not only the greyed button
            return f"{player}: attack again, or say which card was drawn (Cards) or take a mission, then end the turn."
        return f"{player}: attack, or take a mission and end the turn."
    if _card_due(state):
        return f"{player}: say which card was drawn (Cards), then end the turn."
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
            "round": turn["round"],
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
                default_names=("Red", "Blue"), colours=COLOURS,
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
