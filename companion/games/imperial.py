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
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping

from companion.games.base import Engine, RuleError, field, require
from companion.games.imperial_rules import (
    BIG_BOND,
    BOND_VALUES,
    BONDS,
    EXPERIENCED_CASH,
    FACTORY_PRICE,
    FREE_STEPS,
    GROUPS,
    IMPORT_PRICE,
    INTEREST,
    INVESTOR_PAYOUT,
    ARMY_SUPPLY,
    BOARD,
    FLEET_SUPPLY,
    MAX_FLAGS,
    MAX_IMPORTS,
    MAX_MONEY,
    MAX_POWER_POINTS,
    MAX_STEPS,
    NATION_NAMES,
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
    tie_break,
    validate_bond_table,
)

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

# {nation: ((id, kind, printed name, starts with a factory), ...)} from the board's data
HOME_CITIES: dict[str, tuple[tuple[str, str, str, bool], ...]] = {
    n: tuple(
        (c["id"], "armament" if c["id"].startswith("brown") else "shipyard", c["name"], bool(c.get("factory", False)))
        for c in BOARD[n]["cities"]
    )
    for n in NATIONS
}
CITY_IDS: dict[str, tuple[str, ...]] = {n: tuple(c[0] for c in cities) for n, cities in HOME_CITIES.items()}
UNIT_KINDS = ("army", "fleet")
VARIANTS = ("standard", "experienced")
# What a Swiss bank's block does: "investor" stops the nation on Investor at once, at no
# cost (the rulebook's reason for the block: the treasury must pay all interest; the
# reference engine's forceInvestor does the same); "up_to_investor" only forbids passing
# it, and the government picks any space up to Investor.
SWISS_BLOCKS = ("investor", "up_to_investor")

DRAFT = "draft"
MOVE = "rondel"
PASS_CHECK = "pass_check"
FACTORY = "factory"
PRODUCTION = "production"
IMPORT = "import"
MANEUVER = "maneuver"
INVESTOR = "investor"
OVER = "over"

BANK = ("bank", "")


# ----------------------------------------------------------------- state


@dataclass(frozen=True)
class City:
    id: str
    kind: str  # "armament" (brown city) or "shipyard" (light-blue city)
    name: str
    factory: bool
    occupiers: tuple[str, ...] = ()  # nations with hostile armies standing here

    @property
    def occupied(self) -> bool:
        return bool(self.occupiers)


@dataclass(frozen=True)
class Nation:
    id: str
    rondel: str | None
    treasury: int
    power_points: int
    cities: tuple[City, ...]
    flags: int
    armies: int
    fleets: int
    government: str | None

    def city(self, city_id: object) -> City:
        """The city named by its id or its printed name (any case)."""
        wanted = city_id.strip().lower() if isinstance(city_id, str) else None
        for city in self.cities:
            if wanted in (city.id, city.name.lower()):
                return city
        known = ", ".join(f"{c.id} ({c.name})" for c in self.cities)
        raise RuleError(f"{NATION_NAMES[self.id]} has no city {city_id!r}; its cities are {known}")

    def unoccupied_factories(self, kind: str | None = None) -> int:
        return sum(1 for c in self.cities if c.factory and not c.occupied and (kind is None or c.kind == kind))

    @property
    def factories(self) -> int:
        return sum(1 for c in self.cities if c.factory)


@dataclass(frozen=True)
class Player:
    name: str
    cash: int
    bonds: tuple[tuple[str, int], ...]  # (nation, value), kept in treasury order then value

    def bond_total(self, nation: str) -> int:
        return sum(value for n, value in self.bonds if n == nation)


@dataclass(frozen=True)
class State:
    variant: str
    players: tuple[Player, ...]
    nations: tuple[Nation, ...]
    bank: int
    investor_card: str | None
    bond_table: tuple[tuple[str, str], ...]
    phase: str
    turn: int  # index into NATIONS of the nation acting (or next to act)
    pending: str | None = None  # rondel target awaiting the Swiss banks' consent
    passed_investor: bool = False  # this turn's move went over Investor
    pass_blocked: bool = False  # a Swiss bank has refused to let this turn pass Investor
    queue: tuple[str, ...] = ()  # players still to decide (investor round or draft)
    draft_nation: int = 0
    draft_start: str | None = None
    game_over: bool = False
    turns_taken: int = 0
    last: tuple[str, ...] = ()  # what the latest action did, for the page
    swiss_block: str = "investor"  # one of SWISS_BLOCKS
    hidden_cash: tuple[str, ...] = ()  # players keeping their cash secret, in seating order


