"""A stand-in for smbus2.SMBus: register maps of NAU7802, MPU-6050 and ADXL345 chips on numbered buses.

Each chip models what the drivers rely on: identity registers, power-on register
values (an MPU-6050 wakes up asleep, a NAU7802 powered down), data registers that
read zero until the chip measures, and faults: an OSError on reads, a read that
hangs, a chip that loses power.
"""

from __future__ import annotations

import errno
import struct
import threading
from collections import deque
from typing import Callable, Iterable


class FakeChip:
    def __init__(self):
        self.regs = bytearray(256)
        self.fail_reads = 0          # this many next transfers raise OSError (EREMOTEIO)
        self.fail_always = False
        self.hang: threading.Event | None = None   # transfers block until this is set
        self.reads = 0
        self.writes: list[tuple[int, int]] = []
        self.power_on()

    def power_on(self) -> None:
        self.regs[:] = bytes(256)

    def _gate(self) -> None:
        if self.hang is not None:
            self.hang.wait(5)
        if self.fail_always:
            raise OSError(errno.EREMOTEIO, "Remote I/O error")
        if self.fail_reads > 0:
            self.fail_reads -= 1
            raise OSError(errno.EREMOTEIO, "Remote I/O error")

    def read(self, reg: int) -> int:
        self._gate()
        self.reads += 1
        return self.regs[reg]

    def write(self, reg: int, value: int) -> None:
        self._gate()
        self.writes.append((reg, value))
        self.regs[reg] = value

    def read_block(self, reg: int, length: int) -> list[int]:
        self._gate()
        self.reads += 1
        return [self.regs[reg + i] for i in range(length)]


class MPU6050Chip(FakeChip):
    def __init__(self, who_am_i: int = 0x68, g: tuple[float, float, float] = (0.0, 0.0, 1.0)):
        self.who_am_i = who_am_i
        self.g = g
        super().__init__()

    def power_on(self) -> None:
        super().power_on()
        self.regs[0x75] = self.who_am_i
        self.regs[0x6B] = 0x40  # asleep after power-on

    def write(self, reg: int, value: int) -> None:
        if reg == 0x6B and value & 0x80:
            self._gate()
            self.power_on()
            return
        super().write(reg, value)

    def read_block(self, reg: int, length: int) -> list[int]:
        if not self.regs[0x6B] & 0x40:
            fs = 16384 >> ((self.regs[0x1C] >> 3) & 3)
            self.regs[0x3B:0x41] = struct.pack(">hhh", *(round(v * fs) for v in self.g))
        return super().read_block(reg, length)


class ADXL345Chip(FakeChip):
    def __init__(self, devid: int = 0xE5, g: tuple[float, float, float] = (0.0, 0.0, 1.0)):
        self.devid = devid
        self.g = g
        super().__init__()

    def power_on(self) -> None:
        super().power_on()
        self.regs[0x00] = self.devid

    def read_block(self, reg: int, length: int) -> list[int]:
        if self.regs[0x2D] & 0x08:
            self.regs[0x32:0x38] = struct.pack("<hhh", *(round(v * 256) for v in self.g))
        return super().read_block(reg, length)


class NAU7802Chip(FakeChip):
    """Conversions come from `values` (or `source()`); the first `settle_garbage` after power-up are garbage."""

    def __init__(self, values: Iterable[int] = (), *, source: Callable[[], int] | None = None,
                 revision: int = 0x0F, settle_garbage: int = 4, calibration_polls: int = 2, cal_error: bool = False):
        self.values = deque(values)
        self.source = source
        self.revision = revision
        self.settle_garbage = settle_garbage
        self.calibration_polls = calibration_polls
        self.cal_error = cal_error
        self.garbage_left = settle_garbage
        self.cal_left = 0
        self.conversions = 0
        super().__init__()

    def power_on(self) -> None:
        super().power_on()
        self.regs[0x1F] = self.revision
        self.garbage_left = self.settle_garbage

    def write(self, reg: int, value: int) -> None:
        if reg == 0x00:
            self._gate()
            self.writes.append((reg, value))
            if value & 0x01:            # RR: every register to its power-on value
                self.power_on()
                self.regs[0x00] = 0x01
                return
            # PUR follows PUD; CR and PUR are read-only
            ready = 0x08 if value & 0x02 else 0
            self.regs[0x00] = (value & ~0x28) | ready
            return
        if reg == 0x02 and value & 0x04:
            self._gate()
            self.writes.append((reg, value))
            self.regs[0x02] = value
            self.cal_left = self.calibration_polls
            return
        super().write(reg, value)

    def read(self, reg: int) -> int:
        if reg == 0x02 and self.regs[0x02] & 0x04:
            if self.cal_left > 0:
                self.cal_left -= 1
            else:
                self.regs[0x02] = (self.regs[0x02] & ~0x04) | (0x08 if self.cal_error else 0)
        if reg == 0x00:
            pu = self.regs[0x00]
            converting = pu & 0x16 == 0x16 and not self.regs[0x02] & 0x04   # PUD, PUA, CS; not calibrating
            if converting and not pu & 0x20 and (self.values or self.source or self.garbage_left):
                self._convert()
        return super().read(reg)

    def _convert(self) -> None:
        if self.garbage_left > 0:
            self.garbage_left -= 1
            value = 0x0BAD00 + self.garbage_left
        elif self.values:
            value = self.values.popleft()
        else:
            value = self.source()
        self.conversions += 1
        self.regs[0x12:0x15] = (value & 0xFFFFFF).to_bytes(3, "big")
        self.regs[0x00] |= 0x20

    def read_block(self, reg: int, length: int) -> list[int]:
        data = super().read_block(reg, length)
        if reg == 0x12:
            self.regs[0x00] &= ~0x20   # reading the result clears cycle-ready
        return data


class FakeSMBus:
    def __init__(self, net: "FakeI2C", bus: int):
        self.net = net
        self.bus = bus
        self.closed = False

    def _chip(self, address: int) -> FakeChip:
        if self.closed:
            raise OSError(errno.EBADF, "Bad file descriptor")
        chip = self.net.chips.get((self.bus, address))
        if chip is None:
            raise OSError(errno.EREMOTEIO, "Remote I/O error")
        return chip

    def read_byte_data(self, i2c_addr: int, register: int, force=None) -> int:
        return self._chip(i2c_addr).read(register)

    def write_byte_data(self, i2c_addr: int, register: int, value: int, force=None) -> None:
        self._chip(i2c_addr).write(register, value)

    def read_i2c_block_data(self, i2c_addr: int, register: int, length: int, force=None) -> list[int]:
        return self._chip(i2c_addr).read_block(register, length)

    def close(self) -> None:
        self.closed = True


class FakeI2C:
    """The buses of one fake Pi; `factory` stands in for smbus2.SMBus(bus)."""

    def __init__(self, buses: Iterable[int] = (1,)):
        self.buses = set(buses)
        self.denied: set[int] = set()
        self.chips: dict[tuple[int, int], FakeChip] = {}
        self.opened: list[FakeSMBus] = []
        self.open_attempts = 0

    def add(self, address: int, chip: FakeChip, bus: int = 1) -> FakeChip:
        self.chips[(bus, address)] = chip
        return chip

    def factory(self, bus: int) -> FakeSMBus:
        self.open_attempts += 1
        if bus in self.denied:
            raise PermissionError(errno.EACCES, "Permission denied", f"/dev/i2c-{bus}")
        if bus not in self.buses:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", f"/dev/i2c-{bus}")
        handle = FakeSMBus(self, bus)
        self.opened.append(handle)
        return handle
