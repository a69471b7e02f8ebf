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
        self._thread: threading.Thread | None = None
        self._listeners: list[Callable[[str, bool], None]] = []
        self.heartbeat = self.clock.now()

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

    def poll(self) -> None:
        """One round of reads; the loop calls it every period, tests call it directly."""
        now = self.clock.now()
        self.heartbeat = now
        for cell in self.cells:
            h = self.health[cell.name]
            raw = self._guard(h, lambda: cell.read(0.2), now)
            if raw is None:
                continue
            if raw in GLITCH_VALUES:
                h.glitches += 1
                continue
            with self._lock:
                prev = self._counts.get(cell.name)
                # light smoothing for the display only; inference (sensing/) works on raw samples
                self._counts[cell.name] = raw if prev is None else prev + 0.3 * (raw - prev)
        if self.accel is not None:
            xyz = self._guard(self.health[self.accel.name], lambda: self.accel.read(0.2), now)
            if xyz is not None:
                value = xyz["ax ay az".split().index(self.cal.axis)] - self.cal.level_g
                with self._lock:
                    self._sin += 0.3 * (max(-1.0, min(1.0, value)) - self._sin)
        if self.tilt is not None:
            raw = self._guard(self.health[self.tilt.name], self.tilt.is_closed, now)
            if raw is not None:
                before = self.debouncer.value
                after = self.debouncer.update(bool(raw), now)
                if after != before:
                    for cb in self._listeners:
                        cb(self.tilt.name, after)

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

    # --- the thread
    def start(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="sensors", daemon=True)
        self._thread.start()

    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.poll()
            except Exception:  # keep sensing; the fault is logged with its traceback
                log.exception("sensor loop error")
            self._stop.wait(self.period_s)
