"""Risk: Balance of Power -- missions and cards: whether a player meets a mission, taking one,
turning in cards for troops and the card a conquest earns.
"""

from __future__ import annotations

from typing import Any, Mapping

from companion.games.base import RuleError, field, require
from companion.games.risk_board import CARD_TROOPS, MISSIONS, NEUTRAL, ROUGH_COUNT, _BY_KEY, _atlas, _key
from companion.games.risk_state import _advance, _draw, _known_owner, _region_members, _stars


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
