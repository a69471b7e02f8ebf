"""Issue 34 item 6: hidden cash (Imperial's Separate Funds) stays out of /api/events, /api/record and MQTT events."""

import collections
import dataclasses
import json
import random
import re
import threading

import pytest

from companion.config import parse
from companion.config.mqtt import MqttConfig
from companion.foundation.clock import FakeClock
from companion.games.imperial_rules import NATIONS, RONDEL
from companion.mqtt import payloads as P
from companion.mqtt.publisher import TablePublisher
from companion.table.daemon import Companion
from companion.web import create_app

PIN = "2468"
SECRET = 987     # Ann's corrected cash: a number no other field of a fresh game holds


def hidden_cash_table(path, sections: dict, cash: int = SECRET) -> Companion:
    """Imperial with Ann's cash hidden, then corrected to `cash` (the simulated table has sensors: a flight recorder)."""
    cfg = dataclasses.replace(parse({"simulate": {"enabled": True, "demo": False}, **sections}), store_path=path)
    c = Companion(cfg, clock=FakeClock())
    c.host.new_game("imperial", {"players": ["Ann", "Bob", "Cy"]})
    c.host.act({"type": "hide_cash", "player": "Ann", "hidden": True})
    c.host.act({"type": "correct", "what": "cash", "player": "Ann", "value": cash, "reason": "miscounted"})
    return c


@pytest.fixture
def table(tmp_path):
    c = hidden_cash_table(tmp_path / "db.sqlite3", {"web": {"pin": PIN}})
    yield c, create_app(c)
    c.stop()


def test_the_log_and_record_need_the_pin_while_cash_is_hidden(table):
    c, app = table
    assert c.host.cash_hidden()
    stranger = app.test_client()
    events = stranger.get("/api/events")
    assert events.status_code == 200 and str(SECRET) not in events.get_data(as_text=True)
    assert [e["kind"] for e in events.get_json()][-1] and all("body" not in e for e in events.get_json())
    record = stranger.get("/api/record")
    assert record.status_code == 401 and str(SECRET) not in record.get_data(as_text=True)

    player = app.test_client()
    assert player.post("/api/login", json={"pin": PIN}).status_code == 200
    assert str(SECRET) in player.get("/api/events").get_data(as_text=True)
    record = player.get("/api/record")
    assert record.status_code == 200 and str(SECRET) in record.get_data(as_text=True)

    # shown again: the log is everyone's once more
    c.host.act({"type": "hide_cash", "player": "Ann", "hidden": False})
    assert not c.host.cash_hidden()
    assert str(SECRET) in stranger.get("/api/events").get_data(as_text=True)
    assert stranger.get("/api/record").status_code == 200


def test_mqtt_events_carry_only_kind_and_seq_while_cash_is_hidden(table):
    c, _ = table
    cfg = MqttConfig(host="broker.lan", table="t1")
    correction = c.host.store.game_events(c.host.game_id)[-1].to_dict()
    hidden = P.event_payload(correction, cfg, cash_hidden=True)
    assert hidden == {"hall": cfg.hall, "table": "t1", "seq": correction["seq"], "kind": correction["kind"]}
    assert str(SECRET) not in P.dumps(hidden)
    shown = P.event_payload(correction, cfg)
    assert shown["body"] == correction["body"] and str(SECRET) in json.dumps(shown)


def test_the_publisher_asks_the_host_before_queueing_events(table):
    """The publisher's own queue gets the cut-down payload while cash is hidden."""
    c, _ = table
    pub = TablePublisher.__new__(TablePublisher)    # only what _collect_events touches; no broker, no thread
    pub.host, pub.config, pub._lock = c.host, MqttConfig(host="broker.lan", table="t1"), threading.Lock()
    pub._queue, pub._dropped, pub._event_seq = collections.deque(), 0, c.host.seq - 2
    pub._collect_events()
    sent = [json.loads(m) for m in pub._queue]
    assert sent and all(set(m) == {"hall", "table", "seq", "kind"} for m in sent)
    assert all(str(SECRET) not in m for m in pub._queue)


def _stream_after(app, seq: int) -> str:
    """What a page resuming at `seq` is sent first (its events, the newest with the state), as text."""
    client = app.test_client()
    resp = client.get("/api/stream", headers={"Last-Event-ID": str(seq)}, buffered=False)
    try:
        chunks = iter(resp.response)
        assert next(chunks).startswith(b"retry:")
        return b"".join(next(chunks) for _ in range(2)).decode()
    finally:
        resp.close()


def test_a_page_resuming_its_stream_is_sent_the_events_in_outline_while_cash_is_hidden(table):
    """The stream once sent each event whole to a page catching up (Last-Event-ID), the correction's amount too."""
    c, app = table
    correction = c.host.store.game_events(c.host.game_id)[-1]
    c.host.act({"type": "donate", "player": "Bob", "nation": "china", "amount": 1})   # so the correction is not last
    sent = _stream_after(app, correction.seq - 1)
    assert f"id: {correction.seq}\n" in sent and str(SECRET) not in sent
    first = json.loads(sent.split("data: ", 1)[1].split("\n", 1)[0])
    assert first["event"] == correction.outline() and first["state"] is None
    # shown again: the events go whole, as /api/events gives them
    c.host.act({"type": "hide_cash", "player": "Ann", "hidden": False})
    c.host.act({"type": "donate", "player": "Bob", "nation": "china", "amount": 1})
    again = json.loads(_stream_after(app, c.host.seq - 2).split("data: ", 1)[1].split("\n", 1)[0])
    assert again["event"]["body"] == {"action": {"type": "hide_cash", "player": "Ann", "hidden": False}}


