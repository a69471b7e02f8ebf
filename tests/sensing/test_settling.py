"""The load cells' settling: the angle read through taps, and the shape learned from confirmed moves."""

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.sensing.settling import FAMILY, NOMINAL, Settling, apart, as_read, delay, reach, sharpened
from companion.sensing.touches import HandSpread, Touch


def test_the_family_is_normalised_and_starts_with_the_nominal_shape():
    assert FAMILY[0] == NOMINAL
    assert len(set(FAMILY)) == len(FAMILY)
    for taps in FAMILY:
        assert sum(taps) == pytest.approx(1.0) and all(w >= 0 for w in taps)
    assert delay((0.0, 1.0)) == 1.0 and delay(NOMINAL) == pytest.approx(1.0)
    # a stretch is read once no more than a fifth of the taps' weight reaches back before it
    assert reach(NOMINAL, 0.1) == pytest.approx(0.2)
    assert reach((1.0,), 0.1) == 0.0 and reach((0.0, 0.0, 1.0), 0.1) == pytest.approx(0.2)


def test_a_steady_value_reads_as_itself_and_a_ramp_reads_late_by_the_taps_delay():
    dt = 0.1
    samples = [(k * 0.01, 0.25) for k in range(300)]
    assert all(v == pytest.approx(0.25) for _, v in as_read(samples, NOMINAL, dt))
    ramp = [(k * 0.01, 2.0 * k * 0.01) for k in range(300)]
    for taps in FAMILY:
        read = as_read(ramp, taps, dt)
        for (t, v), (_, raw) in list(zip(read, ramp))[100:]:
            assert v == pytest.approx(raw - 2.0 * delay(taps) * dt, abs=1e-9)


def test_a_step_is_read_over_the_taps():
    taps = (0.5, 0.3, 0.2)
    samples = [(k * 0.1, 0.0 if k < 10 else 1.0) for k in range(20)]
    read = [v for _, v in as_read(samples, taps, 0.1)]
    assert read[9:14] == pytest.approx([0.0, 0.5, 0.8, 1.0, 1.0])


def _touch(x, sigma):
    return Touch(0.0, 1.0, x, sigma, 10.0)


def _learn_one(st, rng, x_true, truth, bias_per_sample=30.0):
    """Each shape places the touch off by how far its delay is from the truth's, plus the hands' own scatter."""
    located = []
    hand = rng.gauss(0.0, 7.0)
    for taps in FAMILY:
        off = (delay(taps) - delay(truth)) * bias_per_sample
        located.append([_touch(0.9 * (x_true + hand) + off * (1 if x_true > 0 else -1) + rng.gauss(0, 2.0), 3.0)])
    return st.learn([x_true], located)


def test_the_nominal_shape_is_kept_until_another_places_the_touches_clearly_better():
    truth = FAMILY[12]
    rng = random.Random(4)
    st = Settling()
    assert st.taps == NOMINAL
    for i in range(Settling.MIN_ROWS - 1):
        assert not _learn_one(st, rng, rng.choice([-90.0, -50.0, 40.0, 80.0]), truth)
        assert st.taps == NOMINAL
    for _ in range(Settling.KEEP):
        _learn_one(st, rng, rng.choice([-90.0, -50.0, 40.0, 80.0]), truth)
    assert abs(delay(st.taps) - delay(truth)) < 0.15
    assert len(st.rows) == Settling.KEEP
    assert all(len(per) == len(FAMILY) for _, per in st.rows)


def test_the_nominal_shape_stays_when_it_is_right():
    rng = random.Random(5)
    st = Settling()
    for _ in range(40):
        _learn_one(st, rng, rng.choice([-90.0, -50.0, 40.0, 80.0]), NOMINAL)
    assert abs(delay(st.taps) - delay(NOMINAL)) < 0.15


def test_a_shape_that_cannot_place_a_touch_counts_it_as_a_miss():
    rng = random.Random(6)
    st = Settling()
    for _ in range(20):
        x = rng.choice([-90.0, 80.0])
        located = [[_touch(x + rng.gauss(0, 4.0), 3.0)] for _ in FAMILY]
        located[5] = [_touch(None, math.inf)]           # never placed: never chosen, however tidy the others
        located[7] = [_touch(x, 3.0), _touch(x, 3.0)]   # a miscount: no evidence for it
        st.learn([x], located)
    sc = st.scores()
    assert sc[5] < max(sc) - 10 and sc[7] < max(sc) - 10


