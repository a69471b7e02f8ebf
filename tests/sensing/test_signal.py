"""Signal processing with plain data: the swing fit, glitch and spike filtering, noise, tilt debounce."""

import math
import random

import pytest

from companion.sensing.filters import NoiseEstimate, SpikeFilter, TiltDebouncer, is_glitch, shared_runs
from companion.sensing.swing import fit_swing, refine_swing

W = 2 * math.pi


def swing(rest, amp, t0=0.0, seconds=1.0, rate=100, omega=W, zeta=0.08, noise=0.0, seed=1, phase=0.3):
    rng = random.Random(seed)
    wd = omega * math.sqrt(1 - zeta * zeta)
    ts = [t0 + i / rate for i in range(int(seconds * rate))]
    ss = [rest + amp * math.exp(-zeta * omega * (t - t0)) * math.cos(wd * (t - t0) + phase) + rng.gauss(0, noise)
          for t in ts]
    return ts, ss


def test_the_rest_value_comes_out_of_part_of_one_swing():
    ts, ss = swing(0.0731, 0.05, seconds=0.6)
    fit = fit_swing(ts, ss, W, 0.08)
    assert fit.rest == pytest.approx(0.0731, abs=1e-9)
    assert fit.amplitude == pytest.approx(0.05, rel=1e-6)


def test_its_uncertainty_is_honest_under_noise():
    zs = []
    for seed in range(40):
        ts, ss = swing(0.05, 0.04, seconds=0.8, noise=0.002, seed=seed)
        fit = fit_swing(ts, ss, W, 0.08, noise=0.002)
        zs.append((fit.rest - 0.05) / fit.rest_sigma)
    rms = math.sqrt(sum(z * z for z in zs) / len(zs))
    assert 0.6 < rms < 1.5


def test_too_few_samples_give_no_fit_and_refining_finds_the_frequency():
    assert fit_swing([0.0, 0.01, 0.02], [0.0, 0.1, 0.2], W, 0.08) is None
    ts, ss = swing(-0.02, 0.06, seconds=3.0, omega=W * 1.12, noise=0.001)
    plain = fit_swing(ts, ss, W, 0.08, noise=0.001)
    better = refine_swing(ts, ss, W, 0.08, noise=0.001)
    assert better.omega == pytest.approx(W * 1.12, rel=0.01)
    assert abs(better.rest + 0.02) < abs(plain.rest + 0.02) or abs(better.rest + 0.02) < 2e-4


@pytest.mark.parametrize("value,bad", [(0, True), (-1, True), (0x7FFFFF, True), (-0x800000, True),
                                       (0x7FFFF0, True), (12345, False), (-54321, False)])
def test_hx711_glitch_values(value, bad):
    assert is_glitch(value) is bad


def test_a_single_spike_is_dropped_and_a_step_is_kept():
    f = SpikeFilter()
    out = []
    for i, v in enumerate([100, 101, 99, 5000, 100, 102, 2000, 2001, 1999, 2002]):
        out += [value for _, value in f.push(i * 0.1, v, threshold=50)]
    assert 5000 not in out and f.dropped == 1
    assert out[-4:] == [2000, 2001, 1999, 2002]     # a sample that did not jump is not held


def test_two_spikes_in_a_row_are_dropped_and_a_steep_slope_is_kept():
    """Two bit errors in a row, then a hand pressing fast: samples rising by more than the threshold each."""
    f = SpikeFilter()
    out = []
    samples = [100, 101, 99, 100, 90000, 200000, 101, 100] + [100 + 80 * k for k in range(1, 9)] + [740, 741, 739]
    for i, v in enumerate(samples):
        out += [(t, value) for t, value in f.push(i * 0.1, v, threshold=50)]
    values = [v for _, v in out]
    assert 90000 not in values and 200000 not in values and f.dropped == 2
    assert values[-11:-2] == [100 + 80 * k for k in range(1, 9)] + [740]     # the slope, every sample of it
    assert [t for t, _ in out] == sorted(t for t, _ in out)


