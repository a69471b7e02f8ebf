"""The hands' touches of the gesture being judged, located from the load cells against the swing."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Sequence

from companion.sensing.filters import shared_runs
from companion.sensing.follower.settings import LEARNED_REL, TOUCH_AFTER_SAMPLES, ZETA_LEARNED_REL
from companion.sensing.pause_swing import lifted_torque, pause_stretch
from companion.sensing.settling import Gesture, sharpened
from companion.sensing.touches import HandSpread, Push, combined, let_go, pause_lift, split


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


class TouchReading:
    """The hands' touches of the gesture being judged, located from the load cells against the swing.

    A part of ArmFollower (core.py), which holds the state these methods share."""

    def _gesture_touches(self, t: float, w_after: float, w_before: float | None = None, *,
                         to_learn: bool = False) -> tuple:
        """The touches of the gesture being judged (touches.py): found at the first look, again once the cells have
        read enough after them (`_touches_read`) if that look came sooner, and once more a second after the hands
        left, when more of the swing after them is in. `w_before`: the settled weight before the gesture (by default
        the baseline's, which a decision moves on). `to_learn`: placed afresh up to `t` for the hands to learn from,
        without the other shapes of settling a judgment weighs (nor kept for one)."""
        if w_before is None:
            w_before = self.w0
        if not self._accel_seen or not self._cell_list or self.board0:
            return (), None, None, ()    # resting on the board before, the arm was pinned: its angle said nothing
        # a gesture's pause can look like the hands leaving: once they come back, its touches are found afresh
        key = (self.t_disturbed, self.t_off)
        looks = 2 if t - self.t_off >= 1.0 else (1 if self._touches_read(t) else 0)
        cached = self._touch_cache
        if not to_learn and cached is not None and cached[0] == key and cached[1] >= looks:
            return cached[2]
        start = self.t_disturbed - 0.15
        traces = self._gesture_traces(start, t)
        ws = _summed(traces)
        if len(ws) < 4:
            return (), None, None, ()
        noise_g = self._cells_noise_g()
        parts = split([tt for tt, _ in ws], [w for _, w in ws], noise_g, w_before=w_before,
                      lightest_g=min(self.geo.mass.values()))
        angle = self._angle_between(self.t_disturbed - 0.5, t)
        free = self._free_stretches(angle)
        frame = self._touch_frame
        if not (to_learn and frame is not None and frame[0] == key):
            # the arm as it was before the move: placed again once the move is decided, its touches are still read
            # against the swing, the stiffness and the sizes the gesture started from (a two-touch move lifts a pawn
            # that is on the arm: only the sizes some account had there can have moved)
            frame = (key, self._swing(), self._kappa_for(), self.tau0,
                     frozenset(p.size for b in self.beliefs for p in b.pawns))
            self._touch_frame = frame
        _, (omega, zeta), kappa, tau0, moving = frame
        dt = sum(c.dt for c in self._cell_list) / len(self._cell_list)
        # a load cell reads a hand's force late and spread over its settling (settling.py). The force each cell was
        # given is worked back from its readings through this table's taps, and the touches located from it against
        # the angle as sampled: every free stretch counts from its start. They are checked against the touches
        # located the other way — the angle read through the same taps, both sides equally blurred, which needs no
        # working back but loses each stretch's start — and where the two disagree by more than 3σ (taps learned
        # wrong, a fit gone astray) the disagreement is part of their uncertainty
        gesture = Gesture(angle, ws, parts, free, dt, dict(
            rest_before=tau0 / kappa, w_before=w_before, w_after=w_after, kappa=kappa, omega=omega,
            zeta=zeta, noise=self.accel_noise.sigma))
        timing = self.settling.timing()

        def located(taps):
            given = _summed([sharpened(tr, taps) for tr in traces])
            sharp = Gesture(angle, given, parts, free, dt, gesture.args)

            def loc(lifted=None):
                # (the check's σ is the fit's own: a timing it is unsure of must not make any disagreement look small)
                return _held(combined(sharp.locate((1.0,), lifted_g=lifted, timing=timing),
                                      gesture.locate(taps, lifted_g=lifted)), free)
            by_size = ({size: loc(mass) for size, mass in self.geo.mass.items() if size in moving}
                       if len(parts) == 2 else None)
            return loc(), by_size
        found, by_size = located(self.settling.taps)
        if to_learn:
            return found, by_size, gesture, ()
        # shapes of settling nearly as likely as the one in use: through them the touches can fall a holder away
        # (a tail tap of 0.04 moved two touches by 30 mm), so each is a way the touches may have been
        others = tuple((lw, *located(taps)) for lw, taps in self.settling.alternatives(dt))
        self._touch_cache = (key, looks, (found, by_size, gesture, others))
        return self._touch_cache[2]

    def _touches_read(self, t: float) -> bool:
        """Whether the cells have read enough since the hands left to place their touches well: a hand's last force
        reaches a cell through its settling (`_settle_tail` samples), and the level after it takes TOUCH_AFTER_SAMPLES
        more. A look at 10 SPS may come three samples after the cells saw the hands go, now that the swing is read
        from when the hands left; the touches it places are its evidence, but learned from, the last touch placed
        nearer the pivot taught the hands a gain of 0.89 where 0.95 was right (ours 29200000: two-player
        look-alikes asked 2 → 5 times in 40 turns)."""
        return t >= self._touches_ready_at()

    def _touches_ready_at(self) -> float:
        dt = max((c.dt for c in self._cell_list), default=0.0)
        return self.t_off + (self._settle_tail() + TOUCH_AFTER_SAMPLES) * dt

    def _board_push(self, gesture) -> Push | None:
        """Which way the gesture's first touch pushed the arm, when it put an arm resting free onto the board
        (touches.Push): a touch the arm spends on the board is located from a few free samples, if any (foreign
        26008 turn 36: a press at E6 tipped the arm 0.09 s in, both touches placed at σ 75-106 mm, and the move
        asked about against one that would have lifted the arm off that board)."""
        if gesture is None or not gesture.parts or self.board0 or not math.isfinite(self.var_tau0):
            return None
        a, b = gesture.parts[0]
        runs = list(self._contacts)
        if any(r0 < a <= r1 + 0.05 for r0, r1 in runs):
            return None             # on the board already when the hand came
        hit = next((r0 for r0, _ in runs if a <= r0 <= b), None)
        if hit is None:
            return None
        near = [s for tt, s in gesture.angle if hit - 0.05 <= tt <= hit + 0.1]
        mean = sum(near) / len(near) if near else 0.0
        if abs(mean) < 0.7 * self.s_max:
            return None             # a switch's bounce, not the arm at the board
        side = 1 if mean > 0 else -1
        dt = max((c.dt for c in self._cell_list), default=0.0)
        late = len(self.settling.taps) * dt          # what the cells read of the force up to the contact
        forces = [w - self.w0 for tt, w in gesture.weights if a - dt <= tt <= hit + late]
        if not forces:
            return None
        # a force within the cells' noise pushed nothing: a twitch of −0.03 g read as a lift allowed any x that way
        felt = 4.0 * self._cells_noise_g()
        f_max, f_min = max(forces), min(forces)
        kappa = self._kappa_for()
        noise = self.accel_noise.sigma
        rest = self.tau0 / kappa
        before = [abs(s - rest) for tt, s in gesture.angle if self.t_disturbed - 0.6 <= tt <= self.t_disturbed - 0.1]
        swing = kappa * max(0.0, max(before, default=0.0) - 3.0 * noise)
        need = 0.5 * (self._tip_torque_for() - side * self.tau0 - swing)
        need_sigma = 0.5 * math.sqrt(self.var_tau0 + self.geo.tip_sigma ** 2 + (3.0 * kappa * noise) ** 2)
        up, down = let_go([(tt, w - self.w0) for tt, w in gesture.weights if a - dt <= tt], hit, self.settling.taps,
                          dt)
        return Push(side, need, need_sigma, f_max if f_max > felt else 0.0, f_min if f_min < -felt else 0.0,
                    up if up > felt else 0.0, down if down < -felt else 0.0)

    def _pause_lift(self, gesture) -> tuple:
        """What the pause between a two-touch gesture's touches shows its first touch lifted (touches.pause_lift),
        with how far apart a lift read astray may fall (twice the heaviest pawn); () when the pause shows nothing."""
        if gesture is None or len(gesture.parts) != 2 or not self._cell_list:
            return ()
        noise_g = self._cells_noise_g()
        got = pause_lift(gesture.weights, gesture.parts, w_before=gesture.args["w_before"], noise_g=noise_g,
                         dt=gesture.dt, settle_s=len(self.settling.taps) * gesture.dt)
        return () if got is None else (*got, 2.0 * max(self.geo.mass.values()))

    def _pause_torque(self, gesture) -> dict:
        """What the free swing in the pause between a move's touches shows its first touch took off (pause_swing.py),
        for a mover of each size that could have moved: size -> (g·mm, 1σ); empty when the pause shows nothing."""
        if gesture is None or self._touch_frame is None or not self._accel_seen:
            return {}
        stretch = pause_stretch(gesture.angle, gesture.free, gesture.parts, self.s_max - self._limit_margin())
        if stretch is None:
            return {}
        key = (self._touch_frame[0], stretch)
        if self._pause_cache is not None and self._pause_cache[0] == key:
            return self._pause_scaled(self._pause_cache[1])
        _, (omega, zeta), kappa, tau0, moving = self._touch_frame
        # (ω and ζ as the follower knows them: an unmeasured arm's to what its swings have shown)
        rel_omega = self._predictor().rel_sigma
        rel_zeta = ZETA_LEARNED_REL if self.zeta_scale_var is None else math.sqrt(self.zeta_scale_var)
        if self.swing_before:
            # the arm's own swing just before the hands came: measured, not predicted
            omega, rel_omega = self.swing_before[0], math.sqrt(self.swing_before[1] + LEARNED_REL ** 2)
        board = self._board_level(stretch)
        out = {}
        for size, mass in self.geo.mass.items():
            if size not in moving:
                continue
            got = lifted_torque(gesture.angle, stretch, board=board, rest=tau0 / kappa, kappa=kappa, omega=omega,
                                zeta=zeta, noise=self.accel_noise.sigma, rel_omega=rel_omega, rel_zeta=rel_zeta,
                                mass_g=mass)
            if got is not None:
                out[size] = got
        self._pause_cache = (key, out)
        return self._pause_scaled(out)

    def _pause_back(self, gesture) -> bool:
        """Whether the pause's free swing, read for some mover, ended at the board it had left: a hand pressed it
        back there, so the gesture held two touches even where the cells found one (pause_swing.PauseStretch)."""
        if not self._pause_torque(gesture):
            return False
        return self._pause_cache[0][1].pressed_back     # the stretch the read above came from

    def _pause_scaled(self, read: dict) -> dict:
        """The pause's torques, each as (g·mm, 1σ as this table's pauses miss, the fit's own 1σ)."""
        c = self.pause_scale.scale
        return {size: (tau, c * sigma, sigma) for size, (tau, sigma) in read.items()}

    def _board_level(self, stretch) -> float:
        """The sin θ the arm reads resting on the board `stretch` left: the median of what the latest pauses read
        there, this one's with them (a hand pressing shakes the readings; the board itself does not move)."""
        levels = self._board_levels[stretch.side]
        if not levels or levels[-1][0] != stretch.last_board:
            levels.append((stretch.last_board, stretch.board))
        seen = sorted(v for _, v in levels)
        return seen[len(seen) // 2]

    def _cells_noise_g(self) -> float:
        """The noise of the load cells' sum (g per reading)."""
        return math.sqrt(sum(c.sigma_g() ** 2 for c in self._cell_list))

    def _touch_span(self) -> float:
        """How far along the arm a hand may touch (mm): the holders' span and a finger's worst spread either side."""
        xs = self.geo.x.values()
        return max(xs) - min(xs) + 2 * HandSpread.HIGH_MM

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


def _held(touches, free) -> tuple:
    """`touches` with the share of each one's span the arm spent at the board (`free`: when it swung free)."""
    out = []
    for tc in touches:
        span = tc.end - tc.start
        if span <= 0.0:
            out.append(tc)
            continue
        swung = sum(max(0.0, min(tc.end, b) - max(tc.start, a)) for a, b in free)
        out.append(replace(tc, held=max(0.0, 1.0 - swung / span)))
    return tuple(out)
