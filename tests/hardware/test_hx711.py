"""The real HX711 driver, through the real hx711 package, against an emulated RPi.GPIO and chip."""

from __future__ import annotations

import time

import pytest

from companion.hardware.faults import DeviceFault
from companion.hardware.hx711_cell import HX711Cell
from companion.hardware.interfaces import LoadCell, SensorFault

DOUT, SCK = 5, 6


def chip(gpio, values=(), **kw):
    return gpio.attach(gpio.HX711Chip(DOUT, SCK, values, **kw))


def test_returns_the_emulated_values_exactly_including_negative_and_extreme_ones(fake_gpio):
    values = [81234, -5, 1, -2, 0x7FFFFE, -0x7FFFFF, 123456, -654321]
    c = chip(fake_gpio, values)
    cell = HX711Cell("load0", DOUT, SCK)
    assert isinstance(cell, LoadCell)
    assert [cell.read(0.5) for _ in values] == values
    # the settling conversions after power-up were discarded, none of them returned
    assert c.garbage_sent >= 4
    assert cell.health()["samples"] == len(values)
    cell.close()


def test_gain_128_sends_one_extra_pulse_and_gain_64_three(fake_gpio):
    c = chip(fake_gpio, [10, 20, 30])
    cell = HX711Cell("load0", DOUT, SCK, gain=128)
    assert [cell.read(0.5) for _ in range(3)] == [10, 20, 30]
    fake_gpio.input(DOUT)  # the emulation counts a word's pulses when DOUT is polled again
    assert set(c.pulses_per_word) == {25}
    assert (c.channel, c.gain) == ("A", 128)
    cell.close()


def test_gain_64_waits_for_the_chip_to_settle_after_the_gain_change(fake_gpio):
    c = chip(fake_gpio, [111, 222, 333])
    cell = HX711Cell("load0", DOUT, SCK, gain=64)
    assert [cell.read(0.5) for _ in range(3)] == [111, 222, 333]
    fake_gpio.input(DOUT)
    assert set(c.pulses_per_word) == {27}
    assert (c.channel, c.gain) == ("A", 64)
    # the first word after power-up (still gain 128) and the 4 settling after the switch to 64 were
    # all discarded (more if a late clock pulse power-cycled the chip: the values stay exact)
    assert c.garbage_sent >= 5
    cell.close()


def test_saturated_and_glitch_words_are_not_data(fake_gpio):
    c = chip(fake_gpio, [0x7FFFFF, 500, -0x800000, 0, 600, -1, 700])
    cell = HX711Cell("load0", DOUT, SCK)
    assert [cell.read(0.5) for _ in range(3)] == [500, 600, 700]
    h = cell.health()
    # (a late clock pulse in the emulation counts as one more glitch: the values stay exact)
    assert h["saturations"] == 2 and h["glitches"] >= 2 and h["timeouts"] == 0
    assert c.pending == 0
    cell.close()


def test_a_chip_that_never_becomes_ready_ends_within_the_deadline_as_a_fault(fake_gpio):
    c = chip(fake_gpio, [1])
    c.never_ready = True
    cell = HX711Cell("load0", DOUT, SCK)
    start = time.monotonic()
    with pytest.raises(SensorFault) as info:
        cell.read(0.1)
    # the deadline (plus a 20 ms power-cycle) ends it: without one, a chip never ready would wait forever. The bound
    # is generous, not the deadline itself, so that a busy machine does not fail it
    assert time.monotonic() - start < 2.0
    assert info.value.device == "load0"
    assert "not ready" in info.value.reason and "GPIO 5" in info.value.reason
    assert cell.health()["timeouts"] == 1
    cell.close()


def test_an_unplugged_board_is_not_ready_because_dout_is_pulled_up(fake_gpio):
    # nothing attached on these pins at all: the driver's pull-up makes DOUT read high
    cell = HX711Cell("load1", 13, 19)
    with pytest.raises(DeviceFault) as info:
        cell.read(0.05)
    assert "not ready" in info.value.problem
    assert "VCC" in info.value.fix
    cell.close()


def test_dout_stuck_low_reads_as_glitches_and_ends_as_a_fault(fake_gpio):
    c = chip(fake_gpio, [])
    c.stuck_low = True
    cell = HX711Cell("load0", DOUT, SCK)
    start = time.monotonic()
    with pytest.raises(DeviceFault) as info:
        cell.read(0.05)
    assert time.monotonic() - start < 2.0      # ended by its deadline, not by the glitches stopping
    assert "0/-1" in info.value.problem and "DOUT" in info.value.fix
    assert cell.health()["glitches"] > 0
    cell.close()


