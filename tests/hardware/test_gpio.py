"""Tilt switch, buttons, LEDs and buzzer on gpiozero's MockFactory; debouncing against a fake clock."""

from __future__ import annotations

import logging
import time

import pytest
from gpiozero.pins.mock import MockFactory

from companion.foundation.clock import FakeClock
from companion.hardware.faults import DeviceFault
from companion.hardware.gpio_devices import GpioButtonPanel, GpioIndicators, GpioTiltSwitch
from companion.hardware.interfaces import ButtonPanel, Indicators, SensorFault, TiltSwitch
from tests.hardware.mock_pins import held_down

BUTTONS = {"roll": 17, "next": 27, "confirm": 22, "undo": 23}


# --- tilt switch
def test_tilt_switch_to_gnd_reads_closed_when_low(pins):
    tilt = GpioTiltSwitch(26, active_low=True, pin_factory=pins)
    assert isinstance(tilt, TiltSwitch)
    assert tilt.is_closed() is False      # the pull-up holds it high: open
    pins.pin(26).drive_low()
    assert tilt.is_closed() is True
    pins.pin(26).drive_high()
    assert tilt.is_closed() is False
    tilt.close()


def test_tilt_switch_to_3v3_reads_closed_when_high(pins):
    tilt = GpioTiltSwitch(26, active_low=False, pin_factory=pins)
    assert tilt.is_closed() is False
    pins.pin(26).drive_high()
    assert tilt.is_closed() is True
    tilt.close()


def test_tilt_switch_on_a_closed_pin_is_a_fault_not_a_crash(pins):
    tilt = GpioTiltSwitch(26, pin_factory=pins)
    tilt.close()
    with pytest.raises(SensorFault):
        tilt.is_closed()


def test_i2c_pins_are_refused(pins):
    with pytest.raises(DeviceFault, match="carries I2C"):
        GpioTiltSwitch(3, pin_factory=pins)


def test_a_pin_used_twice_is_a_fault_with_the_fix(pins):
    first = GpioTiltSwitch(26, pin_factory=pins)
    with pytest.raises(DeviceFault) as info:
        GpioTiltSwitch(26, pin_factory=pins)
    assert "already in use" in info.value.problem and "once" in info.value.fix
    first.close()


# --- buttons
def new_panel(pins) -> GpioButtonPanel:
    """A panel on a fake clock that records what it fires in `.events`."""
    clock = FakeClock()
    p = GpioButtonPanel(BUTTONS, pin_factory=pins, clock=clock, debounce_s=0.03, hold_s=1.0, start=False)
    events = []
    p.on_press(lambda n: events.append(("press", n)))
    p.on_hold(lambda n: events.append(("hold", n)))
    p.clock_ = clock
    p.events = events
    return p


@pytest.fixture
def panel(pins):
    p = new_panel(pins)
    yield p
    p.close()


def step(panel, seconds, dt=0.005):
    """Advance the fake clock in poll-sized steps, polling each time."""
    for _ in range(round(seconds / dt)):
        panel.clock_.advance(dt)
        panel.poll()


def test_short_press_fires_on_release(pins, panel):
    assert isinstance(panel, ButtonPanel)
    assert panel.names == ("roll", "next", "confirm", "undo")
    pins.pin(17).drive_low()
    step(panel, 0.2)
    assert panel.events == []            # not yet: it may still become a long press
    pins.pin(17).drive_high()
    step(panel, 0.1)
    assert panel.events == [("press", "roll")]


def test_long_press_fires_hold_once_while_held_and_no_press(pins, panel):
    pins.pin(23).drive_low()
    step(panel, 1.1)
    assert panel.events == [("hold", "undo")]
    step(panel, 2.0)
    assert panel.events == [("hold", "undo")]
    pins.pin(23).drive_high()
    step(panel, 0.1)
    assert panel.events == [("hold", "undo")]


def test_a_button_stuck_pressed_is_reported_fires_nothing_more_and_comes_back_on_release(pins, panel, caplog):
    """A box leaning on `undo`: its long press at 1 s goes through (one undo, as for a deliberate long press,
    which the panel cannot tell apart that early), then after 10 s it is stuck, and nothing else fires."""
    caplog.set_level(logging.INFO, logger="companion.hardware.gpio_devices")
    pins.pin(23).drive_low()
    step(panel, 1.1)
    assert panel.events == [("hold", "undo")] and panel.failures() == []
    step(panel, 8.0)
    assert panel.failures() == []                      # 9.1 s: a very long press, not yet stuck
    step(panel, 3.0)
    [(name, reason)] = panel.failures()
    assert name == "button undo"
    assert reason.startswith("stuck pressed for 12 s, after one long press (undo)")
    assert "check the switch and its wire" in reason
    assert any("button undo unavailable: stuck pressed" in r.getMessage() for r in caplog.records)
    step(panel, 60.0)
    assert panel.events == [("hold", "undo")]          # nothing more while stuck
    assert panel.failures()[0][1].startswith("stuck pressed for 72 s")
    # the other buttons and the page's virtual panel still work meanwhile
    pins.pin(17).drive_low()
    step(panel, 0.1)
    pins.pin(17).drive_high()
    step(panel, 0.1)
    panel.press("undo")
    assert panel.events == [("hold", "undo"), ("press", "roll"), ("press", "undo")]
    pins.pin(23).drive_high()
    step(panel, 0.1)
    assert panel.failures() == []
    assert panel.events == [("hold", "undo"), ("press", "roll"), ("press", "undo")]   # the release is no press
    assert any(r.getMessage() == "button undo is back" for r in caplog.records)
    # and it is an ordinary button again
    pins.pin(23).drive_low()
    step(panel, 0.1)
    pins.pin(23).drive_high()
    step(panel, 0.1)
    assert panel.events[-1] == ("press", "undo")


