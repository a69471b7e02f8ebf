"""An arm whose swing no calibration measured: its first moves are read right, not at the default's frequency.

Real arms swing anywhere from about 0.5 to 2 Hz; the default is 1 Hz. Read at 1 Hz over the first half
period, a placement on a 0.85 Hz arm came out a holder off at confidence 1.0 (the foreign arm's first
move). The follower now knows that it does not know: it waits for a period of the slowest swing it may
have, and reads the rest at the frequency the swing shows; long swings then teach it the arm's frequency.
"""

from __future__ import annotations

import dataclasses

import pytest

from companion.games.balance_model import load_model
from companion.sensing.calibration import DEFAULT_DAMPING, DEFAULT_SWING_HZ
from companion.sensing.follower import ArmFollower
from companion.simulation.traces import ArmStyle, TableScript

MODEL = load_model("A")


def unmeasured(script: TableScript):
    """What the config alone says of the arm: the default swing, not measured."""
    return dataclasses.replace(script.calibration(), swing_hz=DEFAULT_SWING_HZ, damping=DEFAULT_DAMPING,
                               swing_measured=False)


@pytest.mark.parametrize("hz", [0.6, 0.85, 1.3, 1.9])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_first_placement_on_an_unmeasured_arm_is_read_right(hz, seed):
    script = TableScript(MODEL, "medium-80sps", seed=seed, arm=ArmStyle(frequency_hz=hz, damping=0.15))
    action = script.place("E2", "L")
    script.wait(4.0)
    follower = ArmFollower(MODEL, unmeasured(script))
    places = [e for e in follower.feed_many(script.rows) if e.event == "place"]
    assert [e.change.best.holder for e in places] == [action.holder]


def test_a_measured_swing_keeps_its_own_rule():
    script = TableScript(MODEL, "medium-80sps", seed=1)
    follower = ArmFollower(MODEL, script.calibration())
    assert follower.swing_scale_var is None and follower._predictor().rel_sigma == 0.01


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_heavily_damped_unmeasured_arm_is_judged_at_the_damping_that_fits_it(seed):
    """Real arms damp anywhere from a few hundredths to a third of critical; the default is 0.08. The rest was read
    across the damping an unmeasured arm may have, but its fit was judged at the default's: on a ζ 0.29 arm the
    swing left residuals 5.5 times the accelerometer's noise there, and the first placements were disowned at 0.0000
    ("the model does not fit") while their rest was read right (ours, seed 28100001). Judged at the damping that
    fits, within what arms have, the first placement is applied sure."""
    script = TableScript(MODEL, "medium-80sps", seed=seed, arm=ArmStyle(frequency_hz=0.9, damping=0.3))
    action = script.place("E2", "L")
    script.wait(4.0)
    follower = ArmFollower(MODEL, unmeasured(script))
    places = [e for e in follower.feed_many(script.rows) if e.event == "place"]
    assert [e.change.best.holder for e in places] == [action.holder]
    change = places[0].change
    assert not change.flagged and change.confidence > 0.99
    assert dict((name, p) for name, _, _, p in change.fit.parts)["swing"] > 0.01
