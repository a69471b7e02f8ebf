"""A simulated balance arm and simulated drivers reading from it.

The arm follows DESIGN.md's model: pawns give a torque τ; at rest sin θ = τ/κ;
after a change it swings as a lightly damped ~1 Hz oscillation; it rests on the
board (tips) once |θ| reaches θ_max. A hand placing a pawn presses on the arm for
a moment. The drivers add what real parts add: HX711-like noise and glitches in
raw counts, accelerometer noise, tilt-switch contact bounce.
"""

from __future__ import annotations

import logging
import math
import random
import threading
from dataclasses import dataclass
from typing import Iterable

from companion.foundation.clock import Clock
from companion.games.balance_model import Model
from companion.hardware.interfaces import SensorFault

log = logging.getLogger(__name__)

STEP_S = 0.005
G_MM_S2 = 9810.0       # gravity: turns a torque in g·mm (gram-force) into g·mm²/s²


@dataclass
class _Hand:
    start: float
    end: float
    x_mm: float
    force_g: float

    def at(self, t: float) -> float:
        """Force in grams at time t: a smooth press and release."""
        if not self.start <= t < self.end:
            return 0.0
        u = (t - self.start) / (self.end - self.start)
        return self.force_g * math.sin(math.pi * u)


class SimulatedTable:
    """The physical arm: pawns, angle, weight, contact with the board."""

    def __init__(self, model: Model, clock: Clock | None = None, *, arm_mass_g: float = 180.0,
                 frequency_hz: float = 1.0, damping: float = 0.08, seed: int | None = None,
                 load_dependent: bool = True):
        """`frequency_hz` and `damping` are the empty arm's swing. `load_dependent`: as on a real arm, every pawn
        adds m·x² to the moment of inertia, so the swing slows as the arm fills and its damping ratio falls."""
        self.model = model
        self.clock = clock or Clock()
        self.arm_mass_g = arm_mass_g
        self.omega = 2 * math.pi * frequency_hz
        self.damping = damping
        self.load_dependent = load_dependent
        kappa = model.physics.kappa_gmm
        self.arm_inertia = kappa * G_MM_S2 / self.omega ** 2          # g·mm², from ω² = κ·g / I
        self._viscous = 2 * damping * self.omega * self.arm_inertia     # c, with 2ζω = c / I
        self.rng = random.Random(seed)
        self._lock = threading.Lock()
        self._pawns: list[tuple[str, str]] = []
        self._pending: list[tuple[float, list[tuple[str, str]]]] = []
        self._hands: list[_Hand] = []
        self._t = self.clock.now()
        self._theta = 0.0
        self._omega_now = 0.0
        self._swing_for: list | None = None
        self._swing = (self.omega ** 2, 2 * self.damping * self.omega)

    # --- what a player does
    def set_pawns(self, pawns: Iterable[tuple[str, str]], *, hand_s: float = 0.6, hand_force_g: float = 35.0,
                  at_holder: str | None = None, at_x: float | None = None, change_at: float = 0.5) -> None:
        """The pawns on the arm become `pawns`, placed by a hand that presses on the arm for hand_s (at the holder
        `at_holder`, or at `at_x` mm); the pawns change `change_at` of the way through the press."""
        pawns = list(pawns)
        for holder, size in pawns:
            if holder not in self.model.by_id or size not in self.model.physics.pawn_mass_g:
                raise ValueError(f"no holder {holder!r} or size {size!r} on this arm")
        now = self.clock.now()
        with self._lock:
            self._advance(now)
            if hand_s <= 0:
                self._pawns = pawns
                return
            if at_x is not None:
                x = at_x
            else:
                x = self.model.by_id[at_holder].x_mm if at_holder else self._changed_x(pawns)
            self._hands.append(_Hand(now, now + hand_s, x, hand_force_g))
            self._pending.append((now + hand_s * change_at, pawns))

    def _changed_x(self, pawns: list[tuple[str, str]]) -> float:
        before, after = set(self._pawns), set(pawns)
        diff = (after - before) or (before - after)
        if diff:
            return self.model.by_id[next(iter(diff))[0]].x_mm
        return 0.0

    # --- physics
    def _torque(self, t: float) -> tuple[float, float]:
        """(torque g·mm, extra weight g) at time t, pawns and hands together."""
        masses = self.model.physics.pawn_mass_g
        torque = sum(self.model.by_id[h].x_mm * masses[s] for h, s in self._pawns)
        weight = sum(masses[s] for _, s in self._pawns)
        for hand in self._hands:
            f = hand.at(t)
            torque += hand.x_mm * f
            weight += f
        return torque, weight

    def swing(self) -> tuple[float, float]:
        """(ω², 2ζω) of the arm with the pawns on it now."""
        if not self.load_dependent:
            return self._swing
        if self._swing_for is not self._pawns:
            masses = self.model.physics.pawn_mass_g
            inertia = self.arm_inertia + sum(masses[z] * self.model.by_id[h].x_mm ** 2 for h, z in self._pawns)
            self._swing = (self.model.physics.kappa_gmm * G_MM_S2 / inertia, self._viscous / inertia)
            self._swing_for = self._pawns
        return self._swing

    def _advance(self, t: float) -> None:
        theta_max = math.radians(self.model.physics.theta_max_deg)
        kappa = self.model.physics.kappa_gmm
        while self._t < t:
            dt = min(STEP_S, t - self._t)
            while self._pending and self._pending[0][0] <= self._t:
                self._pawns = self._pending.pop(0)[1]
            torque, _ = self._torque(self._t)
            eq = math.asin(max(-1.0, min(1.0, torque / kappa)))
            w2, damp = self.swing()
            acc = w2 * (eq - self._theta) - damp * self._omega_now
            self._omega_now += acc * dt
            self._theta += self._omega_now * dt
            if abs(self._theta) >= theta_max:
                # the board stops the arm without bounce
                self._theta = math.copysign(theta_max, self._theta)
                if self._omega_now * self._theta > 0:
                    self._omega_now = 0.0
            self._t += dt
        self._hands = [h for h in self._hands if h.end > t]

    def settle(self) -> None:
        """Skip ahead in physics (not in clock time) until the arm is at rest: for tests and the demo's start."""
        with self._lock:
            self._advance(self.clock.now())
            self._pawns = self._pending[-1][1] if self._pending else self._pawns
            self._pending.clear()
            self._hands.clear()
            torque, _ = self._torque(self._t)
            theta_max = math.radians(self.model.physics.theta_max_deg)
            eq = math.asin(max(-1.0, min(1.0, torque / self.model.physics.kappa_gmm)))
            self._theta = max(-theta_max, min(theta_max, eq))
            self._omega_now = 0.0

    def pawns_to_come(self) -> list[tuple[str, str]]:
        """The pawns the arm carries once the hands on it now are done: what a new change starts from (two
        changes in quick succession, a tip then its undo, must not leave the first one's pawns on the arm)."""
        with self._lock:
            return list(self._pending[-1][1] if self._pending else self._pawns)

    def snapshot(self) -> dict:
        """The true state now: angle (rad), weight on the arm (g), contact, pawns."""
        with self._lock:
            now = self.clock.now()
            self._advance(now)
            _, extra = self._torque(now)
            theta_max = math.radians(self.model.physics.theta_max_deg)
            return {
                "theta": self._theta,
                "weight_g": self.arm_mass_g + extra,
                "on_board": abs(self._theta) >= theta_max - 1e-9,
                "pawns": list(self._pawns),
            }


