"""What the follower is set to and keeps: its settings, limits, and the accounts of the arm (beliefs)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterable

from companion.sensing.inference import Candidate, Measurement, Resolution, TrackedPawn

FAN_STEP = 0.005         # the swing fan's spacing in ω (0.5 %)
FAN_MAX = 21
FAN_MAX_WIDE = 41        # ... over the wide range an arm whose swing nobody measured may have
# An arm whose swing no calibration measured: real arms swing anywhere from about 0.5 to 2 Hz empty (DESIGN.md),
# so the default's ω is known only to a factor of two either way (ln 2 as 2σ) until long swings have measured it
UNMEASURED_REL = 0.35
LEARNED_REL = 0.01       # one long swing's own ω, two periods or more of a big swing: about 1 %
WIDE_REL = 0.03          # above this the fan spans the arm's whole plausible range, judged at the ω the swing shows
OMEGA_RANGE = (2 * math.pi * 0.35, 2 * math.pi * 3.0)   # rad/s: wider than any arm, loaded or empty
UNMEASURED_PERIODS = 1.0
# ... and its damping ratio anywhere from a few hundredths to a third (DESIGN.md): the default ζ is known only to a
# factor of about three either way (ln 3 as 2σ) until long swings have measured it. Over a short look at the swing,
# rest and damping trade off, so the rest is read across the damping the arm may have (ZETA_FAN, in σ): out to
# 2.5σ, e^±1.4 of the default 0.08 — 0.02 to 0.32, the whole range real arms have (±2σ stopped at 0.24, and a ζ 0.29
# arm's swing fitted nowhere on the fan)
ZETA_UNMEASURED_REL = 0.55
ZETA_LEARNED_REL = 0.1   # one long swing's own ζ: about 10 %
ZETA_FAN = (-2.5, -1.25, 0.0, 1.25, 2.5)
ZETA_SURE = 0.03         # a damping known this well (ln σ) moves no rest worth reading across
ZETA_RANGE = (0.2, 5.0)  # the most an unmeasured arm's learned ζ scale may stray from the default
# When the hands left, as the accelerometer shows it: a slow load cell still feels a hand for a few samples after it
# went (the foreign arm's 10 SPS cells 0.34-0.50 s), while the arm has swung free since. Each earlier start, a step at
# a time, is kept while the readings it adds fit the free swing as well as the noise allows (χ² at 3.09σ over the
# HEAD_S they add); the first that does not is the hand's, and one step more is left to it
BACK_STEP_S = 0.02
BACK_HEAD_S = 0.1
BACK_Z = 3.09
BOARD_LEVELS = 15        # the board's level is the median of what the latest this many pauses read resting on it
TOUCH_AFTER_SAMPLES = 1   # a touch is placed well once the cells have read a sample past their settling after it
# a verdict that a longer look can no longer change is given once it has stood this long (its rest no longer moving)
STEADY_S = 0.5
SURE_SAID = 0.99         # a verdict this sure is applied unasked; one below it is asked about
ACCEL_AXES = ("ax", "ay", "az")
MAX_BELIEFS = 4
MAX_BELIEFS_ON_BOARD = 24   # resting on the board, which pawn was taken off stays open until it lifts
KEEP_BELIEF = 1e-3
CANDIDATE_SETS = 32        # pawn sets whose candidates the follower keeps built (a few accounts, a few changes)
# ... and single candidates, kept across changes and cleared whole at this bound (pawns reweighed or moved make new
# ones: a 4-player game of ours held 15,600 after 550 s, about 4 MB)
CANDIDATE_PARTS = 20000
REMEMBERED_CHANGES = 32   # the game confirms the latest change, or one a question on the page asked about


@dataclass
class Belief:
    """One account of which pawns are on the arm, and how much the changes since support it.

    After an ambiguous change the follower keeps every account it could not rule out;
    later changes that only one of them explains settle the question by themselves.
    """

    log_weight: float
    pawns: list[TrackedPawn]
    candidates: list[Candidate]
    # the change that led here and its log-likelihood then, to re-weigh once the arm has settled longer
    via: Candidate | None = None
    via_ll: float = 0.0
    via_measurement: Measurement | None = None


@dataclass(frozen=True)
class FollowerSettings:
    quiet_s: float = 0.22            # every load cell steady this long: the hands are off
    min_quiet_samples: int = 4       # ... and at least this many samples per cell
    settle_samples: int = 4          # an HX711 reaches a step's value over about this many samples
    deviation_sigma: float = 5.0     # a sample this many σ from its channel's mean: something touches the arm
    spike_sigma: float = 8.0
    board_dwell_s: float = 0.3       # the arm must rest on (or off) the board this long, hands off
    min_fit_s: float = 0.25          # angle data needed after the hands left before a first guess
    min_fit_periods: float = 0.4     # ... and at least this much of a swing: over less, the rest is an extrapolation
    max_wait_s: float = 3.0          # then decide with what there is
    min_touch_s: float = 0.12        # a disturbance shorter than this is no hand at all
    remove_hold_s: float = 1.0       # a pawn taken off is often about to be put down elsewhere: wait for it
    gesture_gap_s: float = 1.0       # touches closer than this are one gesture (a move's lift and put-down)
    tip_deadline_s: float = 1.0      # a tip is reported with its change, or on its own after this long
    unexplained_s: float = 3.5       # settled but unexplained this long: report it and carry on from there
    eval_every_s: float = 0.1
    weight_window_s: float = 2.0     # weight averaged over at most this much settled signal
    angle_window_s: float = 8.0
    guard_s: float = 0.12            # signal this close before a disturbance may already carry the hand
    zero_band_g: float = 1.0         # zero tracking follows drift within this band only (a pawn is ≥ 6 g)
    zero_time_s: float = 20.0
    torque_band_gmm: float = 40.0
    decide_at: float = 0.999
    rel_weight: float = 0.003        # scale errors of the calibration (counts per gram, κ), as fractions
    rel_torque: float = 0.004
    resolution: Resolution = field(default_factory=Resolution)
    accel_noise_g: float = 0.003     # starting guesses, refined from the signal while settled
    cell_noise_counts: float = 120.0
    # accounts of the pawns kept after a change the sensors could not tell: the daemon's game names every move and
    # so narrows them at each turn; with no game (`companion analyze`) a look-alike change whose truth was the fifth
    # likeliest account was lost for good, and later changes were read against pawns that were not there
    max_beliefs: int = MAX_BELIEFS

    def __post_init__(self) -> None:
        # a follower's memory holds at most as many accounts as it keeps on the board (memory.py)
        if not 1 <= self.max_beliefs <= MAX_BELIEFS_ON_BOARD:
            raise ValueError(f"max_beliefs must be 1 to {MAX_BELIEFS_ON_BOARD}")


def _mass_key(pawns: Iterable[TrackedPawn]) -> tuple:
    """Which pawn is where: holders, sizes and (to the hundredth of a gram) masses."""
    return tuple(sorted((p.holder, p.size, round(p.mass_g, 2)) for p in pawns))


def _lighter(c: Candidate) -> bool:
    """Pawns came off (a removal, or a beat): perhaps only lifted, to be put down a moment later."""
    return len(c.removed) > len(c.added)
