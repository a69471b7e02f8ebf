"""The zero's drift rate: each settled spell's slope, the looks combined robustly, and the follower taking the
drift off the weight changes it judges."""

import math
import random

import pytest

from companion.games.balance_model import load_model
from companion.sensing.drift import MIN_SPELL_S, ZeroDrift, spell_slope
from companion.sensing.follower import ArmFollower
from companion.simulation.traces import HandStyle, TableScript, with_profile

MODEL = load_model("A")


def readings(rng, rate, start, end, dt, sigma, level=10.0):
    t, out = start, []
    while t < end:
        out.append((t, level + rate * t + rng.gauss(0.0, sigma)))
        t += dt
    return out


def test_a_spell_s_slope_is_the_sum_of_its_cells_slopes_with_the_fits_own_variance():
    rng = random.Random(1)
    rates = (0.004, -0.001, 0.002, 0.003)
    cells = [(readings(rng, r, 0.0, 6.0, 0.0125, 0.05), 0.05) for r in rates]
    slopes = [spell_slope(cells, 1.0, 5.0) for _ in range(1)]
    slope, var = slopes[0]
    # 320 readings a cell over 4 s: each cell's slope is known to 0.0048 g/s, the sum to about 0.0097
    assert math.sqrt(var) == pytest.approx(0.05 * math.sqrt(12 / (320 * 16)) * 2, rel=0.05)
    assert abs(slope - sum(rates)) < 3 * math.sqrt(var)
    # the variance is the one the slopes really have
    spread = [spell_slope([(readings(rng, r, 0.0, 6.0, 0.0125, 0.05), 0.05) for r in rates], 1.0, 5.0)[0]
              for _ in range(200)]
    mean = sum(spread) / len(spread)
    sd = math.sqrt(sum((s - mean) ** 2 for s in spread) / (len(spread) - 1))
    assert sd == pytest.approx(math.sqrt(var), rel=0.15)


def test_no_slope_from_a_short_spell_or_with_a_cell_left_out():
    rng = random.Random(2)
    cells = [(readings(rng, 0.001, 0.0, 6.0, 0.1, 0.02), 0.02) for _ in range(4)]
    assert spell_slope(cells, 2.0, 2.0 + MIN_SPELL_S - 0.01) is None
    assert spell_slope(cells, 2.0, 4.0) is not None
    cells[2] = (cells[2][0][:22], 0.02)       # this cell stopped answering at 2.1 s
    assert spell_slope(cells, 2.0, 4.0) is None


def test_the_rate_is_the_looks_mean_and_a_spoiled_look_is_left_out_however_far_off():
    drift = ZeroDrift()
    assert drift.rate == 0.0 and drift.var == ZeroDrift.PRIOR_SIGMA ** 2
    rng = random.Random(3)
    for _ in range(10):
        drift.look(0.008 + rng.gauss(0.0, 0.002), 0.002 ** 2)
    assert drift.rate == pytest.approx(0.008, abs=0.0015)
    assert math.sqrt(drift.var) < 0.001
    before = drift.rate
    drift.look(0.5, 0.002 ** 2)                 # a hand too light to notice, leaning on the arm for a spell
    assert drift.rate == pytest.approx(before, abs=1e-4)
    shift, var, wander = drift.between(100.0, 107.0)
    assert shift == pytest.approx(7.0 * drift.rate) and var == pytest.approx(49.0 * drift.var) and wander == 0.0
    assert drift.between(math.nan, 107.0) == (0.0, 0.0, 0.0)


