"""Where the hands touched the arm: how many touches a change took, and at which holder each was.

A pawn placed, lifted or moved changes the arm's weight and torque alike for like pawns
moved alike (on model A, advancing any pawn by a roll shifts the torque by the same
amount), and a beat of like pawns ends as the mover's removal would. The hands differ:
a removal is one touch at its holder, a move two — lift at the source, set down at the
target — a beat two as well, the second at the target.

During a touch, the hand and the pawn it handles act at one place x, so the load cells
read the change in weight ΔW(t) there and the torque driving the arm is τ₀ + x·ΔW(t).
The arm answers as the swing does (swing.py): s'' + 2ζω s' + ω² s = ω²·τ(t)/κ, with
s the accelerometer's sin θ. So the angle is linear in each touch's x: with ΔW(t) from
the load cells, the swing's ω and ζ, and the stretches where the arm swung free of the
board (resting on it, the angle says nothing), every touch's x is a least-squares fit.

Pure functions of plain data; the follower collects the data and weighs candidates by
the touches they would have taken.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections import deque
from dataclasses import dataclass
from operator import mul
from typing import Callable, Sequence

from companion.sensing.linear import solve_symmetric

STEP_S = 0.002              # integration step of the arm's response
MIN_TOUCH_S = 0.08          # a bump in the weight shorter than this is no hand
MIN_GAP_S = 0.08            # a pause between touches must hold this long
NEAR_S = 0.5                # a pause's own touches are this close either side of it
DIP_SHARE = 0.15            # a pause blurred by the cells' settling still falls this near the weight before
                            # (a share of the touches' height above it)
PAUSE_SAMPLES = 4           # a pause read for the pawn a move lifted holds this many of each cell's samples
# the share of pauses whose weight is not the arm's without the lifted pawn (a finger left on the arm, a second pawn
# taken with it): such a pause reads anything from nothing to `span_g`
LIFT_ASTRAY = 0.05
MIN_FREE_SAMPLES = 12       # a stretch off the board needs this many angle samples to say anything
# a check that can only place a touch within more than a holder's pitch either way cannot catch the other way gone
# astray: each touch then is taken as no surer than this share of the check's σ (a 5-even-tap table's gesture was
# placed 80 mm off at σ 13 mm, the check's σ 70 mm)
WEAK_CHECK_MM = 25.0
WEAK_CHECK_SHARE = 0.7
# a touch found that no hand made at a holder (a tremor's dip in a noisy press, a re-press between holders): this
# share of the pieces of a gesture found in more pieces than its touches, anywhere along the arm's span
STRAY_SHARE = 0.1
SPAN_MM = 300.0
# how far a gesture located astray misses, beyond the rest (HandSpread learns its share): every touch of it by the
# same shift, since what sends a gesture astray (the swing's frequency, the arm's stiffness or the moment the hands
# left read a little off) is shared by all its touches
ASTRAY_MM = 40.0
# the share of touches whose place the fit got wrong altogether (a free swing too short or too disturbed to place
# it: it lands anywhere along the arm's span), each alone: the other touches of the gesture still say where
LOST_SHARE = 0.01
# A touch that held the arm on the board may be placed nearer the pivot than it was, now and then by half its
# distance or more: at the board the arm cannot tilt further, so its angle under-reads the torque the touch added
# (foreign quiet touches held at the board 30 % of their span or more: −0.47σ on average, 8 beyond 2σ inward and 1
# outward of 92; those less held +0.01σ, 3 and 3 of 106; ours at 10 SPS −0.24 to −0.31σ; 80 SPS neither:
# bench/look_alikes.py). How often it happens differs from table to table (the cells' rate, the arm's stiffness and
# how far it can tilt): HandSpread learns the share, `loglik` places such a gesture at a gain g of its holders' x
# with that share, g anywhere over CLIPPED_GAINS
HELD_SHARE = 0.3
CLIPPED_GAINS = (0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
MODEL_INFLATION = 4.0       # the response model is not exact (the load cells' lag, a hand's tremor): σ this much wider


@dataclass(frozen=True)
class Touch:
    start: float
    end: float
    x: float | None          # where (mm from the pivot; + is seat 1's right), None when nothing could say
    sigma: float             # its 1σ (mm)
    lifted: float            # the weight the touch took away (g; negative when it put a pawn down)
    cov: tuple = ()          # its covariance with each touch of the gesture, in order (mm²): positions of touches
                             # close in time trade off against each other
    held: float = 0.0        # the share of its span the arm spent at the board (not swinging free)


def split(times: Sequence[float], weights: Sequence[float], noise_g: float, *, w_before: float | None = None,
          lightest_g: float = 0.0) -> list[tuple[float, float]]:
    """The touches in a gesture's weight trace, as (start, end). Between two touches the hand is off the arm
    and the moved pawn in the air: the weight dips between two bumps, below `w_before` by at least half the
    lightest pawn (a pawn lifted in the middle of a press also makes a dip, with the hand still on). A slow
    load cell blurs the pause, but the dip stays: one counts where both sides rise well above it."""
    n = len(times)
    if n < 5:
        return [(times[0], times[-1])] if n else []
    # light smoothing: a single sample's noise must not make a dip
    sm = [weights[0]] + [(weights[i - 1] + 2 * weights[i] + weights[i + 1]) / 4 for i in range(1, n - 1)] + [weights[-1]]
    thr = max(4.0 * noise_g, 0.4)
    cuts = []
    i = 1
    while i < n - 1:
        # the bottom of a valley (a flat bottom counts once, at its middle)
        j = i
        while j + 1 < n - 1 and abs(sm[j + 1] - sm[i]) <= thr / 4:
            j += 1
        bottom = min(sm[i:j + 1])
        if sm[i - 1] > bottom and sm[j + 1] > bottom:
            left, right = max(sm[:i]), max(sm[j + 1:])
            # the hand is off: the weight falls to what the arm carries without the pawn in the air — or, read
            # through a slow cell's settling (at 10 SPS a pause of 0.2-0.4 s), most of the way down to it
            lifted = w_before is None or bottom <= w_before - 0.5 * lightest_g or (
                bottom - w_before <= DIP_SHARE * (min(left, right) - w_before))
            if not lifted:
                i = j + 1
                continue
            rise = min(left, right) - bottom
            # and a valley of its own: the weight rises well above it close by on both sides (on a steep slope
            # the cells' interleaved readings can dip a little, which is no pause)
            near = min(max(sm[k] for k in range(i) if times[k] >= times[i] - NEAR_S) if i else bottom,
                       max(sm[k] for k in range(j + 1, n) if times[k] <= times[j] + NEAR_S)) - bottom
            if (rise > max(3 * thr, 0.3 * (min(left, right) - min(sm))) and near > 3 * thr
                    and times[j] - times[i] <= 1.5):
                cuts.append((i, j))
        i = j + 1
    # between two cuts there must be a bump, or they are one pause (a noisy flat bottom breaks into valleys)
    need = 3 * thr
    merged: list[tuple[int, int]] = []
    for a, b in cuts:
        if merged:
            pa, pb = merged[-1]
            inside = sm[pb + 1:a]
            floor = min(sm[pa:b + 1])
            if not inside or max(inside) < floor + need:
                merged[-1] = (pa, b)
                continue
        merged.append((a, b))
    if merged and max(sm[merged[-1][1]:]) < sm[-1] + need:
        # after the last pause the weight never stands above where it settles: no hand pressed there, the cells (or
        # an arm bouncing off the board, which they feel) only came back to the weight the arm now carries
        merged.pop()
    out = []
    start = times[0]
    for a, b in merged:
        if times[a] - start >= MIN_TOUCH_S:
            out.append((start, times[a]))
            start = times[b]
    out.append((start, times[-1]))
    return out


def _interp(times: Sequence[float], values: Sequence[float], t: float) -> float:
    if t <= times[0]:
        return values[0]
    if t >= times[-1]:
        return values[-1]
    lo = bisect.bisect_right(times, t) - 1
    hi = lo + 1
    u = (t - times[lo]) / (times[hi] - times[lo])
    return values[lo] + u * (values[hi] - values[lo])


def _step_matrices(omega: float, zeta: float, dt: float) -> tuple[float, float, float, float, float, float]:
    """The exact one-step map of s'' + 2ζω s' + ω² s = ω²·v for v held over dt: (Φ00, Φ01, Φ10, Φ11, Γ0, Γ1)."""
    # integrate the unforced system from (1, 0) and (0, 1), and the forced one from rest with v = 1
    def run(x, v, u):
        w2, d = omega * omega, 2.0 * zeta * omega
        n = 8
        h = dt / n
        for _ in range(n):
            k1x, k1v = v, w2 * (u - x) - d * v
            k2x, k2v = v + h / 2 * k1v, w2 * (u - x - h / 2 * k1x) - d * (v + h / 2 * k1v)
            k3x, k3v = v + h / 2 * k2v, w2 * (u - x - h / 2 * k2x) - d * (v + h / 2 * k2v)
            k4x, k4v = v + h * k3v, w2 * (u - x - h * k3x) - d * (v + h * k3v)
            x += h / 6 * (k1x + 2 * k2x + 2 * k3x + k4x)
            v += h / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)
        return x, v
    a00, a10 = run(1.0, 0.0, 0.0)
    a01, a11 = run(0.0, 1.0, 0.0)
    g0, g1 = run(0.0, 0.0, 1.0)
    return a00, a01, a10, a11, g0, g1


