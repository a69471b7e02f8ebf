"""build_devices: every configured device opened, or stood in for and retried until it comes back."""

from __future__ import annotations

import pytest

from companion.foundation.clock import FakeClock
from companion.config import parse
from companion.table.devices import Calibration, SensorMonitor
from companion.games.balance_model import load_model
from companion.table.device_factory import (PendingAccelerometer, PendingLoadCell, PendingTiltSwitch, build_devices)
from companion.hardware.gpio_devices import GpioButtonPanel, GpioIndicators, GpioTiltSwitch
from companion.hardware.hx711_cell import HX711Cell
from companion.hardware.interfaces import (Accelerometer, ButtonPanel, Indicators, LoadCell, SensorFault,
                                           TiltSwitch)
from companion.hardware.nau7802 import NAU7802Cell
from tests.hardware.fake_i2c import MPU6050Chip, NAU7802Chip

FULL = {
    "load_cells": [
        {"name": "load0", "adc": "hx711", "dout_pin": 5, "sck_pin": 6, "gain": 128,
         "offset_counts": 8000, "counts_per_gram": 2150},
        {"name": "load1", "adc": "nau7802", "i2c_bus": 1, "address": 0x2A},
    ],
    "accelerometer": {"chip": "mpu6050", "i2c_bus": 1, "address": 0x68, "axis": "ax"},
    "tilt_switch": {"pin": 26, "active_low": True},
    "buttons": {"roll": 17, "next": 27, "confirm": 22, "undo": 23},
    "indicators": {"green": 24, "amber": 25, "red": 16, "buzzer": 12},
}


@pytest.fixture
def table(fake_gpio, i2c):
    """A fake Pi with every part of the reference build answering."""
    hx = fake_gpio.attach(fake_gpio.HX711Chip(5, 6, lambda: 81234))
    nau = i2c.add(0x2A, NAU7802Chip(source=lambda: 79000))
    mpu = i2c.add(0x68, MPU6050Chip(g=(0.1, 0.0, 0.995)))
    return {"gpio": fake_gpio, "i2c": i2c, "hx": hx, "nau": nau, "mpu": mpu}


def build(cfg, table, pins, clock=None, **kw):
    kw.setdefault("open_timeout", 0.2)
    return build_devices(parse(cfg), pin_factory=pins, smbus_factory=table["i2c"].factory, clock=clock,
                         start_threads=False, **kw)


def test_everything_configured_is_opened(table, pins):
    devs = build(FULL, table, pins)
    try:
        assert devs.failures == []
        assert devs.unavailable() == []
        cell0, cell1 = devs.load_cells
        assert isinstance(cell0, HX711Cell) and isinstance(cell1, NAU7802Cell)
        assert all(isinstance(c, LoadCell) for c in devs.load_cells)
        assert cell0.read(0.5) == 81234
        assert cell1.read(0.5) == 79000
        assert isinstance(devs.accelerometer, Accelerometer)
        assert devs.accelerometer.read(0.2) == pytest.approx((0.1, 0.0, 0.995), abs=1e-3)
        assert isinstance(devs.tilt, GpioTiltSwitch) and isinstance(devs.tilt, TiltSwitch)
        assert devs.tilt.is_closed() is False
        assert isinstance(devs.buttons, GpioButtonPanel) and isinstance(devs.buttons, ButtonPanel)
        assert devs.buttons.names == ("roll", "next", "confirm", "undo")
        assert isinstance(devs.indicators, GpioIndicators) and isinstance(devs.indicators, Indicators)
    finally:
        devs.close()


def test_nothing_configured_gives_nothing(table, pins):
    devs = build({}, table, pins)
    assert (devs.load_cells, devs.accelerometer, devs.tilt, devs.buttons, devs.indicators) == ([], None, None,
                                                                                                None, None)
    assert devs.failures == []


def test_i2c_off_at_start_is_a_failure_not_an_exception_and_comes_back_on_its_own(table, pins):
    clock = FakeClock()
    table["i2c"].buses.clear()
    devs = build(FULL, table, pins, clock=clock)
    try:
        failed = dict(devs.failures)
        assert set(failed) == {"load1", "accelerometer"}
        assert "I2C is off" in failed["accelerometer"] and "dtparam=i2c_arm=on" in failed["accelerometer"]
        assert isinstance(devs.accelerometer, PendingAccelerometer) and isinstance(devs.accelerometer, Accelerometer)
        assert isinstance(devs.load_cells[1], PendingLoadCell) and isinstance(devs.load_cells[1], LoadCell)
        # the rest works meanwhile
        assert devs.load_cells[0].read(0.5) == 81234
        assert devs.tilt.is_closed() is False
        with pytest.raises(SensorFault) as info:
            devs.accelerometer.read(0.1)
        assert info.value.reason == failed["accelerometer"]
        # I2C switched on: after the backoff the next read opens the chip and answers
        table["i2c"].buses.add(1)
        clock.advance(1.5)
        assert devs.accelerometer.read(0.2) == pytest.approx((0.1, 0.0, 0.995), abs=1e-3)
        value = None
        for _ in range(10):
            try:
                value = devs.load_cells[1].read(0.2)
                break
            except SensorFault:
                clock.advance(1)
        assert value == 79000
        assert devs.unavailable() == []
    finally:
        devs.close()


def test_a_stand_in_raises_at_once_during_its_backoff(table, pins):
    clock = FakeClock()
    table["i2c"].buses.clear()
    devs = build({"accelerometer": FULL["accelerometer"]}, table, pins, clock=clock)
    net = table["i2c"]
    net.open_attempts = 0
    for _ in range(5):
        with pytest.raises(SensorFault):
            devs.accelerometer.read(0.1)
    assert net.open_attempts == 0    # no new attempt before the backoff is over
    clock.advance(1.5)
    with pytest.raises(SensorFault):
        devs.accelerometer.read(0.1)
    assert net.open_attempts == 1
    # and the next wait is longer
    clock.advance(1.5)
    with pytest.raises(SensorFault):
        devs.accelerometer.read(0.1)
    assert net.open_attempts == 1
    devs.close()


