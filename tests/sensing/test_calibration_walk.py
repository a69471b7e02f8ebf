"""What the follower assumes about an arm, measured: the known weight walked through every holder (where each
really is, and how the swing slows as the arm loads), the loaded arm (how much pawns above the pivot soften it),
each checked and refused with the reason, kept in calibration.toml, and used by the follower and the game alike."""

import math

import pytest

from companion.games import balance_physics as bp
from companion.games.balance_model import load_model
from companion.sensing.calibration import (ArmCalibration, CalibrationFileError, CalibrationRefused, CellCalibration,
                                           SwingLook, apply_file, calibrated_model, holders_problem, load_file,
                                           pawn_height, render, swing_as_loaded)
from companion.sensing.calibration_steps import CalibrationSession
from companion.sensing.follower import ArmFollower
from companion.sensing.swing import G_MM_S2
from companion.simulation.traces import ArmStyle
from companion.table.walkthrough import SimulatedArm

MODEL = load_model("A")
# an arm built off model A: most holders a few mm from where the model puts them (E2, where the known weight
# measures the stiffness, on its place: it is the walk's yardstick), the pawns 15 mm above the pivot
OFF = {"E1": 4.0, "E3": -5.0, "E4": 3.0, "E5": -2.5, "E7": 4.0, "W1": -3.5, "W2": 4.5, "W3": -3.0, "W5": -6.0,
       "W6": 2.0, "W7": 5.5}
BUILT = ArmStyle(frequency_hz=1.2, damping=0.06, pawn_height_mm=15.0,
                 holder_offsets_mm=tuple((h.id, OFF.get(h.id, 0.0)) for h in MODEL.holders))


def run_step(session, arm, step, **params):
    info = session.begin(step, 0.0, **params)
    arm.prepare(step, {k: info[k] for k in ("holder", "mass_g", "weigh_holder") if k in info})
    return session.finish(arm.capture(info["seconds"], lambda f: None))


@pytest.fixture(scope="module")
def walked():
    arm = SimulatedArm(MODEL, seed=11, arm=BUILT)
    session = CalibrationSession(MODEL, arm.base_calibration(), known_mass_g=10.0)
    for step in ("tare", "weigh", "theta_max", "loaded", "loaded_weight"):
        assert run_step(session, arm, step).ok, step
    for h in MODEL.holders:
        for _ in range(3):          # as a person would: a capture a hand disturbed is tried again
            if run_step(session, arm, "holder", holder=h.id).ok:
                break
    return arm, session


def test_a_walk_over_an_arm_built_off_the_model_recovers_its_holders(walked):
    arm, session = walked
    assert session.walked() and {s["id"]: s for s in session.steps()}["holder"]["done"]
    xs = session.holder_x()
    for h in MODEL.holders:
        assert xs[h.id] == pytest.approx(h.x_mm + OFF.get(h.id, 0.0), abs=1.2), h.id


def test_the_loaded_arm_gives_the_pawns_height_and_the_empty_arms_stiffness(walked):
    _, session = walked
    assert session.pawn_height() == pytest.approx(15.0, abs=1.0)
    assert session.kappa() == pytest.approx(17000.0, rel=0.01)
    cal = session.result()
    assert cal.tip_torque_at(120.0) == pytest.approx((17000 - 15 * 120) * 0.17365, rel=0.012)


def test_the_swing_is_measured_as_the_arm_loads(walked):
    _, session = walked
    swing = session.swing()
    assert swing.empty_hz == pytest.approx(1.2, rel=0.01) and swing.empty_damping == pytest.approx(0.06, abs=0.01)
    # the arm as the walk left it: ω falls as the weight goes out along it, as the simulated arm's does
    truth = SimulatedArm(MODEL, arm=BUILT).script.table
    for holder in ("E1", "E7", "W7"):
        x = session.holder_x()[holder]
        inertia = truth.arm_inertia + 10.0 * (x * x + 15.0 ** 2)
        omega = ((17000 - 150) * G_MM_S2 / inertia) ** 0.5
        assert swing.at(10.0 * x * x, 10.0)[0] == pytest.approx(omega, rel=0.01), holder


