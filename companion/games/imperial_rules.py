"""Imperial 2030: the arithmetic of the rules, free of any game state.

Everything here is a pure function of plain numbers and names, so the state
machine in `companion.games.imperial` and the tests share one source of truth
for rondel costs, the taxation chart, bond prices and the final score.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping

NATIONS: tuple[str, ...] = ("russia", "china", "india", "brazil", "united_states", "europe")
NATION_NAMES: dict[str, str] = {
    "russia": "Russia",
    "china": "China",
    "india": "India",
    "brazil": "Brazil",
    "united_states": "United States",
    "europe": "Europe",
}

RONDEL: tuple[str, ...] = (
    "factory",
    "production1",
    "maneuver1",
    "investor",
    "import",
    "production2",
    "maneuver2",
    "taxation",
)
RONDEL_NAMES: dict[str, str] = {
    "factory": "Factory",
    "production1": "Production",
    "maneuver1": "Maneuver",
    "investor": "Investor",
    "import": "Import",
    "production2": "Production",
    "maneuver2": "Maneuver",
    "taxation": "Taxation",
}
FREE_STEPS = 3
MAX_STEPS = 6

# (price, interest) of the nine bond cards every nation has
BONDS: tuple[tuple[int, int], ...] = (
    (2, 1), (4, 2), (6, 3), (9, 4), (12, 5), (16, 6), (20, 7), (25, 8), (30, 9),
)
INTEREST: dict[int, int] = dict(BONDS)
BOND_VALUES: tuple[int, ...] = tuple(value for value, _ in BONDS)

MAX_POWER_POINTS = 25
MAX_FLAGS = 15
BOARD_FILE = Path(__file__).parent / "data" / "imperial_board.toml"
# Home cities and pieces differ by nation on the printed board (China has three armament
# cities and one harbour, the United States the other way round); see the data file's sources.
BOARD: dict[str, dict] = tomllib.loads(BOARD_FILE.read_text(encoding="utf-8"))
BOARD_SOURCES: dict[str, str] = BOARD.pop("sources", {})
if sorted(BOARD) != sorted(NATIONS):
    raise RuntimeError(f"{BOARD_FILE.name} must describe exactly the nations {', '.join(NATIONS)}")
ARMY_SUPPLY: dict[str, int] = {n: int(BOARD[n]["armies"]) for n in NATIONS}
FLEET_SUPPLY: dict[str, int] = {n: int(BOARD[n]["fleets"]) for n in NATIONS}
# every nation has four home cities, one factory each at most
MAX_FACTORIES = max(len(BOARD[n]["cities"]) for n in NATIONS)
# the most armies and fleets one nation's colour has in the box
MAX_UNITS = max(ARMY_SUPPLY[n] + FLEET_SUPPLY[n] for n in NATIONS)
FACTORY_PRICE = 5
IMPORT_PRICE = 1
MAX_IMPORTS = 3
INVESTOR_PAYOUT = 2
# The bank's notes are not counted in the rules (the bank never runs out), but all 54 bonds
# together cost 744 million and a nation collects at most 23 a tax turn: no treasury or
# purse at a real table reaches this, so a correction beyond it is a typing slip.
MAX_MONEY = 1000

# (lowest revenue, success bonus, power points gained), in rising order of revenue
_TAX_CHART: tuple[tuple[int, int, int], ...] = (
    (0, 0, 0),
    (6, 1, 1),
    (8, 1, 2),
    (10, 2, 3),
    (11, 2, 4),
    (12, 3, 5),
    (13, 3, 6),
    (14, 4, 7),
    (15, 4, 8),
    (16, 5, 9),
    (18, 5, 10),
)

STANDARD_CASH: dict[int, int] = {2: 35, 3: 24, 4: 13, 5: 13, 6: 13}
EXPERIENCED_CASH: dict[int, int] = {2: 37, 3: 25, 4: 19, 5: 15, 6: 13}

# Which flag cards travel together when fewer than four play; the first nation of
# each group is the card that is actually dealt, the rest follow it.
GROUPS: dict[int, tuple[tuple[str, ...], ...]] = {
    2: (("russia", "india", "united_states"), ("china", "brazil", "europe")),
    3: (("russia", "brazil"), ("china", "europe"), ("india", "united_states")),
}
BIG_BOND = 9
SMALL_BOND = 2

FLAG_CARDS_FILE = Path(__file__).parent / "data" / "imperial_flag_cards.toml"


def power_factor(power_points: int) -> int:
    """The multiplier a nation's power points give (0 at the start, 5 at the end)."""
    return power_points // 5


def _space_index(space: str, what: str) -> int:
    if not isinstance(space, str) or space not in RONDEL:
        raise ValueError(f"unknown rondel space {space!r} for {what}; expected one of {', '.join(RONDEL)}")
    return RONDEL.index(space)


def rondel_distance(start: str | None, target: str) -> int:
    """Spaces moved clockwise from start to target (0 for a first placement)."""
    t = _space_index(target, "target")
    if start is None:
        return 0
    s = _space_index(start, "start")
    steps = (t - s) % len(RONDEL)
    if steps == 0:
        raise ValueError(f"a nation may not stay on {start}; it must move at least one space")
    if steps > MAX_STEPS:
        raise ValueError(f"{start} to {target} is {steps} spaces; at most {MAX_STEPS} are allowed")
    return steps


def rondel_cost(start: str | None, target: str, power_points: int) -> int:
    """Millions the government pays to move its nation from start to target.

    start None is the nation's first turn: any space, free. ValueError for staying
    put, for more than six spaces and for an unknown space.
    """
    if isinstance(power_points, bool) or not isinstance(power_points, int) or power_points < 0:
        raise ValueError(f"power_points must be a non-negative integer, not {power_points!r}")
    steps = rondel_distance(start, target)
    return max(0, steps - FREE_STEPS) * (1 + power_factor(power_points))


