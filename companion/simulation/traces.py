"""Traces from the simulated table: scripted hands on a SimulatedTable, sampled like real parts.

The table (companion.simulation.table) supplies the physics — angle, weight,
board contact, hand presses. This module samples it the way the real parts
would, with what real HX711s do that the simple simulated driver does not:
four-sample settling after a step, Gaussian noise, single-sample glitches (0, -1,
either rail, and now and then a random bit error), slow offset drift per channel,
sample-clock jitter; the accelerometer at 100 Hz with noise; the tilt switch
polled, bouncing for a few milliseconds at each change.

A `TableScript` drives it: place / remove / move / beat / touch / clear / wait,
each done by a hand that presses on the arm. Every action is recorded as ground
truth (when the hands left, what the net change was, whether the arm rests on the
board afterwards), which the tests and the benchmark compare the inference with.
"""

from __future__ import annotations

import math
import random
from collections import deque
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterable, Sequence

from companion.foundation.clock import FakeClock
from companion.games import balance_physics as bp
from companion.games.balance_model import Model
from companion.simulation.table import SimulatedTable
from companion.sensing.calibration import ArmCalibration, CellCalibration
from companion.sensing.trace import format_row

Row = tuple[float, str, float]
STEP_S = 0.005
FULL_SCALE = 0x7FFFFF
FIR = (0.4, 0.3, 0.2, 0.1)     # newest first: an HX711 step reaches its value over ~4 samples


@dataclass(frozen=True)
class NoiseProfile:
    name: str = "quiet-10sps"
    cells: int = 4
    rate_sps: float = 10.0
    noise_counts: float = 30.0
    glitch_rate: float = 0.002
    bit_error_share: float = 0.1          # of the glitches: a random bit flipped rather than a rail or 0/-1
    drift_counts_per_s: float = 3.0       # each cell drifts at up to this, either way
    drift_walk_counts: float = 2.0        # plus a random walk, counts per √s
    settle_fir: tuple[float, ...] = FIR
    counts_per_gram: float = 2150.0
    zero_counts: float = 8000.0
    jitter: float = 0.02                  # relative sample-interval jitter
    tremor: float = 0.03                  # a hand's force wavers by this fraction (physiological tremor)
    tremor_hz: float = 9.0
    accel_hz: float = 100.0
    accel_noise_g: float = 0.002
    tilt_hz: float = 200.0
    bounce_s: float = 0.008


PROFILES = {
    "quiet-10sps": NoiseProfile(),
    "medium-10sps": NoiseProfile("medium-10sps", rate_sps=10.0, noise_counts=60.0, glitch_rate=0.01),
    "medium-80sps": NoiseProfile("medium-80sps", rate_sps=80.0, noise_counts=60.0, glitch_rate=0.01),
    "noisy-80sps": NoiseProfile("noisy-80sps", rate_sps=80.0, noise_counts=100.0, glitch_rate=0.03,
                                drift_counts_per_s=5.0, drift_walk_counts=4.0),
}


class _SimCell:
    __slots__ = ("name", "share", "k", "zero", "drift", "walk", "next_t", "period", "history")

    def __init__(self, name: str, share: float, k: float, zero: float, drift: float, period: float, t: float,
                 taps: int = len(FIR)):
        self.name = name
        self.share = share
        self.k = k
        self.zero = zero
        self.drift = drift
        self.walk = 0.0
        self.period = period
        self.next_t = t
        # as long as this table's settling: a shorter memory would never fill, and the cell would read sharp
        self.history: deque[float] = deque(maxlen=max(1, taps))


