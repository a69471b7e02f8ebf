"""How this table's load cells reach a step in weight, learned from the moves the game confirmed.

A load cell's converter (an HX711 and its digital filter) reports a change of force over a few
samples, weighted from its newest sample back: its taps. The follower locates the hands by setting
the arm's swing against the force the cells read (touches.py), and at 10 samples a second a cell's
settling lasts as long as a touch, so the taps matter. Two ways use them: the force each cell was
given is worked back from its readings (`sharpened`) and set against the angle as sampled; or the
angle is read through the same taps (`as_read`), both sides then equally blurred and equally late,
which needs no working back but loses the start of every stretch of free swing (the taps reach
back into the arm resting on the board). The follower locates with the first and checks with the
second. Through the wrong taps, a touch comes out nearer the pivot or farther, and far more scattered.

No datasheet gives the taps of a particular cell, bridge and converter, so they are chosen here from
a family of shapes (sharp; a pure delay of one or two samples; decaying from the newest over 2-6
samples, from even to steep; humps, as sinc filters have, some a sample late) by confirmed moves:
each such move's touches are located once with every shape, and two things are kept per shape.
Where its touches fell against the holders the hands touched, scored as HandSpread judges a table —
with a gain and a spread of its own, each miss weighed by its own σ, a touch a shape could not place
counted as a miss. And how well the angle, read through that shape, fitted the swing's answer to the
force the cells read: only the right taps make the two sides alike in lateness and blur, so the
residual is smallest through them, and it says so from the first moves, before there are enough
touches to score — touches between holders say little of the taps, a fit's residual says it every
time. The best-scoring shape is used once it has beaten the nominal one (four samples, mostly the
newest) by a clear margin.

Pure functions of plain data and one small learning class; the follower feeds it.
"""

from __future__ import annotations

import math
import threading
from itertools import accumulate
from typing import Sequence

from companion.sensing.touches import MODEL_INFLATION, HandSpread, Touch, locate_each


# the most sample periods of one hole in a cell's readings given forces of their own (a glitch drops one; a cell
# silent for longer has stopped, and a longer gap is worked back across as it is)
MAX_HOLE = 4


def _decaying(n: int, power: float) -> tuple[float, ...]:
    w = [(1.0 - m / n) ** power for m in range(n)]
    total = sum(w)
    return tuple(v / total for v in w)


def _hump(weights: Sequence[float]) -> tuple[float, ...]:
    total = sum(weights)
    return tuple(v / total for v in weights)


NOMINAL = (0.4, 0.3, 0.2, 0.1)      # what an HX711 is usually said to do: a step reached over four samples
FAMILY: tuple[tuple[float, ...], ...] = (
    NOMINAL,
    (1.0,),
    (0.0, 1.0),
    *(_decaying(n, p) for n in (2, 3, 4, 5, 6) for p in (0.0, 0.75, 1.5, 3.0)),
    _hump((1, 2, 1)), _hump((1, 3, 3, 1)), _hump((1, 2, 3, 2, 1)), _hump((1, 3, 4, 3, 1)),
    # and narrow ones a sample or two late (a converter that reports a conversion only after the next one)
    (0.0, 0.0, 1.0), (0.0, 0.5, 0.5), (0.0, 0.0, 0.5, 0.5), _hump((0, 1, 2, 1)), _hump((0, 0, 1, 2, 1)),
)
MAX_TAPS = max(len(k) for k in FAMILY)


def delay(taps: Sequence[float]) -> float:
    """The taps' mean lateness, in samples."""
    return sum(m * w for m, w in enumerate(taps))


def as_read(samples: Sequence[tuple[float, float]], taps: Sequence[float], dt: float) -> list[tuple[float, float]]:
    """`samples` (t, value), ascending, as a load cell with these taps would have read them: each value
    replaced by Σ taps[m] · value(t − m·dt), read between samples linearly (before the first, the first)."""
    n = len(samples)
    if len(taps) == 1 or n == 0:
        return [(t, taps[0] * v) for t, v in samples] if len(taps) == 1 else []
    ts = [t for t, _ in samples]
    vs = [v for _, v in samples]
    out = [0.0] * n
    for m, w in enumerate(taps):
        if w == 0.0:
            continue
        if m == 0:
            for i in range(n):
                out[i] += w * vs[i]
            continue
        shift = m * dt
        j = 0
        for i in range(n):
            t = ts[i] - shift
            if t <= ts[0]:
                out[i] += w * vs[0]
                continue
            while j + 1 < n and ts[j + 1] < t:
                j += 1
            t0, t1 = ts[j], ts[j + 1]
            out[i] += w * (vs[j] + (vs[j + 1] - vs[j]) * (t - t0) / (t1 - t0))
    return list(zip(ts, out))


