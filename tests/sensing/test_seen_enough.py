"""On an arm nobody calibrated a change is given as soon as a longer look could no longer change its verdict: what is
left uncertain of its accounts is their own (the holders' places, the pawns' masses), not the measurement's."""

import math

import pytest

from companion.games.balance_model import load_model
from companion.sensing.fit import NOISE_DOF, at_longest_look, chi2_sf, f_sf, judged
from companion.sensing.follower import ArmFollower, judging
from companion.sensing.inference import Candidate, Measurement, Resolution, Scored, looked_enough
from companion.simulation.calibrating import uncalibrated

from tests.sensing.test_place_fit import play

MODEL = load_model("A")


def changes(sc) -> list:
    f = ArmFollower(MODEL, uncalibrated(MODEL, sc.calibration()))
    assert f.s.max_wait_s == 3.0
    out = []
    for row in sc.rows:
        out += list({id(e.change): e.change for e in f.feed(*row) if e.change is not None}.values())
    return out


def test_a_placement_on_an_uncalibrated_arm_is_named_well_before_the_longest_wait():
    # noisy 80 SPS, seed 6: the first placement's holder is plain by 2 s; it used to wait the whole 3 s for a
    # certainty that the places' own uncertainty (a sixth of the gap) never lets the readings reach
    first = changes(play(6, "noisy-80sps"))[0]
    assert first.best.describe() == "place L in E3"
    assert not first.ambiguous and first.confidence >= 0.99
    assert first.t - first.hands_off_t < 2.5
    # given as the last look would give it: the arm link judges it so (test_arm_link_pace)
    assert first.last_look


def test_a_move_no_look_can_tell_is_flagged_as_the_longest_wait_would_flag_it(monkeypatch):
    # quiet 10 SPS, seed 7: like pawns moved W5 → W6 and W3 → W4 turn the arm alike, within what the unmeasured
    # holders leave; the verdict stood from the first looks and the longest wait gave the same one
    sc = play(7, "quiet-10sps")
    early = changes(sc)[7]
    assert early.best.describe() == "move L W5 → W6" and early.ambiguous
    assert early.t - early.hands_off_t < 2.0 and early.last_look
    monkeypatch.setattr(judging, "STEADY_S", math.inf)
    late = changes(sc)[7]
    assert late.t - late.hands_off_t >= 3.0
    assert late.best.key == early.best.key and late.ambiguous
    assert sorted(s.candidate.key for s in late.alternatives) == sorted(s.candidate.key for s in early.alternatives)
    assert late.confidence == pytest.approx(early.confidence, abs=0.05)


def _scored(c: Candidate, p: float) -> Scored:
    return Scored(c, math.log(p), 0.0, p)


def test_looked_enough_asks_whether_the_measurement_or_the_accounts_own_uncertainty_is_left():
    res = Resolution()
    # two moves 190 g·mm apart, each blurred by holders nobody measured (30 g·mm)
    a = Candidate("move", "L", from_holder="E5", to_holder="E6", mean_t=190.0, c_place=900.0)
    b = Candidate("move", "L", from_holder="E3", to_holder="E4", mean_t=200.0, c_place=900.0)
    far = Candidate("move", "L", from_holder="E1", to_holder="E2", mean_t=380.0, c_place=900.0)
    ranked = [_scored(a, 0.6), _scored(b, 0.4)]
    settled = Measurement(0.0, 0.01, 0.0, 4.0, 192.0, 4.0)
    swinging = Measurement(0.0, 0.01, 0.0, 4.0, 192.0, 2500.0)
    assert looked_enough(ranked, settled, res, [None])
    # the rest still read to ±50 g·mm: a longer look would set them further apart
    assert not looked_enough(ranked + [_scored(far, 0.01)], swinging, res, [None])
    # ... but not those it cannot tell apart anyway, nor those that weigh nothing
    assert looked_enough(ranked + [_scored(far, 1e-6)], swinging, res, [None])
    # resting on the board the angle says only "at least τ_tip": that rule decides there
    on_board = Measurement(0.0, 0.01, 0.0, 4.0, 192.0, 4.0, censored1=1)
    assert not looked_enough(ranked, on_board, res, [None])


def test_a_fit_short_of_its_bar_waits_only_while_a_longer_look_could_bring_it_there():
    # a calibrated arm's placement at 10 SPS (our seed 10500000, turn 15): its swing's residuals a little over the
    # noise for the first second, a hand's tail that a longer look dilutes; it was given flagged at 0.985 and asked
    # about, where the longest wait applied it at 0.991
    tail = judged([("weight and torque", 0.15, 2, chi2_sf(0.15, 2)), ("swing", 1.7, 60, f_sf(1.7, 60, NOISE_DOF))])
    assert tail.holds < 0.99
    assert at_longest_look(tail, 3.0).holds >= 0.99
    # the foreign arm's swing, its residuals twice the noise (F 4) over 300 samples: no look makes the model hold
    unlike = judged([("swing", 4.0, 300, f_sf(4.0, 300, NOISE_DOF))])
    assert at_longest_look(unlike, 3.0).holds < 0.01
    # a look already as long as the longest adds nothing
    assert at_longest_look(tail, 1.0).holds == pytest.approx(tail.holds)
