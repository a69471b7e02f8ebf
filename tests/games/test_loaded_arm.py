"""A loaded arm is less stiff when its pawns sit above the pivot (κ_eff = κ − Σ m·h): it tips at a smaller torque,
and the warnings before a move judge the arm as that move leaves it loaded."""

from dataclasses import replace

import pytest

from companion.games import balance_duels as bd
from companion.games import balance_physics as bp
from companion.games.balance_duels import Pawn
from companion.games.balance_model import ModelError, make_physics
from companion.sensing.calibration import ArmCalibration, CellCalibration, calibrated_model

PLACED = [(1, "L", "E3"), (1, "L", "E3"), (1, "L", "E4"), (1, "L", "E4"), (1, "L", "E5"), (2, "L", "W4"),
          (2, "L", "W5"), (2, "L", "W5"), (2, "L", "W6"), (2, "L", "W6"), (2, "L", "W7")]


def loaded(height_mm: float):
    model = bd.load_model("A")
    return replace(model, physics=replace(model.physics, pawn_height_mm=height_mm))


def position(model):
    state = bd.new_game(model, 2)
    pawns = list(state.pawns)
    for seat, size, holder in PLACED:
        i = next(i for i, p in enumerate(pawns) if p.seat == seat and p.size == size and p.holder is None)
        pawns[i] = Pawn(seat, size, holder)
    return replace(state, pawns=tuple(pawns), opening=frozenset(), to_move=1)


def test_the_tipping_torque_falls_as_the_arm_fills():
    model = loaded(25.0)
    state = position(model)
    empty = model.tip_torque
    assert bp.tip_torque(model, []) == pytest.approx(empty)
    # 110 g of pawns 25 mm above the pivot take 2750 g·mm off κ = 17000
    assert bp.tip_torque(model, state.on_arm()) == pytest.approx(empty * (17000 - 25 * 110) / 17000)
    assert bp.tip_torque(loaded(0.0), state.on_arm()) == pytest.approx(empty)


def test_the_warning_judges_the_arm_as_the_move_leaves_it_loaded():
    flat, high = loaded(0.0), loaded(25.0)
    state = position(flat)
    move = next(m for m in bd.legal_moves(flat, state, 2) if m.from_holder == "E3" and m.to_holder == "E5")
    before, after = bd.assess(flat, state, move), bd.assess(high, state, move)
    assert before.torque_after == after.torque_after == -2660.0
    # the same torque: clear of the empty arm's τ_tip, past the loaded arm's
    assert before.verdict == "safe" and before.margin == pytest.approx(292.0, abs=0.1)
    assert after.verdict == "tips" and after.margin == pytest.approx(-185.5, abs=0.1)
    assert bd.indicator(high, replace(state, roll=2)) == "amber"
    view = bd.view(high, replace(state, roll=2))
    assert view["tip_torque"] == pytest.approx(bp.tip_torque(high, state.on_arm()), abs=0.1)


def test_a_beat_is_judged_with_the_beaten_pawn_gone():
    high = loaded(25.0)
    state = position(high)
    beat = next(m for m in bd.legal_moves(high, state, 6) if m.beats == "W4")
    after = bd.assess(high, state, beat)
    # ten pawns stay on the arm, not eleven: 250 g·mm of κ more than before the beat
    assert after.margin == pytest.approx(high.physics.tip_torque_at(100.0) - 2850.0, abs=0.1)


def test_the_engine_judges_a_tip_with_the_loaded_arm():
    high = loaded(25.0)
    state = replace(position(high), options=replace(position(high).options, tip_judge="model"), roll=2)
    move = next(m for m in bd.legal_moves(high, state, 2) if m.from_holder == "E3" and m.to_holder == "E5")
    assert bd.apply(high, state, move).tipped_by == 1
    flat = loaded(0.0)
    assert bd.apply(flat, replace(state, roll=2), move).tipped_by is None


def test_the_calibrated_height_reaches_the_game_model():
    cal = ArmCalibration(cells=(CellCalibration("load0", 0.0, 2000.0),), pawn_height_mm=18.0)
    model = calibrated_model(bd.load_model("A"), cal)
    assert model.physics.pawn_height_mm == 18.0
    assert model.physics.tip_torque_at(100.0) == pytest.approx(cal.tip_torque_at(100.0))


def test_a_height_beyond_reason_is_refused():
    with pytest.raises(ModelError, match="pawn_height_mm must be within"):
        make_physics(pawn_height_mm=500.0)
