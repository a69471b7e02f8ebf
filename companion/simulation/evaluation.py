"""Scoring inferred events against the ground truth of a simulated session.

Used by the tests and by bench/sensing_accuracy.py. An action's truth is its net
change of the pawns on the arm (and whether the arm rests on the board after it);
the follower's events decided between that action's first touch and the next
action's are its answer.

What weight and torque can tell apart is judged from the pawns' true masses, by
the distance d from the true change's (ΔW, Δτ) to the nearest other change one
hand could have made, in units of (0.3 g, 30 g·mm) — five times what the sensors
resolve in the second or two a decision takes (0.06 g, 6 g·mm), the separation a
pick must have to be right 99.5 % of the time (the follower groups candidates by
the same rule, with the masses it has weighed):

- distinct (d ≥ 1): must be inferred exactly;
- the same (d < 0.5): must be flagged ambiguous;
- borderline (in between): counted apart, neither demanded nor forgiven.

When the arm ends on the board the angle only says "tipped": another change of the
same weight that also tips it to the same side counts as the same.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

from companion.games.balance_model import Model
from companion.sensing.events import ArmEvent
from companion.sensing.inference import Geometry, TrackedPawn, enumerate_candidates
from companion.simulation.traces import Action

SAME_WEIGHT_G = 0.3
SAME_TORQUE_GMM = 30.0
SAME_BELOW = 0.5          # d below this: the same to the sensors; from 1 on: distinct


def _torque(geo: Geometry, pawns: Sequence[tuple[str, str, float]]) -> float:
    return sum(geo.x[h] * m for h, _, m in pawns)


def distinguishable(model: Model, action: Action) -> bool:
    """Whether weight and torque alone can tell this action's net change from every other one (d ≥ 1)."""
    return separation(model, action) >= 1.0


def separation(model: Model, action: Action) -> float:
    """d: how far the nearest other change is, in units of (0.3 g, 30 g·mm); 0 when one would tip it alike."""
    geo = Geometry.from_model(model)
    before = action.masses_before or [(h, s, geo.mass[s]) for h, s in action.before]
    after = action.masses_after or [(h, s, geo.mass[s]) for h, s in action.after]
    pawns = [TrackedPawn(h, s, m, 0.0) for h, s, m in before]
    true_key = action.net
    tip = model.tip_torque

    def side(tau: float) -> int:
        return (1 if tau > 0 else -1) if abs(tau) >= tip else 0

    tau_before = _torque(geo, before)
    tau_after = _torque(geo, after)
    # the simulated arm tips by its nominal torque: take its word for the true states
    before_side = (1 if tau_before > 0 else -1) if action.tipped_before else 0
    after_side = (1 if tau_after > 0 else -1) if action.tipped_after else 0
    true_dw = sum(m for _, _, m in after) - sum(m for _, _, m in before)
    true_dt = tau_after - tau_before
    # the pawn a placing puts on the arm weighs what it weighs whichever holder it goes to: the others placing one
    # of its size are taken with its true mass (with the nominal, a heavy L that tipped the arm from W6 was "told
    # apart" from the same L tipping it from W5, which the angle on the board cannot do: our seed 32600018, 344 s)
    placed = {}
    if action.kind == "place":
        rest = list(before)
        for h, s, m in after:
            if (h, s, m) in rest:
                rest.remove((h, s, m))
            else:
                placed[s] = m - geo.mass[s]
    nearest = math.inf
    for c in enumerate_candidates(geo, pawns):
        if c.key == true_key:
            continue
        extra = placed.get(c.size, 0.0) if c.kind == "place" else 0.0
        mean_w, mean_t = c.mean_w + extra, c.mean_t + extra * (geo.x[c.holder] if extra else 0.0)
        dw2 = ((mean_w - true_dw) / SAME_WEIGHT_G) ** 2
        if dw2 >= 1.0:
            continue
        alt_after = tau_before + mean_t
        alt_side = side(alt_after)
        if after_side:
            if alt_side == after_side:
                nearest = min(nearest, math.sqrt(dw2))
            continue
        if alt_side:
            continue
        if before_side:
            # resting on the board before: only the torque after is read
            nearest = min(nearest, math.sqrt(dw2 + ((alt_after - tau_after) / SAME_TORQUE_GMM) ** 2))
            continue
        nearest = min(nearest, math.sqrt(dw2 + ((mean_t - true_dt) / SAME_TORQUE_GMM) ** 2))
    return nearest


