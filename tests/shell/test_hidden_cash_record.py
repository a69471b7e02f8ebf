"""Issue 34 item 6: hidden cash (Imperial's Separate Funds) stays out of /api/events, /api/record and MQTT events."""

import collections
import dataclasses
import json
import threading

import pytest

from companion.config import parse
from companion.config.mqtt import MqttConfig
from companion.foundation.clock import FakeClock
from companion.mqtt import payloads as P
from companion.mqtt.publisher import TablePublisher
from companion.table.daemon import Companion
from companion.web import create_app

PIN = "2468"
SECRET = 987     # Ann's corrected cash: a number no other field of a fresh game holds


@pytest.fixture
def table(tmp_path):
    cfg = dataclasses.replace(parse({"simulate": {"enabled": True, "demo": False}, "web": {"pin": PIN}}),
                              store_path=tmp_path / "db.sqlite3")
    c = Companion(cfg, clock=FakeClock())
    c.host.new_game("imperial", {"players": ["Ann", "Bob", "Cy"]})
    c.host.act({"type": "hide_cash", "player": "Ann", "hidden": True})
    c.host.act({"type": "correct", "what": "cash", "player": "Ann", "value": SECRET, "reason": "miscounted"})
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
