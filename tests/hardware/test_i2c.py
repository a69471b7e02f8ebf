"""NAU7802, MPU-6050 and ADXL345 drivers against a mocked smbus2.SMBus holding their register maps."""

from __future__ import annotations

import math
import threading
import time

import pytest

from companion.foundation.clock import FakeClock
from companion.hardware.accelerometers import ADXL345, MPU6050, make_accelerometer
from companion.hardware.faults import DeviceFault
from companion.hardware.interfaces import Accelerometer, LoadCell, SensorFault
from companion.hardware.nau7802 import NAU7802Cell, signed24
from tests.hardware.fake_i2c import ADXL345Chip, FakeI2C, MPU6050Chip, NAU7802Chip


# --- NAU7802
def test_signed24_is_twos_complement():
    assert signed24(0x7F, 0xFF, 0xFF) == 0x7FFFFF
    assert signed24(0x80, 0x00, 0x00) == -0x800000
    assert signed24(0xFF, 0xFF, 0xFF) == -1
    assert signed24(0x01, 0x3D, 0x52) == 81234


def test_nau7802_powers_up_by_the_datasheet_and_returns_exact_counts(i2c):
    values = [81234, -5, 0x7FFFFE, -0x7FFFFF, 0, 1]
    chip = i2c.add(0x2A, NAU7802Chip(values))
    cell = NAU7802Cell("load0", 1, 0x2A, gain=128, smbus_factory=i2c.factory)
    assert isinstance(cell, LoadCell)
    assert [cell.read(0.5) for _ in values] == values
    writes = chip.writes
    assert writes[0] == (0x00, 0x01)                       # register reset first
    assert writes[1] == (0x00, 0x02)                       # then digital power-up
    assert (0x01, (4 << 3) | 7) in writes                  # LDO 3.3 V, gain 128
    assert (0x02, 3 << 4) in writes                        # 80 samples/s
    pu_writes = [v for r, v in writes if r == 0x00]
    assert pu_writes[-1] & 0x16 == 0x16                    # PUD, PUA and cycle start
    assert any(r == 0x02 and v & 0x04 for r, v in writes)  # internal calibration started
    assert chip.regs[0x15] & 0x30 == 0x30                  # chopper clock off
    assert chip.regs[0x1C] & 0x80                          # PGA output capacitor
    # the settling conversions after power-up never came out as data
    assert chip.conversions == len(values) + 4
    assert cell.health()["samples"] == len(values)
    cell.close()


def test_nau7802_gain_64(i2c):
    chip = i2c.add(0x2A, NAU7802Chip([7]))
    cell = NAU7802Cell("load0", smbus_factory=i2c.factory, gain=64)
    assert cell.read(0.5) == 7
    assert chip.regs[0x01] & 0x07 == 6
    cell.close()


def test_nau7802_saturation_is_not_data(i2c):
    i2c.add(0x2A, NAU7802Chip([0x7FFFFF, 10, -0x800000, 20], settle_garbage=0))
    cell = NAU7802Cell("load0", smbus_factory=i2c.factory, settle_conversions=0)
    assert [cell.read(0.5), cell.read(0.5)] == [10, 20]
    assert cell.health()["saturations"] == 2
    cell.close()


def test_nau7802_wrong_revision_is_a_fault_naming_the_chip(i2c):
    i2c.add(0x2A, NAU7802Chip([1], revision=0x00))
    cell = NAU7802Cell("load0", smbus_factory=i2c.factory)
    with pytest.raises(DeviceFault) as info:
        cell.read(0.2)
    assert "not a NAU7802" in info.value.problem and "address" in info.value.fix
    cell.close()


def test_nau7802_that_never_converts_ends_within_the_deadline(i2c):
    # the driver's own time (a clock its polls advance), so that a busy machine cannot stretch the polls past the
    # worker's grace and turn the chip's fault into the worker's "no answer"
    clock = FakeClock()
    i2c.add(0x2A, NAU7802Chip([], settle_garbage=0))
    cell = NAU7802Cell("load0", smbus_factory=i2c.factory, clock=clock, poll_s=0.01)
    start = clock.now()
    with pytest.raises(DeviceFault) as info:
        cell.read(0.5)
    assert 0.5 <= clock.now() - start <= 0.5 + 0.011     # ended by its deadline, one poll at most after it
    assert "no conversion" in info.value.problem
    assert cell.health()["timeouts"] == 1
    cell.close()


