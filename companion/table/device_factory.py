"""From the config to real drivers: `build_devices(config)`.

Nothing here raises for a device that is missing or broken. A device that cannot be
opened at start is listed in `Devices.failures` and replaced by a stand-in with the
same interface: its reads raise SensorFault with the reason (so the daemon shows it
as unavailable) and, with backoff, try opening the real device again — once that
works the stand-in hands every later call to it, so the device comes back on its own.
Buttons and indicator outputs are opened pin by pin and retry on their own (see
gpio_devices), so one bad pin never takes the others down.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Callable

from companion.foundation.clock import Clock
from companion.config import Config, LoadCellConfig
from companion.hardware.accelerometers import make_accelerometer
from companion.hardware.deadline import Backoff
from companion.hardware.faults import DeviceFault
from companion.hardware.gpio_devices import GpioButtonPanel, GpioIndicators, GpioTiltSwitch
from companion.hardware.hx711_cell import HX711Cell
from companion.hardware.interfaces import SensorFault
from companion.hardware.nau7802 import NAU7802Cell

log = logging.getLogger(__name__)

# Long enough for an HX711 at 10 samples/s (RATE pin low) to show its first conversion.
OPEN_TIMEOUT_S = 0.5
RETRY_START_S = 1.0
RETRY_MAX_S = 30.0

Opener = Callable[[float], Any]   # timeout -> an opened device, or DeviceFault


def _fault_from(name: str, exc: Exception) -> DeviceFault:
    """Any failure while opening, as a fresh DeviceFault; the unexpected ones with their traceback in the log.

    Fresh, and holding no traceback: a stand-in keeps it for a long time and raises it on
    every read, and a kept traceback would hold every frame (and device) it passed through.
    """
    if isinstance(exc, DeviceFault):
        return DeviceFault(name, exc.problem, exc.fix, passing=exc.passing)
    if isinstance(exc, SensorFault):
        return DeviceFault(name, exc.reason)
    log.error("%s: unexpected error while opening", name, exc_info=exc)
    return DeviceFault(name, f"{type(exc).__name__}: {exc}")


class _Pending:
    """A device that could not be opened: reads fail with the reason, and retry opening with backoff."""

    def __init__(self, name: str, opener: Opener, fault: DeviceFault, clock: Clock):
        self.name = name
        self._opener = opener
        self.fault = fault
        self.clock = clock
        self.device: Any = None
        self._backoff = Backoff(RETRY_START_S, RETRY_MAX_S)
        self._backoff.failed(clock.now())

    @property
    def reason(self) -> str:
        return self.fault.reason

    def describe(self) -> str:
        if self.device is not None:
            return self.device.describe()
        return f"{self.name} (not opened: {self.reason})"

    def health(self) -> dict:
        return self.device.health() if self.device is not None and hasattr(self.device, "health") else {}

    def _get(self, timeout: float) -> Any:
        """The real device, opening it if the backoff allows; else SensorFault with the reason."""
        if self.device is not None:
            return self.device
        now = self.clock.now()
        if not self._backoff.ready(now):
            raise DeviceFault(self.name, self.fault.problem, self.fault.fix)
        try:
            self.device = self._opener(timeout)
        except Exception as exc:  # every failure to open is the device's reason for being unavailable
            self.fault = _fault_from(self.name, exc)
            self._backoff.failed(self.clock.now())
        if self.device is None:
            raise DeviceFault(self.name, self.fault.problem, self.fault.fix)
        log.info("%s opened after all: %s", self.name, self.device.describe())
        return self.device

    def close(self) -> None:
        if self.device is not None:
            self.device.close()


class PendingLoadCell(_Pending):
    def read(self, timeout: float = 0.5) -> int:
        start = self.clock.now()
        device = self._get(timeout)
        return device.read(max(0.0, timeout - (self.clock.now() - start)))


class PendingAccelerometer(_Pending):
    def read(self, timeout: float = 0.5) -> tuple[float, float, float]:
        start = self.clock.now()
        device = self._get(timeout)
        return device.read(max(0.0, timeout - (self.clock.now() - start)))


class PendingTiltSwitch(_Pending):
    def is_closed(self) -> bool:
        return self._get(OPEN_TIMEOUT_S).is_closed()


@dataclass
class Devices:
    load_cells: list = field(default_factory=list)
    accelerometer: Any = None
    tilt: Any = None
    buttons: Any = None
    indicators: Any = None
    failures: list[tuple[str, str]] = field(default_factory=list)

    def all(self) -> list[Any]:
        return [d for d in (*self.load_cells, self.accelerometer, self.tilt, self.buttons, self.indicators)
                if d is not None]

    def unavailable(self) -> list[tuple[str, str]]:
        """(device name, reason) for every device not working now: stand-ins not yet opened, dead pins."""
        out = []
        for d in self.all():
            if isinstance(d, _Pending) and d.device is None:
                out.append((d.name, d.reason))
            elif hasattr(d, "failures"):
                out.extend(d.failures())
        return out

    def close(self) -> None:
        for d in self.all():
            try:
                d.close()
            except Exception as exc:  # closing at shutdown: report each failure and close the rest
                log.warning("closing %s: %s", getattr(d, "name", d), exc)


# --- openers: each returns an opened, answering device within its timeout, or raises DeviceFault
def load_cell_opener(cell: LoadCellConfig, *, smbus_factory: Any = None, clock: Clock | None = None) -> Opener:
    def open_hx711(timeout: float) -> HX711Cell:
        if cell.dout_pin is None or cell.sck_pin is None:
            raise DeviceFault(cell.name, "an HX711 cell needs dout_pin and sck_pin",
                              f"set dout_pin and sck_pin in the [[load_cells]] table named {cell.name}")
        dev = HX711Cell(cell.name, cell.dout_pin, cell.sck_pin, cell.gain, clock=clock)
        try:
            dev.probe(timeout)
        except BaseException:
            dev.close()  # free the pins so the next attempt can claim them again
            raise
        return dev

    def open_nau7802(timeout: float) -> NAU7802Cell:
        dev = NAU7802Cell(cell.name, cell.i2c_bus, cell.address, cell.gain, smbus_factory=smbus_factory, clock=clock)
        try:
            dev.probe(timeout)
        except BaseException:
            dev.close()
            raise
        return dev

    return open_nau7802 if cell.adc == "nau7802" else open_hx711


def accelerometer_opener(spec: dict, *, smbus_factory: Any = None, clock: Clock | None = None) -> Opener:
    def open_accelerometer(timeout: float) -> Any:
        dev = make_accelerometer(spec.get("chip", "mpu6050"), bus=spec.get("i2c_bus", 1), address=spec.get("address"),
                                 smbus_factory=smbus_factory, clock=clock)
        try:
            dev.probe(timeout)
        except BaseException:
            dev.close()
            raise
        return dev

    return open_accelerometer


def tilt_opener(spec: dict, *, pin_factory: Any = None) -> Opener:
    def open_tilt(timeout: float) -> GpioTiltSwitch:
        if spec.get("pin") is None:
            raise DeviceFault("tilt_switch", "no pin set", "set pin in [tilt_switch]")
        return GpioTiltSwitch(spec["pin"], active_low=spec.get("active_low", True), pin_factory=pin_factory)

    return open_tilt


def _open(name: str, opener: Opener, stand_in: type[_Pending], timeout: float, clock: Clock,
          failures: list[tuple[str, str]]) -> Any:
    try:
        return opener(timeout)
    except Exception as exc:  # a device that cannot be opened must not stop the daemon: it waits as a stand-in
        fault = _fault_from(name, exc)
        log.warning("%s unavailable at start: %s", name, fault.reason)
        failures.append((name, fault.reason))
        return stand_in(name, opener, fault, clock)


def build_devices(config: Config, *, pin_factory: Any = None, smbus_factory: Any = None, clock: Clock | None = None,
                  open_timeout: float = OPEN_TIMEOUT_S, start_threads: bool = True) -> Devices:
    """Open every configured device; never raises for a device (see the module docstring)."""
    clock = clock or Clock()
    out = Devices()
    for cell in config.load_cells:
        opener = load_cell_opener(cell, smbus_factory=smbus_factory, clock=clock)
        out.load_cells.append(_open(cell.name, opener, PendingLoadCell, open_timeout, clock, out.failures))
    if config.accelerometer is not None:
        opener = accelerometer_opener(dict(config.accelerometer), smbus_factory=smbus_factory, clock=clock)
        out.accelerometer = _open("accelerometer", opener, PendingAccelerometer, open_timeout, clock, out.failures)
    if config.tilt_switch is not None:
        opener = tilt_opener(dict(config.tilt_switch), pin_factory=pin_factory)
        out.tilt = _open("tilt_switch", opener, PendingTiltSwitch, open_timeout, clock, out.failures)
    if config.buttons:
        out.buttons = GpioButtonPanel(config.buttons, pin_factory=pin_factory, clock=clock, start=start_threads)
        out.failures.extend(out.buttons.failures())
    if config.indicators:
        out.indicators = GpioIndicators(config.indicators, pin_factory=pin_factory, clock=clock)
        out.failures.extend(out.indicators.failures())
    return out