def test_a_move_no_shape_could_place_teaches_nothing():
    st = Settling()
    assert not st.learn([50.0], [[_touch(None, math.inf)] for _ in FAMILY])
    assert st.rows == []
    assert not st.learn([50.0], [[] for _ in range(3)])     # not one list per shape


def test_the_angles_fits_choose_a_shape_before_the_touches_can():
    """Moves whose touches no shape could place (the arm pinned) still teach the settling by how well each
    shape's reading of the angle fitted; three such moves are enough, one alone is not, and one fitted astray
    counts no more than a miss."""
    truth = 11
    st = Settling()
    nowhere = [[_touch(None, math.inf)] for _ in FAMILY]

    def fits(rss_of):
        return [(rss_of(k), 100) for k in range(len(FAMILY))]
    # the residual grows with how far a shape's lateness is from the cells'
    like_the_cells = fits(lambda k: 1e-6 * (1.0 + 8.0 * (delay(FAMILY[k]) - delay(FAMILY[truth])) ** 2
                                            + 0.01 * (k != truth)))
    assert st.learn([50.0], nowhere, like_the_cells) is False
    assert st.taps == NOMINAL and st.rows == []
    st.learn([-60.0], nowhere, like_the_cells)
    assert st.learn([30.0], nowhere, like_the_cells)
    assert st.taps == FAMILY[truth]
    assert len(st.fits) == Settling.MIN_FITS and all(max(f) == 0.0 for f in st.fits)
    astray = fits(lambda k: 1e-6 if k == 1 else 1.0)
    st.learn([30.0], nowhere, astray)
    assert min(st.fits[-1]) == -0.5 * Settling.MISS_Z2
    assert st.taps == FAMILY[truth]
    # a move some shape could not fit at all says nothing of the fits
    st.learn([30.0], nowhere, like_the_cells[:-1] + [None])
    assert len(st.fits) == Settling.MIN_FITS + 1


def _late_settling_table(seed: int, places: int = 8, moves: bool = True):
    from companion.games.balance_model import load_model
    from companion.sensing.follower import ArmFollower
    from companion.simulation.traces import ArmStyle, HandStyle, TableScript, with_profile
    import bisect

    truth = (0.05, 0.35, 0.4, 0.2)
    model = load_model("A")
    script = TableScript(model, with_profile("quiet-10sps", settle_fir=truth), seed=seed, hands=HandStyle.players(),
                         arm=ArmStyle(frequency_hz=1.3, damping=0.12))
    rng = random.Random(seed)
    script.wait(3.0)
    order = ["E3", "W4", "E6", "W2", "E1", "W6", "E5", "W3"]
    for h in order[:places]:
        script.place(h, "M")
        script.wait(rng.uniform(3.5, 5.0))
    moves = [("E3", "E4"), ("W4", "W5"), ("E1", "E2"), ("W2", "W1"), ("E4", "E3"), ("W5", "W4"), ("E2", "E1"),
             ("W1", "W2"), ("E3", "E4"), ("W4", "W5"), ("E1", "E2"), ("W2", "W1")] if moves else []
    for a, b in moves:
        script.move(a, b, "M")
        script.wait(rng.uniform(3.5, 5.0))
    follower = ArmFollower(model, script.calibration())
    starts = [a.start for a in script.actions]
    done = set()
    for t, sensor, value in script.rows:
        for ev in follower.feed(t, sensor, value):
            if ev.change is None:
                continue
            i = bisect.bisect_right(starts, ev.change.hands_off_t) - 1
            if i < 0 or i in done:
                continue
            done.add(i)
            a = script.actions[i]
            move = ({"kind": "place", "size": a.size, "to_holder": a.holder} if a.kind == "place" else
                    {"kind": "advance", "size": a.size, "from_holder": a.from_holder, "to_holder": a.to_holder})
            follower.confirm_move(move, ev.change)
    assert len(done) == len(script.actions)
    return truth, moves, follower


def test_the_first_few_placements_already_show_the_cells_settling():
    """Four placements are too few touches to score the shapes by, but the angle's fits already pick one about
    as late as the cells."""
    truth, _, follower = _late_settling_table(21, places=4, moves=False)
    st = follower.settling
    assert len(st.rows) < Settling.MIN_ROWS <= 2 * len(st.fits)
    assert st.taps != NOMINAL
    assert abs(delay(st.taps) - delay(truth)) < 0.35