def _sort_bonds(bonds: list[tuple[str, int]]) -> tuple[tuple[str, int], ...]:
    return tuple(sorted(bonds, key=lambda b: (NATIONS.index(b[0]), b[1])))


def _name(nation_id: str) -> str:
    return NATION_NAMES[nation_id]


def _nation(state: State, nation_id: str) -> Nation:
    return state.nations[NATIONS.index(nation_id)]


def _with_nation(state: State, nation: Nation) -> State:
    nations = list(state.nations)
    nations[NATIONS.index(nation.id)] = nation
    return replace(state, nations=tuple(nations))


def _player(state: State, name: str) -> Player:
    for player in state.players:
        if player.name == name:
            return player
    raise RuleError(f"no player is called {name!r}")


def _with_player(state: State, player: Player) -> State:
    return replace(state, players=tuple(player if p.name == player.name else p for p in state.players))


def _with_city(state: State, nation_id: str, city: City) -> State:
    nation = _nation(state, nation_id)
    cities = tuple(city if c.id == city.id else c for c in nation.cities)
    return _with_nation(state, replace(nation, cities=cities))


def _note(state: State, message: str) -> State:
    return replace(state, last=state.last + (message,))


def _seats_from(state: State, first: str) -> list[str]:
    names = [p.name for p in state.players]
    start = names.index(first)
    return names[start:] + names[:start]


def _next_seat(state: State, name: str) -> str:
    return _seats_from(state, name)[1 % len(state.players)]


def _governs(state: State, name: str) -> list[str]:
    return [n.id for n in state.nations if n.government == name]


def _swiss_banks(state: State) -> list[str]:
    return [p.name for p in state.players if not _governs(state, p.name)]


def _bond_holder(state: State, nation_id: str, value: int) -> str | None:
    for player in state.players:
        if (nation_id, value) in player.bonds:
            return player.name
    return None


def _available_bonds(state: State, nation_id: str) -> list[int]:
    return [v for v in BOND_VALUES if _bond_holder(state, nation_id, v) is None]


def _interest_due(state: State, nation_id: str) -> dict[str, int]:
    due = {}
    for player in state.players:
        amount = sum(INTEREST[v] for n, v in player.bonds if n == nation_id)
        if amount:
            due[player.name] = amount
    return due


# ----------------------------------------------------------------- money


def _balance(state: State, account: tuple[str, str]) -> int:
    kind, key = account
    if kind == "bank":
        return state.bank
    if kind == "treasury":
        return _nation(state, key).treasury
    return _player(state, key).cash


def _account_name(account: tuple[str, str]) -> str:
    kind, key = account
    if kind == "bank":
        return "the bank"
    if kind == "treasury":
        return f"the {_name(key)} treasury"
    return key


def _set_balance(state: State, account: tuple[str, str], amount: int) -> State:
    kind, key = account
    if kind == "bank":
        return replace(state, bank=amount)
    if kind == "treasury":
        return _with_nation(state, replace(_nation(state, key), treasury=amount))
    return _with_player(state, replace(_player(state, key), cash=amount))


def _secret(state: State) -> frozenset[str]:
    """Players whose cash the shared page must not give away; the end of the game reveals everyone."""
    return frozenset() if state.phase == OVER else frozenset(state.hidden_cash)


def _shortfall_message(state: State, account: tuple[str, str], has: int, needs: int, purpose: str) -> str:
    if account[0] == "cash" and account[1] in _secret(state):
        # the refusal itself says "not enough"; the figures would say how much there is
        return f"{account[1]} cannot pay the {needs} million {purpose} costs (their cash is hidden)"
    return (
        f"{_account_name(account)} has {has} million but {purpose} costs {needs}: "
        f"short by {needs - has} million"
    )


def _transfer(state: State, source: tuple[str, str], dest: tuple[str, str], amount: int, purpose: str) -> State:
    """Move money; only the bank may go below zero (it never runs out)."""
    if amount == 0:
        return state
    has = _balance(state, source)
    if source != BANK and has < amount:
        raise RuleError(_shortfall_message(state, source, has, amount, purpose))
    state = _set_balance(state, source, has - amount)
    return _set_balance(state, dest, _balance(state, dest) + amount)


