"""Exact dice arithmetic shared by the trackers.

Everything here returns `Fraction`s: the page shows odds live, and floats would
make "do the odds sum to 1" a question of rounding instead of a fact.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from itertools import product
from typing import Iterable, Sequence

D6 = range(1, 7)
# A die that was rerolled until it beat 1 is uniform over 2..6.
D6_NO_ONE = range(2, 7)


def compare_dice(
    attack: Sequence[int],
    defend: Sequence[int],
    attacker_bonus: int = 0,
    defender_bonus: int = 0,
) -> tuple[int, int]:
    """(attacker losses, defender losses) for one roll.

    Dice are paired highest with highest; the defender wins ties. A bonus is
    added to that side's best die only, so sorting first keeps it the best.
    """
    a = sorted(attack, reverse=True)
    d = sorted(defend, reverse=True)
    if a:
        a[0] += attacker_bonus
    if d:
        d[0] += defender_bonus
    attacker_losses = defender_losses = 0
    for x, y in zip(a, d):
        if x > y:
            defender_losses += 1
        else:
            attacker_losses += 1
    return attacker_losses, defender_losses


@lru_cache(maxsize=None)
def roll_distribution(
    attack_dice: int,
    defend_dice: int,
    attacker_bonus: int = 0,
    defender_bonus: int = 0,
    attacker_no_ones: int = 0,
) -> dict[tuple[int, int], Fraction]:
    """Exact {(attacker losses, defender losses): probability} for one roll.

    `attacker_no_ones` of the attacker's dice can never show 1 (they are
    rerolled until they do better), so they are uniform over 2..6.
    """
    if attack_dice < 1 or defend_dice < 1:
        raise ValueError("each side rolls at least one die")
    if not 0 <= attacker_no_ones <= attack_dice:
        raise ValueError("cannot protect more dice than are rolled")
    faces: list[Iterable[int]] = [D6_NO_ONE] * attacker_no_ones + [D6] * (attack_dice - attacker_no_ones)
    counts: dict[tuple[int, int], int] = {}
    total = 0
    for attack in product(*faces):
        for defend in product(D6, repeat=defend_dice):
            key = compare_dice(attack, defend, attacker_bonus, defender_bonus)
            counts[key] = counts.get(key, 0) + 1
            total += 1
    return {key: Fraction(n, total) for key, n in sorted(counts.items())}


def _dice_for(armies: int, cap: int) -> int:
    return min(armies, cap)


@lru_cache(maxsize=64)
def attack_outcomes(
    attackers: int,
    defenders: int,
    attack_cap: int = 3,
    defend_cap: int = 2,
    attacker_bonus: int = 0,
    defender_bonus: int = 0,
    attacker_no_ones: int = 0,
) -> dict[tuple[str, int], Fraction]:
    """Exact distribution of how a fight to the finish ends.

    Both sides roll as many dice as they may every time. Keys are
    ("won", attackers left) and ("lost", defenders left); the attack ends
    when either side runs out of armies.

    Probability mass is pushed forward one roll at a time. Every roll removes
    at least one army, so the states can be processed by falling total and
    each is finished before anything flows out of it.
    """
    if attackers < 0 or defenders < 0:
        raise ValueError("army counts cannot be negative")
    if attack_cap < 1 or defend_cap < 1:
        raise ValueError("each side must be allowed at least one die")
    if attackers == 0 or defenders == 0:
        return {("won", attackers): Fraction(1)} if defenders == 0 else {("lost", defenders): Fraction(1)}
    mass: dict[tuple[int, int], Fraction] = {(attackers, defenders): Fraction(1)}
    result: dict[tuple[str, int], Fraction] = {}
    for total in range(attackers + defenders, 0, -1):
        for a in range(min(attackers, total), -1, -1):
            d = total - a
            if d < 0 or d > defenders:
                continue
            p = mass.pop((a, d), None)
            if p is None:
                continue
            if d == 0:
                result[("won", a)] = result.get(("won", a), 0) + p
                continue
            if a == 0:
                result[("lost", d)] = result.get(("lost", d), 0) + p
                continue
            ad = _dice_for(a, attack_cap)
            dd = _dice_for(d, defend_cap)
            protected = min(attacker_no_ones, ad)
            for (la, ld), q in roll_distribution(ad, dd, attacker_bonus, defender_bonus, protected).items():
                key = (a - la, d - ld)
                mass[key] = mass.get(key, 0) + p * q
    return dict(sorted(result.items()))

