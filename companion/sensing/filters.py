"""Cleaning raw samples: HX711 glitches, noise level, tilt-switch bounce.

Everything here is per sample and O(1): the follower calls it for every row at
hundreds of rows a second, on a Pi.
"""

from __future__ import annotations

import bisect
import math
from collections import deque
from typing import Sequence

# what an HX711 returns when a read goes wrong: a pulse train shifted by one bit
# reads as 0 or -1, a lost clock as the rails of the signed 24-bit range
GLITCH_VALUES = frozenset((0, -1, 0x7FFFFF, -0x800000))
FULL_SCALE = 0x7FFFFF
NEAR_RAIL = FULL_SCALE - 256
SQRT_PI_2 = math.sqrt(math.pi) / 2


def is_glitch(counts: float) -> bool:
    """A reading no healthy channel produces: the glitch values or (next to) a rail."""
    return counts in GLITCH_VALUES or counts >= NEAR_RAIL or counts <= -NEAR_RAIL


class SpikeFilter:
    """Drops spikes of any value — runs of one or two samples — one or two samples late.

    Samples that jump away from their predecessor and straight back with their
    successor are a spike; a real step (a pawn, a hand, the HX711 settling over
    about four samples) stays away, so it passes. On a slope (a hand pressing)
    the neighbours differ: a run counts as a spike when it stands off the line
    between them by far more than they differ — the HX711 spreads any real change
    over several samples, so no real one is that sharp. Two bit errors in a row
    happen (at a 3 % glitch rate, once in a thousand samples of a cell): a run of
    two is held until the sample after it says which it was, so only a jump waits.

    At 10 SPS a short, firm press is read as a bump of a few samples, and its top can stand off the line between
    its shoulders just as a spike does: one cell alone cannot tell them apart. So what was dropped is kept
    (`spikes`, raw), for the follower to look at again with the other cells beside it (`shared_runs`).
    """

    __slots__ = ("pending", "last_v", "dropped", "spikes")
    RUN = 2
    KEPT = 64

    def __init__(self) -> None:
        self.pending: list[tuple[float, float]] = []
        self.last_v: float | None = None
        self.dropped = 0
        self.spikes: deque[tuple[float, float]] = deque(maxlen=self.KEPT)

    def push(self, t: float, v: float, threshold: float) -> list[tuple[float, float]]:
        """Feed one sample; returns the earlier samples now known to be genuine, oldest first (often one, none
        while a jump is being looked at, or several once it proves real)."""
        self.pending.append((t, v))
        out: list[tuple[float, float]] = []
        while self.pending:
            last = self.last_v
            first = self.pending[0][1]
            if last is None or abs(first - last) <= threshold:
                self._release(out)
                continue
            # the first pending sample jumped: is it (with the next) a spike the sample after comes back from?
            decided = False
            for run in range(1, self.RUN + 1):
                if len(self.pending) <= run:
                    break
                after = self.pending[run][1]
                if self._spike(last, [p for _, p in self.pending[:run]], after, threshold):
                    self.spikes.extend(self.pending[:run])
                    del self.pending[:run]
                    self.dropped += run
                    decided = True
                    break
                if run < self.RUN and not self._may_be_spike(last, self.pending[run][1], first, threshold):
                    self._release(out)    # the next one did not jump along with it: a real change
                    decided = True
                    break
            if decided:
                continue
            if len(self.pending) > self.RUN:
                self._release(out)        # the jump held for longer than any spike: a real change
                continue
            break                          # wait for the sample that says
        return out

    def _release(self, out: list) -> None:
        t, v = self.pending.pop(0)
        self.last_v = v
        out.append((t, v))

    @staticmethod
    def _may_be_spike(last: float, p: float, first: float, threshold: float) -> bool:
        """Whether `p` jumped away from `last` to the side `first` did (so the two may be one run)."""
        return abs(p - last) > threshold and (p - last) * (first - last) > 0

    @staticmethod
    def _spike(last: float, run: list[float], after: float, threshold: float) -> bool:
        for p in run:
            if not (abs(p - last) > threshold and abs(p - after) > threshold and (p - last) * (p - after) > 0
                    and (abs(after - last) < threshold or abs(p - (last + after) / 2) > 6 * abs(after - last))):
                return False
        return True


SHARED_SHARE = 0.5     # a dropped run the other cells show at least half of was the load, not a glitch