# a free stretch is used once at most this share of the taps' weight reaches back before it (into the arm resting
# on the board, which the arm's answer does not model): all of the taps would drop 0.3 s of every stretch at
# 10 SPS, most of the short ones between touches, for a last tap of a tenth
REACH_TAIL = 0.2


def apart(a: Sequence[float], b: Sequence[float]) -> float:
    """How far apart (in samples) two shapes bring a step in: the summed difference of their step responses."""
    sa, sb = list(accumulate(a)), list(accumulate(b))
    return sum(abs((sa[m] if m < len(sa) else 1.0) - (sb[m] if m < len(sb) else 1.0))
               for m in range(max(len(sa), len(sb))))


def reach(taps: Sequence[float], dt: float) -> float:
    """How far before a reading (s) its taps reach with more than REACH_TAIL of their weight."""
    tail = 0.0
    for m in range(len(taps) - 1, 0, -1):
        tail += taps[m]
        if tail > REACH_TAIL + 1e-9:
            return m * dt
    return 0.0


class Gesture:
    """What one gesture's touches are located from: the angle as sampled, the load cells' sum, the touches'
    spans from `split`, the stretches the arm swung free of the board, the cells' sample period and the rest
    of `locate`'s arguments (the swing, the weights either side, the rest before)."""

    __slots__ = ("angle", "weights", "parts", "free", "dt", "args", "_late")

    def __init__(self, angle, weights, parts, free, dt: float, args: dict):
        self.angle, self.weights, self.parts, self.free, self.dt, self.args = angle, weights, parts, free, dt, args
        self._late: list[list[tuple[float, float]]] = []

    def locate(self, taps: Sequence[float], *, lifted_g: float | None = None, timing: float = 0.0) -> list[Touch]:
        """The touches, the angle read through `taps`, their lateness known to `timing` samples (1σ)."""
        return self._each([taps], lifted_g, timing * self.dt)[0]

    def locate_family(self, *, lifted_g: float | None = None, fits: list | None = None) -> list[list[Touch]]:
        """The touches as each shape of FAMILY places them (one fit of the arm's answer for them all); into `fits`,
        how well each shape's reading of the angle fitted (touches.locate_each)."""
        return self._each(FAMILY, lifted_g, fits=fits)

    def late(self, m: int) -> list[tuple[float, float]]:
        """The angle m cell periods late (a reading through taps is a mix of these)."""
        while len(self._late) <= m:
            shifted = [0.0] * len(self._late) + [1.0]
            self._late.append(as_read(self.angle, shifted, self.dt))
        return self._late[m]

    def _each(self, shapes: Sequence[Sequence[float]], lifted_g: float | None,
              timing_s: float = 0.0, fits: list | None = None) -> list[list[Touch]]:
        # a reading through taps reaches that far back: each free stretch is used only from then on
        n = max(len(taps) for taps in shapes)
        return locate_each([self.late(m) for m in range(n)], self.weights, self.parts, free=self.free, lag_s=0.0,
                           inflation=MODEL_INFLATION, lifted_g=lifted_g, mixes=shapes,
                           leads=[reach(taps, self.dt) for taps in shapes], timing_s=timing_s, fits=fits,
                           **self.args)