class SimLoadCell:
    """One HX711 channel under the pivot: raw counts with noise, rare glitches and slow drift.

    `drift` (counts per second) runs from the moment it is set: turning it on late in a run
    starts a ramp there, and a new rate bends the ramp without a jump. Setting it to 0 stops
    the ramp where it is, as a real cell does not spring back.
    """

    def __init__(self, table: SimulatedTable, name: str, *, share: float, offset_counts: float,
                 counts_per_gram: float, noise_counts: float = 30.0, glitch_rate: float = 0.0,
                 drift_counts_per_s: float = 0.0, seed: int | None = None):
        self.table = table
        self.name = name
        self.share = share
        self.offset = offset_counts
        self.cpg = counts_per_gram
        self.noise = noise_counts
        self.glitch_rate = glitch_rate
        self._drift_rate = 0.0
        self._drifted_before = 0.0          # counts drifted up to _drift_since, at the rates set before
        self._drift_since = table.clock.now()
        self.drift = drift_counts_per_s
        self.rng = random.Random(seed)
        self.fault: str | None = None  # set by fault injection: reads then fail with this reason

    @property
    def drift(self) -> float:
        return self._drift_rate

    @drift.setter
    def drift(self, counts_per_s: float) -> None:
        if isinstance(counts_per_s, bool) or not isinstance(counts_per_s, (int, float)) \
                or not math.isfinite(counts_per_s):
            raise ValueError(f"{self.name}: drift must be a finite number of counts per second, not {counts_per_s!r}")
        now = self.table.clock.now()
        self._drifted_before = self._drifted(now)
        self._drift_since = now
        self._drift_rate = float(counts_per_s)

    def _drifted(self, now: float) -> float:
        return self._drifted_before + self._drift_rate * (now - self._drift_since)

    def read(self, timeout: float = 0.5) -> int:
        if self.fault:
            raise SensorFault(self.name, self.fault)
        snap = self.table.snapshot()
        if self.glitch_rate and self.rng.random() < self.glitch_rate:
            return self.rng.choice((0, -1, 0x7FFFFF, -0x800000))
        drift = self._drifted(self.table.clock.now())
        counts = self.offset + drift + snap["weight_g"] * self.share * self.cpg + self.rng.gauss(0, self.noise)
        return int(max(-0x800000, min(0x7FFFFF, round(counts))))


class SimAccelerometer:
    """An accelerometer fixed to the arm: the component along the arm is sin θ."""

    def __init__(self, table: SimulatedTable, *, level_g: float = 0.0, noise_g: float = 0.002,
                 seed: int | None = None, name: str = "accelerometer"):
        self.table = table
        self.name = name
        self.level = level_g
        self.noise = noise_g
        self.rng = random.Random(seed)
        self.fault: str | None = None

    def read(self, timeout: float = 0.5) -> tuple[float, float, float]:
        if self.fault:
            raise SensorFault(self.name, self.fault)
        theta = self.table.snapshot()["theta"]
        g = self.rng.gauss
        return (math.sin(theta) + self.level + g(0, self.noise), g(0, self.noise), math.cos(theta) + g(0, self.noise))


class SimTiltSwitch:
    """Closes when the arm rests on the board; bounces for a few milliseconds at each change."""

    def __init__(self, table: SimulatedTable, *, bounce_s: float = 0.008, seed: int | None = None,
                 name: str = "tilt_switch"):
        self.table = table
        self.name = name
        self.bounce_s = bounce_s
        self.rng = random.Random(seed)
        self._stable = False
        self._changed_at = -1e9
        self.fault: str | None = None

    def is_closed(self) -> bool:
        if self.fault:
            raise SensorFault(self.name, self.fault)
        now = self.table.clock.now()
        contact = self.table.snapshot()["on_board"]
        if contact != self._stable:
            self._stable = contact
            self._changed_at = now
        if now - self._changed_at < self.bounce_s:
            return self.rng.random() < 0.5
        return self._stable
