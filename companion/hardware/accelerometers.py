"""Accelerometers on the arm, over I2C at register level: MPU-6050 (and its common clones) and ADXL345.

All three axes come from one block read, so x, y and z belong to the same instant.
A chip that reads exactly zero on every axis is asleep or was reset by a power
glitch (a real one always feels gravity): it is set up again.
"""

from __future__ import annotations

import struct
from typing import Any, Callable

from companion.foundation.clock import Clock
from companion.hardware.faults import DeviceFault
from companion.hardware.i2c import I2CDevice

DEFAULT_ADDRESS = {"mpu6050": 0x68, "adxl345": 0x53}


class _Accelerometer(I2CDevice):
    kind = "accelerometer"
    data_reg = 0
    data_format = ">hhh"
    lsb_per_g = 1.0
    default_address = 0x68

    def __init__(self, name: str = "accelerometer", bus: int = 1, address: int | None = None, *,
                 smbus_factory: Callable[[int], Any] | None = None, clock: Clock | None = None,
                 poll_s: float = 0.002):
        super().__init__(name, bus, address if address is not None else self.default_address,
                         smbus_factory=smbus_factory, clock=clock)
        self.poll_s = poll_s
        self.chip_id: int | None = None
        self.chip_name: str | None = None

    def describe(self) -> str:
        found = f" (id 0x{self.chip_id:02X}: {self.chip_name})" if self.chip_id is not None else ""
        return f"{self.kind}{found} on {self.where}"

    def _sample(self, deadline: float) -> tuple[float, float, float]:
        while True:
            raw = struct.unpack(self.data_format, bytes(self.read_block(deadline, self.data_reg, 6)))
            if raw != (0, 0, 0):
                self.stats.sample()
                scale = self.lsb_per_g
                return raw[0] / scale, raw[1] / scale, raw[2] / scale
            if self.clock.now() >= deadline:
                self._initialized = False
                self.stats.resets += 1
                raise DeviceFault(self.name, f"{self.kind} reads exactly 0 g on every axis (asleep or reset)",
                                  "it is set up again on the next read; if this repeats, check its power")
            # just after waking the data registers may still hold the power-on zeros
            self.clock.sleep(self.poll_s)


class MPU6050(_Accelerometer):
    kind = "MPU-6050"
    default_address = 0x68
    WHO_AM_I, PWR_MGMT_1, SMPLRT_DIV, CONFIG, ACCEL_CONFIG, ACCEL_XOUT_H = 0x75, 0x6B, 0x19, 0x1A, 0x1C, 0x3B
    SLEEP = 0x40
    # WHO_AM_I values of the MPU-6050 and of the chips sold on "MPU-6050" boards; all share the
    # registers used here (power management, accelerometer config, data at 0x3B)
    IDS = {0x68: "MPU-6050", 0x70: "MPU-6500", 0x71: "MPU-9250", 0x72: "MPU-6050 clone", 0x73: "MPU-9255",
           0x98: "MPU-6050 clone (ICM-20689 id)"}
    data_reg = ACCEL_XOUT_H
    data_format = ">hhh"
    lsb_per_g = 16384.0  # ±2 g full scale

    def _init(self, deadline: float) -> None:
        who = self.read_reg(deadline, self.WHO_AM_I)
        if who not in self.IDS:
            raise DeviceFault(self.name, f"the chip at 0x{self.address:02X} on bus {self.bus} says WHO_AM_I "
                                         f"0x{who:02X}: not an MPU-6050 or a known clone",
                              "set [accelerometer] chip to the board you have (an ADXL345 is at 0x53 or 0x1D) "
                              "and check its address")
        self.chip_id, self.chip_name = who, self.IDS[who]
        # wake (the chip powers up asleep) with the gyro X PLL as clock, the steadiest source
        self.write_reg(deadline, self.PWR_MGMT_1, 0x01)
        # digital low-pass ~21 Hz: the arm swings at ~1 Hz, faster wiggles are noise
        self.write_reg(deadline, self.CONFIG, 0x04)
        self.write_reg(deadline, self.SMPLRT_DIV, 9)   # 1 kHz / (1 + 9) = 100 samples/s
        self.write_reg(deadline, self.ACCEL_CONFIG, 0x00)
        if self.read_reg(deadline, self.PWR_MGMT_1) & self.SLEEP:
            raise DeviceFault(self.name, "MPU-6050 stays asleep after being woken",
                              "check its power (VCC and GND); the chip may be damaged")
        self.stats.resets += 1


class ADXL345(_Accelerometer):
    kind = "ADXL345"
    default_address = 0x53
    DEVID, BW_RATE, POWER_CTL, DATA_FORMAT, DATAX0 = 0x00, 0x2C, 0x2D, 0x31, 0x32
    DEVICE_ID = 0xE5
    MEASURE = 0x08
    data_reg = DATAX0
    data_format = "<hhh"
    lsb_per_g = 256.0  # full resolution: 3.9 mg per LSB at any range

    def _init(self, deadline: float) -> None:
        devid = self.read_reg(deadline, self.DEVID)
        if devid != self.DEVICE_ID:
            raise DeviceFault(self.name, f"the chip at 0x{self.address:02X} on bus {self.bus} has device id "
                                         f"0x{devid:02X}, not an ADXL345's 0xE5",
                              "set [accelerometer] chip to the board you have (an MPU-6050 is at 0x68 or 0x69) "
                              "and check its address")
        self.chip_id, self.chip_name = devid, "ADXL345"
        self.write_reg(deadline, self.BW_RATE, 0x0A)      # 100 samples/s
        self.write_reg(deadline, self.DATA_FORMAT, 0x08)  # full resolution, ±2 g, right-justified
        self.write_reg(deadline, self.POWER_CTL, self.MEASURE)
        if not self.read_reg(deadline, self.POWER_CTL) & self.MEASURE:
            raise DeviceFault(self.name, "ADXL345 does not enter measurement mode",
                              "check its power (VCC and GND); the chip may be damaged")
        self.stats.resets += 1


CHIPS = {"mpu6050": MPU6050, "adxl345": ADXL345}


def make_accelerometer(chip: str, *, bus: int = 1, address: int | None = None, name: str = "accelerometer",
                       smbus_factory: Callable[[int], Any] | None = None,
                       clock: Clock | None = None) -> _Accelerometer:
    try:
        cls = CHIPS[chip]
    except KeyError:
        raise ValueError(f"unknown accelerometer chip {chip!r} (known: {', '.join(CHIPS)})") from None
    return cls(name, bus, address, smbus_factory=smbus_factory, clock=clock)
