"""A follower's memory: written as JSON-safe data, read back into a fresh follower, refused when it does not fit."""

import json
import math
import random

import pytest

from companion.games.balance_model import load_model
from companion.sensing.follower import ArmFollower
from companion.sensing.memory import memory_of, resume
from companion.sensing.pause_swing import PauseScale
from companion.sensing.settling import FAMILY, NOMINAL, Settling, delay
from companion.sensing.touches import IN_PIECES
from companion.simulation.traces import TableScript

MODEL = load_model("A")


def _follower_with_settling():
    sc = TableScript(MODEL, "quiet-10sps", seed=5, settle_s=0.5)
    f = ArmFollower(MODEL, sc.calibration())
    for row in sc.rows:
        f.feed(*row)
    rng = random.Random(3)
    truth = FAMILY[9]
    rows = []
    for _ in range(30):
        x = rng.choice([-95.0, -57.0, 38.0, 114.0])
        rows.append((x, [(x + 25.0 * (delay(k) - delay(truth)) + rng.gauss(0, 3), 9.0) for k in FAMILY]))
    fits = [[0.0 if k == 9 else -round(abs(delay(k_) - delay(truth)) + 0.5, 3) for k, k_ in enumerate(FAMILY)]
            for _ in range(5)]
    f.settling = Settling(rows, fits)
    return sc, f


def test_the_learned_settling_survives_a_restart():
    sc, f = _follower_with_settling()
    assert f.settling.taps != NOMINAL
    memory = json.loads(json.dumps(memory_of(f)))
    again = resume(MODEL, sc.calibration(), memory)
    assert again.settling.rows == f.settling.rows
    assert again.settling.fits == f.settling.fits and len(again.settling.fits) == 5
    assert again.settling.taps == f.settling.taps
    assert again.settling.timing() == pytest.approx(f.settling.timing())


def test_how_far_the_pauses_miss_survives_a_restart():
    sc, f = _follower_with_settling()
    for z2 in (0.1, 0.5, 0.3, 2.0, 0.2, 0.4, 0.6, 0.05, 0.3, 0.2, 0.1, 0.4):
        f.pause_scale.misses.append(z2)
    assert f.pause_scale.scale < 1.5
    memory = json.loads(json.dumps(memory_of(f)))
    again = resume(MODEL, sc.calibration(), memory)
    assert list(again.pause_scale.misses) == list(f.pause_scale.misses)
    assert again.pause_scale.scale == f.pause_scale.scale
    del memory["pause_misses"]      # written before the pauses were read: the prior
    assert resume(MODEL, sc.calibration(), memory).pause_scale.scale == PauseScale.PRIOR


def test_how_often_gestures_came_apart_survives_a_restart():
    sc, f = _follower_with_settling()
    for found in (1, 1, 2, 1, 3, 2, 1, 1):
        f.touch_counts.learn(found, 1 if found < 3 else 2)
    memory = json.loads(json.dumps(memory_of(f)))
    again = resume(MODEL, sc.calibration(), memory)
    assert list(again.touch_counts.extra) == [0, 0, 1, 0, 1, 1, 0, 0]
    assert again.touch_counts.pieces == f.touch_counts.pieces
    del memory["touch_counts"]      # written before gestures were counted: the prior
    assert resume(MODEL, sc.calibration(), memory).touch_counts.pieces == pytest.approx(IN_PIECES)


def test_a_memory_from_before_the_settling_was_learned_starts_from_the_nominal_shape():
    sc, f = _follower_with_settling()
    memory = json.loads(json.dumps(memory_of(f)))
    del memory["settling"], memory["settling_fits"]
    assert resume(MODEL, sc.calibration(), memory).settling.taps == NOMINAL


def test_a_memory_from_before_the_fits_were_kept_learns_from_its_touches_alone():
    sc, f = _follower_with_settling()
    memory = json.loads(json.dumps(memory_of(f)))
    del memory["settling_fits"]
    again = resume(MODEL, sc.calibration(), memory)
    assert again.settling.fits == [] and again.settling.rows == f.settling.rows