class SensorSim:
    """Samples a SimulatedTable the way real load cells, an accelerometer and a tilt switch would."""

    def __init__(self, table: SimulatedTable, clock: FakeClock, profile: NoiseProfile, *, seed: int = 0,
                 level_g: float = 0.0, names: Sequence[str] | None = None,
                 calibration: ArmCalibration | None = None, model: Model | None = None):
        """`names` the load cells (default load0…); `calibration` makes the sensors read as it says
        (its cells, their tare and counts per gram, the accelerometer's level) — for a trace that
        matches an existing config. `model`: the balance model the arm was built to, when the table's
        own (the arm as built) differs from it."""
        self.table = table
        self.model = model
        self.clock = clock
        self.p = profile
        self.rng = random.Random(seed)
        self.origin = clock.now()
        rng = self.rng
        if calibration is not None:
            names = [c.name for c in calibration.cells]
            level_g = calibration.level_g
        names = list(names) if names else [f"load{i}" for i in range(profile.cells)]
        self.level = level_g
        raw_shares = [rng.uniform(0.8, 1.2) for _ in names]
        total = sum(raw_shares)
        t = clock.now()
        arm = table.arm_mass_g
        self.cells = []
        for i, (name, share) in enumerate(zip(names, (r / total for r in raw_shares))):
            if calibration is not None:
                c = calibration.cells[i]
                k = c.counts_per_gram
                zero = c.offset_counts - share * arm * k
            else:
                k = profile.counts_per_gram * rng.uniform(0.95, 1.05)
                zero = profile.zero_counts + rng.uniform(-2000, 2000)
            self.cells.append(_SimCell(name, share, k, zero,
                                       rng.uniform(-profile.drift_counts_per_s, profile.drift_counts_per_s),
                                       1.0 / profile.rate_sps, t + rng.uniform(0, 1.0 / profile.rate_sps),
                                       len(profile.settle_fir)))
        self.accel_next = t + rng.uniform(0, 1.0 / profile.accel_hz)
        self.tilt_next = t
        self.tilt_contact = False
        self.tilt_changed = -math.inf
        self.tilt_written: int | None = None
        self.tilt_written_t = -math.inf
        # pawns heavier or lighter than nominal: (from clock time, extra grams, extra g·mm), applied in order
        self.offsets: list[tuple[float, float, float]] = [(t, 0.0, 0.0)]
        self.stuck = False
        self.touching = False
        self.tremor_phase = 0.0
        self.prev = self._snap()
        self.prev_t = t

    def _snap(self) -> tuple[float, float, bool]:
        s = self.table.snapshot()
        now = self.clock.now()
        m = self.table.model
        hand = s["weight_g"] - self.table.arm_mass_g - sum(m.physics.pawn_mass_g[z] for _, z in s["pawns"])
        if hand > 1e-6 and self.p.tremor:
            # a pressing hand never holds still: its force wavers by a few percent, around ten times a second
            self.tremor_phase += 2 * math.pi * self.p.tremor_hz * STEP_S * self.rng.uniform(0.7, 1.3)
            s["weight_g"] += hand * self.p.tremor * math.sin(self.tremor_phase)
        while len(self.offsets) > 1 and self.offsets[1][0] <= now:
            self.offsets.pop(0)
        _, dw, dtau = self.offsets[0]
        theta, on_board = s["theta"], s["on_board"]
        if dtau:
            kappa = self.table.kappa_now()
            # the table knows nominal masses only: shift its angle by the pawns' extra torque and decide
            # board contact from the true torque (a free swing whose shifted angle passes θ_max rests on
            # the board; a nominal tip whose true rest angle falls short of it lifts off, to rest there)
            th_max = math.radians(self.table.model.physics.theta_max_deg)
            s_max = math.sin(th_max)
            nominal = sum(m.by_id[h].x_mm * m.physics.pawn_mass_g[z] for h, z in s["pawns"]) / kappa
            rest = nominal + dtau / kappa
            shifted = math.sin(theta) + dtau / kappa
            if abs(rest) < s_max:
                self.stuck = False
                if on_board and abs(nominal) >= s_max:
                    # tipped by nominal masses only: the true arm rests just off the board
                    theta, on_board = math.asin(rest), False
                elif on_board:
                    pass  # a hand holds it on the board
                elif abs(shifted) >= s_max:
                    # a swing past the board bounces off it at once: contact for one step only
                    theta = math.copysign(th_max, shifted)
                    on_board = not self.touching
                    self.touching = True
                else:
                    theta = math.asin(shifted)
                    self.touching = False
            elif self.stuck or on_board or abs(shifted) >= s_max:
                # truly tipped: once the arm reaches the board it stays there
                self.stuck = True
                theta, on_board = math.copysign(th_max, rest), True
            else:
                theta = math.asin(shifted)
        else:
            self.stuck = False
        return s["weight_g"] + dw, theta, on_board

    def schedule_offset(self, clock_t: float, grams: float, gmm: float) -> None:
        """From clock time `clock_t` on, the pawns weigh `grams` more than nominal and add `gmm` torque."""
        self.offsets.append((clock_t, grams, gmm))
        self.offsets.sort(key=lambda o: o[0])

    def calibration(self, *, kappa_gmm: float | None = None, theta_max_deg: float | None = None) -> ArmCalibration:
        """What a perfect calibration of these sensors would say (tare of the empty arm included; the arm as built:
        where its holders really are, how high its pawns sit)."""
        phys = self.table.model.physics
        arm = self.table.arm_mass_g
        built = {h.id: h.x_mm for h in self.table.model.holders}
        return ArmCalibration(
            cells=tuple(CellCalibration(c.name, c.zero + c.share * arm * c.k, c.k) for c in self.cells),
            axis="ax", level_g=self.level,
            kappa_gmm=phys.kappa_gmm if kappa_gmm is None else kappa_gmm,
            theta_max_deg=phys.theta_max_deg if theta_max_deg is None else theta_max_deg,
            swing_hz=self.table.omega / (2 * math.pi), damping=self.table.damping, swing_measured=True,
            pawn_height_mm=phys.pawn_height_mm, height_measured=True,
            # (every holder: a perfect calibration knows where each one is, at the model's place or not)
            holder_x=built,
            source=f"simulated sensors ({self.p.name})")

    def run(self, seconds: float) -> list[Row]:
        """Advance the clock by `seconds`, returning the rows sampled meanwhile (in time order)."""
        out: list[Row] = []
        end = self.clock.now() + seconds
        while self.clock.now() < end - 1e-12:
            step = min(STEP_S, end - self.clock.now())
            self.clock.advance(step)
            out.extend(self._step())
        return out

    def _step(self) -> list[Row]:
        t1 = self.clock.now()
        w1, th1, b1 = self._snap()
        t0 = self.prev_t
        w0, th0, _ = self.prev
        span = t1 - t0 if t1 > t0 else 1.0
        rows: list[Row] = []
        rng = self.rng
        p = self.p
        origin = self.origin
        for c in self.cells:
            while c.next_t <= t1:
                t = c.next_t
                u = (t - t0) / span
                w = w0 + (w1 - w0) * u
                c.history.appendleft(w)
                if len(c.history) < len(p.settle_fir):
                    seen = w
                else:
                    seen = sum(a * b for a, b in zip(p.settle_fir, c.history))
                c.walk += rng.gauss(0, p.drift_walk_counts * math.sqrt(c.period))
                counts = (c.zero + c.drift * (t - origin) + c.walk + c.share * seen * c.k
                          + rng.gauss(0, p.noise_counts))
                value = int(max(-FULL_SCALE - 1, min(FULL_SCALE, round(counts))))
                if p.glitch_rate and rng.random() < p.glitch_rate:
                    if rng.random() < p.bit_error_share:
                        value ^= 1 << rng.randrange(12, 23)
                    else:
                        value = rng.choice((0, -1, FULL_SCALE, -FULL_SCALE - 1))
                rows.append((t - origin, c.name, value))
                c.next_t = t + c.period * (1 + rng.uniform(-p.jitter, p.jitter))
        while self.accel_next <= t1:
            t = self.accel_next
            u = (t - t0) / span
            th = th0 + (th1 - th0) * u
            n = p.accel_noise_g
            tr = t - origin
            rows.append((tr, "ax", math.sin(th) + self.level + rng.gauss(0, n)))
            rows.append((tr, "ay", rng.gauss(0, n)))
            rows.append((tr, "az", math.cos(th) + rng.gauss(0, n)))
            self.accel_next = t + 1.0 / p.accel_hz
        while self.tilt_next <= t1:
            t = self.tilt_next
            if b1 != self.tilt_contact:
                self.tilt_contact = b1
                self.tilt_changed = t
            reading = int(rng.random() < 0.5) if t - self.tilt_changed < p.bounce_s else int(self.tilt_contact)
            # a trace holds the switch's changes, and a reading a second to show it is alive
            if reading != self.tilt_written or t - self.tilt_written_t >= 1.0:
                rows.append((t - origin, "tilt", reading))
                self.tilt_written = reading
                self.tilt_written_t = t
            self.tilt_next = t + 1.0 / p.tilt_hz
        self.prev = (w1, th1, b1)
        self.prev_t = t1
        rows.sort(key=lambda r: r[0])
        return rows


