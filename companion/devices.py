"""Reading the sensors in the daemon: live weight, angle and torque, and each device's health.

A device that raises SensorFault (or anything else) is marked unavailable with
the reason and retried with backoff; the loop itself never stops for a device.
"""

from __future__ import annotations

import logging
import math
import threading
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable

from companion.clock import Clock
from companion.games.balance_model import Model
from companion.hardware.interfaces import Accelerometer, LoadCell, SensorFault, TiltSwitch

log = logging.getLogger(__name__)
GLITCH_VALUES = {0, -1, 0x7FFFFF, -0x800000}
AXES = ("ax", "ay", "az")
BACKOFF_START_S = 0.5
BACKOFF_MAX_S = 30.0


@dataclass
class Health:
    name: str
    kind: str
    ok: bool = True
    reason: str | None = None
    since: str | None = None          # wall-clock time of the change, for people
    since_mono: float = 0.0
    retry_at: float = 0.0
    backoff: float = BACKOFF_START_S
    glitches: int = 0
    faults: int = 0
    samples: int = 0

    def to_dict(self, now: float) -> dict:
        return {"name": self.name, "kind": self.kind, "ok": self.ok, "reason": self.reason, "since": self.since,
                "for_s": round(now - self.since_mono, 1) if not self.ok else None,
                "samples": self.samples, "glitches": self.glitches, "faults": self.faults}


@dataclass
class Calibration:
    offsets: dict[str, float] = field(default_factory=dict)
    counts_per_gram: dict[str, float] = field(default_factory=dict)
    axis: str = "ax"
    level_g: float = 0.0


class Debouncer:
    """A contact is believed only after it has stayed the same for `hold_s` (monotonic time)."""

    def __init__(self, hold_s: float, initial: bool = False):
        self.hold_s = hold_s
        self.value = initial
        self._candidate = initial
        self._since = -math.inf

    def update(self, raw: bool, now: float) -> bool:
        if raw != self._candidate:
            self._candidate = raw
            self._since = now
        elif raw != self.value and now - self._since >= self.hold_s:
            self.value = raw
        return self.value