def _grid(t0: float, end: float) -> list[float]:
    """The 2 ms grid `_response` steps on from t0: each step's start, then where the last step ends (≥ end);
    accumulated step by step, as the stepping itself would, so that every reading of it agrees to the bit."""
    out, t = [t0], t0
    while t < end:
        t += STEP_S
        out.append(t)
    return out


def _interp_along(times: Sequence[float], values: Sequence[float], ts: Sequence[float]) -> list[float]:
    """`_interp` at each of `ts` (ascending), walking `times` once instead of searching it for each."""
    out = []
    lo, first, last = 0, times[0], times[-1]
    for t in ts:
        if t <= first:
            out.append(values[0])
        elif t >= last:
            out.append(values[-1])
        else:
            while times[lo + 1] <= t:
                lo += 1
            u = (t - times[lo]) / (times[lo + 1] - times[lo])
            out.append(values[lo] + u * (values[lo + 1] - values[lo]))
    return out


def _response(us: Sequence[float], grid: Sequence[float], ts: Sequence[float],
              step: tuple[float, float, float, float, float, float]) -> list[float]:
    """h(t) at the times `ts` (ascending, ≥ grid[0]) of s'' + 2ζω s' + ω² s = ω²·v(t), at rest at grid[0]:
    stepped exactly on `grid` (`_grid`) by `step` (`_step_matrices` of the swing), `us` the input v at each
    step's middle, read between grid points linearly."""
    if not ts:
        return []
    p00, p01, p10, p11, g0, g1 = step
    h, hv, n = 0.0, 0.0, 0
    t = prev_t = grid[0]
    prev_h = 0.0
    out = []
    for target in ts:
        while t < target:
            u = us[n]
            prev_t, prev_h = t, h
            h, hv = p00 * h + p01 * hv + g0 * u, p10 * h + p11 * hv + g1 * u
            n += 1
            t = grid[n]
        out.append(prev_h + (h - prev_h) * ((target - prev_t) / STEP_S) if t > prev_t else h)
    return out


def locate(angle: Sequence[tuple[float, float]], weights: Sequence[tuple[float, float]],
           touches: Sequence[tuple[float, float]], *, rest_before: float, w_before: float, w_after: float,
           kappa: float, omega: float, zeta: float, free: Sequence[tuple[float, float]], noise: float,
           lag_s: float = 0.0, inflation: float = MODEL_INFLATION, lifted_g: float | None = None) -> list[Touch]:
    """Each touch's position from the arm's answer to it.

    `angle`: (t, sin θ) samples covering the gesture and the free swing after it; `weights`: (t, W) of the
    load cells' sum over the gesture and until the weight has settled, `w_before` and `w_after` the settled
    weights either side (after the trace, `w_after` holds); `touches`: (start, end) from `split`;
    `rest_before`: sin θ at rest before the gesture; `free`: the stretches (start, end) the arm swung free of
    the board; `lag_s`: how late the load cells read a force; `lifted_g`: the weight a move's first touch takes
    away (its pawn's mass), when known — a slow load cell blurs the pause between touches, and with it the
    weight the arm carried then. An estimate only from stretches of free swing.
    """
    return locate_each([angle], weights, touches, rest_before=rest_before, w_before=w_before, w_after=w_after,
                       kappa=kappa, omega=omega, zeta=zeta, free=free, noise=noise, lag_s=lag_s,
                       inflation=inflation, lifted_g=lifted_g)[0]


def locate_each(angles: Sequence[Sequence[tuple[float, float]]], weights: Sequence[tuple[float, float]],
                touches: Sequence[tuple[float, float]], *, rest_before: float, w_before: float, w_after: float,
                kappa: float, omega: float, zeta: float, free: Sequence[tuple[float, float]], noise: float,
                lag_s: float = 0.0, inflation: float = MODEL_INFLATION, lifted_g: float | None = None,
                mixes: Sequence[Sequence[float]] | None = None,
                leads: Sequence[float] | None = None, timing_s: float = 0.0,
                fits: list | None = None) -> list[list[Touch]]:
    """`locate` for several readings of one angle, all sampled at the times of the first (the angle as load
    cells of different settling would have read it, settling.py): the arm's answer to the weights is worked
    out once and each reading fitted to it. With `mixes`, the readings are Σ mix[m] · angles[m] (each mix
    summing to 1), one result per mix: the fit is linear, so each costs no more than its weights. `leads`
    (one per reading, or per mix): each free stretch used only from that long after its start (a reading
    through taps reaches that far back, into what came before the stretch). `timing_s`: how well (1σ, s) the
    cells' lateness is known; each touch's covariance then also holds how far its place moves with the timing
    (in some gestures a touch moves by tens of mm for a tenth of a sample at 10 SPS, which the angle's noise
    alone never shows). `fits`, when given, is filled with each mix's (residual sum of squares, samples fitted)
    over the samples every mix uses (from the longest lead on), or None where nothing could be fitted."""
    angle = angles[0] if angles else ()
    if mixes is None:
        mixes = [[1.0 if m == i else 0.0 for m in range(len(angles))] for i in range(len(angles))]
    if fits is not None:
        fits[:] = [None] * len(mixes)
    if not touches or not weights or not angle:
        return [[] for _ in mixes]
    wt = [t - lag_s for t, _ in weights] + [weights[-1][0] - lag_s + 1e-3]
    wv = [w for _, w in weights] + [w_after]
    k = len(touches)
    # the weight each touch leaves when it is done: the level of the pause after it (or the end)
    levels = []
    for i, (a, b) in enumerate(touches):
        nxt = touches[i + 1][0] if i + 1 < k else None
        if nxt is None:
            levels.append(w_after)
            continue
        if i == 0 and lifted_g is not None:
            levels.append(w_before - lifted_g)
            continue
        span = [w for t, w in zip(wt, wv) if b <= t <= nxt]
        levels.append(sum(span) / len(span) if span else _interp(wt, wv, b))
    bases = [w_before] + levels[:-1]

    held_after = [((levels[i] - bases[i]) / kappa) if i < k - 1 else None for i in range(k)]

    def inputs_on(mids: Sequence[float]) -> list[list[float]]:
        # each touch's input at the grid's midpoints: nothing before it, the weight as read during it, and
        # after it (but for the last) the level it left
        weight = _interp_along(wt, wv, mids)
        out = []
        for i, (a, b) in enumerate(touches):
            base, held = bases[i], held_after[i]
            out.append([0.0 if t < a else held if (held is not None and t > b) else (w - base) / kappa
                        for t, w in zip(mids, weight)])
        return out

    step = _step_matrices(omega, zeta, STEP_S)
    decay = zeta * omega
    wd = omega * math.sqrt(max(1e-9, 1.0 - zeta * zeta))
    cols: list[list[float]] = []      # per sample: [h_1..h_k, then A, B of its own stretch]
    rows: list[int] = []              # which angle sample each is
    which: list[int] = []
    since: list[float] = []           # how long into its stretch
    for j, (a, b) in enumerate(free):
        idx = [n_ for n_, (t, _) in enumerate(angle) if a <= t <= b]
        if len(idx) < MIN_FREE_SAMPLES:
            continue
        ts = [angle[n_][0] for n_ in idx]
        grid = _grid(a, ts[-1])
        half = STEP_S / 2
        hs = [_response(us, grid, ts, step) for us in inputs_on([t + half for t in grid[:-1]])]
        for q, (n_, t) in enumerate(zip(idx, ts)):
            u = t - a
            e = math.exp(-decay * u)
            cols.append([hs[i][q] for i in range(k)] + [e * math.cos(wd * u), e * math.sin(wd * u)])
            rows.append(n_)
            which.append(j)
            since.append(u)
    unknown = [Touch(a, b, None, math.inf, bases[i] - levels[i]) for i, (a, b) in enumerate(touches)]
    leads = list(leads) if leads is not None else [0.0] * len(mixes)
    found: list[list[Touch]] = [list(unknown) for _ in mixes]
    # the response from a stretch's start and the one from later in it differ by a free swing, which the
    # stretch's own A, B take up: cutting a stretch's start needs only its rows dropped, not the arm solved again

    def fitted(lead: float, mine: Sequence[int], got: list | None = None) -> list[list[Touch]]:
        keep = [r for r in range(len(rows)) if since[r] >= lead - 1e-9]
        counts: dict[int, int] = {}
        for r in keep:
            counts[which[r]] = counts.get(which[r], 0) + 1
        keep = [r for r in keep if counts[which[r]] >= MIN_FREE_SAMPLES]
        return _fit_mixes([cols[r] for r in keep], [rows[r] for r in keep], [which[r] for r in keep], angles,
                          [mixes[i] for i in mine], k, touches, bases, levels, rest_before, noise, inflation,
                          timing_s, got)
    for lead in sorted(set(leads)):
        mine = [i for i, g in enumerate(leads) if g == lead]
        for i, out in zip(mine, fitted(lead, mine)):
            found[i] = out
    if fits is not None:
        # how well each reading fits, over the samples all of them use: the start of a stretch, just off the
        # board, fits worse than the rest, and a reading that dropped more of it must not look the better for it
        got: list = []
        fitted(max(leads), range(len(mixes)), got)
        fits[:] = got
    return found


