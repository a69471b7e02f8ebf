"""Measuring a change once the hands are off, ranking the accounts of it, deciding or asking."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Sequence

from companion.sensing.events import TOP_CANDIDATES, ArmEvent, Change
from companion.sensing.fit import at_longest_look
from companion.sensing.identity import fold, kept_accounts
from companion.sensing.inference import (Candidate, Measurement, TrackedPawn, apply_candidate, fit_of,
                                         inertia_of, judge, log_likelihood, looked_enough, model_torque, rank_beliefs)
from companion.sensing.touches import TouchScale
from companion.sensing.follower.settings import (Belief, KEEP_BELIEF, MAX_BELIEFS_ON_BOARD,
                                                 STEADY_S, SURE_SAID, UNMEASURED_PERIODS, WIDE_REL, _lighter,
                                                 _mass_key)


class Judging:
    """Measuring a change once the hands are off, ranking the accounts of it, deciding or asking.

    A part of ArmFollower (core.py), which holds the state these methods share."""

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
        swung: dict = {}        # the swing the rest was read from, for the decision's check of its own fit
        after = self._window_weight(t, settled_from=self.quiet_since)
        w1 = after[0]
        dw, var_dw, drift = self._weight_change((self.w0, self.var_w0, self.t_w0), after)
        # the arm as the change leaves it loaded (the weight says how much it carries now): its stiffness and its τ_tip
        mass1 = self._pawn_mass() + dw if self.height else None
        kappa1, tip1 = self._kappa_for(mass1), self._tip_torque_for(mass1)
        if board:
            tau1, var_tau1 = board * tip1, 0.0
        elif not self._accel_seen:
            tau1, var_tau1 = 0.0, math.inf
        else:
            if self.mode == "deciding":
                self._find_swing_start(t)
            start = self._free_since(t)
            period = 2 * math.pi / self._swing()[0]
            periods = self.s.min_fit_periods
            if self.swing_scale_var is not None and math.sqrt(self.swing_scale_var) > WIDE_REL:
                # an arm whose swing nobody measured: over less than a period its rest is an extrapolation that
                # rests on a frequency and a damping it may not have; a whole period of the slowest it may
                # plausibly have shows them (UNMEASURED_PERIODS)
                period *= math.exp(math.sqrt(self.swing_scale_var))
                periods = max(periods, UNMEASURED_PERIODS)
            need = max(self.s.min_fit_s, periods * period)
            if t - start < need and not final:
                # the first look comes when the swing has shown enough, not up to a tick later
                self._next_eval = min(self._next_eval, start + need)
                return None, board
            fit, ts, ss = self._fit(start, t, pawns=pawns)
            if fit is not None:
                made = self._fan(ts, ss, mass_g=mass1)
                if made is not None:
                    fan, fit = made
                    pred = self._predictor(mass1)
            if fit is None or (fit.rms > 1.5 * self.accel_noise.sigma and fit.n >= 30):
                # too little swing yet, or one the model does not follow (a bounce off the board): wait
                if not final:
                    return None, board
            if fit is None:
                tau1, var_tau1 = self._no_angle(kappa1)
            else:
                margin = 3 * fit.rest_sigma + self._limit_margin()
                if abs(fit.rest) >= self.s_max - margin and not final and self._may_reach_board(fit, ts, t):
                    return None, board      # on its way to the board: wait for it to land (or not)
                tau1 = kappa1 * fit.rest
                var_tau1 = (kappa1 * fit.rest_sigma) ** 2
                swung = {"swing_n": fit.n, "swing_rss": fit.rms * fit.rms * max(1, fit.n - 3),
                         "accel_noise2": self.accel_noise.sigma ** 2}
        var0 = self.var_tau0
        if self.board0 and not board:
            var0 = self.var_tau0 + self.s.torque_band_gmm ** 2
        touches, by_size, gesture, others = self._gesture_touches(t, w1)
        push = self._board_push(gesture) if touches else None
        # the arm seen resting free before the hands, its rest read from its swing: its tip torque lay beyond that
        free_before = not self.board0 and self._accel_seen and math.isfinite(self.var_tau0)
        m = Measurement(dw, var_dw, self.tau0, var0, tau1, var_tau1, board,
                        tip1, self.geo.tip_sigma ** 2, self.s.rel_weight, self.s.rel_torque,
                        fan if not board else None, pred, touches, by_size, self.hands.sigma_mm,
                        self.hands.gain, gesture, touch_scale=self._touch_scale(),
                        touch_astray=self.hands.astray, touch_clipped=self.hands.clipped,
                        touch_pieces=self.touch_counts.pieces,
                        other_touches=others, drift=drift,
                        span_mm=self._touch_span(), swing_before=self.swing_before or (),
                        tip_before=self._tip_torque_for() if free_before else 0.0, push=push,
                        lift=self._pause_lift(gesture) if by_size else (),
                        lift_torque=self._pause_torque(gesture) if touches else None,
                        pause_back=bool(touches) and self._pause_back(gesture), **swung)
        return m, board

    def _evaluate(self, t: float) -> None:
        since = t - self.t_off
        if since < self.s.max_wait_s:
            # the longest wait ends when it ends, not up to a tick later
            self._next_eval = min(self._next_eval, self.t_off + self.s.max_wait_s)
        board_state = self._board(t)
        self._boards.append((t, board_state))
        board_now, ready = board_state
        self._look(t, since, board_state)
        if (ready and self.board_reported is not None and board_now != self.board_reported
                and since >= self.s.tip_deadline_s):
            # the tip is plain once the hands are off; the change that caused it may take longer to name. A change
            # named at this very look reports its tip itself, after it: a tip the game hears before its move is
            # refused (our seed 27300001 turn 13: a beat that tipped the arm, decided at the look the tip was due)
            self._report_board(t, board_now)

    def _look(self, t: float, since: float, board_state: tuple[int, bool]) -> None:
        m, board = self._measure_after(t, since >= self.s.max_wait_s, board_state=board_state)
        if m is None:
            return
        # resting on the board the angle is pinned: once the weight has settled, waiting adds nothing
        final = since >= self.s.max_wait_s or (board != 0 and since >= self.s.board_dwell_s + 0.2)
        ranked, pairs, m = self._rank(t, m, board_state, since >= self.s.max_wait_s)
        check = self._check(m)
        verdict = judge(ranked, m, self.s.resolution, final=final, decide_at=self.s.decide_at, check=check)
        last_look = since >= self.s.max_wait_s
        if not verdict.decided and not final:
            seen = self._seen_enough(since, ranked, m, check)
            if seen is not None:
                verdict, last_look = seen, True
            elif self.game_takes is not None:
                verdict = self._as_the_game_takes(t, ranked, m, check) or verdict
        before = self._alike_best
        if verdict.ranked:
            self._alike_best = (self.t_off, verdict.ranked[0].candidate.key)
        among_alikes = (verdict.decided and len(verdict.group) > 1 and not last_look
                        and verdict.ranked[0].probability < self.s.decide_at)
        if among_alikes and not self._touches_read(t):
            # look-alikes the hands tell apart only nearly are judged by touches placed once the cells have read
            # past their settling: placed sooner they were surer than they were (foreign quiet 27706 turn 17, 0.30 s
            # after the cells saw the hands go: E1 → E2 applied as E5 → E6 at 0.9933 on two touches at σ 45-48 mm).
            # Touches that already set one apart beyond doubt are not waited for: most moves have a like pawn
            # somewhere that could have made them, and waiting for each gave back the whole of the earlier look
            self._next_eval = min(self._next_eval, self._touches_ready_at())
            return
        if among_alikes and before != self._alike_best:
            # ... and a verdict between look-alikes is given only when the look before found the same best: touches
            # placed astray waver from look to look, and the look that waited for them could catch the wrong one at
            # its height (our seed 29400000 turn 24: E2 → E1 read as E6 → E5, 0.67 → E3 → E2 0.72 → E6 → E5 0.87).
            # The look before may be one that could not yet judge by the touches: a best that stood across the
            # cells' settling is not held a look longer (holding every such verdict a look cost 0.06 s of median)
            return
        if verdict.decided and _lighter(verdict.ranked[0].candidate) and since < self.s.remove_hold_s:
            # ... and so does the hold on a pawn taken off (a tick is 0.1 s: a tenth of the hold)
            self._next_eval = min(self._next_eval, self.t_off + self.s.remove_hold_s)
            return
        if verdict.decided and since < self.s.max_wait_s and self._handled_for_nothing(verdict, m):
            return
        if verdict.decided:
            self._decide(t, verdict, m, board, pairs, last_look=last_look)
        elif not verdict.explained and since >= self.s.unexplained_s:
            self._unexplained(t, m, board, ranked)

    def _seen_enough(self, since: float, ranked, m: Measurement, check):
        """The verdict the longest wait would give, once waiting for it can no longer change it: the accounts that
        weigh are as far apart as the longest look would set them (`looked_enough`: what is left of their
        uncertainty is their own — the holders' places on an arm nobody measured, the pawns' masses) and that
        verdict has stood unchanged for STEADY_S of looks, so the rest it was read from has stopped moving. Not sure
        enough is then flagged as it would be 3 s later — the players are not kept waiting for nothing."""
        final = judge(ranked, m, self.s.resolution, final=True, decide_at=self.s.decide_at, check=check)
        if not final.decided:
            self._steady = None
            return None
        if final.fit.holds < SURE_SAID:
            # a fit short of its bar may yet come to it as the look grows (the residuals of a hand's tail are a
            # shrinking share of a longer swing: a calibrated arm's placement at 10 SPS held 0.97-0.98 for 1 s, then
            # more): wait, unless even the best a longer look could give stays short of it
            start = self._free_since()
            grow = (self.t_off + self.s.max_wait_s - start) / max(self.t - start, 1e-3)
            if at_longest_look(final.fit, grow).holds >= SURE_SAID:
                return None
        key = (self.t_off, final.ranked[0].candidate.key, final.ambiguous, final.confidence >= SURE_SAID,
               tuple(sorted(s.candidate.key for s in final.group)))
        if self._steady is None or self._steady[0] != key:
            self._steady = (key, since)
        if since - self._steady[1] < STEADY_S:
            return None
        table = self._belief_table()
        if not looked_enough(ranked, m, self.s.resolution, [row[3] for row in table]):
            return None
        return final

    def _as_the_game_takes(self, t: float, ranked, m: Measurement, check):
        """The verdict the longest wait would give, when the game would apply a move for it now (`game_takes`, at
        the bar this follower decides early at): the sensors alone could not yet name the change, but its legal
        moves are told apart already, from the same readings."""
        verdict = judge(ranked, m, self.s.resolution, final=True, decide_at=self.s.decide_at, check=check)
        if not verdict.decided or verdict.fit.holds < SURE_SAID or verdict.ranked[0].candidate.kind == "none":
            return None
        return verdict if self.game_takes(self._change_of(t, verdict, m), self.s.decide_at) else None

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
        self._boards.append((t, board_state))
        m, board = self._measure_after(t, True, board_state=board_state)
        if m is not None:
            ranked, pairs, m = self._rank(t, m, board_state, True)
            verdict = judge(ranked, m, self.s.resolution, final=True, decide_at=self.s.decide_at,
                            check=self._check(m))
            if verdict.decided:
                self._decide(t, verdict, m, board, pairs)
            elif not verdict.explained:
                self._unexplained(t, m, board, ranked)
        out, self._new = self._new, []
        return out

    def _handled_for_nothing(self, verdict, m: Measurement) -> bool:
        """Whether "nothing changed" is the verdict on a gesture the hands made: a pawn put back where it was, or —
        far likelier — a move the swing has not yet shown. Only the swing's rest tells the two apart (a move of like
        pawns changes the torque alone), so it is judged at the last look — whenever a touch took or left weight the
        cells resolve, however little of a pawn's: cells at 10 SPS blur a quick lift (foreign arm, quiet, seed 9207:
        an M moved one holder, its lift seen as 1.6 of its 6 g, and the rest read 0.4 s after the hands left 4.5σ
        short of the move's torque, so "nothing changed" was decided then and the move never asked about)."""
        return verdict.ranked[0].candidate.kind == "none" and self._touched_weight(m)

    def _touched_weight(self, m: Measurement) -> bool:
        """Whether a touch of the gesture took or left weight the cells resolve, however little of a pawn's."""
        resolved = self.s.resolution.group_distance * self.s.resolution.weight_g
        return any(abs(tc.lifted) >= resolved for tc in m.touches)

    def _rank(self, t: float, m: Measurement, board_state, final: bool):
        """Candidates ranked against `m` (each at the swing it would leave, when `m` has a fan)."""
        ranked, pairs = rank_beliefs(self._belief_table(), m)
        return ranked, pairs, m

    def _check(self, m: Measurement):
        """How well an account explains the readings of `m` (fit.py), for the account from its own belief."""
        table = self._belief_table()
        return lambda s: fit_of(s.candidate, m, s.shift, table[s.hypothesis][3], s.distance2)

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
        seen = [b for tb, b in self._boards if tb <= cut]
        board_state = seen[-1] if seen else (self._boards[0][1] if self._boards else (0, False))
        m, board = self._measure_after(cut, True, board_state=board_state)
        if m is None:
            return
        ranked, pairs, m = self._rank(cut, m, board_state, True)
        # cut short by a hand, the quiet spell must explain itself well (a resting hand fits poorly)
        verdict = judge(ranked, m, self.s.resolution, final=True, decide_at=self.s.decide_at, explain_d2=16.0,
                        check=self._check(m))
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

    def _change_of(self, t: float, verdict, m: Measurement, *, last_look: bool = False) -> Change:
        """The change `verdict` names, from the pawns of the account its best starts from."""
        top = verdict.ranked[0]
        source = self.beliefs[top.hypothesis].pawns
        after = apply_candidate(self.geo, source, top.candidate, placed_mass=self._placed_mass(top.candidate, m))
        return Change(t, top.candidate, tuple(verdict.ranked[:TOP_CANDIDATES]), tuple(verdict.group),
                      verdict.confidence, verdict.ambiguous, m, tuple(source), tuple(after), self.geo,
                      hands_off_t=self.t_off, swing_from=self._swing_began(),
                      beliefs_before=tuple((b.log_weight, tuple(b.pawns)) for b in self.beliefs),
                      described=top.described, retold=top.retold, fit=verdict.fit, last_look=last_look)

    def _decide(self, t: float, verdict, m: Measurement, board: int, pairs, *, last_look: bool = False) -> None:
        best = verdict.ranked[0].candidate
        self._w_before_change = (self.w0, self.var_w0, self.t_w0)
        change = self._change_of(t, verdict, m, last_look=last_look)
        after = list(change.after)
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
        if best.kind == "none" and change.flagged and self._touched_weight(m):
            # "nothing changed", not surely, after hands that took or left weight: a pawn put back where it was, or a
            # move the readings barely show — the game, which knows whether a move is due, is told (our seed 26800003
            # turn 20: M W3 → W2, 114 g·mm, judged "no change" at 0.98 at the last look, and nothing was asked)
            events.append(ArmEvent(t, "unsure", confidence=verdict.confidence, ambiguous=True, change=change))
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
        floor = pairs[0][0] * KEEP_BELIEF
        table = self._belief_table()
        for weight, hi, cand in pairs:
            if weight < floor:
                break
            src = self.beliefs[hi].pawns
            pawns = apply_candidate(self.geo, src, cand, placed_mass=self._placed_mass(cand, m))
            occ = _mass_key(pawns)
            if occ in merged:
                merged[occ][0] += weight
            else:
                ll = log_likelihood(cand, m, table[hi][2], table[hi][3])[0]
                merged[occ] = [weight, pawns, cand, ll]
            if len(merged) >= 4 * MAX_BELIEFS_ON_BOARD:
                break
        cap = MAX_BELIEFS_ON_BOARD if (self.board0 or m.censored1) else self.s.max_beliefs
        everything = sorted(merged.values(), key=lambda e: -e[0])
        ordered, dropped = kept_accounts(everything, cap)
        # an account dropped that only gave like pawns other masses leaves them in doubt (identity.py)
        fold(ordered, dropped)
        rep = _mass_key(reported)
        ordered.sort(key=lambda e: (_mass_key(e[1]) != rep, -e[0]))
        best = max(e[0] for e in ordered)
        if any(b.pawns for b in self.beliefs) and not any(e[1] for e in ordered):
            self._emptied_by_word = False      # the arm seen emptied: its weight now is the empty arm's
        refine = not m.censored1 and not self.board0
        self.beliefs = [Belief(math.log(w / best), pawns, self._candidates(pawns),
                               c if refine else None, ll, m if refine else None)
                        for w, pawns, c, ll in ordered]

    def _settle_after(self, t: float, m: Measurement, board: int) -> None:
        emptied = self._weighs_empty(m)
        self.mode = "settled"
        self.board0 = board
        self.tau_settled = m.tau1 if not board else None
        self.var_tau_settled = m.var_tau1
        self.w0 = self.w0 + m.dw
        if emptied:
            # the arm weighs what it did empty, yet the accounts hold pawns: they lost step on the way — a change no
            # account explained leaves the pawns as they were, and which pawn each of a cleared arm's removals took
            # is never told — and no pawn is on it now (ours, noisy 80 SPS, seed 31200013: 21.9 g of pawns held
            # after a clearing, the next game's places unexplained; medium 10 SPS 31500018: one pawn held after the
            # clearing's last removal, explained, until a place 146 s later was not)
            self.beliefs = [Belief(0.0, [], self._candidates([]))]
            self._weigh_pending = None
            self._emptied_by_word = False

    def _touch_scale(self) -> TouchScale:
        """The hands' scale on a located σ, a touch that moved less than half the lightest pawn taken as weightless."""
        return replace(self.hands.touch_scale, weightless_g=0.5 * min(self.geo.mass.values()))

    def _weighs_empty(self, m: Measurement) -> bool:
        """Whether the arm after the change `m` weighs as it did when the follower last held it empty — within half
        the lightest pawn, the zero's drift since taken off and known well enough to tell — while an account holds
        pawns (the accounts and the weight move together only as long as every change was explained)."""
        if self._empty_weight is None or not any(b.pawns for b in self.beliefs):
            return False
        dw, var, _ = self._weight_change(self._empty_weight, (self.w0, self.var_w0, self.t_w0))
        half = 0.5 * min(self.geo.mass.values())
        return abs(dw + m.dw) < half and 4.0 * math.sqrt(var + m.var_dw) < half

    def _unexplained(self, t: float, m: Measurement, board: int, ranked) -> None:
        # no holder named: no candidate explains it, and two hands at once leave touches located between them
        # (the board check names the holder once the arm is compared with the game)
        msg = "the arm changed in a way no single pawn explains (two pawns at once?): check its pawns against the page"
        details = (f"the arm settled {m.dw:+.1f} g and "
                   + ("came to rest on the board" if board else f"{m.tau1 - m.tau0:+.0f} g·mm")
                   + " from where it was")
        change = Change(t, None, tuple(ranked[:TOP_CANDIDATES]), (), 0.0, True, m, tuple(self.pawns),
                        tuple(self.pawns), self.geo, hands_off_t=self.t_off,
                        swing_from=self._swing_began())
        self.changes.append(change)
        self.notice = msg
        self._settle_after(t, m, board)
        events = [ArmEvent(t, "unexplained", confidence=0.0, ambiguous=True, change=change, message=msg,
                           details=details)]
        if self.board_reported is not None and board != self.board_reported:
            self.board_reported = board
            events.append(ArmEvent(t, "tip" if board else "untip", confidence=1.0 if self.tilt.seen else 0.95))
        self._emit(events)
