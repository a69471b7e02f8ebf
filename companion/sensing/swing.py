"""Where the arm will come to rest, read from its swing.

After every change the arm swings for many seconds (about 1 Hz, lightly damped),
far longer than a player waits for the page. Between board contacts and with the
hands off, the angle follows a damped oscillation about its rest value exactly:

    s(t) = c + e^(-ζω·u) · (A cos ω_d u + B sin ω_d u),   u = t - t0,  ω_d = ω·√(1 - ζ²)

so for a given (ω, ζ) the rest value c is a linear least-squares fit with three
unknowns. A fit over part of one period already separates holders; its own
covariance says how far to trust it, which is what the inference weighs.

Over part of a period the rest value and the frequency trade off, so ω must be
known well — and on a real arm it is not a constant: the arm is a pendulum whose
restoring torque is κ·sin θ (gram-force mm) and whose moment of inertia is the
empty arm's plus m·x² for every pawn on it, so ω² = κ·g / I falls as the arm
fills; a viscous loss c gives 2ζω = c / I, so ζ falls with it. `ArmSwing` holds
that physics (calibrated on the empty arm); the follower predicts each swing from
the pawns it tracks and corrects the prediction from the swings it sees.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field
from typing import Sequence

MIN_SAMPLES = 8
G_MM_S2 = 9810.0        # gravity, so that κ in g·mm (gram-force) over I in g·mm² gives 1/s²


@dataclass(frozen=True)
class ArmSwing:
    """The arm as a pendulum: κ (g·mm), the empty arm's moment of inertia (g·mm²) and its viscous damping c
    (g·mm²/s, with 2ζω = c / I); pawns sitting `height_mm` above the pivot make the loaded arm less stiff
    (κ − Σ m·h) and add m·h² to its inertia besides m·x²; `growth` is how much of m·x² a pawn really adds (1 for
    a point mass; measured by the calibration's walk through the holders)."""

    kappa_gmm: float
    inertia_gmm2: float
    viscous: float
    height_mm: float = 0.0
    growth: float = 1.0

    @classmethod
    def empty(cls, kappa_gmm: float, swing_hz: float, damping: float,
              inertia_gmm2: float | None = None, *, height_mm: float = 0.0, growth: float = 1.0) -> "ArmSwing":
        """From the empty arm's swing (its inertia from ω² = κ·g / I unless measured)."""
        omega = 2 * math.pi * swing_hz
        inertia = inertia_gmm2 if inertia_gmm2 else kappa_gmm * G_MM_S2 / omega ** 2
        omega = math.sqrt(kappa_gmm * G_MM_S2 / inertia)
        return cls(kappa_gmm, inertia, 2 * damping * omega * inertia, height_mm, growth)

    @classmethod
    def measured(cls, kappa_gmm: float, swing_hz: float, damping: float, load_gmm2: float) -> "ArmSwing":
        """From a swing measured with `load_gmm2` of Σ m·x² on the arm (the calibration's known weight)."""
        omega = 2 * math.pi * swing_hz
        total = kappa_gmm * G_MM_S2 / omega ** 2
        return cls(kappa_gmm, max(total - load_gmm2, 0.05 * total), 2 * damping * omega * total)

    def at(self, load_gmm2: float, mass_g: float = 0.0) -> tuple[float, float]:
        """(ω rad/s, ζ) with `load_gmm2` of Σ m·x² on the arm, from `mass_g` grams of pawns."""
        inertia = self.inertia_gmm2 + self.growth * max(0.0, load_gmm2)
        kappa = self.kappa_gmm
        if self.height_mm and mass_g:
            inertia += mass_g * self.height_mm ** 2
            kappa = max(0.05 * kappa, kappa - self.height_mm * mass_g)
        omega = math.sqrt(kappa * G_MM_S2 / inertia)
        return omega, min(0.95, self.viscous / (2.0 * inertia * omega))

    def inertia_at(self, omega: float, mass_g: float = 0.0) -> float:
        """The moment of inertia that makes the arm carrying `mass_g` grams swing at ω."""
        kappa = self.kappa_gmm
        if self.height_mm and mass_g:
            kappa = max(0.05 * kappa, kappa - self.height_mm * mass_g)
        return kappa * G_MM_S2 / (omega * omega)

    @property
    def empty_hz(self) -> float:
        return self.at(0.0)[0] / (2 * math.pi)

    @property
    def empty_damping(self) -> float:
        return self.at(0.0)[1]


@dataclass(frozen=True)
class SwingFit:
    rest: float          # c: the rest value of the signal
    rest_sigma: float    # its 1σ, from the residuals (never below what the sensor noise allows)
    amplitude: float     # √(A² + B²) at t0
    rms: float           # residual RMS
    n: int
    omega: float
    zeta: float


def _solve3(m: list[list[float]], v: list[float]) -> tuple[list[float], float] | None:
    """Solve the symmetric 3×3 system m·x = v; also return (m⁻¹)[0][0]. None when singular."""
    a, b, c = m[0]
    _, d, e = m[1]
    f = m[2][2]
    # cofactors of a symmetric matrix
    c00 = d * f - e * e
    c01 = c * e - b * f
    c02 = b * e - c * d
    det = a * c00 + b * c01 + c * c02
    if not math.isfinite(det) or abs(det) < 1e-300:
        return None
    c11 = a * f - c * c
    c12 = b * c - a * e
    c22 = a * d - b * b
    inv = 1.0 / det
    x0 = (c00 * v[0] + c01 * v[1] + c02 * v[2]) * inv
    x1 = (c01 * v[0] + c11 * v[1] + c12 * v[2]) * inv
    x2 = (c02 * v[0] + c12 * v[1] + c22 * v[2]) * inv
    return [x0, x1, x2], c00 * inv


def fit_swing(ts: Sequence[float], ss: Sequence[float], omega: float, zeta: float, *,
              noise: float = 0.0, t0: float | None = None) -> SwingFit | None:
    """Least-squares rest value of a damped swing; None with too few samples or a degenerate window.

    `noise` is the sensor's known per-sample σ: the reported σ never drops below what it
    allows, because a short window's residuals can look luckily small.
    """
    n = len(ts)
    if n < MIN_SAMPLES:
        return None
    if t0 is None:
        t0 = ts[0]
    decay = zeta * omega
    wd = omega * math.sqrt(max(1e-9, 1.0 - zeta * zeta))
    ref = ss[n // 2]
    # normal equations for columns [1, e·cos, e·sin], data centred on `ref` for precision
    s1c = s1s = scc = scs = sss = 0.0
    sy = syc = sys_ = syy = 0.0
    exp, cos, sin = math.exp, math.cos, math.sin
    for t, s in zip(ts, ss):
        u = t - t0
        e = exp(-decay * u)
        ph = wd * u
        co = e * cos(ph)
        si = e * sin(ph)
        y = s - ref
        s1c += co
        s1s += si
        scc += co * co
        scs += co * si
        sss += si * si
        sy += y
        syc += y * co
        sys_ += y * si
        syy += y * y
    solved = _solve3([[float(n), s1c, s1s], [s1c, scc, scs], [s1s, scs, sss]], [sy, syc, sys_])
    if solved is None:
        return None
    (c, a, b), inv00 = solved
    rss = max(0.0, syy - (c * sy + a * syc + b * sys_))
    dof = max(1, n - 3)
    rms = math.sqrt(rss / dof)
    sigma = max(rms, noise) * math.sqrt(max(inv00, 0.0))
    return SwingFit(c + ref, sigma, math.hypot(a, b), rms, n, omega, zeta)


def refine_swing(ts: Sequence[float], ss: Sequence[float], omega: float, zeta: float, *,
                 noise: float = 0.0, span: float = 0.3, steps: int = 14,
                 zeta_hi: float | None = None) -> SwingFit | None:
    """Fit with the swing frequency searched too (golden section over ω·(1 ± span)), then ζ.

    A real arm's frequency changes with the pawns on it (their moment of inertia),
    so a calibrated ω is only a starting point.
    """
    def rms_at(w: float, z: float) -> float:
        fit = fit_swing(ts, ss, w, z, noise=0.0)
        return math.inf if fit is None else fit.rms

    def golden(f, lo: float, hi: float) -> float:
        g = (math.sqrt(5) - 1) / 2
        x1, x2 = hi - g * (hi - lo), lo + g * (hi - lo)
        f1, f2 = f(x1), f(x2)
        for _ in range(steps):
            if f1 <= f2:
                hi, x2, f2 = x2, x1, f1
                x1 = hi - g * (hi - lo)
                f1 = f(x1)
            else:
                lo, x1, f1 = x1, x2, f2
                x2 = lo + g * (hi - lo)
                f2 = f(x2)
        return x1 if f1 <= f2 else x2

    if len(ts) < 3 * MIN_SAMPLES:
        return fit_swing(ts, ss, omega, zeta, noise=noise)
    w = golden(lambda x: rms_at(x, zeta), omega * (1 - span), omega * (1 + span))
    z = golden(lambda x: rms_at(w, x), 0.005, zeta_hi if zeta_hi is not None else min(0.5, max(0.05, zeta * 3)))
    return fit_swing(ts, ss, w, z, noise=noise)


@dataclass(frozen=True)
class SwingMeasurement:
    """What one swing shows of the arm itself: ω (rad/s) and ζ, each with its variance (of ω, and of ln ζ)."""

    omega: float
    omega_var: float
    zeta: float
    ln_zeta_var: float
    fit: SwingFit


def measure_swing(ts: Sequence[float], ss: Sequence[float], omega: float, zeta: float, *, noise: float,
                  span: float = 0.3, temper: float = 2.0, whole: bool = False) -> SwingMeasurement | None:
    """The swing's own ω and ζ, searched about (omega, zeta), with how well it shows them.

    Each variance comes from how fast the residuals rise either side of the best (a rise of `temper` times the
    per-sample noise for each unit of √variance, as SwingFan.frequency reads ω): a small or noisy swing shows its
    frequency loosely, a long clean one tightly, so a learner can weigh any swing instead of waiting for a big one.
    With `whole`, ω's variance is at least its spread over the whole search (`whole_search_variance`): a swing
    that barely stands out of the noise has minima all over it, and the best one's curvature says nothing of them.
    None when the best lies at the edge of the search or the residuals do not curve about it."""
    if len(ts) < 3 * MIN_SAMPLES:
        return None
    # over many periods the residuals against ω have a local minimum every few per cent: a coarse look across the
    # whole span (on every few readings: a slow swing needs no 100 Hz to show its frequency) finds the right one,
    # the golden search then refines within it
    step = 0.02
    n = max(3, math.ceil(2 * span / step) + 1)
    every = max(1, len(ts) // 200)
    coarse_t, coarse_s = ts[::every], ss[::every]
    grid = [omega * math.exp(span * (2 * k / (n - 1) - 1)) for k in range(n)]
    # each frequency at its best damping of a few across the range real arms have, not at the guess's alone: a
    # heavily damped swing read at a light guess has its lowest residual in another basin (ours 28700005, ζ 0.30
    # unmeasured, guessed 0.08: 1.61 Hz at ± 2.7 % for 1.40, and every later swing searched too narrowly to see it)
    zetas = (zeta,) + COARSE_ZETAS
    profile = []            # (ω, the residual sum of squares at its best damping)
    for w in grid:
        fits = [f.rms * f.rms * max(1, f.n - 3) for z in zetas
                if (f := fit_swing(coarse_t, coarse_s, w, z, noise=0.0)) is not None]
        if fits:
            profile.append((w, min(fits)))
    looks = [(r, w) for w, r in profile]
    if not looks:
        return None
    k = min(range(len(looks)), key=lambda i: looks[i][0])
    if k in (0, len(looks) - 1):
        return None              # the swing's frequency lies outside what was searched
    # ζ searched over every damping a real arm may have, and ω once more at the ζ found (read at a wrong ζ, a
    # heavily damped swing's frequency came out 3 % off)
    best = refine_swing(ts, ss, looks[k][1], zeta, noise=noise, span=1.5 * step, zeta_hi=0.5)
    if best is not None:
        best = refine_swing(ts, ss, best.omega, best.zeta, noise=noise, span=0.5 * step, zeta_hi=0.5)
    if best is None:
        return None
    # a swing must stand out of the noise before its residuals say anything of a frequency: an arm at rest fits
    # some frequency's wiggle of noise as well as any (5σ of the residuals the swing itself takes away)
    mean = sum(ss) / len(ss)
    flat = sum((s - mean) ** 2 for s in ss)
    if flat - best.rms * best.rms * max(1, best.n - 3) < 25.0 * max(noise, best.rms) ** 2:
        return None
    var_w = _spread(ts, ss, best, noise, temper, lambda d: (best.omega + d, best.zeta), 0.01 * best.omega)
    var_z = (_spread(ts, ss, best, noise, temper, lambda d: (best.omega, best.zeta * math.exp(d)), 0.1)
             if best.zeta > 1e-4 else None)
    if var_w is None:
        return None
    if whole:
        var_w = max(var_w, whole_search_variance(profile, noise2=max(noise, best.rms) ** 2 / every, temper=temper))
    return SwingMeasurement(best.omega, var_w, best.zeta, math.inf if var_z is None else var_z, best)


COARSE_ZETAS = (0.04, 0.12, 0.3)        # the coarse look's dampings besides the guess's: across what real arms have


def whole_search_variance(profile: Sequence[tuple[float, float]], *, noise2: float, temper: float) -> float:
    """ω's variance over a whole search grid, from the coarse look's (ω, residual sum of squares at its best
    damping), ascending in ω: each frequency weighed by exp(−Δrss / 2·temper·noise²), the rule the curvature reads
    locally, plus a grid step's own spread.

    Found on a walk-through of a heavily damped arm (ζ 0.3 at 1.9 Hz, 100 Hz accelerometer σ 0.002): by the time
    each capture began its swing was one or two σ, the best frequency a wiggle of noise anywhere from 1.3 to 2.3 Hz,
    and the curvature about it said ± 3 %: the walk read the empty arm at 2.32 Hz."""
    if len(profile) < 2:
        return math.inf
    low = min(r for _, r in profile)
    ws = [(w, math.exp(-(r - low) / (2.0 * temper * noise2))) for w, r in profile]
    total = sum(p for _, p in ws)
    mean = sum(w * p for w, p in ws) / total
    step = (profile[-1][0] - profile[0][0]) / (len(profile) - 1)
    return sum(p * (w - mean) ** 2 for w, p in ws) / total + step * step / 12.0


def frequency_variance(ts: Sequence[float], ss: Sequence[float], fit: SwingFit, *, noise: float,
                       temper: float = 2.0) -> float | None:
    """How well a swing shows its ω, the fit being its best (ω, ζ): the variance of ω from the residuals' curvature
    about it, as measure_swing reads it. None when they do not curve about it (no minimum there)."""
    if len(ts) < 3 * MIN_SAMPLES:
        return None
    return _spread(ts, ss, fit, noise, temper, lambda d: (fit.omega + d, fit.zeta), 0.01 * fit.omega)


def _spread(ts: Sequence[float], ss: Sequence[float], best: SwingFit, noise: float, temper: float, at,
            step: float) -> float | None:
    """The variance of a parameter the fit `best` is the least-squares minimum of: `at(d)` gives (ω, ζ) with the
    parameter moved by d; the residual rising by `temper` times the per-sample noise for each unit of √variance."""
    noise2 = max(noise, best.rms) ** 2

    def rss(d: float) -> float | None:
        w, z = at(d)
        f = fit_swing(ts, ss, w, min(0.95, z), noise=0.0)
        return None if f is None else f.rms * f.rms * max(1, f.n - 3)

    lo, mid, hi = rss(-step), rss(0.0), rss(step)
    if lo is None or mid is None or hi is None:
        return None
    curve = (lo + hi - 2 * mid) / (step * step)      # rss ≈ (curve / 2)·(x - x̂)² + c
    return None if not curve > 0 else 2 * noise2 * temper / curve


@dataclass(frozen=True)
class SwingPredictor:
    """The arm's swing as the follower predicts it now: the physics, times what it has learned the physics
    leaves out (`scale` on ω, `zeta_scale` on ζ)."""

    swing: ArmSwing
    scale: float = 1.0
    zeta_scale: float = 1.0
    rel_sigma: float = 0.01       # how well a predicted ω is known (1σ, relative): masses, positions, the model
    mass_g: float = 0.0           # the pawns' mass on the arm (its stiffness, when they sit above the pivot)

    def at(self, load_gmm2: float) -> tuple[float, float]:
        omega, zeta = self.swing.at(load_gmm2, self.mass_g)
        return omega * self.scale, min(0.95, zeta * self.zeta_scale)

    def zeta_for(self, omega: float) -> float:
        """ζ of the arm when it swings at ω (the load that gives that ω)."""
        base = omega / self.scale
        inertia = self.swing.inertia_at(base, self.mass_g)
        return min(0.95, self.swing.viscous / (2.0 * inertia * base) * self.zeta_scale)


@dataclass(frozen=True)
class SwingFan:
    """One swing fitted at several frequencies (ascending): the rest torque, its variance and the residual sum
    of squares at each. Between them, values are interpolated; `noise2` is the per-sample variance residuals
    are judged by."""

    omegas: tuple[float, ...]
    taus: tuple[float, ...]
    tau_vars: tuple[float, ...]
    rss: tuple[float, ...]
    noise2: float
    best: int                 # the frequency that fits best
    # frequency() by temper: every candidate of every belief asks it at every look
    _said: dict = field(default_factory=dict, init=False, compare=False, repr=False)

    @property
    def rss_min(self) -> float:
        return self.rss[self.best]

    def frequency(self, temper: float = 1.0) -> tuple[float, float]:
        """(ω, its variance) that the swing itself says: the vertex of the residual's parabola around the best
        frequency, and its width (the residual rising by `temper`·noise² for each unit of √variance)."""
        said = self._said.get(temper)
        if said is None:
            said = self._said[temper] = self._frequency(temper)
        return said

    def _frequency(self, temper: float) -> tuple[float, float]:
        w, r = self.omegas, self.rss
        n = len(w)
        if n < 3:
            return w[self.best], math.inf
        i = min(max(self.best - 1, 0), n - 3)
        x0, x1, x2 = w[i], w[i + 1], w[i + 2]
        y0, y1, y2 = r[i], r[i + 1], r[i + 2]
        # a parabola through three points: y = a(x - v)² + c
        d01, d12 = (y1 - y0) / (x1 - x0), (y2 - y1) / (x2 - x1)
        a = (d12 - d01) / (x2 - x0)
        if not a > 0:
            return w[self.best], math.inf
        vertex = (x0 + x1) / 2 - d01 / (2 * a)
        vertex = min(max(vertex, w[0] - (w[-1] - w[0])), w[-1] + (w[-1] - w[0]))
        return vertex, self.noise2 * temper / a

    def slope(self, omega: float) -> float:
        """d(rest torque)/d(ln ω) near ω: how much an error in ω moves the rest."""
        w = self.omegas
        if len(w) < 2:
            return 0.0
        i = 0
        while i < len(w) - 2 and w[i + 1] < omega:
            i += 1
        return (self.taus[i + 1] - self.taus[i]) / math.log(w[i + 1] / w[i])

    def at(self, omega: float) -> tuple[float, float, float]:
        """(rest torque, its variance, residual) at ω, through the three nearest frequencies (the residual is a
        parabola about its minimum: a straight line between two points would favour whatever lies near one);
        beyond the range, the nearest end's."""
        w = self.omegas
        n = len(w)
        if omega <= w[0]:
            return self.taus[0], self.tau_vars[0], self.rss[0]
        if omega >= w[-1]:
            return self.taus[-1], self.tau_vars[-1], self.rss[-1]
        if n < 3:
            u = (omega - w[0]) / (w[1] - w[0])
            return tuple(a[0] + u * (a[1] - a[0]) for a in (self.taus, self.tau_vars, self.rss))
        lo = bisect.bisect_right(w, omega) - 1
        hi = lo + 1
        # the three points around ω: lo-1..lo+1 or lo..lo+2, whichever centres it
        i = min(max(lo if omega - w[lo] > w[hi] - omega else lo - 1, 0), n - 3)
        x0, x1, x2 = w[i], w[i + 1], w[i + 2]
        l0 = (omega - x1) * (omega - x2) / ((x0 - x1) * (x0 - x2))
        l1 = (omega - x0) * (omega - x2) / ((x1 - x0) * (x1 - x2))
        l2 = (omega - x0) * (omega - x1) / ((x2 - x0) * (x2 - x1))
        out = []
        for a in (self.taus, self.tau_vars, self.rss):
            out.append(l0 * a[i] + l1 * a[i + 1] + l2 * a[i + 2])
        tau, var, rss = out
        return tau, max(var, 0.0), max(rss, 0.0)


def fan_fit(ts: Sequence[float], ss: Sequence[float], omegas: Sequence[float], zetas: Sequence[float],
            kappa: float, *, noise: float) -> tuple[SwingFan, SwingFit] | None:
    """The swing fitted at each (ω, ζ): a SwingFan of rest torques, and the best single fit."""
    fits = []
    for w, z in zip(omegas, zetas):
        f = fit_swing(ts, ss, w, z, noise=noise)
        if f is None:
            return None
        fits.append(f)
    rss = [f.rms * f.rms * max(1, f.n - 3) for f in fits]
    best = min(range(len(fits)), key=lambda i: rss[i])
    noise2 = max(noise, fits[best].rms) ** 2
    fan = SwingFan(tuple(omegas), tuple(kappa * f.rest for f in fits), tuple((kappa * f.rest_sigma) ** 2 for f in fits),
                   tuple(rss), noise2, best)
    return fan, fits[best]