def _slope(series: Sequence[tuple[float, float]], n_: int) -> float:
    """d value / dt at sample n_ (central where it can be)."""
    a, b = max(0, n_ - 1), min(len(series) - 1, n_ + 1)
    dt = series[b][0] - series[a][0]
    return (series[b][1] - series[a][1]) / dt if dt > 0 else 0.0


def _projected(groups, y: Sequence[float], size: int) -> list[float]:
    """Σ over the rows of each row's columns times y (the rows grouped as `_fit_mixes` groups them)."""
    v = [0.0] * size
    for idx, a, b, cv in groups:
        part = y[a:b]
        for c, p in enumerate(idx):
            v[p] = sum(map(mul, cv[c], part), v[p])
    return v


def _fit_mixes(cols, rows, which, angles, mixes, k, touches, bases, levels, rest_before, noise, inflation,
               timing_s=0.0, fits=None):
    """The least-squares fit of `locate_each` over the given samples, for each mix of the readings (and into
    `fits`, each mix's residual sum of squares and samples fitted, None when nothing could be)."""
    unknown = [Touch(a, b, None, math.inf, bases[i] - levels[i]) for i, (a, b) in enumerate(touches)]
    stretches = sorted(set(which))
    fits = [] if fits is None else fits
    fits[:] = [None] * len(mixes)
    if not rows or not stretches:
        return [list(unknown) for _ in mixes]
    size = k + 2 * len(stretches)
    pos = {j: k + 2 * n for n, j in enumerate(stretches)}
    # the rows come stretch by stretch: each stretch's columns (its touches' answers, then its own A, B) are summed
    # in C, onto what the stretches before left, in the rows' own order (so no sum differs by a bit)
    groups = []         # (where its columns go, its rows' range, its columns)
    start = 0
    for r in range(1, len(rows) + 1):
        if r == len(rows) or which[r] != which[start]:
            j = which[start]
            groups.append((list(range(k)) + [pos[j], pos[j] + 1], start, r, list(zip(*cols[start:r]))))
            start = r
    m = [[0.0] * size for _ in range(size)]
    for idx, _, _, cv in groups:
        for a, p in enumerate(idx):
            mp, ca = m[p], cv[a]
            for b, q in enumerate(idx):
                mp[q] = sum(map(mul, ca, cv[b]), mp[q])
    # a touch that began after the last free sample left no trace the fit can see: it stays unknown, and must not
    # make the system singular for the touches the free stretches did see
    seen = [p for p in range(size) if p >= k or m[p][p] > 0.0]
    solved = solve_symmetric([[m[p][q] for q in seen] for p in seen], [0.0] * len(seen))
    if solved is None:
        return [list(unknown) for _ in mixes]
    inv = [[0.0] * size for _ in range(size)]
    for a, p in enumerate(seen):
        for b, q in enumerate(seen):
            inv[p][q] = solved[1][a][b]
    dof = max(1, len(rows) - len(seen))
    # per reading: v = Σ row·y, and y·y against every other reading (a mix's rss is then y·y − x·v)
    used = [i for i in range(len(angles)) if any(mix[i] for mix in mixes if i < len(mix))]
    ys = {i: [angles[i][n_][1] - rest_before for n_ in rows] for i in used}
    vs = {}
    for i in used:
        vs[i] = _projected(groups, ys[i], size)
    gram = {(i, j): sum(map(mul, ys[i], ys[j])) for i in used for j in used if j >= i}
    found = []
    for n_mix, mix in enumerate(mixes):
        parts = [(i, mix[i]) for i in used if i < len(mix) and mix[i]]
        v = [sum(w * vs[i][p] for i, w in parts) for p in range(size)]
        yy = sum(wi * wj * gram[(min(i, j), max(i, j))] for i, wi in parts for j, wj in parts)
        x = [sum(a * b for a, b in zip(inv_row, v)) for inv_row in inv]
        rss = max(0.0, yy - sum(a * b for a, b in zip(x, v)))
        fits[n_mix] = (rss, len(rows))
        s2 = max(noise * noise, rss / dof) * inflation ** 2
        moved = [0.0] * k
        if timing_s > 0:
            # how the fit moves when the whole reading comes a little later: its slope's projection
            dv = _projected(groups, [sum(w * _slope(angles[i], n_) for i, w in parts) for n_ in rows], size)
            moved = [timing_s * sum(a * b for a, b in zip(inv[i], dv)) for i in range(k)]
        out = []
        for i, (a, b) in enumerate(touches):
            var = inv[i][i] * s2 + moved[i] ** 2
            sigma = math.sqrt(var) if var > 0 else math.inf
            out.append(Touch(a, b, x[i] if math.isfinite(sigma) else None, sigma, bases[i] - levels[i],
                             tuple(inv[i][j] * s2 + moved[i] * moved[j] for j in range(k))))
        found.append(out)
    return found


@dataclass(frozen=True)
class TouchScale:
    """What a touch's located σ is scaled by, as a function of that σ: c(σ) = at_ref · (σ / REF_MM)^power, σ taken
    within [LOW_MM, WIDE_MM] (beyond those the learned touches say nothing of it). A fit's σ is only nearly right,
    and not alike at every width: a gesture located from long free stretches is located about as well as its σ says
    or better, one seen only in short stretches between the arm's visits to the board (most of a 10 SPS gesture that
    presses the arm onto the board) misses by more than its σ says (foreign quiet touches at σ 25-80 mm by a median
    1.2-1.9σ, those within 25 mm by 0.3-0.7σ). One scale for all, learned from the tidy ones, made the loose ones
    surer than they were: a like-pawn pair applied wrongly at 0.9911 on two touches 65-70 mm off at σ 34 (foreign
    quiet 20214, turn 25)."""

    at_ref: float = 1.0
    power: float = 0.0
    # a touch that took off or put down less than this (g) left the arm as it was: it is placed by its force alone
    weightless_g: float = 0.0

    REF_MM = 10.0
    LOW_MM = 2.5
    WIDE_MM = 100.0
    # ... and such a touch located this loosely is never taken as surer than its own σ (one between REF_MM and this,
    # than its share of it). The touches of the moves learned from each leave a pawn's weight, which pins where they
    # were; one that leaves none (a beat's put-down of a like pawn, a bare press) is placed by how its force came and
    # went alone, and misses by more: on 16 foreign quiet traces beats' put-downs located at σ 25-100 mm missed by a
    # median 1.3-1.6 of their σ scaled as learned (0.4-0.6), moves' touches as loose by 0.6-1.0. Scaled so, a
    # put-down at E2 located at 63 ± 29 mm ruled the beat out and the mover's removal was shown (27709 at 317 s).
    # Every loose touch floored so instead, noisy 80 SPS asked about 4 moves more in 157 (foreign 27700), all of whose
    # loose touches had been right. A touch that held the arm at the board (Touch.held ≥ HELD_SHARE) is floored so too:
    # its place comes from the short free stretches around the arm's stay there, and a loose one misses by more than
    # its σ scaled as the free ones were (foreign quiet 35200, turn 46: L E3 → E2 tipped the arm, a press and its
    # release located at 51 ± 52 and -55 ± 123 mm were scaled to ± 20 and ± 49 and cost the move 8.3 nats, and
    # "nothing changed" was said at 0.994 — a missed turn and a missed tip)
    LOOSE_MM = 25.0

    def __call__(self, sigma: float) -> float:
        if self.power == 0.0:
            return self.at_ref
        s = min(self.WIDE_MM, max(self.LOW_MM, sigma))
        return self.at_ref * (s / self.REF_MM) ** self.power

    def of(self, touch: "Touch") -> float:
        """The scale on this touch's located σ."""
        learned = self(touch.sigma)
        if abs(touch.lifted) >= self.weightless_g and touch.held < HELD_SHARE:
            return learned
        return max(learned, min(1.0, min(self.WIDE_MM, touch.sigma) / self.LOOSE_MM))