class Settling:
    """Which of FAMILY this table's cells settle like, from the touches of confirmed moves.

    Each row is one touch of a confirmed move: the holder's x and, per shape, (located x, σ²) or None
    when that shape could not place it (or saw another number of touches). Each of `fits` is one confirmed
    move's gesture: per shape, the log-likelihood of its fit of the angle, less the best one's (≤ 0)."""

    KEEP = 40              # the latest touches learned from
    MIN_ROWS = 8           # touches before any shape may replace the nominal one
    MARGIN = 3.0           # log-likelihood a shape must beat the nominal one by
    MISS_Z2 = HandSpread.MISS_Z2     # a miss counts no worse than 4σ (a mis-split gesture must not decide alone)
    TIMING_FLOOR = 0.1     # samples: a cell's lateness is never known better (its own sample-time jitter, the shape)
    MIN_FITS = 3           # or confirmed moves whose angle every shape fitted
    # what one gesture's fit of the angle is worth, in independent samples: its hundred-odd samples share the
    # model's errors (a hand's tremor, the swing estimated, the force as a point), and counted at face value a
    # few gestures would outvote every touch's place; at this weight a table's shape shows in 3-6 moves
    FIT_N = 4.0
    # shapes nearly as likely as the one in use are other ways the touches may have come out: through a shape a
    # tail tap of 0.04 away, two touches fell 30 mm apart from where the one in use put them (p ≈ 4 % at 3 nats)
    ALTERNATIVES = 2
    ALTERNATIVE_NATS = 4.0
    # (the two of that table were 10 ms apart; at 80 SPS most of the family is within 4 ms of each other, and the
    # force worked back through either is the same to well under a touch's σ)
    ALTERNATIVE_S = 0.004
    # as such ways, the neighbours of the shape in use (their steps within NEIGHBOURS samples of its own: the
    # family's spacing) are weighed by their scores tempered by TEMPER. The scores count every move as independent,
    # and the cells' own settling may lie between two neighbours, so they can end 10 nats apart over 40 moves while
    # a gesture placed through each lands 40 mm apart (at 1, one such table applied a wrong move; at 3, it was
    # still 0.9936 sure of it). A shape farther off has lost for real: tempered too, at 80 SPS every gesture was
    # placed two or three times over, for no better reading, and the replay ran 11-20 % slower
    TEMPER = 4.0
    NEIGHBOURS = 0.3

    def __init__(self, rows: Sequence[tuple[float, Sequence]] = (), fits: Sequence[Sequence[float]] = ()):
        self.rows: list[tuple[float, tuple]] = []
        for x, per in rows:
            self.rows.append((float(x), tuple(None if e is None else (float(e[0]), float(e[1])) for e in per)))
        del self.rows[:-self.KEEP]
        self.fits: list[tuple[float, ...]] = [tuple(float(v) for v in f) for f in fits][-self.KEEP:]
        self._refresh()

    @property
    def taps(self) -> tuple[float, ...]:
        return FAMILY[self.index]

    def learn(self, expected: Sequence[float], located: Sequence[Sequence[Touch]],
              fits: Sequence[tuple[float, int] | None] = ()) -> bool:
        """`located[k]`: a confirmed move's touches as FAMILY[k] placed them; `expected` where its hands touched
        (holders' x, in order); `fits[k]`: the residual sum of squares and samples of FAMILY[k]'s fit of the angle.
        True when the shape in use changed."""
        if len(located) != len(FAMILY) or not expected:
            return False
        fitted = len(fits) == len(FAMILY) and all(f is not None and f[1] > 0 and f[0] > 0 for f in fits)
        if fitted:
            ll = [-0.5 * self.FIT_N * math.log(f[0] / f[1]) for f in fits]
            top = max(ll)
            # (capped as a miss is: one gesture fitted astray must not decide alone)
            self.fits.append(tuple(round(max(-0.5 * self.MISS_Z2, v - top), 3) for v in ll))
            del self.fits[:-self.KEEP]
        per_touch: list[list] = [[] for _ in expected]
        anything = False
        for found in located:
            ok = len(found) == len(expected)
            for i, x in enumerate(expected):
                tc = found[i] if ok else None
                if tc is None or tc.x is None or not math.isfinite(tc.sigma) or tc.sigma > HandSpread.HIGH_MM:
                    per_touch[i].append(None)
                    continue
                anything = True
                # clamped as HandSpread clamps: a touch wrongly fitted must not weigh without bound
                lx = max(x - 3.0 * HandSpread.HIGH_MM, min(x + 3.0 * HandSpread.HIGH_MM, tc.x))
                # (to a hundredth: far below the hands' spread, and the follower's memory stays small)
                per_touch[i].append((round(lx, 2), round(tc.sigma ** 2, 2)))
        if anything:
            self.rows.extend((float(x), tuple(p)) for x, p in zip(expected, per_touch))
            del self.rows[:-self.KEEP]
        elif not fitted:
            return False     # no shape could place this move's touches or fit its angle: it says nothing of the cells
        before = self.index
        self._refresh()
        return self.index != before

    def _refresh(self) -> None:
        sc = self.scores()
        self.index = self._choose(sc)
        self._timing = self._spread_of_lateness(sc)
        top = max(sc)
        mine = self.taps
        others = []
        for k in range(len(FAMILY)):
            if k == self.index:
                continue
            t = self.TEMPER if apart(FAMILY[k], mine) <= self.NEIGHBOURS else 1.0
            if (sc[k] - top) / t >= -self.ALTERNATIVE_NATS:
                others.append(((sc[k] - sc[self.index]) / t, FAMILY[k]))
        self._alternatives = sorted(others, key=lambda e: -e[0])

    def alternatives(self, dt: float) -> list[tuple[float, tuple[float, ...]]]:
        """The other shapes still about as likely as the one in use (at most ALTERNATIVES, within ALTERNATIVE_NATS
        of the best, a neighbour's score tempered) that bring a step in more than ALTERNATIVE_S apart from it, for
        cells sampling every `dt` s: (log of how much likelier than the one in use, tempered for a neighbour;
        taps)."""
        out = []
        for lw, taps in self._alternatives:
            if apart(taps, self.taps) * dt > self.ALTERNATIVE_S:
                out.append((lw, taps))
                if len(out) == self.ALTERNATIVES:
                    break
        return out

    def timing(self) -> float:
        """How well (1σ, in samples) the lateness of the shape in use is known: the spread of the shapes' lateness
        about it, each shape as likely as its score says (all alike before any move is learned), never below
        TIMING_FLOOR."""
        return self._timing

    def _spread_of_lateness(self, sc: Sequence[float]) -> float:
        top = max(sc)
        p = [math.exp(v - top) for v in sc]
        total = sum(p)
        d0 = delay(self.taps)
        var = sum(w * (delay(k) - d0) ** 2 for w, k in zip(p, FAMILY)) / total
        return max(self.TIMING_FLOOR, math.sqrt(var))

    def scores(self) -> list[float]:
        """Per shape, the log-likelihood of where the hands touched, given where that shape located them, and of
        the angle as that shape reads it, given the swing's answer to the force the cells read."""
        return [self._score(k) + sum(f[k] for f in self.fits) for k in range(len(FAMILY))]

    def _score(self, k: int) -> float:
        valid = [(x, per[k][0], per[k][1]) for x, per in self.rows if per[k] is not None]
        lost = len(self.rows) - len(valid)
        gain, spread = _gain_spread(valid)
        total = 0.0
        for x, lx, s2 in valid:
            v = s2 + spread * spread
            total -= 0.5 * min(self.MISS_Z2, (lx - gain * x) ** 2 / v) + 0.5 * math.log(v)
        total -= lost * (0.5 * self.MISS_Z2 + 0.5 * math.log(HandSpread.HIGH_MM ** 2 + spread * spread))
        return total

    def _choose(self, sc: Sequence[float]) -> int:
        if len(self.rows) < self.MIN_ROWS and len(self.fits) < self.MIN_FITS:
            return 0
        best = max(range(len(FAMILY)), key=lambda k: sc[k])
        return best if sc[best] > sc[0] + self.MARGIN else 0