@pytest.fixture
def open_table(tmp_path):
    """A table without a PIN, its cash hidden and corrected."""
    c = hidden_cash_table(tmp_path / "db.sqlite3", {})
    yield c, create_app(c)
    c.stop()


def test_without_a_pin_the_record_and_the_flight_recorder_stay_closed_while_cash_is_hidden(open_table):
    """No PIN means no session to give them to: refused (403, saying when they open), never sent unseen."""
    c, app = open_table
    client = app.test_client()
    for path, what in (("/api/record", "the game record"), ("/api/flight-recorder", "the flight recorder")):
        r = client.get(path)
        assert r.status_code == 403, (path, r.status_code)
        assert what in r.get_json()["error"] and "shown" in r.get_json()["error"] and str(SECRET).encode() not in r.data
        assert "pin_required" not in r.get_json()
    c.host.act({"type": "hide_cash", "player": "Ann", "hidden": False})
    assert client.get("/api/record").status_code == 200 and client.get("/api/flight-recorder").status_code == 200


# --- what a reader without the PIN learns of hidden cash: nothing (two tables that differ only in Ann's cash)

WALL = re.compile(rb'"at": ?"[^"]*"|"live": ?\{.*?\}\}(?=[,}])|"played_s": ?[\d.]+')


def _imperial_action(view: dict, rng: random.Random) -> dict | str:
    """A move a table might make now (most of them legal): the game runs on through bonds, the rondel, taxes,
    interest, the investor and Swiss banks. Never Ann's own cash toggle or a correction of it: those would show it."""
    players = [p["name"] for p in view["players"]]
    r = rng.random()
    if r < 0.04:
        return "undo"
    if r < 0.09:
        return {"type": "donate", "player": rng.choice(players), "nation": rng.choice(NATIONS),
                "amount": rng.choice((1, 2, 5))}
    phase = view["phase"]
    if phase in ("investor", "draft"):
        decision = view["decision"]
        if decision["choices"] and rng.random() < 0.8:
            choice = rng.choice(decision["choices"])
            action = {"type": "invest", "player": decision["player"], "nation": choice["nation"], "value": choice["value"]}
            if choice["trade_in"] is not None:
                action["trade_in"] = choice["trade_in"]
            return action
        return {"type": "pass", "player": decision["player"]}
    if phase == "rondel":
        return {"type": "rondel", "nation": view["to_move"], "target": rng.choice(RONDEL)}
    if phase == "pass_check":
        return rng.choice(({"type": "allow_pass"}, {"type": "block_pass", "player": rng.choice(players)}))
    return {"factory": {"type": "build_factory", "city": rng.choice(("brown1", "brown2", "blue1", "blue2"))},
            "production": {"type": "produce"}, "import": {"type": "import", "units": ["army"]}}.get(phase, {"type": "skip"})


def _what_a_stranger_reads(c, app, answer) -> dict:
    stranger = app.test_client()
    host, cfg = c.host, MqttConfig(host="broker.lan", table="t1")
    record = stranger.get("/api/record")
    last = host.store.game_events(host.game_id)[-1]
    return {
        "answer": answer,
        "state": WALL.sub(b"", stranger.get("/api/state").data),
        "events": WALL.sub(b"", stranger.get("/api/events").data),
        "record": (record.status_code, record.data if record.status_code != 200 else b"the whole record"),
        "stream": WALL.sub(b"", _stream_after(app, max(0, host.seq - 3)).encode()),
        "mqtt state": WALL.sub(b"", P.dumps(P.state_payload(host.snapshot(), cfg)).encode()),
        "mqtt event": WALL.sub(b"", P.dumps(P.event_payload(last.to_dict(), cfg, cash_hidden=host.cash_hidden())).encode()),
    }


def test_nothing_a_reader_without_the_pin_sees_depends_on_the_hidden_cash(tmp_path):
    """Two tables play the same moves; Ann hides her cash on both, then the table corrects it to 600 on one and to 900
    on the other. Every answer, refusal, state, log line, Undo text, event, stream message and MQTT payload a reader
    without the PIN gets must be the same on both, byte for byte (wall-clock times aside), or it tells them apart."""
    tables = []
    for i, cash in enumerate((600, 900)):
        c = hidden_cash_table(tmp_path / f"t{i}.sqlite3", {"web": {"pin": PIN}}, cash)
        player = create_app(c).test_client()
        assert player.post("/api/login", json={"pin": PIN}).status_code == 200
        csrf = player.get("/api/session").get_json()["csrf"]
        tables.append((c, player.application, player, csrf))
    rng = random.Random(1)
    try:
        kinds, phases = collections.Counter(), set()
        for step in range(80):
            view = tables[0][0].host.snapshot()["view"]
            phases.add(view["phase"])
            action = _imperial_action(view, rng)
            seen = []
            for c, app, player, csrf in tables:
                if action == "undo":
                    r = player.post("/api/undo", json={}, headers={"X-CSRF-Token": csrf})
                else:
                    r = player.post("/api/action", json={"action": action}, headers={"X-CSRF-Token": csrf})
                seen.append(_what_a_stranger_reads(c, app, (r.status_code, r.get_json().get("error"))))
            differs = [k for k in seen[0] if seen[0][k] != seen[1][k]]
            assert not differs, (step, action, differs, [s[differs[0]] for s in seen])
            kinds[action if action == "undo" else action["type"]] += r.status_code == 200
        assert all(c.host.cash_hidden() for c, *_ in tables)
        # the moves that pay Ann or make her pay were among them: bonds, the rondel, the investor round
        assert kinds["invest"] >= 3 and kinds["rondel"] >= 10 and "investor" in phases, (kinds, phases)
    finally:
        for c, *_ in tables:
            c.stop()
