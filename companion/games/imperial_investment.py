"""Imperial 2030 -- bonds and the investor: buying a bond, the investor card, interest, the investor
round and the bond draft, the change of governments they bring, and the step after a nation's
action (the investor round when it passed Investor, the next nation otherwise).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping

from companion.games.base import field, require
from companion.games.imperial_rules import BOND_VALUES, INTEREST, INVESTOR_PAYOUT, NATIONS
from companion.games.imperial_state import (
    BANK,
    DRAFT,
    INVESTOR,
    MOVE,
    OVER,
    State,
    _bond_holder,
    _cash,
    _interest_due,
    _name,
    _nation,
    _nation_arg,
    _next_seat,
    _note,
    _only_keys,
    _player,
    _player_arg,
    _seats_from,
    _sort_bonds,
    _start_turn,
    _swiss_banks,
    _transfer,
    _treasury,
    _with_nation,
    _with_player,
)
from companion.games.imperial_phases import _expect_phase


def _begin(state: State) -> State:
    holder = None
    for nation in state.nations:
        if nation.government is not None:
            holder = _next_seat(state, nation.government)
            break
    require(holder is not None, "no nation has a government, so nobody can start: at least one bond must be bought")
    state = replace(state, investor_card=holder, queue=(), phase=MOVE)
    state = _note(state, f"The investor card goes to {holder}")
    return _start_turn(state, 0)


def _buy(state: State, name: str, nation_id: str, value: int, trade_in: int | None) -> State:
    price = value - (trade_in or 0)
    label = f"the {_name(nation_id)} {value}-million bond" + (f" (trading in the {trade_in})" if trade_in else "")
    state = _transfer(state, _cash(name), _treasury(nation_id), price, label)
    player = _player(state, name)
    bonds = [b for b in player.bonds if b != (nation_id, trade_in)] + [(nation_id, value)]
    return _with_player(state, replace(player, bonds=_sort_bonds(bonds)))


def _after_action(state: State) -> State:
    if state.game_over:
        return replace(state, phase=OVER, queue=())
    if state.passed_investor:
        return _open_investor(state)
    return _start_turn(state, state.turn + 1)


def _pay_interest(state: State, nation_id: str) -> State:
    nation = _nation(state, nation_id)
    government = nation.government
    assert government is not None
    due = _interest_due(state, nation_id)
    own = due.get(government, 0)
    others = sum(due.values()) - own
    # the government forgoes its own interest first, then answers from its cash
    from_cash = max(0, others - nation.treasury)
    paid_own = min(own, max(0, nation.treasury - others))
    for name in _seats_from(state, government)[1:]:
        owed = due.get(name, 0)
        from_treasury = min(owed, _nation(state, nation_id).treasury)
        state = _transfer(state, _treasury(nation_id), _cash(name), from_treasury, "interest")
        state = _transfer(state, _cash(government), _cash(name), owed - from_treasury, "interest the treasury cannot pay")
    state = _transfer(state, _treasury(nation_id), _cash(government), paid_own, "interest")
    words = f"{_name(nation_id)} pays {others + own} million interest"
    if paid_own < own:
        words += f"; {government} forgoes {own - paid_own} of their own"
    if from_cash:
        words += f" and adds {from_cash} from their cash"
    return _note(state, words)


def _open_investor(state: State) -> State:
    holder = state.investor_card
    assert holder is not None
    state = _transfer(state, BANK, _cash(holder), INVESTOR_PAYOUT, "the investor payout")
    swiss = [p for p in _seats_from(state, holder) if p != holder and p in _swiss_banks(state)]
    state = replace(state, phase=INVESTOR, queue=(holder, *swiss))
    return _note(state, f"{holder} holds the investor card and receives {INVESTOR_PAYOUT} million")


def _decider(state: State, action: Mapping[str, Any], kind: str) -> str:
    _expect_phase(state, (INVESTOR, DRAFT), kind)
    name = _player_arg(state, action)
    require(name == state.queue[0], f"it is {state.queue[0]}'s turn to invest, not {name}'s")
    return name


def _invest(state: State, action: Mapping[str, Any]) -> State:
    _only_keys(action, {"player", "nation", "value", "trade_in"})
    name = _decider(state, action, "invest")
    nation_id = _nation_arg(action)
    value = field(action, "value", int)
    require(value in INTEREST, f"'value' must be a bond value ({', '.join(map(str, BOND_VALUES))}), not {value}")
    trade_in = field(action, "trade_in", (int, type(None)), default=None)
    if state.phase == DRAFT:
        drafting = NATIONS[state.draft_nation]
        require(nation_id == drafting, f"the draft is choosing {_name(drafting)} bonds, not {_name(nation_id)} bonds")
        require(trade_in is None, "bonds cannot be traded in during the draft")
    holder = _bond_holder(state, nation_id, value)
    require(holder is None, f"the {_name(nation_id)} {value}-million bond belongs to {holder}")
    if trade_in is not None:
        require(
            (nation_id, trade_in) in _player(state, name).bonds,
            f"{name} holds no {_name(nation_id)} {trade_in}-million bond to trade in",
        )
        require(value > trade_in, f"a trade must go up: the {value}-million bond is not worth more than the {trade_in}")
    state = _buy(state, name, nation_id, value, trade_in)
    words = f"{name} buys the {_name(nation_id)} {value}-million bond"
    if trade_in is not None:
        words += f", trading in the {trade_in} and paying {value - trade_in}"
    return _decided(_note(state, words))


def _pass(state: State, action: Mapping[str, Any]) -> State:
    _only_keys(action, {"player"})
    name = _decider(state, action, "pass")
    return _decided(_note(state, f"{name} does not invest"))


def _decided(state: State) -> State:
    queue = state.queue[1:]
    if queue:
        return replace(state, queue=queue)
    if state.phase == DRAFT:
        return _next_draft_nation(state)
    holder = state.investor_card
    assert holder is not None
    state = _settle_governments(replace(state, queue=()), holder)
    card = _next_seat(state, holder)
    state = _note(replace(state, investor_card=card), f"The investor card passes to {card}")
    return _start_turn(state, state.turn + 1)


def _next_draft_nation(state: State) -> State:
    start = state.draft_start
    assert start is not None
    following = state.draft_nation + 1
    if following < len(NATIONS):
        # each nation's draft starts one seat further round the table
        first = _seats_from(state, start)[following % len(state.players)]
        state = replace(state, draft_nation=following, queue=tuple(_seats_from(state, first)))
        return _note(state, f"{first} chooses a {_name(NATIONS[following])} bond first")
    state = _settle_governments(replace(state, queue=()), start)
    return _begin(state)


def _settle_governments(state: State, anchor: str) -> State:
    order = _seats_from(state, anchor)
    for nation in state.nations:
        totals = {p.name: p.bond_total(nation.id) for p in state.players}
        best = max(totals.values())
        if best == 0 or (nation.government is not None and totals[nation.government] == best):
            continue
        successor = next(p for p in order if totals[p] == best)
        state = _with_nation(state, replace(nation, government=successor))
        state = _note(state, f"{successor} takes over the government of {_name(nation.id)}")
    return state
