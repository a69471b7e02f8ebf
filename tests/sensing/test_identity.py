"""Which like pawn is which: the doubt an account dropped leaves on the masses of the one kept (identity.py), and
the likelihood that reads it."""

import json

import pytest

from companion.games.balance_model import load_model
from companion.sensing.identity import doubted, fold, kept_accounts
from companion.sensing.inference import (Geometry, Measurement, Resolution, TrackedPawn, apply_candidate,
                                         build_candidate, enumerate_candidates, judge, log_likelihood, rank)

MODEL = load_model("A")
GEO = Geometry.from_model(MODEL)


def pawns(*rows):
    return [TrackedPawn(h, s, m, 0.01) for h, s, m in rows]


# foreign quiet 27500 at 150 s: a beat of like M's or the mover's removal; the follower kept the removal of the
# 5.98 g pawn at W2 (W2 keeps 5.80) and dropped the beat (the 5.80 g pawn went on, the 5.98 g one stayed)
KEPT = pawns(("W2", "M", 5.80), ("E7", "M", 6.00), ("E1", "L", 10.03))
SWAPPED = pawns(("W2", "M", 5.98), ("E7", "M", 5.80), ("E1", "L", 10.03))


def test_an_account_that_only_gave_like_pawns_other_masses_leaves_them_in_doubt():
    out = doubted(KEPT, 0.95, [(0.05, SWAPPED)])
    w2, e7, e1 = out
    assert (w2.mass_g, w2.alt_g, w2.doubt) == (5.80, 5.98, pytest.approx(0.05))
    assert (e7.mass_g, e7.alt_g, e7.doubt) == (6.00, 5.80, pytest.approx(0.05))
    assert e1 == KEPT[2]                                     # the same in every account: no doubt
    # a doubt carried already counts with the accounts folded into it
    again = doubted(out, 0.9, [(0.1, KEPT)])
    assert again[0].doubt == pytest.approx(0.9 * 0.05 + 0.1 * 0.0) and again[0].alt_g == 5.98
    # where the others, together, hold the pawn at the other mass more likely, it weighs that
    flipped = doubted(KEPT, 0.4, [(0.3, SWAPPED), (0.3, SWAPPED)])
    assert (flipped[0].mass_g, flipped[0].alt_g, flipped[0].doubt) == (5.98, 5.80, pytest.approx(0.4))


def test_only_accounts_of_the_same_holders_fold_and_their_weight_joins_it():
    other = pawns(("W3", "M", 5.80), ("E7", "M", 6.00), ("E1", "L", 10.03))
    kept = [[0.9, list(KEPT), "via a"], [0.6, list(other), "via b"]]
    fold(kept, [[0.05, SWAPPED, "via c"], [0.02, pawns(("W5", "M", 5.9)), "via d"]])
    assert kept[0][0] == pytest.approx(0.95) and kept[0][1][0].doubt == pytest.approx(0.05 / 0.95)
    assert kept[0][2] == "via a"
    assert kept[1] == [0.6, other, "via b"]                 # other holders: not an identity, left as it was


def test_the_accounts_kept_are_each_arrangement_first_then_the_mass_variants():
    # ours, 10 SPS, seed 30700007: after a beat of like M's, 24 accounts of two arrangements crowded out a third (M at
    # W2 and W7 or at W3 and W6: the same torque), and a place at W6 that only it left room for was unexplained
    heavy = [[1.0 - 0.01 * k, pawns(("W3", "M", 5.80 + 0.01 * k), ("W6", "M", 6.00), ("W6", "M", 5.90)), k]
             for k in range(30)]
    other = [[0.4, pawns(("W2", "M", 5.80), ("W6", "M", 6.00), ("W7", "M", 5.90)), "true"]]
    accounts = sorted(heavy + other, key=lambda e: -e[0])
    kept, dropped = kept_accounts(accounts, 24)
    assert len(kept) == 24 and other[0] in kept and len(dropped) == len(accounts) - 24
    assert [e[0] for e in kept] == sorted((e[0] for e in kept), reverse=True)      # heaviest first, as before
    assert kept[0] is heavy[0] and all(e in heavy for e in dropped)
    # with room for every account, nothing changes
    assert kept_accounts(accounts, 40) == (accounts, [])
    # more arrangements than room: the heaviest of them
    many = [[1.0 / (k + 1), pawns((f"W{k % 7 + 1}", "L", 10.0), (f"E{k // 7 + 1}", "L", 10.0)), k] for k in range(30)]
    assert kept_accounts(many, 4)[0] == many[:4]


