"""The benchmark's referee: what weight and torque can tell apart, and how outcomes are scored."""

from companion.games.balance_model import load_model
from companion.simulation.evaluation import Summary, distinguishable, score
from companion.sensing.follower import ArmFollower
from companion.simulation.traces import Action, HandStyle, TableScript

MODEL = load_model("A")


def action(before, after, **kw):
    return Action("move", 0.0, 1.0, list(before), list(after), **kw)


def test_moves_that_torque_alike_are_indistinguishable():
    # L three holders in (-570) and M five holders in (-570)
    assert not distinguishable(MODEL, action([("E1", "L"), ("E2", "M")], [("E4", "L"), ("E2", "M")]))
    # L one holder out: nothing else gives +190 g·mm
    assert distinguishable(MODEL, action([("E2", "L"), ("W4", "M")], [("E1", "L"), ("W4", "M")]))
    # a pawn's own mass can part a nominal tie: 10.4 g vs 9.6 g moved three holders differ by 46 g·mm
    assert distinguishable(MODEL, action([("E1", "L"), ("W1", "L")], [("E4", "L"), ("W1", "L")],
                                         masses_before=[("E1", "L", 10.4), ("W1", "L", 9.6)],
                                         masses_after=[("E4", "L", 10.4), ("W1", "L", 9.6)]))


def test_a_heavy_pawn_placed_where_it_tips_the_arm_is_not_told_from_the_same_pawn_tipping_it_elsewhere():
    # our seed 32600018 at 344 s: an L of 10.32 g placed in W6 tipped the arm; in W5 or W7 it would have tipped it
    # alike, and the angle on the board says no more than "tipped" (the nominal 10 g L was 1.1 units off in weight)
    before = [("E4", "L"), ("E7", "L"), ("W4", "L"), ("W5", "L"), ("W2", "L"), ("W4", "L"), ("E5", "L"), ("W2", "L"),
              ("W6", "L")]
    masses = [(h, s, 10.0) for h, s in before]
    tipping = Action("place", 0.0, 1.0, before, before + [("W6", "L")], size="L", holder="W6", tipped_after=True,
                     masses_before=masses, masses_after=masses + [("W6", "L", 10.32)])
    assert not distinguishable(MODEL, tipping)
    # while resting free after, where it went is in the torque, whatever it weighs
    calm = [(h, s, m) for h, s, m in masses if h != "W6"]
    free = Action("place", 0.0, 1.0, [(h, s) for h, s, _ in calm], [(h, s) for h, s, _ in calm] + [("W6", "L")],
                  size="L", holder="W6", masses_before=calm, masses_after=calm + [("W6", "L", 10.32)])
    assert distinguishable(MODEL, free)


def test_a_short_session_scores_clean():
    sc = TableScript(MODEL, "quiet-10sps", seed=31, hands=HandStyle(long_press_share=0.0))
    sc.place("E2", "L")
    sc.wait(4)
    sc.touch("W3")
    sc.wait(4)
    sc.move("E2", "E5", "L")
    sc.wait(4)
    f = ArmFollower(MODEL, sc.calibration())
    events = [e for r in sc.rows for e in f.feed(*r)]
    outcomes, early = score(MODEL, sc.actions, events)
    s = Summary()
    s.add(outcomes, early)
    row = s.row()
    assert row["events"] == 2 and row["exact_pct"] == 100.0 and row["false_events"] == 0
    assert row["latency_median_s"] < 1.5