@dataclass
class Action:
    """Ground truth of one scripted action."""

    kind: str                                  # place | remove | move | beat | touch | clear
    start: float                               # trace time the first hand touched
    hands_off: float                           # trace time the last hand left
    before: list[tuple[str, str]]
    after: list[tuple[str, str]]
    size: str | None = None
    holder: str | None = None
    from_holder: str | None = None
    to_holder: str | None = None
    victim: tuple[str, str] | None = None
    tipped_before: bool = False
    tipped_after: bool = False
    clearing: bool = False                     # part of clearing the arm after a tip
    masses_before: list[tuple[str, str, float]] = field(default_factory=list)   # each pawn's true mass
    masses_after: list[tuple[str, str, float]] = field(default_factory=list)
    touch_x: list[float] = field(default_factory=list)                         # where each touch pressed (mm)

    @property
    def net(self) -> tuple[tuple, tuple]:
        rem = list(self.before)
        add = []
        for p in self.after:
            if p in rem:
                rem.remove(p)
            else:
                add.append(p)
        return tuple(sorted(rem)), tuple(sorted(add))

    def to_json(self) -> dict:
        """The ground truth as one JSON object (what `companion record --simulate --truth` writes)."""
        d = {"start": round(self.start, 3), "hands_off": round(self.hands_off, 3), "action": self.kind}
        for k in ("size", "holder", "from_holder", "to_holder"):
            v = getattr(self, k)
            if v is not None:
                d[{"from_holder": "from", "to_holder": "to"}.get(k, k)] = v
        if self.victim:
            d["victim"] = {"holder": self.victim[0], "size": self.victim[1]}
        d["tipped_before"], d["tipped_after"] = self.tipped_before, self.tipped_after
        d["expected"] = self.expected_events()
        return d

    def expected_events(self) -> list[dict]:
        """The analyze lines this action should give (before judging what the sensors can tell apart)."""
        rem, add = self.net
        out: list[dict] = []
        if not rem and not add:
            pass
        elif len(rem) == 1 and len(add) == 1 and rem[0][1] == add[0][1]:
            out.append({"event": "move", "size": add[0][1], "from": rem[0][0], "to": add[0][0]})
        elif not rem:
            out += [{"event": "place", "size": s, "holder": h} for h, s in add]
        elif not add:
            out += [{"event": "remove", "size": s, "holder": h} for h, s in rem]
        else:
            mover = [p for p in add]
            out.append({"event": "move", "size": mover[0][1], "from": self.from_holder, "to": self.to_holder})
            if self.victim:
                out.append({"event": "remove", "size": self.victim[1], "holder": self.victim[0]})
        if self.tipped_after and not self.tipped_before:
            out.append({"event": "tip"})
        elif self.tipped_before and not self.tipped_after:
            out.append({"event": "untip"})
        return out