@dataclass
class Outcome:
    """How one action was followed."""

    action: Action
    changed: bool                 # the pawns on the arm changed
    distinguishable: bool         # distinct to the sensors (d ≥ 1)
    reported: list[ArmEvent]
    same: bool = False            # the same to the sensors as another change (d < 0.5)
    exact: bool = False           # the reported net change equals the true one
    flagged: bool = False         # reported as ambiguous
    missed_tip: bool = False
    missed_untip: bool = False
    false_events: int = 0
    latency_s: float | None = None


def _net_of(events: Sequence[ArmEvent]) -> tuple[tuple, tuple] | None:
    """The net change reported by the change events, applied one after the other."""
    removed: list[tuple[str, str]] = []
    added: list[tuple[str, str]] = []
    seen = []
    for e in events:
        ch = e.change
        if ch is None or ch.best is None or any(ch is s for s in seen):
            continue
        seen.append(ch)
        for p in ch.best.removed:
            if p in added:
                added.remove(p)
            else:
                removed.append(p)
        added.extend(ch.best.added)
    if not seen:
        return None
    return tuple(sorted(removed)), tuple(sorted(added))


def _when(e: ArmEvent) -> float:
    """The time an event answers for: a change's, when the hands that made it left the arm (a change decided after
    the next hand came — a lift's 1 s hold, a long look — is that gesture's, not the next one's: counted by its
    decision time, a right change was scored against the next action, and the next action's right change with it);
    a tip's or an un-tip's, when it was reported."""
    ch = e.change
    return ch.hands_off_t if ch is not None and ch.hands_off_t else e.t


def score(model: Model, actions: Sequence[Action], events: Sequence[ArmEvent]) -> tuple[list[Outcome], int]:
    """(one Outcome per action, events reported before the first action)."""
    events = sorted(events, key=lambda e: e.t)
    outcomes = []
    early = sum(1 for e in events if actions and _when(e) < actions[0].start)
    for i, a in enumerate(actions):
        end = actions[i + 1].start if i + 1 < len(actions) else math.inf
        mine = [e for e in events if a.start <= _when(e) < end]
        changes = [e for e in mine if e.event in ("place", "remove", "move", "unexplained")]
        tips = [e for e in mine if e.event == "tip"]
        untips = [e for e in mine if e.event == "untip"]
        rem, add = a.net
        changed = bool(rem or add)
        d = separation(model, a) if changed else math.inf
        o = Outcome(a, changed, d >= 1.0, mine, same=d < SAME_BELOW)
        want_tip = a.tipped_after and not a.tipped_before
        want_untip = a.tipped_before and not a.tipped_after
        if changed:
            o.exact = _net_of(changes) == a.net
            # the net change is what is scored here: a description in doubt (a beat of like pawns or the mover's
            # removal, which leave the same pawns) flags the event, not the pawns it leaves
            o.flagged = any(e.change.ambiguous if e.change is not None else e.ambiguous for e in changes)
            # "nothing changed, not surely" after hands that took or left weight is a doubt the game is told of (it
            # asks when a move is due): the change was not claimed sure (our seed 30100001 at 185.95 s, a move that
            # tipped the arm, judged "nothing" at 0.54 with the moves as alternatives, was counted as not flagged)
            o.flagged = o.flagged or any(e.event == "unsure" for e in mine)
        else:
            o.false_events += len(changes)
        o.missed_tip = want_tip and not tips
        o.missed_untip = want_untip and not untips
        o.false_events += max(0, len(tips) - (1 if want_tip else 0)) + max(0, len(untips) - (1 if want_untip else 0))
        if changed and not o.exact:
            # a change reported in pieces that do not add up, or an extra change, is also a false event
            distinct = {id(e.change) for e in changes if e.change is not None}
            o.false_events += max(0, len(distinct) - 1)
        decided = [e.t for e in mine if e.event not in ("unexplained", "unsure")]
        if decided and (changed or want_tip or want_untip):
            o.latency_s = max(0.0, min(decided) - a.hands_off)
        outcomes.append(o)
    return outcomes, early


