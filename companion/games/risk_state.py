"""Risk: Balance of Power -- the state helpers the actions share: sides and arguments, the turn's
phases and the troops raised on the way, region bonuses, losses, the card deck and the win.
"""

from __future__ import annotations

from typing import Any, Mapping

from companion.games.base import field, require
from companion.games.risk_board import MAX_TROOPS, NEUTRAL, NEUTRAL_TABLE, PHASE_LABELS, PHASES, REGIONS, _atlas
from companion.games.risk_rules import reinforcement_breakdown


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
        "number": number,      # turns played in all, this one included (each player's turn counts one)
        # The two players take turns in strict alternation (a player left with no territory ends the
        # game), so every second turn opens a round: the count the table says aloud.
        "round": (number + 1) // 2,
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
        if breakdown is not None:
            _add_troops(state, turn["player"], breakdown["total"], "raising troops")
    turn["phase"] = phase


def _add_troops(state: dict[str, Any], side_name: str, n: int, what: str) -> None:
    """Count `n` new troops on the board for `side_name`, every one of them.

    MAX_TROOPS is the tracker's bound, not the box's: a raise past it is refused, never cut
    short, and the table may go on by leaving the count blank.
    """
    side = state["sides"][side_name]
    if side["troops"] is None:
        return
    after = side["troops"] + n
    who = "the neutral army" if side_name == NEUTRAL else side_name
    require(
        after <= MAX_TROOPS,
        f"{what} would bring {who} to {after} troops, but the tracker counts at most {MAX_TROOPS} troops a side; "
        f"every new troop is placed, so leave {who}'s troop count blank to go on",
    )
    side["troops"] = after


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


def _destroy_airfields(state: dict[str, Any], where: str, owner: str) -> None:
    """A territory now held by `owner`: any other player's airfield standing on it is destroyed.

    However the tracker learns of the change (a battle naming the territory, or the table
    entering its owner), the airfield goes; its owner may build one again later.
    """
    for player in state["players"]:
        strip = state["sides"][player]["airfield"]
        if player != owner and strip is not None and strip["territory"] == where:
            state["sides"][player]["airfield"] = None


def _win(state: dict[str, Any], player: str, reason: str) -> None:
    state["winner"] = player
    state["win_reason"] = reason


def _check_elimination(state: dict[str, Any]) -> None:
    for player in state["players"]:
        if state["sides"][player]["territories"] == 0 and state["winner"] is None:
            _win(state, _opponent(state, player), f"{player} has no territory left")