def passes_investor(start: str | None, target: str) -> bool:
    """Whether the move goes over Investor without stopping there."""
    steps = rondel_distance(start, target)
    if start is None:
        return False
    s = RONDEL.index(start)
    investor = RONDEL.index("investor")
    return any((s + k) % len(RONDEL) == investor for k in range(1, steps))


def tax_chart(revenue: int) -> tuple[int, int]:
    """(success bonus, power points gained) for a tax revenue."""
    bonus = gain = 0
    for lowest, row_bonus, row_gain in _TAX_CHART:
        if revenue >= lowest:
            bonus, gain = row_bonus, row_gain
    return bonus, gain


@dataclass(frozen=True)
class TaxResult:
    revenue: int
    soldiers_pay: int
    bonus: int
    power_gain: int
    treasury: int
    power_points: int
    game_over: bool


def _count(name: str, value: object, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an integer, not {value!r}")
    if value < 0:
        raise ValueError(f"{name} must not be negative, got {value}")
    if high is not None and value > high:
        raise ValueError(f"{name} must be at most {high}, got {value}")
    return value


def tax(factories: int, flags: int, units: int, treasury: int, power_points: int) -> TaxResult:
    """One Taxation turn.

    factories -- factories free of hostile armies; flags -- flags on the board;
    units -- armies plus fleets; treasury and power_points -- before the turn.
    """
    _count("factories", factories, MAX_FACTORIES)
    _count("flags", flags, MAX_FLAGS)
    _count("units", units, MAX_UNITS)
    _count("treasury", treasury)
    _count("power_points", power_points, MAX_POWER_POINTS)
    revenue = 2 * factories + flags
    money = treasury + revenue
    # soldiers stop being paid when the treasury runs dry; the rest is forgiven
    soldiers_pay = min(units, money)
    money -= soldiers_pay
    chart_bonus, gain = tax_chart(revenue)
    bonus = min(chart_bonus, money)
    money -= bonus
    points = min(MAX_POWER_POINTS, power_points + gain)
    return TaxResult(
        revenue=revenue,
        soldiers_pay=soldiers_pay,
        bonus=bonus,
        power_gain=gain,
        treasury=money,
        power_points=points,
        game_over=points >= MAX_POWER_POINTS,
    )


def _checked_bonds(bonds: Iterable[tuple[str, int]]) -> list[tuple[str, int]]:
    checked = []
    for item in bonds:
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise ValueError(f"a bond must be a (nation, value) pair, not {item!r}")
        nation, value = item
        if nation not in NATIONS:
            raise ValueError(f"unknown nation {nation!r} in bonds")
        if isinstance(value, bool) or value not in INTEREST:
            raise ValueError(f"no {nation} bond is worth {value!r}; bond values are {BOND_VALUES}")
        checked.append((nation, value))
    return checked


def final_score(bonds: Iterable[tuple[str, int]], cash: int, power_points: Mapping[str, int]) -> int:
    """Victory points: each bond's interest times its nation's power factor, plus cash."""
    _count("cash", cash)
    total = cash
    for nation, value in _checked_bonds(bonds):
        if nation not in power_points:
            raise ValueError(f"power_points has no entry for {nation}")
        total += INTEREST[value] * power_factor(_count(f"power_points[{nation}]", power_points[nation]))
    return total


def nations_by_power(power_points: Mapping[str, int]) -> list[str]:
    """Nations from most to fewest power points; equal nations keep treasury order."""
    return sorted(NATIONS, key=lambda n: (-power_points.get(n, 0), NATIONS.index(n)))


def tie_break(bonds: Iterable[tuple[str, int]], power_points: Mapping[str, int]) -> tuple[int, ...]:
    """Bond totals per nation, strongest nation first: the larger tuple wins a tied score."""
    totals = dict.fromkeys(NATIONS, 0)
    for nation, value in _checked_bonds(bonds):
        totals[nation] += value
    return tuple(totals[n] for n in nations_by_power(power_points))


def validate_bond_table(table: object, where: str) -> dict[str, str]:
    """Check a flag-card table (nation -> nation of its small bond) and return it."""
    if not isinstance(table, Mapping):
        raise ValueError(f"{where} must map each nation to the nation of its 2-million bond")
    unknown = sorted(set(table) - set(NATIONS), key=str)
    if unknown:
        raise ValueError(f"{where} has unknown nation {unknown[0]!r}")
    missing = [n for n in NATIONS if n not in table]
    if missing:
        raise ValueError(f"{where} has no entry for {missing[0]}")
    seen: dict[str, str] = {}
    for nation in NATIONS:
        other = table[nation]
        if other not in NATIONS:
            raise ValueError(f"{where}[{nation}] names unknown nation {other!r}")
        if other == nation:
            raise ValueError(f"{where}[{nation}] must name another nation than itself")
        # only one 2-million bond exists per nation, so two cards cannot both hand it out
        if other in seen:
            raise ValueError(f"{where}[{nation}] and {where}[{seen[other]}] both name {other}")
        seen[other] = nation
    return {n: table[n] for n in NATIONS}


def load_bond_table(path: Path = FLAG_CARDS_FILE) -> dict[str, str]:
    """The flag-card table shipped with the companion."""
    with path.open("rb") as handle:
        data = tomllib.load(handle)
    return validate_bond_table(data.get("small_bond"), f"{path.name} [small_bond]")