def _scale_of(scale: "float | TouchScale", touch: "Touch") -> float:
    return scale.of(touch) if isinstance(scale, TouchScale) else scale


class HandSpread:
    """How the touches located at this table relate to the holders the hands touched: a gain (a located touch lies
    at about gain · the holder's x), a spread (1σ, mm, how far from that the hands touch) and a scale on the located
    σ, each with a prior worth `PRIOR_N` touches, then learned from the touches of moves the game confirmed.

    The follower reads the angle through the cells' own settling (settling.py), but taps only nearly the cells' or
    an arm unlike the model still locate every touch a little nearer the pivot or farther: a gain, the same along
    the arm, that depends on the cells, the arm and the hands — so it is learned, not assumed. Players, and how
    pawns sit in their holders, differ: the spread is learned. A located σ is itself only nearly right: it comes
    from the fit's residual and the timing's spread (at 10 SPS touches located at σ 10-20 mm missed where the hands
    touched by 7 mm rms, those at σ < 3 by 4), so a scale on it is learned too, most likely over a few values from
    0.4 to 1.6 with a prior at 1, and how it grows with the located σ (TouchScale: a power with a prior at 0), from
    every touch located within WIDE_MM.

    A miss is c²σ² + spread² wide, except now and then a gesture is located astray (a pause between touches the
    cells blurred, a fit that found another minimum): a share of the misses, learned, is taken as that much wider
    again (ASTRAY_MM; learned touch by touch, judged in `loglik` as the whole gesture shifted). They then neither
    widen the spread for every touch nor go unnoticed: a table whose touches mostly land within a few mm is judged
    by that, however far its few strays went. Each (scale; spread and astray share) is the most likely over the
    touches, the two last by expectation-maximisation.

    A touch that held the arm at the board may be placed nearer the pivot (HELD_SHARE, CLIPPED_GAINS): how often
    is this table's own — on some arms and cells often, on others never — so its share `clipped` is learned the same
    way, from the held touches alone: each as likely clipped as it sits nearer g · gain · x than gain · x (or astray),
    with a prior of CLIPPED_PRIOR worth CLIPPED_PRIOR_N held touches."""

    PRIOR_MM = 12.0
    PRIOR_N = 3.0
    PRIOR_X_MM = 80.0      # the prior on the gain counts as PRIOR_N touches this far out
    LOW_MM = 2.5           # never surer than this, however tidy the hands so far (the size of a fingertip's press)
    HIGH_MM = 25.0
    GAIN_RANGE = (0.6, 1.4)
    KEEP = 100             # the latest touches learned from
    SCALES = tuple(2.0 ** (k / 3.0) for k in range(-4, 3))     # what the located σ may be scaled by: 0.4-1.6
    SCALE_PRIOR_LOG = math.log(2.0)                             # the prior on the scale: 1, give or take a factor of 2
    # how the scale grows with the located σ (TouchScale): none, give or take 0.5, before touches show it — and never
    # shrinks: a loose touch is never taken as surer, for its σ, than the tidy ones. Most touches learned from are
    # tidy, so a shrinking scale is an extrapolation to the few loose ones, where a touch goes wrong when it does
    # (learned at -0.25 from touches placed 0.5 s after the hands left, a lift placed at 85 ± 21 mm scaled to ± 7:
    # foreign quiet 29106 turn 38, E2 → E1 applied as E3 → E2 at 0.9909)
    POWERS = (0.0, 0.25, 0.5, 0.75, 1.0)
    POWER_PRIOR = 0.5
    # touches located wider than this are not learned from: their misses are bounded by the arm, not by their σ
    WIDE_MM = TouchScale.WIDE_MM
    MISS_Z2 = 16.0         # a miss counts no worse than 4σ when it is judged alone (settling.py)
    ASTRAY_MM = ASTRAY_MM
    ASTRAY_PRIOR = 0.1     # the share of touches located astray, before any is seen ...
    ASTRAY_PRIOR_N = 10.0  # ... worth this many touches
    ASTRAY_MAX = 0.25      # strays are now and then: a table whose touches mostly miss far has a wide spread
    EM_STEPS = 6           # per scale, from the last scale's answer
    # held touches placed toward the pivot: before any is seen, a share this small (the part costs a held gesture
    # little where it is not needed) worth this many held touches, and never more than CLIPPED_MAX of them
    CLIPPED_PRIOR = 0.03
    CLIPPED_PRIOR_N = 10.0
    CLIPPED_MAX = 0.3

    def __init__(self, touches: Sequence[Sequence[float]] = ()):
        # (the holder's x, where the touch was located, its located σ², the share of its span the arm was held at
        # the board — 0 in rows kept before that was)
        self.touches: list[tuple[float, float, float, float]] = [
            (float(r[0]), float(r[1]), float(r[2]), float(r[3]) if len(r) > 3 else 0.0) for r in touches][-self.KEEP:]
        self.astray = self.ASTRAY_PRIOR
        self.clipped = self.CLIPPED_PRIOR
        self.power = 0.0
        self.gain, self.sigma_mm, self.scale = self._solve()

    @property
    def touch_scale(self) -> TouchScale:
        """The scale on a touch's located σ, as a function of that σ."""
        return TouchScale(self.scale, self.power)

    def learn(self, touches: Sequence[Touch], expected: Sequence[float]) -> None:
        """`touches` of a change the game has settled, and where its move touched (holders' x, in order)."""
        if not touches or len(touches) != len(expected):
            return      # a miscount says nothing of where the hands touch
        for tc, x in zip(touches, expected):
            if tc.x is None or not math.isfinite(tc.sigma) or tc.sigma > self.WIDE_MM:
                continue
            # a touch wrongly split or fitted must not move the gain without bound (nor, located loosely, be taken
            # as nearer than it was)
            reach = 3.0 * max(self.HIGH_MM, tc.sigma)
            located = max(x - reach, min(x + reach, tc.x))
            self.touches.append((float(x), located, tc.sigma ** 2, float(tc.held)))
        del self.touches[:-self.KEEP]
        self.gain, self.sigma_mm, self.scale = self._solve()

    def expected(self, xs: Sequence[float]) -> list[float]:
        """Where touches at holders `xs` are located at this table."""
        return [self.gain * x for x in xs]

    def _solve(self) -> tuple[float, float, float]:
        gain, spread, scale, power = 1.0, self.PRIOR_MM, 1.0, 0.0
        self.astray = self.ASTRAY_PRIOR
        self.clipped = self.CLIPPED_PRIOR
        self.power = power
        if not self.touches:
            return gain, spread, scale
        lo_g, hi_g = self.GAIN_RANGE
        # each touch counts in the gain, spread, scale and astray share as far as it was not clipped (a held touch
        # placed toward the pivot says nothing of how the others miss), judged from the fit before: once more where
        # the first fit finds held touches clipped more often than the prior says (elsewhere the weights hardly
        # move, and this runs under the game's lock at every confirmed move)
        weight = [1.0] * len(self.touches)
        held = any(h >= HELD_SHARE for *_, h in self.touches)
        passes, done = 2, 0
        while done < passes:    # the gain weighs each touch by c²σ² + spread², which are judged from gain · x
            done += 1
            cs = TouchScale(scale, power)
            j2 = spread * spread
            prior = self.PRIOR_N * self.PRIOR_X_MM ** 2 / self.PRIOR_MM ** 2
            w = [k / (cs(math.sqrt(s2)) ** 2 * s2 + j2) for (_, _, s2, _), k in zip(self.touches, weight)]
            num = prior + sum(x * xl * wi for (x, xl, _, _), wi in zip(self.touches, w))
            den = prior + sum(x * x * wi for (x, _, _, _), wi in zip(self.touches, w))
            gain = max(lo_g, min(hi_g, num / den))
            misses = [((xl - gain * x) ** 2, s2, k) for (x, xl, s2, _), k in zip(self.touches, weight)]
            v2, share = spread * spread, self.astray
            best = None
            # the scale at the reference σ over its values, then how it grows with σ, then the scale again: each
            # (scale, power) with its own most likely spread and astray share
            for which in ("scale", "power", "scale"):
                for value in (self.SCALES if which == "scale" else self.POWERS):
                    c, p = (value, power) if which == "scale" else (scale, value)
                    f = [TouchScale(c, p)(math.sqrt(s2)) ** 2 / (c * c) for _, s2, _ in misses]
                    v2, share = self._spread_and_astray(misses, c * c, v2, share, f)
                    score = self._score(misses, c, v2, share, f) - 0.5 * self.PRIOR_N * (p / self.POWER_PRIOR) ** 2
                    if best is None or score > best[0]:
                        best = (score, c, p, v2, share)
                _, scale, power, v2, share = best
            self.astray = share
            spread = math.sqrt(v2)
            if held:
                self.clipped, weight = self._clipped_share(gain, spread, TouchScale(scale, power))
                if done == 1 and self.clipped > self.CLIPPED_PRIOR:
                    passes = 3
        self.power = power
        return gain, spread, scale

    def _clipped_share(self, gain: float, spread: float, cs: TouchScale) -> tuple[float, list[float]]:
        """The share of held touches placed toward the pivot, most likely (by expectation-maximisation) with the
        gain, spread, scale and astray share learned from the touches; and how far each touch was not clipped."""
        j2, wide, a = spread * spread, self.ASTRAY_MM ** 2, self.astray
        rows = []
        for x, xl, s2, held in self.touches:
            if held < HELD_SHARE:
                rows.append(None)
                continue
            v = cs(math.sqrt(s2)) ** 2 * s2 + j2
            m = xl - gain * x
            # (the densities up to the shared 1/√(2π): near, astray, or clipped at one of the gains)
            near = ((1.0 - a) * math.exp(-0.5 * m * m / v) / math.sqrt(v)
                    + a * math.exp(-0.5 * m * m / (v + wide)) / math.sqrt(v + wide))
            clip = sum(math.exp(-0.5 * (xl - g * gain * x) ** 2 / v) for g in CLIPPED_GAINS) / (
                len(CLIPPED_GAINS) * math.sqrt(v))
            rows.append((near, clip))

        def clipped(share, n, c):
            return share * c / (share * c + (1.0 - share) * n) if share * c + (1.0 - share) * n > 0 else 0.0
        share = self.CLIPPED_PRIOR
        judged = [r for r in rows if r is not None]
        for _ in range(3 * self.EM_STEPS):      # (from the prior each time: a share far from it takes more steps)
            r = sum(clipped(share, n, c) for n, c in judged)
            share = min(self.CLIPPED_MAX, (self.CLIPPED_PRIOR_N * self.CLIPPED_PRIOR + r)
                        / (self.CLIPPED_PRIOR_N + len(judged)))
        return share, [1.0 if r is None else 1.0 - clipped(share, *r) for r in rows]

    def _spread_and_astray(self, misses: Sequence[tuple[float, float, float]], c2: float, j2: float,
                           share: float, f: Sequence[float] | None = None) -> tuple[float, float]:
        """(spread², astray share) most likely with the located σ² scaled by c2 (each miss's by c2 · f, f its
        growth with σ), from (j2, share); misses are (miss², located σ², how much it counts)."""
        wide = self.ASTRAY_MM ** 2
        lo, hi = self.LOW_MM ** 2, self.HIGH_MM ** 2
        p2 = self.PRIOR_MM ** 2
        # (each miss's scaled σ² once: this runs for every scale tried, under the game's lock)
        located = [(m2, c2 * s2 * (f[i] if f else 1.0), k) for i, (m2, s2, k) in enumerate(misses)]
        counted = sum(k for *_, k in misses)
        exp, sqrt = math.exp, math.sqrt
        for _ in range(self.EM_STEPS):
            num = self.PRIOR_N * (p2 - j2) / (j2 * j2)
            den = self.PRIOR_N / (j2 * j2)
            astray = 0.0
            for m2, cs2, k in located:
                v = cs2 + j2
                vw = v + wide
                near = (1.0 - share) * exp(-0.5 * m2 / v) / sqrt(v)
                far = share * exp(-0.5 * m2 / vw) / sqrt(vw)
                w = near / (near + far) if near + far > 0 else 0.0
                astray += k * (1.0 - w)
                num += k * (w * (m2 - v) / (v * v) + (1.0 - w) * (m2 - vw) / (vw * vw))
                den += k * (w / (v * v) + (1.0 - w) / (vw * vw))
            # a scoring step on spread² (each miss as surely astray as it looks, both ways widening with it), and
            # the share
            j2 = min(hi, max(lo, j2 + num / den))
            share = min(self.ASTRAY_MAX, (self.ASTRAY_PRIOR_N * self.ASTRAY_PRIOR + astray)
                        / (self.ASTRAY_PRIOR_N + counted))
        return j2, share

    def _score(self, misses: Sequence[tuple[float, float, float]], c: float, j2: float, share: float,
               f: Sequence[float] | None = None) -> float:
        """log-likelihood of the misses (and the priors on the scale and the spread)."""
        wide = self.ASTRAY_MM ** 2
        total = -0.5 * self.PRIOR_N * ((math.log(c) / self.SCALE_PRIOR_LOG) ** 2 + self.PRIOR_MM ** 2 / j2
                                       + math.log(j2))
        c2 = c * c
        for i, (m2, s2, k) in enumerate(misses):
            v = c2 * s2 * (f[i] if f else 1.0) + j2
            total += k * math.log((1.0 - share) * math.exp(-0.5 * m2 / v) / math.sqrt(v)
                              + share * math.exp(-0.5 * m2 / (v + wide)) / math.sqrt(v + wide) + 1e-300)
        return total


