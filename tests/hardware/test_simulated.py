"""The simulated arm follows the physical model; the simulated drivers behave like real parts."""

import logging
import math

import pytest

from companion.foundation.clock import FakeClock
from companion.hardware.debounce import Debouncer
from companion.table.devices import Calibration, SensorMonitor
from companion.games.balance_model import load_model
from companion.hardware.interfaces import SensorFault
from companion.hardware.virtual import VirtualButtonPanel, VirtualIndicators
from companion.simulation.table import SimAccelerometer, SimLoadCell, SimTiltSwitch, SimulatedTable

MODEL = load_model("A")


def test_rest_angle_is_asin_torque_over_kappa():
    clock = FakeClock()
    table = SimulatedTable(MODEL, clock)
    table.set_pawns([("E1", "L"), ("W3", "M")], hand_s=0)
    clock.advance(30)
    theta = table.snapshot()["theta"]
    tau = 133 * 10 - 57 * 6  # E1 at +133 mm, W3 at -57 mm
    assert theta == pytest.approx(math.asin(tau / MODEL.physics.kappa_gmm), abs=1e-3)
    assert table.snapshot()["on_board"] is False


def test_tips_at_theta_max_and_swings_about_1_hz_after_a_change():
    clock = FakeClock()
    table = SimulatedTable(MODEL, clock)
    table.set_pawns([("E1", "L")], hand_s=0)
    crossings, prev, eq = [], None, math.asin(1330 / MODEL.physics.kappa_gmm)
    for _ in range(400):
        clock.advance(0.01)
        d = table.snapshot()["theta"] - eq
        if prev is not None and prev < 0 <= d:
            crossings.append(clock.now())
        prev = d
    periods = [b - a for a, b in zip(crossings, crossings[1:])]
    assert periods and all(0.85 < p < 1.15 for p in periods)
    table.set_pawns([("E1", "L"), ("E1", "L"), ("E2", "L")], hand_s=0)
    clock.advance(20)
    snap = table.snapshot()
    assert snap["on_board"] and snap["theta"] == pytest.approx(math.radians(MODEL.physics.theta_max_deg))


def test_a_hand_presses_the_arm_for_a_moment_only():
    clock = FakeClock()
    table = SimulatedTable(MODEL, clock)
    table.set_pawns([("E1", "L")], hand_s=0.6, hand_force_g=60)
    clock.advance(0.3)
    assert table.snapshot()["weight_g"] > table.arm_mass_g + 30
    clock.advance(20)
    assert table.snapshot()["weight_g"] == pytest.approx(table.arm_mass_g + 10)
    assert table.snapshot()["pawns"] == [("E1", "L")]


def test_load_cells_sum_to_the_weight_and_glitch():
    clock = FakeClock()
    table = SimulatedTable(MODEL, clock)
    table.set_pawns([("E3", "L"), ("W2", "M")], hand_s=0)
    cells = [SimLoadCell(table, f"load{i}", share=0.5, offset_counts=8000, counts_per_gram=2150, noise_counts=0)
             for i in range(2)]
    weight = sum((c.read() - 8000) / 2150 for c in cells)
    assert weight == pytest.approx(table.arm_mass_g + 16, abs=0.01)
    glitchy = SimLoadCell(table, "load9", share=1, offset_counts=0, counts_per_gram=2150, glitch_rate=1.0, seed=1)
    assert glitchy.read() in (0, -1, 0x7FFFFF, -0x800000)
    glitchy.fault = "no answer within 0.5 s"
    with pytest.raises(SensorFault, match="load9: no answer"):
        glitchy.read()


def test_tilt_switch_bounces_and_the_debouncer_settles_it():
    clock = FakeClock()
    table = SimulatedTable(MODEL, clock)
    switch = SimTiltSwitch(table, bounce_s=0.01, seed=4)
    deb = Debouncer(0.03)
    assert switch.is_closed() is False
    table.set_pawns([("E1", "L"), ("E1", "L"), ("E2", "L")], hand_s=0)
    raw, seen = [], []
    for _ in range(3000):
        clock.advance(0.001)
        r = switch.is_closed()
        raw.append(r)
        seen.append(deb.update(r, clock.now()))
    changes = sum(1 for a, b in zip(raw, raw[1:]) if a != b)
    assert changes > 1                       # the contact chattered
    assert sum(1 for a, b in zip(seen, seen[1:]) if a != b) == 1 and seen[-1] is True


