"""Imperial 2030 -- the game's state and the helpers every action shares.

The frozen City, Nation, Player and State; the board's home cities and the phase
names; reading and replacing a nation, player or city; seats, governments and bonds
held; moving money between the bank, the treasuries and the players' cash; and the
checks on an action's arguments.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Mapping

from companion.games.base import RuleError, field, require
from companion.games.imperial_rules import BOARD, BOND_VALUES, INTEREST, NATIONS, NATION_NAMES


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


# ------------------------------------------------------------- turn order


def _start_turn(state: State, index: int) -> State:
    for step in range(len(NATIONS)):
        i = (index + step) % len(NATIONS)
        if state.nations[i].government is not None:
            return replace(state, phase=MOVE, turn=i, pending=None, passed_investor=False, pass_blocked=False, queue=())
    raise RuleError("no nation has a government")
