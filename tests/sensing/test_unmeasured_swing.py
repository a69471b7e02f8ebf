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