@pytest.mark.parametrize("seed", [1, 2])
def test_a_swing_too_damped_to_show_itself_leaves_the_arm_unmeasured_not_measured_wrong(seed):
    # ζ 0.3 at 1.9 Hz: a second after each pawn goes in, its swing is one or two σ of a 10 SPS table's
    # accelerometer; the walk used to read 1.46-2.10 Hz at ± 3 % from the noise's wiggles, and the follower then
    # held every later swing to that
    arm = SimulatedArm(MODEL, seed=seed, profile="medium-10sps",
                       arm=ArmStyle(frequency_hz=1.9, damping=0.3, pawn_height_mm=15.0))
    session = CalibrationSession(MODEL, arm.base_calibration(), known_mass_g=10.0)
    for step in ("tare", "weigh", "theta_max"):
        assert run_step(session, arm, step).ok, step
    for h in MODEL.holders:
        for _ in range(3):
            if (last := run_step(session, arm, "holder", holder=h.id)).ok:
                break
    cal = session.result()
    if cal.swing_measured:
        assert cal.swing_hz == pytest.approx(1.9, rel=0.05)
    else:
        assert "learns it at the table" in last.message


def test_looks_that_disagree_beyond_their_variances_do_not_make_a_measured_swing():
    close = [SwingLook(10.0, x, 2 * math.pi * 1.2, 0.1, 1e-4) for x in (60.0, 100.0, 130.0)]
    assert swing_as_loaded(close, 17000.0, max_rel_sigma=0.05) is not None
    apart = [SwingLook(10.0, x, 2 * math.pi * hz, 0.1, 1e-4) for x, hz in ((60.0, 1.0), (100.0, 1.5), (130.0, 2.0))]
    assert swing_as_loaded(apart, 17000.0, max_rel_sigma=0.05) is None
    assert swing_as_loaded(apart, 17000.0) is not None


def test_what_the_walk_measured_is_what_the_follower_and_the_warnings_use(walked, tmp_path):
    _, session = walked
    path = session.save(tmp_path / "calibration.toml")
    cal = apply_file(session.base, load_file(path), MODEL)
    assert cal.holder_x == pytest.approx(session.holder_x(), abs=0.01)
    assert cal.pawn_height_mm == pytest.approx(session.pawn_height(), abs=0.01)
    assert (cal.swing_hz, cal.inertia_growth) == pytest.approx((session.swing().empty_hz, session.swing().growth),
                                                              abs=1e-3)
    follower = ArmFollower(MODEL, cal, pawns=[("E1", "L"), ("W3", "L")])
    assert follower.geo.x["E1"] == pytest.approx(session.holder_x()["E1"], abs=0.01)
    game = calibrated_model(MODEL, cal)
    pawns = [("E1", "L"), ("W3", "L")]
    # the game's τ_tip for the arm carrying these pawns is the follower's, both the loaded arm's
    assert follower.live()["tip_torque_gmm"] == pytest.approx(bp.tip_torque(game, pawns), abs=0.5)
    assert bp.tip_torque(game, pawns) < game.tip_torque
    assert follower.swing_model.at(10.0 * 133.0 ** 2, 10.0)[0] == pytest.approx(
        session.swing().at(10.0 * 133.0 ** 2, 10.0)[0], rel=1e-3)


def test_a_weight_in_the_wrong_holder_is_refused_with_the_reason():
    arm = SimulatedArm(MODEL, seed=12)
    session = CalibrationSession(MODEL, arm.base_calibration(), known_mass_g=10.0)
    assert run_step(session, arm, "tare").ok and run_step(session, arm, "weigh").ok
    for h in ("E1", "E2", "E3"):
        assert run_step(session, arm, "holder", holder=h).ok
    # the walk asks for E4 next; the person left the weight in E3
    info = session.begin("holder", 0.0, mass_g=10.0)
    assert info["holder"] == "E4" and "holder E4 (4 of 14)" in info["instructions"]
    refused = session.finish(arm.capture(3.0, lambda f: None))
    assert not refused.ok and "E4 measured at +9" in refused.message
    assert "nearer E3's place in the model (+95.0 mm) than its own (+76.0 mm): was the pawn in E4?" in refused.message
    assert "E4" not in session.holder_x()
    # nothing on the arm at all
    arm.prepare("tare", {})
    session.begin("holder", 0.0, mass_g=10.0)
    empty = session.finish(arm.capture(3.0, lambda f: None))
    assert not empty.ok and "the arm carries 0.0 g: put the known weight of 10 g alone on it, in E4" in empty.message