def _pct(n: int, d: int) -> float | None:
    return None if d == 0 else 100.0 * n / d


def percentile(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    s = sorted(values)
    k = (len(s) - 1) * q
    lo, hi = math.floor(k), math.ceil(k)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


@dataclass
class Summary:
    actions: int = 0
    events: int = 0                 # true physical events: changes, tips, untips
    changes: int = 0
    distinguishable: int = 0
    exact: int = 0
    indistinguishable: int = 0
    flagged: int = 0
    borderline: int = 0
    borderline_exact: int = 0
    borderline_flagged: int = 0
    false_ambiguous: int = 0        # distinguishable, yet flagged
    tips: int = 0
    tips_missed: int = 0
    untips: int = 0
    untips_missed: int = 0
    reported: int = 0
    false_events: int = 0
    latencies: list[float] = field(default_factory=list)

    def add(self, outcomes: Iterable[Outcome], early: int = 0, *, clearing: bool | None = False) -> None:
        """Add outcomes: only game actions (`clearing` False), only those clearing a tipped arm (True),
        or all (None)."""
        self.false_events += early
        self.reported += early
        for o in outcomes:
            a = o.action
            if clearing is not None and a.clearing != clearing:
                continue
            self.actions += 1
            self.reported += len([e for e in o.reported if e.event not in ("unexplained", "unsure")])
            self.false_events += o.false_events
            if o.changed:
                self.changes += 1
                self.events += 1
                if o.distinguishable:
                    self.distinguishable += 1
                    self.exact += o.exact
                    self.false_ambiguous += o.flagged
                elif o.same:
                    self.indistinguishable += 1
                    self.flagged += o.flagged
                else:
                    self.borderline += 1
                    self.borderline_exact += o.exact
                    self.borderline_flagged += o.flagged
            if a.tipped_after and not a.tipped_before:
                self.tips += 1
                self.events += 1
                self.tips_missed += o.missed_tip
            if a.tipped_before and not a.tipped_after:
                self.untips += 1
                self.events += 1
                self.untips_missed += o.missed_untip
            if o.latency_s is not None:
                self.latencies.append(o.latency_s)

    def row(self) -> dict:
        return {
            "events": self.events,
            "exact_pct": _pct(self.exact, self.distinguishable),
            "distinguishable": self.distinguishable,
            "flagged_pct": _pct(self.flagged, self.indistinguishable),
            "indistinguishable": self.indistinguishable,
            "false_ambiguous_pct": _pct(self.false_ambiguous, self.distinguishable),
            "borderline": self.borderline,
            "borderline_exact_pct": _pct(self.borderline_exact, self.borderline),
            "borderline_flagged_pct": _pct(self.borderline_flagged, self.borderline),
            "tips": self.tips,
            "tips_missed": self.tips_missed,
            "untips": self.untips,
            "untips_missed": self.untips_missed,
            "false_events": self.false_events,
            "false_pct": _pct(self.false_events, max(1, self.reported)),
            "latency_median_s": statistics.median(self.latencies) if self.latencies else None,
            "latency_p95_s": percentile(self.latencies, 0.95),
        }


# the stated confidence's bins for its calibration: what a decision applied unasked claims, against how often
# such decisions were right
CONFIDENCE_BINS = ((0.0, 0.9), (0.9, 0.99), (0.99, 0.999), (0.999, 1.0001))
SURE = 0.99            # the arm link's bar: a move this likely is applied unasked
SURE_GOAL = 0.999      # of those, the share that must be right


def calibration_lines(points: Sequence[tuple[float, bool]]) -> tuple[list[str], bool]:
    """The reliability table of (stated confidence, right) pairs, as lines, and whether of those stated at
    `SURE` or more at least `SURE_GOAL` were right. Each bin also says how many wrong its stated odds promise (the sum
    of 1 − p): a bin of 50 decisions near 0.995 is to be wrong about a quarter of a time, so a run that shows one
    has not broken its promise, and a run that shows none over many such bins is less sure than it says."""
    lines = [f"{'stated':>14} {'decisions':>9} {'right':>6} {'observed':>9} {'wrong':>6} {'at the odds':>11}"]
    for lo, hi in CONFIDENCE_BINS:
        inside = [(p, right) for p, right in points if lo <= p < hi]
        if inside:
            right = sum(r for _, r in inside)
            lines.append(f"{f'{lo:.3f}-{min(hi, 1.0):.3f}':>14} {len(inside):>9} {right:>6} "
                         f"{100.0 * right / len(inside):>8.1f} % {len(inside) - right:>6} "
                         f"{sum(1.0 - p for p, _ in inside):>11.2f}")
    sure = [(p, right) for p, right in points if p >= SURE]
    right = sum(r for _, r in sure)
    share = f"{100.0 * right / len(sure):.2f} %" if sure else "—"
    lines.append(f"stated p ≥ {SURE}: {right} of {len(sure)} right ({share}; goal ≥ {100 * SURE_GOAL:.1f} %); "
                 f"{len(sure) - right} wrong where the stated odds promise {sum(1.0 - p for p, _ in sure):.2f}")
    return lines, not sure or right >= SURE_GOAL * len(sure)


# how far apart (in nats) a source of evidence set the truth and the best wrong account: the bins of its table
EVIDENCE_BINS = ((0.0, 1.0), (1.0, 2.0), (2.0, 3.0), (3.0, 5.0), (5.0, 8.0), (8.0, math.inf))


def evidence_lines(pairs: Sequence[Mapping[str, float]], sources: Sequence[str]) -> list[str]:
    """How surely each source of evidence told the truth from the best wrong account, against how often it pointed
    the wrong way. Each pair maps a source to log L(truth) − log L(wrong) (nats: above 0, the truth's way). Were the
    source's likelihood the world's, a pair it sets L apart points the wrong way with probability 1 / (1 + e^|L|):
    per bin of |L|, the pairs it told (those where it said anything), how many pointed the wrong way, and how many
    its odds promise. Fewer than promised: the source is surer than it says (underconfident); more: less sure."""
    def label(lo: float, hi: float) -> str:
        return f"|L| {lo:g}-{hi:g}" if math.isfinite(hi) else f"|L| ≥ {lo:g}"

    lines = [f"{'source':18}" + "".join(f"{label(lo, hi):>19}" for lo, hi in EVIDENCE_BINS),
             f"{'':18}" + f"{'pairs wrong  odds':>19}" * len(EVIDENCE_BINS)]
    for source in sources:
        told = [pair[source] for pair in pairs if abs(pair.get(source, 0.0)) > 1e-6]
        cells = []
        for lo, hi in EVIDENCE_BINS:
            inside = [v for v in told if lo <= abs(v) < hi]
            wrong = sum(v < 0 for v in inside)
            promised = sum(1.0 / (1.0 + math.exp(min(abs(v), 700.0))) for v in inside)
            cells.append(f"{len(inside):>8} {wrong:>4} {promised:>5.2f}" if inside else f"{'—':>19}")
        lines.append(f"{source:18}" + "".join(cells))
    return lines