@dataclass(frozen=True)
class ArmStyle:
    """The simulated arm itself: its swing (frequency and damping ratio, empty), its own mass, whether the swing
    follows the load (each pawn adds m·x² to the moment of inertia), and how much like pawns differ in mass."""

    frequency_hz: float = 1.0
    damping: float = 0.08
    arm_mass_g: float = 180.0
    load_dependent: bool = True
    pawn_sigma_g: float | None = None     # None: the model's mass_sigma_g
    # the arm as built rather than as modelled: how high the pawns sit above the pivot, and how far each holder
    # (by id) sits from the model's place, mm
    pawn_height_mm: float = 0.0
    holder_offsets_mm: tuple[tuple[str, float], ...] = ()

    @classmethod
    def drawn(cls, rng: random.Random) -> "ArmStyle":
        """An arm drawn over the range real tables have: 0.6-2 Hz empty, damping ratio 0.05-0.3, the swing slowing
        as the arm fills, like pawns differing by σ 0.05-0.12 g."""
        return cls(rng.uniform(0.6, 2.0), rng.uniform(0.05, 0.3), rng.uniform(120.0, 260.0), True,
                   rng.uniform(0.05, 0.12))

    def off_the_model(self, model: Model, rng: random.Random) -> "ArmStyle":
        """This arm built as home-made arms are, drawn over a wide range: its pawns' centre of mass 0-25 mm above
        the pivot (a full arm up to a sixth less stiff), its holders spaced 0.96-1.04 times the model's and each
        off by σ 2.5 mm more, never past a third of the way to the next holder's place (farther, and the model
        itself would be wrong: the calibration refuses it)."""
        height = rng.uniform(0.0, 25.0)
        stretch = rng.uniform(0.96, 1.04)
        by_x = sorted(model.holders, key=lambda h: h.x_mm)
        offsets = []
        for i, h in enumerate(by_x):
            gaps = [abs(h.x_mm - o.x_mm) for o in by_x[max(0, i - 1):i + 2] if o is not h]
            reach = min(gaps) / 3.0
            off = h.x_mm * (stretch - 1.0) + rng.gauss(0.0, 2.5)
            offsets.append((h.id, round(max(-reach, min(reach, off)), 2)))
        return replace(self, pawn_height_mm=round(height, 2), holder_offsets_mm=tuple(offsets))

    def built(self, model: Model) -> Model:
        """The model as this arm was built: its holders where they really are, its pawns' height."""
        if not self.pawn_height_mm and not self.holder_offsets_mm:
            return model
        off = dict(self.holder_offsets_mm)
        holders = tuple(replace(h, x_mm=h.x_mm + off.get(h.id, 0.0)) for h in model.holders)
        return Model(model.name, holders, model.seats, replace(model.physics, pawn_height_mm=self.pawn_height_mm),
                     model.source)