def falling_to_zero(excess: Callable[[float], float], lo: float, hi: float) -> float:
    """Where `excess`, which falls as its argument grows, crosses zero within [lo, hi] (lo or hi when it never
    does there): the spread that makes a learner's misses as large as expected (drift.ZeroDrift)."""
    if excess(lo) <= 0:
        return lo
    if excess(hi) >= 0:
        return hi
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        if excess(mid) > 0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def checked(touches: Sequence[Touch], check: Sequence[Touch], *, gate_z2: float = 9.0) -> list[Touch]:
    """`touches` located one way, checked against `check`, the same gesture's touches located another: where some
    touch's two places differ by more than √gate_z2 of their joint σ, the difference of every touch is added to
    the covariance (one of the two ways has gone astray, and which one the gesture cannot say). A touch whose check
    is weak (σ over WEAK_CHECK_MM) is no surer than WEAK_CHECK_SHARE of the check's σ."""
    touches = list(touches)
    if len(touches) != len(check):
        return touches
    # (a check that placed nothing at all is no check: the stretches were too short for it, which is what the
    # first way is for)
    f = [max(1.0, WEAK_CHECK_SHARE * b.sigma / a.sigma)
         if a.x is not None and a.sigma > 0 and b.x is not None and WEAK_CHECK_MM < b.sigma < math.inf else 1.0
         for a, b in zip(touches, check)]
    if any(v > 1.0 for v in f):
        touches = [a if a.x is None else
                   Touch(a.start, a.end, a.x, a.sigma * f[i], a.lifted,
                         tuple(c * f[i] * f[j] for j, c in enumerate(a.cov)) if len(a.cov) == len(touches) else ())
                   for i, a in enumerate(touches)]
    d = [a.x - b.x if a.x is not None and b.x is not None else 0.0 for a, b in zip(touches, check)]
    z2 = max((di * di / (a.sigma ** 2 + b.sigma ** 2) for di, a, b in zip(d, touches, check)
              if a.x is not None and b.x is not None), default=0.0)
    if z2 <= gate_z2:
        return touches
    out = []
    for i, a in enumerate(touches):
        if a.x is None:
            out.append(a)
            continue
        cov = tuple(c + d[i] * d[j] for j, c in enumerate(a.cov)) if len(a.cov) == len(touches) else ()
        out.append(Touch(a.start, a.end, a.x, math.sqrt(a.sigma ** 2 + d[i] * d[i]), a.lifted, cov))
    return out