def test_nau7802_failed_calibration_is_reported(i2c):
    i2c.add(0x2A, NAU7802Chip([1], cal_error=True))
    cell = NAU7802Cell("load0", smbus_factory=i2c.factory)
    with pytest.raises(DeviceFault, match="calibration failed"):
        cell.read(0.2)
    cell.close()


def test_nau7802_that_lost_power_is_set_up_again(i2c):
    chip = i2c.add(0x2A, NAU7802Chip([1, 2, 3]))
    cell = NAU7802Cell("load0", smbus_factory=i2c.factory)
    assert cell.read(0.5) == 1
    chip.power_on()   # a brown-out: every register back to its power-on value
    assert cell.read(0.5) == 2
    assert cell.health()["resets"] == 2
    cell.close()


def test_nau7802_unplugged_mid_game_faults_then_recovers(i2c):
    chip = i2c.add(0x2A, NAU7802Chip([1, 2]))
    cell = NAU7802Cell("load0", smbus_factory=i2c.factory)
    assert cell.read(0.5) == 1
    del i2c.chips[(1, 0x2A)]
    with pytest.raises(DeviceFault) as info:
        cell.read(0.1)
    assert "nothing answers at 0x2A" in info.value.problem and "i2cdetect -y 1" in info.value.fix
    i2c.add(0x2A, chip)
    chip.power_on()
    assert cell.read(0.5) == 2
    cell.close()


# --- accelerometers
@pytest.mark.parametrize("who", [0x68, 0x70, 0x71, 0x72, 0x73, 0x98])
def test_mpu6050_and_its_clones_are_accepted(i2c, who):
    i2c.add(0x68, MPU6050Chip(who_am_i=who, g=(0.25, -0.5, 0.75)))
    acc = MPU6050("accelerometer", 1, smbus_factory=i2c.factory)
    assert isinstance(acc, Accelerometer)
    x, y, z = acc.read(0.2)
    assert (x, y, z) == pytest.approx((0.25, -0.5, 0.75), abs=1 / 16384)
    assert acc.chip_id == who
    acc.close()


def test_mpu6050_is_woken_and_read_in_one_block(i2c):
    chip = i2c.add(0x68, MPU6050Chip(g=(math.sin(math.radians(5)), 0.0, math.cos(math.radians(5)))))
    acc = MPU6050("accelerometer", 1, smbus_factory=i2c.factory)
    x, _, z = acc.read(0.2)
    assert math.degrees(math.asin(x)) == pytest.approx(5, abs=0.01)
    assert chip.regs[0x6B] & 0x40 == 0          # awake
    assert chip.regs[0x1C] == 0                 # ±2 g
    reads_before = chip.reads
    acc.read(0.2)
    assert chip.reads == reads_before + 1       # x, y and z from one transfer
    acc.close()


def test_mpu6050_wrong_id_is_a_fault_with_the_fix(i2c):
    i2c.add(0x68, MPU6050Chip(who_am_i=0x12))
    acc = MPU6050("accelerometer", 1, smbus_factory=i2c.factory)
    with pytest.raises(DeviceFault) as info:
        acc.read(0.2)
    assert "WHO_AM_I 0x12" in info.value.problem
    assert "chip" in info.value.fix
    acc.close()


def test_adxl345_reads_little_endian_full_resolution(i2c):
    chip = i2c.add(0x53, ADXL345Chip(g=(0.5, 0.0, -1.0)))
    acc = ADXL345("accelerometer", 1, smbus_factory=i2c.factory)
    assert acc.read(0.2) == pytest.approx((0.5, 0.0, -1.0), abs=1 / 256)
    assert chip.regs[0x2D] & 0x08 and chip.regs[0x31] == 0x08
    acc.close()


def test_adxl345_wrong_device_id(i2c):
    i2c.add(0x53, ADXL345Chip(devid=0x68))
    acc = make_accelerometer("adxl345", smbus_factory=i2c.factory)
    with pytest.raises(DeviceFault) as info:
        acc.read(0.2)
    assert "not an ADXL345" in info.value.problem and "mpu" in info.value.fix.lower()
    acc.close()


