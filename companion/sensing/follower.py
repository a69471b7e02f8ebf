"""Following the arm sample by sample: when the hands are off, what changed, and whether it tipped.

The follower is fed raw rows in time order — `feed(t, sensor, value)` with the
trace's sensor names — and decides physical events as the arm settles:

1. Load cells: known glitch values are dropped, single-sample spikes of any other
   value are dropped one sample late, counts become grams. What a cell dropped that
   the other cells show too (the top of a firm press at 10 SPS) goes back into the
   traces its gesture's touches are located from.
2. A sample far from its channel's recent mean means something touches the arm
   (a hand, a pawn): the state before is frozen as the baseline, and the follower
   waits until every channel has been steady again for `quiet_s`. That is the
   moment the hands are off: the weight is settled (HX711 settling included).
3. The angle is not settled then — the arm swings for many seconds — so its rest
   value is fitted from the swing (swing.py), as soon as a fraction of a period
   after the hands left. The swing's frequency and damping are predicted from the
   pawns on the arm (each adds m·x² to the moment of inertia of the calibrated empty
   arm) — for the change being judged, from the pawns its likeliest explanation
   leaves — and the prediction is corrected from long swings. Resting on the board,
   the angle only says |τ| ≥ τ_tip.
4. Every candidate change is scored against (ΔW, Δτ) (inference.py); the follower
   decides as soon as the best, with those it can never be told from, is sure
   enough, or after `max_wait_s` at the latest — then says whether it is ambiguous.
5. Tip and un-tip are judged at the same moment, with the hands off: the tilt
   switch (debounced) must have held for `board_dwell_s` and the angle must agree.
   A hand pressing the arm onto the board while placing is therefore not a tip.

Slow drift of the zero is tracked only while the arm is settled and unchanged, so
the live weight and the board check stay honest over a long game; its rate, learned
from the settled spells (drift.py), is taken off every weight change judged.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping, Sequence

from companion.games.balance_model import Model
from companion.sensing.calibration import ArmCalibration
from companion.sensing.drift import MIN_SPELL_S, ZeroDrift, spell_slope
from companion.sensing.events import TOP_CANDIDATES, ArmEvent, Change
from companion.sensing.filters import NoiseEstimate, SpikeFilter, TiltDebouncer, is_glitch, shared_runs
from companion.sensing.inference import (Candidate, Measurement, Resolution, TrackedPawn, apply_candidate,
                                         enumerate_candidates, inertia_of, judge, log_likelihood, model_torque,
                                         move_candidates, nominal_pawns, rank, rank_beliefs, touches_for)
from companion.sensing.swing import SwingPredictor, fan_fit, fit_swing, refine_swing
from companion.sensing.settling import Gesture, Settling, sharpened
from companion.sensing.touches import HandSpread, combined, split

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

ACCEL_AXES = ("ax", "ay", "az")
MAX_BELIEFS = 4
MAX_BELIEFS_ON_BOARD = 24   # resting on the board, which pawn was taken off stays open until it lifts
KEEP_BELIEF = 1e-3
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


def _mass_key(pawns: Iterable[TrackedPawn]) -> tuple:
    """Which pawn is where: holders, sizes and (to the hundredth of a gram) masses."""
    return tuple(sorted((p.holder, p.size, round(p.mass_g, 2)) for p in pawns))


def _lighter(c: Candidate) -> bool:
    """Pawns came off (a removal, or a beat): perhaps only lifted, to be put down a moment later."""
    return len(c.removed) > len(c.added)


class _Cell:
    __slots__ = ("name", "offset", "cpg", "spike", "noise", "win", "wsum", "last_t", "dt", "glitches", "latest",
                 "trace")

    def __init__(self, name: str, offset: float, cpg: float, noise: float):
        self.name = name
        self.offset = offset
        self.cpg = cpg
        self.spike = SpikeFilter()
        self.noise = NoiseEstimate(noise, floor=0.5)
        self.win: deque[tuple[float, float]] = deque()
        self.wsum = 0.0
        self.last_t: float | None = None
        self.dt = 0.05
        self.glitches = 0
        self.latest: float | None = None
        self.trace: deque[tuple[float, float]] = deque(maxlen=1024)    # (t, g) for locating the hands' touches

    def clear(self) -> None:
        self.win.clear()
        self.wsum = 0.0

    def sigma_g(self) -> float:
        return self.noise.sigma / abs(self.cpg)


class ArmFollower:
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
        self.kappa = calibration.kappa_gmm
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
        self.cells = {c.name: _Cell(c.name, c.offset_counts, c.counts_per_gram,
                                    c.noise_counts if c.noise_counts else self.s.cell_noise_counts)
                      for c in calibration.cells}
        self._cell_list = list(self.cells.values())
        self.tilt = TiltDebouncer(calibration.tilt_debounce_s)
        self.accel_noise = NoiseEstimate(calibration.accel_noise_g or self.s.accel_noise_g, floor=1e-5, order=2,
                                         weight=0.005)
        self.angle: deque[tuple[float, float]] = deque()
        start = nominal_pawns(self.geo, pawns)
        self.beliefs: list[Belief] = [Belief(0.0, start, enumerate_candidates(self.geo, start))]
        self.mode = "waiting"          # waiting → settled ⇄ moving → deciding → settled
        self.t = -math.inf
        self.quiet_since = -math.inf
        self.t_off = -math.inf
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
        self.drift = ZeroDrift()           # how fast the cells' summed zero drifts (drift.py)
        self._drift_to = -math.inf         # the end of the last settled spell it learned from
        self._next_eval = -math.inf
        self.board_reported: int | None = None
        self._last_board: tuple[int, bool] = (0, False)
        # the baseline: the settled state before the change being watched
        self.w0 = 0.0
        self.var_w0 = 0.0
        self.t_w0 = 0.0                    # the middle of the readings it was weighed from
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

    def set_occupancy(self, pawns: Iterable[tuple[str, str]]) -> None:
        """The game's word on what is on the arm. Pawns already tracked keep their weighed mass; a pawn
        the follower placed elsewhere is one of the pawns weighed so far, so it gets their mean and spread. When
        the game says what the follower already holds (the page's next roll after a move the sensors saw), every
        account of which like pawn is where stays open: only their masses can tell them apart, later."""
        wanted = nominal_pawns(self.geo, pawns)
        key = sorted((p.holder, p.size) for p in wanted)
        same = [b for b in self.beliefs if sorted((p.holder, p.size) for p in b.pawns) == key]
        if same:
            top = max(b.log_weight for b in same)
            for b in same:
                b.log_weight -= top
            self.beliefs = sorted(same, key=lambda b: -b.log_weight)
            if self.board0:
                self.tau0, self.var_tau0 = model_torque(self.geo, self.pawns)
            return
        pool = list(self.pawns)
        out = []
        for p in wanted:
            for i, q in enumerate(pool):
                if q.holder == p.holder and q.size == p.size:
                    out.append(pool.pop(i))
                    break
            else:
                out.append(self._unknown_pawn(p.holder, p.size))
        self.beliefs = [Belief(0.0, out, enumerate_candidates(self.geo, out))]
        self._weigh_pending = None
        if self.board0:
            self.tau0, self.var_tau0 = model_torque(self.geo, out)

    def remeasure(self, change: Change) -> Change | None:
        """The latest change measured again over the whole quiet spell since it was decided — its swing then
        says more of the frequency, which tells apart moves of like pawns that change the weight and torque alike
        but the moment of inertia not. None once a hand has come since, or for another change."""
        if self.mode != "settled" or not self.changes or self.changes[-1] is not change or self.board0:
            return None
        m0 = change.measurement
        if m0.censored1 or m0.fan is None:
            return None
        t = self.t
        fit, ts, ss = self._fit(self._free_since(), t)
        if fit is None:
            return None
        loads = []
        for s in change.ranked:
            if s.hypothesis < len(change.beliefs_before):
                loads.append(inertia_of(self.geo, change.beliefs_before[s.hypothesis][1]) + s.candidate.d_inertia)
        if not loads:
            return None
        made = self._fan(ts, ss, loads=loads)
        if made is None:
            return None
        fan, best = made
        w1, var1, t1 = self._window_weight(t, settled_from=self.t_off)
        dw, var_dw, drift = self._weight_change(self._w_before_change, (w1, var1, t1))
        m = replace(m0, tau1=self.kappa * best.rest, var_tau1=(self.kappa * best.rest_sigma) ** 2, fan=fan,
                    swing=self._predictor())
        if var_dw < m0.var_dw:
            m = replace(m, dw=dw, var_dw=var_dw, drift=drift)
        return replace(change, measurement=m)

    def confirm_move(self, move: Mapping[str, Any], change: Change | None = None) -> None:
        """The game applied `move` (a dict like match_moves takes) for `change` (default: the latest).

        The pawns on the arm become that change's "before" with the move made — every pawn keeping
        the mass it was weighed at, which (holder, size) pairs alone cannot carry — and any change
        decided since is made again on top. Call it once the game has settled what the change was.
        """
        decided = [c for c in self.changes if c.best is not None]
        if change is None:
            if not decided:
                raise ValueError("no change has been decided yet to confirm a move for")
            change = decided[-1]
        later = False
        replay: list[Change] = []
        for c in self.changes:
            if c is change:
                later = True
            elif later and c.best is not None:
                replay.append(c)
        if not later:
            raise ValueError("that change is no longer remembered; use set_occupancy")
        # which of two look-alike pawns it was, only their masses can say (and an earlier change may have
        # left that open too): every belief held before, with every way the move can be made in it,
        # weighted by how well it fits — later changes settle what this one cannot
        m = change.measurement
        options = []
        for logw, before in (change.beliefs_before or ((0.0, change.before),)):
            pool, cands = move_candidates(self.geo, list(before), move)
            if len(pool) > len(before) or not self._fits(pool, cands):
                continue  # in this account the move is impossible (its pawn is elsewhere, its holder full)
            load = inertia_of(self.geo, pool)
            for c in cands:
                ll = log_likelihood(c, m, 0.0, load)[0]
                options.append((logw + ll, ll, pool, c))
        if not options:
            raise ValueError(f"the arm as sensed cannot have made that move ({move}); tell the follower the "
                             "game's pawns with set_occupancy")
        options.sort(key=lambda e: -e[0])
        top = options[0][0]
        best = options[0][3]
        self._learn_hands(best, m)
        merged: dict[tuple, list] = {}
        for score, ll, pool, c in options:
            w = math.exp(max(-700.0, score - top))
            if w < KEEP_BELIEF:
                break
            pawns = apply_candidate(self.geo, pool, c, placed_mass=self._placed_mass(c, m))
            for later_change in replay:
                pawns = self._replay(pawns, later_change)
            key = _mass_key(pawns)
            if key in merged:
                merged[key][0] += w
            else:
                merged[key] = [w, pawns, c, ll]
        ordered = sorted(merged.values(), key=lambda e: -e[0])[:MAX_BELIEFS]
        self._weigh_pending = None
        refine = not replay and not m.censored1 and self.mode != "deciding"
        self.beliefs = [Belief(math.log(w / ordered[0][0]), pawns, enumerate_candidates(self.geo, pawns),
                               c if refine else None, ll, m if refine else None)
                        for w, pawns, c, ll in ordered]
        if self.board0:
            self.tau0, self.var_tau0 = model_torque(self.geo, self.pawns)

    def learn_from(self, change: Change) -> None:
        """Learn the hands and the cells' settling from a change as from a confirmed move — for a follower with no
        game to confirm its moves (`companion analyze`), from the changes that no other account explains."""
        if change.best is not None and not change.ambiguous:
            self._learn_hands(change.best, change.measurement)

    def _learn_hands(self, best: Candidate, m: Measurement) -> None:
        """Where the hands touched for `best`: the hands' gain and spread learn from it, and every shape of settling
        places its touches; the best-placing shape is used from then on."""
        self.hands.learn(touches_for(best, m), best.touch_x)
        self._drift_from_move(best, m)
        g = m.gesture
        if g is None or not best.touch_x:
            return
        lifted = None
        if len(best.touch_x) == 2 and m.touches_by_size and best.size in m.touches_by_size:
            lifted = self.geo.mass[best.size]
        # (on a change of shape the hands keep what they learned: their touches are located from the force worked
        # back through the taps, near enough alike through neighbouring shapes, and the oldest soon give way)
        fits: list = []
        located = g.locate_family(lifted_g=lifted, fits=fits)
        self.settling.learn(best.touch_x, located, fits)

    def _drift_from_move(self, best: Candidate, m: Measurement) -> None:
        """A move leaves the weight as it was, so all its windows' difference is the zero's drift over the time
        between them: a look at the rate, and (with the drift taken off) a miss that says how far the zero wanders
        besides."""
        if len(m.drift) != 4 or best.kind != "move" or m.censored1:
            return
        shift, var_shift, span, wander = m.drift
        if span < MIN_SPELL_S:
            return
        var = m.var_dw - var_shift
        if var > 0:
            self.drift.look((m.dw + shift) / span, var / span ** 2)
            self.drift.miss(m.dw, m.var_dw - wander, span)

    def _fits(self, pool: Sequence[TrackedPawn], cands: Sequence[Candidate]) -> bool:
        """Whether the move's changes leave every holder within its capacity."""
        for c in cands:
            count: dict[str, int] = {}
            for p in apply_candidate(self.geo, pool, c):
                count[p.holder] = count.get(p.holder, 0) + 1
            if all(n <= self.geo.capacity[h] for h, n in count.items()):
                return True
        return False

    def _replay(self, pawns: list[TrackedPawn], c: Change) -> list[TrackedPawn]:
        """`pawns` with the net effect of a later change, moved pawns keeping their mass."""
        out = list(pawns)
        lifted: dict[str, list[TrackedPawn]] = {}
        for h, s in c.best.removed:
            for i, p in enumerate(out):
                if p.holder == h and p.size == s:
                    lifted.setdefault(s, []).append(out.pop(i))
                    break
        for h, s in c.best.added:
            if lifted.get(s):
                p = lifted[s].pop(0)
                out.append(TrackedPawn(h, s, p.mass_g, p.sigma_g))
            else:
                placed = self._placed_mass(c.best, c.measurement) if c.best.kind == "place" else None
                out.append(TrackedPawn(h, s, *placed) if placed else self._unknown_pawn(h, s))
        return out

    def _unknown_pawn(self, holder: str, size: str) -> TrackedPawn:
        seen = self.weighed.get(size, [])
        if len(seen) < 3:
            return TrackedPawn(holder, size, self.geo.mass[size], self.geo.mass_sigma[size])
        mean = sum(seen) / len(seen)
        spread = math.sqrt(sum((m - mean) ** 2 for m in seen) / (len(seen) - 1))
        return TrackedPawn(holder, size, mean, max(spread, 0.02, self.s.rel_weight * mean))

    @property
    def pawns(self) -> list[TrackedPawn]:
        """The likeliest account of the pawns on the arm."""
        return self.beliefs[0].pawns

    @property
    def occupancy(self) -> list[tuple[str, str]]:
        return [(p.holder, p.size) for p in self.pawns]

    # ------------------------------------------------------------------ load cells
    def _load(self, t: float, cell: _Cell, raw: float) -> None:
        if is_glitch(raw):
            cell.glitches += 1
            return
        for ts, v in cell.spike.push(t, raw, self.s.spike_sigma * cell.noise.sigma):
            self._cell_sample(cell, ts, v)

    def _cell_sample(self, cell: _Cell, ts: float, v: float) -> None:
        if cell.last_t is not None:
            cell.dt += 0.05 * (min(1.0, ts - cell.last_t) - cell.dt)
        cell.last_t = ts
        g = (v - cell.offset) / cell.cpg
        cell.latest = g
        if self._cells_ready or all(c.latest is not None for c in self._cell_list):
            self._cells_ready = True
            cell.trace.append((ts, g))
        mode = self.mode
        win = cell.win
        n = len(win)
        if n:
            mean = cell.wsum / n
            sig = cell.noise.sigma / abs(cell.cpg)
            if abs(g - mean) > self.s.deviation_sigma * sig * math.sqrt(1.0 + 1.0 / n):
                self._disturbed(ts)
                n = 0
                mode = self.mode
        if mode == "settled":
            cell.noise.update(v)
        win.append((ts, g))
        cell.wsum += g
        if mode == "settled" or mode == "deciding":
            horizon = ts - self.s.weight_window_s
            while win[0][0] < horizon:
                cell.wsum -= win.popleft()[1]
        elif ts - self.quiet_since >= self.s.quiet_s:
            self._maybe_quiet(ts)
        if self.w_display is None:
            self.w_display = self._weight_now()
        else:
            self.w_display += 0.1 * (self._weight_now() - self.w_display)

    def _weight_now(self) -> float:
        return sum(c.latest for c in self._cell_list if c.latest is not None)

    def _alive(self, now: float) -> list[_Cell]:
        return [c for c in self._cell_list if c.last_t is not None and now - c.last_t < 1.0]

    def _maybe_quiet(self, now: float) -> None:
        alive = self._alive(now)
        if not alive or len(alive) < len(self._cell_list) and self.mode == "waiting":
            return
        if any(len(c.win) < self.s.min_quiet_samples for c in alive):
            return
        if self.mode == "moving" and self.quiet_since - self.t_disturbed < self.s.min_touch_s \
                and self.t_disturbed > self.t_off:
            # over in a blink: a pair of glitches, a knock on the table — no hand changes a pawn that fast
            self.mode = "settled"
            return
        self.t_off = self.quiet_since
        if self.mode == "waiting":
            self.mode = "settled"
            self.tau_settled = None
        else:
            self.mode = "deciding"
            self._next_eval = now

    def _disturbed(self, ts: float) -> None:
        if self.mode == "deciding":
            # a hand again: the quiet spell before it was a settled state, so judge it with what it gave
            self._decide_interrupted(ts)
        if self.mode == "settled":
            self._freeze_baseline(ts)
            self.mode = "moving"
            self.t_disturbed = ts
        elif self.mode == "deciding":
            self.mode = "moving"
        for c in self._cell_list:
            c.clear()
            c.noise.restart()
        self.quiet_since = ts

    # ------------------------------------------------------------------ accelerometer
    def _accel(self, t: float, a: float) -> None:
        s = a - self.level
        if not -1.2 < s < 1.2:
            return  # not a reading of this arm's tilt; an I2C read gone wrong
        self._accel_seen = True
        ang = self.angle
        ang.append((t, s))
        if ang[0][0] < t - self.s.angle_window_s:
            ang.popleft()
        if self.mode == "settled":
            self.accel_noise.update(s)
        if self.s_display is None:
            self.s_display = s
        else:
            self.s_display += 0.2 * (s - self.s_display)
        if abs(s) >= self.s_max - self._limit_margin():
            self.last_limit_t = t
            if not self.tilt.seen:
                self._contact(t)
        if self.tilt.raw:
            self.last_contact_t = t
            self._contact(t)

    def _limit_margin(self) -> float:
        return max(3.0 * self.accel_noise.sigma, 0.03 * self.s_max)

    def _contact(self, t: float) -> None:
        runs = self._contacts
        if runs and t - runs[-1][1] <= 0.05:
            runs[-1][1] = t
        else:
            runs.append([t, t])

    def _free_since(self, before: float | None = None) -> float:
        """Since when the arm has swung free of the board: the tilt switch says exactly when it let go;
        without one, the last reading near the limit angle does (less sharply). With `before`, as it was
        then: a hand that has just pressed the arm onto the board does not cut short the swing before it."""
        last = self.last_contact_t if self.tilt.seen else self.last_limit_t
        if before is not None and last > before:
            last = -math.inf
            for start, end in self._contacts:
                if start <= before:
                    last = max(last, min(end, before))
        return max(self.t_off, last + 0.02)

    def _swing(self, pawns: Sequence[TrackedPawn] | None = None) -> tuple[float, float]:
        """(ω, ζ) of the arm carrying `pawns` (default: the likeliest account of those on it now)."""
        x = self.geo.x
        load = sum(p.mass_g * x[p.holder] ** 2 for p in (self.pawns if pawns is None else pawns))
        omega, zeta = self.swing_model.at(load)
        return omega * self.swing_scale, min(0.95, zeta * self.zeta_scale)

    def _fit(self, start: float, end: float, *, learn: bool = False, pawns: Sequence[TrackedPawn] | None = None):
        got = self._angle_between(start, end)
        ts, ss = [t for t, _ in got], [s for _, s in got]
        if not ts or ts[-1] - ts[0] < 0.05:
            return None, ts, ss
        noise = self.accel_noise.sigma
        omega, zeta = self._swing(pawns)
        fit = fit_swing(ts, ss, omega, zeta, noise=noise)
        if fit is not None and fit.rms > 1.5 * noise and len(ts) >= 30:
            # a bounce off the board shorter than the switch's poll restarts the swing there:
            # fit again from after the last reading that came near the limit
            near = self.s_max - 4.0 * noise
            last = max((i for i, v in enumerate(ss) if abs(v) >= near), default=None)
            if last is not None and len(ts) - last > 20:
                retry = fit_swing(ts[last + 2:], ss[last + 2:], omega, zeta, noise=noise)
                if retry is not None and retry.rms < fit.rms:
                    ts, ss, fit = ts[last + 2:], ss[last + 2:], retry
        if fit is not None and fit.amplitude >= 10.0 * noise:
            # a big swing that reached the board itself, quicker than the tilt switch's debounce, stopped there
            # (a rest fitted across such a graze came out 170 g·mm off): the free swing is what came after it. An
            # arm resting near the board is not swinging, and its readings there are noise, so this needs both
            at_board = self.s_max - noise
            last = max((i for i, v in enumerate(ss) if abs(v) >= at_board), default=None)
            if last is not None:
                if len(ts) - last <= 20:
                    return None, ts, ss      # too little swing since: wait for more
                retry = fit_swing(ts[last + 2:], ss[last + 2:], omega, zeta, noise=noise)
                if retry is None:
                    return None, ts, ss
                ts, ss, fit = ts[last + 2:], ss[last + 2:], retry
        if (learn and fit is not None and ts[-1] - ts[0] >= 2.0 * (2 * math.pi / omega)
                and fit.amplitude > 20 * noise):
            # learn what the prediction misses — but only from two periods or more: over a fraction of
            # one, frequency and rest angle trade off freely
            lo, hi = self._scale_range
            span = 0.15 if self._scale_range[1] < 1.5 else 0.5
            better = refine_swing(ts, ss, omega, zeta, noise=noise, span=span)
            if better is not None and better.rms < 0.95 * fit.rms:
                base_w, base_z = omega / self.swing_scale, zeta / self.zeta_scale
                if self.swing_scale_var is not None:
                    self._learn_scale(better.omega / base_w)
                else:
                    self.swing_scale = min(hi, max(lo, self.swing_scale + 0.3 * (better.omega / base_w
                                                                                 - self.swing_scale)))
                if base_z > 1e-6:
                    z_scale = min(3.0, max(0.3, better.zeta / base_z))
                    self.zeta_scale += 0.3 * (z_scale - self.zeta_scale)
                fit = better
        return fit, ts, ss

    def _learn_scale(self, measured: float) -> None:
        """An unmeasured arm's ω scale, updated from one long swing as an estimate: the first swing counts for
        nearly all against the wide prior, later ones for less as the scale grows sure."""
        lo, hi = self._scale_range
        var = self.swing_scale_var
        gain = var / (var + LEARNED_REL ** 2)
        ln = math.log(self.swing_scale) + gain * (math.log(min(hi, max(lo, measured))) - math.log(self.swing_scale))
        self.swing_scale = min(hi, max(lo, math.exp(ln)))
        # the loading model's own error stays (a little process noise), so the scale keeps following the arm
        self.swing_scale_var = (1 - gain) * var + (0.3 * LEARNED_REL) ** 2

    def _angle_between(self, start: float, end: float) -> list[tuple[float, float]]:
        """The (t, sin θ) readings from `start` to `end`, oldest first (read from the newest back)."""
        out = []
        for e in reversed(self.angle):
            if e[0] < start:
                break
            if e[0] <= end:
                out.append(e)
        out.reverse()
        return out

    # ------------------------------------------------------------------ the board
    def _board(self, t: float) -> tuple[int, bool]:
        """(side the arm rests on: +1, -1 or 0 for free, whether that has held for the dwell time)."""
        dwell = self.s.board_dwell_s
        recent = [s for _, s in self._angle_between(t - 0.1, math.inf)]
        mean = sum(recent) / len(recent) if recent else 0.0
        at_limit = abs(mean) >= 0.7 * self.s_max
        if self.tilt.seen:
            closed = self.tilt.at(t)
            steady = self.tilt.steady_for(t) >= dwell
            if closed and (at_limit or not self._accel_seen):
                side = 1 if mean >= 0 else -1
                return side, steady
            if closed:
                self.notice = "the tilt switch is closed but the accelerometer says the arm is off the board"
            return 0, steady
        if not self._accel_seen:
            return 0, True
        window = [s for _, s in self._angle_between(t - dwell, math.inf)]
        lim = self.s_max - self._limit_margin()
        if window and all(abs(s) >= lim for s in window) and self.angle[0][0] <= t - dwell:
            return (1 if mean >= 0 else -1), True
        return 0, t - self.last_limit_t >= dwell

    # ------------------------------------------------------------------ baseline and evaluation
    def _window_weight(self, before: float | None = None, *,
                       settled_from: float | None = None) -> tuple[float, float, float]:
        """Σ of the cells' window means (g), its variance, and the middle of the readings' times; `before` leaves
        out the newest signal, `settled_from` the first samples after a step, which still carry the HX711's
        settling tail."""
        w = var = 0.0
        times: list[float] = []
        tail = self._settle_tail()
        end = math.inf if before is None else before
        for c in self._cell_list:
            if settled_from is not None:
                start = settled_from + tail * c.dt
                vals = [e for e in c.win if start <= e[0] < end]
                if len(vals) < 3:
                    vals = [e for e in c.win if e[0] < end][-3:]
            else:
                vals = [e for e in c.win if e[0] < end]
            if len(vals) < 2:
                vals = list(c.win)
            if not vals:
                if c.latest is None or c.last_t is None:
                    continue
                vals = [(c.last_t, c.latest)]
            w += sum(g for _, g in vals) / len(vals)
            var += c.sigma_g() ** 2 / len(vals)
            times.append(sum(tt for tt, _ in vals) / len(vals))
        return w, var, (sum(times) / len(times) if times else self.t)

    def _settle_tail(self) -> int:
        return max(self.s.settle_samples, len(self.settling.taps)) - 1

    def _weight_change(self, before: tuple[float, float, float],
                       after: tuple[float, float, float]) -> tuple[float, float, tuple[float, float, float, float]]:
        """The weight change between two windows (w, var, t), with the zero's drift between them taken off, its
        variance, and (the drift, its variance, the time between the windows, the zero's wander in that variance)."""
        shift, var_shift, wander = self.drift.between(before[2], after[2])
        return (after[0] - before[0] - shift, after[1] + before[1] + var_shift,
                (shift, var_shift, after[2] - before[2], wander))

    def _learn_drift(self, cut: float) -> None:
        """The settled spell that ends at `cut` (from the hands leaving, less the cells' settling): a look at the
        zero's drift rate. Each spell counts once, however often the hands came and went in a blink."""
        tail = self._settle_tail()
        dt = max((c.dt for c in self._cell_list), default=0.0)
        start = max(self.t_off + tail * dt, self._drift_to)
        self._drift_to = max(self._drift_to, cut)
        found = spell_slope(((c.trace, c.sigma_g()) for c in self._cell_list), start, cut)
        if found is not None:
            self.drift.look(*found)

    def _freeze_baseline(self, ts: float) -> None:
        cut = ts - max(self.s.guard_s, 2 * max((c.dt for c in self._cell_list), default=0.0))
        self._learn_drift(cut)
        self.w0, self.var_w0, self.t_w0 = self._window_weight(cut)
        if self._weigh_pending is not None:
            self._reweigh(*self._weigh_pending)
        # where the arm rested before the hand came: by the time a slow load cell notices a hand, it may
        # already have pressed the arm onto the board
        board = self.board_reported if self.board_reported is not None else self._board(cut)[0]
        self.board0 = board
        if board:
            self.tau0, self.var_tau0 = model_torque(self.geo, self.pawns)
        else:
            fit, ts, ss = self._fit(self._free_since(cut), cut, learn=True)
            if fit is not None and fit.n >= 20:
                self.tau0 = self.kappa * fit.rest
                self.var_tau0 = (self.kappa * fit.rest_sigma) ** 2
                self._track_torque_zero(self.tau0, self.var_tau0)
                long = None
                if any(b.via is not None for b in self.beliefs):
                    # each account judged at its own swing, over the whole settled spell
                    long = self._fan(ts, ss, loads=[inertia_of(self.geo, b.pawns) for b in self.beliefs])
                self._reweigh_beliefs(self.tau0, self.var_tau0, long)
            elif self.tau_settled is not None:
                self.tau0, self.var_tau0 = self.tau_settled, self.var_tau_settled
            else:
                self.tau0, self.var_tau0 = self._no_angle()

    def _reweigh_beliefs(self, tau: float, var_tau: float, long=None) -> None:
        """The arm has rested since the last change: judge that change again with the whole settled spell
        (a few g·mm instead of the ten or so a quick decision had), and re-weigh the beliefs it left.
        `long` is (SwingFan, best fit) of that spell, across the accounts' own swings."""
        changed = False
        for b in self.beliefs:
            m = b.via_measurement
            if b.via is None or m is None:
                continue
            better = m
            if long is not None and long[1].rest_sigma * self.kappa < math.sqrt(m.var_tau1):
                better = replace(m, tau1=self.kappa * long[1].rest, var_tau1=(self.kappa * long[1].rest_sigma) ** 2,
                                 fan=long[0], swing=self._predictor())
            elif var_tau < m.var_tau1:
                better = replace(m, tau1=tau, var_tau1=var_tau, fan=None)
            dw, var_dw, drift = self._weight_change(self._w_before_change, (self.w0, self.var_w0, self.t_w0))
            if var_dw < m.var_dw:
                better = replace(better, dw=dw, var_dw=var_dw, drift=drift)
            load = inertia_of(self.geo, b.pawns) - b.via.d_inertia
            ll = log_likelihood(b.via, better, 0.0, load)[0]
            b.log_weight += ll - b.via_ll
            b.via = b.via_measurement = None
            changed = True
        if changed and len(self.beliefs) > 1:
            top = max(b.log_weight for b in self.beliefs)
            kept = [b for b in self.beliefs if b.log_weight - top > math.log(KEEP_BELIEF)]
            kept.sort(key=lambda b: -b.log_weight)
            for b in kept:
                b.log_weight -= top
            self.beliefs = kept

    def _reweigh(self, before: tuple[float, float, float], holder: str, size: str, first: float) -> None:
        """Weigh the pawn placed last again, over the whole settled spell since (not just the moment of
        the decision): its mass is what tells it from its neighbours when it moves later."""
        self._weigh_pending = None
        nominal, sig = self.geo.mass[size], self.geo.mass_sigma[size]
        dw, var, _ = self._weight_change(before, (self.w0, self.var_w0, self.t_w0))
        if sig <= 0 or var <= 0:
            return
        wm, wv = 1.0 / sig ** 2, 1.0 / var
        mass = (nominal * wm + dw * wv) / (wm + wv)
        sigma = math.sqrt(1.0 / (wm + wv))
        for b in self.beliefs:
            for i, p in enumerate(b.pawns):
                if p.holder == holder and p.size == size and p.mass_g == first:
                    b.pawns[i] = TrackedPawn(holder, size, mass, sigma)
                    b.candidates = enumerate_candidates(self.geo, b.pawns)
                    break
        seen = self.weighed.get(size)
        if seen and seen[-1] == first:
            seen[-1] = mass

    def _no_angle(self) -> tuple[float, float]:
        if not self._accel_seen:
            return 0.0, math.inf
        recent = [s for _, s in list(self.angle)[-50:]]
        if not recent:
            return 0.0, math.inf
        # no clean swing to fit: take the mean, with the swing's size as its uncertainty
        mean = sum(recent) / len(recent)
        spread = max(abs(s - mean) for s in recent)
        return self.kappa * mean, (self.kappa * max(spread, 3 * self.accel_noise.sigma)) ** 2

    def _tick(self, t: float) -> None:
        if self.mode == "deciding":
            self._evaluate(t)
        elif self.mode == "settled":
            self._settled_tick(t)

    def _settled_tick(self, t: float) -> None:
        board, ready = self._board(t)
        if self.board_reported is None:
            if ready:
                self.board_reported = board
        elif ready and board != self.board_reported:
            self._report_board(t, board)
        # zero tracking: only a settled, unchanged arm, and only drift-sized differences
        # (every settled reading in the window: the running sums say it without a pass over them, ten times a second)
        w = sum(c.wsum / len(c.win) if c.win else c.latest or 0.0 for c in self._cell_list)
        expected = sum(p.mass_g for p in self.pawns)
        r = w - expected - self.zero_w
        if abs(r) < self.s.zero_band_g:
            self.zero_w += r * min(1.0, self.s.eval_every_s / self.s.zero_time_s)

    def _track_torque_zero(self, tau: float, var: float) -> None:
        expected, evar = model_torque(self.geo, self.pawns)
        r = tau - expected - self.zero_t
        if abs(r) < max(self.s.torque_band_gmm, 3 * math.sqrt(var + evar)):
            self.zero_t += 0.1 * r

    def _report_board(self, t: float, board: int) -> None:
        previous = self.board_reported or 0
        self.board_reported = board
        conf = 1.0 if self.tilt.seen else 0.95
        if previous == 0 and board != 0:
            self._emit([ArmEvent(t, "tip", confidence=conf)])
        elif previous != 0 and board == 0:
            self._emit([ArmEvent(t, "untip", confidence=conf)])
        else:
            self._emit([ArmEvent(t, "untip", confidence=conf), ArmEvent(t, "tip", confidence=conf)])

    def _emit(self, events: Sequence[ArmEvent]) -> None:
        self._new.extend(events)

    def _measure_after(self, t: float, final: bool, *, board_state: tuple[int, bool] | None = None,
                       pawns: Sequence[TrackedPawn] | None = None) -> tuple[Measurement | None, int]:
        board, ready = board_state or self._board(t)
        if not ready and not final:
            return None, board
        fan = pred = None
        after = self._window_weight(t, settled_from=self.quiet_since)
        w1 = after[0]
        dw, var_dw, drift = self._weight_change((self.w0, self.var_w0, self.t_w0), after)
        if board:
            tau1, var_tau1 = board * self.geo.tip_torque, 0.0
        elif not self._accel_seen:
            tau1, var_tau1 = 0.0, math.inf
        else:
            start = self._free_since()
            period = 2 * math.pi / self._swing()[0]
            periods = self.s.min_fit_periods
            if self.swing_scale_var is not None and math.sqrt(self.swing_scale_var) > WIDE_REL:
                # an arm whose swing nobody measured: over less than a period its rest is an extrapolation that
                # rests on a frequency and a damping it may not have; a whole period of the slowest it may
                # plausibly have shows them (UNMEASURED_PERIODS)
                period *= math.exp(math.sqrt(self.swing_scale_var))
                periods = max(periods, UNMEASURED_PERIODS)
            if t - start < max(self.s.min_fit_s, periods * period) and not final:
                return None, board
            fit, ts, ss = self._fit(start, t, pawns=pawns)
            if fit is not None:
                made = self._fan(ts, ss)
                if made is not None:
                    fan, fit = made
                    pred = self._predictor()
            if fit is None or (fit.rms > 1.5 * self.accel_noise.sigma and fit.n >= 30):
                # too little swing yet, or one the model does not follow (a bounce off the board): wait
                if not final:
                    return None, board
            if fit is None:
                tau1, var_tau1 = self._no_angle()
            else:
                margin = 3 * fit.rest_sigma + self._limit_margin()
                if abs(fit.rest) >= self.s_max - margin and not final and self._may_reach_board(fit, ts, t):
                    return None, board      # on its way to the board: wait for it to land (or not)
                tau1 = self.kappa * fit.rest
                var_tau1 = (self.kappa * fit.rest_sigma) ** 2
        var0 = self.var_tau0
        if self.board0 and not board:
            var0 = self.var_tau0 + self.s.torque_band_gmm ** 2
        touches, by_size, gesture, others = self._gesture_touches(t, w1)
        m = Measurement(dw, var_dw, self.tau0, var0, tau1, var_tau1, board,
                        self.geo.tip_torque, self.geo.tip_sigma ** 2, self.s.rel_weight, self.s.rel_torque,
                        fan if not board else None, pred, touches, by_size, self.hands.sigma_mm,
                        self.hands.gain, gesture, touch_scale=self.hands.scale, other_touches=others, drift=drift)
        return m, board

    def _gesture_touches(self, t: float, w_after: float) -> tuple:
        """The touches of the gesture being judged (touches.py): found at the first look, and once more a second
        after the hands left, when more of the swing after them is in."""
        if not self._accel_seen or not self._cell_list or self.board0:
            return (), None, None, ()    # resting on the board before, the arm was pinned: its angle said nothing
        # a gesture's pause can look like the hands leaving: once they come back, its touches are found afresh
        key = (self.t_disturbed, self.t_off)
        looks = 1 if t - self.t_off < 1.0 else 2
        cached = self._touch_cache
        if cached is not None and cached[0] == key and cached[1] >= looks:
            return cached[2]
        start = self.t_disturbed - 0.15
        traces = self._gesture_traces(start, t)
        ws = _summed(traces)
        if len(ws) < 4:
            return (), None, None, ()
        noise_g = math.sqrt(sum(c.sigma_g() ** 2 for c in self._cell_list))
        parts = split([tt for tt, _ in ws], [w for _, w in ws], noise_g, w_before=self.w0,
                      lightest_g=min(self.geo.mass.values()))
        angle = self._angle_between(self.t_disturbed - 0.5, t)
        free = self._free_stretches(angle)
        omega, zeta = self._swing()
        dt = sum(c.dt for c in self._cell_list) / len(self._cell_list)
        # a load cell reads a hand's force late and spread over its settling (settling.py). The force each cell was
        # given is worked back from its readings through this table's taps, and the touches located from it against
        # the angle as sampled: every free stretch counts from its start. They are checked against the touches
        # located the other way — the angle read through the same taps, both sides equally blurred, which needs no
        # working back but loses each stretch's start — and where the two disagree by more than 3σ (taps learned
        # wrong, a fit gone astray) the disagreement is part of their uncertainty
        gesture = Gesture(angle, ws, parts, free, dt, dict(
            rest_before=self.tau0 / self.kappa, w_before=self.w0, w_after=w_after, kappa=self.kappa, omega=omega,
            zeta=zeta, noise=self.accel_noise.sigma))
        timing = self.settling.timing()

        # a two-touch move lifts a pawn that is on the arm: only the sizes some account has there can have moved
        moving = {p.size for b in self.beliefs for p in b.pawns}

        def located(taps):
            given = _summed([sharpened(tr, taps) for tr in traces])
            sharp = Gesture(angle, given, parts, free, dt, gesture.args)

            def loc(lifted=None):
                # (the check's σ is the fit's own: a timing it is unsure of must not make any disagreement look small)
                return tuple(combined(sharp.locate((1.0,), lifted_g=lifted, timing=timing),
                                     gesture.locate(taps, lifted_g=lifted)))
            by_size = ({size: loc(mass) for size, mass in self.geo.mass.items() if size in moving}
                       if len(parts) == 2 else None)
            return loc(), by_size
        found, by_size = located(self.settling.taps)
        # shapes of settling nearly as likely as the one in use: through them the touches can fall a holder away
        # (a tail tap of 0.04 moved two touches by 30 mm), so each is a way the touches may have been
        others = tuple((lw, *located(taps)) for lw, taps in self.settling.alternatives(dt))
        self._touch_cache = (key, looks, (found, by_size, gesture, others))
        return self._touch_cache[2]

    def _gesture_traces(self, start: float, t: float) -> list[list[tuple[float, float]]]:
        """Each cell's readings from `start` to `t`, with the runs its spike filter dropped that the other cells
        show too put back (filters.shared_runs): at 10 SPS the top of a firm press looks like a spike to one cell."""
        own = [[e for e in c.trace if start <= e[0] <= t] for c in self._cell_list]
        out = []
        for k, c in enumerate(self._cell_list):
            dropped = [(ts, (v - c.offset) / c.cpg) for ts, v in c.spike.spikes if start <= ts <= t]
            back = shared_runs(own[k], dropped, own[:k] + own[k + 1:]) if dropped else []
            out.append(sorted(own[k] + back) if back else own[k])
        return out

    def _free_stretches(self, angle: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
        """The stretches of `angle` when the arm swung free of the board (the linear swing holds only there)."""
        lim = self.s_max - self._limit_margin()
        runs = list(self._contacts)
        out: list[list[float]] = []
        last = None
        for tt, s in angle:
            touching = abs(s) >= lim or any(a - 0.02 <= tt <= b + 0.03 for a, b in runs)
            if touching:
                last = None
                continue
            if last is None or tt - last > 0.05:
                out.append([tt, tt])
            else:
                out[-1][1] = tt
            last = tt
        return [(a, b) for a, b in out if b > a]

    def _may_reach_board(self, fit, ts: Sequence[float], t: float) -> bool:
        """Whether the arm, swinging about `fit.rest`, could still touch the board: resting near it is not going
        there once what is left of the swing falls short."""
        if not ts:
            return True
        left = fit.amplitude * math.exp(-fit.zeta * fit.omega * max(0.0, t - ts[0]))
        reach = abs(fit.rest) + 3 * fit.rest_sigma + left
        # the fitted rest is the arm's own position, known far better than one reading: a reading's noise apart
        # from the board is apart
        return reach >= self.s_max - self.accel_noise.sigma

    def _predictor(self) -> SwingPredictor:
        # how well a predicted ω is known: calibrated, to about 1 % (at 0.4 % a placement judged 0.35 s into a
        # 1.5 Hz swing was read a holder off at 0.9999, the swing's own best frequency saying the right one);
        # uncalibrated, less well until long swings have confirmed the prior
        if self.swing_scale_var is not None:
            rel = math.sqrt(self.swing_scale_var + LEARNED_REL ** 2)
        else:
            rel = 0.01
        return SwingPredictor(self.swing_model, self.swing_scale, self.zeta_scale, rel)

    def _fan(self, ts: Sequence[float], ss: Sequence[float], loads: Sequence[float] | None = None):
        """The swing fitted across the frequencies the candidates (or the given loads, Σ m·x²) would leave:
        (SwingFan, best fit), or None."""
        if loads is None:
            lo = hi = None
            for b in self.beliefs:
                base = inertia_of(self.geo, b.pawns)
                d = [c.d_inertia for c in b.candidates]
                lo = base + min(d) if lo is None else min(lo, base + min(d))
                hi = base + max(d) if hi is None else max(hi, base + max(d))
        else:
            lo, hi = min(loads), max(loads)
        pred = self._predictor()
        w_hi = pred.at(lo)[0] * (1 + FAN_STEP / 2)
        w_lo = pred.at(hi)[0] * (1 - FAN_STEP / 2)
        most = FAN_MAX
        if pred.rel_sigma > WIDE_REL:
            # the prediction may be far off: the fan spans what the arm may really do, so the swing can say
            spread = math.exp(2.5 * pred.rel_sigma)
            w_hi = min(OMEGA_RANGE[1], w_hi * spread)
            w_lo = max(OMEGA_RANGE[0], w_lo / spread)
            most = FAN_MAX_WIDE
        n = min(most, max(3, math.ceil(math.log(w_hi / w_lo) / FAN_STEP) + 1))
        omegas = [w_lo * (w_hi / w_lo) ** (k / (n - 1)) for k in range(n)]
        return fan_fit(ts, ss, omegas, [pred.zeta_for(w) for w in omegas], self.kappa, noise=self.accel_noise.sigma)

    def _evaluate(self, t: float) -> None:
        since = t - self.t_off
        board_state = self._board(t)
        self._last_board = board_state
        board_now, ready = board_state
        if (ready and self.board_reported is not None and board_now != self.board_reported
                and since >= self.s.tip_deadline_s):
            # the tip is plain once the hands are off; the change that caused it may take longer to name
            self._report_board(t, board_now)
        m, board = self._measure_after(t, since >= self.s.max_wait_s, board_state=board_state)
        if m is None:
            return
        # resting on the board the angle is pinned: once the weight has settled, waiting adds nothing
        final = since >= self.s.max_wait_s or (board != 0 and since >= self.s.board_dwell_s + 0.2)
        ranked, pairs, m = self._rank(t, m, board_state, since >= self.s.max_wait_s)
        verdict = judge(ranked, m, self.s.resolution, final=final, decide_at=self.s.decide_at)
        if verdict.decided and _lighter(verdict.ranked[0].candidate) and since < self.s.remove_hold_s:
            return
        if verdict.decided and since < self.s.max_wait_s and self._handled_for_nothing(verdict, m):
            return
        if verdict.decided:
            self._decide(t, verdict, m, board, pairs)
        elif not verdict.explained and since >= self.s.unexplained_s:
            self._unexplained(t, m, board, ranked)

    @property
    def judging(self) -> bool:
        """Whether a change is under way or being weighed: hands on the arm, or off and not yet decided."""
        return self.mode in ("moving", "deciding")

    def decide_now(self) -> list[ArmEvent]:
        """Close the judgment of the change being weighed at once, with what has been read so far.

        The players are on to the next turn (they rolled, or named the move): they never wait for the
        swing to die out. The verdict is the one the longest wait would give now — decided when the best
        account explains the readings at all, flagged ambiguous when it is not sure — so the game applies
        it only if it meets its own bar and asks otherwise. With hands still on the arm there is nothing to
        judge yet; the events decided are returned (and not given again by `feed`).
        """
        if self.mode != "deciding":
            return []
        t = self.t
        board_state = self._board(t)
        self._last_board = board_state
        m, board = self._measure_after(t, True, board_state=board_state)
        if m is not None:
            ranked, pairs, m = self._rank(t, m, board_state, True)
            verdict = judge(ranked, m, self.s.resolution, final=True, decide_at=self.s.decide_at)
            if verdict.decided:
                self._decide(t, verdict, m, board, pairs)
            elif not verdict.explained:
                self._unexplained(t, m, board, ranked)
        out, self._new = self._new, []
        return out

    def _handled_for_nothing(self, verdict, m: Measurement) -> bool:
        """Whether "nothing changed" is the verdict on a gesture whose touches lifted or set down a pawn's weight:
        a pawn put back where it was, or — far likelier — a move the swing has not yet shown. Only the swing's
        rest tells the two apart (a move of like pawns changes the torque alone), so it is judged at the last look."""
        if verdict.ranked[0].candidate.kind != "none" or not m.touches:
            return False
        pawn = 0.5 * min(self.geo.mass.values())
        return any(abs(tc.lifted) >= pawn for tc in m.touches)

    def _rank(self, t: float, m: Measurement, board_state, final: bool):
        """Candidates ranked against `m` (each at the swing it would leave, when `m` has a fan)."""
        ranked, pairs = rank_beliefs(self._belief_table(), m)
        return ranked, pairs, m

    def _belief_table(self) -> list[tuple[float, list[Candidate], float, float]]:
        """Per belief: log weight, candidates, torque shift (on the board beforehand, the torque before is
        each belief's own), Σ m·x² of its pawns."""
        geo = self.geo
        if not self.board0:
            return [(b.log_weight, b.candidates, 0.0, inertia_of(geo, b.pawns)) for b in self.beliefs]
        return [(b.log_weight, b.candidates, model_torque(geo, b.pawns)[0] - self.tau0, inertia_of(geo, b.pawns))
                for b in self.beliefs]

    def _decide_interrupted(self, ts: float) -> None:
        """A hand arrived while the last quiet spell was still being judged: judge it now, if it can be."""
        cut = ts - max(self.s.guard_s, 2 * max((c.dt for c in self._cell_list), default=0.0))
        since = cut - self.t_off
        if since < self.s.min_fit_s or ts - self.t_off < self.s.gesture_gap_s:
            return      # a pause within one gesture (a pawn in the air between lift and put-down): judged as one
        m, board = self._measure_after(cut, True, board_state=self._last_board)
        if m is None:
            return
        ranked, pairs, m = self._rank(cut, m, self._last_board, True)
        # cut short by a hand, the quiet spell must explain itself well (a resting hand fits poorly)
        verdict = judge(ranked, m, self.s.resolution, final=True, decide_at=self.s.decide_at, explain_d2=16.0)
        if verdict.decided:
            if _lighter(verdict.ranked[0].candidate) and since < self.s.remove_hold_s:
                return      # lifted and put down elsewhere: one move, judged when it is down
            self._decide(ts, verdict, m, board, pairs)
        elif since >= 1.0:
            # settled long enough to be sure it was a state of its own: say so, and measure on from it
            self._unexplained(ts, m, board, ranked)

    def _placed_mass(self, cand: Candidate, m: Measurement) -> tuple[float, float] | None:
        if cand.kind != "place":
            return None
        nominal = self.geo.mass[cand.size]
        sig = self.geo.mass_sigma[cand.size]
        if sig <= 0:
            return nominal, 0.0
        # the pawn was weighed as it landed: combine that with what its size says
        wm, wv = 1.0 / sig ** 2, 1.0 / m.var_dw
        return (nominal * wm + m.dw * wv) / (wm + wv), math.sqrt(1.0 / (wm + wv))

    def _decide(self, t: float, verdict, m: Measurement, board: int, pairs) -> None:
        top = verdict.ranked[0]
        best = top.candidate
        self._w_before_change = (self.w0, self.var_w0, self.t_w0)
        source = self.beliefs[top.hypothesis].pawns
        before = tuple(source)
        after = apply_candidate(self.geo, source, best, placed_mass=self._placed_mass(best, m))
        change = Change(t, best, tuple(verdict.ranked[:TOP_CANDIDATES]), tuple(verdict.group),
                        verdict.confidence, verdict.ambiguous, m, before, tuple(after), self.geo,
                        hands_off_t=self.t_off,
                        beliefs_before=tuple((b.log_weight, tuple(b.pawns)) for b in self.beliefs))
        self.changes.append(change)
        placed = self._placed_mass(best, m)
        self._weigh_pending = None
        if placed is not None:
            seen = self.weighed.setdefault(best.size, [])
            seen.append(placed[0])
            del seen[:-50]
            self._weigh_pending = ((self.w0, self.var_w0, self.t_w0), best.holder, best.size, placed[0])
        self._carry_beliefs(m, pairs, after)
        self._settle_after(t, m, board)
        events = change.events()
        if self.board_reported is not None and board != self.board_reported:
            previous = self.board_reported
            self.board_reported = board
            conf = 1.0 if self.tilt.seen else 0.95
            if previous == 0:
                events.append(ArmEvent(t, "tip", confidence=conf))
            elif board == 0:
                events.append(ArmEvent(t, "untip", confidence=conf))
            else:
                events += [ArmEvent(t, "untip", confidence=conf), ArmEvent(t, "tip", confidence=conf)]
        elif self.board_reported is None:
            self.board_reported = board
        self._emit(events)

    def _carry_beliefs(self, m: Measurement, pairs, reported: list[TrackedPawn]) -> None:
        """Every account still possible after the change, the reported one first among equals."""
        merged: dict[tuple, list] = {}
        floor = pairs[0].weight * KEEP_BELIEF
        table = self._belief_table()
        for pr in pairs:
            if pr.weight < floor:
                break
            src = self.beliefs[pr.hypothesis].pawns
            pawns = apply_candidate(self.geo, src, pr.candidate, placed_mass=self._placed_mass(pr.candidate, m))
            occ = _mass_key(pawns)
            if occ in merged:
                merged[occ][0] += pr.weight
            else:
                ll = log_likelihood(pr.candidate, m, table[pr.hypothesis][2], table[pr.hypothesis][3])[0]
                merged[occ] = [pr.weight, pawns, pr.candidate, ll]
            if len(merged) >= 4 * MAX_BELIEFS_ON_BOARD:
                break
        cap = MAX_BELIEFS_ON_BOARD if (self.board0 or m.censored1) else MAX_BELIEFS
        ordered = sorted(merged.values(), key=lambda e: -e[0])[:cap]
        rep = _mass_key(reported)
        ordered.sort(key=lambda e: (_mass_key(e[1]) != rep, -e[0]))
        best = max(e[0] for e in ordered)
        refine = not m.censored1 and not self.board0
        self.beliefs = [Belief(math.log(w / best), pawns, enumerate_candidates(self.geo, pawns),
                               c if refine else None, ll, m if refine else None)
                        for w, pawns, c, ll in ordered]

    def _settle_after(self, t: float, m: Measurement, board: int) -> None:
        self.mode = "settled"
        self.board0 = board
        self.tau_settled = m.tau1 if not board else None
        self.var_tau_settled = m.var_tau1
        self.w0 = self.w0 + m.dw

    def _unexplained(self, t: float, m: Measurement, board: int, ranked) -> None:
        # no holder named: no candidate explains it, and two hands at once leave touches located between them
        # (the board check names the holder once the arm is compared with the game)
        msg = "the arm changed in a way no single pawn explains (two pawns at once?): check its pawns against the page"
        details = (f"the arm settled {m.dw:+.1f} g and "
                   + ("came to rest on the board" if board else f"{m.tau1 - m.tau0:+.0f} g·mm")
                   + " from where it was")
        change = Change(t, None, tuple(ranked[:TOP_CANDIDATES]), (), 0.0, True, m, tuple(self.pawns),
                        tuple(self.pawns), self.geo, hands_off_t=self.t_off)
        self.changes.append(change)
        self.notice = msg
        self._settle_after(t, m, board)
        events = [ArmEvent(t, "unexplained", confidence=0.0, ambiguous=True, change=change, message=msg,
                           details=details)]
        if self.board_reported is not None and board != self.board_reported:
            self.board_reported = board
            events.append(ArmEvent(t, "tip" if board else "untip", confidence=1.0 if self.tilt.seen else 0.95))
        self._emit(events)

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
            return board * self.geo.tip_torque, 0.0, board
        if not self._accel_seen:
            return None
        fit, _, _ = self._fit(self._free_since(), self.t)
        if fit is None:
            if self.tau_settled is None:
                return None
            return self.tau_settled - self.zero_t, math.sqrt(self.var_tau_settled), 0
        return self.kappa * fit.rest - self.zero_t, self.kappa * fit.rest_sigma, 0

    def live(self) -> dict:
        """Live values for the page: weight (g), angle (°), torque (g·mm), settled, on the board."""
        weight = None if self.w_display is None else self.w_display - self.zero_w
        angle = None if self.s_display is None else math.degrees(math.asin(max(-1.0, min(1.0, self.s_display))))
        rest = self.rest_torque() if self.mode == "settled" else None
        if rest is not None:
            torque = rest[0]
        elif self.s_display is not None:
            torque = self.kappa * self.s_display - self.zero_t
        else:
            torque = None
        board, _ = self._board(self.t) if self.t > -math.inf else (0, False)
        return {
            "weight_g": None if weight is None else round(weight, 2),
            "angle_deg": None if angle is None else round(angle, 2),
            "torque_gmm": None if torque is None else round(torque, 0),
            "tip_torque_gmm": round(self.geo.tip_torque, 0),
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
        dw = w - exp_w
        off_w = dw * dw > sigmas ** 2 * var_w
        off_t = False
        if rest is not None:
            tau, sig, board = rest
            if board:
                off_t = board * exp_t < self.geo.tip_torque - 3 * self.geo.tip_sigma
            else:
                vt = sig ** 2 + var_t + self.s.torque_band_gmm ** 2 + (self.s.rel_torque * exp_t) ** 2
                off_t = (tau - exp_t) ** 2 > sigmas ** 2 * vt
        if not off_w and not off_t:
            return None
        # which single difference explains what the sensors see best?
        cands = enumerate_candidates(self.geo, expected)
        tau_meas = rest[0] if rest is not None else exp_t
        m = Measurement(dw, var_w, exp_t, var_t, tau_meas, (rest[1] ** 2 if rest else math.inf),
                        rest[2] if rest else 0, self.geo.tip_torque, self.geo.tip_sigma ** 2,
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


def _summed(traces: Sequence[Sequence[tuple[float, float]]]) -> list[tuple[float, float]]:
    """The load cells' sum at every instant one of them was read, each cell interpolated between its own
    readings. A cell's spike filter may hold a jump back a sample or two while the others go on: summing each
    cell's latest value as it arrives would mix readings of different instants."""
    traces = [tr for tr in traces if tr]
    if not traces:
        return []
    times = sorted({e[0] for tr in traces for e in tr})
    each = []
    for tr in traces:
        vals, i, last = [], 0, len(tr) - 1
        for t in times:
            while i < last and tr[i + 1][0] <= t:
                i += 1
            t0, v0 = tr[i]
            if t <= t0 or i >= last:
                vals.append(v0)
            else:
                t1, v1 = tr[i + 1]
                vals.append(v0 + (v1 - v0) * (t - t0) / (t1 - t0))
        each.append(vals)
    # summed cell by cell in the cells' order, from 0.0, as one running total per instant would be
    return [(t, sum(vs, 0.0)) for t, vs in zip(times, zip(*each))]
