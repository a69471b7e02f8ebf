"""Risk: Balance of Power -- combat: declaring an attack (with its terrain, objects and airfields),
the rolls of a battle, and what a conquest takes from the loser.
"""

from __future__ import annotations

from typing import Any, Mapping

from companion.games import dice
from companion.games.base import field, require
from companion.games.risk_board import (
    CITY_COUNT,
    MAX_TROOPS,
    NEUTRAL,
    OBJECTS,
    TERRITORY_COUNT,
    _atlas,
    airfield_reaches,
    territory,
)
from companion.games.risk_odds import _attack_cap
from companion.games.risk_state import (
    _advance,
    _check_elimination,
    _destroy_airfields,
    _flag,
    _known_owner,
    _lose,
    _lose_regions,
    _opponent,
    _side,
)


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
        if _known_owner(state, strip["territory"]) not in (None, side_name):
            # it stands on a territory its owner no longer holds, so it helps nobody
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
    require(1 <= len(values) <= most, f"'{key}': roll 1 to {most} dice, not {len(values)}")
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
        _destroy_airfields(state, attack["to"], attack["attacker"])
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
