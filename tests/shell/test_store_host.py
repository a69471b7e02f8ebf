"""The event store and the game host: the state is the fold of the log, undo appends."""

import sqlite3

import pytest

from companion.games import balance_duels as bd
from companion.games.base import RuleError
from companion.games.registry import engines
from companion.table.host import GameHost
from companion.store import EventStore, StoreError

MODEL = bd.load_model("A")


@pytest.fixture
def db(tmp_path):
    return tmp_path / "events.sqlite3"


def host_for(path):
    return GameHost(EventStore(path), engines(MODEL), "balance_duels", {"players": 2})


def test_store_is_wal_with_full_sync_and_numbers_events(db):
    store = EventStore(db)
    assert store._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store._db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    g = store.append(None, "new_game", {"game": "balance_duels", "options": {}}, "test")
    a = store.append(g.game_id, "action", {"action": {"type": "roll", "value": 3}}, "test")
    assert g.game_id == g.seq and a.seq == g.seq + 1 and a.game_id == g.game_id
    assert [e.seq for e in store.game_events(g.game_id)] == [g.seq, a.seq]
    assert store.latest_game() == g.game_id and store.integrity_check() == "ok"


def test_store_refuses_a_file_that_is_not_a_database(tmp_path):
    bad = tmp_path / "bad.sqlite3"
    bad.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="bad.sqlite3"):
        EventStore(bad)


def test_a_fresh_store_starts_the_default_game(db):
    host = host_for(db)
    snap = host.snapshot()
    assert snap["game"] == "balance_duels" and snap["seq"] == 1 and not snap["can_undo"]


def test_actions_undo_and_replay_after_restart(db):
    host = host_for(db)
    host.act({"type": "roll", "value": 4})
    move = bd.legal_moves(MODEL, host.state, 4)[0]
    host.act({"type": "move", "move": move.to_dict()})
    host.act({"type": "roll", "value": 2})
    host.undo()
    seen = host.snapshot()
    assert seen["view"]["roll"] is None and seen["view"]["to_move"] == 2
    host.store.close()
    # a restarted daemon folds the same log into the same game
    again = host_for(db)
    assert again.snapshot()["view"] == seen["view"] and again.seq == seen["seq"]
    kinds = [e.kind for e in again.store.game_events(again.game_id)]
    assert kinds == ["new_game", "action", "action", "action", "undo"]


def test_a_refused_action_writes_nothing(db):
    host = host_for(db)
    before = host.seq
    with pytest.raises(RuleError):
        host.act({"type": "roll", "value": 9})
    with pytest.raises(RuleError):
        host.act({"type": "move", "move": {"kind": "pass", "seat": 2, "roll": 1}})
    with pytest.raises(RuleError, match="nothing to undo"):
        host.undo()
    assert host.seq == before == host.store.last_seq()


def test_new_game_and_unknown_game(db):
    host = host_for(db)
    host.act({"type": "roll", "value": 1})
    ev = host.new_game("balance_duels", {"players": 3})
    assert host.game_id == ev.seq and host.snapshot()["view"]["players"][2]["name"] == "red"
    with pytest.raises(RuleError, match="unknown game"):
        host.new_game("chess")
    with pytest.raises(RuleError, match="players"):
        host.new_game("balance_duels", {"players": 9})
    assert host.game_id == ev.seq


def test_store_failure_changes_nothing(db, mocker):
    host = host_for(db)
    before = host.snapshot()
    mocker.patch.object(host.store, "append", side_effect=StoreError("disk full"))
    with pytest.raises(StoreError):
        host.act({"type": "roll", "value": 3})
    assert host.snapshot() == before


def test_events_after_and_wait(db):
    host = host_for(db)
    seq = host.seq
    assert host.events_after(seq) == []
    host.act({"type": "roll", "value": 5})
    assert [e.seq for e in host.events_after(seq)] == [seq + 1]
    assert host.wait_for_change(seq, timeout=0.01) is True
    assert host.wait_for_change(host.seq, timeout=0.01) is False


def test_integrity_of_a_closed_database(db):
    host = host_for(db)
    for v in (1, 2):
        host.act({"type": "roll", "value": v}) if v == 1 else host.undo()
    host.store.close()
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_the_log_and_undo_say_who_did_what_and_survive_a_restart(db):
    """Issue 36: each entry in the players' words, Undo naming what it takes back; the same after a replay."""
    host = host_for(db)
    host.new_game("balance_duels", {"players": 2, "names": ["Anna", "Emil"]}, source="page")
    assert host.snapshot()["undo_text"] is None and host.snapshot()["log"][-1]["text"] == "New game of Balance Duels: Anna, Emil"
    host.act({"type": "roll", "value": 6}, source="page")
    place = next(m["move"] for m in host.snapshot()["view"]["moves"] if m["move"]["kind"] == "place")
    host.act({"type": "move", "move": place}, source="button")
    snap = host.snapshot()
    assert snap["undo_text"] == "Anna placed L on E6"
    assert [(e["kind"], e["text"], e["source"]) for e in snap["log"][-2:]] == [
        ("action", "Anna rolled 6", "page"), ("action", "Anna placed L on E6", "button")]
    host.undo(source="page")
    snap = host.snapshot()
    assert snap["log"][-1]["text"] == "Undo: Anna placed L on E6" and snap["undo_text"] == "Anna rolled 6"
    # folded again from the store, the log reads the same
    again = host_for(db)
    assert again.snapshot()["log"] == snap["log"] and again.snapshot()["undo_text"] == "Anna rolled 6"
    # a game record loaded tells its events too
    record = [e.to_dict() for e in host.store.game_events(host.game_id)]
    host.load_record(record, source="page")
    assert [e["text"] for e in host.snapshot()["log"]] == [e["text"] for e in snap["log"]]
