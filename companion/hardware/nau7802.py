"""A load cell read through a NAU7802 24-bit ADC over I2C (register level, smbus2).

No bit-banging and no timing-critical GPIO, so it works the same on every Pi model.
Its I2C address is fixed at 0x2A: two of them need two buses (see hardware/wiring.md).
Power-up follows the datasheet: register reset, digital power-up, wait for the
power-up-ready bit, configure (LDO 3.3 V, gain, rate, chopper clock off, PGA output
capacitor), analog power-up, cycle start, internal offset calibration; then the
first conversions are discarded while the ADC settles.
"""

from __future__ import annotations

from typing import Any, Callable

from companion.foundation.clock import Clock
from companion.hardware.faults import DeviceFault
from companion.hardware.i2c import I2CDevice

ADDRESS = 0x2A

PU_CTRL, CTRL1, CTRL2, ADCO_B2, ADC, PGA, PGA_PWR, REVISION = 0x00, 0x01, 0x02, 0x12, 0x15, 0x1B, 0x1C, 0x1F
# PU_CTRL bits
RR, PUD, PUA, PUR, CS, CR, AVDDS = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x80
# CTRL2 bits
CALS, CAL_ERR = 0x04, 0x08
GAIN_CODES = {1: 0, 2: 1, 4: 2, 8: 3, 16: 4, 32: 5, 64: 6, 128: 7}
RATE_CODES = {10: 0, 20: 1, 40: 2, 80: 3, 320: 7}
LDO_3V3 = 4 << 3
SATURATED = (0x7FFFFF, -0x800000)
SETTLE_CONVERSIONS = 4


def signed24(b2: int, b1: int, b0: int) -> int:
    raw = (b2 << 16) | (b1 << 8) | b0
    return raw - 0x1000000 if raw & 0x800000 else raw


class NAU7802Cell(I2CDevice):
    kind = "NAU7802"

    def __init__(self, name: str, bus: int = 1, address: int = ADDRESS, gain: int = 128, *, rate_sps: int = 80,
                 smbus_factory: Callable[[int], Any] | None = None, clock: Clock | None = None,
                 settle_conversions: int = SETTLE_CONVERSIONS, poll_s: float = 0.001):
        if gain not in GAIN_CODES:
            raise ValueError(f"{name}: NAU7802 gain must be one of {sorted(GAIN_CODES)}, not {gain}")
        if rate_sps not in RATE_CODES:
            raise ValueError(f"{name}: NAU7802 rate must be one of {sorted(RATE_CODES)} samples/s, not {rate_sps}")
        super().__init__(name, bus, address, smbus_factory=smbus_factory, clock=clock)
        self.gain = gain
        self.rate_sps = rate_sps
        self.settle_conversions = settle_conversions
        self.poll_s = poll_s
        self.revision: int | None = None
        self._calibrating = False
        self._settle_left = 0

    def describe(self) -> str:
        return f"NAU7802 on {self.where}, gain {self.gain}, {self.rate_sps} samples/s"

    def _init(self, deadline: float) -> None:
        self.write_reg(deadline, PU_CTRL, RR)
        self.clock.sleep(0.001)
        self.write_reg(deadline, PU_CTRL, PUD)
        self.wait_for(deadline, "power-up (PUR)", PU_CTRL, PUR, PUR)
        rev = self.read_reg(deadline, REVISION)
        if rev & 0x0F != 0x0F:
            raise DeviceFault(self.name, f"the chip at 0x{self.address:02X} on bus {self.bus} has revision id "
                                         f"0x{rev:02X}, not a NAU7802's (0x?F)",
                              "check [load_cells] address and adc for this cell")
        self.revision = rev
        self.write_reg(deadline, CTRL1, LDO_3V3 | GAIN_CODES[self.gain])
        self.write_reg(deadline, PU_CTRL, PUD | PUA | AVDDS)
        rate = RATE_CODES[self.rate_sps] << 4
        self.write_reg(deadline, CTRL2, rate)
        # datasheet: REG0x15 bits 4-5 = 11 turns the chopper clock off (less noise with one channel)
        self.write_reg(deadline, ADC, self.read_reg(deadline, ADC) | 0x30)
        # LDOMODE 0: the improved-stability mode for the low-ESR capacitors breakout boards use
        self.write_reg(deadline, PGA, self.read_reg(deadline, PGA) & ~0x40)
        # PGA output capacitor on channel 2's pins, as recommended when only channel 1 is used
        self.write_reg(deadline, PGA_PWR, self.read_reg(deadline, PGA_PWR) | 0x80)
        self.write_reg(deadline, PU_CTRL, PUD | PUA | AVDDS | CS)
        # internal offset calibration (CALMOD 00); it runs on its own and is waited for in reads
        self.write_reg(deadline, CTRL2, rate | CALS)
        self._calibrating = True
        self._settle_left = self.settle_conversions
        self.stats.resets += 1

    def _sample(self, deadline: float) -> int:
        last = None
        converted = False   # any conversion in this read: a chip that converts is there, maybe settling
        while True:
            pu = self.read_reg(deadline, PU_CTRL)
            if pu & (PUR | PUA) != (PUR | PUA):
                # it lost power and came back with its power-on registers: set it up again
                self._init(deadline)
                continue
            if self._calibrating:
                ctrl2 = self.read_reg(deadline, CTRL2)
                if ctrl2 & CALS:
                    if self.clock.now() >= deadline:
                        raise DeviceFault(self.name, "NAU7802 is still calibrating", passing=True)
                    self.clock.sleep(self.poll_s)
                    continue
                self._calibrating = False
                if ctrl2 & CAL_ERR:
                    self._initialized = False
                    raise DeviceFault(self.name, "NAU7802 internal calibration failed",
                                      "check its supply and the load cell wires (E+, E-, A+, A-)")
            if pu & CR:
                value = signed24(*self.read_block(deadline, ADCO_B2, 3))
                converted = True
                if value in SATURATED:
                    self.stats.saturations += 1
                    last = "saturated"
                elif self._settle_left > 0:
                    self._settle_left -= 1
                else:
                    self.stats.sample()
                    return value
            if self.clock.now() >= deadline:
                if last == "saturated":
                    raise DeviceFault(self.name, "NAU7802 readings saturated (0x7FFFFF/0x800000)",
                                      "the load cell is overloaded or its wires (E+, E-, A+, A-) are loose")
                if self._settle_left > 0 and converted:
                    raise DeviceFault(self.name, "NAU7802 is settling after power-up", passing=True)
                self.stats.timeouts += 1
                raise DeviceFault(self.name, "NAU7802 gave no conversion in time (cycle-ready bit never set)",
                                  "check the chip's power and that it is not held in reset")
            self.clock.sleep(self.poll_s)
