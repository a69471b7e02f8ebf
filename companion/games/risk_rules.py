"""Risk: Balance of Power -- the arithmetic of troops, free of any game state: cards turned in,
reinforcements and the neutral army's resistance roll.
"""

from __future__ import annotations

from fractions import Fraction
from math import ceil
from typing import Any

from companion.games.risk_board import CARD_TROOPS, CITY_COUNT, MIN_BASE, NEUTRAL_TABLE, TERRITORY_COUNT


def _whole(name: str, value: Any, low: int = 0, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be a whole number, not {value!r}")
    if value < low or (high is not None and value > high):
        bound = f"from {low} to {high}" if high is not None else f"at least {low}"
        raise ValueError(f"{name} must be {bound}, not {value}")
    return value


def card_troops(stars: int) -> int:
    """Troops for turning in cards worth `stars` (0 means no cards turned in)."""
    _whole("stars", stars)
    if stars == 0:
        return 0
    if stars not in CARD_TROOPS:
        raise ValueError(f"cards are turned in for 2 to 10 stars, not {stars}")
    return CARD_TROOPS[stars]


def reinforcement_breakdown(
    territories: int, cities: int = 0, region_bonus: int = 0, capitals: int = 0, stars: int = 0
) -> dict[str, int]:
    """Each term of a player's new troops, and their total."""
    _whole("territories", territories, 0, TERRITORY_COUNT)
    _whole("cities", cities, 0, CITY_COUNT)
    _whole("region_bonus", region_bonus)
    _whole("capitals", capitals, 0, 2)
    if cities > territories:
        raise ValueError("a city stands on a territory: cities cannot outnumber territories")
    if capitals > territories:
        raise ValueError("a capital stands on a territory: capitals cannot outnumber territories")
    cards = card_troops(stars)
    counted = territories + cities
    base = max(MIN_BASE, counted // 3)
    return {
        "counted": counted,
        "base": base,
        "regions": region_bonus,
        "capitals": capitals,
        "cards": cards,
        "total": base + region_bonus + capitals + cards,
    }


def reinforcements(territories: int, cities: int = 0, region_bonus: int = 0, capitals: int = 0, stars: int = 0) -> int:
    """New troops at the start of a turn; ValueError for counts no board allows."""
    return reinforcement_breakdown(territories, cities, region_bonus, capitals, stars)["total"]


def resistance_threshold(lost: int) -> int:
    """The number printed under the rightmost filled slot of the neutral's table."""
    _whole("lost", lost, 1, len(NEUTRAL_TABLE))
    return NEUTRAL_TABLE[lost - 1]


def resistance_return(lost: int, roll_total: int) -> int:
    """Neutral troops that go back on the board after the resistance roll."""
    _whole("roll_total", roll_total, 2, 12)
    if lost == 0:
        return 0
    return ceil(lost / 2) if roll_total >= resistance_threshold(lost) else 0


def two_dice_at_least(target: int) -> Fraction:
    """Chance that two six-sided dice sum to `target` or more."""
    hits = sum(1 for a in range(1, 7) for b in range(1, 7) if a + b >= target)
    return Fraction(hits, 36)
