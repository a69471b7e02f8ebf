"""Calibration maths on captures of the simulated table, its refusals, and the calibration file."""

import math
import os

import pytest

from companion.config import parse
from companion.games.balance_model import load_model
from companion.sensing.calibration import (ArmCalibration, CalibrationFileError, CalibrationRefused, CellCalibration,
                                           apply_file, calibrated_model, counts_per_gram, for_config, from_config,
                                           holder_position, load_file, render, save, stiffness, tare, theta_max)
from companion.simulation.traces import HandStyle, TableScript

MODEL = load_model("A")
QUIET = HandStyle(duration_s=(0.5, 0.6), force_g=(10.0, 15.0), long_press_share=0.0)


def bench(seed=1, profile="quiet-10sps"):
    return TableScript(MODEL, profile, seed=seed, mass_spread=False, hands=QUIET, settle_s=3.0)


def capture(sc, seconds):
    start = len(sc.rows)
    sc.wait(seconds)
    return sc.rows[start:]


def names(sc):
    return [c.name for c in sc.sensors.cells]


def test_tare_weight_and_stiffness_recover_the_simulated_sensors():
    sc = bench()
    t = tare(capture(sc, 3.0), names(sc), axis="ax")
    truth = sc.calibration()
    for c in truth.cells:
        assert t.offsets[c.name] == pytest.approx(c.offset_counts, abs=60)
        assert 15 < t.noise_counts[c.name] < 50
    assert t.level_g == pytest.approx(0.0, abs=3e-4)
    sc.place("E4", "L")
    sc.wait(1.0)
    rows = capture(sc, 5.0)
    cpg = counts_per_gram(t, rows, 10.0)
    weight = sum((sum(v for _, s, v in rows if s == n) / sum(1 for _, s, _ in rows if s == n) - t.offsets[n]) / cpg[n]
                 for n in names(sc))
    assert weight == pytest.approx(10.0, abs=1e-6)
    st = stiffness(rows, axis="ax", level_g=t.level_g, x_mm=76.0, mass_g=10.0)
    assert st.kappa_gmm == pytest.approx(17000, rel=0.01)
    assert st.swing_hz == pytest.approx(1.0, abs=0.02) and st.damping == pytest.approx(0.08, abs=0.02)
    assert holder_position(rows, axis="ax", level_g=t.level_g, kappa_gmm=st.kappa_gmm, mass_g=10.0,
                           expected_x=76.0) == pytest.approx(76.0, abs=1.0)


def test_theta_max_is_read_while_the_arm_rests_on_the_board():
    sc = bench(2)
    t = tare(capture(sc, 3.0), names(sc), axis="ax")
    sc.table.set_pawns([], hand_s=7.0, hand_force_g=120.0, at_holder="E1")
    sc.wait(1.2)
    assert theta_max(capture(sc, 4.0), axis="ax", level_g=t.level_g) == pytest.approx(10.0, abs=0.1)


def test_refusals_say_why():
    sc = bench(3)
    t = tare(capture(sc, 3.0), names(sc), axis="ax")
    still = capture(sc, 3.0)
    with pytest.raises(CalibrationRefused, match="moved the reading by only"):
        counts_per_gram(t, still, 10.0)
    with pytest.raises(CalibrationRefused, match="tilt switch never closed"):
        theta_max(still, axis="ax", level_g=t.level_g)
    with pytest.raises(CalibrationRefused, match="barely tilted"):
        stiffness(still, axis="ax", level_g=t.level_g, x_mm=133.0, mass_g=10.0)
    sc.place("E1", "L")
    sc.wait(1.0)
    loaded = capture(sc, 4.0)
    with pytest.raises(CalibrationRefused, match="tilted the wrong way"):
        stiffness(loaded, axis="ax", level_g=t.level_g, x_mm=-133.0, mass_g=10.0)
    with pytest.raises(CalibrationRefused, match="but W1 is on the - side"):
        holder_position(loaded, axis="ax", level_g=t.level_g, kappa_gmm=17000, mass_g=10.0, expected_x=-19.0,
                        holder="W1")
    with pytest.raises(CalibrationRefused, match="positive number of grams"):
        counts_per_gram(t, loaded, -3)


def test_a_hand_on_the_arm_is_an_unsettled_signal():
    sc = bench(4)
    sc.table.set_pawns([], hand_s=3.0, hand_force_g=30.0, at_holder="E3")
    with pytest.raises(CalibrationRefused, match="still changing"):
        tare(capture(sc, 2.5), names(sc), axis="ax")


def test_saturated_and_dead_channels_are_refused():
    sc = bench(5)
    rows = capture(sc, 3.0)
    saturated = [(t, s, 0x7FFFFF if s == "load1" else v) for t, s, v in rows]
    with pytest.raises(CalibrationRefused, match="load1 is saturated"):
        tare(saturated, names(sc), axis="ax")
    dead = [(t, s, 0 if s == "load2" else v) for t, s, v in rows]
    with pytest.raises(CalibrationRefused, match="load2 gave too few good readings"):
        tare(dead, names(sc), axis="ax")
    with pytest.raises(CalibrationRefused, match="load9 sent no readings"):
        tare(rows, names(sc) + ["load9"], axis="ax")