def _gain_spread(rows: Sequence[tuple[float, float, float]]) -> tuple[float, float]:
    """A gain and spread for (x, located, σ²) rows, as HandSpread's priors and bounds have them, in two
    quick passes (scoring every shape must stay cheap)."""
    lo_g, hi_g = HandSpread.GAIN_RANGE
    spread = HandSpread.PRIOR_MM
    gain = 1.0
    for _ in range(2):
        j2 = spread * spread
        prior = HandSpread.PRIOR_N * HandSpread.PRIOR_X_MM ** 2 / HandSpread.PRIOR_MM ** 2
        num = prior + sum(x * xl / (s2 + j2) for x, xl, s2 in rows)
        den = prior + sum(x * x / (s2 + j2) for x, _, s2 in rows)
        gain = max(lo_g, min(hi_g, num / den))
        excess = [(xl - gain * x) ** 2 - s2 for x, xl, s2 in rows]
        mean = (HandSpread.PRIOR_N * HandSpread.PRIOR_MM ** 2 + sum(excess)) / (HandSpread.PRIOR_N + len(rows))
        spread = max(HandSpread.LOW_MM, min(HandSpread.HIGH_MM, math.sqrt(max(0.0, mean))))
    return gain, spread


def sharpened(samples: Sequence[tuple[float, float]], taps: Sequence[float], *, smooth: float = 0.001
              ) -> list[tuple[float, float]]:
    """What one load cell was given, from what it read through `taps`: the values f at its own sample times with
    reading k = Σ taps[m] · f[k − m] (before the first sample, the first reading: the arm at rest), found by least
    squares with a little weight (`smooth`) on f's steps from sample to sample — a shape whose taps hide a pattern
    (a hump cannot see values alternating from sample to sample) then leaves it flat rather than wild."""
    if not samples or len(taps) == 1:
        return [(t, v / taps[0]) for t, v in samples] if samples else []
    # a reading lost (a glitch word dropped) leaves a hole the taps' count of samples would slide over: every
    # reading after it would be worked back against the wrong ones before it (foreign quiet 29501 turn 11: one
    # cell's word lost at the top of a lift, both touches placed 75-90 mm nearer the pivot at σ 15-18 mm). A hole
    # gets a force of its own, and no reading: only the smoothing and the readings after it say what it was
    grid, holes = _holes_filled(samples)
    n = len(grid)
    w = tuple(taps)
    band = len(w)
    rest = samples[0][1]
    lost = set(holes)
    # normal equations (AᵀA + smooth·DᵀD) f = Aᵀ(y − b), banded: row k of A has w[m] at column k − m. The
    # matrix depends only on the taps and the length, and its factor is mostly the same for every length
    rhs = [0.0] * n
    for k, (_, y) in enumerate(grid):
        if k in lost:
            continue
        known = sum(w[m] for m in range(band) if k - m < 0) * rest
        r = y - known
        for m in range(min(band, k + 1)):
            rhs[k - m] += w[m] * r
    rhs[0] += smooth * rest
    low = _sharpening_factor(n, w, smooth)
    if holes:
        # each lost reading's row of A taken out of AᵀA by a rank-one downdate of the factor: the rows before the
        # first it touches stand, and each row after changes by one pass over the band (factoring them again cost
        # band² a row: a fifth of the headroom at 80 SPS, where most gesture windows hold one lost word)
        start = max(0, holes[0] - band + 1)
        low = low[:start] + [list(row) for row in low[start:]]     # the rows before are the shared cache's
        for h in holes:
            a = [0.0] * n                                           # reading h's row of A
            for m in range(min(band, h + 1)):
                a[h - m] = w[m]
            _downdated(low, a, max(0, h - band + 1))
    f = _banded_solve(low, rhs, band)
    return [(t, v) for k, ((t, _), v) in enumerate(zip(grid, f)) if k not in lost]