def test_a_rate_that_changes_is_followed_within_half_the_looks_kept():
    drift = ZeroDrift()
    for _ in range(ZeroDrift.KEEP):
        drift.look(0.002, 0.001 ** 2)
    for _ in range(ZeroDrift.KEEP // 2 + 1):
        drift.look(-0.006, 0.001 ** 2)
    assert drift.rate == pytest.approx(-0.006, abs=0.0005)


def test_looks_that_scatter_more_than_their_fits_say_widen_the_rate():
    tidy, scattered = ZeroDrift(), ZeroDrift()
    for k in range(12):
        tidy.look(0.004, 0.001 ** 2)
        scattered.look(0.004 + (0.003 if k % 2 else -0.003), 0.001 ** 2)
    assert scattered.rate == pytest.approx(tidy.rate, abs=1e-4)
    assert scattered.var > 5 * tidy.var


def test_a_drifting_zero_is_learned_while_the_arm_rests_and_taken_off_each_move():
    # every cell drifting 12 counts/s the same way (about 0.022 g/s summed: a warming board), no random walk
    profile = with_profile("medium-80sps", drift_counts_per_s=0.0, drift_walk_counts=0.0, glitch_rate=0.0)

    def session(learn: bool):
        sc = TableScript(MODEL, profile, seed=4, hands=HandStyle(long_press_share=0.0))
        for c in sc.sensors.cells:
            c.drift = 12.0
        sc.place("E3", "L")
        sc.wait(6)
        sc.place("W5", "M")
        sc.wait(6)
        for src, dst, size in (("E3", "E5", "L"), ("W5", "W2", "M"), ("E5", "E2", "L"), ("W2", "W6", "M")):
            sc.move(src, dst, size)
            sc.wait(6)
        f = ArmFollower(MODEL, sc.calibration())
        if not learn:
            f.drift.look = lambda slope, var: None
        events = []
        for row in sc.rows:
            events.extend(f.feed(*row))
        true_rate = sum(c.drift / c.k for c in sc.sensors.cells)
        moves = [c.measurement for c in f.changes if c.best is not None and c.best.kind == "move"]
        return f, events, true_rate, moves

    f, events, true_rate, moves = session(True)
    assert [e.event for e in events] == ["place", "place", "move", "move", "move", "move"]
    assert f.drift.rate == pytest.approx(true_rate, rel=0.1)
    assert len(moves) == 4
    # a move changes the weight by nothing: with the drift taken off, each says so within its σ
    assert all(abs(m.dw) < 3 * math.sqrt(m.var_dw) for m in moves)
    assert sum(abs(m.dw) for m in moves) / 4 < 0.02
    # the same session with nothing learned of the drift: the later moves come out 0.05-0.1 g heavy
    _, _, _, blind = session(False)
    assert sum(abs(m.dw) for m in blind) / len(blind) > 0.05


def test_a_move_the_game_confirms_is_a_look_at_the_rate_over_its_whole_gesture():
    profile = with_profile("medium-10sps", drift_counts_per_s=0.0, drift_walk_counts=0.0, glitch_rate=0.0)
    sc = TableScript(MODEL, profile, seed=6, pawns=[("E2", "L"), ("W3", "L")], hands=HandStyle(long_press_share=0.0))
    for c in sc.sensors.cells:
        c.drift = -8.0
    true_rate = sum(c.drift / c.k for c in sc.sensors.cells)
    for src, dst in (("E2", "E4"), ("W3", "W5"), ("E4", "E6")):
        sc.wait(5)
        sc.move(src, dst, "L")
    sc.wait(5)
    f = ArmFollower(MODEL, sc.calibration(), pawns=[("E2", "L"), ("W3", "L")])
    looks = []
    for row in sc.rows:
        for e in f.feed(*row):
            assert e.event == "move"
            spells = len(f.drift.looks)
            f.confirm_move({"kind": "advance", "from_holder": e.change.best.from_holder,
                            "to_holder": e.change.best.to_holder, "size": "L"}, e.change)
            assert len(f.drift.looks) == spells + 1
            looks.append(f.drift.looks[-1])
            m = e.change.measurement
            shift, var_shift, span, wander = m.drift
            assert 2.0 < span < 9.0          # from before the hand came to after it left
            assert looks[-1] == pytest.approx(((m.dw + shift) / span, (m.var_dw - var_shift) / span ** 2))
    assert len(looks) == 3
    assert all(abs(s - true_rate) < 3 * math.sqrt(v) for s, v in looks)
    # (a few looks in, the prior of no drift still holds it back, as much as its variance says)
    assert abs(f.drift.rate - true_rate) < 3 * math.sqrt(f.drift.var)


def test_the_zero_s_wander_is_what_makes_the_moves_misses_as_large_as_their_sigma_says():
    rng = random.Random(7)
    honest, wandering = ZeroDrift(), ZeroDrift()
    q = 4e-5          # g²/s: 4 counts/√s on each of four cells
    for _ in range(ZeroDrift.KEEP_MISSES):
        span = rng.uniform(2.5, 6.0)
        honest.miss(rng.gauss(0.0, 0.02), 0.02 ** 2, span)
        wandering.miss(rng.gauss(0.0, math.sqrt(0.02 ** 2 + q * span)), 0.02 ** 2, span)
    assert honest.wander < 1e-5
    assert wandering.wander == pytest.approx(q, rel=0.6)
    # over 5 s the wander adds its share to the drift's variance, whatever the rate
    _, var, wander = wandering.between(10.0, 15.0)
    assert wander == pytest.approx(5 * wandering.wander) and var == pytest.approx(25 * wandering.var + wander)
    # a miss spoiled by a move confirmed wrongly counts as no more than 4σ
    spoiled = ZeroDrift(misses=honest.misses[:-1] + [(5.0, 0.02 ** 2, 4.0)])
    assert spoiled.wander < 2e-4
