"""Imperial 2030 -- moving on the rondel: its cost, passing Investor and the Swiss banks' block, and
the landing that opens the space's action.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping

from companion.games.base import RuleError, field, require
from companion.games.imperial_rules import RONDEL_NAMES, passes_investor, rondel_cost
from companion.games.imperial_state import (
    BANK,
    FACTORY,
    IMPORT,
    MANEUVER,
    MOVE,
    PASS_CHECK,
    PRODUCTION,
    Nation,
    State,
    _cash,
    _interest_due,
    _name,
    _nation,
    _nation_arg,
    _note,
    _only_keys,
    _player,
    _player_arg,
    _secret,
    _shortfall_message,
    _swiss_banks,
    _transfer,
    _with_nation,
)
from companion.games.imperial_phases import _expect_phase, _production_limits
from companion.games.imperial_investment import _after_action, _open_investor, _pay_interest
from companion.games.imperial_spaces import _build_sites, _taxation


def _may_be_blocked(state: State, nation: Nation) -> bool:
    """Whether a block is possible now or after the Swiss banks donate what the treasury lacks."""
    short = sum(_interest_due(state, nation.id).values()) - nation.treasury
    banks = _swiss_banks(state)
    if any(name in _secret(state) for name in banks):
        # asking only when the hidden cash would cover the gap would tell the table how much it is
        return True
    return bool(banks) and short <= sum(_player(state, name).cash for name in banks)


def _interest_shortfall(state: State, nation: Nation) -> int:
    """What the government must add from its own cash if the nation pays interest now."""
    due = _interest_due(state, nation.id)
    others = sum(v for k, v in due.items() if k != nation.government)
    return max(0, others - nation.treasury)


def _rondel(state: State, action: Mapping[str, Any]) -> State:
    _only_keys(action, {"nation", "target"})
    nation_id = _nation_arg(action)
    _expect_phase(state, (MOVE,), "rondel")
    mover = state.nations[state.turn]
    require(nation_id == mover.id, f"it is {_name(mover.id)}'s turn on the rondel, not {_name(nation_id)}'s")
    target = field(action, "target", str)
    try:
        cost = rondel_cost(mover.rondel, target, mover.power_points)
        passing = passes_investor(mover.rondel, target)
    except ValueError as error:
        raise RuleError(str(error)) from None
    require(
        not (passing and state.pass_blocked),
        f"a Swiss bank has stopped {_name(mover.id)} from passing Investor this turn; choose a space up to Investor",
    )
    government = mover.government
    assert government is not None
    need = cost + (_interest_shortfall(state, mover) if target == "investor" else 0)
    has = _player(state, government).cash
    purpose = f"moving {_name(mover.id)} to {RONDEL_NAMES[target]}"
    if need > cost:
        purpose += " (with the interest the treasury cannot pay)"
    require(has >= need, _shortfall_message(state, _cash(government), has, need, purpose))
    if passing and _may_be_blocked(state, mover):
        state = replace(state, phase=PASS_CHECK, pending=target)
        return _note(state, f"{_name(mover.id)} wants to pass Investor on the way to {RONDEL_NAMES[target]}")
    return _move(state, target)


def _allow_pass(state: State, action: Mapping[str, Any]) -> State:
    _only_keys(action, set())
    _expect_phase(state, (PASS_CHECK,), "allow_pass")
    assert state.pending is not None
    return _move(_note(state, "No Swiss bank objects"), state.pending)


def _block_pass(state: State, action: Mapping[str, Any]) -> State:
    _only_keys(action, {"player"})
    _expect_phase(state, (PASS_CHECK,), "block_pass")
    name = _player_arg(state, action)
    mover = state.nations[state.turn]
    require(name in _swiss_banks(state), f"{name} has no Swiss bank and cannot stop {_name(mover.id)} passing Investor")
    due = sum(_interest_due(state, mover.id).values())
    require(
        mover.treasury >= due,
        f"the {_name(mover.id)} treasury holds {mover.treasury} million but owes {due} in interest: only a treasury "
        f"that can pay all of it may be stopped (a donation can make up the {due - mover.treasury})",
    )
    if state.swiss_block == "up_to_investor":
        state = replace(state, phase=MOVE, pending=None, pass_blocked=True)
        return _note(state, f"{name}'s Swiss bank stops {_name(mover.id)} from passing Investor")
    state = _note(state, f"{name}'s Swiss bank stops {_name(mover.id)} on Investor")
    return _force_investor(state)


def _force_investor(state: State) -> State:
    """The blocked nation stands on Investor: no fee for the move, then interest and investing as on a landing."""
    mover = state.nations[state.turn]
    state = _with_nation(state, replace(mover, rondel="investor"))
    state = replace(state, pending=None, passed_investor=False, turns_taken=state.turns_taken + 1)
    state = _note(state, f"{_name(mover.id)} moves to Investor at no cost")
    return _open_investor(_pay_interest(state, mover.id))


def _move(state: State, target: str) -> State:
    mover = state.nations[state.turn]
    government = mover.government
    assert government is not None
    cost = rondel_cost(mover.rondel, target, mover.power_points)
    passing = passes_investor(mover.rondel, target)
    state = _transfer(state, _cash(government), BANK, cost, "the rondel move")
    state = _with_nation(state, replace(mover, rondel=target))
    state = replace(state, pending=None, passed_investor=passing, turns_taken=state.turns_taken + 1)
    words = f"{_name(mover.id)} moves to {RONDEL_NAMES[target]}"
    if cost:
        words += f"; {government} pays {cost} million"
    if passing:
        words += " (passing Investor)"
    state = _note(state, words)
    if target == "investor":
        return _open_investor(_pay_interest(state, mover.id))
    if target == "taxation":
        return _after_action(_taxation(state, mover.id))
    if target == "factory":
        if not _build_sites(_nation(state, mover.id)):
            return _after_action(_note(state, "No free city to build a factory in"))
        return replace(state, phase=FACTORY)
    if target.startswith("production"):
        armies, fleets = _production_limits(_nation(state, mover.id))
        if armies == fleets == 0:
            return _after_action(_note(state, "Nothing can be produced"))
        return replace(state, phase=PRODUCTION)
    if target == "import":
        if not any(not c.occupied for c in mover.cities):
            return _after_action(_note(state, "Every home province is occupied: nothing can be imported"))
        return replace(state, phase=IMPORT)
    return replace(state, phase=MANEUVER)