def _downdated(low: list[list[float]], a: list[float], first: int) -> None:
    """`low` (as `_sharpening_factor` keeps it) made the factor of L·Lᵀ − a·aᵀ in place, `a` zero before `first`
    (and spent): the usual rotations of a Cholesky downdate, column by column, each touching only the band below."""
    n, band = len(low), len(low[0])
    for k in range(first, n):
        lkk, ak = low[k][0], a[k]
        r = math.sqrt(max(lkk * lkk - ak * ak, 1e-12))
        c, s = r / lkk, ak / lkk
        low[k][0] = r
        for d in range(1, min(band, n - k)):
            row = low[k + d]
            new = (row[d] - s * a[k + d]) / c
            a[k + d] = c * a[k + d] - s * new
            row[d] = new


def _banded_solve(low: list[list[float]], rhs: Sequence[float], band: int) -> list[float]:
    """x with L·Lᵀ·x = rhs, L the banded factor `_sharpening_factor` gives."""
    n = len(rhs)
    z = [0.0] * n
    for i in range(n):
        s = rhs[i] - sum(low[i][d] * z[i - d] for d in range(1, min(band, i + 1)))
        z[i] = s / low[i][0]
    f = [0.0] * n
    for i in range(n - 1, -1, -1):
        s = z[i] - sum(low[i + d][d] * f[i + d] for d in range(1, band) if i + d < n)
        f[i] = s / low[i][0]
    return f