def test_the_loaded_arm_is_refused_without_enough_pawns_on_it():
    with pytest.raises(CalibrationRefused, match="carries only 10.0 g of pawns besides the weight"):
        pawn_height(kappa_w=17000, weight_g=10, weight_x=114, load_g=10.0, sin_load=0.0, sin_both=0.07)
    with pytest.raises(CalibrationRefused, match="hardly tilted when the weight went on"):
        pawn_height(kappa_w=17000, weight_g=10, weight_x=114, load_g=120.0, sin_load=0.01, sin_both=0.0101)
    # κ 17000, 120 g of pawns 15 mm up: sin θ = 1140 / (17000 − 130 · 15) with the weight, 0 without
    assert pawn_height(kappa_w=17000 - 150, weight_g=10, weight_x=114, load_g=120.0, sin_load=0.0,
                       sin_both=1140 / (17000 - 130 * 15)) == pytest.approx(15.0)


def test_holders_off_their_places_are_named():
    assert holders_problem(MODEL, {"E1": 131.0, "W4": -70.0}) is None
    assert holders_problem(MODEL, {"E4": 86.0})[0] == "E4"
    assert "nearer E3's place" in holders_problem(MODEL, {"E4": 86.0})[1]
    assert "other side of the pivot" in holders_problem(MODEL, {"W1": 12.0})[1]
    assert "more than half a holder's spacing beyond" in holders_problem(MODEL, {"E1": 145.0})[1]


def test_the_swing_as_loaded_without_a_walk_is_the_empty_arm_alone():
    one = swing_as_loaded([SwingLook(10.0, 114.0, 6.0, 0.1, 1e-4)], 17000.0)
    total = 17000.0 * G_MM_S2 / 36.0
    assert one.inertia_gmm2 == pytest.approx(total - 10.0 * 114.0 ** 2) and one.growth == 1.0
    assert swing_as_loaded([], 17000.0) is None


def saved_text():
    cal = ArmCalibration(cells=(CellCalibration("load0", 1.0, 2000.0),), kappa_gmm=17000.0, swing_hz=1.1,
                         damping=0.07, swing_measured=True, arm_inertia_gmm2=3.5e6, inertia_growth=1.08,
                         pawn_height_mm=12.5, holder_x={"E1": 131.2, "E4": 77.0})
    return render(cal, model_name="A")


def test_the_new_values_round_trip_through_the_file(tmp_path):
    p = tmp_path / "calibration.toml"
    p.write_text(saved_text())
    cal = apply_file(ArmCalibration(cells=(CellCalibration("load0", 0, 1),)), load_file(p), MODEL)
    assert (cal.pawn_height_mm, cal.inertia_growth, cal.holder_x) == (12.5, 1.08, {"E1": 131.2, "E4": 77.0})
    swing = cal.swing()
    assert swing.height_mm == 12.5 and swing.growth == 1.08


@pytest.mark.parametrize("edit,needle", [
    # read alone, the file is wrong
    (("pawn_height_mm = 12.5", "pawn_height_mm = 250.0"), "[arm] pawn_height_mm must be within ±200 mm"),
    (("pawn_height_mm = 12.5", "pawn_height_mm = \"tall\""), "[arm] pawn_height_mm must be a number"),
    (("inertia_growth = 1.08", "inertia_growth = 7.0"), "[arm] inertia_growth must be from 0.3 to 3"),
    # the model contradicts it
    (("E4 = 77.0", "E4 = 88.0"), "[holders] E4 measured at +88.0 mm, nearer E3's place in the model"),
    (("pawn_height_mm = 12.5", "pawn_height_mm = 190.0"), "would leave the arm almost no stiffness"),
])
def test_a_bad_value_is_named_by_file_and_line(tmp_path, edit, needle):
    text = saved_text().replace(*edit)
    p = tmp_path / "calibration.toml"
    p.write_text(text)
    with pytest.raises(CalibrationFileError) as err:
        apply_file(ArmCalibration(cells=(CellCalibration("load0", 0, 1),)), load_file(p), MODEL)
    line = next(i for i, t in enumerate(text.splitlines(), 1) if t.startswith(edit[1].split(" = ")[0]))
    assert needle in str(err.value) and str(err.value).split(":")[1] == str(line)


def test_holders_measured_at_the_models_places_are_no_problem():
    # a perfect calibration names every holder, the end ones at their model places too
    assert holders_problem(MODEL, {h.id: h.x_mm for h in MODEL.holders}) is None