def _cells_reading(load, shares, phases, *, period=0.1, span=(0.0, 2.0), seed=1):
    """Each cell's (t, g) readings of `load(t)` at 10 SPS, at its own phase, with a little noise."""
    rng = random.Random(seed)
    out = []
    for share, phase in zip(shares, phases):
        n = int((span[1] - span[0]) / period)
        out.append([(span[0] + phase + k * period, share * load(span[0] + phase + k * period) + rng.gauss(0, 0.02))
                    for k in range(n)])
    return out


def _press(t):
    """A firm, short press (60 g for 0.5 s) as 10 SPS cells read it: a bump a few samples wide."""
    u = (t - 0.8) / 0.7
    return 120.0 + (60.0 * math.sin(math.pi * u) ** 2 if 0.0 <= u <= 1.0 else 0.0)


def test_the_top_of_a_firm_press_at_10_sps_looks_like_a_spike_to_one_cell_and_is_kept_for_a_second_look():
    cell = _cells_reading(_press, [0.25], [0.0])[0]
    f = SpikeFilter()
    kept = []
    for t, g in cell:
        kept += f.push(t, g * 2150.0, threshold=8 * 60.0)
    assert f.dropped == 2 and len(f.spikes) == 2         # the press's top two samples stood off their shoulders
    assert sorted(list(f.spikes) + kept + f.pending) == [(t, g * 2150.0) for t, g in cell]


def test_a_dropped_run_the_other_cells_show_goes_back_and_a_glitch_does_not():
    cells = _cells_reading(_press, [0.27, 0.23, 0.26, 0.24], [0.0, 0.03, 0.055, 0.08])
    own = cells[0]
    top = sorted(own, key=lambda e: -e[1])[:2]
    trace = [e for e in own if e not in top]
    assert shared_runs(trace, sorted(top), cells[1:]) == sorted(top)
    # a bit error on the same cell, at the same place, the others flat there: stays out
    flat = _cells_reading(lambda t: 120.0, [0.27, 0.23, 0.26, 0.24], [0.0, 0.03, 0.055, 0.08])
    glitch = [(t, g + 1.9) for t, g in sorted(flat[0], key=lambda e: abs(e[0] - 1.1))[:1]]
    rest = [e for e in flat[0] if e[0] != glitch[0][0]]
    assert shared_runs(rest, glitch, flat[1:]) == []
    # ... and one riding on the press, far above what the others show: stays out too
    high = [(t, g + 8.0) for t, g in sorted(top)]
    assert shared_runs(trace, high, cells[1:]) == []
    # no other cell, or no reading of its own on one side: nothing to judge by
    assert shared_runs(trace, sorted(top), []) == []
    assert shared_runs([e for e in trace if e[0] < top[0][0]], sorted(top), cells[1:]) == []


@pytest.mark.parametrize("order", [1, 2])
def test_the_noise_estimate_finds_sigma(order):
    rng = random.Random(3)
    ne = NoiseEstimate(50.0, order=order, weight=0.005)
    for _ in range(6000):
        ne.update(1000 + rng.gauss(0, 20))
    assert ne.sigma == pytest.approx(20, rel=0.15)


def test_second_differences_are_not_fooled_by_a_swing():
    rng = random.Random(4)
    first, second = NoiseEstimate(0.002, weight=0.005), NoiseEstimate(0.002, order=2, weight=0.005)
    for k in range(6000):
        v = 0.06 * math.sin(W * k / 100) + rng.gauss(0, 0.002)
        first.update(v)
        second.update(v)
    assert second.sigma == pytest.approx(0.002, rel=0.2)
    assert first.sigma > 1.25 * second.sigma


def test_tilt_bounce_is_ignored_and_a_steady_contact_is_believed():
    d = TiltDebouncer(0.03)
    assert d.feed(0.0, False) is False
    for i, v in enumerate([1, 0, 1, 0, 1]):
        d.feed(1.0 + i * 0.004, bool(v))
    assert d.at(1.02) is False
    assert d.at(1.05) is True
    assert d.changed_at == pytest.approx(1.016)
    assert d.steady_for(1.5) == pytest.approx(0.484)


def test_tilt_rows_may_be_only_the_changes():
    d = TiltDebouncer(0.03)
    d.feed(0.0, False)
    d.feed(5.0, True)
    assert d.at(5.01) is False and d.at(6.0) is True and d.steady_for(6.0) == pytest.approx(1.0)
