"""Torque on the arm and the chance that a position tips it.

Pure functions of a model and a list of (holder, size) pawns on the arm: the
rules engine and the sensing layer both use them, the simulated table too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable

from companion.games.balance_model import Model

SQRT2 = math.sqrt(2.0)


def _phi(z: float) -> float:
    """Standard normal CDF."""
    return 0.5 * math.erfc(-z / SQRT2)


def torque_per_holder(model: Model, pawns: Iterable[tuple[str, str]]) -> dict[str, float]:
    """g·mm contributed by each holder (every holder listed, empty ones at 0)."""
    masses = model.physics.pawn_mass_g
    out = {h.id: 0.0 for h in model.holders}
    for holder, size in pawns:
        out[holder] += model.by_id[holder].x_mm * masses[size]
    return out


def net_torque(model: Model, pawns: Iterable[tuple[str, str]]) -> float:
    """Σ x_j · m_j over the pawns on the arm (the empty arm's own imbalance is tared away)."""
    masses = model.physics.pawn_mass_g
    by_id = model.by_id
    return sum(by_id[h].x_mm * masses[s] for h, s in pawns)


def load_mass(model: Model, pawns: Iterable[tuple[str, str]]) -> float:
    """Grams of pawns on the arm."""
    masses = model.physics.pawn_mass_g
    return sum(masses[s] for _, s in pawns)


def tip_torque(model: Model, pawns: Iterable[tuple[str, str]] = ()) -> float:
    """τ_tip of the arm carrying `pawns`: pawns above the pivot make a loaded arm less stiff, so it tips sooner."""
    return model.physics.tip_torque_at(load_mass(model, pawns))


def tips(model: Model, torque: float, pawns: Iterable[tuple[str, str]] = ()) -> bool:
    """The arm rests on the board once |τ| reaches τ_tip (of the arm carrying `pawns`)."""
    return abs(torque) >= tip_torque(model, pawns)


def position_sigma(model: Model, pawns: Iterable[tuple[str, str]]) -> float:
    """Uncertainty (1σ, g·mm) of 'torque after a move' relative to the tipping threshold.

    One value per position, not per move: every pawn on the arm now plus one
    heaviest pawn at the farthest holder (the worst a single move can add), and
    the uncertainty of τ_tip itself. Using one σ for all moves of a position makes
    the tip probability a monotonic function of the margin, which is what the
    players read it as.
    """
    phys = model.physics
    by_id = model.by_id
    var = phys.tip_sigma_gmm ** 2
    for holder, size in pawns:
        var += (by_id[holder].x_mm * phys.mass_sigma_g[size]) ** 2
    reach = max(abs(h.x_mm) for h in model.holders)
    var += (reach * max(phys.mass_sigma_g.values())) ** 2
    return math.sqrt(var)


def tip_probability(model: Model, torque: float, sigma: float, pawns: Iterable[tuple[str, str]] = ()) -> float:
    """P(|τ| ≥ τ_tip) with τ ~ N(torque, σ_τ) and the threshold's spread folded into sigma; τ_tip of the arm
    carrying `pawns`."""
    t = tip_torque(model, pawns)
    a = abs(torque)
    if sigma <= 0:
        return 1.0 if a >= t else 0.0
    # the two tails are disjoint (τ_tip > 0), so their probabilities add
    return min(1.0, _phi((a - t) / sigma) + _phi((-a - t) / sigma))


@dataclass(frozen=True)
class Assessment:
    torque_after: float
    margin: float
    tip_probability: float
    verdict: str  # "safe" | "risky" | "tips"

    def to_dict(self) -> dict:
        return {
            "torque_after": round(self.torque_after, 1),
            "margin": round(self.margin, 1),
            "tip_probability": round(self.tip_probability, 4),
            "verdict": self.verdict,
        }


def judge(model: Model, torque_after: float, sigma: float, pawns_after: Iterable[tuple[str, str]] = ()) -> Assessment:
    """The verdict on a position: `pawns_after` are the pawns it leaves on the arm (they set its τ_tip)."""
    pawns_after = list(pawns_after)
    margin = tip_torque(model, pawns_after) - abs(torque_after)
    p = tip_probability(model, torque_after, sigma, pawns_after)
    if margin <= 0:
        verdict = "tips"
    elif p >= model.physics.risky_probability:
        verdict = "risky"
    else:
        verdict = "safe"
    return Assessment(torque_after, margin, p, verdict)
