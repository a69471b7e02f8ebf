"""How fast the load cells' zero drifts, learned while the arm rests.

An HX711 and its load cell drift with temperature and creep: a warming board moves each cell a few counts a
second, the same way for minutes. A change is weighed as the difference of two windows of readings, one before
the hands came and one after they left, 3-8 s apart; over that time a drift of 0.005 g/s moves the
difference by as much as the windows' own noise, and a move (which changes the weight by nothing) no longer
looks like one.

So the summed drift rate is learned from the settled spells between touches, where the pawns do not change:
each cell's readings over a spell fitted by a straight line give its slope, and the cells' slopes summed are one
look at the rate, with the fit's own variance. A move the game confirms is another look: it
leaves the weight as it was, so its windows' whole difference is drift. The rate is taken from the latest looks,
robustly (`ZeroDrift`): a hand too light to be noticed, or a knock on the table, must not turn it around, and a
room warming must still be followed. Between two windows the drift is taken off the weight difference, and what
is not known of the rate, with how far the zero wanders at random besides (learned from the confirmed moves'
misses), is added to its variance.

The looks and misses are part of the follower's memory (memory.py), so the daemon's periodic restarts keep them.
"""

from __future__ import annotations

import math
from typing import Iterable, Sequence

from companion.sensing.touches import falling_to_zero

MIN_SPELL_S = 1.5     # a shorter spell's slope is mostly noise (and a gesture's pause is no settled spell)
MIN_SAMPLES = 8


def spell_slope(cells: Iterable[tuple[Sequence[tuple[float, float]], float]], start: float,
                end: float) -> tuple[float, float] | None:
    """The slope (g/s) of the cells' summed readings over [start, end) and its variance: each cell's readings
    (t, g) fitted by a straight line, with that cell's noise σ (g). None when the spell is too short or a cell
    has too few readings in it (a summed slope with a cell left out is no slope of the sum)."""
    if end - start < MIN_SPELL_S:
        return None
    slope = var = 0.0
    any_cell = False
    for readings, sigma in cells:
        pts = [(t, g) for t, g in readings if start <= t < end]
        if len(pts) < MIN_SAMPLES:
            return None
        n = len(pts)
        mt = sum(t for t, _ in pts) / n
        mg = sum(g for _, g in pts) / n
        sxx = sum((t - mt) ** 2 for t, _ in pts)
        if sxx <= 0:
            return None
        slope += sum((t - mt) * (g - mg) for t, g in pts) / sxx
        var += sigma ** 2 / sxx
        any_cell = True
    return (slope, var) if any_cell else None


class ZeroDrift:
    """The summed zero's drift rate (g/s) and its variance, from the latest looks at settled spells, and how far it
    wanders besides (g²/s), from the misses of the moves confirmed.

    The rate is the looks' mean, each weighed by its fit's variance, over those within `CLIP` σ of their weighted
    median (σ of the fit and of the looks' own scatter about the median): a look spoiled by a light touch or a
    knock is left out, however far off, and a rate that really changes is followed within half of `KEEP` looks, as
    the median moves. When the looks scatter more than their variances say, the rate's variance grows by as much.
    `PRIOR_SIGMA` is what is assumed of a table before its first spells.

    A zero also wanders at random about its steady rate (a random walk: a variance growing with time), and a
    change's two windows are seconds apart. What a confirmed move weighed, drift taken off, should be nothing
    within its σ; the wander is the value that makes those misses as large as expected, each judged by its own σ
    and the time between its windows, with a prior of none worth `WANDER_PRIOR_N` misses (as the hands' spread is
    learned, touches.HandSpread)."""

    # g/s before a table's first spells: 11 counts a second summed, several times what warming cells drift (a
    # wider prior costs the first minute's weighings what they could tell)
    PRIOR_SIGMA = 0.005
    KEEP = 16                     # looks: a couple of minutes of play, long enough to average, short enough to follow
    CLIP = 4.0
    KEEP_MISSES = 32
    WANDER_PRIOR_N = 4.0
    WANDER_MAX = 0.01             # g²/s: 0.1 g in a second, far beyond any load cell still working
    MISS_Z2 = 16.0                # a miss counts no worse than 4σ (a move confirmed wrongly is no guide)

    def __init__(self, looks: Sequence[tuple[float, float]] = (),
                 misses: Sequence[tuple[float, float, float]] = ()) -> None:
        self.looks: list[tuple[float, float]] = [(float(s), float(v)) for s, v in looks][-self.KEEP:]
        self.rate, self.var = self._solve() if self.looks else (0.0, self.PRIOR_SIGMA ** 2)
        self.misses: list[tuple[float, float, float]] = [(float(e), float(v), float(t))
                                                         for e, v, t in misses][-self.KEEP_MISSES:]
        self.wander = self._wander()

    def look(self, slope: float, var: float) -> None:
        """A settled spell had the summed readings rising at `slope` g/s (variance `var`)."""
        if not (math.isfinite(slope) and math.isfinite(var)) or var <= 0:
            return
        self.looks.append((slope, var))
        del self.looks[:-self.KEEP]
        self.rate, self.var = self._solve()

    def miss(self, weighed: float, var: float, span: float) -> None:
        """A confirmed move weighed `weighed` g, drift taken off (it should be 0), with variance `var` from its
        windows and the rate, its windows `span` s apart."""
        if not (math.isfinite(weighed) and math.isfinite(var) and math.isfinite(span)) or var <= 0 or span <= 0:
            return
        self.misses.append((weighed, var, span))
        del self.misses[:-self.KEEP_MISSES]
        self.wander = self._wander()

    def between(self, t0: float, t1: float) -> tuple[float, float, float]:
        """How far the summed zero drifted from `t0` to `t1` (g), the variance of that, and the part of it that
        is the zero's wander."""
        dt = t1 - t0
        if not math.isfinite(dt):
            return 0.0, 0.0, 0.0
        wander = self.wander * abs(dt)
        return self.rate * dt, self.var * dt * dt + wander, wander

    def _wander(self) -> float:
        misses = self.misses

        def excess(q: float) -> float:     # how much larger the misses are than their σ say, on average; falls as q grows
            total = sum(min(self.MISS_Z2, e * e / (v + q * t)) for e, v, t in misses)
            return (self.WANDER_PRIOR_N + total) / (self.WANDER_PRIOR_N + len(misses)) - 1.0

        return falling_to_zero(excess, 0.0, self.WANDER_MAX) if misses else 0.0

    def _solve(self) -> tuple[float, float]:
        ranked = sorted(self.looks)
        total = sum(1.0 / v for _, v in ranked)
        acc, median = 0.0, ranked[-1][0]
        for slope, v in ranked:
            acc += 1.0 / v
            if acc >= total / 2:
                median = slope
                break
        # how far the looks really scatter about it, unswayed by the spoiled ones (the median absolute deviation)
        deviations = sorted(abs(s - median) for s, _ in ranked)
        spread2 = (1.4826 * deviations[len(deviations) // 2]) ** 2
        kept = [(s, v) for s, v in ranked if (s - median) ** 2 <= self.CLIP ** 2 * (v + spread2)]
        prior = 1.0 / self.PRIOR_SIGMA ** 2
        weight = prior + sum(1.0 / v for _, v in kept)
        rate = sum(s / v for s, v in kept) / weight
        chi2 = sum((s - rate) ** 2 / v for s, v in kept)
        scale = max(1.0, chi2 / (len(kept) - 1)) if len(kept) > 1 else 1.0
        return rate, scale / weight