@pytest.mark.parametrize("key, bad, says", [
    ("settling", "not a list", "settling must be a list"),
    ("settling", [[50.0, [None]]], "one per shape"),
    ("settling", [[50.0, [[1.0, 2.0, 3.0]] * len(FAMILY)]], "one per shape"),
    ("settling", [[math.nan, [None] * len(FAMILY)]], "settling.0.x must be a number"),
    ("settling", [[50.0, [[1e9, 1.0]] + [None] * (len(FAMILY) - 1)]], "settling.0.x must be a number"),
    ("settling", [[50.0, [[10.0, -1.0]] + [None] * (len(FAMILY) - 1)]], "settling.0.s must be a number"),
    ("settling", [[50.0, [None] * len(FAMILY)]] * (Settling.KEEP + 1), "at most 40"),
    ("settling_fits", {"a": 1}, "settling_fits must be a list"),
    ("settling_fits", [[0.0] * (len(FAMILY) - 1)], "one log-likelihood per shape"),
    ("settling_fits", [[0.0] * len(FAMILY)] * (Settling.KEEP + 1), "at most 40"),
    ("settling_fits", [[0.5] + [0.0] * (len(FAMILY) - 1)], "settling_fits.0.v must be a number from -8 to 0"),
    ("settling_fits", [[-1e6] + [0.0] * (len(FAMILY) - 1)], "settling_fits.0.v must be a number"),
    ("settling_fits", [["x"] + [0.0] * (len(FAMILY) - 1)], "settling_fits.0.v must be a number"),
    ("drift_looks", "fast", "drift_looks must be a list"),
    ("drift_looks", 0, "drift_looks must be a list"),
    ("drift_misses", None, "drift_misses must be a list"),
    ("drift_looks", [[0.001]], "pairs"),
    ("drift_looks", [[0.001, 1e-6]] * 17, "at most 16"),
    ("drift_looks", [[0.001, 0.0]], "drift_looks.v must be a number from 1e-12"),
    ("drift_looks", [[math.inf, 1e-6]], "drift_looks.s must be a number"),
    ("drift_looks", [["0.001", 1e-6]], "drift_looks.s must be a number"),
    ("drift_misses", [[0.01, 1e-4]], "drift_misses must be a list of at most 32"),
    ("drift_misses", [[0.01, 1e-4, 3.0]] * 33, "drift_misses must be a list of at most 32"),
    ("drift_misses", [[0.01, 1e-4, 0.0]], "drift_misses.t must be a number"),
    ("drift_misses", [[math.nan, 1e-4, 3.0]], "drift_misses.w must be a number"),
    ("pause_misses", "wide", "pause_misses must be a list of at most 30"),
    ("pause_misses", [1.0] * 31, "pause_misses must be a list of at most 30"),
    ("pause_misses", [-1.0], "pause_misses.z2 must be a number from 0"),
    ("pause_misses", [None], "pause_misses.z2 must be a number"),
    ("hand_touches", [[57.0, 55.0, 9.0, 1.5]], "hand_touches.held must be a number from 0"),
    ("hand_touches", [[57.0, 55.0]], "hand_touches must be a list of at most 100"),
    ("touch_counts", {"0": 1}, "touch_counts must be a list of at most 200 whole numbers"),
    ("touch_counts", [0] * 201, "touch_counts must be a list of at most 200"),
    ("touch_counts", [5], "from -4 to 4"),
    ("touch_counts", [0.5], "whole numbers"),
    ("touch_counts", [True], "whole numbers"),
])
def test_a_bad_learned_memory_is_refused_by_name(key, bad, says):
    sc, f = _follower_with_settling()
    memory = memory_of(f)
    memory[key] = bad
    with pytest.raises(ValueError, match=says):
        resume(MODEL, sc.calibration(), memory)


def test_the_zero_s_drift_and_a_pawn_still_to_weigh_survive_a_restart():
    sc = TableScript(MODEL, "quiet-10sps", seed=8, settle_s=0.5)
    sc.wait(4)
    sc.place("E3", "L")
    sc.wait(2)
    f = ArmFollower(MODEL, sc.calibration())
    for row in sc.rows:
        f.feed(*row)
    f.drift.look(0.004, 0.002 ** 2)
    f.drift.miss(0.03, 0.02 ** 2, 3.5)
    assert f.drift.looks and f._weigh_pending is not None
    again = resume(MODEL, sc.calibration(), json.loads(json.dumps(memory_of(f))))
    assert again.drift.looks == f.drift.looks
    assert again.drift.misses == f.drift.misses
    assert (again.drift.rate, again.drift.var, again.drift.wander) == (f.drift.rate, f.drift.var, f.drift.wander)
    # the pawn placed last is weighed again as before, but with no drift between the old clock and the new
    (w, var, when), *rest = again._weigh_pending
    assert (w, var, *rest) == (f._weigh_pending[0][0], f._weigh_pending[0][1], *f._weigh_pending[1:])
    assert math.isnan(when)
    memory = memory_of(f)
    del memory["drift_looks"], memory["drift_misses"]      # written before the drift was learned
    fresh = resume(MODEL, sc.calibration(), memory).drift
    assert fresh.looks == [] and fresh.misses == [] and fresh.rate == 0.0 and fresh.wander == 0.0
