"""Balance Duels rules: the rulebook's situations first, then properties over random legal games."""

from dataclasses import replace
from pathlib import Path

import pytest

from companion.games import balance_duels as bd
from companion.games.balance_duels import Move, Pawn, RuleError

MODELS = Path(__file__).parent / "models"


@pytest.fixture(scope="module")
def model():
    return bd.load_model("A")


def pick(model, state, roll, **want):
    """The one legal move matching `want` (fails loudly if none or several)."""
    found = [m for m in bd.legal_moves(model, state, roll)
             if all(getattr(m, k) == v for k, v in want.items())]
    assert len(found) == 1, f"expected one move like {want} for roll {roll}, got {found}"
    return found[0]


def with_pawns(state, placed):
    """A state with pawns placed by hand: placed = [(seat, size, holder)], the rest on the table."""
    pawns = list(state.pawns)
    for seat, size, holder in placed:
        i = next(i for i, p in enumerate(pawns) if p.seat == seat and p.size == size and p.holder is None)
        pawns[i] = Pawn(seat, size, holder)
    return replace(state, pawns=tuple(pawns), opening=frozenset())


# ----------------------------------------------------------------------------- set-up and opening

def test_model_a_geometry_and_tip_torque(model):
    assert model.tip_torque == pytest.approx(17000 * 0.17364817766693033)
    seat1, seat2 = model.seats[1], model.seats[2]
    # start 7 and finish 1 are the holders next to the pivot
    assert abs(model.by_id[seat1.start[6]].x_mm) == min(abs(h.x_mm) for h in model.holders)
    assert abs(model.by_id[seat1.finish[0]].x_mm) == min(abs(h.x_mm) for h in model.holders)
    # one seat's finishing area is the other's starting area
    assert set(seat1.finish) == set(seat2.start) and set(seat2.finish) == set(seat1.start)
    assert all(model.by_id[h].x_mm > 0 for h in seat1.start)


def test_physics_from_config_values():
    m = bd.load_model("A", kappa_gmm=20000, theta_max_deg=8, pawn_mass_g={"L": 12.0})
    assert m.tip_torque == pytest.approx(20000 * 0.13917310096006544)
    assert m.physics.pawn_mass_g == {"L": 12.0, "M": 6.0}


def test_new_game_two_players(model):
    s = bd.new_game(model)
    assert [p.size for p in s.pawns].count("L") == 12 and all(p.holder is None for p in s.pawns)
    assert s.to_move == 1 and s.opening == {1, 2}
    s5 = bd.new_game(model, 2, pawns=5)
    assert len(s5.pawns) == 10


@pytest.mark.parametrize("players", [3, 4])
def test_new_game_three_four_players_have_two_l_two_m(model, players):
    s = bd.new_game(model, players)
    for seat in range(1, players + 1):
        assert sorted(p.size for p in s.pawns if p.seat == seat) == ["L", "L", "M", "M"]


@pytest.mark.parametrize("players,options,needle", [
    (1, {}, "2, 3 or 4 players"),
    (2, {"pawns": 7}, "4, 5 or 6"),
    (3, {"teams": True}, "4 players"),
    (2, {"colour": "red"}, "unknown"),
    (2, {"first": 3}, "'first'"),
    (2, {"tip_judge": "dice"}, "tip_judge"),
])
def test_bad_options_are_refused(model, players, options, needle):
    with pytest.raises(RuleError, match=needle):
        bd.new_game(model, players, **options)


def test_opening_is_a_placement_on_the_rolled_start_holder(model):
    s = bd.new_game(model)
    moves = bd.legal_moves(model, s, 4)
    assert moves == [Move("place", 1, 4, size="L", to_holder="E4")]
    s = bd.apply(model, s, moves[0])
    # then the opponent opens on its own right: seat 2's start 3 is W5
    assert bd.legal_moves(model, s, 3) == [Move("place", 2, 3, size="L", to_holder="W5")]
    with pytest.raises(RuleError, match="opening"):
        bd.apply(model, s, Move("pass", 2, 3))