@dataclass
class HandStyle:
    """How the hands behave: randomised per action within these ranges."""

    duration_s: tuple[float, float] = (0.35, 1.0)
    force_g: tuple[float, float] = (5.0, 60.0)
    lift_gap_s: tuple[float, float] = (0.0, 0.0)    # a moved pawn held off the arm this long (0: one gesture)
    long_press_share: float = 0.05                   # now and then a hand rests on the arm much longer
    long_press_s: tuple[float, float] = (1.5, 2.5)
    gap_share: float = 0.5                           # of the moves with a lift gap, how many have one
    x_jitter_mm: float = 0.0                         # a finger lands this far either side of the holder
    change_at: tuple[float, float] = (0.5, 0.5)      # when in the press the pawn arrives or leaves

    @classmethod
    def players(cls) -> "HandStyle":
        """Real players: 20-150 gf for 0.4-1.2 s up to 8 mm either side of the holder; a move is two touches 0.2-0.6 s
        apart."""
        return cls(duration_s=(0.4, 1.2), force_g=(20.0, 150.0), lift_gap_s=(0.2, 0.6), gap_share=1.0,
                   x_jitter_mm=8.0, change_at=(0.3, 0.7))

    @classmethod
    def drawn(cls, rng: random.Random) -> "HandStyle":
        """Real players at one table: as `players`, but how far from the holder their fingers land (3-12 mm either
        side: anywhere on the pawn they handle, or just beside it; holders are 19 mm apart) drawn per table."""
        return replace(cls.players(), x_jitter_mm=rng.uniform(3.0, 12.0))


