"""A change the sensors alone cannot yet name, whose legal moves the game already tells apart, is decided then.

An L moved two holders and an M moved three change the weight alike and the torque nearly alike: the follower looks
on until the swing or the hands tell them apart, or until a longer look could not. The roll often settles it at
once (only one of them is legal), and the players are not kept waiting for what the game already knows. The game's
answer comes through `ArmFollower.game_takes`, asked at the follower's own early bar.
"""

from __future__ import annotations

import pytest

from companion.games.balance_model import load_model
from companion.sensing.follower import ArmFollower
from companion.simulation.traces import TableScript

MODEL = load_model("A")
PAWNS = [("E1", "L"), ("E2", "M")]


def judged(seed: int, profile: str, game=None):
    """(seconds after the hands left, the move's source holder, the follower's early bar each ask came with)."""
    script = TableScript(MODEL, profile, seed=seed, pawns=PAWNS)
    follower = ArmFollower(MODEL, script.calibration(), pawns=PAWNS)
    asked = []
    if game is not None:
        def takes(change, sure):
            asked.append(sure)
            return game(change)
        follower.game_takes = takes
    script.move("E1", "E3", "L")
    script.wait(5.0)
    for row in script.rows:
        for ev in follower.feed(*row):
            if ev.event == "move":
                return ev.t - follower.changes[-1].hands_off_t, ev.from_holder, asked, follower
    raise AssertionError("the move was never decided")


@pytest.mark.parametrize("seed, profile", [(1, "medium-10sps"), (2, "medium-10sps"), (2, "medium-80sps")])
def test_a_look_alike_the_roll_settles_is_decided_as_soon_as_the_game_would_take_it(seed, profile):
    alone, src, _, _ = judged(seed, profile)
    # (only the L's move is legal: the roll was a 2)
    early, src_early, asked, follower = judged(seed, profile, lambda change: change.best.from_holder == "E1")
    assert src == src_early == "E1"
    assert early < alone - 0.2
    assert asked and set(asked) == {follower.s.decide_at}
    # a game that would take nothing (no move due, a question open) leaves the follower as it was alone
    never, src_never, asked_never, _ = judged(seed, profile, lambda change: False)
    assert (never, src_never) == (alone, src) and asked_never