def test_a_change_decided_after_the_next_hand_came_is_scored_against_its_own_action():
    # our seed 11001001 (medium-10sps, uncalibrated): a move E7 → E6 was decided 0.1 s after the next hand had come
    # to place an M in E4, and the window of that placement held both changes, so both were counted wrong
    from companion.sensing.events import Change
    from companion.sensing.inference import Geometry, TrackedPawn, build_candidate

    geo = Geometry.from_model(MODEL)
    pawn = [TrackedPawn("E7", "L", 10.0, 0.1)]
    moved = build_candidate(geo, "move", pawn, relocate=(0, "E6"), size="L", from_holder="E7", to_holder="E6")
    placed = build_candidate(geo, "place", [], put=[("E4", "M")], size="M", holder="E4")
    move = Action("move", 0.0, 1.0, [("E7", "L")], [("E6", "L")], size="L", from_holder="E7", to_holder="E6")
    place = Action("place", 3.1, 4.0, [("E6", "L")], [("E6", "L"), ("E4", "M")], size="M", holder="E4")

    def change(best, t, off):
        return Change(t, best, (), (), 0.998, False, None, (), (), geo, hands_off_t=off)

    events = (change(moved, 3.2, 1.0).events() + change(placed, 4.9, 4.0).events())
    outcomes, early = score(MODEL, [move, place], events)
    assert early == 0
    assert [o.exact for o in outcomes] == [True, True]
    assert [len(o.reported) for o in outcomes] == [1, 1]


def test_a_change_reported_as_unsure_is_flagged_not_claimed():
    # "nothing changed, not surely" after hands that took or left weight: the game is told, and asks when a move is
    # due; for a move the sensors cannot tell from another, that doubt is the flag the scorer wants
    from companion.sensing.events import ArmEvent

    alike = action([("E1", "L"), ("E2", "M")], [("E4", "L"), ("E2", "M")], size="L", from_holder="E1",
                   to_holder="E4")
    outcomes, _ = score(MODEL, [alike], [ArmEvent(1.5, "unsure", confidence=0.54, ambiguous=True)])
    assert outcomes[0].changed and outcomes[0].same and outcomes[0].flagged and not outcomes[0].exact
    s = Summary()
    s.add(outcomes, 0)
    assert s.row()["flagged_pct"] == 100.0
    # ... and with nothing reported at all, it is not
    outcomes, _ = score(MODEL, [alike], [])
    assert not outcomes[0].flagged


def test_the_reliability_table_says_how_many_wrong_its_stated_odds_promise():
    from companion.simulation.evaluation import calibration_lines

    # 50 moves applied at 0.995 with one wrong, 950 at 0.9998 all right: 99.9 % right, and the odds promised
    # 0.25 + 0.19 wrong — one wrong or more is what such a run shows about one time in three
    points = [(0.995, k != 0) for k in range(50)] + [(0.9998, True)] * 950 + [(0.5, False), (0.95, True)]
    lines, sure = calibration_lines(points)
    assert sure
    band = next(ln for ln in lines if ln.strip().startswith("0.990-0.999"))
    assert band.split()[1:3] == ["50", "49"] and band.split()[-2:] == ["1", "0.25"]
    assert lines[-1].endswith("1 wrong where the stated odds promise 0.44")
    # below the goal it says so
    assert not calibration_lines([(0.995, False)] * 2 + [(0.999, True)] * 998)[1]


def test_the_evidence_table_counts_per_source_how_often_it_pointed_the_wrong_way_against_its_odds():
    from companion.simulation.evaluation import evidence_lines

    # the touches set five pairs 6 nats apart, one the wrong way (their odds allow 5 / (1 + e^6) = 0.01), and one
    # 0.5 apart; the pause spoke once, 2 nats the right way; the swing's frequency never spoke
    pairs = [{"touches": 6.0}] * 4 + [{"touches": -6.0}, {"touches": 0.5, "pause": 2.0}, {"swing frequency": 0.0}]
    lines = evidence_lines(pairs, ["touches", "pause", "swing frequency"])
    rows = {ln.split("  ")[0]: ln for ln in lines[2:]}
    cells = rows["touches"][18:]
    assert [cells[k * 19:(k + 1) * 19].split() for k in range(6)] == [
        ["1", "0", "0.38"], ["—"], ["—"], ["—"], ["5", "1", "0.01"], ["—"]]
    assert rows["pause"][18:].split() == ["—", "—", "1", "0", "0.12", "—", "—", "—"]
    assert rows["swing frequency"][18:].split() == ["—"] * 6