def _holes_filled(samples: Sequence[tuple[float, float]]) -> tuple[list[tuple[float, float]], list[int]]:
    """`samples` with a sample time put back wherever one period or more is missing (the period: the median step
    between readings), and where the put-back ones are. A put-back sample has no reading (its value is NaN, and
    `sharpened` reads none there)."""
    if len(samples) < 3:
        return list(samples), []
    steps = sorted(b[0] - a[0] for a, b in zip(samples, samples[1:]))
    dt = steps[len(steps) // 2]
    if dt <= 0:
        return list(samples), []
    out, holes = [samples[0]], []
    for (t0, _), (t1, v1) in zip(samples, samples[1:]):
        # (bounded: a cell silent for longer than MAX_HOLE periods is not worked back across as one trace)
        missing = min(round((t1 - t0) / dt) - 1, MAX_HOLE)
        for j in range(1, missing + 1):
            holes.append(len(out))
            out.append((t0 + (t1 - t0) * j / (missing + 1), math.nan))
        out.append((t1, v1))
    return out, holes


def _sharpening_factor(n: int, w: tuple[float, ...], smooth: float) -> list[list[float]]:
    """The banded Cholesky factor L (L[i][i − d] kept as low[i][d]) of `sharpened`'s AᵀA + smooth·DᵀD for n samples.

    Row i of L depends only on the matrix's rows up to i, and those are the same for every length but in the last
    band − 1 rows (where A's rows run out, and the smoothing's last step): the rows before are kept per shape and
    grown as longer gestures come, and only the last few are worked out for each length — to the bit as afresh."""
    band = len(w)
    shared = max(0, n - band + 1)
    key = (w, smooth)
    with _FACTORS_LOCK:          # followers in other threads (a daemon's tests, several tables) share the rows
        rows = _FACTORS.pop(key, None)
        if rows is None:
            rows = []
        _FACTORS[key] = rows                   # the newest last: the oldest shape is dropped first
        while len(_FACTORS) > _FACTOR_SHAPES:
            del _FACTORS[next(iter(_FACTORS))]
        if len(rows) < shared <= _FACTOR_ROWS:
            while len(rows) < shared:
                rows.append(_factor_row(len(rows), rows, lambda j: _normal_row(j, math.inf, w, smooth), band))
        low = rows[:shared] if len(rows) >= shared else []
    for i in range(len(low), n):
        low.append(_factor_row(i, low, lambda j: _normal_row(j, n, w, smooth), band))
    return low


_FACTORS_LOCK = threading.Lock()
_FACTORS: dict = {}         # (taps, smooth) -> the rows of L every length shares, as far as any gesture reached
_FACTOR_SHAPES = 16
_FACTOR_ROWS = 20000        # a gesture longer than this (minutes at 80 SPS) is factored afresh, not kept


def _normal_row(i: int, n: float, w: tuple[float, ...], smooth: float) -> list[float]:
    """Row i of AᵀA + smooth·DᵀD for n samples (n infinite: a row far from the end), M[i][i + d] at d, each sum in
    the order of A's rows."""
    band = len(w)
    row = [0.0] * band
    for d in range(band):
        acc = 0.0
        for m in range(d, band):
            if i + m > n - 1:
                break
            acc += w[m] * w[m - d]
        row[d] = acc
    if i + 1 < n:
        row[0] += smooth * 2.0
        row[1] -= smooth
    else:
        row[0] += smooth * 1.0
    return row


def _factor_row(i: int, low: list[list[float]], normal, band: int) -> list[float]:
    """Row i of the banded Cholesky factor, from the rows before it (`low`) and the matrix's rows (`normal`)."""
    li = [0.0] * band
    for d in range(min(band - 1, i), -1, -1):
        j = i - d
        s = normal(j)[d]
        lj = low[j] if d else li
        for e in range(1, band - d):
            if j - e < 0:
                break
            s -= li[d + e] * lj[e]
        if d == 0:
            li[0] = math.sqrt(max(s, 1e-12))
        else:
            li[d] = s / lj[0]
    return li