class TableScript:
    """A scripted session on the simulated table, recorded as trace rows plus ground truth."""

    def __init__(self, model: Model, profile: NoiseProfile | str = "quiet-10sps", *, seed: int = 0,
                 pawns: Iterable[tuple[str, str]] = (), hands: HandStyle | None = None, level_g: float = 0.0,
                 settle_s: float = 2.0, mass_spread: bool = True, names: Sequence[str] | None = None,
                 calibration: ArmCalibration | None = None, arm: ArmStyle | None = None):
        self.model = model
        self.profile = PROFILES[profile] if isinstance(profile, str) else profile
        self.rng = random.Random(seed)
        self.clock = FakeClock(0.0)
        self.arm = arm = arm or ArmStyle()
        # the physics runs on the arm as built; the players and the truth name holders as the model does
        self.built = arm.built(model)
        self.table = SimulatedTable(self.built, self.clock, seed=seed, frequency_hz=arm.frequency_hz,
                                    damping=arm.damping, arm_mass_g=arm.arm_mass_g, load_dependent=arm.load_dependent)
        pawns = list(pawns)
        if pawns:
            self.table.set_pawns(pawns, hand_s=0)
            self.table.settle()
        self.sensors = SensorSim(self.table, self.clock, self.profile, seed=seed + 7919, level_g=level_g,
                                 names=names, calibration=calibration, model=model)
        self.hands = hands or HandStyle()
        self.rows: list[Row] = []
        self.actions: list[Action] = []
        self.pawns: list[tuple[str, str]] = pawns
        # each pawn's own deviation from its size's nominal mass (g), parallel to self.pawns
        self.mass_spread = mass_spread
        self.deviation: list[float] = [self._new_deviation(s) for _, s in pawns]
        self._schedule(self.clock.now(), self.pawns, self.deviation)
        self.wait(settle_s)

    def _new_deviation(self, size: str) -> float:
        if not self.mass_spread:
            return 0.0
        sigma = self.arm.pawn_sigma_g if self.arm.pawn_sigma_g is not None else self.model.physics.mass_sigma_g[size]
        return max(-3 * sigma, min(3 * sigma, self.rng.gauss(0.0, sigma)))

    def _schedule(self, clock_t: float, pawns: Sequence[tuple[str, str]], dev: Sequence[float]) -> None:
        x = self.built.by_id
        self.sensors.schedule_offset(clock_t, sum(dev), sum(x[h].x_mm * d for (h, _), d in zip(pawns, dev)))

    def masses(self, pawns: Sequence[tuple[str, str]] | None = None,
               dev: Sequence[float] | None = None) -> list[tuple[str, str, float]]:
        pawns = self.pawns if pawns is None else pawns
        dev = self.deviation if dev is None else dev
        m = self.model.physics.pawn_mass_g
        return [(h, s, m[s] + d) for (h, s), d in zip(pawns, dev)]

    # --- time
    @property
    def now(self) -> float:
        return self.clock.now() - self.sensors.origin

    def wait(self, seconds: float) -> None:
        self.rows.extend(self.sensors.run(seconds))

    def calibration(self) -> ArmCalibration:
        return self.sensors.calibration()

    def tipped(self, pawns: Sequence[tuple[str, str]], dev: Sequence[float] | None = None) -> bool:
        """Whether the arm rests on the board with these pawns (their true masses when `dev` is given)."""
        tau = bp.net_torque(self.built, pawns)
        if dev is not None:
            tau += sum(self.built.by_id[h].x_mm * d for (h, _), d in zip(pawns, dev))
        return bp.tips(self.built, tau, pawns)

    # --- hands
    def _hand(self) -> tuple[float, float]:
        h = self.hands
        r = self.rng
        if r.random() < h.long_press_share:
            return r.uniform(*h.long_press_s), r.uniform(*h.force_g)
        return r.uniform(*h.duration_s), r.uniform(*h.force_g)

    def _gesture(self, phases: list[tuple[list[tuple[str, str]], str, list[float]]], kind: str, **truth) -> Action:
        """Hands at the given holders, one after the other; each phase leaves the arm with its pawn list
        (and those pawns' mass deviations)."""
        before = list(self.pawns)
        masses_before = self.masses()
        tipped_before = self.tipped(before, self.deviation)
        start = self.now
        end = start
        prev_mid = -math.inf
        hands = self.hands
        touched: list[float] = []
        for i, (pawns, holder, dev) in enumerate(phases):
            dur, force = self._hand()
            t_here = self.now
            lo, hi = hands.change_at
            at = lo if lo == hi else self.rng.uniform(lo, hi)    # no draw when fixed: old seeds make old sessions
            mid = t_here + dur * at
            if mid <= prev_mid:
                dur = (prev_mid - t_here) / at + 0.05
                mid = t_here + dur * at
            x = self.built.by_id[holder].x_mm + (self.rng.uniform(-1, 1) * hands.x_jitter_mm if hands.x_jitter_mm else 0)
            self.table.set_pawns(pawns, hand_s=dur, hand_force_g=force, at_x=x, change_at=at)
            touched.append(x)
            self._schedule(self.clock.now() + dur * at, pawns, dev)
            prev_mid = mid
            end = max(end, t_here + dur)
            if i + 1 < len(phases):
                gap_lo, gap_hi = hands.lift_gap_s
                if gap_hi > 0 and self.rng.random() < hands.gap_share:
                    # the pawn leaves the arm with the hand and comes back a moment later
                    self.wait(max(0.0, end - self.now) + self.rng.uniform(gap_lo, gap_hi))
                else:
                    self.wait(self.rng.uniform(0.45, 0.85) * dur)
        self.wait(max(0.0, end - self.now) + 0.001)
        after = list(phases[-1][0])
        self.pawns = after
        self.deviation = list(phases[-1][2])
        act = Action(kind, start, end, before, after, tipped_before=tipped_before,
                     tipped_after=self.tipped(after, self.deviation), masses_before=masses_before,
                     masses_after=self.masses(), touch_x=touched, **truth)
        self.actions.append(act)
        return act

    def _without(self, holder: str, size: str) -> tuple[list[tuple[str, str]], list[float], float]:
        """The pawns and deviations with one (holder, size) pawn taken out, and that pawn's deviation."""
        i = self.pawns.index((holder, size))
        return self.pawns[:i] + self.pawns[i + 1:], self.deviation[:i] + self.deviation[i + 1:], self.deviation[i]

    def place(self, holder: str, size: str) -> Action:
        dev = self.deviation + [self._new_deviation(size)]
        return self._gesture([(self.pawns + [(holder, size)], holder, dev)], "place", size=size, holder=holder)

    def remove(self, holder: str, size: str) -> Action:
        after, dev, _ = self._without(holder, size)
        return self._gesture([(after, holder, dev)], "remove", size=size, holder=holder)

    def move(self, src: str, dst: str, size: str) -> Action:
        mid, dev, d = self._without(src, size)
        return self._gesture([(mid, src, dev), (mid + [(dst, size)], dst, dev + [d])], "move", size=size,
                             from_holder=src, to_holder=dst)

    def beat(self, src: str, dst: str, size: str, victim_holder: str, victim_size: str) -> Action:
        mid, dev, d = self._without(src, size)
        end, end_dev = mid + [(dst, size)], dev + [d]
        i = end.index((victim_holder, victim_size))
        end, end_dev = end[:i] + end[i + 1:], end_dev[:i] + end_dev[i + 1:]
        return self._gesture([(mid, src, dev), (end, dst, end_dev)], "beat", size=size, from_holder=src,
                             to_holder=dst, victim=(victim_holder, victim_size))

    def touch(self, holder: str) -> Action:
        return self._gesture([(list(self.pawns), holder, list(self.deviation))], "touch", holder=holder)

    def clear(self) -> list[Action]:
        """Take the pawns off one by one, outermost first (the way people clear a tipped arm)."""
        out = []
        for h, s in sorted(self.pawns, key=lambda p: -abs(self.model.by_id[p[0]].x_mm)):
            act = self.remove(h, s)
            act.clearing = True
            out.append(act)
            self.wait(self.rng.uniform(1.5, 3.0))
        return out

    # --- output
    def config_toml(self, *, model_ref: str | None = None) -> str:
        """A config whose sensor keys match these simulated sensors (for `companion analyze`)."""
        return config_toml(self.model, self.calibration(), model_ref=model_ref)

    def write(self, path: str | Path) -> Path:
        return write_trace(path, self.rows)