def _cash(name: str) -> tuple[str, str]:
    return ("cash", name)


def _treasury(nation_id: str) -> tuple[str, str]:
    return ("treasury", nation_id)


# ------------------------------------------------------------ validation


def _reject_extra(given: Mapping[str, Any], allowed: set[str], what: str) -> None:
    extra = sorted(str(k) for k in given if k not in allowed)
    if extra:
        raise RuleError(f"{what} does not take '{extra[0]}'")


def _only_keys(action: Mapping[str, Any], allowed: set[str]) -> None:
    _reject_extra(action, allowed | {"type"}, f"'{action['type']}'")


def _nation_value(value: object, key: str) -> str:
    require(isinstance(value, str), f"'{key}' must be a nation id, not {value!r}")
    require(value in NATIONS, f"'{key}' names unknown nation {value!r}; nations are {', '.join(NATIONS)}")
    return value  # type: ignore[return-value]


def _nation_arg(action: Mapping[str, Any], key: str = "nation") -> str:
    return _nation_value(field(action, key, str), key)


def _player_arg(state: State, action: Mapping[str, Any], key: str = "player") -> str:
    name = field(action, key, str)
    require(any(p.name == name for p in state.players), f"'{key}' names unknown player {name!r}")
    return name


def _int_arg(action: Mapping[str, Any], key: str, low: int, high: int | None = None, default: Any = ...) -> int:
    value = field(action, key, int, default=default)
    require(value >= low, f"'{key}' must be at least {low}, not {value}")
    require(high is None or value <= high, f"'{key}' must be at most {high}, not {value}")
    return value


def _expect_phase(state: State, phases: tuple[str, ...], kind: str) -> None:
    require(state.phase in phases, f"'{kind}' is not possible now: {_expected(state)}")


def _acting(state: State, action: Mapping[str, Any]) -> Nation:
    """The nation carrying out its rondel action; a named other nation is out of turn."""
    mover = state.nations[state.turn]
    if "nation" in action:
        named = _nation_arg(action)
        require(named == mover.id, f"it is {_name(mover.id)}'s turn, not {_name(named)}'s")
    return mover


def _city_ref(state: State, entry: object, key: str, extra: frozenset[str] = frozenset()) -> tuple[str, City]:
    require(isinstance(entry, Mapping), f"each entry of '{key}' must be an object with 'owner' and 'city'")
    assert isinstance(entry, Mapping)
    _reject_extra(entry, {"owner", "city"} | extra, f"an entry of '{key}'")
    owner = _nation_value(entry.get("owner"), f"{key}.owner")
    city_id = entry.get("city")
    require(isinstance(city_id, str), f"'{key}.city' must be a city id or name, not {city_id!r}")
    try:
        return owner, _nation(state, owner).city(city_id)
    except RuleError as error:
        raise RuleError(f"'{key}.city': {error}") from None


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
                f"option 'city_names.{nation}.{city_id}' must be a name of 1 to 40 characters",
            )
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


def _start_turn(state: State, index: int) -> State:
    for step in range(len(NATIONS)):
        i = (index + step) % len(NATIONS)
        if state.nations[i].government is not None:
            return replace(state, phase=MOVE, turn=i, pending=None, passed_investor=False, pass_blocked=False, queue=())
    raise RuleError("no nation has a government")


def _buy(state: State, name: str, nation_id: str, value: int, trade_in: int | None) -> State:
    price = value - (trade_in or 0)
    label = f"the {_name(nation_id)} {value}-million bond" + (f" (trading in the {trade_in})" if trade_in else "")
    state = _transfer(state, _cash(name), _treasury(nation_id), price, label)
    player = _player(state, name)
    bonds = [b for b in player.bonds if b != (nation_id, trade_in)] + [(nation_id, value)]
    return _with_player(state, replace(player, bonds=_sort_bonds(bonds)))


# ------------------------------------------------------------- rondel


def _blockers(state: State, nation: Nation) -> list[str]:
    """Swiss banks able to keep this nation from passing Investor now."""
    if nation.treasury < sum(_interest_due(state, nation.id).values()):
        return []
    return _swiss_banks(state)


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


