"""Balance Duels follows the (simulated) arm: a pawn put on the arm becomes the game's move, with no button."""

import dataclasses
import time

import pytest

from companion.config import parse
from companion.table.daemon import Companion
from companion.games import balance_duels as bd
from companion.web import create_app


@pytest.fixture
def comp(tmp_path):
    cfg = dataclasses.replace(parse({"simulate": {"enabled": True, "demo": False, "seed": 11}}),
                              store_path=tmp_path / "db.sqlite3")
    c = Companion(cfg)
    c.start()
    yield c
    c.stop()


def wait_for(predicate, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def play_on_arm(comp, move):
    """A player's hand makes `move` on the arm; nobody tells the game."""
    after = bd._moved(comp.model, comp.host.state, move)
    comp.table.set_pawns([(p.holder, p.size) for p in after if p.holder is not None], at_holder=move.to_holder)


def settle(comp):
    assert wait_for(lambda: comp.arm.follower.settled, 15), "the arm did not settle"


def test_a_placement_on_the_arm_advances_the_game(comp):
    settle(comp)
    comp.host.act({"type": "roll", "value": 3}, source="page")
    move = bd.legal_moves(comp.model, comp.host.state, 3)[0]
    seq = comp.host.seq
    play_on_arm(comp, move)
    assert wait_for(lambda: comp.host.seq > seq, 10), "the sensed placement never reached the game"
    last = comp.host.store.game_events(comp.host.game_id)[-1]
    assert last.source == "sensor" and last.body["action"]["move"]["to_holder"] == "E3"
    assert comp.live()["weight_g"] == pytest.approx(10, abs=1.5)


def test_two_moves_alike_are_asked_about_and_answered(comp):
    host = comp.host
    # seat 1 gets pawns on E2 and E5 (through the page, so the arm follows the game)
    for roll, want in ((2, "E2"), (6, None), (5, "E5"), (6, None)):
        settle(comp)
        host.act({"type": "roll", "value": roll}, source="page")
        moves = [m for m in bd.legal_moves(comp.model, host.state, roll) if m.kind == "place"]
        host.act({"type": "move", "move": moves[0].to_dict()}, source="page")
    settle(comp)
    time.sleep(1.0)
    settle(comp)
    host.act({"type": "roll", "value": 2}, source="page")
    # E5 → E7 changes weight and torque exactly as E2 → E4 would: the sensors cannot tell them apart
    move = next(m for m in bd.legal_moves(comp.model, host.state, 2) if m.from_holder == "E5")
    seq = host.seq
    play_on_arm(comp, move)
    assert wait_for(lambda: comp.arm.question is not None or host.seq > seq, 10)
    assert host.seq == seq, "the companion guessed between two moves it cannot tell apart"
    q = comp.live()["question"]
    assert "E5" in q["text"] and "E2" in q["text"]
    client = create_app(comp).test_client()
    answer = next(i for i, label in enumerate(q["options"]) if "E5" in label)
    r = client.post("/api/sensing/answer", json={"option": answer})
    assert r.status_code == 200 and host.seq == seq + 1
    assert host.store.game_events(host.game_id)[-1].body["action"]["move"]["from_holder"] == "E5"
    assert client.post("/api/sensing/answer", json={"option": 0}).status_code == 409  # nothing asked now


@pytest.fixture
def still(tmp_path):
    """A simulated Companion on a fake clock, its sensors polled by the test: the same run every time."""
    from companion.foundation.clock import FakeClock

    cfg = dataclasses.replace(parse({"simulate": {"enabled": True, "demo": False, "seed": 3}}),
                              store_path=tmp_path / "db.sqlite3")
    c = Companion(cfg, clock=FakeClock(100.0))
    notices = []
    c.arm.on_report(lambda kind, data: notices.append(data) if kind == "notice" else None)
    c.notices = notices
    yield c
    c.stop()


def run_for(comp, seconds):
    for _ in range(round(seconds / 0.02)):
        comp.clock.advance(0.02)
        comp.sensors.poll()


def page_move(comp, roll):
    host = comp.host
    host.act({"type": "roll", "value": roll}, source="page")
    moves = [m for m in bd.legal_moves(comp.model, host.state, roll) if m.kind in ("place", "advance")]
    host.act({"type": "move", "move": (moves or bd.legal_moves(comp.model, host.state, roll))[0].to_dict()},
             source="page")


def test_moves_entered_on_the_page_then_made_on_the_arm_are_not_misreads(still):
    run_for(still, 3)
    for roll in (3, 5, 2, 6, 4, 1, 3, 5):
        page_move(still, roll)      # the simulated arm then makes the same move, as a player would
        run_for(still, 5)
    assert still.notices == []
    assert sorted(still.arm.follower.occupancy) == sorted(still.host.state.on_arm())
    assert still.live()["mismatch"] is None


def test_a_move_entered_on_the_page_but_never_made_is_reported_once_the_players_had_time(still, monkeypatch):
    from companion.table.arm_link import EXPECT_S, MISMATCH_LASTS_S

    run_for(still, 3)
    monkeypatch.setattr(still, "_sync_table", lambda hand=True: None)    # nobody touches the arm
    page_move(still, 3)
    run_for(still, EXPECT_S - 1)
    assert still.live()["mismatch"] is None, "the banner came before the players had time to move the pawn"
    assert still.arm.mismatch_shown() == (None, None)
    run_for(still, 1 + MISMATCH_LASTS_S + 1.5)
    assert "check holder E3" in (still.live()["mismatch"] or "")
    # what a replay asks for (the banner alone) is what the page shows
    live = still.arm.live()
    assert still.arm.mismatch_shown() == (live["mismatch"], live["mismatch_details"]) and live["mismatch_details"]
    assert sorted(still.arm.follower.occupancy) == sorted(still.host.state.on_arm())
    assert still.notices == []


@pytest.mark.parametrize("after_s", [0.3, 0.9, 1.2])
def test_a_move_undone_while_its_pawn_is_still_being_read_stays_undone(still, after_s):
    # the page's move has the (simulated) players place the pawn; the undo comes while the hand is on the arm (0.3 s),
    # or off it with the change still being judged (0.9 s), or after (1.2 s). At 0.9 s the placement, decided after the
    # undo, was applied by the sensors as the turn's move: the undo was taken back
    run_for(still, 3)
    page_move(still, 6)
    run_for(still, after_s)
    still.host.undo(source="page")
    seq = still.host.seq
    run_for(still, 10)
    assert still.host.seq == seq, still.host.store.game_events(still.host.game_id)[-1]
    assert still.host.state.on_arm() == [] and still.arm.follower.occupancy == []
    assert still.live()["mismatch"] is None and still.notices == []


def test_a_tip_undone_at_once_leaves_the_arm_as_the_game_and_no_notice(still):
    """3 players: the tip clears the arm and its undo puts the pawns back. The undo comes before the hands that
    clear the arm are done; the simulated arm must still end as the game says, with nothing stale on the page."""
    host = still.host
    host.new_game("balance_duels", {"players": 3}, source="page")
    run_for(still, 3)
    for n in range(40):
        roll = 1 + n % 2
        host.act({"type": "roll", "value": roll}, source="page")
        assessed = bd.assess_all(still.model, host.state, roll)
        tipping = [m for m, a in assessed if a.verdict == "tips"]
        if tipping:
            break
        # the move that loads the arm most, so that one soon tips it
        heaviest = max(((m, a) for m, a in assessed if m.kind in ("place", "advance")), key=lambda ma: abs(ma[1].torque_after))
        host.act({"type": "move", "move": heaviest[0].to_dict()}, source="page")
        run_for(still, 4)
    assert tipping, "no move came to tip the arm"
    host.act({"type": "move", "move": tipping[0].to_dict()}, source="page")
    assert host.state.round == 2 and host.state.on_arm() == []
    host.undo(source="page")
    run_for(still, 12)
    assert sorted(still.table.snapshot()["pawns"]) == sorted(host.state.on_arm())
    live = still.live()
    assert live["sensing_notice"] is None and live["mismatch"] is None
    assert still.notices == []