def test_a_transient_oserror_is_retried_inside_the_read(i2c):
    chip = i2c.add(0x68, MPU6050Chip())
    acc = MPU6050("accelerometer", 1, smbus_factory=i2c.factory)
    acc.read(0.2)
    chip.fail_reads = 2
    assert acc.read(0.2) == pytest.approx((0, 0, 1), abs=1e-3)
    assert acc.health()["bus_errors"] == 2
    acc.close()


def test_a_lasting_oserror_becomes_a_fault_and_the_chip_is_set_up_again_after(i2c):
    chip = i2c.add(0x68, MPU6050Chip())
    acc = MPU6050("accelerometer", 1, smbus_factory=i2c.factory)
    acc.read(0.2)
    chip.fail_always = True
    with pytest.raises(SensorFault) as info:
        acc.read(0.1)
    assert "nothing answers at 0x68" in info.value.reason
    chip.fail_always = False
    chip.power_on()                 # it came back asleep: the driver wakes it again
    assert acc.read(0.2) == pytest.approx((0, 0, 1), abs=1e-3)
    acc.close()


def test_an_accelerometer_reading_all_zeros_is_asleep_and_is_reinitialised(i2c):
    chip = i2c.add(0x68, MPU6050Chip())
    acc = MPU6050("accelerometer", 1, smbus_factory=i2c.factory, poll_s=0.001)
    acc.read(0.2)
    chip.regs[0x6B] = 0x40          # put to sleep behind the driver's back: the data stays 0
    chip.regs[0x3B:0x41] = bytes(6)
    with pytest.raises(DeviceFault, match="0 g on every axis"):
        acc.read(0.02)
    assert acc.read(0.2) == pytest.approx((0, 0, 1), abs=1e-3)
    acc.close()


def test_a_hung_bus_ends_at_the_deadline_and_later_calls_fail_fast(i2c):
    chip = i2c.add(0x68, MPU6050Chip())
    acc = MPU6050("accelerometer", 1, smbus_factory=i2c.factory)
    acc.read(0.2)
    chip.hang = threading.Event()
    start = time.monotonic()
    with pytest.raises(DeviceFault, match="no answer within"):
        acc.read(0.05)
    assert time.monotonic() - start < 2.0      # the hung transfer waits 5 s: the deadline ended the read
    # the next call fails at once rather than wait out its own (long) deadline behind the stuck one
    start = time.monotonic()
    with pytest.raises(DeviceFault, match="has not returned"):
        acc.read(3.0)
    assert time.monotonic() - start < 1.5
    stuck = acc._worker._pending
    chip.hang.set()
    chip.hang = None
    # the stuck transfer returns on the worker's own thread: once it has, the device reads again (a fixed sleep
    # here lost that race on a busy machine)
    assert stuck.done.wait(5)
    assert acc.read(0.2) == pytest.approx((0, 0, 1), abs=1e-3)
    acc.close()


def test_missing_bus_says_i2c_is_off():
    net = FakeI2C(buses=())
    acc = MPU6050("accelerometer", 1, smbus_factory=net.factory)
    with pytest.raises(DeviceFault) as info:
        acc.read(0.1)
    assert "/dev/i2c-1 does not exist" in info.value.problem
    assert "dtparam=i2c_arm=on" in info.value.fix
    acc.close()


def test_no_permission_on_the_bus_says_which_group():
    net = FakeI2C()
    net.denied.add(1)
    cell = NAU7802Cell("load0", smbus_factory=net.factory)
    with pytest.raises(DeviceFault) as info:
        cell.read(0.1)
    assert "permission" in info.value.problem and "i2c group" in info.value.fix
    cell.close()


def test_default_factory_is_smbus2(mocker, i2c):
    i2c.add(0x68, MPU6050Chip())
    smbus = mocker.patch("smbus2.SMBus", side_effect=i2c.factory)
    acc = MPU6050("accelerometer", 1)
    acc.read(0.2)
    smbus.assert_called_once_with(1)
    acc.close()
