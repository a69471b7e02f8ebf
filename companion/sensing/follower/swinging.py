"""The accelerometer: the angle, board contact, and the swing's rest fitted at the frequencies the accounts leave."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Sequence

from companion.sensing.inference import FREQ_TEMPER, RATIO_FLOOR, TrackedPawn, inertia_of
from companion.sensing.swing import (G_MM_S2, ArmSwing, SwingFan, SwingFit, SwingPredictor, fan_fit, fit_swing,
                                     frequency_variance, measure_swing, refine_swing)
from companion.sensing.follower.settings import (BACK_HEAD_S, BACK_STEP_S, BACK_Z, FAN_MAX, FAN_MAX_WIDE, FAN_STEP,
                                                 LEARNED_REL, OMEGA_RANGE, WIDE_REL, ZETA_FAN, ZETA_LEARNED_REL,
                                                 ZETA_RANGE, ZETA_SURE)


class SwingReading:
    """The accelerometer: the angle, board contact, and the swing's rest fitted at the frequencies the accounts leave.

    A part of ArmFollower (core.py), which holds the state these methods share."""

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
        return max(self._swing_began(), self._last_contact(before) + 0.02)

    def _last_contact(self, before: float | None = None) -> float:
        """When the arm last touched the board (as it was at `before`)."""
        last = self.last_contact_t if self.tilt.seen else self.last_limit_t
        if before is not None and last > before:
            last = -math.inf
            for start, end in self._contacts:
                if start <= before:
                    last = max(last, min(end, before))
        return last

    def _swing_began(self) -> float:
        """When the hands left, as far as the accelerometer shows (`_find_swing_start`); the cells' word otherwise."""
        key, began = self._swung
        return began if key == self.t_off else self.t_off

    def _find_swing_start(self, t: float) -> None:
        """How long before the cells saw the hands go the arm already swung free (BACK_STEP_S): a cell at 10 SPS
        feels a hand's last press through its own settling for up to half a second, and the swing the
        accelerometer read meanwhile is swing the rest is read from, not waited for."""
        self._swung = (self.t_off, self.t_off)
        base = self._free_since(t)
        if base > self.t_off or not self._cell_list:
            return      # the board held it after the hands: its swing began there (the switch says when)
        # no further back than a cell's settling could have hidden the hand, nor past the board's last touch
        lag = (self._settle_tail() + 3) * max(c.dt for c in self._cell_list)
        floor = max(self.t_off - lag, self._last_contact(self.t_off) + 0.02)
        noise2 = self.accel_noise.sigma ** 2
        omega, zeta = self._swing()
        head = max(1, round(BACK_HEAD_S / BACK_STEP_S))
        fits = []
        began = base
        k = -1
        while True:
            k += 1
            s = base - k * BACK_STEP_S
            if s < floor:
                break
            got = self._angle_between(s, t)
            fit = fit_swing([a for a, _ in got], [b for _, b in got], omega, zeta)
            if fit is None:
                break
            fits.append(fit)
            if k == 0:
                continue
            ref = fits[max(0, k - head)]
            added = fit.n - ref.n
            if added <= 0:
                continue
            rss = fit.rms ** 2 * max(1, fit.n - 3) - ref.rms ** 2 * max(1, ref.n - 3)
            if rss > added * noise2 * _chi2_high(added):
                break
            began = s
        # the last step kept is left to the hand: its readings may hold the hand's last light touch
        self._swung = (self.t_off, min(base, began + BACK_STEP_S))

    def _swing(self, pawns: Sequence[TrackedPawn] | None = None) -> tuple[float, float]:
        """(ω, ζ) of the arm carrying `pawns` (default: the likeliest account of those on it now)."""
        x = self.geo.x
        carried = self.pawns if pawns is None else pawns
        load = sum(p.mass_g * x[p.holder] ** 2 for p in carried)
        law, scale = self._swing_law()
        omega, zeta = law.at(load, sum(p.mass_g for p in carried))
        return omega * scale, min(0.95, zeta * self.zeta_scale)

    def _swing_law(self) -> tuple[ArmSwing, float]:
        """(the pendulum the follower predicts ω by, the scale on its ω). An arm whose swing nobody measured learns
        its empty arm's inertia — `swing_scale` is then that arm's ω over the prior's, empty — and the pawns add
        theirs to it as physics says: a scale on every load's ω alike was learned as an average over the loads seen,
        and with the prior's empty inertia 2.6 times the arm's (a 1.6 Hz arm, our seed 11001002) the loaded arm's ω
        came out 10 % below its own while the scale was held sure to 1.2 %, and its short-look rests a holder off at
        0.999. A calibrated arm keeps its measured law, times what its long swings add."""
        if self.swing_scale_var is None:
            return self.swing_model, self.swing_scale
        # (the damping scaled with it, so that the empty arm's ζ, learned apart as zeta_scale, stays where it was)
        law = self.swing_model
        return replace(law, inertia_gmm2=law.inertia_gmm2 / self.swing_scale ** 2,
                       viscous=law.viscous / self.swing_scale), 1.0

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
        if learn and fit is not None and self.swing_scale_var is not None:
            return self._learn_unmeasured(fit, ts, ss, omega, zeta), ts, ss
        if (learn and fit is not None and ts[-1] - ts[0] >= 2.0 * (2 * math.pi / omega)
                and fit.amplitude > 20 * noise):
            # a calibrated arm learns what the prediction misses — but only from two periods or more: over a
            # fraction of one, frequency and rest angle trade off freely
            lo, hi = self._scale_range
            span = 0.15
            better = refine_swing(ts, ss, omega, zeta, noise=noise, span=span)
            if better is not None and better.rms <= 1.5 * noise:
                self._saw_swing(better, frequency_variance(ts, ss, better, noise=noise, temper=FREQ_TEMPER))
            if better is not None and better.rms < 0.95 * fit.rms:
                base_w, base_z = omega / self.swing_scale, zeta / self.zeta_scale
                self.swing_scale = min(hi, max(lo, self.swing_scale + 0.3 * (better.omega / base_w - self.swing_scale)))
                if base_z > 1e-6:
                    z_scale = min(3.0, max(0.3, better.zeta / base_z))
                    self.zeta_scale += 0.3 * (z_scale - self.zeta_scale)
                fit = better
        return fit, ts, ss

    def _learn_unmeasured(self, fit: SwingFit, ts: Sequence[float], ss: Sequence[float], omega: float,
                          zeta: float) -> SwingFit:
        """An arm whose swing nobody measured learns ω and ζ from every settled spell, each swing weighed by how
        well it shows them (swing.measure_swing): a small swing in a noisy accelerometer shows its frequency
        loosely but not nothing, and on such a table no swing was ever big enough for a rule that waits for one."""
        noise = self.accel_noise.sigma
        if ts[-1] - ts[0] < 1.5 * (2 * math.pi / omega):
            return fit          # less than a period and a half
        # as wide as 3σ of what is known, but never past what the arm may be (`_scale_range`) nor short of it: capped
        # at ± 0.6 in ln, a 1.91 Hz arm searched from the default 1 Hz lay beyond the edge, no swing was ever found,
        # and the first four placements of ours 28700007 were answered by the players (each swing disowned)
        lo, hi = self._scale_range
        reach = max(math.log(hi / self.swing_scale), math.log(self.swing_scale / lo))
        span = min(reach, max(0.05, 3.0 * math.sqrt(self.swing_scale_var)))
        seen = measure_swing(ts, ss, omega, zeta, noise=noise, span=span, temper=FREQ_TEMPER)
        # (judged at the swing's own frequency: at the predicted one, far off, no swing would fit)
        if seen is None or seen.fit.rms > 1.5 * noise:
            return fit          # a swing the model does not follow: a hand's tail, a bounce
        self._saw_swing(seen.fit, seen.omega_var)
        base_z = zeta / self.zeta_scale
        # the empty arm's inertia this ω says, with the pawns' own taken off (each adds m·x² and, sitting h above the
        # pivot, m·h²), as a scale on the prior's empty ω; the heavier the load, the less the swing says of the arm
        # alone (d ln scale = I / I0 · d ln ω)
        carried = self.pawns
        mass = sum(p.mass_g for p in carried)
        law = self.swing_model
        total = law.inertia_at(seen.omega, mass)
        own = total - (law.inertia_at(omega, mass) - self._swing_law()[0].inertia_gmm2)
        own = max(own, 0.05 * total)
        self._learn_scale(math.sqrt(law.inertia_gmm2 / own),
                          seen.omega_var / seen.omega ** 2 * (total / own) ** 2)
        if base_z > 1e-6 and math.isfinite(seen.ln_zeta_var):
            self._learn_zeta(seen.zeta / base_z, seen.ln_zeta_var)
        return seen.fit

    def _saw_swing(self, fit: SwingFit, omega_var: float | None) -> None:
        """The arm's own ω over the settled spell before a hand came: what the swing after the change is compared
        with (inference: a candidate's ω is this one changed by the inertia it adds)."""
        if omega_var is not None and math.isfinite(omega_var) and omega_var > 0:
            self.swing_before = (fit.omega, omega_var / fit.omega ** 2)

    def _learn_scale(self, measured: float, measured_var: float = 0.0) -> None:
        """An unmeasured arm's ω scale, updated from one swing as an estimate: the first swing counts for nearly
        all against the wide prior, later ones for less as the scale grows sure. `measured_var` is how well that
        swing showed it (ln scale); never better than the loading model's own error (LEARNED_REL)."""
        lo, hi = self._scale_range
        var = self.swing_scale_var
        gain = var / (var + max(measured_var, LEARNED_REL ** 2))
        ln = math.log(self.swing_scale) + gain * (math.log(min(hi, max(lo, measured))) - math.log(self.swing_scale))
        self.swing_scale = min(hi, max(lo, math.exp(ln)))
        # the loading model's own error stays (a little process noise), so the scale keeps following the arm
        self.swing_scale_var = (1 - gain) * var + (0.3 * LEARNED_REL) ** 2

    def _learn_zeta(self, measured: float, measured_var: float = 0.0) -> None:
        """An unmeasured arm's ζ scale, from one swing, as _learn_scale does for ω."""
        lo, hi = ZETA_RANGE
        var = self.zeta_scale_var
        gain = var / (var + max(measured_var, ZETA_LEARNED_REL ** 2))
        ln = math.log(self.zeta_scale) + gain * (math.log(min(hi, max(lo, measured))) - math.log(self.zeta_scale))
        self.zeta_scale = min(hi, max(lo, math.exp(ln)))
        self.zeta_scale_var = (1 - gain) * var + (0.3 * ZETA_LEARNED_REL) ** 2

    def _across_damping(self, ts: Sequence[float], ss: Sequence[float], fan: SwingFan, best: SwingFit,
                        kappa: float):
        """(fan, best) with the rest read across the damping an unmeasured arm may have: each ζ of ZETA_FAN weighed
        by its prior and by how well it fits the swing, the rest their weighted mean, the spread between them part
        of its uncertainty. Over a short look the swing cannot tell ζ, and a rest read at one ζ the arm lacks was a
        holder off with nothing to say so; over a long one the fit picks ζ and the spread vanishes."""
        if self.zeta_scale_var is None or math.sqrt(self.zeta_scale_var) < ZETA_SURE:
            return fan, best
        sd = math.sqrt(self.zeta_scale_var)
        noise = self.accel_noise.sigma
        rss0 = best.rms * best.rms * max(1, best.n - 3)
        looks = []
        for k in ZETA_FAN:
            f = best if k == 0 else fit_swing(ts, ss, best.omega, min(0.95, best.zeta * math.exp(k * sd)), noise=noise)
            if f is None:
                continue
            rss = f.rms * f.rms * max(1, f.n - 3)
            looks.append((-0.5 * k * k - 0.5 * (rss - rss0) / (FREQ_TEMPER * fan.noise2), f))
        top = max(lw for lw, _ in looks)
        ws = [(math.exp(lw - top), f) for lw, f in looks]
        total = sum(w for w, _ in ws)
        mean = sum(w * f.rest for w, f in ws) / total
        between = sum(w * (f.rest - mean) ** 2 for w, f in ws) / total
        shift, extra = kappa * (mean - best.rest), kappa ** 2 * between
        # the residuals the fit check judges are those at the damping that fits the swing best within its prior, not
        # at the default's: a heavily damped arm nobody measured (ours, seed 28100001: ζ 0.29, the default 0.08)
        # otherwise left residuals 5.5 times the noise at the default's damping, and its first placements were
        # disowned at 0.0000 — "the model does not fit" — while the fan read their rest right
        likeliest = max(looks, key=lambda e: e[0])[1]
        gain = likeliest.rms * likeliest.rms * max(1, likeliest.n - 3) - rss0
        fan = replace(fan, taus=tuple(t + shift for t in fan.taus), tau_vars=tuple(v + extra for v in fan.tau_vars),
                      rss=tuple(max(0.0, r + gain) for r in fan.rss))
        return fan, replace(best, rest=mean, rest_sigma=math.sqrt(best.rest_sigma ** 2 + between),
                            rms=likeliest.rms if likeliest.n == best.n else best.rms)

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
        if t - ts[0] >= 2 * math.pi / fit.omega:
            # a free swing about its rest is widest at its start, and this one has gone a whole period both ways
            # without the board (a contact would have begun the free stretch anew): it will not reach it now. An arm
            # come to rest within a reading's noise of the board otherwise waited for the longest look (foreign
            # noisy 30516 turn 25: resting 0.006 short of it, 0.002 of swing left, still judging when the players
            # named their move 2.8 s after the hands left)
            return False
        left = fit.amplitude * math.exp(-fit.zeta * fit.omega * max(0.0, t - ts[0]))
        reach = abs(fit.rest) + 3 * fit.rest_sigma + left
        # the fitted rest is the arm's own position, known far better than one reading: a reading's noise apart
        # from the board is apart
        return reach >= self.s_max - self.accel_noise.sigma

    def _predictor(self, mass_g: float | None = None) -> SwingPredictor:
        """The swing as predicted for the arm carrying `mass_g` grams of pawns (default: the likeliest account)."""
        # how well a predicted ω is known: calibrated, to about 1 % (at 0.4 % a placement judged 0.35 s into a
        # 1.5 Hz swing was read a holder off at 0.9999, the swing's own best frequency saying the right one);
        # uncalibrated, less well until long swings have confirmed the prior
        if self.swing_scale_var is not None:
            rel = math.sqrt(self.swing_scale_var + LEARNED_REL ** 2)
        else:
            rel = 0.01
        if not self.height:
            return SwingPredictor(*self._swing_law(), self.zeta_scale, rel)
        mass = self._pawn_mass() if mass_g is None else mass_g
        return SwingPredictor(*self._swing_law(), self.zeta_scale, rel, mass)

    def _fan(self, ts: Sequence[float], ss: Sequence[float], loads: Sequence[float] | None = None,
             before: tuple[float, float] | None = None, changes: Sequence[float] = (),
             mass_g: float | None = None):
        """The swing fitted across the frequencies the candidates (or the given loads, Σ m·x²) would leave, for the
        arm carrying `mass_g` grams of pawns (default: the likeliest account): (SwingFan, best fit), or None. With
        the swing measured `before` the change (ω, variance of ln ω) and the inertia the candidates add (`changes`),
        also across what that swing says they leave (inference.swing_after); by default the follower's own, for the
        candidates of every account."""
        if loads is None:
            lo = hi = None
            spread: list[float] = []
            for b in self.beliefs:
                base = inertia_of(self.geo, b.pawns)
                d = [c.d_inertia for c in b.candidates]
                lo = base + min(d) if lo is None else min(lo, base + min(d))
                hi = base + max(d) if hi is None else max(hi, base + max(d))
                spread += [min(d), max(d)]
            before, changes = self.swing_before, spread
        else:
            lo, hi = min(loads), max(loads)
        pred = self._predictor(mass_g)
        kappa = self._kappa_for(mass_g)
        w_hi = pred.at(lo)[0] * (1 + FAN_STEP / 2)
        w_lo = pred.at(hi)[0] * (1 - FAN_STEP / 2)
        if before and changes:
            omega, var = before
            inertia = kappa * G_MM_S2 / (omega * omega) / self.swing_model.growth
            reach = math.exp(3.0 * math.sqrt(var + RATIO_FLOOR ** 2))
            w_hi = max(w_hi, omega / math.sqrt(max(0.05, 1.0 + min(changes) / inertia)) * reach)
            w_lo = min(w_lo, omega / math.sqrt(max(0.05, 1.0 + max(changes) / inertia)) / reach)
        most = FAN_MAX
        if pred.rel_sigma > WIDE_REL:
            # the prediction may be far off: the fan spans what the arm may really do, so the swing can say
            spread = math.exp(2.5 * pred.rel_sigma)
            w_hi = min(OMEGA_RANGE[1], w_hi * spread)
            w_lo = max(OMEGA_RANGE[0], w_lo / spread)
            most = FAN_MAX_WIDE
        n = min(most, max(3, math.ceil(math.log(w_hi / w_lo) / FAN_STEP) + 1))
        omegas = [w_lo * (w_hi / w_lo) ** (k / (n - 1)) for k in range(n)]
        made = fan_fit(ts, ss, omegas, [pred.zeta_for(w) for w in omegas], kappa, noise=self.accel_noise.sigma)
        return None if made is None else self._across_damping(ts, ss, *made, kappa)

    def _no_angle(self, kappa: float | None = None) -> tuple[float, float]:
        if not self._accel_seen:
            return 0.0, math.inf
        recent = [s for _, s in list(self.angle)[-50:]]
        if not recent:
            return 0.0, math.inf
        # no clean swing to fit: take the mean, with the swing's size as its uncertainty
        mean = sum(recent) / len(recent)
        spread = max(abs(s - mean) for s in recent)
        kappa = self._kappa_for() if kappa is None else kappa
        return kappa * mean, (kappa * max(spread, 3 * self.accel_noise.sigma)) ** 2


def _chi2_high(k: int) -> float:
    """χ²_k / k at BACK_Z σ above its mean (Wilson-Hilferty): the most k readings of a free swing may miss it by."""
    a = 2.0 / (9.0 * k)
    return (1.0 - a + BACK_Z * math.sqrt(a)) ** 3
