"""Like pawns moved alike are told apart by the swing in the move's pause (pause_swing.py), at 10 SPS.

An L lifted at E3 and set down at E2, or one lifted at E5 and set down at E4, change the weight and the torque
alike; at 10 samples a second the load cells blur both touches so much that the follower could only guess. A press
at E3 puts the arm on the board, and when the hand lets go the arm swings, until the second touch, about its rest
without the pawn: 10 g·95 mm off, not 10 g·57 mm.
"""

from __future__ import annotations

from companion.games.balance_model import load_model
from companion.sensing.follower import ArmFollower
from companion.sensing.follower.touching import TouchReading
from companion.simulation.traces import HandStyle, TableScript

MODEL = load_model("A")
PAWNS = [("E3", "L"), ("E5", "L"), ("E1", "M")]


def judged(seed: int) -> tuple[str, float]:
    """(the source the follower named, the probability it gave it)."""
    script = TableScript(MODEL, "medium-10sps", seed=seed, pawns=PAWNS, hands=HandStyle.players())
    follower = ArmFollower(MODEL, script.calibration(), pawns=PAWNS)
    script.move("E3", "E2", "L")
    script.wait(5.0)
    for row in script.rows:
        follower.feed(*row)
    best = [c for c in follower.changes if c.best is not None][-1].ranked[0]
    return best.candidate.from_holder, best.probability


def test_like_pawns_moved_alike_are_told_apart_by_the_swing_in_the_pause(monkeypatch):
    seeds = range(1, 7)
    told = [judged(seed) for seed in seeds]
    assert all(src == "E3" for src, _ in told)
    assert min(p for _, p in told) >= 0.95
    monkeypatch.setattr(TouchReading, "_pause_torque", lambda self, gesture: {})
    guessed = [judged(seed) for seed in seeds]
    # without it the touches alone leave it close to a guess on most of them
    assert sum(p for src, p in guessed if src == "E3") / len(guessed) < 0.85
