"""Where an arm's unmeasured holders sit (and how high its pawns sit, when that was not measured either): learned
from the changes the game confirmed.

Every confirmed change that the arm rested before and after says, as height_fit.py works out,

    κ·(sin θ1 − sin θ0) = h·(sin θ1·M1 − sin θ0·M0) + Σ_j a_j·x_j

with a_j each holder's net change of mass: one linear look at the pawns' height h and at the places x_j of the
holders the change touched. Before any look, each unmeasured holder sits at the model's place give or take what a
home-made arm differs by (`Geometry.x_cov`: its own error and the spacing's, which moves all of them together), and h
is height_fit's prior. The looks, each as sure as the two rests were fitted and never surer than FLOOR_GMM, narrow
that by least squares — all of it at once, since a change's torque says something of the height and of the places
alike, and read apart each would take the other's share for its own. What is left uncertain stays in every
candidate's predicted torque (inference.place_variance), so a holder learned from a single change is not yet
trusted like one measured by the walk. A look far off (OUTLIER_Z) what the fit so far predicts is left out: a
change read wrong, a touch nobody saw. Pure: the follower keeps the looks in its memory.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

from companion.sensing.height_fit import FLOOR_GMM, MAX_HEIGHT_MM, OUTLIER_Z, PRIOR_HEIGHT_MM
from companion.sensing.linear import solve_symmetric

# (the height's change of sin·mass, each holder's net change of mass (g), κ·Δsin less what the measured holders and a
# measured height account for (g·mm), the variance of that (g·mm²))
Look = tuple[float, tuple[tuple[str, float], ...], float, float]


class PlaceFit:
    """The unmeasured holders' places (and the pawns' height, if `height_prior` is given), from confirmed changes."""

    KEEP = 120

    def __init__(self, x: Mapping[str, float], cov: Mapping[str, Mapping[str, float]],
                 height_prior: float | None = None, looks: Sequence[Look] = ()):
        self.holders = sorted(cov)
        self.learns_height = height_prior is not None
        names = (["h"] if self.learns_height else []) + self.holders
        self.index = {n: i for i, n in enumerate(names)}
        n = len(names)
        mean0 = ([height_prior] if self.learns_height else []) + [float(x[h]) for h in self.holders]
        p0 = [[0.0] * n for _ in range(n)]
        off = 1 if self.learns_height else 0
        if self.learns_height:
            p0[0][0] = PRIOR_HEIGHT_MM ** 2
        for i, a in enumerate(self.holders):
            for j, b in enumerate(self.holders):
                p0[i + off][j + off] = cov[a].get(b, 0.0)
        self.prior = (mean0, p0)
        self._info0 = _inverse(p0)
        self._eta0 = [sum(self._info0[i][j] * mean0[j] for j in range(n)) for i in range(n)]
        self.looks: list[Look] = []
        self.mean, self.cov = mean0, p0
        self._info = [row[:] for row in self._info0]
        self._eta = self._eta0[:]
        for look in list(looks)[-self.KEEP:]:
            self.add(look)

    @property
    def height(self) -> float | None:
        return max(-MAX_HEIGHT_MM, min(MAX_HEIGHT_MM, self.mean[0])) if self.learns_height else None

    def places(self) -> dict[str, float]:
        return {h: self.mean[self.index[h]] for h in self.holders}

    def place_cov(self) -> dict[str, dict[str, float]]:
        return {a: {b: self.cov[self.index[a]][self.index[b]] for b in self.holders} for a in self.holders}

    @staticmethod
    def look(kappa_gmm: float, sin0: float, mass0: float, sin1: float, mass1: float,
             moved: Mapping[str, float], known_gmm: float, var_gmm2: float) -> Look:
        """One confirmed change: the angle before and after with M0 and M1 grams on the arm, each holder's net change
        of mass (`moved`), and the torque that what is already known accounts for (`known_gmm`: the measured holders'
        Σ a·x, plus h·(sin θ1·M1 − sin θ0·M0) when the height was measured)."""
        return (sin1 * mass1 - sin0 * mass0, tuple(sorted((h, float(a)) for h, a in moved.items() if a)),
                kappa_gmm * (sin1 - sin0) - known_gmm, var_gmm2 + FLOOR_GMM ** 2)

    def _row(self, look: Look) -> list[float] | None:
        b, moved, _, _ = look
        g = [0.0] * len(self.index)
        if self.learns_height:
            g[0] = b
        for h, a in moved:
            if h not in self.index:
                return None
            g[self.index[h]] = a
        return g

    def add(self, look: Look) -> bool:
        """Take one more look (True), or leave it out (False): one that says nothing, or lies beyond OUTLIER_Z of what
        the fit so far predicts."""
        b, moved, y, var = look
        if not (math.isfinite(b) and math.isfinite(y) and math.isfinite(var) and var > 0):
            return False
        g = self._row(look)
        if g is None or not any(g):
            return False
        n = len(g)
        pred = sum(gi * mi for gi, mi in zip(g, self.mean))
        spread = sum(g[i] * self.cov[i][j] * g[j] for i in range(n) if g[i] for j in range(n) if g[j])
        if (y - pred) ** 2 > OUTLIER_Z ** 2 * (var + spread):
            return False
        self._take(g, y, var)
        self.looks.append(look)
        if len(self.looks) > self.KEEP:
            # the oldest look given up: the fit from the prior and the looks kept (each taken once already, so not
            # judged again), solved once
            self.looks = self.looks[-self.KEEP:]
            self._info = [row[:] for row in self._info0]
            self._eta = self._eta0[:]
            for k in self.looks:
                row = self._row(k)
                if row is not None:
                    self._take(row, k[2], k[3], solve=False)
            self._solve()
        return True

    def _take(self, g: list[float], y: float, var: float, solve: bool = True) -> None:
        n = len(g)
        for i in range(n):
            if g[i]:
                self._eta[i] += g[i] * y / var
                for j in range(n):
                    if g[j]:
                        self._info[i][j] += g[i] * g[j] / var
        if solve:
            self._solve()

    def _solve(self) -> None:
        solved = solve_symmetric(self._info, self._eta)
        if solved is None:
            raise ValueError("the place fit's information matrix is singular")
        self.mean, self.cov = solved


def _inverse(a: list[list[float]]) -> list[list[float]]:
    """The inverse of a symmetric positive definite matrix (the prior's covariance, whose information starts the fit)."""
    if not a:
        return []
    solved = solve_symmetric(a, [0.0] * len(a))
    if solved is None:
        raise ValueError("the holders' prior covariance is singular")
    return solved[1]