def test_a_stalled_poll_past_the_stuck_time_claims_no_long_press(pins, panel):
    pins.pin(22).drive_low()
    step(panel, 0.1)
    panel.clock_.advance(15)           # the poll thread did not run for 15 s
    panel.poll()
    [(_, reason)] = panel.failures()
    assert reason.startswith("stuck pressed for 15 s —") and panel.events == []


def test_a_button_down_when_the_panel_starts_gives_nothing_until_let_go(pins, caplog):
    """After a power cut, a box resting on `undo` must not take back the restored game's last move."""
    caplog.set_level(logging.INFO, logger="companion.hardware.gpio_devices")
    held_down(pins, 23)
    panel = new_panel(pins)
    events = panel.events
    assert panel.down_since_open() == ["undo"]
    assert any("button undo is pressed already" in r.getMessage() for r in caplog.records)
    step(panel, 5.0)
    assert events == [] and panel.failures() == []          # no long press at 1 s
    step(panel, 5.5)
    [(name, reason)] = panel.failures()                      # listed as stuck, and no undo claimed
    assert name == "button undo" and reason.startswith("stuck pressed for 10 s —")
    pins.pin(23).drive_high()
    step(panel, 0.1)
    assert events == [] and panel.failures() == [] and panel.down_since_open() == []
    pins.pin(23).drive_low()                                 # now an ordinary button
    step(panel, 1.1)
    pins.pin(23).drive_high()
    step(panel, 0.1)
    assert events == [("hold", "undo")]
    panel.close()


def test_a_button_let_go_before_it_counts_as_stuck_still_gives_nothing(pins):
    held_down(pins, 17)
    panel = new_panel(pins)
    step(panel, 0.3)
    pins.pin(17).drive_high()
    step(panel, 0.1)
    assert panel.events == []
    pins.pin(17).drive_low()
    step(panel, 0.1)
    pins.pin(17).drive_high()
    step(panel, 0.1)
    assert panel.events == [("press", "roll")]
    panel.close()


def test_the_stuck_time_is_a_parameter_and_must_exceed_the_long_press(pins):
    clock = FakeClock()
    panel = GpioButtonPanel({"roll": 17}, pin_factory=pins, clock=clock, hold_s=0.5, stuck_s=3.0, start=False)
    pins.pin(17).drive_low()
    for _ in range(700):
        clock.advance(0.005)
        panel.poll()
    assert [n for n, _ in panel.failures()] == ["button roll"]
    panel.close()
    with pytest.raises(ValueError, match="stuck_s .* must be longer than hold_s"):
        GpioButtonPanel({"roll": 17}, pin_factory=pins, hold_s=1.0, stuck_s=1.0, start=False)


def test_contact_bounce_gives_one_press(pins, panel):
    p = pins.pin(22)
    # a bouncing contact: 6 ms of chatter on press and on release
    for level in (0, 1, 0, 1, 0):
        (p.drive_low if level == 0 else p.drive_high)()
        step(panel, 0.001, dt=0.001)
    step(panel, 0.15)
    for level in (1, 0, 1, 0, 1):
        (p.drive_low if level == 0 else p.drive_high)()
        step(panel, 0.001, dt=0.001)
    step(panel, 0.1)
    assert panel.events == [("press", "confirm")]


def test_a_blip_shorter_than_the_debounce_time_is_ignored(pins, panel):
    pins.pin(27).drive_low()
    step(panel, 0.01)
    pins.pin(27).drive_high()
    step(panel, 0.1)
    assert panel.events == []


def test_buttons_are_independent(pins, panel):
    pins.pin(17).drive_low()
    pins.pin(27).drive_low()
    step(panel, 0.1)
    pins.pin(17).drive_high()
    step(panel, 0.1)
    pins.pin(27).drive_high()
    step(panel, 0.1)
    assert panel.events == [("press", "roll"), ("press", "next")]


def test_a_failing_callback_does_not_stop_the_others(pins, panel):
    def boom(name):
        raise RuntimeError("reaction failed")

    panel._press.insert(0, boom)
    pins.pin(17).drive_low()
    step(panel, 0.1)
    pins.pin(17).drive_high()
    step(panel, 0.1)
    assert panel.events == [("press", "roll")]


