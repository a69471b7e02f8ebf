"""ArmFollower: the follower as a whole — its state, the sample loop, and what it tells the page."""

from __future__ import annotations

import math
from collections import deque
from typing import Callable, Iterable, Sequence

from companion.games.balance_model import Model
from companion.sensing.calibration import ArmCalibration
from companion.sensing.drift import ZeroDrift
from companion.sensing.events import ArmEvent, Change
from companion.sensing.filters import NoiseEstimate, TiltDebouncer
from companion.sensing.inference import (Candidate, Measurement, TrackedPawn, enumerate_candidates, model_torque,
                                         nominal_pawns, rank)
from companion.sensing.height_fit import HeightFit
from companion.sensing.pause_swing import PauseScale
from companion.sensing.place_fit import PlaceFit
from companion.sensing.settling import Settling
from companion.sensing.touches import HandSpread, TouchCounts

from companion.sensing.follower.weighing import Weighing
from companion.sensing.follower.swinging import SwingReading
from companion.sensing.follower.touching import TouchReading
from companion.sensing.follower.judging import Judging
from companion.sensing.follower.learning import Learning
from companion.sensing.follower.settings import (ACCEL_AXES, BOARD_LEVELS, Belief, CANDIDATE_PARTS, CANDIDATE_SETS,
                                                 FollowerSettings, REMEMBERED_CHANGES, UNMEASURED_REL,
                                                 ZETA_UNMEASURED_REL)
from companion.sensing.follower.weighing import _Cell


