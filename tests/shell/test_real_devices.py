"""The daemon on real drivers (gpiozero's MockFactory for pins): a missing device is shown, never fatal."""

import dataclasses
import time

import pytest
from gpiozero import Device
from gpiozero.pins.mock import MockFactory

from companion.foundation.clock import FakeClock
from companion.config import parse
from companion.table.daemon import Companion
from companion.web import create_app


@pytest.fixture
def mock_pins():
    old = Device.pin_factory
    Device.pin_factory = MockFactory()
    yield Device.pin_factory
    Device.pin_factory.reset()
    Device.pin_factory = old


def test_buttons_leds_and_a_missing_load_cell(tmp_path, mock_pins, monkeypatch):
    # no RPi.GPIO on this machine: the HX711 cannot open, and must become "unavailable", not a crash
    monkeypatch.setitem(__import__("sys").modules, "RPi", None)
    cfg = dataclasses.replace(parse({
        "load_cells": [{"name": "load0", "dout_pin": 5, "sck_pin": 6, "offset_counts": 1000, "counts_per_gram": 2000}],
        "tilt_switch": {"pin": 17},
        "buttons": {"roll": 22, "confirm": 23},
        "indicators": {"green": 24, "amber": 25, "red": 26, "buzzer": 27},
    }), store_path=tmp_path / "db.sqlite3")
    comp = Companion(cfg)
    try:
        comp.sensors.poll()
        devices = {d["name"]: d for d in comp.live()["devices"]}
        assert devices["load0"]["ok"] is False and devices["load0"]["reason"]
        assert devices["tilt_switch"]["ok"] is True
        # the roll button, pressed on the panel, rolls the die
        pin = mock_pins.pin(22)
        pin.drive_low()      # pressed (pull-up, active low): the panel's poll thread debounces in real time
        time.sleep(0.15)
        pin.drive_high()
        deadline = time.monotonic() + 2
        while comp.host.state.roll is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert comp.host.state.roll is not None
        client = create_app(comp).test_client()
        state = client.get("/api/state").get_json()
        assert any(not d["ok"] for d in state["live"]["devices"])
        # the LEDs follow the game
        assert comp.indicators.light in ("green", "amber")
    finally:
        comp.stop()


def test_a_stuck_gpio_button_is_shown_once_with_its_reason_and_comes_back(tmp_path, mock_pins):
    """The GPIO panel is both the daemon's button panel and one of its devices: listed once, not twice."""
    clock = FakeClock()
    cfg = dataclasses.replace(parse({"buttons": {"roll": 22, "undo": 23}}), store_path=tmp_path / "db.sqlite3")
    comp = Companion(cfg, clock=clock)

    def buttons_listed():
        return [d for d in comp.live()["devices"] if d["kind"] == "button"]

    def after(seconds, until=lambda: True):
        # the panel's own poll thread samples the pins (every 10 ms); the clock it reads moves only here
        time.sleep(0.05)
        clock.advance(seconds)
        deadline = time.monotonic() + 2
        while not until() and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.05)
        assert until()

    try:
        mock_pins.pin(23).drive_low()
        after(0.1)                                  # debounced: pressed
        after(2.0, lambda: comp.last_refusal is not None)    # held: its long press asks for an undo (none yet)
        after(10.0, lambda: buttons_listed() != [])
        assert comp.last_refusal["message"] == "nothing to undo in this game"
        [dev] = buttons_listed()
        assert dev["name"] == "button undo" and dev["ok"] is False
        assert dev["reason"].startswith("stuck pressed for 12 s, after one long press (undo)")
        health = create_app(comp).test_client().get("/api/health").get_json()
        assert health["ok"] is False and [d["name"] for d in health["devices"]] == ["button undo"]
        mock_pins.pin(23).drive_high()
        after(0.1, lambda: buttons_listed() == [])
    finally:
        comp.stop()