def test_without_rpi_gpio_the_hx711_cells_wait_and_the_rest_runs(no_gpio, i2c, pins):
    i2c.add(0x68, MPU6050Chip())
    i2c.add(0x2A, NAU7802Chip(source=lambda: 5))
    devs = build_devices(parse(FULL), pin_factory=pins, smbus_factory=i2c.factory, open_timeout=0.2,
                         start_threads=False)
    try:
        failed = dict(devs.failures)
        assert list(failed) == ["load0"]
        assert "RPi.GPIO is not installed" in failed["load0"] and "rpi-lgpio" in failed["load0"]
        assert devs.load_cells[1].read(0.5) == 5
        assert devs.accelerometer.read(0.2) == pytest.approx((0, 0, 1), abs=1e-3)
    finally:
        devs.close()


def test_a_missing_hx711_waits_then_works_once_plugged_in(fake_gpio, i2c, pins):
    clock = FakeClock()
    cfg = {"load_cells": [FULL["load_cells"][0]]}
    devs = build_devices(parse(cfg), pin_factory=pins, smbus_factory=i2c.factory, clock=clock,
                         open_timeout=0.05, start_threads=False)
    try:
        failed = dict(devs.failures)
        assert "not ready" in failed["load0"]
        cell = devs.load_cells[0]
        with pytest.raises(SensorFault):
            cell.read(0.05)
        fake_gpio.attach(fake_gpio.HX711Chip(5, 6, lambda: 4242))
        got = None
        for _ in range(10):
            clock.advance(2)
            try:
                got = cell.read(0.05)
                break
            except SensorFault:
                continue
        assert got == 4242
        assert isinstance(cell.device, HX711Cell)
    finally:
        devs.close()


def test_an_hx711_without_pins_is_refused_by_the_config_and_reported_by_the_factory(table, pins):
    import dataclasses

    from companion.config import ConfigError, LoadCellConfig

    with pytest.raises(ConfigError, match="needs dout_pin and sck_pin"):
        parse({"load_cells": [{"name": "load0", "adc": "hx711"}]})
    # a config built in code can still lack them: the factory reports the key to set instead of failing
    cfg = dataclasses.replace(parse({}), load_cells=(LoadCellConfig(name="load0", adc="hx711"),))
    devs = build_devices(cfg, pin_factory=pins, smbus_factory=table["i2c"].factory, start_threads=False,
                         open_timeout=0.2)
    assert "dout_pin" in dict(devs.failures)["load0"]
    devs.close()


def test_a_tilt_switch_on_a_busy_pin_waits_as_a_stand_in(table, pins):
    from gpiozero import DigitalInputDevice

    clock = FakeClock()
    squatter = DigitalInputDevice(26, pin_factory=pins)
    devs = build({"tilt_switch": FULL["tilt_switch"]}, table, pins, clock=clock)
    try:
        assert "already in use" in dict(devs.failures)["tilt_switch"]
        assert isinstance(devs.tilt, PendingTiltSwitch)
        with pytest.raises(SensorFault):
            devs.tilt.is_closed()
        squatter.close()
        clock.advance(1.5)
        assert devs.tilt.is_closed() is False
    finally:
        devs.close()


def test_button_and_indicator_pin_failures_are_listed(table):
    from tests.hardware.test_gpio import FlakyFactory

    pins = FlakyFactory({22, 25})
    devs = build({"buttons": FULL["buttons"], "indicators": FULL["indicators"]}, table, pins)
    try:
        assert sorted(name for name, _ in devs.failures) == ["button confirm", "indicator amber"]
        devs.indicators.show("green")
        devs.buttons.press("roll")
    finally:
        devs.close()


def test_close_releases_every_pin(table, pins):
    devs = build(FULL, table, pins)
    devs.close()
    again = build(FULL, table, pins)
    try:
        assert again.failures == []
    finally:
        again.close()


def test_the_sensor_monitor_shows_a_failed_device_as_unavailable_and_sees_it_come_back(table, pins):
    clock = FakeClock()
    table["i2c"].buses.clear()
    devs = build(FULL, table, pins, clock=clock)
    cal = Calibration(offsets={"load0": 8000, "load1": 0}, counts_per_gram={"load0": 2150, "load1": 2150})
    monitor = SensorMonitor(load_model("A"), cal, load_cells=devs.load_cells, accelerometer=devs.accelerometer,
                            tilt=devs.tilt, clock=clock)
    try:
        monitor.poll()
        health = {d["name"]: d for d in monitor.live()["devices"]}
        assert health["load0"]["ok"] and health["tilt_switch"]["ok"]
        assert not health["accelerometer"]["ok"] and "I2C is off" in health["accelerometer"]["reason"]
        table["i2c"].buses.add(1)
        for _ in range(20):
            clock.advance(1)
            monitor.poll()
        health = {d["name"]: d for d in monitor.live()["devices"]}
        assert all(h["ok"] for h in health.values()), health
        assert monitor.live()["angle_deg"] is not None
    finally:
        devs.close()


def test_importing_the_drivers_does_not_import_rpi_gpio():
    """hx711 imports RPi.GPIO at import time, which fails off a Pi: only the real driver imports it, when used."""
    import subprocess
    import sys

    code = ("import sys, companion.table.device_factory, companion.table.doctor, companion.cli; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('hx711', 'RPi')))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.strip() == "[]"