class ArmFollower(Weighing, SwingReading, TouchReading, Judging, Learning):
    """Streaming inference of physical events on the arm (see the module docstring).

    follower = ArmFollower(model, calibration, pawns=[("E1", "L")])
    for t, sensor, value in rows:
        for event in follower.feed(t, sensor, value):
            ...                      # ArmEvent: .event, .size, .holder, …, .change for match_moves
    follower.set_occupancy(game_pawns)   # the game's word on what is on the arm
    follower.live()                      # weight, angle, torque, settled, on_board
    follower.mismatch(game_pawns)        # None, or "the board doesn't match — check holder E3"
    """

    def __init__(self, model: Model, calibration: ArmCalibration, *, settings: FollowerSettings | None = None,
                 pawns: Iterable[tuple[str, str]] = ()):
        self.model = model
        self.cal = calibration
        self.s = settings or FollowerSettings()
        self.geo = calibration.geometry(model)
        self.kappa = calibration.kappa_gmm       # the empty arm's; a loaded one's is _kappa_for
        self.height = calibration.pawn_height_mm
        # an arm whose holders nobody measured learns where they sit from the confirmed changes — and how high its
        # pawns sit with them when that was not measured either (place_fit.py); one whose holders were measured
        # learns the height alone
        self.place_fit = (PlaceFit(self.geo.x, self.geo.x_cov,
                                   None if calibration.height_measured else calibration.pawn_height_mm)
                          if self.geo.x_cov else None)
        self.height_fit = (None if calibration.height_measured or self.place_fit is not None
                           else HeightFit(calibration.pawn_height_mm))
        self._height_pending: tuple | None = None     # the change confirmed last, until the arm has rested after it
        self.s_max = math.sin(math.radians(calibration.theta_max_deg))
        self.axis = calibration.axis if calibration.accelerometer else None
        self.level = calibration.level_g
        self.swing_model = calibration.swing()
        # what the physics leaves out, learned from long swings: measured over predicted ω and ζ. Without a
        # measured swing (no calibration) the prior may be far off, so the learning may range wider.
        self.swing_scale = 1.0
        self.zeta_scale = 1.0
        self._scale_range = (0.7, 1.3) if calibration.swing_measured else (0.45, 2.2)
        # without a measured swing, how well ln(swing_scale) is known (a variance): wide at first, narrowed by each
        # long swing as an estimate is (a calibrated arm keeps its own narrower rule)
        self.swing_scale_var = None if calibration.swing_measured else UNMEASURED_REL ** 2
        # ... and of ln(zeta_scale), which the rest of a short look at the swing depends on as much
        self.zeta_scale_var = None if calibration.swing_measured else ZETA_UNMEASURED_REL ** 2
        # the arm's ω over the settled spell before the change being judged, and the variance of its log: None
        # when that spell showed none
        self.swing_before: tuple[float, float] | None = None
        self.cells = {c.name: _Cell(c.name, c.offset_counts, c.counts_per_gram,
                                    c.noise_counts if c.noise_counts else self.s.cell_noise_counts)
                      for c in calibration.cells}
        self._cell_list = list(self.cells.values())
        self.tilt = TiltDebouncer(calibration.tilt_debounce_s)
        self.accel_noise = NoiseEstimate(calibration.accel_noise_g or self.s.accel_noise_g, floor=1e-5, order=2,
                                         weight=0.005)
        self.angle: deque[tuple[float, float]] = deque()
        # the candidates of the pawn sets the accounts held lately (_candidates), for the arm's geometry as it was
        self._cands: dict[tuple[TrackedPawn, ...], list[Candidate]] = {}
        self._cand_parts: dict[tuple, Candidate] = {}       # ... and each candidate by what it depends on
        self._cands_geo = self.geo
        start = nominal_pawns(self.geo, pawns)
        self.beliefs: list[Belief] = [Belief(0.0, start, self._candidates(start))]
        self.mode = "waiting"          # waiting → settled ⇄ moving → deciding → settled
        self.t = -math.inf
        self.quiet_since = -math.inf
        self.t_off = -math.inf
        # (t_off, when the arm began to swing free before it): the swing the cells were still too slow to see begin
        self._swung: tuple[float, float] = (-math.inf, -math.inf)
        self._steady = None     # the last-look verdict while a change is judged, and since when it has stood
        self._alike_best = None  # (t_off, best) at the last look while a change is judged
        # the game's word on a change still being judged (ArmLink): whether it would apply a move for it now, at a
        # bar (the one this follower decides early at). A look-alike the sensors alone cannot yet settle is often
        # one the roll settles (an L moved 2 and an M moved 3 swing alike for a second), and the players are not
        # kept waiting for what the game already knows
        self.game_takes: Callable[[Change, float], bool] | None = None
        self.t_disturbed = -math.inf
        self.last_limit_t = -math.inf
        self.last_contact_t = -math.inf
        # recent runs of board contact (the switch closed, or the angle at the limit without one), to know when
        # the arm last swung free before a given moment
        self._contacts: deque[list[float]] = deque(maxlen=16)
        # the load cells' sum over the last seconds, for the hands' touches (touches.py), and those found for
        # the gesture being judged: (its start, how many looks, the touches)
        self._touch_cache: tuple[tuple[float, float], int, tuple] | None = None
        self.settling = Settling()         # how this table's load cells reach a step (settling.py)
        self.hands = HandSpread()          # where this table's touches are located, against the holders touched
        self.touch_counts = TouchCounts()  # how often the cells find a gesture in more touches than it made
        self.drift = ZeroDrift()           # how fast the cells' summed zero drifts (drift.py)
        self._drift_to = -math.inf         # the end of the last settled spell it learned from
        self._next_eval = -math.inf
        self.board_reported: int | None = None
        # the board as each look saw it, (t, (side, steady)): a change cut short by a hand is judged with the board
        # as it was before the hand, not as the last look saw it — the cells notice a hand 0.2-0.4 s after the
        # accelerometer and the switch, so that look may have seen the hand press the arm onto the board
        self._boards: deque[tuple[float, tuple[int, bool]]] = deque(maxlen=16)
        # the baseline: the settled state before the change being watched
        self.w0 = 0.0
        self.var_w0 = 0.0
        self.t_w0 = 0.0                    # the middle of the readings it was weighed from
        # (w, var, t) the arm weighed when the follower last held it empty: where an arm emptied comes back to
        self._empty_weight: tuple[float, float, float] | None = None
        # the game's word emptied accounts that held pawns (a new game with last game's pawns perhaps still on the
        # arm): what the arm weighs is not the empty arm's until the follower itself sees the accounts emptied
        self._emptied_by_word = False
        self.tau0 = 0.0
        self.var_tau0 = 0.0
        self.board0 = 0
        self.tau_settled: float | None = None
        self.var_tau_settled = math.inf
        self.zero_w = 0.0
        self.zero_t = 0.0
        self.w_display: float | None = None
        self.s_display: float | None = None
        # the recent ones: confirm_move replays those decided after the one it confirms. Each holds its
        # candidates and every belief before it, so a long history is the follower's largest memory use.
        self.changes: deque[Change] = deque(maxlen=REMEMBERED_CHANGES)
        self.weighed: dict[str, list[float]] = {}   # masses of the pawns weighed as they were placed
        self._weigh_pending: tuple | None = None      # the pawn placed last, to weigh again when settled
        self._w_before_change = (0.0, 0.0, 0.0)       # the weight before the last change decided, var, when
        # a move decided with touches placed before the cells had read enough after them, to learn the hands from
        # once they have (Learning._learn_hands)
        self._hands_pending: tuple | None = None
        # (gesture key, (ω, ζ), κ, τ0, sizes): the arm its touches were read against
        self._touch_frame: tuple | None = None
        # (when, the sin θ read resting on each board (+1, -1)) as the pauses of moves showed it, the latest few
        # (TouchReading._board_level), and the last pause read for its torques: ((gesture key, stretch), torques)
        self._board_levels: dict[int, deque[tuple[float, float]]] = {1: deque(maxlen=BOARD_LEVELS),
                                                                     -1: deque(maxlen=BOARD_LEVELS)}
        self._pause_cache: tuple | None = None
        self.pause_scale = PauseScale()    # how far those torques miss, against their fits' own σ
        self._new: list[ArmEvent] = []
        self.notice: str | None = None
        self.samples = 0
        self._accel_seen = False
        self._cells_ready = False

    # ------------------------------------------------------------------ input
    def feed(self, t: float, sensor: str, value: float) -> list[ArmEvent]:
        """One raw sample; returns the events decided at this moment (usually none)."""
        if t < self.t:
            raise ValueError(f"time went backwards: {t} after {self.t}")
        self.t = t
        self.samples += 1
        cell = self.cells.get(sensor)
        if cell is not None:
            self._load(t, cell, value)
        elif sensor == self.axis:
            self._accel(t, value)
        elif sensor == "tilt":
            closed = value >= 0.5
            if closed or self.tilt.raw:
                self.last_contact_t = t
                self._contact(t)
            self.tilt.feed(t, closed)
        elif sensor not in ACCEL_AXES:
            raise ValueError(f"unknown sensor {sensor!r} (known: {', '.join(self.sensor_names())})")
        if t >= self._next_eval:
            self._next_eval = t + self.s.eval_every_s
            self._tick(t)
        if self._new:
            out = self._new
            self._new = []
            return out
        return []

    def feed_many(self, rows: Iterable[tuple[float, str, float]]) -> list[ArmEvent]:
        out: list[ArmEvent] = []
        for t, sensor, value in rows:
            out.extend(self.feed(t, sensor, value))
        return out

    def sensor_names(self) -> list[str]:
        return list(self.cells) + list(ACCEL_AXES) + ["tilt"]

    @property
    def pawns(self) -> list[TrackedPawn]:
        """The likeliest account of the pawns on the arm."""
        return self.beliefs[0].pawns

    @property
    def occupancy(self) -> list[tuple[str, str]]:
        return [(p.holder, p.size) for p in self.pawns]

    def _pawn_mass(self) -> float:
        """Grams of pawns on the arm, by the likeliest account."""
        return sum(p.mass_g for p in self.pawns)

    def _kappa_for(self, mass_g: float | None = None) -> float:
        """κ_eff of the arm carrying `mass_g` grams of pawns (default: the likeliest account of those on it): pawns
        above the pivot make a loaded arm tilt further for the same torque."""
        if not self.height:
            return self.kappa
        return max(0.05 * self.kappa, self.kappa - self.height * (self._pawn_mass() if mass_g is None else mass_g))

    def _tip_torque_for(self, mass_g: float | None = None) -> float:
        """τ_tip of the arm carrying `mass_g` grams of pawns (default: the likeliest account of those on it)."""
        if not self.height:
            return self.geo.tip_torque
        return self._kappa_for(mass_g) * self.s_max

    def _candidates(self, pawns: Sequence[TrackedPawn]) -> list[Candidate]:
        """Every change one hand can make to `pawns` (enumerate_candidates), shared while the geometry stands: the
        game's confirmation rebuilds the very accounts the decision just made, and a change judged "nothing" keeps
        them — a tenth of a replay went to building the same candidates again."""
        if self._cands_geo is not self.geo or len(self._cand_parts) > CANDIDATE_PARTS:
            self._cands.clear()
            self._cand_parts.clear()
            self._cands_geo = self.geo
        key = tuple(pawns)
        got = self._cands.get(key)
        if got is None:
            got = self._cands[key] = enumerate_candidates(self.geo, key, self._cand_parts)
            if len(self._cands) > CANDIDATE_SETS:
                del self._cands[next(iter(self._cands))]
        return got

    def _tick(self, t: float) -> None:
        if self.mode == "deciding":
            self._evaluate(t)
        elif self.mode == "settled":
            self._settled_tick(t)

    # ------------------------------------------------------------------ for the page
    @property
    def settled(self) -> bool:
        return self.mode == "settled"

    def rest_torque(self) -> tuple[float, float, int] | None:
        """(τ g·mm, its σ, board side) of the settled arm now, tared and zero-tracked; None while it moves."""
        if self.mode != "settled":
            return None
        board, _ = self._board(self.t)
        if board:
            return board * self._tip_torque_for(), 0.0, board
        if not self._accel_seen:
            return None
        fit, _, _ = self._fit(self._free_since(), self.t)
        if fit is None:
            if self.tau_settled is None:
                return None
            return self.tau_settled - self.zero_t, math.sqrt(self.var_tau_settled), 0
        kappa = self._kappa_for()
        return kappa * fit.rest - self.zero_t, kappa * fit.rest_sigma, 0

    def live(self) -> dict:
        """Live values for the page: weight (g), angle (°), torque (g·mm), settled, on the board."""
        weight = None if self.w_display is None else self.w_display - self.zero_w
        angle = None if self.s_display is None else math.degrees(math.asin(max(-1.0, min(1.0, self.s_display))))
        rest = self.rest_torque() if self.mode == "settled" else None
        if rest is not None:
            torque = rest[0]
        elif self.s_display is not None:
            torque = self._kappa_for() * self.s_display - self.zero_t
        else:
            torque = None
        board, _ = self._board(self.t) if self.t > -math.inf else (0, False)
        return {
            "weight_g": None if weight is None else round(weight, 2),
            "angle_deg": None if angle is None else round(angle, 2),
            "torque_gmm": None if torque is None else round(torque, 0),
            "tip_torque_gmm": round(self._tip_torque_for(), 0),
            "settled": self.mode == "settled",
            "state": self.mode,
            "on_board": board != 0,
            "pawns": self.occupancy,
            "notice": self.notice,
            "glitches": {c.name: c.glitches + c.spike.dropped for c in self._cell_list},
        }

    def mismatch(self, expected_pawns: Iterable[tuple[str, str]], *, sigmas: float = 5.0) -> str | None:
        """None when the settled arm agrees with `expected_pawns` (a list of (holder, size)) within the noise,
        else a message for the players naming the holder most likely to be wrong. None also while the arm moves."""
        found = self.mismatch_report(expected_pawns, sigmas=sigmas)
        return None if found is None else found[0]

    def mismatch_report(self, expected_pawns: Iterable[tuple[str, str]], *,
                        sigmas: float = 5.0) -> tuple[str, str] | None:
        """As `mismatch`, with the sensors' figures behind it: (message, details)."""
        if self.mode != "settled" or self.w_display is None:
            return None
        expected = nominal_pawns(self.geo, expected_pawns)
        w, var_w, _ = self._window_weight()
        w -= self.zero_w
        exp_w = sum(p.mass_g for p in expected)
        var_w += sum(p.sigma_g ** 2 for p in expected) + self.s.zero_band_g ** 2 / 4
        rest = self.rest_torque()
        exp_t, var_t = model_torque(self.geo, expected)
        tip = self._tip_torque_for(sum(p.mass_g for p in expected))
        dw = w - exp_w
        off_w = dw * dw > sigmas ** 2 * var_w
        off_t = False
        if rest is not None:
            tau, sig, board = rest
            if board:
                off_t = board * exp_t < tip - 3 * self.geo.tip_sigma
            else:
                vt = sig ** 2 + var_t + self.s.torque_band_gmm ** 2 + (self.s.rel_torque * exp_t) ** 2
                off_t = (tau - exp_t) ** 2 > sigmas ** 2 * vt
        if not off_w and not off_t:
            return None
        # which single difference explains what the sensors see best?
        cands = self._candidates(expected)
        tau_meas = rest[0] if rest is not None else exp_t
        m = Measurement(dw, var_w, exp_t, var_t, tau_meas, (rest[1] ** 2 if rest else math.inf),
                        rest[2] if rest else 0, tip, self.geo.tip_sigma ** 2,
                        self.s.rel_weight, self.s.rel_torque)
        best = rank(cands, m)[0]
        c = best.candidate
        where = "resting on the board" if rest is not None and rest[2] else f"{tau_meas:+.0f} g·mm"
        details = (f"the arm carries {w:.1f} g, {where}; the game's pawns would give {exp_w:.1f} g and "
                   f"{exp_t:+.0f} g·mm")
        if c.kind == "none" or best.distance2 > 50:
            return "the arm doesn't match the game: check every pawn on it against the page", details
        if c.kind == "place":
            text = (f"the arm doesn't match the game: check holder {c.holder} (it seems to hold an extra "
                    f"{c.size} pawn)")
        elif c.kind == "remove":
            text = (f"the arm doesn't match the game: check holder {c.holder} (its {c.size} "
                    "pawn seems to be missing)")
        elif c.kind == "move":
            text = (f"the arm doesn't match the game: check holders {c.from_holder} and {c.to_holder} (the "
                    f"{c.size} pawn in {c.from_holder} seems to be in {c.to_holder})")
        else:
            holders = sorted({h for h, _ in c.removed + c.added})
            text = f"the arm doesn't match the game: check holders {_and(holders)}"
        return text, details


def _and(words: Sequence[str]) -> str:
    """'E6', 'E6 and E4', 'E6, E4 and W2'."""
    words = list(words)
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]
