"""Resuming an unfinished game from the history: it becomes the current game, the game that was current stays in
the history unfinished and can be resumed in turn; over, unknown, current or already resumed plays are refused
with nothing changed; the PIN is needed; a restart comes back to the resumed game."""

import dataclasses

import pytest

from companion.config import parse
from companion.table.daemon import Companion
from companion.web import create_app

PIN = "2468"
ROLL = {"type": "roll", "value": 6}


def make(tmp_path):
    data = {"simulate": {"enabled": True, "demo": False, "seed": 7}, "web": {"pin": PIN}}
    return Companion(dataclasses.replace(parse(data), store_path=tmp_path / "db.sqlite3"))


@pytest.fixture
def table(tmp_path):
    c = make(tmp_path)
    yield c
    c.stop()


def logged_in(c):
    client = create_app(c).test_client()
    csrf = client.post("/api/login", json={"pin": PIN}).get_json()["csrf"]
    return client, {"X-CSRF-Token": csrf}


def first_move(c):
    return c.host.snapshot()["view"]["moves"][0]["move"]


def test_resume_continues_where_the_game_was_left(table):
    c = table
    old = c.host.new_game("balance_duels", {"players": 2, "names": ["Ann", "Bob"]}).game_id
    c.host.act(ROLL)
    c.host.act({"type": "move", "move": first_move(c)})
    c.host.act({"type": "roll", "value": 2})
    c.host.undo()                                  # the roll of 2 taken back: not part of what is resumed
    left = c.host.snapshot()["view"]
    other = c.host.new_game("risk", {"players": ["Cy", "Dee"]}).game_id
    c.history.warm()
    client, h = logged_in(c)
    r = client.post(f"/api/plays/{old}/resume", json={}, headers=h)
    assert r.status_code == 200, r.get_json()
    new = r.get_json()["game_id"]
    assert c.host.game_id == new and c.host.game == "balance_duels" and r.get_json()["resumes"] == old
    now = c.host.snapshot()["view"]
    assert now["players"] == left["players"] and now["holders"] == left["holders"] and now["roll"] is None
    assert c.host.snapshot()["can_undo"]          # the resumed actions can be undone, as they could before
    plays = {p["id"]: p for p in client.get("/api/plays?limit=200").get_json()["plays"]}
    assert old not in plays                        # a part of the resumed play now
    assert plays[new]["parts"] == [old, new] and plays[new]["current"] and plays[new]["unfinished"]
    assert plays[other]["unfinished"] and not plays[other]["current"]      # the game that was current, kept
    assert plays[new]["start"] == client.get(f"/api/plays/{old}").get_json()["start"]
    # the game that was current can be resumed in turn
    r = client.post(f"/api/plays/{other}/resume", json={}, headers=h)
    assert r.status_code == 200 and c.host.game == "risk"


def test_a_restart_comes_back_to_the_resumed_game(tmp_path):
    c = make(tmp_path)
    old = c.host.new_game("balance_duels", {"players": 2, "names": ["Ann", "Bob"]}).game_id
    c.host.act(ROLL)
    c.host.new_game("risk", {"players": ["Cy", "Dee"]})
    new = c.host.resume(old).game_id
    c.stop()
    again = make(tmp_path)
    try:
        assert again.host.game_id == new and again.host.snapshot()["view"]["roll"] == 6
    finally:
        again.stop()


def test_what_cannot_be_resumed(table):
    c = table
    done = c.host.new_game("risk", {"players": ["Ann", "Bob"], "colours": {"Ann": "red", "Bob": "blue"},
                                    "capitals": {"Ann": "Germany", "Bob": "Poland"}}).game_id
    for action in ({"type": "set_counts", "player": "Ann", "territories": 12},
                   {"type": "set_counts", "player": "Bob", "territories": 1},
                   {"type": "attack", "defender": "Bob", "attackers": 5, "defenders": 1, "from": "Germany",
                    "to": "Poland"},
                   {"type": "battle", "attacker_dice": [6, 3, 2], "defender_dice": [5]}):
        c.host.act(action)
    left = c.host.new_game("balance_duels", {"players": 2}).game_id
    c.host.new_game("balance_duels", {"players": 2})
    c.history.warm()
    client, h = logged_in(c)
    assert client.post(f"/api/plays/{left}/resume", json={}, headers=h).status_code == 200
    current = c.host.game_id
    cases = [
        (done, 409, "is over"),
        (current, 409, "is the current game already"),
        (left, 409, f"was resumed already, as play {current}"),
        (987654, 404, "no play 987654"),
    ]
    before = c.store.last_seq()
    for pid, status, words in cases:
        r = client.post(f"/api/plays/{pid}/resume", json={}, headers=h)
        assert r.status_code == status and words in r.get_json()["error"], (pid, r.get_json())
    assert client.post("/api/plays/abc/resume", json={}, headers=h).status_code == 400
    assert client.post(f"/api/plays/{left}/resume", json={"x": 1}, headers=h).status_code == 400
    assert client.post(f"/api/plays/{left}/resume", data="{}", headers=h, content_type="text/plain").status_code == 415
    assert create_app(c).test_client().post(f"/api/plays/{left}/resume", json={}).status_code == 401
    assert c.store.last_seq() == before and c.host.game_id == current