def test_a_resting_arm_at_tare_is_refused():
    sc = TableScript(MODEL, "quiet-10sps", seed=6, pawns=[("E1", "L"), ("E1", "L"), ("E2", "L")], settle_s=3.0)
    with pytest.raises(CalibrationRefused, match="rests on the board"):
        tare(capture(sc, 3.0), names(sc), axis="ax")


def cal():
    return ArmCalibration(cells=(CellCalibration("load0", 12000.5, 2150.25, 31.0),
                                 CellCalibration("load1", -800.0, -2101.0)),
                          axis="ay", level_g=0.0123, accel_noise_g=0.002, kappa_gmm=16800.0, theta_max_deg=9.8,
                          swing_hz=0.95, damping=0.07, swing_measured=True, holder_x={"E1": 132.5, "W7": -133.4})


def test_the_file_round_trips_and_is_dated(tmp_path):
    path = save(cal(), tmp_path / "calibration.toml", model_name="A", known_mass_g=20.0)
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]
    cf = load_file(path)
    assert cf.created[:4].isdigit() and cf.model == "A" and cf.known_mass_g == 20.0
    base = ArmCalibration(cells=(CellCalibration("load0", 0, 2150), CellCalibration("load1", 0, 2150),
                                 CellCalibration("load2", 5, 2150)))
    merged = apply_file(base, cf, MODEL)
    assert merged.cell("load0") == CellCalibration("load0", 12000.5, 2150.25, 31.0)
    assert merged.cell("load2") == CellCalibration("load2", 5, 2150)
    assert (merged.axis, merged.level_g, merged.kappa_gmm, merged.theta_max_deg) == ("ay", 0.0123, 16800.0, 9.8)
    assert merged.holder_x == {"E1": 132.5, "W7": -133.4}
    model = calibrated_model(MODEL, merged)
    assert model.by_id["E1"].x_mm == 132.5 and model.tip_torque == pytest.approx(16800 * math.sin(math.radians(9.8)))


@pytest.mark.parametrize("edit,needle,line", [
    (("version = 1", "version = 2"), "version must be 1", 3),
    (("kappa_gmm = 16800.0", "kappa_gmm = \"stiff\""), "[arm] kappa_gmm must be a number", None),
    (("kappa_gmm = 16800.0", "kappa_gmm = -5.0"), "[arm] kappa_gmm must be greater than 0", None),
    (("theta_max_deg = 9.8", "theta_max_deg = 60.0"), "between 0 and 45", None),
    (("counts_per_gram = -2101.0", "counts_per_gram = 0.0"), "[load_cells.load1] counts_per_gram must not be 0", None),
    (("axis = \"ay\"", "axis = \"bz\""), "axis must be ax, ay or az", None),
    (("damping = 0.07", "damping = 0.07\nspring = 1"), "unknown key [arm] spring", None),
    (("[holders]", "[holders]\nE1x = 0.0"), "must not be 0", None),
    (("version = 1", "version = 1\nversion = 1"), "not valid TOML", 4),
])
def test_a_bad_file_is_named_by_file_and_line(tmp_path, edit, needle, line):
    text = render(cal(), model_name="A").replace(*edit)
    p = tmp_path / "calibration.toml"
    p.write_text(text)
    with pytest.raises(CalibrationFileError) as err:
        load_file(p)
    msg = str(err.value)
    assert needle in msg
    where = int(msg.split(":")[1])
    expected = line or next(i for i, t in enumerate(text.splitlines(), 1) if edit[1].split("\n")[-1] in t)
    assert where == expected


def test_a_file_for_another_arm_is_refused(tmp_path):
    p = save(cal(), tmp_path / "calibration.toml", model_name="B")
    base = ArmCalibration(cells=(CellCalibration("load0", 0, 2150), CellCalibration("load1", 0, 2150)))
    with pytest.raises(CalibrationFileError, match="made for balance model 'B'"):
        apply_file(base, load_file(p), MODEL)
    p = save(cal(), tmp_path / "calibration.toml", model_name="A")
    with pytest.raises(CalibrationFileError, match=r"calibration.toml:\d+: \[load_cells.load1\]: the config has no"):
        apply_file(ArmCalibration(cells=(CellCalibration("load0", 0, 2150),)), load_file(p), MODEL)
    text = p.read_text().replace("E1 = 132.5", "Z9 = 132.5")
    p.write_text(text)
    with pytest.raises(CalibrationFileError, match="model A has no such holder"):
        apply_file(base, load_file(p), MODEL)


def test_the_daemon_picks_up_the_file_beside_its_config(tmp_path):
    cfg_path = tmp_path / "companion.toml"
    cfg_path.write_text("[[load_cells]]\nname = \"load0\"\noffset_counts = 1.0\ncounts_per_gram = 2000.0\n"
                        "[[load_cells]]\nname = \"load1\"\noffset_counts = 2.0\ncounts_per_gram = 2000.0\n"
                        "[accelerometer]\naxis = \"ax\"\n[simulate]\nenabled = true\n")
    import tomllib

    cfg = parse(tomllib.loads(cfg_path.read_text()), str(cfg_path), tmp_path)
    assert for_config(cfg) == (from_config(cfg), None)
    save(cal(), tmp_path / "calibration.toml", model_name="A")
    merged, used = for_config(cfg)
    assert used == tmp_path / "calibration.toml" and merged.kappa_gmm == 16800.0
    assert merged.cell("load0").counts_per_gram == 2150.25
