"""Reading the sensors in the daemon: live weight, angle and torque, and each device's health.

A device that raises SensorFault (or anything else) is marked unavailable with
the reason and retried with backoff; the loop itself never stops for a device.
"""

from __future__ import annotations

import logging
import math
import threading
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable

from companion.foundation.clock import Clock
from companion.games.balance_model import Model
from companion.hardware.debounce import Debouncer
from companion.hardware.interfaces import Accelerometer, LoadCell, SensorFault, TiltSwitch

log = logging.getLogger(__name__)
GLITCH_VALUES = {0, -1, 0x7FFFFF, -0x800000}
GLITCH_RUN = 8                 # glitch values in a row before a cell counts as unavailable
CHATTER_PER_S = 12             # tilt-switch changes in one second that are chatter, not a tip
DRIFT_WINDOW_S = 1.5           # three equal steps across four such windows make a ramp, which no placement is
DRIFT_G_PER_S = 2.0
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
    data_fault: bool = False  # unavailable for what it reads (not for failing to answer): no backoff
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


class _CellWatch:
    """Per load cell: the current run of glitch values, and window means to tell a ramp from a step."""

    def __init__(self):
        self.glitch_run = 0
        self._start: float | None = None
        self._sum = 0.0
        self._n = 0
        self._lo = math.inf
        self._hi = -math.inf
        self.means: deque[float] = deque(maxlen=4)
        self.ranges: deque[float] = deque(maxlen=4)

    def drift(self, now: float, raw: int, cpg: float) -> float | None:
        """g/s when the last four windows rose (or fell) by three like steps faster than DRIFT_G_PER_S."""
        if self._start is None:
            self._start = now
        self._sum += raw
        self._n += 1
        self._lo = min(self._lo, raw)
        self._hi = max(self._hi, raw)
        if now - self._start < DRIFT_WINDOW_S:
            return self.current
        self.means.append(self._sum / self._n)
        self.ranges.append((self._hi - self._lo) / abs(cpg))
        self._start, self._sum, self._n, self._lo, self._hi = now, 0.0, 0, math.inf, -math.inf
        self.current = None
        if len(self.means) == 4:
            m = list(self.means)
            steps = [(b - a) / abs(cpg) / DRIFT_WINDOW_S for a, b in zip(m, m[1:])]
            same_sign = all(x > 0 for x in steps) or all(x < 0 for x in steps)
            slow = min(abs(x) for x in steps)
            # a ramp is smooth: inside each window the reading spans about one step; a hand's press spans far more
            smooth = max(self.ranges) <= 3 * max(abs(x) for x in steps) * DRIFT_WINDOW_S + 0.5
            if same_sign and slow >= DRIFT_G_PER_S and max(abs(x) for x in steps) <= 2 * slow and smooth:
                self.current = sum(steps) / len(steps)
        return self.current

    current: float | None = None


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
        self._watch: dict[str, _CellWatch] = {}
        self._tilt_raw = False
        self._tilt_changes: deque[float] = deque()

    @property
    def present(self) -> bool:
        return bool(self.health)

    def on_tilt(self, callback: Callable[[str, bool], None]) -> None:
        self._listeners.append(callback)

    def _fault(self, h: Health, reason: str, now: float, *, backoff: bool) -> None:
        """Mark a device unavailable with the reason; backoff=False keeps reading (the data was bad, not the link)."""
        h.faults += 1
        if h.ok or h.reason != reason:
            log.warning("%s unavailable: %s", h.name, reason)
            h.since = datetime.now(timezone.utc).isoformat(timespec="seconds")
            h.since_mono = now
        if backoff and not h.ok:
            h.backoff = min(BACKOFF_MAX_S, h.backoff * 2)
        h.ok, h.reason = False, reason
        h.retry_at = now + h.backoff if backoff else now
        h.data_fault = not backoff

    def _recovered(self, h: Health) -> None:
        if not h.ok:
            log.info("%s is back", h.name)
            h.ok, h.reason, h.backoff, h.data_fault = True, None, BACKOFF_START_S, False

    def _guard(self, h: Health, read: Callable[[], Any], now: float) -> Any:
        if not h.ok and now < h.retry_at:
            return None
        try:
            value = read()
        except Exception as exc:  # every device fault becomes visible state, never a dead loop
            self._fault(h, exc.reason if isinstance(exc, SensorFault) else f"{type(exc).__name__}: {exc}", now,
                        backoff=True)
            return None
        if not h.ok and not h.data_fault:
            self._recovered(h)
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
        if isinstance(raw, bool) or not isinstance(raw, int):
            self._fault(h, f"returned {raw!r}, not a count (a whole number)", now, backoff=False)
            return
        watch = self._watch.setdefault(cell.name, _CellWatch())
        if raw in GLITCH_VALUES:
            h.glitches += 1
            watch.glitch_run += 1
            if watch.glitch_run >= GLITCH_RUN:
                self._fault(h, f"returns only glitch values (0, -1 or full scale): {watch.glitch_run} in a row",
                            now, backoff=False)
            return
        watch.glitch_run = 0
        drift = watch.drift(now, raw, self.cal.counts_per_gram.get(cell.name, 1.0))
        if drift is not None:
            self._fault(h, f"drifts fast ({drift:+.1f} g/s with nothing changing on the arm)", now, backoff=False)
        elif not h.ok and h.data_fault:
            self._recovered(h)
        if not h.ok:
            return
        with self._lock:
            prev = self._counts.get(cell.name)
            # light smoothing for the display only; inference (sensing/) works on the raw samples
            self._counts[cell.name] = raw if prev is None else prev + 0.3 * (raw - prev)
        self._emit(now, cell.name, raw)

    def _poll_accel(self) -> None:
        now = self.clock.now()
        h = self.health[self.accel.name]
        xyz = self._guard(h, lambda: self.accel.read(0.2), now)
        if xyz is None:
            return
        if not (isinstance(xyz, (tuple, list)) and len(xyz) == 3 and
                all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in xyz)):
            self._fault(h, f"reads nonsense ({xyz!r}: not three finite numbers)", now, backoff=False)
            return
        if not h.ok and h.data_fault:
            self._recovered(h)
        value = xyz[AXES.index(self.cal.axis)] - self.cal.level_g
        with self._lock:
            self._sin += 0.3 * (max(-1.0, min(1.0, value)) - self._sin)
        for axis, v in zip(AXES, xyz):
            self._emit(now, axis, v)

    def _poll_tilt(self) -> None:
        now = self.clock.now()
        h = self.health[self.tilt.name]
        raw = self._guard(h, self.tilt.is_closed, now)
        if raw is None:
            return
        changes = self._tilt_changes
        if bool(raw) != self._tilt_raw:
            self._tilt_raw = bool(raw)
            changes.append(now)
        while changes and now - changes[0] > 1.0:
            changes.popleft()
        if len(changes) >= CHATTER_PER_S:
            self._fault(h, f"the tilt switch chatters ({len(changes)} changes in a second): check its wiring",
                        now, backoff=False)
            return
        if not h.ok and h.data_fault:
            self._recovered(h)
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