def test_a_follower_learns_a_slow_late_settling_from_the_moves_the_game_confirms():
    """A 10 SPS table whose cells bring a step mostly a sample or two late (no shape of the family): after a
    few confirmed moves the follower reads the angle through a shape about as late, and places the hands nearer
    the holders than the nominal shape would."""
    truth, moves, follower = _late_settling_table(21)
    st = follower.settling
    assert st.taps != NOMINAL
    assert abs(delay(st.taps) - delay(truth)) < 0.35
    sc = st.scores()
    assert sc[st.index] > sc[0] + Settling.MARGIN
    # the hands learned from every confirmed move's touches as the decisions used them (the force worked back
    # through the taps in use), and place them near the holders touched
    assert len(follower.hands.touches) >= len(moves)
    assert 0.8 <= follower.hands.gain <= 1.2 and follower.hands.sigma_mm < HandSpread.HIGH_MM
    assert 0.1 <= st.timing() < 0.6


def test_without_a_game_the_changes_no_other_account_explains_teach_the_settling(tmp_path, monkeypatch):
    """`companion analyze` has no game to confirm moves: its follower learns from the sure, unambiguous changes."""
    from companion.games.balance_model import load_model
    from companion.sensing import analysis
    from companion.sensing.calibration import render
    from companion.sensing.follower import ArmFollower
    from companion.simulation.traces import HandStyle, TableScript, config_toml, with_profile, write_trace

    model = load_model("A")
    script = TableScript(model, with_profile("quiet-10sps", settle_fir=(0.05, 0.35, 0.4, 0.2)), seed=22,
                         hands=HandStyle.players())
    for h in ["E3", "W4", "E6", "W2", "E1", "W6", "E5", "W3", "E7", "W7"]:
        script.place(h, "L")
        script.wait(4.0)
    write_trace(tmp_path / "trace.csv", script.rows)
    cal = script.calibration()
    (tmp_path / "config.toml").write_text(config_toml(model, cal), encoding="utf-8")
    (tmp_path / "calibration.toml").write_text(render(cal, model_name=model.name, exact=True), encoding="utf-8")
    learned, followers = [], []
    real_learn, real_init = ArmFollower.learn_from, ArmFollower.__init__

    def spy(self, change):
        learned.append(change)
        return real_learn(self, change)

    def init(self, *a, **kw):
        real_init(self, *a, **kw)
        followers.append(self)

    monkeypatch.setattr(ArmFollower, "learn_from", spy)
    monkeypatch.setattr(ArmFollower, "__init__", init)
    setup = analysis.load_setup(tmp_path / "config.toml", calibration=tmp_path / "calibration.toml")
    result = analysis.analyze(tmp_path / "trace.csv", setup)
    assert len([e for e in result.events if e.event == "place"]) == 10
    assert len(learned) >= 8 and all(not c.ambiguous and c.confidence >= analysis.LEARN_FROM for c in learned)
    assert len({id(c) for c in learned}) == len(learned)      # each change once, however many events it made
    (follower,) = followers
    assert len(follower.settling.rows) >= 8 and len(follower.hands.touches) >= 8


@pytest.mark.parametrize("taps", [NOMINAL, (0.0, 1.0), (0.25, 0.5, 0.25), (0.2,) * 5, (0.0, 0.0, 0.5, 0.5)])
def test_the_force_a_cell_was_given_is_worked_back_from_its_readings(taps):
    """Two presses with a pause between, read at 10 SPS through `taps` with noise: worked back, the pause is at the
    weight without the lifted pawn again, within a few grams, whatever the shape (a hump hides values alternating
    from sample to sample, which the smoothing leaves flat)."""
    rng = random.Random(3)
    given = ([40.0] * 5 + [40.0 + 80.0 * math.sin(math.pi * k / 8) for k in range(8)] + [30.0] * 3
             + [40.0 + 60.0 * math.sin(math.pi * k / 7) for k in range(7)] + [40.0] * 10)
    read = [(k * 0.1, sum(w * given[max(0, k - m)] for m, w in enumerate(taps)) + rng.gauss(0.0, 0.05))
            for k in range(len(given))]
    back = sharpened(read, taps)
    assert [t for t, _ in back] == [t for t, _ in read]
    assert all(abs(v - f) < 4.0 for (_, v), f in list(zip(back, given))[:-4])
    assert all(abs(v - 30.0) < 3.5 for _, v in back[13:16])
    assert sharpened([], taps) == [] and sharpened([(0.0, 5.0)], (1.0,)) == [(0.0, 5.0)]


