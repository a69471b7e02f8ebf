"""Risk: Balance of Power -- exact battle odds: one roll, a fight to the finish and a neutral uprising."""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

from companion.games import dice
from companion.games.risk_board import MAX_TROOPS
from companion.games.risk_rules import _whole


def roll_odds(
    attack_dice: int,
    defend_dice: int,
    attacker_airfield: bool = False,
    defender_airfield: bool = False,
    recon: int = 0,
) -> dict[tuple[int, int], Fraction]:
    """Exact {(attacker losses, defender losses): probability} for one roll."""
    _whole("attack_dice", attack_dice, 1, 3)
    _whole("defend_dice", defend_dice, 1, 2)
    _whole("recon", recon, 0)
    return dict(dice.roll_distribution(attack_dice, defend_dice, int(attacker_airfield), int(defender_airfield), min(recon, attack_dice)))


def _attack_cap(rough: bool, special_forces: bool) -> int:
    return 2 if rough and not special_forces else 3


def attack_odds(
    attackers: int,
    defenders: int,
    rough: bool = False,
    special_forces: bool = False,
    attacker_airfield: bool = False,
    defender_airfield: bool = False,
    recon: int = 0,
) -> dict[tuple[str, int], Fraction]:
    """Exact distribution of a fight to the finish, both sides always rolling all the dice they may.

    `attackers` counts only the armies able to attack (the one left behind is
    not included). Keys are ("won", attackers left) and ("lost", defenders left).
    """
    _whole("attackers", attackers, 0, MAX_TROOPS)
    _whole("defenders", defenders, 0, MAX_TROOPS)
    _whole("recon", recon, 0)
    return dice.attack_outcomes(
        attackers,
        defenders,
        _attack_cap(rough, special_forces),
        2,
        int(attacker_airfield),
        int(defender_airfield),
        min(recon, 3),
    )


def conquest_probability(
    attackers: int,
    defenders: int,
    rough: bool = False,
    special_forces: bool = False,
    attacker_airfield: bool = False,
    defender_airfield: bool = False,
    recon: int = 0,
) -> Fraction:
    """Exact chance that `attackers` (able to attack) take a territory held by `defenders`."""
    outcomes = attack_odds(attackers, defenders, rough, special_forces, attacker_airfield, defender_airfield, recon)
    return sum((p for (kind, _), p in outcomes.items() if kind == "won"), Fraction(0))


@lru_cache(maxsize=256)
def uprising_probability(attackers: int, defenders: int, rough: bool = False, defender_airfield: bool = False) -> Fraction:
    """Chance that an uprising takes the territory before the neutral loses a troop.

    The neutral keeps rolling all the dice it may; the fight stops at its first
    loss unless that same roll also empties the territory.
    """
    _whole("attackers", attackers, 1, MAX_TROOPS)
    _whole("defenders", defenders, 0, MAX_TROOPS)
    ad = min(attackers, _attack_cap(rough, False))
    # Built up from one defender, so a long fight needs no deep recursion.
    chance = [Fraction(1)]
    for left in range(1, defenders + 1):
        dd = min(left, 2)
        total = Fraction(0)
        for (la, ld), p in dice.roll_distribution(ad, dd, 0, int(defender_airfield), 0).items():
            if left - ld == 0:
                total += p
            elif la == 0:
                total += p * chance[left - ld]
        chance.append(total)
    return chance[defenders]
