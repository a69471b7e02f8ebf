"""Imperial 2030: the bookkeeping of a real game, as a pure rules engine.

The map stays on the table. The companion keeps what the rules count: each
nation's rondel position, treasury, power points, home cities (with factories
and the nations whose hostile armies stand there), flags, armies and fleets;
each player's cash and bonds; the investor card; and the bank. Swiss banks are
not stored: a player holds one exactly while governing no nation.

Money only moves between the bank, the six treasuries and the players' cash,
so `bank + treasuries + cash` stays 0 for the whole game (the bank starts at 0
and never runs out; a negative balance is what it has paid out).

A player may keep their cash secret (`hide_cash`): the state still holds it, so the
rules and a replay are exact, but `view` and `scores` leave out every figure that
would give it away until the game is over (docs/imperial.md, "Hidden cash").

Every home province of a nation is modelled by its city, as the printed board has
them (data/imperial_board.toml): brown cities (armament facilities, ids `brown1`,
`brown2`, ...) and light-blue harbour cities (shipyards, `blue1`, ...). China has three
brown cities and one harbour, the United States one and three, the others two and two.
A game starts with a factory in `brown1` and `blue1`; an action may name a city by its id
or its printed name, and the `city_names` option can relabel them.

Default deal (when the `deal` option is absent), by seat order:
2 players -- seat 1 Russia, India, United States; seat 2 China, Brazil, Europe.
3 players -- Russia+Brazil, China+Europe, India+United States.
4-6 players -- seat i gets the i-th nation in treasury order (Russia first).

The arithmetic lives in imperial_rules.py, the state and the helpers every action
shares in imperial_state.py, and each family of actions in its own module: the rondel
(imperial_rondel.py), the spaces' actions (imperial_spaces.py), bonds and the investor
(imperial_investment.py), the actions open at any time (imperial_anytime.py); the
scores in imperial_scoring.py and each phase's prompt in imperial_phases.py. This
module sets a game up, dispatches the actions and builds the page's view: it is the
engine the daemon loads.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Mapping

from companion.games.base import Engine, RuleError, field, require
from companion.games.names import PLACE_MOST, place_name, player_name
from companion.games.imperial_rules import (
    ARMY_SUPPLY,
    BIG_BOND,
    BONDS,
    EXPERIENCED_CASH,
    FLEET_SUPPLY,
    FREE_STEPS,
    GROUPS,
    INTEREST,
    MAX_FLAGS,
    MAX_POWER_POINTS,
    MAX_STEPS,
    NATIONS,
    RONDEL,
    RONDEL_NAMES,
    SMALL_BOND,
    STANDARD_CASH,
    TaxResult,
    final_score,
    load_bond_table,
    nations_by_power,
    passes_investor,
    power_factor,
    rondel_cost,
    rondel_distance,
    tax,
    tax_chart,
    validate_bond_table,
)
from companion.games.imperial_state import (
    BANK,
    CITY_IDS,
    DRAFT,
    FACTORY,
    HOME_CITIES,
    IMPORT,
    INVESTOR,
    MANEUVER,
    MOVE,
    OVER,
    PASS_CHECK,
    PRODUCTION,
    SWISS_BLOCKS,
    VARIANTS,
    City,
    Nation,
    Player,
    State,
    _available_bonds,
    _bond_holder,
    _cash,
    _governs,
    _interest_due,
    _name,
    _nation_value,
    _note,
    _player,
    _seats_from,
    _secret,
    _swiss_banks,
    _transfer,
    _with_nation,
)
from companion.games.imperial_scoring import _ranking, _running_scores, _shown_scores, _winners, scores
from companion.games.imperial_phases import _blockers, _expected, _production_limits
from companion.games.imperial_investment import _begin, _buy, _invest, _pass
from companion.games.imperial_spaces import _build_factory, _build_sites, _import, _maneuver, _produce, _skip
from companion.games.imperial_rondel import _allow_pass, _block_pass, _interest_shortfall, _may_be_blocked, _rondel
from companion.games.imperial_anytime import _correct, _donate, _hide_cash


__all__ = [
    "ENGINE",
    "City",
    "Nation",
    "Player",
    "State",
    "TaxResult",
    "act",
    "final_score",
    "new",
    "passes_investor",
    "power_factor",
    "rondel_cost",
    "scores",
    "tax",
    "tax_chart",
    "view",
]


# ------------------------------------------------------------- set-up


def _validate_players(options: Mapping[str, Any]) -> tuple[str, ...]:
    require("players" in options, "option 'players' is required: a list of 2 to 6 names in seating order")
    players = options["players"]
    if isinstance(players, int) and not isinstance(players, bool):
        # a bare count is enough to start; seats are then named in order
        require(2 <= players <= 6, f"option 'players' must be 2 to 6, not {players}")
        return tuple(f"Player {i}" for i in range(1, players + 1))
    require(isinstance(players, (list, tuple)), "option 'players' must be a list of names")
    require(2 <= len(players) <= 6, f"option 'players' must list 2 to 6 players, not {len(players)}")
    for name in players:
        require(isinstance(name, str) and name.strip() != "", f"option 'players' has an invalid name {name!r}")
        # bounded before it is quoted whole below
        player_name(name.strip(), "option 'players': a player's name")
        require(name == name.strip(), f"option 'players' has a name with surrounding spaces: {name!r}")
    require(len(set(players)) == len(players), "option 'players' repeats a name")
    return tuple(players)


def _default_deal(players: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    count = len(players)
    if count in GROUPS:
        return {p: group for p, group in zip(players, GROUPS[count])}
    return {p: (NATIONS[i],) for i, p in enumerate(players)}


def random_deal(players: list[str] | tuple[str, ...], rng) -> dict[str, list[str]]:
    """Shuffle the flag cards and deal them, as the table would; the shell passes its own random source
    so the engine stays deterministic (the dealt cards are stored in the game's options)."""
    players = tuple(players)
    count = len(players)
    require(2 <= count <= 6, "Imperial 2030 is for 2 to 6 players")
    groups = list(GROUPS.get(count) or [(n,) for n in NATIONS])
    rng.shuffle(groups)
    return {p: list(g) for p, g in zip(players, groups)}


def _validate_deal(raw: object, players: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    require(isinstance(raw, Mapping), "option 'deal' must map each player to a list of nation flag cards")
    for name in raw:
        require(name in players, f"option 'deal' names unknown player {name!r}")
    for name in players:
        require(name in raw, f"option 'deal' gives no card to {name!r}")
    count = len(players)
    groups = GROUPS.get(count)
    deal: dict[str, tuple[str, ...]] = {}
    for player in players:
        cards = raw[player]
        if isinstance(cards, str):
            cards = [cards]
        require(isinstance(cards, (list, tuple)) and cards, f"option 'deal.{player}' must be a non-empty list of nations")
        for card in cards:
            _nation_value(card, f"deal.{player}")
        if groups is None:
            require(len(cards) == 1, f"option 'deal.{player}': with {count} players each player gets exactly one card")
            deal[player] = tuple(cards)
            continue
        # the dealt card alone stands for its whole group
        matching = [g for g in groups if list(cards) == [g[0]] or sorted(cards) == sorted(g)]
        require(
            bool(matching),
            f"option 'deal.{player}': with {count} players the cards go in groups "
            + "; ".join("+".join(g) for g in groups),
        )
        deal[player] = matching[0]
    dealt = [card for cards in deal.values() for card in cards]
    require(len(dealt) == len(set(dealt)), "option 'deal' gives the same nation flag card twice")
    return deal


def _validate_city_names(raw: object) -> dict[str, dict[str, str]]:
    require(isinstance(raw, Mapping), "option 'city_names' must map nations to {city id: name}")
    names: dict[str, dict[str, str]] = {}
    for nation, cities in raw.items():
        _nation_value(nation, "city_names")
        require(isinstance(cities, Mapping), f"option 'city_names.{nation}' must map city ids to names")
        for city_id, label in cities.items():
            require(
                city_id in CITY_IDS[nation],
                f"option 'city_names.{nation}' has unknown city {city_id!r}; cities are {', '.join(CITY_IDS[nation])}",
            )
            require(
                isinstance(label, str) and 0 < len(label.strip()) <= 40,
                f"option 'city_names.{nation}.{city_id}' must be a name of 1 to {PLACE_MOST} characters",
            )
            place_name(label.strip(), f"option 'city_names.{nation}.{city_id}'")
        names[nation] = {k: v.strip() for k, v in cities.items()}
    return names


def _blank_nation(nation_id: str, names: Mapping[str, str]) -> Nation:
    cities = tuple(
        City(id=cid, kind=kind, name=names.get(cid, printed), factory=starts)
        for cid, kind, printed, starts in HOME_CITIES[nation_id]
    )
    return Nation(nation_id, None, 0, 0, cities, 0, 0, 0, None)


OPTION_KEYS = ("players", "variant", "deal", "bond_table", "start_player", "city_names", "swiss_block")


def new(options: Mapping[str, Any]) -> State:
    """Set up a game. Options: players, variant, deal, bond_table, start_player, city_names, swiss_block."""
    require(isinstance(options, Mapping), "options must be an object")
    for key in options:
        require(key in OPTION_KEYS, f"unknown option {key!r}; options are {', '.join(sorted(OPTION_KEYS))}")
    players = _validate_players(options)
    variant = options.get("variant", "standard")
    require(variant in VARIANTS, f"option 'variant' must be 'standard' or 'experienced', not {variant!r}")
    try:
        table = (
            validate_bond_table(options["bond_table"], "option 'bond_table'")
            if "bond_table" in options
            else load_bond_table()
        )
    except ValueError as error:
        raise RuleError(str(error)) from None
    city_names = _validate_city_names(options["city_names"]) if "city_names" in options else {}
    swiss_block = options.get("swiss_block", "investor")
    require(swiss_block in SWISS_BLOCKS, f"option 'swiss_block' must be one of {', '.join(SWISS_BLOCKS)}, not {swiss_block!r}")
    nations = tuple(_blank_nation(n, city_names.get(n, {})) for n in NATIONS)
    start_cash = (STANDARD_CASH if variant == "standard" else EXPERIENCED_CASH)[len(players)]
    state = State(
        variant=variant,
        players=tuple(Player(p, 0, ()) for p in players),
        nations=nations,
        bank=0,
        investor_card=None,
        bond_table=tuple(table.items()),
        phase=DRAFT,
        turn=0,
        swiss_block=swiss_block,
    )
    for name in players:
        state = _transfer(state, BANK, _cash(name), start_cash, "starting money")
    if variant == "experienced":
        require("deal" not in options, "option 'deal' is only for the standard variant; the experienced one drafts")
        start = options.get("start_player", players[0])
        require(start in players, f"option 'start_player' names unknown player {start!r}")
        state = replace(state, draft_start=start, queue=tuple(_seats_from(state, start)))
        return _note(state, f"Bond draft: {start} chooses a Russia bond first")
    require("start_player" not in options, "option 'start_player' is only for the experienced variant")
    deal = _validate_deal(options["deal"], players) if "deal" in options else _default_deal(players)
    holder = {card: player for player, cards in deal.items() for card in cards}
    for player in players:
        for card in deal[player]:
            state = _buy(state, player, card, BIG_BOND, None)
            state = _buy(state, player, table[card], SMALL_BOND, None)
    for nation in state.nations:
        government = holder.get(nation.id)
        if government is None:
            # an undealt card goes to whoever lends the nation its 2 million
            government = _bond_holder(state, nation.id, SMALL_BOND)
        state = _with_nation(state, replace(nation, government=government))
    return _begin(state)


# ------------------------------------------------------------- dispatch


_HANDLERS: dict[str, Callable[[State, Mapping[str, Any]], State]] = {
    "rondel": _rondel,
    "allow_pass": _allow_pass,
    "block_pass": _block_pass,
    "build_factory": _build_factory,
    "produce": _produce,
    "import": _import,
    "maneuver": _maneuver,
    "skip": _skip,
    "invest": _invest,
    "pass": _pass,
    "donate": _donate,
    "hide_cash": _hide_cash,
    "correct": _correct,
}

_PHASE_ACTIONS: dict[str, tuple[str, ...]] = {
    DRAFT: ("invest", "pass"),
    MOVE: ("rondel",),
    PASS_CHECK: ("allow_pass", "block_pass"),
    FACTORY: ("build_factory", "skip"),
    PRODUCTION: ("produce", "skip"),
    IMPORT: ("import", "skip"),
    MANEUVER: ("maneuver", "skip"),
    INVESTOR: ("invest", "pass"),
    OVER: (),
}


def act(state: State, action: Mapping[str, Any]) -> State:
    """Apply one action; RuleError (and the old state untouched) if the rules forbid it."""
    require(isinstance(state, State), "not an Imperial 2030 state")
    require(isinstance(action, Mapping), "an action must be an object with a 'type'")
    kind = field(action, "type", str)
    handler = _HANDLERS.get(kind)
    require(handler is not None, f"unknown action type {kind!r}; expected one of {', '.join(_HANDLERS)}")
    assert handler is not None
    if kind != "correct":
        require(state.phase != OVER, "the game is over; only corrections are possible")
    return handler(replace(state, last=()), action)


def _rondel_options(state: State) -> list[dict[str, Any]]:
    if state.phase != MOVE:
        return []
    mover = state.nations[state.turn]
    government = mover.government
    assert government is not None
    cash = None if government in _secret(state) else _player(state, government).cash
    blockable = _may_be_blocked(state, mover)
    options = []
    for space in RONDEL:
        try:
            cost = rondel_cost(mover.rondel, space, mover.power_points)
            distance = rondel_distance(mover.rondel, space)
            passing = passes_investor(mover.rondel, space)
        except ValueError:
            continue
        need = cost + (_interest_shortfall(state, mover) if space == "investor" else 0)
        options.append({
            "target": space,
            "distance": distance if mover.rondel is not None else None,
            "cost": cost,
            "needs": need,
            # a free move tells nothing about the cash; any other answer would bound it
            "shortfall": 0 if need == 0 else None if cash is None else max(0, need - cash),
            "passes_investor": passing,
            "swiss_bank_may_block": passing and blockable,
            "blocked": passing and state.pass_blocked,
        })
    return options


def _nation_view(state: State, nation: Nation) -> dict[str, Any]:
    due = _interest_due(state, nation.id)
    return {
        "id": nation.id,
        "name": _name(nation.id),
        "government": nation.government,
        "rondel": nation.rondel,
        "treasury": nation.treasury,
        "power_points": nation.power_points,
        "power_factor": power_factor(nation.power_points),
        "flags": nation.flags,
        "armies": nation.armies,
        "fleets": nation.fleets,
        "supply": {"armies": ARMY_SUPPLY[nation.id], "fleets": FLEET_SUPPLY[nation.id]},
        "factories": nation.factories,
        "unoccupied_factories": nation.unoccupied_factories(),
        "cities": [
            {
                "id": c.id,
                "name": c.name,
                "kind": c.kind,
                "factory": c.factory,
                "occupied": c.occupied,
                "occupiers": list(c.occupiers),
            }
            for c in nation.cities
        ],
        "bonds_available": _available_bonds(state, nation.id),
        "interest_due": sum(due.values()),
        "tax_preview": _tax_preview(nation),
    }


def _tax_preview(nation: Nation) -> dict[str, int]:
    revenue = 2 * nation.unoccupied_factories() + nation.flags
    bonus, gain = tax_chart(revenue)
    return {"revenue": revenue, "bonus": bonus, "power_gain": gain}


def _player_view(state: State, player: Player, score: int) -> dict[str, Any]:
    governs = _governs(state, player.name)
    hidden = player.name in _secret(state)
    return {
        "name": player.name,
        "cash": None if hidden else player.cash,
        "cash_hidden": hidden,
        "bonds": [{"nation": n, "value": v, "interest": INTEREST[v]} for n, v in player.bonds],
        "bond_totals": {n: player.bond_total(n) for n in NATIONS if player.bond_total(n)},
        "governs": governs,
        "swiss_bank": not governs,
        "investor_card": player.name == state.investor_card,
        "score": None if hidden else score,
    }


def _decision_view(state: State) -> dict[str, Any] | None:
    if state.phase not in (INVESTOR, DRAFT):
        return None
    name = state.queue[0]
    player = _player(state, name)
    hidden = name in _secret(state)
    nations = [NATIONS[state.draft_nation]] if state.phase == DRAFT else list(NATIONS)
    choices = []
    for nation_id in nations:
        for value in _available_bonds(state, nation_id):
            trades: list[int | None] = [None]
            if state.phase == INVESTOR:
                trades += [v for n, v in player.bonds if n == nation_id and v < value]
            for trade_in in trades:
                price = value - (trade_in or 0)
                choices.append({
                    "nation": nation_id,
                    "value": value,
                    "trade_in": trade_in,
                    "price": price,
                    "affordable": None if hidden else price <= player.cash,
                })
    return {
        "player": name,
        "role": "draft" if state.phase == DRAFT else ("investor" if name == state.investor_card else "swiss_bank"),
        "cash": None if hidden else player.cash,
        "cash_hidden": hidden,
        "waiting": list(state.queue[1:]),
        "choices": choices,
    }


def view(state: State) -> dict[str, Any]:
    """Everything the table page shows, as JSON-safe data."""
    scores_now = _running_scores(state)
    secret = _secret(state)
    mover = state.nations[state.turn] if state.phase not in (DRAFT, OVER) else None
    production = None
    if state.phase == PRODUCTION and mover is not None:
        armies, fleets = _production_limits(mover)
        production = {"armies": armies, "fleets": fleets}
    over = state.phase == OVER
    return {
        "game": "imperial",
        "variant": state.variant,
        "phase": state.phase,
        "expected": _expected(state),
        "message": _expected(state),
        "actions": list(_PHASE_ACTIONS[state.phase]) + ([] if over else ["donate", "hide_cash"]) + ["correct"],
        "to_move": mover.id if mover else None,
        "acting_player": state.queue[0] if state.queue else (mover.government if mover else None),
        "pending_target": state.pending,
        "pass_blocked": state.pass_blocked,
        "swiss_banks_may_block": _blockers(state, mover) if state.phase == PASS_CHECK and mover else [],
        "swiss_block": state.swiss_block,
        "passed_investor": state.passed_investor,
        "rondel": {
            "spaces": [{"id": s, "name": RONDEL_NAMES[s]} for s in RONDEL],
            "positions": {n.id: n.rondel for n in state.nations},
            "options": _rondel_options(state),
            "free_steps": FREE_STEPS,
            "max_steps": MAX_STEPS,
        },
        "nations": [_nation_view(state, n) for n in state.nations],
        "players": [_player_view(state, p, scores_now[p.name]) for p in state.players],
        "investor_card": state.investor_card,
        "swiss_banks": _swiss_banks(state) if state.phase != DRAFT else [],
        "decision": _decision_view(state),
        "production": production,
        "factory_sites": [c.id for c in _build_sites(mover)] if state.phase == FACTORY and mover else [],
        # all money adds up to zero, so the bank's balance and the public counts give away the hidden sum
        "bank_paid_out": None if secret else -state.bank,
        "bonds": [{"value": v, "interest": i} for v, i in BONDS],
        "scores": _shown_scores(state),
        "cash_hidden": [p.name for p in state.players if p.name in secret],
        "ranking": _ranking(state),
        "game_over": over,
        "winners": _winners(state) if over else [],
        "turns_taken": state.turns_taken,
        "last": list(state.last),
        "limits": {
            "flags": MAX_FLAGS,
            "armies": max(ARMY_SUPPLY.values()),
            "fleets": max(FLEET_SUPPLY.values()),
            "power_points": MAX_POWER_POINTS,
        },
        "nations_by_power": nations_by_power({n.id: n.power_points for n in state.nations}),
    }


ENGINE = Engine(name="imperial", title="Imperial 2030", new=new, act=act, view=view, scores=scores, seats=(2, 6, 4),
                setup_options=(
                    {"key": "swiss_block", "label": "A Swiss bank's block", "kind": "choice",
                     "help": "where a nation whose move a Swiss bank blocked must stop",
                     "choices": [{"label": "on the Investor space, at no cost (our reading)", "options": {"swiss_block": "investor"}},
                                 {"label": "anywhere up to the Investor space", "options": {"swiss_block": "up_to_investor"}}]},
                ),
                option_keys=OPTION_KEYS)
