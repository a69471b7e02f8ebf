"""What one swing shows of the arm, and how an arm whose swing nobody measured learns it.

On a noisy accelerometer (σ 0.005) the swings after moves were 2-4 σ big, and the follower's old rule (learn only
from a swing over 20 σ, judged at the predicted frequency) never learned: a foreign arm at 1.45 Hz was still read at
1 Hz ± 35 % after ten turns, and every move of like pawns was a question. Each swing now counts for what it shows.
"""

from __future__ import annotations

import dataclasses
import math
import random

import pytest

from companion.games.balance_model import load_model
from companion.sensing.calibration import DEFAULT_DAMPING, DEFAULT_SWING_HZ
from companion.sensing.follower import ArmFollower
from companion.sensing.inference import nominal_pawns
from companion.sensing.swing import measure_swing
from companion.simulation.traces import ArmStyle, TableScript

MODEL = load_model("A")


def swing(rng: random.Random, omega: float, zeta: float, amplitude: float, noise: float, seconds: float = 5.0,
          rate: float = 100.0, rest: float = 0.02):
    ts = [k / rate for k in range(int(seconds * rate))]
    wd = omega * math.sqrt(1 - zeta * zeta)
    phase = rng.uniform(0, 2 * math.pi)
    ss = [rest + amplitude * math.exp(-zeta * omega * t) * math.cos(wd * t + phase) + rng.gauss(0, noise)
          for t in ts]
    return ts, ss


def test_the_frequency_falls_within_its_stated_spread_over_random_arms_swings_and_guesses():
    rng = random.Random(7)
    inside = total = 0
    for _ in range(60):
        omega = 2 * math.pi * rng.uniform(0.6, 2.0)
        zeta = math.exp(rng.uniform(math.log(0.03), math.log(0.3)))
        noise = rng.choice([0.0015, 0.0025, 0.005])
        amplitude = noise * rng.uniform(3, 30)
        ts, ss = swing(rng, omega, zeta, amplitude, noise)
        guess = omega * math.exp(rng.uniform(-0.4, 0.4))
        seen = measure_swing(ts, ss, guess, 0.08, noise=noise, span=0.6)
        if seen is None:
            continue
        total += 1
        inside += abs(seen.omega - omega) <= 3 * math.sqrt(seen.omega_var)
    assert total >= 45, "most swings that stand out of the noise show a frequency"
    assert inside / total >= 0.95, f"only {inside} of {total} within 3σ of the truth"


def test_a_big_clean_swing_shows_its_frequency_to_well_under_one_per_cent_and_its_damping():
    ts, ss = swing(random.Random(1), 2 * math.pi * 1.45, 0.2, 0.1, 0.0025)
    seen = measure_swing(ts, ss, 2 * math.pi, 0.08, noise=0.0025, span=0.6)
    assert seen is not None
    assert seen.omega == pytest.approx(2 * math.pi * 1.45, rel=0.01)
    assert math.sqrt(seen.omega_var) / seen.omega < 0.01
    assert seen.zeta == pytest.approx(0.2, rel=0.15) and math.sqrt(seen.ln_zeta_var) < 0.15


def test_an_arm_at_rest_shows_no_frequency():
    ts, ss = swing(random.Random(2), 2 * math.pi, 0.1, 0.0, 0.005)
    assert measure_swing(ts, ss, 2 * math.pi, 0.08, noise=0.005, span=0.6) is None


def test_a_frequency_outside_the_search_is_not_taken_for_its_edge():
    ts, ss = swing(random.Random(3), 2 * math.pi * 1.9, 0.1, 0.05, 0.002)
    assert measure_swing(ts, ss, 2 * math.pi * 1.0, 0.08, noise=0.002, span=0.3) is None


def unmeasured(script: TableScript):
    return dataclasses.replace(script.calibration(), swing_hz=DEFAULT_SWING_HZ, damping=DEFAULT_DAMPING,
                               swing_measured=False)


@pytest.mark.parametrize("hz, zeta", [(1.45, 0.2), (0.7, 0.05), (1.95, 0.06)])
def test_an_unmeasured_arm_learns_its_swing_from_the_spells_between_moves_on_a_noisy_table(hz, zeta):
    script = TableScript(MODEL, "noisy-80sps", seed=4, arm=ArmStyle(frequency_hz=hz, damping=zeta))
    script.wait(2.0)
    for holder in ("E3", "W4", "E5"):
        script.place(holder, "L")
        script.wait(5.0)
    script.place("W2", "L")          # the hand that ends the last spell, so that it is learned from
    script.wait(1.0)
    follower = ArmFollower(MODEL, unmeasured(script))
    follower.feed_many(script.rows)
    empty_omega = follower.swing_model.at(0.0)[0] * follower.swing_scale
    truth = ArmStyle(frequency_hz=hz, damping=zeta)
    assert empty_omega / (2 * math.pi) == pytest.approx(truth.frequency_hz, rel=0.05)
    assert math.sqrt(follower.swing_scale_var) < 0.02
    assert math.sqrt(follower.zeta_scale_var) < 0.3