def test_place_advance_pass_and_counting_every_holder(model):
    s = with_pawns(bd.new_game(model), [(1, "L", "E2"), (2, "L", "W7"), (2, "L", "W6")])
    moves = bd.legal_moves(model, s, 3)
    kinds = sorted(m.kind for m in moves)
    assert kinds == ["advance", "pass", "place"]
    adv = pick(model, s, 3, kind="advance")
    assert (adv.from_holder, adv.to_holder) == ("E2", "E5")
    # seat 2's pawns on W7 and W6: counting both (full or empty) holders alike
    s2 = replace(s, to_move=2)
    assert {(m.from_holder, m.to_holder) for m in bd.legal_moves(model, s2, 2) if m.kind == "advance"} == \
        {("W7", "W5"), ("W6", "W4")}


def test_from_start_7_into_the_finishing_area_and_never_beyond_finish_7(model):
    s = with_pawns(bd.new_game(model), [(1, "L", "E6"), (1, "L", "W5")])
    # E6 is start 6: a 3 goes start 7, finish 1, finish 2
    assert pick(model, s, 3, kind="advance", from_holder="E6").to_holder == "W2"
    # W5 is finish 5: a 2 reaches finish 7, a 3 would overshoot
    assert pick(model, s, 2, kind="advance", from_holder="W5").to_holder == "W7"
    assert not [m for m in bd.legal_moves(model, s, 3) if m.from_holder == "W5"]
    with pytest.raises(RuleError, match="finish holder 7"):
        bd.apply(model, s, Move("advance", 1, 3, size="L", from_holder="W5", to_holder="W7"))


def test_no_two_passes_in_a_row(model):
    s = with_pawns(bd.new_game(model), [(1, "L", "E2"), (2, "L", "W7")])
    s = bd.apply(model, s, Move("pass", 1, 5))
    s = bd.apply(model, s, pick(model, s, 1, kind="advance"))
    assert not [m for m in bd.legal_moves(model, s, 2) if m.kind == "pass"]
    with pytest.raises(RuleError, match="twice in a row"):
        bd.apply(model, s, Move("pass", 1, 2))
    # after a real move the player may pass again
    s = bd.apply(model, s, pick(model, s, 2, kind="advance"))
    s = bd.apply(model, s, pick(model, s, 1, kind="advance"))
    assert any(m.kind == "pass" for m in bd.legal_moves(model, s, 4))


def test_cant_play_only_when_no_move_and_it_counts_as_a_turn(model):
    # seat 1 has pawns on finish 6 and 7 and two on the table, its start 6 (E6) is full of seat 2's
    # attacking pawns: a 6 can neither place nor advance
    s = with_pawns(bd.new_game(model, 2, pawns=4), [(1, "L", "W6"), (1, "L", "W7"), (2, "L", "E6"), (2, "L", "E6")])
    moves = bd.legal_moves(model, s, 6)
    assert {m.kind for m in moves} == {"pass", "cant_play"}
    s2 = bd.apply(model, s, pick(model, s, 6, kind="cant_play"))
    assert s2.to_move == 2 and s2.turn == s.turn + 1
    # announcing it twice in a row is fine (unlike passing)
    s3 = bd.apply(model, replace(s2, to_move=1), pick(model, replace(s2, to_move=1), 6, kind="cant_play"))
    assert s3.to_move == 2
    # when a move exists, "I can't play" is refused with the rule named
    s4 = with_pawns(bd.new_game(model), [(1, "L", "E2"), (2, "L", "W7")])
    with pytest.raises(RuleError, match="can't play"):
        bd.apply(model, s4, Move("cant_play", 1, 2))