@pytest.mark.parametrize("taps", [NOMINAL, (0.25, 0.5, 0.25), (0.2,) * 5])
@pytest.mark.parametrize("lost", [7, 9, 14])
def test_a_reading_lost_to_a_glitch_does_not_slide_the_working_back(taps, lost):
    """A glitch word is dropped, and the cell's readings then have a hole: worked back as if they came one after
    the other, every force after it was read against the wrong readings before it (foreign quiet 29501 turn 11,
    one cell's word lost at the top of a lift). The hole given a force of its own and no reading, the force is
    worked back nearly as well as with the reading there, at the times read."""
    rng = random.Random(5)
    given = ([40.0] * 5 + [40.0 + 80.0 * math.sin(math.pi * k / 8) for k in range(8)] + [30.0] * 3
             + [40.0 + 60.0 * math.sin(math.pi * k / 7) for k in range(7)] + [40.0] * 10)
    read = [(k * 0.1, sum(w * given[max(0, k - m)] for m, w in enumerate(taps)) + rng.gauss(0.0, 0.05))
            for k in range(len(given))]
    holed = read[:lost] + read[lost + 1:]
    whole, back = dict(sharpened(read, taps)), sharpened(holed, taps)
    assert [t for t, _ in back] == [t for t, _ in holed]
    off = [abs(v - f) for (t, v), f in zip(back, given[:lost] + given[lost + 1:])][:-4]
    assert max(off) < 6.0
    assert all(abs(v - whole[t]) < 4.0 for t, v in back[:-4])


def test_shapes_nearly_as_likely_are_offered_as_other_ways_the_touches_fell():
    st = Settling()
    # before anything is learned every shape is as likely: the two most unlike the nominal one in timing that
    # a 10 SPS cell could tell apart
    ten = st.alternatives(0.1)
    assert len(ten) == Settling.ALTERNATIVES and all(lw == 0.0 for lw, _ in ten)
    assert all(taps != st.taps for _, taps in ten)
    # at 80 SPS only shapes that bring a step in more than ALTERNATIVE_S apart from it count: not one a few
    # hundredths of each tap away
    eighty = st.alternatives(0.0125)
    assert eighty and all(apart(taps, st.taps) * 0.0125 > Settling.ALTERNATIVE_S for _, taps in eighty)
    close = FAMILY[12]
    assert apart(close, st.taps) * 0.0125 < Settling.ALTERNATIVE_S < apart(close, st.taps) * 0.1
    assert close not in [taps for _, taps in eighty]
    # once one shape is clearly the table's, there are none
    nowhere = [[_touch(None, math.inf)] for _ in FAMILY]
    for _ in range(6):
        st.learn([50.0], nowhere, [(1e-6 if k == 11 else 1e-5, 100) for k in range(len(FAMILY))])
    assert st.taps == FAMILY[11] and st.alternatives(0.1) == []


def test_a_neighbouring_shape_well_behind_is_still_a_way_the_touches_fell_at_its_tempered_weight():
    # the scores count every move as independent evidence; the cells' own settling may lie between two
    # neighbouring shapes, so one 10 nats behind after five moves is still offered, weighed at its gap over
    # TEMPER; a shape as far behind that is no neighbour has lost for real
    near, far = FAMILY[17], FAMILY[11]
    assert apart(near, NOMINAL) <= Settling.NEIGHBOURS < apart(far, NOMINAL)
    st = Settling()
    nowhere = [[_touch(None, math.inf)] for _ in FAMILY]
    fits = [(1e-6 if taps == NOMINAL else math.e * 1e-6 if taps in (near, far) else 1e-5, 100) for taps in FAMILY]
    for _ in range(5):
        st.learn([50.0], nowhere, fits)
    sc = st.scores()
    assert st.taps == NOMINAL
    assert sc[FAMILY.index(NOMINAL)] - sc[FAMILY.index(near)] == pytest.approx(10.0, abs=0.05)
    assert sc[FAMILY.index(NOMINAL)] - sc[FAMILY.index(far)] == pytest.approx(10.0, abs=0.05)
    offered = st.alternatives(0.1)
    assert [taps for _, taps in offered] == [near]
    assert offered[0][0] == pytest.approx(-10.0 / Settling.TEMPER, abs=0.02)