def test_a_short_look_reads_the_rest_across_the_damping_an_unmeasured_arm_may_have():
    script = TableScript(MODEL, "medium-80sps", seed=1)
    follower = ArmFollower(MODEL, unmeasured(script))
    rng = random.Random(5)
    omega, zeta = follower._swing()
    for seconds, wider in ((0.45, True), (6.0, False)):
        ts, ss = swing(rng, omega, 2.5 * zeta, 0.05, 0.002, seconds=seconds)
        follower.zeta_scale_var = None
        sure = follower._fan(ts, ss, loads=[0.0])[0]
        follower.zeta_scale_var = 0.55 ** 2
        unsure = follower._fan(ts, ss, loads=[0.0])[0]
        ratio = unsure.tau_vars[unsure.best] / sure.tau_vars[sure.best]
        if wider:
            assert ratio > 2, "over part of a period the damping moves the rest: its spread must show"
        else:
            assert ratio < 1.5, "over many periods the swing shows its damping: nothing to add"


def test_an_unmeasured_arm_predicts_its_loaded_swing_from_what_the_empty_arm_weighs_in_inertia():
    # our seed 11001002 (uncalibrated, medium-80sps): on a 1.6 Hz arm the prior's empty inertia was 2.6 times the
    # arm's; a scale on every load's ω alike, learned over the loads seen, left the full arm's ω 10 % low while it was
    # held sure to 1.2 %, and short looks read placements a holder off at 0.999
    hz = 1.6
    script = TableScript(MODEL, "medium-80sps", seed=5, arm=ArmStyle(frequency_hz=hz, damping=0.15))
    script.wait(2.0)
    for holder in ("E1", "W7", "E2", "W6", "E1", "W7", "E2", "W6"):
        script.place(holder, "L")
        script.wait(5.0)
    script.touch("E7")               # the hand that ends the last spell, so that it is learned from
    script.wait(1.0)
    follower = ArmFollower(MODEL, unmeasured(script))
    follower.feed_many(script.rows)
    w2, damp = script.table.swing()
    predicted, zeta = follower._swing(nominal_pawns(follower.geo, script.table.pawns_to_come()))
    assert predicted == pytest.approx(math.sqrt(w2), rel=0.02)
    assert zeta == pytest.approx(damp / (2 * math.sqrt(w2)), rel=0.15)
    # ... and the empty arm's, which no swing was measured at
    empty = follower._swing(())[0]
    assert empty / (2 * math.pi) == pytest.approx(hz, rel=0.05)


def test_learning_an_unmeasured_arm_s_inertia_leaves_its_damping_to_its_own_scale():
    # the empty arm's ζ is learned apart (zeta_scale), in the same step as the inertia: moved with it, ζ was read
    # off by the scale's jump until the next spell (foreign trace seed 11604, normal: a placement's swing disowned,
    # F 2.2 on 307 degrees of freedom, and flagged at p 0.0001)
    script = TableScript(MODEL, "medium-80sps", seed=5)
    follower = ArmFollower(MODEL, unmeasured(script))
    omega, zeta = follower._swing(())
    follower.swing_scale = 1.6
    moved_omega, moved_zeta = follower._swing(())
    assert moved_omega == pytest.approx(1.6 * omega)
    assert moved_zeta == pytest.approx(zeta)


def test_a_heavily_damped_swing_is_found_from_a_light_guess_far_off():
    """Ours 28700005 (1.40 Hz, ζ 0.30, unmeasured): the first swing, big and clean, was searched from the defaults
    (1 Hz, ζ 0.08) and read at 1.61 Hz ± 2.7 %: at the guess's damping the lowest residual lay in another basin. Every
    later swing was then searched within ± 5-8 % of that and none was found; the swings were disowned and the players
    answered 17 turns unasked. The coarse look now judges each frequency at its best of a few dampings."""
    bad = total = 0
    for seed in range(30):
        rng = random.Random(seed)
        hz, zeta = rng.uniform(1.2, 1.8), rng.uniform(0.22, 0.32)
        ts, ss = swing(rng, 2 * math.pi * hz, zeta, rng.uniform(0.02, 0.05), 0.002)
        seen = measure_swing(ts, ss, 2 * math.pi * 1.0, 0.08, noise=0.002, span=0.6)
        assert seen is not None, seed
        total += 1
        bad += abs(seen.omega - 2 * math.pi * hz) > 3 * math.sqrt(seen.omega_var)
    assert bad == 0, f"{bad} of {total} frequencies beyond 3σ of the truth"
