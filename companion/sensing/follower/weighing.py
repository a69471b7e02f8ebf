"""The load cells: samples to grams, when the hands are off, the settled weight and its zero."""

from __future__ import annotations

import math
from collections import deque

from companion.sensing.drift import spell_slope
from companion.sensing.filters import NoiseEstimate, SpikeFilter, is_glitch
from companion.sensing.inference import inertia_of, model_torque


class _Cell:
    __slots__ = ("name", "offset", "cpg", "spike", "noise", "win", "wsum", "last_t", "dt", "glitches", "latest",
                 "trace", "steady")

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
        # its samples since it last moved itself (the one that moved included), counted on through the other cells'
        # moves, which restart its window but say nothing of it
        self.steady = 0

    def clear(self) -> None:
        self.win.clear()
        self.wsum = 0.0

    def sigma_g(self) -> float:
        return self.noise.sigma / abs(self.cpg)


class Weighing:
    """The load cells: samples to grams, when the hands are off, the settled weight and its zero.

    A part of ArmFollower (core.py), which holds the state these methods share."""

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
                cell.steady = 0
                n = 0
                mode = self.mode
        if mode == "settled":
            cell.noise.update(v)
        win.append((ts, g))
        cell.wsum += g
        cell.steady += 1
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
        # Each cell steady for min_quiet_samples of its own, and compared at least once since the last cell moved
        # (the first sample of a restarted window is compared with nothing). At 10 SPS the cells settle a sample or
        # two apart (the foreign arm's averaging cells): counting a steady cell's samples afresh whenever another
        # moved kept the hands "on" up to 0.3 s after the last cell had settled.
        if any(c.steady < self.s.min_quiet_samples or len(c.win) < 2 for c in alive):
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
        if self._hands_pending is not None and self.mode == "settled":
            # a hand again: the touches of the move before are located from all the cells read before it
            self._learn_hands_later(ts - 1e-6)
        if self.mode == "deciding":
            # a hand again: the quiet spell before it was a settled state, so judge it with what it gave
            self._decide_interrupted(ts)
        if self.mode != "moving":
            # a hand arrives (or comes back): no cell has been steady since
            for c in self._cell_list:
                c.steady = 0
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
        if not any(b.pawns for b in self.beliefs) and not self._emptied_by_word:
            self._empty_weight = (self.w0, self.var_w0, self.t_w0)
        if self._weigh_pending is not None:
            self._reweigh(*self._weigh_pending)
        # where the arm rested before the hand came: by the time a slow load cell notices a hand, it may
        # already have pressed the arm onto the board
        board = self.board_reported if self.board_reported is not None else self._board(cut)[0]
        self.board0 = board
        self.swing_before = None          # measured below, when the spell swung long and clearly enough
        if board:
            self.tau0, self.var_tau0 = model_torque(self.geo, self.pawns)
        else:
            fit, ts, ss = self._fit(self._free_since(cut), cut, learn=True)
            if fit is not None and fit.n >= 20:
                kappa = self._kappa_for()
                self.tau0 = kappa * fit.rest
                self.var_tau0 = (kappa * fit.rest_sigma) ** 2
                if self._height_pending is not None:
                    self._learn_height_after(self.tau0, self.var_tau0)
                self._track_torque_zero(self.tau0, self.var_tau0)
                long = None
                if any(b.via is not None for b in self.beliefs):
                    # each account judged at its own swing, over the whole settled spell
                    via = [b for b in self.beliefs if b.via is not None and b.via_measurement is not None]
                    long = self._fan(ts, ss, loads=[inertia_of(self.geo, b.pawns) for b in self.beliefs],
                                     before=via[0].via_measurement.swing_before or None if via else None,
                                     changes=[b.via.d_inertia for b in via])
                self._reweigh_beliefs(self.tau0, self.var_tau0, long)
            elif self.tau_settled is not None:
                self.tau0, self.var_tau0 = self.tau_settled, self.var_tau_settled
            else:
                self.tau0, self.var_tau0 = self._no_angle()

    def _settled_tick(self, t: float) -> None:
        if self._hands_pending is not None and self._touches_read(t):
            self._learn_hands_later(t)
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
