"""Risk: Balance of Power -- the Command Post steps: the neutral army's resistance roll and rear support bought with lost troops."""

from __future__ import annotations

from typing import Any, Mapping

from companion.games.base import field, require
from companion.games.risk_board import NEUTRAL, PURCHASES, territory
from companion.games.risk_rules import resistance_return, resistance_threshold
from companion.games.risk_state import _add_troops, _advance, _draw, _known_owner, _stars


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
    _add_troops(state, NEUTRAL, returned, "neutral resistance")
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
        _add_troops(state, player, 3, "3 Additional Troops")
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
