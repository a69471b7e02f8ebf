"""Fixtures for the real drivers without a Pi: an emulated RPi.GPIO, fake I2C buses, gpiozero mock pins."""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path

import pytest

from tests.hardware.fake_i2c import FakeI2C

EMULATED = Path(__file__).parent / "emulated" / "RPi" / "GPIO.py"


def load_emulated_gpio() -> types.ModuleType:
    """A fresh emulated RPi.GPIO module (its own pins and chips) and the RPi package holding it."""
    spec = importlib.util.spec_from_file_location("RPi.GPIO", EMULATED)
    gpio = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gpio)
    return gpio


@pytest.fixture
def fake_gpio(mocker, monkeypatch):
    """RPi.GPIO replaced by the emulation for this test; hx711 is imported afresh on top of it."""
    monkeypatch.delenv("COMPANION_EMULATED_HX711", raising=False)
    gpio = load_emulated_gpio()
    rpi = types.ModuleType("RPi")
    rpi.GPIO = gpio
    mocker.patch.dict(sys.modules, {"RPi": rpi, "RPi.GPIO": gpio})
    # hx711 binds RPi.GPIO at import: drop any copy imported on top of another test's emulation
    sys.modules.pop("hx711", None)
    return gpio


@pytest.fixture
def no_gpio(mocker):
    """A machine without RPi.GPIO: importing it fails as it does off a Pi."""
    mocker.patch.dict(sys.modules, {"RPi": None, "RPi.GPIO": None})
    sys.modules.pop("hx711", None)


@pytest.fixture
def pins():
    from gpiozero.pins.mock import MockFactory

    factory = MockFactory()
    yield factory
    factory.reset()


@pytest.fixture
def i2c():
    return FakeI2C()
