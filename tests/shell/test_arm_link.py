"""Balance Duels follows the (simulated) arm: a pawn put on the arm becomes the game's move, with no button."""

import dataclasses
import time

import pytest

from companion.config import parse
from companion.daemon import Companion
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
