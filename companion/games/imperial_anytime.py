"""Imperial 2030 -- the actions open at any time: a gift to a treasury, keeping one's cash secret,
and the table's corrections of a count.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Mapping

from companion.games.base import field, require
from companion.games.names import note
from companion.games.imperial_rules import (
    ARMY_SUPPLY,
    FLEET_SUPPLY,
    MAX_FLAGS,
    MAX_MONEY,
    MAX_POWER_POINTS,
    NATIONS,
    RONDEL,
    RONDEL_NAMES,
)
from companion.games.imperial_state import (
    BANK,
    DRAFT,
    INVESTOR,
    OVER,
    State,
    _balance,
    _cash,
    _int_arg,
    _name,
    _nation,
    _nation_arg,
    _nation_value,
    _note,
    _only_keys,
    _player_arg,
    _secret,
    _transfer,
    _treasury,
    _with_city,
    _with_nation,
)


def _donate(state: State, action: Mapping[str, Any]) -> State:
    _only_keys(action, {"player", "nation", "amount"})
    require(state.phase != OVER, "the game is over")
    name = _player_arg(state, action)
    nation_id = _nation_arg(action)
    amount = _int_arg(action, "amount", 1)
    state = _transfer(state, _cash(name), _treasury(nation_id), amount, f"a gift of {amount} million")
    return _note(state, f"{name} gives {amount} million to the {_name(nation_id)} treasury")


def _hide_cash(state: State, action: Mapping[str, Any]) -> State:
    _only_keys(action, {"player", "hidden"})
    name = _player_arg(state, action)
    hidden = field(action, "hidden", bool)
    require(
        (name in state.hidden_cash) != hidden,
        f"{name}'s cash is already {'hidden' if hidden else 'shown'}",
    )
    if hidden:
        names = [p.name for p in state.players if p.name in state.hidden_cash or p.name == name]
        return _note(replace(state, hidden_cash=tuple(names)), f"{name} keeps their cash secret")
    names = [n for n in state.hidden_cash if n != name]
    return _note(replace(state, hidden_cash=tuple(names)), f"{name} shows their cash again")


def _correct(state: State, action: Mapping[str, Any]) -> State:
    what = field(action, "what", str)
    spec = _CORRECTIONS.get(what)
    require(spec is not None, f"'what' must be one of {', '.join(_CORRECTIONS)}, not {what!r}")
    assert spec is not None
    keys, apply = spec
    _only_keys(action, {"what", "value", "reason", *keys})
    # not kept in the state, but the event log and the record keep it and /api/events shows it
    note(field(action, "reason", str, default=""), "'reason'")
    require("value" in action, "action is missing 'value'")
    return apply(state, action)


def _correct_money(state: State, account: tuple[str, str], value: object, label: str) -> State:
    require(
        isinstance(value, int) and not isinstance(value, bool) and value >= 0,
        f"'value' must be a non-negative integer, not {value!r}",
    )
    require(value <= MAX_MONEY, f"'value': {label} can be at most {MAX_MONEY} million, not {value}")
    old = _balance(state, account)
    # the bank is the other side of every correction, so no money appears from nowhere
    if value >= old:
        state = _transfer(state, BANK, account, value - old, "a correction")
    else:
        state = _transfer(state, account, BANK, old - value, "a correction")
    if account[0] == "cash" and account[1] in _secret(state):
        return _note(state, f"Correction: {label} (hidden)")
    return _note(state, f"Correction: {label} {old} → {value}")


def _correct_treasury(state: State, action: Mapping[str, Any]) -> State:
    nation_id = _nation_arg(action)
    return _correct_money(state, _treasury(nation_id), action["value"], f"{_name(nation_id)} treasury")


def _correct_cash(state: State, action: Mapping[str, Any]) -> State:
    name = _player_arg(state, action)
    return _correct_money(state, _cash(name), action["value"], f"{name}'s cash")


def _counter_corrector(attr: str, high: int | Mapping[str, int]) -> Callable[[State, Mapping[str, Any]], State]:
    def apply(state: State, action: Mapping[str, Any]) -> State:
        nation_id = _nation_arg(action)
        value = _int_arg(action, "value", 0, high if isinstance(high, int) else high[nation_id])
        nation = _nation(state, nation_id)
        state = _with_nation(state, replace(nation, **{attr: value}))
        return _note(state, f"Correction: {_name(nation_id)} {attr.replace('_', ' ')} {getattr(nation, attr)} → {value}")

    return apply


def _correct_factory(state: State, action: Mapping[str, Any]) -> State:
    nation_id = _nation_arg(action)
    city = _nation(state, nation_id).city(field(action, "city", str))
    value = field(action, "value", bool)
    state = _with_city(state, nation_id, replace(city, factory=value))
    return _note(state, f"Correction: {_name(nation_id)}'s {city.name} {'has' if value else 'has no'} factory")


def _correct_occupiers(state: State, action: Mapping[str, Any]) -> State:
    nation_id = _nation_arg(action)
    city = _nation(state, nation_id).city(field(action, "city", str))
    value = field(action, "value", list)
    for other in value:
        _nation_value(other, "value")
        require(other != nation_id, f"{_name(nation_id)} cannot occupy its own city")
    require(len(set(value)) == len(value), "'value' repeats a nation")
    occupiers = tuple(n for n in NATIONS if n in value)
    state = _with_city(state, nation_id, replace(city, occupiers=occupiers))
    shown = ", ".join(_name(n) for n in occupiers) or "nobody"
    return _note(state, f"Correction: {_name(nation_id)}'s {city.name} occupied by {shown}")


def _correct_rondel(state: State, action: Mapping[str, Any]) -> State:
    nation_id = _nation_arg(action)
    value = field(action, "value", (str, type(None)))
    require(value is None or value in RONDEL, f"'value' must be a rondel space or null, not {value!r}")
    state = _with_nation(state, replace(_nation(state, nation_id), rondel=value))
    return _note(state, f"Correction: {_name(nation_id)} stands on {RONDEL_NAMES[value] if value else 'no space'}")


def _correct_investor_card(state: State, action: Mapping[str, Any]) -> State:
    name = _player_arg(state, action, "value")
    require(state.phase not in (INVESTOR, DRAFT), "the investor card cannot move while bonds are being bought")
    return _note(replace(state, investor_card=name), f"Correction: {name} holds the investor card")


_CORRECTIONS: dict[str, tuple[set[str], Callable[[State, Mapping[str, Any]], State]]] = {
    "treasury": ({"nation"}, _correct_treasury),
    "cash": ({"player"}, _correct_cash),
    "power_points": ({"nation"}, _counter_corrector("power_points", MAX_POWER_POINTS)),
    "flags": ({"nation"}, _counter_corrector("flags", MAX_FLAGS)),
    "armies": ({"nation"}, _counter_corrector("armies", ARMY_SUPPLY)),
    "fleets": ({"nation"}, _counter_corrector("fleets", FLEET_SUPPLY)),
    "factory": ({"nation", "city"}, _correct_factory),
    "occupiers": ({"nation", "city"}, _correct_occupiers),
    "rondel": ({"nation"}, _correct_rondel),
    "investor_card": (set(), _correct_investor_card),
}