def test_cant_play_house_reading_when_the_rolled_holder_is_full(model):
    s = with_pawns(bd.new_game(model, 2, cant_play="no_place"), [(1, "L", "E2"), (1, "L", "E2"), (2, "L", "W7")])
    kinds = {m.kind for m in bd.legal_moves(model, s, 2)}
    assert "cant_play" in kinds and "advance" in kinds


# ----------------------------------------------------------------------------- attacking and beating

def test_attacking_pawn_beats_an_opponent_start_pawn_which_goes_back(model):
    # seat 1's attacking pawn on W2 (finish 2) rolls 2 → W4 (finish 4), where seat 2 has a start pawn
    s = with_pawns(bd.new_game(model), [(1, "L", "W2"), (2, "L", "W4"), (2, "L", "W7")])
    move = pick(model, s, 2, kind="advance", from_holder="W2")
    assert move.beats == "W4" and move.beaten_seat == 2
    after = bd.apply(model, s, move)
    assert sorted(p.holder or "-" for p in after.pawns if p.seat == 2) == ["-"] * 5 + ["W7"]
    assert [p.holder for p in after.pawns if p.seat == 1 and p.holder] == ["W4"]


def test_attacking_pawns_cannot_be_beaten(model):
    # both seats' attacking pawns: seat 2's on E5 (its finish 3), seat 1's E1-start pawn can't beat anyway,
    # and seat 2's own attacking pawn arriving where seat 1 has an attacking... holders of one area only hold
    # the owner's start pawns and the other's attacking pawns, so check the beat candidates directly
    s = with_pawns(bd.new_game(model), [(2, "L", "E5"), (2, "L", "E4"), (1, "L", "E1")])
    s = replace(s, to_move=2)
    # seat 2's pawn on E5 (finish 3) rolls 1 → E4 (finish 4) beside its own pawn: nothing to beat
    m = pick(model, s, 1, kind="advance", from_holder="E5")
    assert m.beats is None


def test_start_pawn_may_stand_beside_an_attacking_pawn(model):
    # seat 2's attacking pawn on E3; seat 1 places on its start 3 (= E3) without beating anything
    s = with_pawns(bd.new_game(model), [(2, "L", "E3"), (1, "L", "E6")])
    m = pick(model, s, 3, kind="place")
    assert m.to_holder == "E3" and m.beats is None
    after = bd.apply(model, s, m)
    assert sorted((p.seat, p.holder) for p in after.pawns if p.holder == "E3") == [(1, "E3"), (2, "E3")]


def test_a_full_holder_cannot_be_entered(model):
    s = with_pawns(bd.new_game(model), [(1, "L", "E3"), (1, "L", "E3"), (1, "L", "E1"), (2, "L", "W7")])
    assert not [m for m in bd.legal_moves(model, s, 3) if m.kind == "place"]
    assert not [m for m in bd.legal_moves(model, s, 2) if m.from_holder == "E1"]
    # the single holder next to the pivot holds one pawn
    s = with_pawns(bd.new_game(model), [(1, "L", "E7"), (1, "L", "E6"), (2, "L", "W7")])
    assert not [m for m in bd.legal_moves(model, s, 1) if m.from_holder == "E6"]


def test_models_c_d_beat_reaches_the_neighbouring_holder():
    model = bd.load_model(MODELS / "model_cd.toml")
    # an attacking pawn that arrives in 3 can beat a pawn in 4 ...
    s = with_pawns(bd.new_game(model), [(1, "L", "W1"), (2, "L", "W4")])
    m = pick(model, s, 2, kind="advance", from_holder="W1")
    assert (m.to_holder, m.beats) == ("W3", "W4")
    after = bd.apply(model, s, m)
    assert [p.holder for p in after.pawns if p.seat == 2 and p.holder] == []
    # ... or one that arrives in 4 can beat a pawn in 3
    s = with_pawns(bd.new_game(model), [(1, "L", "W1"), (2, "L", "W3")])
    m = pick(model, s, 3, kind="advance", from_holder="W1")
    assert (m.to_holder, m.beats) == ("W4", "W3")