def combined(touches: Sequence[Touch], check: Sequence[Touch], *, gate_z2: float = 9.0) -> list[Touch]:
    """`touches` located one way (the force worked back, the angle as sampled) and `check` the other (the angle
    read through the taps): where each placed every touch within WEAK_CHECK_MM, each touch is their weighted
    mean, no surer than the less sure of the two (both read one swing: their errors are not independent), and
    where some touch's two places differ by more than √gate_z2 of their joint σ, every difference is added to the
    covariance (`checked`'s rule). Otherwise `checked(touches, check)`.

    Each way goes astray now and then where the other does not — the worked-back force in a gesture whose fit is
    poor, the blurred one where a stretch is short — and on 10 SPS gestures with the sim's truth (four sessions,
    390 touches placed within 25 mm) the mean missed where the hands pressed by 5.4 mm rms against 7.2 for the
    first way checked by the second, none over 25 mm off against 6, and its σ nearer honest (mean z² 1.7
    against 2.0)."""
    touches, check = list(touches), list(check)
    k = len(touches)
    if k != len(check) or not k or not all(
            a.x is not None and b.x is not None and 0 < a.sigma <= WEAK_CHECK_MM and 0 < b.sigma <= WEAK_CHECK_MM
            for a, b in zip(touches, check)):
        return checked(touches, check, gate_z2=gate_z2)
    xs, sig = [], []
    for a, b in zip(touches, check):
        wa, wb = 1.0 / a.sigma ** 2, 1.0 / b.sigma ** 2
        xs.append((wa * a.x + wb * b.x) / (wa + wb))
        sig.append(max(a.sigma, b.sigma))
    d = [a.x - b.x for a, b in zip(touches, check)]
    far = max(di * di / (a.sigma ** 2 + b.sigma ** 2) for di, a, b in zip(d, touches, check)) > gate_z2
    out = []
    for i, a in enumerate(touches):
        if len(a.cov) == k:
            cov = [a.cov[j] * (sig[i] / a.sigma) * (sig[j] / touches[j].sigma) for j in range(k)]
        else:
            cov = [0.0] * k
        cov[i] = sig[i] ** 2
        if far:
            cov = [c + d[i] * d[j] for j, c in enumerate(cov)]
        out.append(Touch(a.start, a.end, xs[i], math.sqrt(cov[i]), a.lifted, tuple(cov)))
    return out


# a count that differs is not one error: two touches run together wherever the cells blur the pause between them (a
# beat's at 10 SPS: 2 of 67 on the foreign quiet traces of seeds 16000/16100), but one touch comes apart only where
# split() finds a dip below the weight before by half the lightest pawn, which a single press seldom makes (0 of 207
# places and removals there). Charged alike, two touches a loose second placing left at its target read a beat of
# like pawns as the mover's removal (foreign quiet seeds 16006, 16109, 16211: the beat shown at 0.24-0.46, the move
# missed); charged alike harsher, a beat run into one touch read as the removal at 0.999 (16206)
MISCOUNT = math.log(0.25)          # fewer touches than expected
IN_PIECES = math.log(0.05)         # more: one touch found in pieces (before a table's own count, TouchCounts)
# a gesture the cells read as one touch whose pause swung free from the board and was pressed back onto it
# (Measurement.pause_back): how often each count of touches shows that. On 16 foreign quiet traces (seeds 27700-31109)
# 7 of 22 two-touch gestures read as one had it, and 2 of 491 one-touch ones (places pressed twice to seat the pawn);
# the one-touch share is taken at five times that, the hands at other tables may press twice more often. Without it a
# beat of like pawns run into one touch was shown as the mover's removal (foreign quiet 30200 at 172.6 s: the beat
# at 0.36, the move missed)
BACK_IF_TWO = math.log(1.0 / 3.0)
BACK_IF_ONE = math.log(0.02)


class TouchCounts:
    """How often, at this table, the cells find a gesture in more touches than its move made: learned from the
    moves the game confirmed, with IN_PIECES's share as a prior worth PRIOR_N gestures.

    `split` cuts a gesture only where the weight dips below the weight before (a press let go and taken again
    before the pawn is down, a noisy press): on the foreign arm 0 of 562 confirmed gestures at 10 SPS and 0 of 236
    at 80 came apart, on ours 0 of 324 at quiet 10 SPS and 2 of 239 at noisy 80 (a second press that seats a pawn
    already down keeps the weight up: on a probe whose hands did that on 30 % of put-downs, 1 of 25). A table's
    hands may well do it more often, so the share is learned, not lowered: where gestures never come apart, "a removal
    found in two pieces" soon costs what it costs there, and a beat whose put-down left no weight is no longer
    shown as the mover's removal (foreign quiet 32003 at 356.8 s: two touches found, the put-down placed near W6
    at 1.5σ, the removal in pieces held at 0.69 against the beat). Never below LOW: a few hundred gestures cannot
    tell a share rarer than that from none."""

    KEEP = 200             # the latest confirmed gestures counted
    PRIOR = math.exp(IN_PIECES)
    PRIOR_N = 20.0
    LOW = 0.01
    LIMIT = 4              # a count differs by no more than this (kept as found - made)

    def __init__(self, extra: Sequence[int] = ()):
        self.extra: deque[int] = deque((int(e) for e in extra), maxlen=self.KEEP)
        self._count()

    def learn(self, found: int, made: int) -> None:
        """A confirmed move made `made` touches where the cells found `found` (none found says nothing)."""
        if found > 0 and made > 0:
            self.extra.append(max(-self.LIMIT, min(self.LIMIT, found - made)))
            self._count()

    def _count(self) -> None:
        # (once per confirmed move, not at every look the follower takes)
        more = sum(1 for e in self.extra if e > 0)
        # log of the share of gestures found in more touches than made: what `loglik` charges for it
        self.pieces = math.log(max(self.LOW, (self.PRIOR * self.PRIOR_N + more) / (self.PRIOR_N + len(self.extra))))


