"""Reading the sensors into rows: for `companion record` (a trace file) and for calibration.

Each device gets its own reader thread, because an HX711 read blocks until its
next conversion (about 12 ms at 80 SPS, 100 ms at 10 SPS) and the channels run
on their own clocks. Rows are stamped with the monotonic clock as each read
returns, then put back in time order before they are written (a short holdback
absorbs the threads' scheduling). A device that faults is retried after a pause
and counted; the recording goes on.

The real devices come from `companion.table.device_factory.build_devices(config)`;
with `--simulate` the rows come from the simulated table instead (simtrace.py).
"""

from __future__ import annotations

import heapq
import importlib
import importlib.util
import os
import queue
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, TextIO

from companion.foundation.clock import Clock
from companion.hardware.interfaces import SensorFault
from companion.sensing.trace import format_row

FACTORY = "companion.table.device_factory"
READ_TIMEOUT_S = 0.5
ACCEL_HZ = 100.0
TILT_HZ = 200.0
HOLDBACK_S = 0.3
FAULT_PAUSE_S = 0.2
Row = tuple[float, str, float]


class DriversUnavailable(RuntimeError):
    """No real drivers in this build (or they could not be built from the config)."""


def build_devices(config: Any) -> Any:
    """The real devices, from the hardware layer's factory; DriversUnavailable says why not."""
    if importlib.util.find_spec(FACTORY) is None:
        raise DriversUnavailable(f"real drivers are unavailable: this build has no {FACTORY} module; "
                                 "use --simulate to record from the simulated table")
    factory = importlib.import_module(FACTORY)
    builder = getattr(factory, "build_devices", None)
    if builder is None:
        raise DriversUnavailable(f"real drivers are unavailable: {FACTORY} has no build_devices(config)")
    return builder(config)


@dataclass
class ReaderStats:
    rows: int = 0
    faults: dict[str, int] = field(default_factory=dict)
    late: int = 0
    last_fault: str | None = None


class DeviceReader:
    """Threads reading every device into a queue of rows (t relative to the reader's start)."""

    def __init__(self, devices: Any, *, clock: Clock | None = None, accel_hz: float = ACCEL_HZ,
                 tilt_hz: float = TILT_HZ):
        self.devices = devices
        self.clock = clock or Clock()
        self.accel_hz = accel_hz
        self.tilt_hz = tilt_hz
        self.rows: queue.Queue[Row] = queue.Queue()
        self.stats = ReaderStats()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self.t0 = 0.0
        self._lock = threading.Lock()

    def _fault(self, name: str, exc: BaseException) -> None:
        reason = exc.reason if isinstance(exc, SensorFault) else f"{type(exc).__name__}: {exc}"
        with self._lock:
            self.stats.faults[name] = self.stats.faults.get(name, 0) + 1
            self.stats.last_fault = f"{name}: {reason}"
        self._stop.wait(FAULT_PAUSE_S)

    def _cell(self, cell: Any) -> None:
        while not self._stop.is_set():
            try:
                value = cell.read(READ_TIMEOUT_S)
            except Exception as exc:  # a device fault is counted and retried; the recording goes on
                self._fault(cell.name, exc)
                continue
            self.rows.put((self.clock.now() - self.t0, cell.name, int(value)))

    def _accel(self, accel: Any) -> None:
        period = 1.0 / self.accel_hz
        due = self.clock.now()
        while not self._stop.is_set():
            try:
                x, y, z = accel.read(READ_TIMEOUT_S)
            except Exception as exc:  # as for the load cells
                self._fault(accel.name, exc)
                due = self.clock.now()
                continue
            t = self.clock.now() - self.t0
            for name, v in (("ax", x), ("ay", y), ("az", z)):
                self.rows.put((t, name, float(v)))
            due += period
            self._stop.wait(max(0.0, due - self.clock.now()))

    def _tilt(self, tilt: Any) -> None:
        period = 1.0 / self.tilt_hz
        due = self.clock.now()
        last: int | None = None
        written = -1e9
        while not self._stop.is_set():
            try:
                closed = int(bool(tilt.is_closed()))
            except Exception as exc:  # as for the load cells
                self._fault(tilt.name, exc)
                due = self.clock.now()
                continue
            t = self.clock.now() - self.t0
            # the switch's changes, and a reading a second to show it is alive
            if closed != last or t - written >= 1.0:
                self.rows.put((t, "tilt", closed))
                last, written = closed, t
            due += period
            self._stop.wait(max(0.0, due - self.clock.now()))

    def start(self) -> None:
        self.t0 = self.clock.now()
        self._stop.clear()
        jobs: list[tuple[Callable, Any, str]] = [(self._cell, c, c.name) for c in self.devices.load_cells]
        if getattr(self.devices, "accelerometer", None) is not None:
            jobs.append((self._accel, self.devices.accelerometer, "accelerometer"))
        if getattr(self.devices, "tilt", None) is not None:
            jobs.append((self._tilt, self.devices.tilt, "tilt"))
        for target, device, name in jobs:
            th = threading.Thread(target=target, args=(device,), name=f"read-{name}", daemon=True)
            th.start()
            self._threads.append(th)

    def stop(self) -> None:
        self._stop.set()
        for th in self._threads:
            th.join(timeout=2 * READ_TIMEOUT_S + 0.5)
        self._threads.clear()

    def elapsed(self) -> float:
        return self.clock.now() - self.t0


