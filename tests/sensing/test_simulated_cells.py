"""The simulated load cells settle as the profile says, whatever the number of taps."""

import itertools
import random
from dataclasses import replace

import pytest

from companion.foundation.clock import FakeClock
from companion.games.balance_model import load_model
from companion.simulation.table import SimulatedTable
from companion.simulation.traces import HandStyle, SensorSim, TableScript, with_profile


@pytest.mark.parametrize("taps", [(1.0,), (0.6, 0.4), (0.5, 0.3, 0.2), (0.4, 0.3, 0.2, 0.1),
                                  (0.3, 0.25, 0.2, 0.15, 0.1), (0.2, 0.2, 0.2, 0.15, 0.15, 0.1)])
def test_a_step_in_weight_is_read_over_the_settling_taps(taps):
    model = load_model("A")
    clock = FakeClock(100.0)
    table = SimulatedTable(model, clock)
    profile = with_profile("quiet-10sps", settle_fir=taps, noise_counts=0.0, glitch_rate=0.0, drift_counts_per_s=0.0,
                           drift_walk_counts=0.0, jitter=0.0, tremor=0.0, cells=1)
    sim = SensorSim(table, clock, profile, seed=3)
    before = [v for _, name, v in sim.run(1.0) if name == "load0"]
    holder = model.holders[0].id
    table.set_pawns([(holder, "L")], hand_s=0)
    after = [v for _, name, v in sim.run(1.0) if name == "load0"]
    step = after[-1] - before[-1]
    assert abs(step) > 1000     # a large pawn is tens of thousands of counts
    reached = [(v - before[-1]) / step for v in after[:len(taps)]]
    expected = list(itertools.accumulate(taps))
    assert reached == pytest.approx(expected, abs=2e-3)
    assert all(v == after[-1] for v in after[len(taps):])


def test_each_table_s_hands_land_within_their_own_drawn_spread_of_the_holder():
    model = load_model("A")
    drawn = [HandStyle.drawn(random.Random(k)) for k in range(40)]
    spreads = [h.x_jitter_mm for h in drawn]
    assert all(3.0 <= s <= 12.0 for s in spreads) and max(spreads) - min(spreads) > 6.0
    # everything else is the players' hands as the benchmarks have always drawn them
    assert all(replace(h, x_jitter_mm=0.0) == replace(HandStyle.players(), x_jitter_mm=0.0) for h in drawn)
    for hands in (min(drawn, key=lambda h: h.x_jitter_mm), max(drawn, key=lambda h: h.x_jitter_mm)):
        script = TableScript(model, "quiet-10sps", seed=5, hands=hands)
        misses = []
        for holder in ("E3", "W5", "E6", "W1") * 5:
            action = script.place(holder, "L")
            misses.append(action.touch_x[0] - model.by_id[holder].x_mm)
            script.wait(3.0)
        assert max(abs(m) for m in misses) <= hands.x_jitter_mm
        assert max(abs(m) for m in misses) > 0.5 * hands.x_jitter_mm