def loglik(touches: Sequence[Touch], expected: Sequence[float], *, jitter_mm: float = 12.0,
           miscount: float = MISCOUNT, pieces: float = IN_PIECES, floor: float = -8.0, scale: float | TouchScale = 1.0,
           span_mm: float = SPAN_MM, astray: float = 0.0, lost: float = LOST_SHARE,
           clipped: float = 0.0) -> float:
    """log-likelihood of the touches if the hands touched at `expected` (mm, in order), with the touches'
    joint covariance (its σ scaled by `scale`, HandSpread's) and a finger's spread; no more than `floor` per
    touch (a model is never that sure).
    Touches that said nothing count for nothing. Fewer touches than expected cost `miscount` (a move made in one
    gesture, two touches the weight could not tell apart, a touch that changed nothing) and say nothing of where:
    a place fitted to two touches at once is neither's. More touches than expected are one touch found in pieces
    (a hand that pressed twice to seat a pawn, a dip in a noisy press): they cost `pieces`, and `fragments`
    judges where each piece fell. As many as expected are judged as the hands were learned
    (`HandSpread`): most gestures located at their scaled σ, a share `astray` of them shifted as a whole by a
    further ASTRAY_MM or so (every touch the same way), so a gesture found far off costs what a stray costs at this
    table — not the Gaussian tail of a scale learned from the tidy ones. (Shifted touch by touch instead, two
    touches found 37 mm short together cost the holders they missed twice over, and E2 → E1 was applied as E3 → E2
    at 0.9905: foreign quiet 29712 turn 32. The two touches of a move miss together: their mean beyond 3σ of its
    modelled spread on 1.1 % of foreign quiet moves and 2.5 % of ours at 10 SPS, their difference on none.) And a
    share `lost` of touches are placed nowhere near any hand, each alone (uniform over `span_mm`, never denser than
    its own Gaussian at its peak, as `fragments` takes a stray piece): a gesture with one such touch is judged by
    its others, not by which holder the lost one fell nearer. A gesture with a touch that held the arm at the board
    (`Touch.held` ≥ HELD_SHARE) is, a share `clipped` of the time (HandSpread's, learned), placed nearer the pivot
    as a whole: at g · `expected`, g anywhere over CLIPPED_GAINS.
    (Ours, 10 SPS, session 28300006 turn 51: W6 → W7 read as W2 → W3 at 0.9988 because the put-down, pressed
    onto the board, was placed at +14 ± 13 mm: 71 mm from W3, 147 from W7; the lift at −94 ± 22 said W6.)"""
    if not touches or not expected:
        return 0.0
    if len(touches) != len(expected):
        if len(touches) < len(expected):
            return miscount
        return pieces + fragments(touches, expected, jitter_mm=jitter_mm, scale=scale, span_mm=span_mm)
    near = _joint_misfit(touches, expected, jitter_mm, scale, 0.0)
    if near is None:
        return 0.0
    d2, placed, logdet = near
    ll = -0.5 * d2
    if astray > 0.0:
        far = _joint_misfit(touches, expected, jitter_mm, scale, ASTRAY_MM ** 2, shared=True)
        if far is not None:
            # on the same scale (0: every touch where expected, located as the tidy gestures are)
            wide = math.log(astray / (1.0 - astray)) + 0.5 * (logdet - far[2]) - 0.5 * far[0]
            ll = max(ll, wide) + math.log1p(math.exp(-abs(ll - wide)))
    if clipped > 0.0 and any(t.held >= HELD_SHARE and t.x is not None for t in touches):
        # (the same covariance as the near part: only where the touches are expected moves — all of them, since a
        # gesture is located as a whole from the swing around it)
        terms = [-0.5 * d2 for d2 in _misfits_at_gains(touches, expected, CLIPPED_GAINS, jitter_mm, scale)]
        if terms:
            top = max(terms)
            one = (math.log(clipped / (1.0 - clipped)) + top
                   + math.log(sum(math.exp(v - top) for v in terms) / len(CLIPPED_GAINS)))
            ll = max(ll, one) + math.log1p(math.exp(-abs(ll - one)))
    if lost > 0.0:
        for i, t in enumerate(touches):
            if t.x is None or not math.isfinite(t.sigma):
                continue
            rest = _joint_misfit(touches, expected, jitter_mm, scale, 0.0, skip=i) if placed > 1 else (0.0, 0, 0.0)
            if rest is None:
                continue
            # the lost touch's density: uniform on the span, capped at its Gaussian's peak given the others
            # (its conditional variance is det C / det C without it)
            cap = min(0.0, 0.5 * (math.log(2 * math.pi) + logdet - rest[2]) - math.log(span_mm))
            one = math.log(lost / (1.0 - lost)) - 0.5 * rest[0] + cap
            ll = max(ll, one) + math.log1p(math.exp(-abs(ll - one)))
    return max(floor * placed, ll)