def test_optional_beat_house_rule(model):
    s = with_pawns(bd.new_game(model, 2, optional_beat=True), [(1, "L", "W2"), (2, "L", "W4")])
    found = [m for m in bd.legal_moves(model, s, 2) if m.from_holder == "W2"]
    assert {m.beats for m in found} == {None, "W4"}


# ----------------------------------------------------------------------------- winning and tipping

def test_bringing_every_pawn_home_wins(model):
    s = with_pawns(bd.new_game(model, 2, pawns=4),
                   [(1, "L", "W3"), (1, "L", "W4"), (1, "L", "W5"), (1, "L", "E6"), (2, "L", "E1")])
    s = bd.apply(model, s, pick(model, s, 2, kind="advance", from_holder="E6"))
    assert s.over and s.result == "home" and s.winners == (1,)
    with pytest.raises(RuleError, match="over"):
        bd.apply(model, s, Move("pass", 2, 3))
    # afterwards the winner may rearrange finished pawns freely
    rearr = [m for m in bd.legal_moves(model, s, None) if m.kind == "rearrange"]
    assert rearr and bd.apply(model, s, rearr[0]).result == "home"


def test_tipping_loses_a_two_player_game(model):
    # three L pawns at the right end of the arm: 3 × 10 g × ≥114 mm > τ_tip ≈ 2952
    s = with_pawns(bd.new_game(model), [(1, "L", "E1"), (1, "L", "E2"), (2, "L", "W1")])
    move = pick(model, s, 2, kind="place")
    a = bd.assess(model, s, move)
    assert a.verdict == "tips" and a.margin < 0
    after = bd.apply(model, s, move)
    assert after.over and after.result == "tip" and after.winners == (2,) and after.tipped_by == 1


def test_three_players_the_tipper_is_out_and_the_others_restart(model):
    s = with_pawns(bd.new_game(model, 3), [(1, "L", "E1"), (1, "L", "E2"), (2, "L", "W1"), (3, "M", "E4")])
    after = bd.apply(model, s, pick(model, s, 2, kind="place", size="M"))
    assert after.tipped_by == 1 and after.out == (1,) and not after.over
    assert all(p.holder is None for p in after.pawns) and {p.seat for p in after.pawns} == {2, 3}
    assert after.to_move == 2 and after.opening == {2, 3} and after.round == 2
    # the last two play the final round on either side of the arm
    assert after.path_of == {2: 1, 3: 2}
    # the next tipper leaves the last player as the winner
    s2 = with_pawns(after, [(2, "L", "E1"), (2, "L", "E2"), (3, "L", "W1")])
    s2 = replace(s2, to_move=2)
    final = bd.apply(model, s2, pick(model, s2, 2, kind="place", size="M"))
    assert final.over and final.winners == (3,)


def test_teams_share_a_side_and_only_opponents_are_beaten(model):
    s = bd.new_game(model, 4, teams=True)
    assert s.path_of == {1: 1, 2: 2, 3: 1, 4: 2}
    # seat 1's attacking pawn arriving beside its partner's (seat 3) start pawn does not beat it
    s = with_pawns(s, [(1, "L", "W2"), (3, "L", "W4"), (2, "L", "E1")])
    assert pick(model, s, 2, kind="advance", from_holder="W2").beats is None
    # but beside seat 2's (an opponent's) start pawn it does
    s = with_pawns(bd.new_game(model, 4, teams=True), [(1, "L", "W2"), (2, "L", "W4")])
    assert pick(model, s, 2, kind="advance", from_holder="W2").beats == "W4"