def config_toml(model: Model, cal: ArmCalibration, *, model_ref: str | None = None) -> str:
    phys = model.physics
    masses = ", ".join(f"{k} = {v!r}" for k, v in phys.pawn_mass_g.items())
    lines = ["# sensors of a simulated table (companion record --simulate)", "[balance]",
             f'model = "{model_ref or model.name}"', f"kappa_gmm = {cal.kappa_gmm!r}",
             f"theta_max_deg = {cal.theta_max_deg!r}", f"pawn_mass_g = {{ {masses} }}", ""]
    for c in cal.cells:
        lines += ["[[load_cells]]", f'name = "{c.name}"', f"offset_counts = {round(c.offset_counts, 3)!r}",
                  f"counts_per_gram = {round(c.counts_per_gram, 4)!r}", ""]
    if cal.accelerometer:
        lines += ["[accelerometer]", f'axis = "{cal.axis}"', f"level_g = {cal.level_g!r}", ""]
    lines += ["# no wiring: these sensors belong to the simulated table", "[simulate]", "enabled = true", ""]
    return "\n".join(lines)


def write_trace(path: str | Path, rows: Iterable[Row]) -> Path:
    path = Path(path)
    with path.open("w", encoding="utf-8", newline="") as f:
        f.write("t,sensor,value\n")
        for r in rows:
            f.write(format_row(*r) + "\n")
    return path