def test_virtual_press_uses_the_same_callbacks(panel):
    panel.press("confirm")
    panel.press("undo", hold=True)
    assert panel.events == [("press", "confirm"), ("hold", "undo")]
    with pytest.raises(ValueError, match="no button named"):
        panel.press("jump")


def test_the_poll_thread_delivers_presses_in_real_time(pins):
    panel = GpioButtonPanel({"roll": 17}, pin_factory=pins, debounce_s=0.01, hold_s=0.2, poll_s=0.002)
    got = []
    panel.on_press(got.append)
    panel.on_hold(lambda n: got.append("hold " + n))
    try:
        assert panel.alive()
        pins.pin(17).drive_low()
        time.sleep(0.05)
        pins.pin(17).drive_high()
        deadline = time.monotonic() + 1
        while not got and time.monotonic() < deadline:
            time.sleep(0.005)
        assert got == ["roll"]
        pins.pin(17).drive_low()
        deadline = time.monotonic() + 1
        while len(got) < 2 and time.monotonic() < deadline:
            time.sleep(0.005)
        assert got == ["roll", "hold roll"]
        pins.pin(17).drive_high()
    finally:
        panel.close()
    assert not panel.alive()


class FlakyFactory(MockFactory):
    """A mock pin factory on which some pins cannot be claimed (until fixed)."""

    def __init__(self, broken):
        super().__init__()
        self.broken = set(broken)

    def pin(self, name, *args, **kwargs):
        if name in self.broken:
            raise OSError(16, "GPIO busy")
        return super().pin(name, *args, **kwargs)


def test_a_button_whose_pin_fails_is_reported_retried_and_comes_back():
    pins = FlakyFactory({22})
    clock = FakeClock()
    panel = GpioButtonPanel(BUTTONS, pin_factory=pins, clock=clock, start=False)
    got = []
    panel.on_press(got.append)
    failures = panel.failures()
    assert [name for name, _ in failures] == ["button confirm"]
    assert "busy" in failures[0][1]
    # the others work meanwhile
    pins.pin(17).drive_low()
    for _ in range(20):
        clock.advance(0.005)
        panel.poll()
    pins.pin(17).drive_high()
    for _ in range(20):
        clock.advance(0.005)
        panel.poll()
    assert got == ["roll"]
    pins.broken.clear()
    clock.advance(5)
    panel.poll()
    assert panel.failures() == []
    pins.pin(22).drive_low()
    for _ in range(20):
        clock.advance(0.005)
        panel.poll()
    pins.pin(22).drive_high()
    for _ in range(20):
        clock.advance(0.005)
        panel.poll()
    assert got == ["roll", "confirm"]
    panel.close()


def test_a_button_on_an_i2c_pin_is_refused_but_the_others_work(pins):
    panel = GpioButtonPanel({"roll": 2, "next": 27}, pin_factory=pins, start=False)
    assert [n for n, _ in panel.failures()] == ["button roll"]
    panel.close()


# --- indicators
def test_show_lights_one_led_at_a_time(pins):
    ind = GpioIndicators({"green": 24, "amber": 25, "red": 16, "buzzer": 12}, pin_factory=pins)
    assert isinstance(ind, Indicators)
    lit = lambda: {k for k, p in (("green", 24), ("amber", 25), ("red", 16)) if pins.pin(p).state}  # noqa: E731
    ind.show("green")
    assert lit() == {"green"} and ind.light == "green"
    ind.show("red")
    assert lit() == {"red"}
    ind.show("off")
    assert lit() == set()
    with pytest.raises(ValueError):
        ind.show("blue")
    ind.close()


def test_buzz_does_not_block_and_stops_on_its_own(pins):
    ind = GpioIndicators({"buzzer": 12}, pin_factory=pins)
    # a call that blocked for the beep would come back with the buzzer already off (not timed: a busy machine
    # stretches any wall-clock bound)
    ind.buzz(1.0)
    assert pins.pin(12).state and ind.buzzing
    deadline = time.monotonic() + 5
    while (pins.pin(12).state or ind.buzzing) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not pins.pin(12).state and not ind.buzzing
    ind.close()


def test_missing_outputs_are_skipped(pins):
    ind = GpioIndicators({"red": 16}, pin_factory=pins)
    ind.show("green")          # no green LED wired: nothing to light, no error
    ind.buzz(0.1)              # no buzzer: the state is still kept for the page
    assert ind.light == "green" and ind.buzzing
    assert not pins.pin(16).state
    ind.close()


def test_an_output_that_fails_is_retried_later():
    pins = FlakyFactory({24})
    clock = FakeClock()
    ind = GpioIndicators({"green": 24, "red": 16}, pin_factory=pins, clock=clock)
    assert [n for n, _ in ind.failures()] == ["indicator green"]
    ind.show("green")          # still broken: shown on the page, no exception
    pins.broken.clear()
    clock.advance(5)
    ind.show("green")
    assert pins.pin(24).state and ind.failures() == []
    ind.close()
