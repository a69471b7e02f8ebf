"""Register-level I2C devices on smbus2: bounded transfers, retries with backoff, faults with the fix.

Every transfer of a device runs on that device's worker thread (a hung bus cannot hold
the daemon's loop past a read's deadline). An OSError from the bus is retried a few
times with a growing pause; when the retries are used up it becomes a DeviceFault and
the chip is set up again on the next read, because a chip that lost power comes back
with its power-on register values (an MPU-6050 asleep, a NAU7802 powered down).
"""

from __future__ import annotations

import abc
import logging
import threading
from typing import Any, Callable

from companion.foundation.clock import Clock
from companion.hardware.deadline import DeadlineWorker, SampleStats
from companion.hardware.faults import DeviceFault, i2c_open_fault, i2c_transfer_fault

log = logging.getLogger(__name__)

# How much longer than a read's timeout the caller waits for the worker: enough for the job to
# notice its own deadline between two transfers and report the specific fault.
GRACE_S = 0.02


def default_smbus_factory(bus: int) -> Any:
    import smbus2  # noqa: PLC0415 - only the real drivers need it

    return smbus2.SMBus(bus)


class I2CDevice(abc.ABC):
    kind = "I2C device"

    def __init__(self, name: str, bus: int, address: int, *, smbus_factory: Callable[[int], Any] | None = None,
                 clock: Clock | None = None, retries: int = 3, retry_s: float = 0.002):
        self.name = name
        self.bus = bus
        self.address = address
        self.clock = clock or Clock()
        self.smbus_factory = smbus_factory or default_smbus_factory
        self.retries = retries
        self.retry_s = retry_s
        self.stats = SampleStats(self.clock)
        self.bus_errors = 0
        self._worker = DeadlineWorker(name, clock=self.clock)
        self._handle: Any = None
        self._initialized = False
        self._lock = threading.Lock()

    @property
    def where(self) -> str:
        return f"I2C bus {self.bus} at 0x{self.address:02X}"

    def describe(self) -> str:
        return f"{self.kind} on {self.where}"

    def health(self) -> dict:
        out = self.stats.as_dict()
        out["bus_errors"] = self.bus_errors
        return out

    # --- subclasses
    @abc.abstractmethod
    def _init(self, deadline: float) -> None:
        """Check the chip's identity and configure it; DeviceFault if it is not the expected chip."""

    @abc.abstractmethod
    def _sample(self, deadline: float) -> Any:
        """One reading, once the chip is set up; DeviceFault when none comes by the deadline."""

    # --- the public face
    def probe(self, timeout: float) -> None:
        """Open the bus and set the chip up (identity check included), within timeout."""
        deadline = self.clock.now() + timeout
        self._worker.call(lambda: self._ensure_init(deadline), timeout + GRACE_S)

    def read(self, timeout: float = 0.5) -> Any:
        deadline = self.clock.now() + timeout

        def job() -> Any:
            self._ensure_init(deadline)
            return self._sample(deadline)

        return self._worker.call(job, timeout + GRACE_S)

    def close(self) -> None:
        self._worker.close()
        with self._lock:
            handle, self._handle = self._handle, None
        if handle is not None:
            try:
                handle.close()
            except OSError as exc:  # closing at shutdown: report, and go on closing the rest
                log.warning("%s: closing %s: %s", self.name, self.where, exc)

    # --- on the worker thread
    def _ensure_init(self, deadline: float) -> None:
        if not self._initialized:
            self._init(deadline)
            self._initialized = True

    def _smbus(self) -> Any:
        with self._lock:
            if self._handle is None:
                try:
                    self._handle = self.smbus_factory(self.bus)
                except OSError as exc:
                    raise i2c_open_fault(self.name, self.bus, exc) from exc
            return self._handle

    def _xfer(self, deadline: float, fn: Callable[[Any], Any]) -> Any:
        delay = self.retry_s
        attempt = 0
        while True:
            handle = self._smbus()
            try:
                return fn(handle)
            except OSError as exc:
                attempt += 1
                self.bus_errors += 1
                if attempt >= self.retries or self.clock.now() + delay >= deadline:
                    # the chip may have been unplugged or reset: set it up again before trusting it
                    self._initialized = False
                    raise i2c_transfer_fault(self.name, self.bus, self.address, exc) from exc
                log.debug("%s: %s, retrying in %.3f s", self.name, exc, delay)
                self.clock.sleep(delay)
                delay *= 2

    def read_reg(self, deadline: float, reg: int) -> int:
        return self._xfer(deadline, lambda h: h.read_byte_data(self.address, reg))

    def write_reg(self, deadline: float, reg: int, value: int) -> None:
        self._xfer(deadline, lambda h: h.write_byte_data(self.address, reg, value & 0xFF))

    def read_block(self, deadline: float, reg: int, length: int) -> list[int]:
        data = self._xfer(deadline, lambda h: h.read_i2c_block_data(self.address, reg, length))
        if len(data) != length:
            raise DeviceFault(self.name, f"short read from {self.where}: {len(data)} of {length} bytes")
        return list(data)

    def wait_for(self, deadline: float, what: str, reg: int, mask: int, want: int, poll_s: float = 0.001) -> int:
        """Poll a register until (value & mask) == want; DeviceFault naming `what` at the deadline."""
        while True:
            value = self.read_reg(deadline, reg)
            if value & mask == want:
                return value
            if self.clock.now() >= deadline:
                raise DeviceFault(self.name, f"{what} did not happen in time (register 0x{reg:02X} = 0x{value:02X})",
                                  "check the chip's power; a chip that keeps failing this may be damaged")
            self.clock.sleep(poll_s)