def test_monitor_reports_weight_angle_and_faults_then_recovers():
    clock = FakeClock()
    table = SimulatedTable(MODEL, clock)
    table.set_pawns([("E1", "L")], hand_s=0)
    table.settle()
    cal = Calibration(offsets={"load0": 8000 + table.arm_mass_g * 2150}, counts_per_gram={"load0": 2150})
    cell = SimLoadCell(table, "load0", share=1, offset_counts=8000, counts_per_gram=2150, noise_counts=0)
    accel = SimAccelerometer(table, noise_g=0)
    mon = SensorMonitor(MODEL, cal, load_cells=[cell], accelerometer=accel, tilt=SimTiltSwitch(table), clock=clock)
    for _ in range(40):
        clock.advance(0.02)
        mon.poll()
    live = mon.live()
    assert live["weight_g"] == pytest.approx(10, abs=0.2)
    assert live["torque_gmm"] == pytest.approx(1330, abs=20)
    accel.fault = "I2C read failed: [Errno 121] Remote I/O error"
    mon.poll()
    dev = {d["name"]: d for d in mon.live()["devices"]}
    assert dev["accelerometer"]["ok"] is False and "Remote I/O" in dev["accelerometer"]["reason"]
    assert mon.live()["torque_gmm"] is None and dev["load0"]["ok"] is True
    accel.fault = None
    clock.advance(5)
    mon.poll()
    assert {d["name"]: d for d in mon.live()["devices"]}["accelerometer"]["ok"] is True


def test_buttons_and_indicators():
    panel = VirtualButtonPanel(("roll", "undo"))
    pressed, held = [], []
    panel.on_press(pressed.append)
    panel.on_hold(held.append)
    panel.press("roll")
    panel.press("undo", hold=True)
    assert pressed == ["roll"] and held == ["undo"]
    with pytest.raises(ValueError, match="no button named 'jump'"):
        panel.press("jump")
    clock = FakeClock()
    ind = VirtualIndicators(clock)
    ind.show("amber")
    ind.buzz(1.0)
    assert ind.light == "amber" and ind.buzzing
    clock.advance(2)
    assert not ind.buzzing
    with pytest.raises(ValueError):
        ind.show("purple")


def test_drift_is_a_smooth_ramp_not_placements_or_a_pressing_hand():
    import math as m

    from companion.table.devices import _CellWatch

    cpg = 2150.0
    ramp, steps = _CellWatch(), _CellWatch()
    found_ramp = found_steps = None
    for i in range(0, 1000):  # 10 s at 100 samples/s
        t = i / 100
        found_ramp = ramp.drift(t, int(8000 + 5 * cpg * t), cpg) or found_ramp
        # a pawn placed every 2 s by a hand that presses 35 g for 0.6 s
        placed = int(t // 2) * 10
        hand = 35 * m.sin(m.pi * ((t % 2) / 0.6)) if (t % 2) < 0.6 else 0.0
        found_steps = steps.drift(t, int(8000 + (placed + hand) * cpg), cpg) or found_steps
    assert found_ramp is not None and 4 < found_ramp < 6
    assert found_steps is None


def test_a_stuck_sim_button_gives_one_long_press_is_listed_after_the_stuck_time_and_comes_back(caplog):
    caplog.set_level(logging.INFO, logger="companion.hardware.virtual")
    clock = FakeClock()
    panel = VirtualButtonPanel(("roll", "undo"), clock=clock, stuck_s=10.0)
    events = []
    panel.on_press(lambda n: events.append(("press", n)))
    panel.on_hold(lambda n: events.append(("hold", n)))
    panel.stick("undo")
    assert events == [("hold", "undo")]               # the one long press a stuck GPIO button gives
    panel.stick("undo")                                # still the same stuck press
    clock.advance(9.9)
    assert panel.failures() == []
    clock.advance(2.1)
    [(name, reason)] = panel.failures()
    assert name == "button undo" and reason.startswith("stuck pressed for 12 s, after one long press (undo) — check")
    # the page's virtual panel is another path: it works, the stuck one included
    panel.press("undo")
    panel.press("roll")
    assert events == [("hold", "undo"), ("press", "undo"), ("press", "roll")]
    panel.release("undo")
    assert panel.failures() == [] and len(events) == 3     # the release is no press
    assert [r.getMessage() for r in caplog.records if "button undo" in r.getMessage()] == [
        f"button undo unavailable: {reason}", "button undo is back"]
    with pytest.raises(ValueError, match="no button named 'jump'"):
        panel.stick("jump")


def test_drift_runs_from_the_moment_it_is_set_and_a_new_rate_keeps_the_reading_continuous():
    clock = FakeClock()
    table = SimulatedTable(MODEL, clock)
    cell = SimLoadCell(table, "load0", share=1, offset_counts=8000, counts_per_gram=2150, noise_counts=0)
    clock.advance(600)                                 # ten minutes of play without drift
    start = cell.read()
    cell.drift = 100.0
    assert cell.read() == start                        # no jump when it is turned on
    clock.advance(10)
    assert cell.read() == start + 1000
    cell.drift = -50.0                                 # a new rate bends the ramp, no jump
    assert cell.read() == start + 1000
    clock.advance(4)
    assert cell.read() == start + 800
    cell.drift = 0                                     # stops where it is
    clock.advance(100)
    assert cell.read() == start + 800 and cell.drift == 0.0
    for bad in (math.nan, "fast", True, None):
        with pytest.raises(ValueError, match="load0: drift must be a finite number"):
            cell.drift = bad
    assert cell.drift == 0.0
