"""The simulated load cells settle as the profile says, whatever the number of taps."""

import itertools

import pytest

from companion.clock import FakeClock
from companion.games.balance_model import load_model
from companion.hardware.simulated import SimulatedTable
from companion.sensing.simtrace import SensorSim, with_profile


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
