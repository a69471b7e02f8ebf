"""Imperial 2030 -- what each phase waits for: the line the page shows, the check that an action
belongs to the phase now, and the two counts that line needs (the Swiss banks able to stop a
nation on Investor, and what production may build).
"""

from __future__ import annotations

from companion.games.base import require
from companion.games.imperial_rules import ARMY_SUPPLY, FACTORY_PRICE, FLEET_SUPPLY, IMPORT_PRICE, MAX_IMPORTS, NATIONS
from companion.games.imperial_state import (
    DRAFT,
    FACTORY,
    IMPORT,
    MANEUVER,
    MOVE,
    OVER,
    PASS_CHECK,
    PRODUCTION,
    Nation,
    State,
    _interest_due,
    _name,
    _swiss_banks,
)
from companion.games.imperial_scoring import _winners
from companion.games.narration import _plural


def _expect_phase(state: State, phases: tuple[str, ...], kind: str) -> None:
    require(state.phase in phases, f"'{kind}' is not possible now: {_expected(state)}")


def _blockers(state: State, nation: Nation) -> list[str]:
    """Swiss banks able to keep this nation from passing Investor now."""
    if nation.treasury < sum(_interest_due(state, nation.id).values()):
        return []
    return _swiss_banks(state)


def _production_limits(nation: Nation) -> tuple[int, int]:
    return (
        min(nation.unoccupied_factories("armament"), max(0, ARMY_SUPPLY[nation.id] - nation.armies)),
        min(nation.unoccupied_factories("shipyard"), max(0, FLEET_SUPPLY[nation.id] - nation.fleets)),
    )


def _expected(state: State) -> str:
    if state.phase == OVER:
        winners = _winners(state)
        return f"Game over: {' and '.join(winners)} {'win' if len(winners) > 1 else 'wins'}"
    if state.phase == DRAFT:
        return f"{state.queue[0]} may draft one {_name(NATIONS[state.draft_nation])} bond or pass"
    mover = state.nations[state.turn]
    who = f"{_name(mover.id)} ({mover.government})"
    if state.phase == MOVE:
        extra = "; it may not pass Investor this turn" if state.pass_blocked else ""
        return f"{_name(mover.id)} to move on the rondel ({mover.government}){extra}"
    if state.phase == PASS_CHECK:
        if _blockers(state, mover):
            banks = ", ".join(_blockers(state, mover))
            return f"{_name(mover.id)} would pass Investor: Swiss bank ({banks}) may stop it on Investor, or allow"
        banks = ", ".join(_swiss_banks(state))
        due = sum(_interest_due(state, mover.id).values())
        return (
            f"{_name(mover.id)} would pass Investor: its treasury is {due - mover.treasury} million short of the "
            f"interest; a Swiss bank ({banks}) may donate that and then block, or allow"
        )
    if state.phase == FACTORY:
        if mover.treasury < FACTORY_PRICE:
            # the next thing the table can do: fill the treasury (any player may give it cash), or skip
            return (f"{who}: a factory costs {FACTORY_PRICE} million and the treasury has {mover.treasury}; "
                    f"a player may give it the {FACTORY_PRICE - mover.treasury} missing, or skip")
        return f"{who}: build a factory for {FACTORY_PRICE} million, or skip"
    if state.phase == PRODUCTION:
        armies, fleets = _production_limits(mover)
        # counted in words ("1 army", not "1 armies"): this line is the header the table reads
        return f"{who}: produce up to {_plural(armies, 'army', 'armies')} and {_plural(fleets, 'fleet')}"
    if state.phase == IMPORT:
        return f"{who}: import up to {MAX_IMPORTS} units at {IMPORT_PRICE} million each, or skip"
    if state.phase == MANEUVER:
        return f"{who}: report battles, occupations and flags, then end the maneuver"
    decider = state.queue[0]
    role = "investor card" if decider == state.investor_card else "Swiss bank"
    return f"{decider} ({role}) may buy or trade up one bond, or pass"
