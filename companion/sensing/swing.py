"""Where the arm will come to rest, read from its swing.

After every change the arm swings for many seconds (about 1 Hz, lightly damped),
far longer than a player waits for the page. Between board contacts and with the
hands off, the angle follows a damped oscillation about its rest value exactly:

    s(t) = c + e^(-ζω·u) · (A cos ω_d u + B sin ω_d u),   u = t - t0,  ω_d = ω·√(1 - ζ²)

so for a given (ω, ζ) the rest value c is a linear least-squares fit with three
unknowns. A fit over part of one period already separates holders; its own
covariance says how far to trust it, which is what the inference weighs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

MIN_SAMPLES = 8


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
                 noise: float = 0.0, span: float = 0.3, steps: int = 14) -> SwingFit | None:
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
    z = golden(lambda x: rms_at(w, x), 0.005, min(0.5, max(0.05, zeta * 3)))
    return fit_swing(ts, ss, w, z, noise=noise)
