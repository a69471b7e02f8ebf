"""How well a decision's own model explains the readings it used, and what a poor fit leaves of its certainty.

A ranking says which account of a change is likeliest *if* the model behind it holds: the cells' and the
accelerometer's noise as estimated, the arm swinging as a damped pendulum, the hands touching near holders.
An arm unlike the model can make one account look certain while explaining the readings badly (foreign arm,
seed 7314: a like pawn's move read at 1.0 from the swing's frequency, with the swing's residuals twice the
accelerometer's noise over 300 samples; it was the mirror-image move). So each decision tests its winning
account against the noise it assumed, part by part:

- the weight and torque change: its squared Mahalanobis distance d² (χ², 2 degrees of freedom; 1 on the board,
  where the angle only says "tipped", or without an accelerometer);
- the swing it read the rest from: the residuals at the account's own frequency against the accelerometer's
  noise, rss / (n − 3) over σ² — an F statistic, since σ² is itself estimated (`NOISE_DOF`);
- the hands' touches against where its holders are: their squared Mahalanobis distance (χ², one degree of
  freedom per touch placed), when they are as many as the account takes (a count that differs is the hands'
  model's own business, touches.loglik).

Each part's p-value becomes a bound on how much the readings can favour "the model holds" over "it does not"
(Sellke, Bayarri & Berger 2001: the Bayes factor is at least −e·p·ln p for p < 1/e), and with a prior
`MODEL_FAILS` that a decision's readings come from something the model does not describe, the probability
that it holds. Where it does not, the sensors say nothing of which account is right: the confidence is
mixed with that (the arm link then asks below its bar; the follower waits while a longer look may yet fit).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# what the accelerometer's σ² is worth in degrees of freedom: NoiseEstimate (second differences, weight 0.005)
# run over white noise gives σ̂² with a relative variance of 1 % (2/ν), whatever the noise
NOISE_DOF = 200.0
# the prior that a decision's readings come from something its model does not describe: the error budget the
# goals allow of moves applied unasked (0.1 %), no more and no less
MODEL_FAILS = 1e-3


def _normal_sf(z: float) -> float:
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def chi2_sf(x: float, dof: float) -> float:
    """P(χ²_dof ≥ x): exact for 1 and 2 degrees of freedom, Wilson and Hilferty's cube root beyond."""
    if x <= 0 or dof <= 0:
        return 1.0
    if dof == 1:
        return math.erfc(math.sqrt(x / 2.0))
    if dof == 2:
        return math.exp(-x / 2.0)
    h = 2.0 / (9.0 * dof)
    return _normal_sf(((x / dof) ** (1.0 / 3.0) - (1.0 - h)) / math.sqrt(h))


def f_sf(f: float, dof1: float, dof2: float) -> float:
    """P(F_{dof1, dof2} ≥ f), by Paulson's normal approximation (good to the tails a check looks at)."""
    if f <= 0:
        return 1.0
    a, b = 2.0 / (9.0 * dof1), 2.0 / (9.0 * dof2)
    c = f ** (1.0 / 3.0)
    return _normal_sf(((1.0 - b) * c - (1.0 - a)) / math.sqrt(a + b * c * c))


def bayes_bound(p: float) -> float:
    """The least the readings can favour the model over its failing, for a test that gave p (1 from p ≥ 1/e on)."""
    if p >= 1.0 / math.e:
        return 1.0
    return -math.e * max(p, 1e-300) * math.log(max(p, 1e-300))


@dataclass(frozen=True)
class FitCheck:
    """The parts of one decision's fit: (what, statistic, degrees of freedom, p), and the probability that the
    model behind the decision holds, given them."""

    parts: tuple[tuple[str, float, float, float], ...] = ()
    holds: float = 1.0

    def to_dict(self) -> dict:
        return {"model_holds": round(self.holds, 4),
                "parts": [{"what": w, "statistic": round(x, 2), "dof": round(k, 1), "p": float(f"{p:.3g}")}
                          for w, x, k, p in self.parts]}


def judged(parts: list[tuple[str, float, float, float]], *, prior_fails: float = MODEL_FAILS) -> FitCheck:
    """How likely the model holds, from each part's p-value (the parts test separate readings). Only what these
    readings add against it counts: the confidences the model gives already live with its failing as often as it
    does on readings that show nothing amiss (a perfect fit leaves them as they are)."""
    bound = 1.0
    for _, _, _, p in parts:
        bound *= bayes_bound(p)
    odds = prior_fails / (1.0 - prior_fails)
    return FitCheck(tuple(parts), 1.0 / (1.0 + odds * (1.0 / max(bound, 1e-300) - 1.0)))


def mixed(probability: float, holds: float, share_if_not: float) -> float:
    """A probability the model gave, once the model only holds with probability `holds`: where it does not, the
    readings say nothing, and each of the accounts weighed is as likely as `share_if_not`."""
    return holds * probability + (1.0 - holds) * share_if_not


def at_longest_look(check: FitCheck, grow: float) -> FitCheck:
    """The fit a look `grow` times as long could give at best: the swing's residuals beyond the noise kept as they
    are (a hand's tail, a bounce), every sample still to come pure noise, so their share falls; the other parts as
    they are. Whether the model might yet hold, not whether it will."""
    parts = []
    for what, f, n, p in check.parts:
        if what == "swing" and grow > 1.0:
            longer = (n + 3.0) * grow - 3.0
            f = (f * n + (longer - n)) / longer
            n, p = longer, f_sf(f, longer, NOISE_DOF)
        parts.append((what, f, n, p))
    return judged(parts)

