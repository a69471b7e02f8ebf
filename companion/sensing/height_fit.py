"""How high an arm's pawns sit above the pivot, when nobody measured the loaded arm: learned from confirmed changes.

Pawns that sit a height h above the pivot lean out as the arm tilts, so the loaded arm is less stiff than the
empty one: κ_eff = κ − h·M with M grams of pawns on it (a dozen 10 g pawns 20 mm up take a seventh off κ). Read
through the empty arm's κ, the loaded arm's torques come out too large, and it tips sooner than the empty arm's
τ_tip says. Every change the game confirms says how far the torque really moved, Σ_j a_j·x_j (each holder's net
change of mass a_j, at its place x_j), while the angle moved from sin θ0 to sin θ1 with M0 and then M1 grams on
the arm:

    (κ − h·M1)·sin θ1 − (κ − h·M0)·sin θ0 = Σ_j a_j·x_j,   i.e.   h·(sin θ1·M1 − sin θ0·M0) = κ·(sin θ1 − sin θ0) − Σ_j a_j·x_j

— one look at h, as sure as the two rests were fitted. Against a prior of pawns at the pivot's height, known to
a couple of centimetres, the looks give h by least squares. This is for an arm whose holders were measured (the
walk); where nobody measured them either, place_fit.py learns their places and h together from the same looks.
Pure: the follower keeps the looks in its memory.
"""

from __future__ import annotations

import math
from typing import Sequence

PRIOR_HEIGHT_MM = 15.0    # the pawns' height above the pivot, before any loaded arm has shown it
FLOOR_GMM = 8.0           # no change says its torque better than this (the rest fits' own model error)
OUTLIER_Z = 4.0          # a look this far from what the height so far predicts says something else went wrong
MAX_HEIGHT_MM = 60.0      # beyond this the looks say something else is wrong, not that the pawns sit so high

Look = tuple[float, float, float]     # (sin θ1·M1 − sin θ0·M0, what the torque moved beyond the empty arm's reading, variance)


class HeightFit:
    """The pawns' height above the pivot, estimated from the changes the game confirmed (see the module)."""

    KEEP = 120

    def __init__(self, prior_mm: float = 0.0, looks: Sequence[Look] = ()):
        self.prior = prior_mm
        self.looks: list[Look] = list(looks)[-self.KEEP:]
        self.height, self.variance = self._solve()

    @staticmethod
    def look(kappa_gmm: float, sin0: float, mass0: float, sin1: float, mass1: float, moved_gmm: float,
             var_gmm2: float) -> Look:
        """One confirmed change as a look at h: the torque it moved by the model (`moved_gmm`, Σ a·x) and the angle."""
        return (sin1 * mass1 - sin0 * mass0, kappa_gmm * (sin1 - sin0) - moved_gmm, var_gmm2 + FLOOR_GMM ** 2)

    def add(self, look: Look) -> float:
        """The height with one more look (one that cannot say anything, or that lies beyond 4σ of what the looks so far
        predict, is left out)."""
        b, r, var = look
        if not (math.isfinite(b) and math.isfinite(r) and math.isfinite(var) and var > 0 and b):
            return self.height
        if (r - self.height * b) ** 2 > OUTLIER_Z ** 2 * (var + b * b * self.variance):
            return self.height      # not the height: a change read wrong, a touch nobody saw, the board
        self.looks.append(look)
        del self.looks[:-self.KEEP]
        self.height, self.variance = self._solve()
        return self.height

    def _solve(self) -> tuple[float, float]:
        info = 1.0 / PRIOR_HEIGHT_MM ** 2
        total = self.prior * info
        for b, r, var in self.looks:
            info += b * b / var
            total += b * r / var
        return max(-MAX_HEIGHT_MM, min(MAX_HEIGHT_MM, total / info)), 1.0 / info