def pause_lift(weights: Sequence[tuple[float, float]], parts: Sequence[tuple[float, float]], *, w_before: float,
               noise_g: float, dt: float, settle_s: float) -> tuple[float, float] | None:
    """(g, 1σ) the first of a gesture's two touches took off the arm, from the pause between them (`parts` from
    `split`, `weights` the cells' sum, `noise_g` its noise per reading): there the hand is off the arm and the moved
    pawn in the air, and the cells read the arm without it — once they have settled. The pause is the cut `split`
    made there and the readings either side of it as level as the cells' noise (a noisy flat bottom breaks into
    many small valleys, of which the cut is one). None when it is shorter than the cells' settling (`settle_s`) or
    holds fewer than PAUSE_SAMPLES of each cell's samples: a pause of 0.2-0.4 s at 10 SPS is a blurred valley whose
    bottom falls short of the pawn's mass."""
    if len(parts) != 2 or dt <= 0.0 or len(weights) < PAUSE_SAMPLES:
        return None
    a, b = parts[0][1], parts[1][0]
    inside = [i for i, (t, _) in enumerate(weights) if a <= t <= b]
    if not inside:
        return None
    lo, hi = inside[0], inside[-1]
    mid = sorted(w for _, w in weights[lo:hi + 1])
    level = mid[len(mid) // 2]
    band = 4.0 * noise_g
    while lo > 0 and abs(weights[lo - 1][1] - level) <= band:
        lo -= 1
    while hi + 1 < len(weights) and abs(weights[hi + 1][1] - level) <= band:
        hi += 1
    span = weights[hi][0] - weights[lo][0]
    seen = span / dt + 1.0
    if span < settle_s or seen < PAUSE_SAMPLES:
        return None
    flat = [w for _, w in weights[lo:hi + 1]]
    # a quarter of the pause's spread as well as its noise: a valley still settling is no level
    sigma = math.sqrt(noise_g * noise_g / seen + ((max(flat) - min(flat)) / 4.0) ** 2)
    return w_before - sum(flat) / len(flat), sigma


def lift_loglik(lift: Sequence[float], mass_g: float, mass_sigma_g: float, *, span_g: float) -> float:
    """log-likelihood (0 at best) that the pause's `lift` (g, 1σ) is a pawn of `mass_g` ± `mass_sigma_g` lifted.
    A share LIFT_ASTRAY of pauses say nothing of it (anywhere over `span_g`): the most a lift can cost."""
    got, sigma = lift
    v = sigma * sigma + mass_sigma_g * mass_sigma_g
    stray = LIFT_ASTRAY * min(1.0, math.sqrt(2 * math.pi * v) / span_g)
    return (math.log((1.0 - LIFT_ASTRAY) * math.exp(-0.5 * (got - mass_g) ** 2 / v) + stray)
            - math.log(1.0 - LIFT_ASTRAY + stray))


@dataclass(frozen=True)
class Push:
    """The arm, free before a gesture, put on the board during its first touch: which way the hand pushed it.

    From rest, a push that moves the arm's balance by Δτ swings it at most 2·Δτ past where it was (a step on an
    undamped arm; a hand's press is no faster than a step, nor longer than a swing). So the arm reaching the board
    on `side` says the hand's torque x·F(t) reached at least `need` = (τ_tip − side·τ₀ − swing)/2 that way at some
    moment up to the contact — a bound, not a measurement: it rules out a touch on the other side of the pivot (a
    press there lifts the arm off that board) and one too near the pivot, never one farther out. The forces are
    the extremes the cells read from the touch's start to the contact and their settling after it (+ pressing,
    − a pawn lifted off), so a lift read late can only widen what the bound allows.

    A press let go before the contact throws the arm back the other way: held, it bent the arm away from `side`;
    released, the arm swings through its rest and out as far on the other side (twice its hold's torque, let go at
    the far end of a step's swing). So a force that the cells read falling back to under half its peak before the
    contact (`released_max`, `released_min`) may have done it from across the pivot, by the same bound (foreign
    normal 27701 at 279.4 s: a hand pressed 45-67 g at W2 for a second, let go as it lifted the L, and the arm
    swung onto the E board 0.4 s later; the lift, charged as a press the wrong way, was read as a beat's)."""

    side: int               # +1 / -1: the board the arm went onto
    need: float             # g·mm, the hand's torque that way it must have reached
    need_sigma: float       # g·mm, how well `need` is known (τ₀, τ_tip)
    f_max: float            # g, the most the cells read pressed, touch start to contact
    f_min: float            # g, the least (negative: a pawn lifted)
    released_max: float = 0.0   # g, the most pressed that was let go before the contact
    released_min: float = 0.0   # g, the most lifted that was put back before it (negative)


def let_go(readings: Sequence[tuple[float, float]], contact: float, taps: Sequence[float],
           dt: float) -> tuple[float, float]:
    """`released` of the forces the cells' readings (t, g; in time order) show let go before `contact` (s). A force
    that steps down is read under half of it as many periods later as the cells' settling (`taps`, the table's
    learned shape) takes to reach half its weight, so the readings up to then say whether the FORCE fell before the
    contact. One read later may be the hand letting go once the arm was down (ours, walked, seed 28300006 turn 37: a
    press at W4 put the arm on the W board and was let go 0.1 s later, read within the cells' settling, and a press
    at E6 "thrown back" from it fitted two loose touches: E6 → E7 applied at 0.9989 for W4 → W5); one read sooner is
    not (foreign quiet 36818 turn 25, ζ 0.065: a press at W2 let go just before the arm swung onto the E board read
    72 → 43 g by the contact and under half 0.05 s after it; taken as still held, only a press on the E side could
    have put the arm there, and W2 → W4 was applied as E5 → E7 at 0.9999)."""
    half = next((m for m, c in enumerate(itertools.accumulate(taps)) if c >= 0.5), 0)
    return released([f for t, f in readings if t <= contact + half * dt])


def released(forces: Sequence[float]) -> tuple[float, float]:
    """(g) The most a press read in `forces` (in time order) reached and then fell back under half of, and the most
    a lift reached (negative) and then came back over half of: forces let go within the series (Push)."""
    up = down = 0.0
    low, high = math.inf, -math.inf      # the least and the most read after the reading at hand
    for f in reversed(forces):
        if f > up and low < 0.5 * f:
            up = f
        if f < down and high > 0.5 * f:
            down = f
        low, high = min(low, f), max(high, f)
    return up, down


def push_loglik(push: Push | None, x: float, *, jitter_mm: float = 12.0, floor: float = -8.0) -> float:
    """log-likelihood (0 at best) that a first touch at `x` (mm) pushed the arm onto the board as `push` says: how
    far x falls short of where either force read could have done it, against a finger's spread and `need`'s σ."""
    if push is None or push.need <= 0.0:
        return 0.0
    best = floor
    # held and let go, a force threw the arm the other way: toward the board per mm of x, its sign turned
    for f, toward in ((push.f_max, 1), (push.f_min, 1), (push.released_max, -1), (push.released_min, -1)):
        k = toward * push.side * f  # g·mm toward the board per mm of x
        if k == 0.0:
            continue
        edge = push.need / k       # k·x ≥ need: x beyond this edge (outward when k > 0, inward of it when k < 0)
        short = max(0.0, edge - x if k > 0 else x - edge)
        sigma2 = jitter_mm ** 2 + (push.need_sigma / k) ** 2
        best = max(best, -0.5 * short * short / sigma2)
    return best


def misfit(touches: Sequence[Touch], expected: Sequence[float], *, jitter_mm: float = 12.0,
           scale: float | TouchScale = 1.0) -> tuple[float, int] | None:
    """(squared Mahalanobis distance, touches placed) of the touches from where the hands were expected (mm, in
    order), as `loglik` judges them; None when they are not as many as expected or none was placed."""
    if len(touches) != len(expected):
        return None
    off = _joint_misfit(touches, expected, jitter_mm, scale, 0.0)
    return None if off is None else off[:2]


def _joint_misfit(touches: Sequence[Touch], expected: Sequence[float], jitter_mm: float, scale: float | TouchScale,
                  wider_mm2: float, skip: int | None = None, *, shared: bool = False
                  ) -> tuple[float, int, float] | None:
    """(squared Mahalanobis distance, touches placed, log-determinant of their covariance) of as many touches as
    expected, each touch's variance `wider_mm2` wider (by a shift common to all of them when `shared`), leaving out
    touch `skip`; None when none was placed."""
    idx = [i for i, t in enumerate(touches) if t.x is not None and math.isfinite(t.sigma) and i != skip]
    if not idx:
        return None
    r = [touches[i].x - expected[i] for i in idx]
    c = _touch_cov(touches, idx, jitter_mm, scale, wider_mm2, shared)
    solved = solve_symmetric(c, r)
    if solved is None:
        return None
    return sum(a * b for a, b in zip(r, solved[0])), len(idx), _logdet(c)


def _misfits_at_gains(touches: Sequence[Touch], expected: Sequence[float], gains: Sequence[float],
                      jitter_mm: float, scale: float | TouchScale) -> list[float]:
    """`_joint_misfit`'s squared distance (its near covariance) of the touches from g · `expected`, for each g in
    `gains`; [] when none was placed. (The covariance is the same for every g, so it is inverted once: the distance
    is a quadratic in g.)"""
    idx = [i for i, t in enumerate(touches) if t.x is not None and math.isfinite(t.sigma)]
    if not idx:
        return []
    x = [touches[i].x for i in idx]
    e = [expected[i] for i in idx]
    solved = solve_symmetric(_touch_cov(touches, idx, jitter_mm, scale, 0.0, False), x)
    if solved is None:
        return []
    inv = solved[1]
    ie = [sum(row[j] * e[j] for j in range(len(e))) for row in inv]
    xx = sum(a * b for a, b in zip(x, solved[0]))
    xe = sum(a * b for a, b in zip(x, ie))
    ee = sum(a * b for a, b in zip(e, ie))
    return [xx - 2.0 * g * xe + g * g * ee for g in gains]


def _touch_cov(touches: Sequence[Touch], idx: Sequence[int], jitter_mm: float, scale: float | TouchScale,
               wider_mm2: float, shared: bool) -> list[list[float]]:
    """The covariance of touches `idx`: as located, each σ by its own scale (D·C·D, D the scales, so it stays
    positive definite), each widened by the hands' spread and by `wider_mm2` (a shift common to all when
    `shared`)."""
    k = {i: _scale_of(scale, touches[i]) for i in idx}

    def located(i: int, j: int) -> float:
        if len(touches[i].cov) == len(touches):
            return touches[i].cov[j]
        return touches[i].sigma ** 2 if i == j else 0.0
    return [[k[i] * k[j] * located(i, j) + (jitter_mm ** 2 if i == j else 0.0)
             + (wider_mm2 if shared or i == j else 0.0) for j in idx] for i in idx]


def _logdet(m: list[list[float]]) -> float:
    """log det of a small symmetric positive-definite matrix (Cholesky); -inf when it is not."""
    n = len(m)
    low = [[0.0] * n for _ in range(n)]
    total = 0.0
    for i in range(n):
        for j in range(i + 1):
            s = m[i][j] - sum(low[i][k] * low[j][k] for k in range(j))
            if i == j:
                if s <= 0.0:
                    return -math.inf
                low[i][i] = math.sqrt(s)
                total += math.log(s)
            else:
                low[i][j] = s / low[j][j]
    return total


def fragments(touches: Sequence[Touch], expected: Sequence[float], *, jitter_mm: float = 12.0,
              scale: float | TouchScale = 1.0, span_mm: float = SPAN_MM, stray: float = STRAY_SHARE) -> float:
    """Where more touches than `expected` fell, on loglik's scale (0: every touch where expected, to the mm).

    Each expected touch may have come in several pieces, one after another, and the pieces in time order are
    split among the expected touches in order (a lift's pieces, then the put-down's); every way to split them is
    as likely beforehand. Each piece may also be none of them: a share `stray` of the pieces are a hand's tremor
    or a re-press anywhere along the arm (`span_mm`), whose density there is uniform — which is what keeps one
    piece found confidently astray from ruling out every candidate. Pieces are judged each by its own σ (the
    covariance between pieces of one touch says how they share an error, not which holder)."""
    k = len(expected)
    j2 = jitter_mm * jitter_mm
    said = [(t.x, (_scale_of(scale, t) * t.sigma) ** 2 + j2) for t in touches
            if t.x is not None and math.isfinite(t.sigma) and t.sigma > 0]
    n = len(said)
    if n < k or k == 0:
        return 0.0
    # each piece at each expected touch: log of (near it, or astray) on the scale of a miss of 0 at 0. A stray lands
    # anywhere on the span, but is located as loosely as any piece: where it is seen is the span blurred by the
    # piece's σ, never denser than the piece's own Gaussian at its peak. (Taken as 1/span however loose the piece,
    # a piece that said nothing of where (σ 15 m: no free swing saw it) made a removal in pieces 2.2 nats likelier,
    # and a beat whose put-down could not be placed was reported as the mover's removal: foreign noisy 18005)
    at = [[math.log((1.0 - stray) * math.exp(-0.5 * (x - e) ** 2 / v)
                    + stray * min(1.0, math.sqrt(2 * math.pi * v) / span_mm))
           for e in expected] for x, v in said]
    terms = []
    for cuts in itertools.combinations(range(1, n), k - 1):
        bounds = (0, *cuts, n)
        terms.append(sum(at[i][g] for g in range(k) for i in range(bounds[g], bounds[g + 1])))
    top = max(terms)
    return top + math.log(sum(math.exp(t - top) for t in terms) / len(terms))
