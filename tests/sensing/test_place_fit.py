"""An arm whose holders nobody measured: their places learned from the changes the game confirms, with what is still
uncertain of them kept in every candidate's torque, and kept over a restart."""

import json
import random

import pytest

from companion.games.balance_model import load_model
from companion.sensing.follower import ArmFollower
from companion.sensing.inference import Geometry, place_variance
from companion.sensing.memory import memory_of, resume
from companion.sensing.place_fit import PlaceFit
from companion.simulation.calibrating import uncalibrated
from companion.simulation.traces import ArmStyle, HandStyle, TableScript

from tests.sensing.test_height_fit import follow

MODEL = load_model("A")
KAPPA = 17000.0
OFF = {"E3": 4.0, "W3": -3.5, "E5": -3.0, "W5": 2.5, "E2": 3.0, "W2": -2.0}


def test_confirmed_looks_find_where_the_holders_sit_and_narrow_them():
    geo = Geometry.from_model(MODEL, unmeasured=MODEL.by_id)
    fit = PlaceFit(geo.x, geo.x_cov)
    built = {h: x + OFF.get(h, 0.0) for h, x in geo.x.items()}
    rng = random.Random(5)
    for _ in range(40):
        h = rng.choice(sorted(OFF))
        a = rng.choice([10.0, -10.0, 6.0])
        torque = a * built[h] + rng.gauss(0.0, 5.0)
        # the pawns at the pivot's height: the angle's κ·Δsin is the torque the change moved
        assert fit.add(PlaceFit.look(KAPPA, 0.0, 0.0, torque / KAPPA, 0.0, {h: a}, 0.0, 25.0))
    places = fit.places()
    for h, off in OFF.items():
        assert places[h] == pytest.approx(built[h], abs=1.0)
        assert fit.place_cov()[h][h] < 0.1 * geo.x_cov[h][h]
    # a holder no change touched stays where the model has it, its own uncertainty barely narrowed
    assert places["E7"] == pytest.approx(geo.x["E7"], abs=0.5)
    assert fit.place_cov()["E7"]["E7"] > 0.5 * geo.x_cov["E7"]["E7"]
    # a look that says a holder sits 30 mm off is a change read wrong, not the arm: left out
    assert not fit.add(PlaceFit.look(KAPPA, 0.0, 0.0, 10.0 * (built["E3"] + 30.0) / KAPPA, 0.0, {"E3": 10.0},
                                     0.0, 25.0))
    # what is left uncertain still blurs a move's torque, less than before any look
    narrowed = Geometry.from_model(MODEL, unmeasured=MODEL.by_id)
    narrowed = Geometry(**{**narrowed.__dict__, "x_cov": fit.place_cov()})
    assert 0 < place_variance(narrowed, {"E3": -10.0, "W3": 10.0}) < place_variance(geo, {"E3": -10.0, "W3": 10.0})


def play(seed: int = 3, level: str = "medium-80sps"):
    """Placements and moves on an arm whose pawns sit at the pivot's height and whose holders are off the model."""
    sc = TableScript(MODEL, level, seed=seed,
                     arm=ArmStyle(frequency_hz=1.1, damping=0.1, holder_offsets_mm=tuple(OFF.items())),
                     hands=HandStyle(lift_gap_s=(0.05, 0.3)), settle_s=2.0)
    rng = random.Random(seed)
    for h in ["E3", "W3", "E5", "W5", "E2", "W2"]:
        sc.place(h, "L")
        sc.wait(rng.uniform(3.5, 4.5))
    for src, dst in (("E5", "E6"), ("W5", "W6"), ("E6", "E5"), ("W6", "W5"), ("E3", "E4"), ("W3", "W4"),
                     ("E4", "E3"), ("W4", "W3")):
        sc.move(src, dst, "L")
        sc.wait(rng.uniform(3.5, 4.5))
    return sc


def test_an_uncalibrated_follower_learns_its_holders_and_keeps_them_over_a_restart():
    sc = play()
    cal = uncalibrated(MODEL, sc.calibration())
    assert not cal.holder_x
    f = follow(sc, ArmFollower(MODEL, cal))
    start = Geometry.from_model(MODEL, unmeasured=MODEL.by_id)
    assert len(f.place_fit.looks) >= 8
    for h, off in OFF.items():
        # nearer where the holder is than the model's place (within half of it for those moved from and to), surer
        share = 1.0 if h in ("E2", "W2") else 0.5
        assert abs(f.geo.x[h] - (MODEL.by_id[h].x_mm + off)) < share * abs(off)
        assert f.geo.x_cov[h][h] < share * start.x_cov[h][h]
    again = resume(MODEL, cal, json.loads(json.dumps(memory_of(f))))
    assert again.geo.x == pytest.approx(f.geo.x) and again.place_fit.looks == f.place_fit.looks
    assert all(b.candidates[1].c_place == pytest.approx(a.candidates[1].c_place)
               for a, b in zip(f.beliefs, again.beliefs))


def test_a_bad_memory_of_the_holders_is_refused():
    cal = uncalibrated(MODEL, play().calibration())
    memory = memory_of(ArmFollower(MODEL, cal))
    for bad in ([[0.0, [["E9", 10.0]], 5.0, 4.0]], [[0.0, [["E3", "ten"]], 5.0, 4.0]], "all of them"):
        memory["place_looks"] = bad
        with pytest.raises(ValueError, match="place_looks"):
            resume(MODEL, cal, memory)


def test_without_a_game_the_changes_no_other_account_explains_teach_the_places():
    # as `companion analyze` does: a change this sure and not flagged counts as confirmed
    sc = play()
    f = ArmFollower(MODEL, uncalibrated(MODEL, sc.calibration()))
    for row in sc.rows:
        for change in {id(e.change): e.change for e in f.feed(*row) if e.change is not None}.values():
            if change.confidence >= 0.999:
                f.learn_from(change)
    assert len(f.place_fit.looks) >= 4
    for h in ("E3", "W3", "E5", "W5"):
        assert abs(f.geo.x[h] - (MODEL.by_id[h].x_mm + OFF[h])) < 0.5 * abs(OFF[h])


def test_past_the_looks_kept_the_fit_is_the_one_the_kept_looks_give_from_the_prior():
    geo = Geometry.from_model(MODEL, unmeasured=MODEL.by_id)
    fit = PlaceFit(geo.x, geo.x_cov)
    built = {h: x + OFF.get(h, 0.0) for h, x in geo.x.items()}
    rng = random.Random(7)
    for _ in range(PlaceFit.KEEP + 15):
        h = rng.choice(sorted(OFF))
        a = rng.choice([10.0, -10.0, 6.0])
        fit.add(PlaceFit.look(KAPPA, 0.0, 0.0, (a * built[h] + rng.gauss(0.0, 5.0)) / KAPPA, 0.0, {h: a}, 0.0, 25.0))
    assert len(fit.looks) == PlaceFit.KEEP
    again = PlaceFit(geo.x, geo.x_cov, looks=fit.looks)
    assert len(again.looks) == PlaceFit.KEEP
    for h in OFF:
        assert fit.places()[h] == pytest.approx(again.places()[h], abs=1e-6)
        assert fit.place_cov()[h][h] == pytest.approx(again.place_cov()[h][h], rel=1e-6)