def random_session(model: Model, seconds: float, *, profile: NoiseProfile | str = "quiet-10sps", seed: int = 0,
                   sizes: Sequence[str] = ("L", "M"), hands: HandStyle | None = None,
                   calibration: ArmCalibration | None = None, arm: ArmStyle | None = None) -> TableScript:
    """Random hands on the arm for about `seconds` (no game rules: any pawn, any free holder; never tipping)."""
    script = TableScript(model, profile, seed=seed, hands=hands, calibration=calibration, arm=arm)
    rng = random.Random(seed + 1)
    holders = [h.id for h in model.holders]
    cap = {h.id: h.capacity for h in model.holders}
    while script.now < seconds:
        pawns = script.pawns
        count = {h: sum(1 for p in pawns if p[0] == h) for h in holders}
        free = [h for h in holders if count[h] < cap[h]]
        options = []
        for h in free:
            for s in sizes:
                options.append(("place", h, s))
        for h, s in pawns:
            options.append(("remove", h, s))
            for k in free:
                if k != h:
                    options.append(("move", (h, k), s))
        options.append(("touch", rng.choice(holders), None))
        rng.shuffle(options)
        for kind, where, size in options:
            after = list(pawns)
            if kind == "place":
                after.append((where, size))
            elif kind == "remove":
                after.remove((where, size))
            elif kind == "move":
                after.remove((where[0], size))
                after.append((where[1], size))
            if kind != "touch" and (script.tipped(after) or len(after) > 8):
                continue
            if kind == "place":
                script.place(where, size)
            elif kind == "remove":
                script.remove(where, size)
            elif kind == "move":
                script.move(where[0], where[1], size)
            else:
                script.touch(where)
            break
        script.wait(rng.uniform(3.3, 5.0))
    return script


def with_profile(name: str, **changes) -> NoiseProfile:
    return replace(PROFILES[name], **changes)


def drawn_settling(rng: random.Random) -> tuple[float, ...]:
    """How one table's load cells reach a step, drawn over what HX711- and NAU7802-type converters do: over 3 to 5
    samples, either weighted from evenly to mostly the newest, or (as a sinc-type filter) most of the step arriving
    a sample or two late (newest first, summing to 1). The follower assumes none of them: it learns the shape from
    a family of its own (settling.py), which these are not drawn from."""
    n = rng.choice((3, 4, 5))
    if rng.random() < 0.6:
        power = rng.uniform(0.0, 2.0)
        weights = [(1.0 - m / n) ** power for m in range(n)]
    else:
        centre = rng.uniform(0.5, (n - 1) / 2 + 0.5)
        width = rng.uniform(0.6, 1.6)
        weights = [math.exp(-((m - centre) / width) ** 2) for m in range(n)]
    total = sum(weights)
    return tuple(w / total for w in weights)


__all__ = ["drawn_settling", "NoiseProfile", "PROFILES", "SensorSim", "TableScript", "Action", "ArmStyle", "HandStyle", "random_session",
           "write_trace", "format_row", "config_toml", "with_profile"]
