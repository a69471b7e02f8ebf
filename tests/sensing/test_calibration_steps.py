"""The calibration steps as the page drives them, and the terminal walk-through, on the simulated table."""

import io

import pytest

from companion.games.balance_model import load_model
from companion.sensing.calibration import CalibrationRefused, load_file
from companion.sensing.calibration_steps import CalibrationSession
from companion.table.walkthrough import SimulatedArm, Walkthrough

MODEL = load_model("A")


def run_step(session, arm, step, **params):
    """What the daemon does: begin, feed every sample until ready, finish."""
    info = session.begin(step, 0.0, **params)
    arm.prepare(step, {k: info[k] for k in ("holder", "mass_g", "weigh_holder") if k in info})
    rows = arm.capture(info["seconds"], lambda f: None)
    start = rows[0][0]
    for t, sensor, value in rows:
        session.feed(t, sensor, value)
        progress = session.progress(t - start)
    assert progress["fraction"] == pytest.approx(1.0, abs=0.05)
    assert session.ready(info["seconds"])
    return session.finish()


def test_the_page_steps_in_order():
    arm = SimulatedArm(MODEL, seed=3)
    session = CalibrationSession(MODEL, arm.base_calibration(), known_mass_g=10.0)
    with pytest.raises(CalibrationRefused, match="do the empty arm \\(tare\\) step first"):
        session.begin("weigh", 0.0)
    with pytest.raises(CalibrationRefused, match="no calibration step 'dance'"):
        session.begin("dance", 0.0)
    assert run_step(session, arm, "tare").ok
    weigh = run_step(session, arm, "weigh")
    assert weigh.ok and weigh.values["kappa_gmm"] == pytest.approx(17000, rel=0.015)
    assert "counts/g" in weigh.message and "κ =" in weigh.message
    theta = run_step(session, arm, "theta_max")
    assert theta.ok and theta.values["theta_max_deg"] == pytest.approx(10.0, abs=0.15)
    holder = run_step(session, arm, "holder", holder="W3")
    assert holder.ok and holder.values["x_mm"] == pytest.approx(-57.0, abs=1.5)
    listed = {s["id"]: s for s in session.steps()}
    assert all(listed[s]["done"] for s in ("tare", "weigh", "theta_max"))
    # the walk is done once every holder is measured; it goes on from the first not yet measured
    assert not listed["holder"]["done"] and "holder E1 (1 of 14)" in listed["holder"]["instructions"]
    cal = session.result()
    assert cal.holder_x["W3"] == pytest.approx(-57.0, abs=1.5)
    truth = arm.script.calibration()
    for c in cal.cells:
        assert c.offset_counts == pytest.approx(truth.cell(c.name).offset_counts, abs=80)


def test_a_refused_step_says_why_and_nothing_unfinished_is_saved(tmp_path):
    arm = SimulatedArm(MODEL, seed=4)
    session = CalibrationSession(MODEL, arm.base_calibration(), known_mass_g=10.0)
    with pytest.raises(CalibrationRefused, match="nothing worth saving"):
        session.save(tmp_path / "c.toml")
    assert run_step(session, arm, "tare").ok
    session.begin("theta_max", 0.0)
    result = session.finish(arm.capture(2.0, lambda f: None))    # nobody pressed the arm down
    assert not result.ok and "tilt switch never closed" in result.message
    with pytest.raises(CalibrationRefused, match="positive number of grams"):
        session.begin("weigh", 0.0, mass_g=-1)
    with pytest.raises(CalibrationRefused, match="name a holder of model A"):
        session.begin("weigh", 0.0, holder="Q9")
    with pytest.raises(CalibrationRefused, match="do the known weight"):
        session.begin("holder", 0.0, holder="E1")


def answers(*items):
    it = iter(items)
    return lambda prompt: next(it)


def test_the_walkthrough_writes_a_dated_file(tmp_path):
    arm = SimulatedArm(MODEL, seed=5)
    session = CalibrationSession(MODEL, arm.base_calibration(), known_mass_g=arm.known_mass_g)
    out = io.StringIO()
    walk = Walkthrough(session, arm, ask=answers("", "", "", "", "n", "n", "y"), out=out, model_name="A")
    assert walk.run(tmp_path / "calibration.toml") == 0
    text = out.getvalue()
    assert "✓ zero:" in text and "κ = " in text and "θ_max = " in text and "Wrote" in text
    cf = load_file(tmp_path / "calibration.toml")
    assert cf.kappa_gmm == pytest.approx(17000, rel=0.015) and cf.created


def test_the_walkthrough_can_be_left(tmp_path):
    arm = SimulatedArm(MODEL, seed=6)
    out = io.StringIO()
    walk = Walkthrough(CalibrationSession(MODEL, arm.base_calibration(), known_mass_g=10.0), arm,
                       ask=answers("q"), out=out, model_name="A")
    assert walk.run(tmp_path / "c.toml") == 1
    assert "Nothing was saved" in out.getvalue() and not (tmp_path / "c.toml").exists()
    out = io.StringIO()
    walk = Walkthrough(CalibrationSession(MODEL, arm.base_calibration(), known_mass_g=10.0), arm,
                       ask=answers("", "", "s"), out=out, model_name="A")
    assert walk.run(tmp_path / "c.toml") == 1
    assert "this step is needed" in out.getvalue()


def test_the_walkthrough_asks_for_the_weight_again_when_it_is_not_a_number(tmp_path):
    arm = SimulatedArm(MODEL, seed=7)
    out = io.StringIO()
    walk = Walkthrough(CalibrationSession(MODEL, arm.base_calibration()), arm,
                       ask=answers("", "ten", "10", "", "s", "n", "n", "n"), out=out, model_name="A")
    assert walk.run(tmp_path / "c.toml") == 1     # declined to write at the end
    assert "'ten' is not a weight in grams" in out.getvalue()
