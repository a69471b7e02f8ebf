"""What a move's first touch lifted, read from the arm's free swing in the pause between its two touches.

A move lifts its pawn at the source and sets it down at the target. Like pawns moved alike change the weight
and the torque alike (on model A, advancing any pawn by a roll shifts the torque by the same amount), so only
where the hands were can tell them apart, and at 10 samples a second a load cell blurs a touch so much that
its place may be unknown to a hundred millimetres. The accelerometer is read ten times as often, and between
the two touches it sees the one thing that differs: the arm without the lifted pawn. A press far out puts the
arm on the board; when the hand lets go the arm leaves the board from rest — the board held it there — and
swings toward the rest it has without the pawn, until the second hand comes. So that swing's centre is the
torque the first touch took off, m·x of the pawn at its holder, the hand's own spread aside.

The swing from rest at the board is s(t) = s_b + (s_eq − s_b)·R(t − t_d), with R the arm's answer to its rest
moving from the board to s_eq (swing.py's free swing, ω and ζ as the follower knows them), t_d when it left the
board and R spread over how long the hand took to let go (0 to RELEASE_S[-1]: the hand's last force and the
pawn's weight come off together, or nearly). Linear in s_eq for each (t_d, release), which a grid covers; the
second touch's press at the stretch's end is found the same way (a push of unknown strength from t_p) and the
samples from its start are left out. What the grid leaves open (when the arm left, how long the release took)
and the swing's frequency known only to `rel_omega` are part of the answer's σ; a stretch the model does not
explain to within FIT_CHI times the accelerometer's noise says nothing.

Pure functions of plain data; the follower finds the stretch, keeps the board's level, and weighs each move
by the torque its mover would have taken off (`torque_loglik`).
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from operator import mul
from typing import Sequence

from companion.sensing.swing import G_MM_S2

STEP_S = 0.0025             # the answer's table step
RELEASE_S = (0.0, 0.04, 0.08, 0.12, 0.16, 0.2)    # how long a hand may take to let go
PUSH_S = 0.1                # the second hand's press as a ramp this long (only its start is wanted)
DEPART_S = 0.3              # how long before its last reading at the board the arm may have left it
TD_STEP_S = 0.005
COARSE_TD_S = 0.02
TP_STEP_S = 0.02
PUSH_AFTER_S = 0.1          # a second touch starts no sooner than this into the stretch
MIN_SAMPLES = 12            # samples of free swing before the second touch, at least
PIN_SAMPLES = 5             # readings at the board before the stretch: the arm rested there
PIN_GAP_S = 0.08            # ... the last of them at most this long before the stretch
FIT_CHI = 2.0               # the fit's rms within this many times the accelerometer's noise
# the share of pauses whose swing is not the arm without the lifted pawn (a finger left on it, the second touch
# come early): such a pause reads anything over the torques a lift can take off
TORQUE_ASTRAY = 0.05


@dataclass(frozen=True)
class PauseStretch:
    """The free swing between a move's touches that began with the arm leaving the board."""

    start: float            # s, its first free sample
    end: float              # s, its last
    side: int               # +1 / -1: the board it left
    board: float            # sin θ read at that board just before (median)
    last_board: float       # s, the last reading at the board before it
    # +1 / -1: the board it ended at. A swing from rest at a board never comes back to that board unaided (each
    # swing is smaller than the last), so ending there is a hand pressing it back; ending at the other board may be
    # the arm's own swing across
    end_side: int = 0

    @property
    def pressed_back(self) -> bool:
        return self.end_side == self.side


