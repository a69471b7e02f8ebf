"""Imperial 2030 -- what a nation does on the rondel space it reaches: taxation, building a factory,
production, import, and the maneuver's report of battles, occupations and flags.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping

from companion.games.base import field, require
from companion.games.imperial_rules import (
    ARMY_SUPPLY,
    FACTORY_PRICE,
    FLEET_SUPPLY,
    IMPORT_PRICE,
    MAX_FLAGS,
    MAX_IMPORTS,
    MAX_POWER_POINTS,
    tax,
)
from companion.games.imperial_state import (
    BANK,
    FACTORY,
    IMPORT,
    MANEUVER,
    PRODUCTION,
    UNIT_KINDS,
    City,
    Nation,
    State,
    _acting,
    _cash,
    _city_ref,
    _int_arg,
    _name,
    _nation,
    _nation_value,
    _note,
    _only_keys,
    _reject_extra,
    _transfer,
    _treasury,
    _with_city,
    _with_nation,
)
from companion.games.imperial_phases import _expect_phase, _production_limits
from companion.games.imperial_investment import _after_action
from companion.games.narration import _plural


def _taxation(state: State, nation_id: str) -> State:
    nation = _nation(state, nation_id)
    result = tax(
        nation.unoccupied_factories(),
        nation.flags,
        nation.armies + nation.fleets,
        nation.treasury,
        nation.power_points,
    )
    government = nation.government
    assert government is not None
    state = _transfer(state, BANK, _treasury(nation_id), result.revenue, "tax revenue")
    state = _transfer(state, _treasury(nation_id), BANK, result.soldiers_pay, "soldiers' pay")
    state = _transfer(state, _treasury(nation_id), _cash(government), result.bonus, "the success bonus")
    nation = _nation(state, nation_id)
    state = _with_nation(state, replace(nation, power_points=result.power_points))
    state = _note(
        state,
        f"{_name(nation_id)} collects {result.revenue} million in taxes, pays {result.soldiers_pay} to its soldiers, "
        f"{government} receives a bonus of {result.bonus}, +{result.power_gain} power points "
        f"(now {result.power_points})",
    )
    if result.game_over:
        state = replace(state, game_over=True)
        state = _note(state, f"{_name(nation_id)} reaches {MAX_POWER_POINTS} power points: the game ends")
    return state


def _build_sites(nation: Nation) -> list[City]:
    return [c for c in nation.cities if not c.factory and not c.occupied]


def _build_factory(state: State, action: Mapping[str, Any]) -> State:
    _only_keys(action, {"nation", "city"})
    _expect_phase(state, (FACTORY,), "build_factory")
    nation = _acting(state, action)
    city_id = field(action, "city", str)
    city = nation.city(city_id)
    require(not city.factory, f"{city.name} already has a factory")
    require(not city.occupied, f"hostile armies stand in {city.name}: no factory can be built there")
    state = _transfer(state, _treasury(nation.id), BANK, FACTORY_PRICE, "a factory")
    state = _with_city(state, nation.id, replace(city, factory=True))
    kind = "armament facility" if city.kind == "armament" else "shipyard"
    return _after_action(_note(state, f"{_name(nation.id)} builds a {kind} in {city.name}"))


def _produce(state: State, action: Mapping[str, Any]) -> State:
    _only_keys(action, {"nation", "armies", "fleets"})
    _expect_phase(state, (PRODUCTION,), "produce")
    nation = _acting(state, action)
    max_armies, max_fleets = _production_limits(nation)
    armies = _int_arg(action, "armies", 0, max_armies, default=max_armies)
    fleets = _int_arg(action, "fleets", 0, max_fleets, default=max_fleets)
    state = _with_nation(state, replace(nation, armies=nation.armies + armies, fleets=nation.fleets + fleets))
    return _after_action(_note(state, f"{_name(nation.id)} produces {_plural(armies, 'army', 'armies')} and {_plural(fleets, 'fleet')}"))


def _import(state: State, action: Mapping[str, Any]) -> State:
    _only_keys(action, {"nation", "units"})
    _expect_phase(state, (IMPORT,), "import")
    nation = _acting(state, action)
    units = field(action, "units", list)
    require(len(units) <= MAX_IMPORTS, f"'units' lists {len(units)} units; at most {MAX_IMPORTS} may be imported")
    for unit in units:
        require(unit in UNIT_KINDS, f"'units' may only contain 'army' or 'fleet', not {unit!r}")
    armies, fleets = units.count("army"), units.count("fleet")
    if fleets:
        require(
            any(c.kind == "shipyard" and not c.occupied for c in nation.cities),
            f"every harbour city of {_name(nation.id)} holds hostile armies: fleets cannot be placed",
        )
    if armies:
        require(
            any(not c.occupied for c in nation.cities),
            f"every home province of {_name(nation.id)} holds hostile armies",
        )
    left_armies = max(0, ARMY_SUPPLY[nation.id] - nation.armies)
    left_fleets = max(0, FLEET_SUPPLY[nation.id] - nation.fleets)
    require(armies <= left_armies, f"{_name(nation.id)} has only {left_armies} armies left in the box")
    require(fleets <= left_fleets, f"{_name(nation.id)} has only {left_fleets} fleets left in the box")
    state = _transfer(state, _treasury(nation.id), BANK, IMPORT_PRICE * len(units), f"importing {len(units)} units")
    nation = _nation(state, nation.id)
    state = _with_nation(state, replace(nation, armies=nation.armies + armies, fleets=nation.fleets + fleets))
    return _after_action(_note(state, f"{_name(nation.id)} imports {_plural(armies, 'army', 'armies')} and {_plural(fleets, 'fleet')}"))


def _skip(state: State, action: Mapping[str, Any]) -> State:
    _only_keys(action, {"nation"})
    _expect_phase(state, (FACTORY, PRODUCTION, IMPORT, MANEUVER), "skip")
    nation = _acting(state, action)
    return _after_action(_note(state, f"{_name(nation.id)} skips its {state.phase}"))


def _battles(state: State, mover: str, entries: object) -> State:
    require(isinstance(entries, list), "'battles' must be a list")
    for entry in entries:
        require(isinstance(entry, Mapping), "each battle must be an object with 'against', 'unit' and 'their_unit'")
        _reject_extra(entry, {"against", "unit", "their_unit", "count"}, "a battle")
        other = _nation_value(entry.get("against"), "battles.against")
        require(other != mover, f"{_name(mover)} cannot fight itself")
        unit = entry.get("unit")
        require(unit in UNIT_KINDS, f"'battles.unit' must be 'army' or 'fleet', not {unit!r}")
        theirs = entry.get("their_unit", unit)
        require(theirs in UNIT_KINDS, f"'battles.their_unit' must be 'army' or 'fleet', not {theirs!r}")
        count = entry.get("count", 1)
        require(
            isinstance(count, int) and not isinstance(count, bool) and count >= 1,
            f"'battles.count' must be a positive integer, not {count!r}",
        )
        # every battle removes one unit from each side
        for nation_id, kind in ((mover, unit), (other, theirs)):
            nation = _nation(state, nation_id)
            attr = "armies" if kind == "army" else "fleets"
            have = getattr(nation, attr)
            require(have >= count, f"{_name(nation_id)} has {have} {attr}, not enough to lose {count}")
            state = _with_nation(state, replace(nation, **{attr: have - count}))
        state = _note(state, f"Battle: {_name(mover)} loses {count} {unit}, {_name(other)} loses {count} {theirs}")
    return state


def _vacate(state: State, mover: str, entries: object) -> State:
    require(isinstance(entries, list), "'vacate' must be a list")
    for entry in entries:
        owner, city = _city_ref(state, entry, "vacate", frozenset({"occupier"}))
        occupier = _nation_value(entry.get("occupier", mover), "vacate.occupier")  # type: ignore[union-attr]
        require(occupier in city.occupiers, f"{_name(occupier)} has no hostile armies in {_name(owner)}'s {city.name}")
        state = _with_city(state, owner, replace(city, occupiers=tuple(o for o in city.occupiers if o != occupier)))
        state = _note(state, f"{_name(occupier)} no longer occupies {_name(owner)}'s {city.name}")
    return state


def _occupy(state: State, mover: str, entries: object) -> State:
    require(isinstance(entries, list), "'occupy' must be a list")
    for entry in entries:
        owner, city = _city_ref(state, entry, "occupy")
        require(owner != mover, f"{_name(mover)}'s armies are never hostile at home")
        require(mover not in city.occupiers, f"{_name(mover)} already occupies {_name(owner)}'s {city.name}")
        home = _nation(state, owner)
        # the last factory a nation still works may only be entered peacefully
        require(
            not (city.factory and not city.occupied and home.unoccupied_factories() == 1),
            f"{city.name} is {_name(owner)}'s last unoccupied factory: hostile armies may not enter it",
        )
        require(_nation(state, mover).armies > 0, f"{_name(mover)} has no armies")
        state = _with_city(state, owner, replace(city, occupiers=city.occupiers + (mover,)))
        state = _note(state, f"{_name(mover)} occupies {_name(owner)}'s {city.name}")
    return state


def _destroy_factories(state: State, mover: str, entries: object) -> State:
    require(isinstance(entries, list), "'destroy_factories' must be a list")
    for entry in entries:
        owner, city = _city_ref(state, entry, "destroy_factories")
        require(owner != mover, f"{_name(mover)} cannot destroy its own factory")
        require(city.factory, f"{_name(owner)}'s {city.name} has no factory")
        home = _nation(state, owner)
        require(
            not (not city.occupied and home.unoccupied_factories() == 1),
            f"{city.name} is {_name(owner)}'s last unoccupied factory and cannot be destroyed",
        )
        attacker = _nation(state, mover)
        require(attacker.armies >= 3, f"destroying a factory takes 3 armies; {_name(mover)} has {attacker.armies}")
        state = _with_nation(state, replace(attacker, armies=attacker.armies - 3))
        # the three armies leave the board with the factory, freeing the province of them
        occupiers = tuple(o for o in city.occupiers if o != mover)
        state = _with_city(state, owner, replace(city, factory=False, occupiers=occupiers))
        state = _note(state, f"{_name(mover)} destroys the factory in {_name(owner)}'s {city.name} (3 armies removed)")
    return state


def _flags(state: State, entries: object) -> State:
    require(isinstance(entries, Mapping), "'flags' must map nations to a change in their flags on the board")
    for nation_id, delta in entries.items():
        _nation_value(nation_id, "flags")
        require(
            isinstance(delta, int) and not isinstance(delta, bool),
            f"'flags.{nation_id}' must be an integer, not {delta!r}",
        )
        nation = _nation(state, nation_id)
        after = nation.flags + delta
        require(after >= 0, f"{_name(nation_id)} has only {nation.flags} flags on the board")
        require(after <= MAX_FLAGS, f"{_name(nation_id)} would have {after} flags; a nation owns only {MAX_FLAGS}")
        state = _with_nation(state, replace(nation, flags=after))
        if delta:
            state = _note(state, f"{_name(nation_id)} flags {delta:+d} (now {after})")
    return state


def _maneuver(state: State, action: Mapping[str, Any]) -> State:
    _only_keys(action, {"nation", "battles", "vacate", "occupy", "destroy_factories", "flags", "done"})
    _expect_phase(state, (MANEUVER,), "maneuver")
    nation = _acting(state, action)
    done = field(action, "done", bool, default=True)
    # battles first: they decide who is left to occupy or to destroy a factory
    state = _battles(state, nation.id, action.get("battles", []))
    state = _vacate(state, nation.id, action.get("vacate", []))
    state = _occupy(state, nation.id, action.get("occupy", []))
    state = _destroy_factories(state, nation.id, action.get("destroy_factories", []))
    state = _flags(state, action.get("flags", {}))
    if not done:
        return state
    return _after_action(_note(state, f"{_name(nation.id)} ends its maneuver"))