def _after_action(state: State) -> State:
    if state.game_over:
        return replace(state, phase=OVER, queue=())
    if state.passed_investor:
        return _open_investor(state)
    return _start_turn(state, state.turn + 1)


# ------------------------------------------------------------- spaces


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


def _production_limits(nation: Nation) -> tuple[int, int]:
    return (
        min(nation.unoccupied_factories("armament"), max(0, ARMY_SUPPLY[nation.id] - nation.armies)),
        min(nation.unoccupied_factories("shipyard"), max(0, FLEET_SUPPLY[nation.id] - nation.fleets)),
    )


def _produce(state: State, action: Mapping[str, Any]) -> State:
    _only_keys(action, {"nation", "armies", "fleets"})
    _expect_phase(state, (PRODUCTION,), "produce")
    nation = _acting(state, action)
    max_armies, max_fleets = _production_limits(nation)
    armies = _int_arg(action, "armies", 0, max_armies, default=max_armies)
    fleets = _int_arg(action, "fleets", 0, max_fleets, default=max_fleets)
    state = _with_nation(state, replace(nation, armies=nation.armies + armies, fleets=nation.fleets + fleets))
    return _after_action(_note(state, f"{_name(nation.id)} produces {armies} armies and {fleets} fleets"))


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
    return _after_action(_note(state, f"{_name(nation.id)} imports {armies} armies and {fleets} fleets"))


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


# ------------------------------------------------------------ investor


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


# ------------------------------------------------------- anytime actions


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
    field(action, "reason", str, default="")
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


# ---------------------------------------------------------------- view


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
        return f"{who}: build a factory for {FACTORY_PRICE} million, or skip"
    if state.phase == PRODUCTION:
        armies, fleets = _production_limits(mover)
        return f"{who}: produce up to {armies} armies and {fleets} fleets"
    if state.phase == IMPORT:
        return f"{who}: import up to {MAX_IMPORTS} units at {IMPORT_PRICE} million each, or skip"
    if state.phase == MANEUVER:
        return f"{who}: report battles, occupations and flags, then end the maneuver"
    decider = state.queue[0]
    role = "investor card" if decider == state.investor_card else "Swiss bank"
    return f"{decider} ({role}) may buy or trade up one bond, or pass"


def _running_scores(state: State) -> dict[str, int]:
    points = {n.id: n.power_points for n in state.nations}
    return {p.name: final_score(p.bonds, p.cash, points) for p in state.players}


def _shown_scores(state: State) -> dict[str, int]:
    """The running scores the table may see: a hidden player's score less their public bonds is their cash."""
    secret = _secret(state)
    return {name: score for name, score in _running_scores(state).items() if name not in secret}


def _ranking(state: State) -> list[str]:
    points = {n.id: n.power_points for n in state.nations}
    totals = _running_scores(state)
    secret = _secret(state)
    # a hidden player's place among the others would bound their cash
    return sorted(
        (p.name for p in state.players if p.name not in secret),
        key=lambda name: (totals[name], tie_break(_player(state, name).bonds, points)),
        reverse=True,
    )


def _winners(state: State) -> list[str]:
    points = {n.id: n.power_points for n in state.nations}
    totals = _running_scores(state)

    def key(name: str) -> tuple[int, tuple[int, ...]]:
        return totals[name], tie_break(_player(state, name).bonds, points)

    ranking = _ranking(state)
    return [name for name in ranking if key(name) == key(ranking[0])]


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


def scores(state: State) -> dict[str, int]:
    """The running score: bonds' interest times power factor, plus cash; players hiding their cash are left out."""
    return _shown_scores(state)


ENGINE = Engine(name="imperial", title="Imperial 2030", new=new, act=act, view=view, scores=scores, seats=(2, 6, 4),
                setup_options=(
                    {"key": "swiss_block", "label": "A Swiss bank's block", "kind": "choice",
                     "help": "where a nation whose move a Swiss bank blocked must stop",
                     "choices": [{"label": "on the Investor space, at no cost (our reading)", "options": {"swiss_block": "investor"}},
                                 {"label": "anywhere up to the Investor space", "options": {"swiss_block": "up_to_investor"}}]},
                ),
                option_keys=OPTION_KEYS)
