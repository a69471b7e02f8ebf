"""An arm whose loaded stiffness nobody measured learns how high its pawns sit from the changes the game confirms,
reads its loaded torques through κ − Σ m·h, and keeps what it learned over a restart."""

import json
import random
from dataclasses import replace

import pytest

from companion.games.balance_model import load_model
from companion.sensing.follower import ArmFollower
from companion.sensing.height_fit import PRIOR_HEIGHT_MM, HeightFit
from companion.sensing.memory import memory_of, resume
from companion.simulation.calibrating import uncalibrated
from companion.simulation.traces import ArmStyle, HandStyle, TableScript

MODEL = load_model("A")
KAPPA = 17000.0


def test_looks_at_a_loaded_arm_give_the_height():
    rng = random.Random(2)
    fit = HeightFit()
    assert fit.height == 0.0 and fit.variance == pytest.approx(PRIOR_HEIGHT_MM ** 2)
    torque, mass = 0.0, 0.0
    for _ in range(30):
        moved = rng.choice([-190.0, 380.0, 570.0, -760.0])
        sin0 = torque / (KAPPA - 18.0 * mass)
        added = rng.choice([0.0, 10.0]) if mass < 120 else 0.0
        torque, mass = torque + moved, mass + added
        sin1 = torque / (KAPPA - 18.0 * mass) + rng.gauss(0.0, 2e-4)
        fit.add(HeightFit.look(KAPPA, sin0, mass - added, sin1, mass, moved, (KAPPA * 2e-4) ** 2))
    assert fit.height == pytest.approx(18.0, abs=1.5) and fit.variance < 1.0


def test_a_look_that_says_nothing_is_left_out():
    fit = HeightFit(5.0)
    assert fit.add((0.0, 10.0, 4.0)) == 5.0 and fit.add((1.0, float("nan"), 4.0)) == 5.0 and not fit.looks


def play(height_mm: float, seed: int = 3):
    """A session of placements and moves on an arm whose pawns sit `height_mm` above the pivot."""
    sc = TableScript(MODEL, "medium-80sps", seed=seed, arm=ArmStyle(frequency_hz=1.1, damping=0.1,
                                                                    pawn_height_mm=height_mm),
                     hands=HandStyle(lift_gap_s=(0.05, 0.3)), settle_s=2.0)
    rng = random.Random(seed)
    places = ["E3", "W3", "E5", "W5", "E2", "W2", "E6", "W6", "E4", "W4", "E1", "W1"]
    for h in places:
        sc.place(h, "L")
        sc.wait(rng.uniform(3.5, 4.5))
    for src, dst in (("E6", "E7"), ("W6", "W7"), ("E5", "E6"), ("W5", "W6")):
        sc.move(src, dst, "L")
        sc.wait(rng.uniform(3.5, 4.5))
    return sc


def follow(sc, follower):
    """Feed the trace, confirming each change the way the daemon does once the game applied it."""
    actions = iter(sc.actions)
    for row in sc.rows:
        for e in follower.feed(*row):
            if e.change is not None and e.event in ("place", "move"):
                a = next(actions)
                move = ({"kind": "place", "size": "L", "to_holder": a.holder} if a.kind == "place" else
                        {"kind": "advance", "size": "L", "from_holder": a.from_holder, "to_holder": a.to_holder})
                follower.confirm_move(move, e.change)
    return follower


def test_an_uncalibrated_follower_learns_the_height_and_keeps_it_over_a_restart():
    sc = play(20.0)
    cal = uncalibrated(MODEL, sc.calibration())
    assert not cal.height_measured and cal.pawn_height_mm == 0.0
    f = follow(sc, ArmFollower(MODEL, cal))
    # (its holders unmeasured too: the height is learned with their places, place_fit.py)
    assert f.height == pytest.approx(20.0, abs=3.0) and len(f.place_fit.looks) >= 12
    # the loaded arm read through κ − Σ m·h: its τ_tip as loaded, and its swing slower for it
    assert f.live()["tip_torque_gmm"] == pytest.approx((KAPPA - f.height * 120.0) * 0.173648, abs=2.0)
    assert f.swing_model.height_mm == f.height
    again = resume(MODEL, cal, json.loads(json.dumps(memory_of(f))))
    assert again.height == pytest.approx(f.height) and again.place_fit.looks == f.place_fit.looks


def test_an_arm_whose_holders_were_measured_learns_the_height_alone():
    sc = play(20.0)
    cal = replace(uncalibrated(MODEL, sc.calibration()), holder_x={h.id: h.x_mm for h in MODEL.holders})
    f = follow(sc, ArmFollower(MODEL, cal))
    assert f.place_fit is None and f.height == pytest.approx(20.0, abs=3.0) and len(f.height_fit.looks) >= 12
    again = resume(MODEL, cal, json.loads(json.dumps(memory_of(f))))
    assert again.height == pytest.approx(f.height) and again.height_fit.looks == [tuple(k) for k in f.height_fit.looks]


def test_a_measured_height_is_not_learned_over():
    sc = play(0.0, seed=4)
    f = follow(sc, ArmFollower(MODEL, sc.calibration()))
    assert f.height_fit is None and f.height == 0.0
    assert memory_of(f)["height_looks"] is None


def test_a_bad_memory_of_the_height_is_refused():
    sc = play(0.0, seed=4)
    cal = uncalibrated(MODEL, sc.calibration())
    cal = replace(cal, holder_x={h.id: h.x_mm for h in MODEL.holders})
    memory = memory_of(ArmFollower(MODEL, cal))
    memory["height_looks"] = [[1.0, "high", 4.0]]
    with pytest.raises(ValueError, match="height_looks"):
        resume(MODEL, cal, memory)