def test_a_pawn_in_doubt_keeps_it_as_it_moves():
    p = doubted(KEPT, 0.95, [(0.05, SWAPPED)])
    move = build_candidate(GEO, "move", p, relocate=(0, "W4"), size="M", from_holder="W2", to_holder="W4")
    after = apply_candidate(GEO, p, move)
    assert (after[0].holder, after[0].alt_g, after[0].doubt) == ("W4", 5.98, pytest.approx(0.05))


def _measure(dw, dtau, *, tau0=0.0, sw=0.02, st=4.0):
    return Measurement(dw, sw * sw, tau0, st * st / 2, tau0 + dtau, st * st / 2, 0, MODEL.tip_torque,
                       MODEL.physics.tip_sigma_gmm ** 2)


def test_a_removal_weighed_as_the_pawn_it_may_be_is_not_read_as_a_beat_for_sure():
    """5.99 g left W2, whose pawn the follower holds at 5.80 g — unless it is the 5.98 g one it may have swapped with
    (5 %). Without the doubt, a beat W2 → E7 (E7's 6.00 g pawn leaving; the torques a 10 SPS look tells apart to
    13 g·mm) is the only account of that weight, surely; with it, the removal keeps its share and it is flagged."""
    from dataclasses import replace

    from companion.sensing.touches import Touch

    # one touch found, at W2: the lift; a beat's put-down at E7, 57 mm on, the cells at 10 SPS may run into it
    m = replace(_measure(-5.99, -5.99 * GEO.x["W2"], st=13.0),
                touches=(Touch(0.0, 1.0, GEO.x["W2"], 3.0, 6.0),), finger_mm=4.0)
    sure = judge(rank(enumerate_candidates(GEO, KEPT), m), m, Resolution(), final=True).ranked[0]
    assert sure.candidate.kind == "beat" and sure.described > 0.999
    p = doubted(KEPT, 0.95, [(0.05, SWAPPED)])
    unsure = judge(rank(enumerate_candidates(GEO, p), m), m, Resolution(), final=True).ranked[0]
    told = {c.kind: q for c, q in unsure.retold}
    assert unsure.described < 0.99 and (told.get("remove", 0.0) >= 0.01 or unsure.candidate.kind == "remove")
    # the mixture: the removal of the pawn in doubt is as likely as its doubt makes the pawn it may be
    remove = next(c for c in enumerate_candidates(GEO, p) if c.kind == "remove" and c.holder == "W2")
    plain = next(c for c in enumerate_candidates(GEO, KEPT) if c.kind == "remove" and c.holder == "W2")
    assert remove.alt is not None and remove.alt[0] == pytest.approx(0.05) and plain.alt is None
    assert log_likelihood(remove, m)[0] > log_likelihood(plain, m)[0] + 8.0


def test_a_pawn_in_doubt_survives_a_restart():
    from companion.sensing.follower import ArmFollower
    from companion.sensing.memory import memory_of, resume
    from companion.simulation.traces import TableScript

    sc = TableScript(MODEL, "quiet-10sps", seed=8, settle_s=0.5)
    f = ArmFollower(MODEL, sc.calibration())
    for row in sc.rows:
        f.feed(*row)
    f.beliefs[0].pawns = doubted(KEPT, 0.95, [(0.05, SWAPPED)])
    memory = json.loads(json.dumps(memory_of(f)))
    assert memory["beliefs"][0]["pawns"][0] == ["W2", "M", 5.80, 0.01, 5.98, pytest.approx(0.05)]
    assert memory["beliefs"][0]["pawns"][2] == ["E1", "L", 10.03, 0.01]
    again = resume(MODEL, sc.calibration(), memory)
    assert again.beliefs[0].pawns == f.beliefs[0].pawns
    memory["beliefs"][0]["pawns"][0][5] = 1.5
    with pytest.raises(ValueError, match="beliefs.0.doubt must be a number"):
        resume(MODEL, sc.calibration(), memory)