def shared_runs(own: Sequence[tuple[float, float]], dropped: Sequence[tuple[float, float]],
                others: Sequence[Sequence[tuple[float, float]]]) -> list[tuple[float, float]]:
    """Which of one cell's dropped samples (`dropped`, (t, g), in time order) the other cells' readings (`others`,
    each (t, g) in time order) show too: a run of them is judged against the line between the cell's own readings
    either side of it, and the others' sum against its line between the same two instants. The load is shared by
    every cell, a glitch is one cell's: a run goes back when the others, scaled as this cell follows them over
    `own`, account for at least SHARED_SHARE of how far it stands off its line. With hindsight: every cell has read
    past the run by the time a gesture is judged."""
    others = [o for o in others if len(o) >= 2]
    if not dropped or len(own) < 2 or not others:
        return []

    def at(tr: Sequence[tuple[float, float]], t: float) -> float:
        i = bisect.bisect_right(tr, (t, math.inf)) - 1
        if i < 0:
            return tr[0][1]
        if i + 1 >= len(tr):
            return tr[-1][1]
        (t0, v0), (t1, v1) = tr[i], tr[i + 1]
        return v0 + (v1 - v0) * (t - t0) / (t1 - t0) if t1 > t0 else v0

    def total(t: float) -> float:
        return sum(at(o, t) for o in others)

    # how this cell follows the others over the window: its share of a change, relative to theirs
    t0, g0 = own[0]
    s0 = total(t0)
    sxy = sxx = 0.0
    for t, g in own[1:]:
        x = total(t) - s0
        sxy += x * (g - g0)
        sxx += x * x
    if sxx <= 0:
        return []
    ratio = sxy / sxx
    times = [t for t, _ in own]
    out: list[tuple[float, float]] = []
    runs: list[list[tuple[float, float]]] = []
    for t, g in dropped:
        k = bisect.bisect_left(times, t)
        if runs and bisect.bisect_left(times, runs[-1][-1][0]) == k:     # no reading of its own between: one run
            runs[-1].append((t, g))
        else:
            runs.append([(t, g)])
    for run in runs:
        k = bisect.bisect_left(times, run[0][0])
        if k == 0 or k >= len(own):
            continue      # no reading of its own on both sides: nothing to judge it by
        (ta, ga), (tb, gb) = own[k - 1], own[k]
        sa, sb = total(ta), total(tb)
        ok = True
        for t, g in run:
            u = (t - ta) / (tb - ta)
            off = g - (ga + (gb - ga) * u)
            shown = ratio * (total(t) - (sa + (sb - sa) * u))
            if abs(off - shown) > SHARED_SHARE * abs(off):
                ok = False
                break
        if ok:
            out.extend(run)
    return out


class NoiseEstimate:
    """Per-sample σ of a channel from successive differences while nothing moves.

    The mean absolute difference of two independent N(0, σ²) samples is 2σ/√π;
    each difference is clipped at 5σ so a step or a missed glitch moves the
    estimate only a little. With `order=2` second differences are used instead
    (s[k+1] - 2 s[k] + s[k-1], σ√6 wide): a slow swing, which the first
    difference would mistake for noise, all but cancels in them.
    """

    __slots__ = ("sigma", "_mad", "_prev", "_last", "weight", "floor", "_scale")

    def __init__(self, sigma: float, *, weight: float = 0.02, floor: float = 1e-9, order: int = 1):
        self.sigma = sigma
        # σ = mean|difference| · scale: √π/2 for first differences, √π/√12 for second
        self._scale = SQRT_PI_2 if order == 1 else math.sqrt(math.pi / 12.0)
        self._mad = sigma / self._scale
        self._prev: float | None = None
        self._last: float | None = None
        self.weight = weight
        self.floor = floor
        if order == 1:
            self._prev = math.nan  # marks first differences

    def update(self, v: float) -> None:
        last, prev = self._last, self._prev
        self._last = v
        if last is None:
            return
        if prev is not None and prev != prev:
            d = abs(v - last)
        else:
            self._prev = last
            if prev is None:
                return
            d = abs(v - 2.0 * last + prev)
        cap = 5.0 * self.sigma / self._scale * SQRT_PI_2
        if d > cap:
            d = cap
        self._mad += self.weight * (d - self._mad)
        self.sigma = max(self.floor, self._mad * self._scale)

    def restart(self) -> None:
        """Forget the last samples (the signal moved; the next difference would span a step)."""
        self._last = None
        if self._prev is not None and self._prev == self._prev:
            self._prev = None


class TiltDebouncer:
    """The tilt switch believed only after it has stayed put for `hold_s`.

    Works on sparse rows too (a trace may hold only the switch's changes): the
    debounced value is brought up to date whenever time passes.
    """

    __slots__ = ("hold_s", "raw", "raw_since", "value", "changed_at", "seen")

    def __init__(self, hold_s: float, initial: bool = False):
        self.hold_s = hold_s
        self.raw = initial
        self.raw_since = -math.inf
        self.value = initial
        self.changed_at = -math.inf   # when the contact physically changed (the start of the stable run)
        self.seen = False

    def at(self, t: float) -> bool:
        if self.raw != self.value and t - self.raw_since >= self.hold_s:
            self.value = self.raw
            self.changed_at = self.raw_since
        return self.value

    def feed(self, t: float, closed: bool) -> bool:
        self.at(t)
        if not self.seen:
            # the first reading is the state the trace starts in, not a change
            self.seen = True
            self.raw = self.value = closed
            self.raw_since = self.changed_at = t
            return closed
        if closed != self.raw:
            self.raw = closed
            self.raw_since = t
        return self.at(t)

    def steady_for(self, t: float) -> float:
        """How long the debounced value has held, counted from the physical change (0 while bouncing)."""
        value = self.at(t)
        if self.raw != value:
            return 0.0
        return t - self.changed_at