class SensorMonitor:
    def __init__(self, model: Model, calibration: Calibration, *, load_cells: list[LoadCell],
                 accelerometer: Accelerometer | None, tilt: TiltSwitch | None, clock: Clock | None = None,
                 period_s: float = 0.02, debounce_s: float = 0.03):
        self.model = model
        self.cal = calibration
        self.cells = load_cells
        self.accel = accelerometer
        self.tilt = tilt
        self.clock = clock or Clock()
        self.period_s = period_s
        self.debouncer = Debouncer(debounce_s)
        self.health: dict[str, Health] = {}
        for c in load_cells:
            self.health[c.name] = Health(c.name, "load cell")
        if accelerometer is not None:
            self.health[accelerometer.name] = Health(accelerometer.name, "accelerometer")
        if tilt is not None:
            self.health[tilt.name] = Health(tilt.name, "tilt switch")
        self._lock = threading.Lock()
        self._counts: dict[str, float] = {}
        self._sin = 0.0
        self._weight = None
        self._torque = None
        self._stop = threading.Event()
        self._threads: dict[str, threading.Thread] = {}
        self._beats: dict[str, float] = {}
        self._heartbeat = self.clock.now()
        self._listeners: list[Callable[[str, bool], None]] = []
        self._samples: list[Callable[[float, str, float], None]] = []

    @property
    def present(self) -> bool:
        return bool(self.health)

    def on_tilt(self, callback: Callable[[str, bool], None]) -> None:
        self._listeners.append(callback)

    def _guard(self, h: Health, read: Callable[[], Any], now: float) -> Any:
        if not h.ok and now < h.retry_at:
            return None
        try:
            value = read()
        except Exception as exc:  # every device fault becomes visible state, never a dead loop
            reason = exc.reason if isinstance(exc, SensorFault) else f"{type(exc).__name__}: {exc}"
            h.faults += 1
            if h.ok or h.reason != reason:
                log.warning("%s unavailable: %s", h.name, reason)
                h.since = datetime.now(timezone.utc).isoformat(timespec="seconds")
                h.since_mono = now
            if not h.ok:
                h.backoff = min(BACKOFF_MAX_S, h.backoff * 2)
            h.ok, h.reason, h.retry_at = False, reason, now + h.backoff
            return None
        if not h.ok:
            log.info("%s is back", h.name)
            h.ok, h.reason, h.backoff = True, None, BACKOFF_START_S
        h.samples += 1
        return value

    def on_sample(self, callback: Callable[[float, str, float], None]) -> None:
        """callback(t, sensor, value) for every accepted raw sample, named as in traces (load0…, ax/ay/az, tilt)."""
        self._samples.append(callback)

    def _emit(self, t: float, sensor: str, value: float) -> None:
        for cb in self._samples:
            try:
                cb(t, sensor, value)
            except Exception:  # a consumer's fault must not stop the sensor loop; it is logged with its traceback
                log.exception("sample consumer failed on %s", sensor)

    def _poll_cell(self, cell: LoadCell) -> None:
        now = self.clock.now()
        h = self.health[cell.name]
        raw = self._guard(h, lambda: cell.read(0.2), now)
        if raw is None:
            return
        if raw in GLITCH_VALUES:
            h.glitches += 1
            return
        with self._lock:
            prev = self._counts.get(cell.name)
            # light smoothing for the display only; inference (sensing/) works on the raw samples
            self._counts[cell.name] = raw if prev is None else prev + 0.3 * (raw - prev)
        self._emit(now, cell.name, raw)

    def _poll_accel(self) -> None:
        now = self.clock.now()
        xyz = self._guard(self.health[self.accel.name], lambda: self.accel.read(0.2), now)
        if xyz is None:
            return
        value = xyz[AXES.index(self.cal.axis)] - self.cal.level_g
        with self._lock:
            self._sin += 0.3 * (max(-1.0, min(1.0, value)) - self._sin)
        for axis, v in zip(AXES, xyz):
            self._emit(now, axis, v)

    def _poll_tilt(self) -> None:
        now = self.clock.now()
        raw = self._guard(self.health[self.tilt.name], self.tilt.is_closed, now)
        if raw is None:
            return
        self._emit(now, "tilt", 1.0 if raw else 0.0)
        before = self.debouncer.value
        after = self.debouncer.update(bool(raw), now)
        if after != before:
            for cb in self._listeners:
                cb(self.tilt.name, after)

    def _pollers(self) -> dict[str, Callable[[], None]]:
        out: dict[str, Callable[[], None]] = {c.name: (lambda c=c: self._poll_cell(c)) for c in self.cells}
        if self.accel is not None:
            out[self.accel.name] = self._poll_accel
        if self.tilt is not None:
            out[self.tilt.name] = self._poll_tilt
        return out

    def poll(self) -> None:
        """One read of every device in turn (tests call it; the daemon runs one thread per device)."""
        self.heartbeat = self.clock.now()
        for poll in self._pollers().values():
            poll()

    def live(self) -> dict:
        with self._lock:
            weight = None
            cells_ok = [c.name for c in self.cells if self.health[c.name].ok and c.name in self._counts]
            if self.cells and len(cells_ok) == len(self.cells):
                weight = sum((self._counts[n] - self.cal.offsets.get(n, 0.0)) / self.cal.counts_per_gram.get(n, 1.0)
                             for n in cells_ok)
            angle = torque = None
            if self.accel is not None and self.health[self.accel.name].ok:
                angle = math.degrees(math.asin(self._sin))
                torque = self.model.physics.kappa_gmm * self._sin
        now = self.clock.now()
        return {
            "weight_g": None if weight is None else round(weight, 1),
            "angle_deg": None if angle is None else round(angle, 2),
            "torque_gmm": None if torque is None else round(torque, 0),
            "on_board": self.debouncer.value if self.tilt is not None else None,
            "devices": [h.to_dict(now) for h in self.health.values()],
        }

    # --- one reader thread per device, so a slow HX711 (10 samples/s) never holds up the others
    def start(self) -> None:
        self._stop.clear()
        for name, poll in self._pollers().items():
            t = self._threads.get(name)
            if t is None or not t.is_alive():
                t = threading.Thread(target=self._run, args=(name, poll), name=f"sensor {name}", daemon=True)
                self._beats[name] = self.clock.now()
                self._threads[name] = t
                t.start()

    def alive(self) -> bool:
        return bool(self._threads) and all(t.is_alive() for t in self._threads.values())

    @property
    def heartbeat(self) -> float:
        """The oldest of the reader threads' last rounds (monotonic)."""
        return min(self._beats.values()) if self._beats else self._heartbeat

    @heartbeat.setter
    def heartbeat(self, value: float) -> None:
        self._heartbeat = value
        for name in self._beats:
            self._beats[name] = value

    def stop(self) -> None:
        self._stop.set()
        for t in self._threads.values():
            t.join(timeout=2)

    def _run(self, name: str, poll: Callable[[], None]) -> None:
        while not self._stop.is_set():
            try:
                poll()
            except Exception:  # keep sensing; the fault is logged with its traceback
                log.exception("sensor loop error on %s", name)
            self._beats[name] = self.clock.now()
            self._stop.wait(self.period_s)