def test_cells_sharing_a_gesture_share_the_sharpening_but_not_each_others_readings():
    taps = (0.4, 0.3, 0.2, 0.1)
    rng = random.Random(8)
    a = [(k * 0.1, 20.0 + rng.gauss(0.0, 3.0)) for k in range(30)]
    b = [(k * 0.1, -5.0 + rng.gauss(0.0, 3.0)) for k in range(30)]
    first = sharpened(a, taps)
    assert sharpened(b, list(taps)) != first        # the same shape as a list, another cell's readings
    assert sharpened(a, taps) == first
    # what each was given, read through the taps again, is what it read (but for the smoothing's little weight)
    for read, back in ((a, first), (b, sharpened(b, taps))):
        f = [v for _, v in back]
        again = [sum(w * (f[k - m] if k >= m else read[0][1]) for m, w in enumerate(taps)) for k in range(len(f))]
        assert all(abs(x - y) < 1.0 for x, (_, y) in zip(again, read))


def _factor_afresh(n, w, smooth, lost=()):
    # the banded Cholesky of sharpened's normal equations, built whole for this length as it first was (without
    # the readings `lost`)
    band = len(w)
    diag = [[0.0] * band for _ in range(n)]
    for k in range(n):
        if k in lost:
            continue
        cols = [(k - m, w[m]) for m in range(band) if k - m >= 0]
        for i, a in cols:
            for j, b in cols:
                if j >= i:
                    diag[i][j - i] += a * b
    for k in range(n):
        diag[k][0] += smooth * (2.0 if k + 1 < n else 1.0)
        if k + 1 < n:
            diag[k][1] -= smooth
    low = [[0.0] * band for _ in range(n)]
    for i in range(n):
        for d in range(min(band - 1, i), -1, -1):
            j = i - d
            s = diag[j][d]
            for e in range(1, band - d):
                if j - e < 0:
                    break
                s -= low[i][d + e] * low[j][e]
            low[i][d] = math.sqrt(max(s, 1e-12)) if d == 0 else s / low[j][0]
    return low


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.01, 1.0), min_size=2, max_size=6), st.lists(st.integers(1, 60), min_size=1, max_size=6))
def test_the_sharpening_factor_kept_across_lengths_is_the_factor_built_afresh_to_the_bit(weights, lengths):
    from companion.sensing.settling import _sharpening_factor
    w = tuple(x / sum(weights) for x in weights)
    for n in lengths:        # longer and shorter gestures in any order, one shape
        assert _sharpening_factor(n, w, 0.001) == _factor_afresh(n, w, 0.001)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.01, 1.0), min_size=2, max_size=6), st.integers(8, 120), st.data())
def test_lost_readings_taken_out_of_the_kept_factor_give_the_factor_built_without_them(weights, n, data):
    """The downdate `sharpened` does for each lost reading is the factor of the normal equations without that
    reading's row, as if built afresh (to rounding), and it leaves the rows every length shares untouched."""
    from companion.sensing.settling import _downdated, _sharpening_factor
    w = tuple(x / sum(weights) for x in weights)
    band = len(w)
    start = data.draw(st.integers(1, n - 2))
    lost = sorted(set(data.draw(st.lists(st.integers(start, min(n - 2, start + 3)), min_size=1, max_size=4))))
    low = [list(row) for row in _sharpening_factor(n, w, 0.001)]
    for h in lost:
        _downdated(low, [w[h - k] if 0 <= h - k < band else 0.0 for k in range(n)], max(0, h - band + 1))
    want = _factor_afresh(n, w, 0.001, set(lost))
    assert all(abs(x - y) <= 1e-9 * max(1.0, abs(y)) for a, b in zip(low, want) for x, y in zip(a, b))
    samples = [(k * 0.1, 40.0 + k % 7) for k in range(n + len(lost)) if k not in lost]
    sharpened(samples, w)
    assert _sharpening_factor(n + len(lost), w, 0.001) == _factor_afresh(n + len(lost), w, 0.001)


def test_followers_in_several_threads_share_the_sharpening_rows_without_mixing_them_up():
    import threading

    from companion.sensing.settling import _sharpening_factor
    w = (0.35, 0.3, 0.2, 0.1, 0.05)
    lengths = [400, 37, 250, 5, 399, 120] * 3
    wrong = []

    def work(k):
        for n in lengths[k:] + lengths[:k]:
            if _sharpening_factor(n, w, 0.002) != _factor_afresh(n, w, 0.002):
                wrong.append(n)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert wrong == []