def test_table_judged_tips_come_from_a_report(model):
    s = with_pawns(bd.new_game(model, 2, tip_judge="table"), [(1, "L", "E1"), (1, "L", "E2"), (2, "L", "W7")])
    after = bd.apply(model, s, pick(model, s, 2, kind="place"))
    assert not after.over
    tipped = bd.report_tip(model, after)
    assert tipped.over and tipped.winners == (2,)
    with pytest.raises(RuleError, match="end of a turn"):
        bd.report_tip(model, bd.new_game(model))


def test_a_tip_reported_after_the_homecoming_move_takes_the_win_away(model):
    # home means home without tipping the arm: with the table judging, the tip comes just after the move
    home = [(1, "L", "W3"), (1, "L", "W4"), (1, "L", "W5"), (1, "L", "E6"), (2, "L", "E1")]
    s = with_pawns(bd.new_game(model, 2, pawns=4, tip_judge="table"), home)
    s = bd.apply(model, s, pick(model, s, 2, kind="advance", from_holder="E6"))
    assert s.over and s.result == "home" and bd.view(model, s)["tip_can_be_reported"]
    tipped = bd.report_tip(model, s)
    assert tipped.result == "tip" and tipped.winners == (2,) and tipped.tipped_by == 1
    assert not bd.view(model, tipped)["tip_can_be_reported"]
    with pytest.raises(RuleError, match="over"):
        bd.report_tip(model, tipped)
    # once anything else has happened, the win stands
    s = with_pawns(bd.new_game(model, 2, pawns=4, tip_judge="table"), home)
    s = bd.apply(model, s, pick(model, s, 2, kind="advance", from_holder="E6"))
    s = bd.apply(model, s, [m for m in bd.legal_moves(model, s, None) if m.kind == "rearrange"][0])
    with pytest.raises(RuleError, match="over"):
        bd.report_tip(model, s)


def test_pass_without_roll_house_rule(model):
    s = with_pawns(bd.new_game(model, 2, pass_needs_roll=False), [(1, "L", "E2"), (2, "L", "W7")])
    assert bd.legal_moves(model, s, None) == [Move("pass", 1)]
    s_default = with_pawns(bd.new_game(model), [(1, "L", "E2"), (2, "L", "W7")])
    with pytest.raises(RuleError, match="roll the die first"):
        bd.apply(model, s_default, Move("pass", 1))


# ----------------------------------------------------------------------------- illegal input

@pytest.mark.parametrize("move,needle", [
    ({"kind": "fly", "seat": 1}, "kind"),
    ({"kind": "place", "seat": "1"}, "whole number"),
    ({"kind": "place", "seat": 2, "roll": 3, "size": "L", "to_holder": "W5"}, "turn"),
    ({"kind": "place", "seat": 1, "roll": 3, "size": "L", "to_holder": "E4"}, "start holder 3"),
    ({"kind": "advance", "seat": 1, "roll": 3, "size": "L", "from_holder": "E6", "to_holder": "W2"}, "opening"),
    ({"kind": "place", "seat": 1, "size": "L", "to_holder": "E4"}, "roll"),
    ({"kind": "place", "seat": 1, "roll": 9, "size": "L", "to_holder": "E4"}, "1 to 6"),
    ({"kind": "place", "seat": 1, "roll": 3, "wings": 2}, "unknown"),
])
def test_illegal_moves_name_the_rule_and_change_nothing(model, move, needle):
    s = bd.new_game(model)
    before = repr(s)
    with pytest.raises(RuleError, match=needle):
        bd.apply(model, s, move)
    assert repr(s) == before


# ----------------------------------------------------------------------------- physics and the warning

def test_torques_and_assessment(model):
    s = with_pawns(bd.new_game(model), [(1, "L", "E1"), (2, "L", "W5")])
    per = bd.torque_per_holder(model, s)
    assert per["E1"] == pytest.approx(1330.0) and per["W5"] == pytest.approx(-950.0)
    assert bd.net_torque(model, s) == pytest.approx(380.0)
    move = pick(model, s, 1, kind="place")
    a = bd.assess(model, s, move)
    assert a.torque_after == pytest.approx(1710.0)
    assert a.margin == pytest.approx(model.tip_torque - 1710.0)
    assert a.verdict == "safe" and a.tip_probability < 0.001