def test_saturated_for_the_whole_deadline_says_overload_or_wiring(fake_gpio):
    chip(fake_gpio, lambda: 0x7FFFFF, settle_garbage=0)
    cell = HX711Cell("load0", DOUT, SCK, settle_conversions=0)
    with pytest.raises(DeviceFault) as info:
        cell.read(0.05)
    assert "saturated" in info.value.problem and "E+" in info.value.fix
    cell.close()


def test_a_chip_that_goes_missing_mid_game_faults_then_comes_back_and_settles(fake_gpio):
    c = chip(fake_gpio, [100, 101, 102, 103, 104, 105])
    cell = HX711Cell("load0", DOUT, SCK)
    assert cell.read(0.5) == 100
    assert cell.read(0.5) == 101
    c.unplug()
    start = time.monotonic()
    with pytest.raises(DeviceFault):
        cell.read(0.05)
    assert time.monotonic() - start < 2.0      # ended by its deadline: an unplugged chip never answers
    c.plug()
    got = []
    for _ in range(10):
        try:
            got.append(cell.read(0.2))
        except SensorFault:
            continue
        if len(got) == 4:
            break
    # after the reset and the settling, the values go on where they stopped
    assert got == [102, 103, 104, 105]
    assert cell.health()["resets"] >= 1
    cell.close()


def test_settling_slower_than_the_deadline_is_a_passing_fault_not_a_timeout(fake_gpio):
    c = chip(fake_gpio, [42, 43], conversion_s=0.02)
    cell = HX711Cell("load0", DOUT, SCK)
    with pytest.raises(DeviceFault) as info:
        cell.read(0.03)
    assert "settling" in info.value.problem
    assert cell.health()["timeouts"] == 0
    assert cell.read(0.5) == 42
    assert c.garbage_sent >= 4
    cell.close()


def test_samples_per_second_follow_the_chip_rate(fake_gpio):
    chip(fake_gpio, lambda: 1234, conversion_s=1 / 80, settle_garbage=0)
    cell = HX711Cell("load0", DOUT, SCK, settle_conversions=0)
    for _ in range(12):
        assert cell.read(0.5) == 1234
    # (a late clock pulse in the emulation costs a power-cycle and a settle: the rate only dips)
    assert 25 < cell.health()["samples_per_s"] < 90
    cell.close()


def test_a_late_clock_pulse_is_a_glitch_and_the_value_is_read_again(fake_gpio, monkeypatch):
    c = chip(fake_gpio, [7, 8])
    cell = HX711Cell("load0", DOUT, SCK)
    assert cell.read(0.5) == 7
    import hx711

    real = hx711.time.perf_counter
    ticks = {"late": 1}

    def slow_perf_counter():
        # the first timed pulse pair looks 100 µs long: the package aborts that word
        if ticks["late"] > 0:
            ticks["late"] -= 1
            return real() - 0.0001
        return real()

    monkeypatch.setattr(hx711.time, "perf_counter", slow_perf_counter)
    got = None
    for _ in range(5):
        try:
            got = cell.read(0.2)
            break
        except SensorFault:
            continue
    assert got == 8
    assert cell.health()["glitches"] >= 1 and cell.health()["resets"] >= 1
    cell.close()


def test_without_rpi_gpio_the_driver_faults_with_the_install_fix(no_gpio):
    cell = HX711Cell("load0", DOUT, SCK)
    with pytest.raises(DeviceFault) as info:
        cell.read(0.05)
    assert "RPi.GPIO" in info.value.problem
    assert "rpi-lgpio" in info.value.fix


def test_close_releases_the_pins(fake_gpio):
    chip(fake_gpio, [5])
    cell = HX711Cell("load0", DOUT, SCK)
    assert cell.read(0.5) == 5
    cell.close()
    assert ("cleanup", (SCK, DOUT)) in fake_gpio.calls


def test_the_packages_unbounded_waits_are_never_used(fake_gpio, mocker):
    chip(fake_gpio, [9])
    import hx711

    spy = mocker.spy(hx711.HX711, "get_raw_data")
    cell = HX711Cell("load0", DOUT, SCK)
    assert cell.read(0.5) == 9
    assert spy.call_count == 0
    cell.close()
