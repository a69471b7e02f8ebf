"""Properties over random legal Balance Duels games (Hypothesis)."""

from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from companion.foundation.clock import FakeClock
from companion.games import balance_duels as bd
from companion.games import balance_physics as bp
from companion.simulation.table import SimulatedTable

pytestmark = pytest.mark.slow   # a long file: handed out to a worker first (tests/conftest.py)

MODEL = bd.load_model("A")
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def games(draw):
    players = draw(st.sampled_from([2, 2, 3, 4, 4]))
    options = {}
    if players == 2:
        options["pawns"] = draw(st.sampled_from([4, 5, 6]))
    if players == 4:
        options["teams"] = draw(st.booleans())
    options["optional_beat"] = draw(st.booleans())
    return players, options


def play(data, players, options, max_turns=120):
    """Yield (state, move, next_state) along a random legal game."""
    state = bd.new_game(MODEL, players, **options)
    for _ in range(max_turns):
        if state.over:
            return
        roll = data.draw(st.integers(1, 6), label="roll")
        moves = bd.legal_moves(MODEL, state, roll)
        assert moves, "a roll always leaves some legal turn (pass or I can't play)"
        move = data.draw(st.sampled_from(moves), label="move")
        after = bd.apply(MODEL, state, move)
        yield state, move, after
        state = after


@SETTINGS
@given(st.data(), games())
def test_pawns_are_conserved_and_holders_never_overfill(data, game):
    players, options = game
    start = bd.new_game(MODEL, players, **options)
    for before, move, after in play(data, players, options):
        # a pawn never appears or vanishes; only a tipper's pawns leave a 3-4 player game
        # the last tip of a 3-4 player game ends it with the tipper's pawns still on the arm
        gone = after.out[:-1] if after.result == "tip" else after.out
        kept = Counter((p.seat, p.size) for p in start.pawns if p.seat not in gone)
        assert Counter((p.seat, p.size) for p in after.pawns) == kept
        occupancy = Counter(p.holder for p in after.pawns if p.holder is not None)
        for holder, n in occupancy.items():
            assert n <= MODEL.by_id[holder].capacity


@SETTINGS
@given(st.data(), games())
def test_net_torque_is_the_sum_over_holders_and_assess_predicts_apply(data, game):
    players, options = game
    for before, move, after in play(data, players, options):
        assert bd.net_torque(MODEL, after) == pytest.approx(sum(bd.torque_per_holder(MODEL, after).values()))
        a = bd.assess(MODEL, before, move)
        if after.round == before.round:  # a 3-4 player tip clears the arm; otherwise the arm is as predicted
            assert a.torque_after == pytest.approx(bd.net_torque(MODEL, after))
        assert (a.verdict == "tips") == (after.tipped_by is not None)


@SETTINGS
@given(st.data(), games())
def test_the_state_passed_in_is_never_changed(data, game):
    players, options = game
    for before, move, after in play(data, players, options, max_turns=40):
        snapshot = repr(before)
        bd.apply(MODEL, before, move)
        assert repr(before) == snapshot


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_verdicts_agree_with_the_simulated_arm(data):
    """A move judged 'tips' puts the simulated arm on the board; a 'safe' one leaves it free."""
    for before, move, after in play(data, 2, {}, max_turns=60):
        if move.kind not in ("place", "advance"):
            continue
        a = bd.assess(MODEL, before, move)
        if a.verdict == "risky":
            continue
        moved = bd._moved(MODEL, before, move)
        table = SimulatedTable(MODEL, FakeClock())
        table.set_pawns([(p.holder, p.size) for p in moved if p.holder is not None], hand_s=0)
        table.settle()
        assert table.snapshot()["on_board"] == (a.verdict == "tips")


@SETTINGS
@given(st.lists(st.floats(0, 4000), min_size=2, max_size=8), st.floats(1, 400))
def test_tip_probability_is_monotonic_in_the_margin(torques, sigma):
    ordered = sorted(torques)
    probs = [bp.tip_probability(MODEL, t, sigma) for t in ordered]
    assert all(p1 <= p2 + 1e-12 for p1, p2 in zip(probs, probs[1:]))


@SETTINGS
@given(st.data(), games())
def test_the_page_offers_the_tip_report_exactly_when_the_rules_take_it(data, game):
    """"The arm tipped" is a button only when pressing it can succeed (a button that can only fail is not offered)."""
    players, options = game
    options = {**options, "tip_judge": "table"}
    states = [bd.new_game(MODEL, players, **options)]
    for _, _, after in play(data, players, options, max_turns=40):
        states.append(after)
        if not after.over:
            states.append(bd.act(MODEL, after, {"type": "roll", "value": data.draw(st.integers(1, 6), label="die")}))
    for s in states:
        try:
            bd.report_tip(MODEL, s)
            taken = True
        except bd.RuleError:
            taken = False
        assert bd.view(MODEL, s)["tip_can_be_reported"] == taken