def pause_stretch(angle: Sequence[tuple[float, float]], free: Sequence[tuple[float, float]],
                  parts: Sequence[tuple[float, float]], limit: float) -> PauseStretch | None:
    """The stretch of free swing (`free`, from the follower) between a two-touch gesture's touches (`parts`, from
    touches.split) that began with the arm leaving the board after resting on it and ended at the board again
    (the second touch pressing it there) — the nearest such to the cut between the touches. A gesture the cells
    read as one touch may be two they blurred together: the arm resting on the board, free, and on it again within
    it shows the pause between them (foreign quiet 27718 at 185.3 s: a 0.37 s pause in a single part). `limit`:
    |sin θ| from which a reading is at the board. None when there is none."""
    if len(parts) not in (1, 2):
        return None
    first, last = parts[0][0], parts[-1][1]
    cut = parts[0][1] if len(parts) == 2 else 0.5 * (first + last)
    best = None
    for a, b in free:
        if a <= first or b >= last:
            continue
        board = [(t, s) for t, s in angle if a - DEPART_S <= t < a and abs(s) >= limit]
        if len(board) < PIN_SAMPLES or a - board[-1][0] > PIN_GAP_S:
            continue
        side = 1 if board[-1][1] > 0 else -1
        tail = sorted(s for t, s in board if s * side > 0)
        if len(tail) < PIN_SAMPLES:
            continue
        end = next((s for t, s in angle if b < t <= b + PIN_GAP_S and abs(s) >= limit), None)
        if end is None:
            continue        # the stretch did not end at the board: the swing may have gone on into the touch
        key = abs(0.5 * (a + b) - cut)
        if best is None or key < best[0]:
            best = (key, PauseStretch(a, b, side, tail[len(tail) // 2], board[-1][0], 1 if end > 0 else -1))
    return None if best is None else best[1]


def _free_from_rest(u: float, omega: float, zeta: float) -> float:
    """The free swing from rest at unit displacement, u after it began."""
    wd = omega * math.sqrt(max(1e-9, 1.0 - zeta * zeta))
    d = zeta * omega
    return math.exp(-d * u) * (math.cos(wd * u) + d / wd * math.sin(wd * u))


class _Answers:
    """The arm's answer to its rest moving by one, over each release's ramp, tabled for one ω."""

    def __init__(self, omega: float, zeta: float, span: float):
        n = int(span / STEP_S) + 3
        step = [0.0] + [1.0 - _free_from_rest(i * STEP_S, omega, zeta) for i in range(1, n)]
        cum = [0.0]
        for v in step:
            cum.append(cum[-1] + v)
        self.tables = {}
        for ramp in set(RELEASE_S) | {PUSH_S}:
            k = max(1, int(round(ramp / STEP_S)))
            # a ramp's answer is the step's averaged over the ramp
            self.tables[ramp] = step if ramp <= 0 else [(cum[i + 1] - cum[max(0, i + 1 - k)]) / k for i in range(n)]

    def along(self, ramp: float, ts: Sequence[float], t0: float) -> list[float]:
        tab = self.tables[ramp]
        top = len(tab) - 1
        out = []
        for t in ts:
            f = (t - t0) / STEP_S
            if f <= 0.0:
                out.append(0.0)
                continue
            i = int(f)
            out.append(tab[top] if i >= top else tab[i] + (tab[i + 1] - tab[i]) * (f - i))
        return out


def _grid(ts: Sequence[float], ys: Sequence[float], answers: _Answers, t_lo: float, t_hi: float,
          step: float, ramps: Sequence[float]) -> list[tuple[float, float, float, float, float]]:
    """(t_d, release, c, rss, var of c per unit noise²) of y = c·R over the grid."""
    yy = sum(map(mul, ys, ys))
    out = []
    n = int((t_hi - t_lo) / step + 1e-9)
    for j in range(n + 1):
        td = t_lo + j * step
        for ramp in ramps:
            r = answers.along(ramp, ts, td)
            rr = sum(map(mul, r, r))
            if rr <= 0.0:
                continue
            ry = sum(map(mul, r, ys))
            c = ry / rr
            out.append((td, ramp, c, max(0.0, yy - c * ry), 1.0 / rr))
    return out


def _push_start(ts: Sequence[float], ys: Sequence[float], answers: _Answers, t_lo: float, t_hi: float,
                end: float) -> float | None:
    """When the second touch began pressing, or None if the stretch shows no press: the best of y = c·R + p·P
    over a coarse grid of departures and releases and the press's start t_p."""
    yy = sum(map(mul, ys, ys))
    starts = []
    tp = ts[0] + PUSH_AFTER_S
    while tp < end:
        starts.append(tp)
        tp += TP_STEP_S
    pushes = []
    for tp in starts:
        p = answers.along(PUSH_S, ts, tp)
        pp = sum(map(mul, p, p))
        if pp > 0.0:
            pushes.append((tp, p, pp, sum(map(mul, p, ys))))
    best, best_tp = math.inf, None
    n = int((t_hi - t_lo) / COARSE_TD_S + 1e-9)
    for j in range(n + 1):
        td = t_lo + j * COARSE_TD_S
        for ramp in RELEASE_S[::2]:
            r = answers.along(ramp, ts, td)
            rr = sum(map(mul, r, r))
            if rr <= 0.0:
                continue
            ry = sum(map(mul, r, ys))
            if yy - ry * ry / rr < best:
                best, best_tp = yy - ry * ry / rr, None
            for tp, p, pp, py in pushes:
                rp = sum(map(mul, r, p))
                det = rr * pp - rp * rp
                if det <= 1e-9 * rr * pp:
                    continue
                rss = yy - ((pp * ry - rp * py) * ry + (rr * py - rp * ry) * py) / det
                if rss < best:
                    best, best_tp = rss, tp
    return best_tp


def _settle(fits, noise: float, n: int) -> tuple[float, float, float, tuple]:
    """(c, var c, rss of the best, the best) over the grid: each grid point weighed by its likelihood."""
    top = min(fits, key=lambda f: f[3])
    s2 = max(noise * noise, top[3] / max(1, n - 3))
    ws = [math.exp(-0.5 * (f[3] - top[3]) / s2) for f in fits]
    total = sum(ws)
    c = sum(w * f[2] for w, f in zip(ws, fits)) / total
    var = sum(w * ((f[2] - c) ** 2 + s2 * f[4]) for w, f in zip(ws, fits)) / total
    return c, var, top[3], top


def lifted_torque(angle: Sequence[tuple[float, float]], stretch: PauseStretch, *, board: float, rest: float,
                  kappa: float, omega: float, zeta: float, noise: float, rel_omega: float, rel_zeta: float,
                  mass_g: float) -> tuple[float, float] | None:
    """(g·mm, 1σ) of torque the first touch took off, from the swing in `stretch`: `board` the sin θ the arm rests
    at on that board (the follower's level for it, or the stretch's own reading), `rest` the sin θ it rested at
    before the gesture, `kappa` its stiffness (g·mm), `omega`, `zeta` its swing before the gesture, known to
    `rel_omega` and `rel_zeta` (relative, 1σ), `noise` the accelerometer's per reading, `mass_g` the lifted pawn's
    mass: without it the arm's inertia is m·x² less and it swings that much faster. None when the swing does not
    fit."""
    pts = [(t, s) for t, s in angle if stretch.start <= t <= stretch.end]
    if len(pts) < MIN_SAMPLES or omega <= 0.0 or kappa <= 0.0:
        return None
    ts = [t for t, _ in pts]
    ys = [s - board for _, s in pts]
    t_lo, t_hi = stretch.last_board - DEPART_S, stretch.start
    span = stretch.end - t_lo + 0.05
    tp = _push_start(ts, ys, _Answers(omega, zeta, span), t_lo, t_hi, stretch.end)
    if tp is not None:
        keep = [i for i, t in enumerate(ts) if t < tp]
        if len(keep) < MIN_SAMPLES:
            return None
        ts, ys = [ts[i] for i in keep], [ys[i] for i in keep]
    inertia = kappa * G_MM_S2 / (omega * omega)     # what swings at ω (swing.py)
    om = omega
    for last in (False, True):
        c, var, rss, top = _settle(_grid(ts, ys, _Answers(om, zeta, span), t_lo, t_hi, TD_STEP_S, RELEASE_S), noise,
                                   len(ts))
        tau = kappa * (rest - board - c)
        if not last:
            # the pawn off the arm took its m·x² of inertia with it: the swing seen was that much faster
            less = tau * tau / mass_g if mass_g > 0 else 0.0
            om = omega * math.sqrt(inertia / max(0.5 * inertia, inertia - less))
    if rss / max(1, len(ts) - 3) > (FIT_CHI * noise) ** 2:
        return None
    # the swing's frequency and damping known only so well: how far the best fit's centre moves with each
    td, ramp = top[0], top[1]
    for lo, hi in (((om * (1.0 - rel_omega), zeta), (om * (1.0 + rel_omega), zeta)),
                   ((om, zeta * math.exp(-rel_zeta)), (om, min(0.95, zeta * math.exp(rel_zeta))))):
        moved = []
        for w, z in (lo, hi):
            r = _Answers(w, z, span).along(ramp, ts, td)
            rr = sum(map(mul, r, r))
            moved.append(sum(map(mul, r, ys)) / rr if rr > 0 else c)
        var += (0.5 * (moved[1] - moved[0])) ** 2
    return tau, kappa * math.sqrt(var)


class PauseScale:
    """How much wider than its fit's own σ a pause's torque misses at this table, learned from confirmed moves.

    The release is a ramp of one shape and the second touch a press of one shape, and κ, ω and ζ are the follower's
    estimates: on random arms of our simulator the fit's own σ was 1.8 times too small, on the foreign arm 0.7-1.5
    times right. Each confirmed move's miss, in its own σ (z², that of the mover's mass included), is kept, no more
    than MISS_Z2 (a pause astray is one wide miss, not a table's spread); the scale is their mean's, with PRIOR_N
    misses at the PRIOR scale until the table's own outnumber them. (A mean of capped misses: of the estimators
    tried on 30 misses, the one least often short of the truth — a median read a table of scale 3 as 2.0 one time in
    twenty, this one as 2.2.)"""

    KEEP = 30
    PRIOR = 2.0
    PRIOR_N = 6
    MISS_Z2 = 25.0
    LOW, HIGH = 1.0, 4.0

    def __init__(self, misses: Sequence[float] = ()):
        self.misses: deque[float] = deque((float(z2) for z2 in misses), maxlen=self.KEEP)

    def learn(self, got: Sequence[float], tau: float, var_tau: float) -> None:
        """A confirmed move's pause read `got` (g·mm, its fit's own σ) where its mover took `tau` ± √`var_tau` off."""
        v = got[1] * got[1] + var_tau
        if v > 0.0:
            self.misses.append(min(self.MISS_Z2, (got[0] - tau) ** 2 / v))

    @property
    def scale(self) -> float:
        total = sum(self.misses) + self.PRIOR_N * self.PRIOR ** 2
        return min(self.HIGH, max(self.LOW, math.sqrt(total / (len(self.misses) + self.PRIOR_N))))


def torque_loglik(got: Sequence[float], tau: float, var_tau: float, *, span: float) -> float:
    """log-likelihood (0 at best) that the pause's `got` (g·mm, 1σ) is a lift of `tau` ± √`var_tau` g·mm. A share
    TORQUE_ASTRAY of pauses say nothing of it (anywhere over `span` g·mm): the most it can cost."""
    value, sigma = got[0], got[1]
    v = sigma * sigma + var_tau
    stray = TORQUE_ASTRAY * min(1.0, math.sqrt(2 * math.pi * v) / span)
    return (math.log((1.0 - TORQUE_ASTRAY) * math.exp(-0.5 * (value - tau) ** 2 / v) + stray)
            - math.log(1.0 - TORQUE_ASTRAY + stray))