def test_probability_rises_as_the_margin_shrinks(model):
    from companion.games import balance_physics as bp

    sigma = 120.0
    torques = [0, 1000, 2000, 2500, 2800, 2900, 2950, 3000, 3200]
    probs = [bp.tip_probability(model, t, sigma) for t in torques]
    assert probs == sorted(probs)
    assert probs[0] < 1e-9 and probs[-1] > 0.9
    verdicts = [bp.judge(model, t, sigma).verdict for t in torques]
    assert verdicts[0] == "safe" and verdicts[-1] == "tips" and "risky" in verdicts


def test_an_advance_without_its_start_holder_is_refused_by_name(model):
    s = with_pawns(bd.new_game(model), [(1, "L", "E2"), (2, "L", "W7")])
    with pytest.raises(RuleError, match="from_holder"):
        bd.apply(model, s, {"kind": "advance", "seat": 1, "roll": 4, "size": "L", "to_holder": "W1"})
    with pytest.raises(RuleError, match="from_holder"):
        bd.apply(model, s, {"kind": "advance", "seat": 1, "roll": 4, "size": "L", "from_holder": "X9", "to_holder": "W1"})


def test_a_pass_carries_no_tip_rating_even_on_a_leaning_arm(model):
    # the arm already leans close to tipping (18 % if it were a move), yet a pass moves nothing
    s = replace(with_pawns(bd.new_game(model), [(1, "L", "E1"), (1, "L", "E2"), (1, "L", "E6")]), roll=3)
    assert bd.assess(model, s, pick(model, s, 3, kind="pass")).verdict == "risky"
    moves = bd.view(model, s)["moves"]
    passes = [m for m in moves if m["move"]["kind"] == "pass"]
    assert passes and all(m["verdict"] is None and m["tip_probability"] is None for m in passes)
    assert all(m["verdict"] in ("safe", "risky", "tips") for m in moves if m["move"]["kind"] != "pass")
    # with no roll yet (house rule), the pass offered is not rated either
    quiet = replace(s, roll=None, options=replace(s.options, pass_needs_roll=False))
    assert all(m["verdict"] is None for m in bd.view(model, quiet)["moves"] if m["move"]["kind"] == "pass")


def test_after_a_tip_in_a_game_that_goes_on_the_table_is_told_to_clear_the_arm(model):
    s = with_pawns(bd.new_game(model, 3, names=("Ann", "Bob", "Cleo")),
                   [(1, "L", "E1"), (1, "L", "E2"), (2, "L", "W1"), (3, "M", "E4")])
    after = bd.apply(model, s, pick(model, s, 2, kind="place", size="M"))
    v = bd.view(model, after)
    assert v["tip_message"] == "Ann tipped the arm and is out"
    assert v["tip_next"] == "Take every pawn off the arm: Bob and Cleo start round 2 with their own pawns, Bob first."
    assert v["message"] == "Clear the arm, then Bob rolls to open round 2"
    # the round's first roll begins it: the tip is then behind the table
    rolled = bd.view(model, bd.act(model, after, {"type": "roll", "value": 3}))
    assert rolled["tip_message"] is None and rolled["tip_next"] is None and rolled["message"] == "Bob rolled 3: choose a move"
    # a tip that ends the game has nothing to clear for
    two = with_pawns(bd.new_game(model, names=("Ann", "Bob")), [(1, "L", "E1"), (1, "L", "E2"), (2, "L", "W1")])
    over = bd.view(model, bd.apply(model, two, pick(model, two, 2, kind="place")))
    assert over["tip_message"] == "Ann tipped the arm" and over["tip_next"] is None and over["message"] == "Bob wins: Ann tipped the arm"
