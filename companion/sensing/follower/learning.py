"""The game's word on the arm: occupancy, confirmed moves, and what they teach (hands, settling, drift, masses)."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, Iterable, Mapping, Sequence

from companion.sensing.drift import MIN_SPELL_S
from companion.sensing.height_fit import HeightFit
from companion.sensing.place_fit import PlaceFit
from companion.sensing.events import Change
from companion.sensing.identity import fold, kept_accounts
from companion.sensing.inference import (Candidate, Measurement, TrackedPawn, apply_candidate, inertia_of,
                                         log_likelihood, model_torque, move_candidates, nominal_pawns, touches_for)
from companion.sensing.follower.settings import Belief, KEEP_BELIEF, _mass_key


class Learning:
    """The game's word on the arm: occupancy, confirmed moves, and what they teach (hands, settling, drift, masses).

    A part of ArmFollower (core.py), which holds the state these methods share."""

    def set_occupancy(self, pawns: Iterable[tuple[str, str]]) -> None:
        """The game's word on what is on the arm. Pawns already tracked keep their weighed mass; a pawn
        the follower placed elsewhere is one of the pawns weighed so far, so it gets their mean and spread. When
        the game says what the follower already holds (the page's next roll after a move the sensors saw), every
        account of which like pawn is where stays open: only their masses can tell them apart, later."""
        wanted = nominal_pawns(self.geo, pawns)
        key = sorted((p.holder, p.size) for p in wanted)
        same = [b for b in self.beliefs if sorted((p.holder, p.size) for p in b.pawns) == key]
        if not wanted and not same:
            self._emptied_by_word = True
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
        self.beliefs = [Belief(0.0, out, self._candidates(out))]
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
        made = self._fan(ts, ss, loads=loads, before=m0.swing_before or None,
                         changes=[s.candidate.d_inertia for s in change.ranked])
        if made is None:
            return None
        fan, best = made
        w1, var1, t1 = self._window_weight(t, settled_from=self.t_off)
        dw, var_dw, drift = self._weight_change(self._w_before_change, (w1, var1, t1))
        kappa = self._kappa_for()
        # the fit check reads the fan's residuals over this longer swing: judged against the first look's sample
        # count they came out as many times the noise as the look was longer (foreign normal 24002 turn 8: F 5.1
        # where the swing fitted at 1.0, every legal move mixed to an even share, and the turn asked)
        m = replace(m0, tau1=kappa * best.rest, var_tau1=(kappa * best.rest_sigma) ** 2, fan=fan,
                    swing=self._predictor(), swing_n=best.n, swing_rss=best.rms * best.rms * max(1, best.n - 3))
        if m0.touches:
            # a decision before the second look at the hands (a second after they left) judged the touches from
            # the first: the longer look places them from more of the swing
            touches, by_size, gesture, others = self._gesture_touches(t, w1, w_before=self._w_before_change[0])
            if touches:
                m = replace(m, touches=touches, touches_by_size=by_size, gesture=gesture, other_touches=others,
                            lift=self._pause_lift(gesture) if by_size else (),
                            lift_torque=self._pause_torque(gesture), pause_back=self._pause_back(gesture))
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
        height_from = (options[0][2], best, change) if not replay else None
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
        everything = sorted(merged.values(), key=lambda e: -e[0])
        ordered, dropped = kept_accounts(everything, self.s.max_beliefs)
        fold(ordered, dropped)      # (identity.py)
        ordered.sort(key=lambda e: -e[0])
        self._weigh_pending = None
        refine = not replay and not m.censored1 and self.mode != "deciding"
        self.beliefs = [Belief(math.log(w / ordered[0][0]), pawns, self._candidates(pawns),
                               c if refine else None, ll, m if refine else None)
                        for w, pawns, c, ll in ordered]
        if height_from is not None:
            self._learn_height(*height_from)
        if self.board0:
            self.tau0, self.var_tau0 = model_torque(self.geo, self.pawns)

    def _learn_height(self, pool: Sequence[TrackedPawn], best: Candidate, change: Change) -> None:
        """An arm whose loaded stiffness nobody measured: how far the confirmed change moved the torque, against how far
        the angle moved, says how high the pawns sit (height_fit.py). The angle after it is read once the arm has
        rested until the next hand (the whole spell's swing: a decision's short look is a few times less sure, and
        its errors lean with the swing the follower predicted from the height it is learning)."""
        m = change.measurement
        self._height_pending = None
        if ((self.height_fit is None and self.place_fit is None) or m.censored1 or self.board0
                or not math.isfinite(m.var_tau0)):
            return
        after = apply_candidate(self.geo, list(pool), best, placed_mass=self._placed_mass(best, m))
        m0, m1 = sum(p.mass_g for p in pool), sum(p.mass_g for p in after)
        net: dict[str, float] = {}       # each holder's net change of mass
        for p in after:
            net[p.holder] = net.get(p.holder, 0.0) + p.mass_g
        for p in pool:
            net[p.holder] = net.get(p.holder, 0.0) - p.mass_g
        # (the rest before was read through the stiffness the follower had then)
        self._height_pending = (change, m.tau0 / self._kappa_for(m0), m0, m1, net, m.var_tau0 + best.c_tt)

    def _learn_height_after(self, tau1: float, var_tau1: float) -> None:
        """The rest the arm kept until the next hand, after the change confirmed last: the look at the height."""
        pending, self._height_pending = self._height_pending, None
        if pending is None or not self.changes or self.changes[-1] is not pending[0]:
            return
        change, sin0, m0, m1, net, var = pending
        if abs(self._pawn_mass() - m1) > 0.5:
            return
        sin1 = tau1 / self._kappa_for(m1)
        if self.place_fit is not None:
            self._learn_places(sin0, m0, sin1, m1, net, var + var_tau1)
            return
        moved = sum(a * self.geo.x[h] for h, a in net.items())
        self.set_height(self.height_fit.add(HeightFit.look(self.kappa, sin0, m0, sin1, m1, moved, var + var_tau1)))

    def _learn_places(self, sin0: float, m0: float, sin1: float, m1: float, net: Mapping[str, float],
                      var: float) -> None:
        """An arm whose holders nobody measured: one confirmed change as a look at where the holders it touched sit
        (and at the pawns' height, when nobody measured that either); the candidates from then on are predicted
        from the places learned, with what is still uncertain of them (place_fit.py)."""
        fit = self.place_fit
        known = sum(a * self.geo.x[h] for h, a in net.items() if h not in fit.index)
        if not fit.learns_height:
            known += self.height * (sin1 * m1 - sin0 * m0)
        if fit.add(PlaceFit.look(self.kappa, sin0, m0, sin1, m1, net, known, var)):
            self.use_places()

    def use_places(self) -> None:
        """The holders' places (and the pawns' height) as the place fit has them now: every account of the pawns is
        predicted from them."""
        fit = self.place_fit
        if fit.learns_height:
            self.set_height(fit.height)
        self.geo = replace(self.geo, x={**self.geo.x, **fit.places()}, x_cov=fit.place_cov())
        for b in self.beliefs:
            b.candidates = self._candidates(b.pawns)
        if self.board0:
            self.tau0, self.var_tau0 = model_torque(self.geo, self.pawns)

    def set_height(self, height_mm: float) -> None:
        """The pawns' height above the pivot the follower reads the loaded arm with (its stiffness and its swing)."""
        self.height = height_mm
        self.swing_model = replace(self.swing_model, height_mm=height_mm)

    def learn_from(self, change: Change) -> None:
        """Learn the hands and the cells' settling from a change as from a confirmed move — for a follower with no
        game to confirm its moves (`companion analyze`), from the changes that no other account explains."""
        if change.best is not None and not change.flagged:
            # (a description in doubt would teach the hands touches they did not make)
            self._learn_hands(change.best, change.measurement)
            if self.changes and self.changes[-1] is change:
                # ... and an unmeasured arm its holders' places and pawns' height, once the arm has rested after it
                self._learn_height(list(change.before), change.best, change)

    def _learn_hands(self, best: Candidate, m: Measurement) -> None:
        """Where the hands touched for `best`: the hands' gain and spread learn from it, and every shape of settling
        places its touches; the best-placing shape is used from then on. Touches a decision placed before the cells
        had read enough after them (`_touches_read`) are placed again for this, once they have, while the arm
        rests after the move."""
        if self._hands_pending is not None:
            self._learn_hands_later(self.t)
        # (counted as judged: the touches placed again later are placed knowing how many the move made)
        self.touch_counts.learn(len(touches_for(best, m)), len(best.touch_x))
        self._drift_from_move(best, m)
        got = (m.lift_torque or {}).get(best.size)
        if got is not None and best.lifts is not None and len(best.touch_x) == 2:
            mass, mass_sigma = best.lifts
            self.pause_scale.learn((got[0], got[2]), mass * best.touch_x[0], (mass_sigma * best.touch_x[0]) ** 2)
        cached = self._touch_cache
        if (cached is not None and cached[1] == 0 and cached[2][2] is m.gesture and m.gesture is not None
                and self.mode == "settled" and self.changes and self.changes[-1].measurement is m):
            self._hands_pending = (best, m)
            if self._touches_read(self.t):
                self._learn_hands_later(self.t)
            return
        self._learn_touches(best, m)

    def _learn_hands_later(self, t: float) -> None:
        """Learn the hands from the move waiting for it, its touches placed from the readings up to `t`."""
        best, m = self._hands_pending
        self._hands_pending = None
        cached = self._touch_cache
        if cached is not None and cached[2][2] is m.gesture:
            w1 = self._window_weight(t, settled_from=self.t_off)[0]
            touches, by_size, gesture, _ = self._gesture_touches(t, w1, w_before=self._w_before_change[0],
                                                                 to_learn=True)
            if touches:
                m = replace(m, touches=touches, touches_by_size=by_size, gesture=gesture)
        self._learn_touches(best, m)

    def _learn_touches(self, best: Candidate, m: Measurement) -> None:
        self.hands.learn(touches_for(best, m), best.touch_x)
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
                out.append(replace(p, holder=h))
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

    def _reweigh_beliefs(self, tau: float, var_tau: float, long=None) -> None:
        """The arm has rested since the last change: judge that change again with the whole settled spell
        (a few g·mm instead of the ten or so a quick decision had), and re-weigh the beliefs it left.
        `long` is (SwingFan, best fit) of that spell, across the accounts' own swings."""
        changed = False
        kappa = self._kappa_for()
        for b in self.beliefs:
            m = b.via_measurement
            if b.via is None or m is None:
                continue
            better = m
            if long is not None and long[1].rest_sigma * kappa < math.sqrt(m.var_tau1):
                better = replace(m, tau1=kappa * long[1].rest, var_tau1=(kappa * long[1].rest_sigma) ** 2,
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
                    b.candidates = self._candidates(b.pawns)
                    break
        seen = self.weighed.get(size)
        if seen and seen[-1] == first:
            seen[-1] = mass