class Orderer:
    """Puts rows from several threads back in time order, holding each back for `holdback_s`."""

    def __init__(self, holdback_s: float = HOLDBACK_S):
        self.holdback_s = holdback_s
        self._heap: list[tuple[float, int, Row]] = []
        self._n = 0
        self.last_t = float("-inf")
        self.late = 0

    def push(self, row: Row) -> None:
        heapq.heappush(self._heap, (row[0], self._n, row))
        self._n += 1

    def pop_ready(self, now: float, *, everything: bool = False) -> list[Row]:
        out = []
        limit = float("inf") if everything else now - self.holdback_s
        while self._heap and self._heap[0][0] <= limit:
            row = heapq.heappop(self._heap)[2]
            if row[0] < self.last_t:
                # a thread stalled longer than the holdback: its row cannot be placed in order any more
                self.late += 1
                continue
            self.last_t = row[0]
            out.append(row)
        return out


def capture(reader: DeviceReader, seconds: float, *, progress: Callable[[float], None] | None = None) -> list[Row]:
    """Read every device for `seconds`; the rows in time order."""
    order = Orderer()
    out: list[Row] = []
    reader.start()
    try:
        while reader.elapsed() < seconds:
            try:
                order.push(reader.rows.get(timeout=0.05))
            except queue.Empty:
                pass
            if progress is not None:
                progress(min(1.0, reader.elapsed() / seconds))
    finally:
        reader.stop()
    while True:
        try:
            order.push(reader.rows.get_nowait())
        except queue.Empty:
            break
    out.extend(order.pop_ready(0.0, everything=True))
    reader.stats.late = order.late
    return [r for r in out if r[0] <= seconds]


def record_devices(reader: DeviceReader, out: Path, seconds: float | None, *, status: TextIO | None = None,
                   stop: threading.Event | None = None) -> ReaderStats:
    """Record until `seconds` have passed (or `stop` is set, or Ctrl-C); the file appears whole at the end."""
    status = status or sys.stderr
    stop = stop or threading.Event()
    order = Orderer()
    part = out.with_name(out.name + ".part")
    reader.start()
    next_report = 1.0
    try:
        with part.open("w", encoding="utf-8", newline="") as f:
            f.write("t,sensor,value\n")
            try:
                while not stop.is_set() and (seconds is None or reader.elapsed() < seconds):
                    try:
                        order.push(reader.rows.get(timeout=0.05))
                    except queue.Empty:
                        pass
                    for row in order.pop_ready(reader.elapsed()):
                        f.write(format_row(*row) + "\n")
                        reader.stats.rows += 1
                    if reader.elapsed() >= next_report:
                        next_report += 1.0
                        faults = sum(reader.stats.faults.values())
                        note = f", {faults} faults (last: {reader.stats.last_fault})" if faults else ""
                        print(f"\rrecording {reader.elapsed():6.1f} s, {reader.stats.rows} rows{note}   ",
                              end="", file=status, flush=True)
            except KeyboardInterrupt:
                print("\nstopping", file=status)
            finally:
                reader.stop()
                while True:
                    try:
                        order.push(reader.rows.get_nowait())
                    except queue.Empty:
                        break
                for row in order.pop_ready(0.0, everything=True):
                    if seconds is not None and row[0] > seconds:
                        continue  # read while stopping, after the time asked for
                    f.write(format_row(*row) + "\n")
                    reader.stats.rows += 1
                f.flush()
                os.fsync(f.fileno())
        os.replace(part, out)
    except BaseException:
        if part.exists():
            part.unlink()
        raise
    reader.stats.late = order.late
    print(file=status)
    return reader.stats


def write_rows(out: Path, rows: Iterable[Row]) -> int:
    """A whole trace file from rows (written beside, then renamed into place)."""
    part = out.with_name(out.name + ".part")
    n = 0
    try:
        with part.open("w", encoding="utf-8", newline="") as f:
            f.write("t,sensor,value\n")
            for row in rows:
                f.write(format_row(*row) + "\n")
                n += 1
        os.replace(part, out)
    except BaseException:
        if part.exists():
            part.unlink()
        raise
    return n
