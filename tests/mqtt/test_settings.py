"""The [mqtt] section and the payloads, without a broker."""

import dataclasses
import json

import pytest

from companion.config import ConfigError, parse
from companion.table.daemon import Companion
from companion.mqtt import payloads as P
from companion.mqtt.hall import HallBoard, create_hall_app
from companion.config.mqtt import MqttConfig, parse_mqtt


def test_absent_or_disabled_means_off():
    assert parse_mqtt(None, "c.toml") is None
    assert parse_mqtt({"enabled": False}, "c.toml") is None


def test_defaults_and_topics():
    cfg = parse_mqtt({"host": "broker.lan", "table": "t1"}, "c.toml")
    assert cfg == MqttConfig(host="broker.lan", table="t1")
    assert (cfg.port, cfg.hall, cfg.queue_limit, cfg.discovery, cfg.discovery_prefix) == (1883, "main", 1000, True,
                                                                                         "homeassistant")
    assert cfg.base_topic == "companion/main/t1" and cfg.display_name == "t1"
    assert P.state_topic(cfg) == "companion/main/t1/state"
    assert P.event_topic(cfg) == "companion/main/t1/event"
    assert P.availability_topic(cfg) == "companion/main/t1/availability"
    assert P.plays_topic(cfg) == "companion/main/t1/plays"


def test_password_is_not_in_repr():
    cfg = parse_mqtt({"host": "b", "table": "t", "username": "u", "password": "s3cret"}, "c.toml")
    assert cfg.password == "s3cret" and "s3cret" not in repr(cfg)


def test_tls_defaults_to_port_8883_and_files_are_relative_to_the_config(tmp_path):
    import ssl

    ca = tmp_path / "ca.pem"
    # any valid PEM certificate will do: take one from the system store if there is one
    paths = ssl.get_default_verify_paths()
    import glob
    import os
    found = [p for p in glob.glob(os.path.join(paths.capath or "/etc/ssl/certs", "*.pem")) if os.path.isfile(p)]
    if not found:
        pytest.skip("no system CA certificate to copy for the test")
    ca.write_bytes(open(found[0], "rb").read())
    cfg = parse_mqtt({"host": "b", "table": "t", "ca_file": "ca.pem"}, "c.toml", base_dir=tmp_path)
    assert cfg.tls and cfg.port == 8883 and cfg.ca_file == ca


@pytest.mark.parametrize("section,where,needle", [
    (5, "[mqtt]", "must be a table"),
    ({"table": "t"}, "[mqtt] host", "is required"),
    ({"host": "b"}, "[mqtt] table", "is required"),
    ({"host": "b", "table": "t", "colour": 1}, "[mqtt] colour", "unknown key"),
    ({"host": "", "table": "t"}, "[mqtt] host", "host name or address"),
    ({"host": "mqtt://b", "table": "t"}, "[mqtt] host", "host name or address"),
    ({"host": "b", "table": "t/1"}, "[mqtt] table", "one MQTT topic level"),
    ({"host": "b", "table": "t+"}, "[mqtt] table", "letters, digits"),
    ({"host": "b", "table": "t", "hall": "#"}, "[mqtt] hall", "letters, digits"),
    ({"host": "b", "table": "t", "hall": 3}, "[mqtt] hall", "must be a string"),
    ({"host": "b", "table": "t", "port": 0}, "[mqtt] port", "1 to 65535"),
    ({"host": "b", "table": "t", "port": "1883"}, "[mqtt] port", "whole number"),
    ({"host": "b", "table": "t", "port": True}, "[mqtt] port", "whole number"),
    ({"host": "b", "table": "t", "enabled": "yes"}, "[mqtt] enabled", "true or false"),
    ({"host": "b", "table": "t", "name": ""}, "[mqtt] name", "1-64 printable"),
    ({"host": "b", "table": "t", "password": "x"}, "[mqtt] password", "needs a username"),
    ({"host": "b", "table": "t", "username": ""}, "[mqtt] username", "must not be empty"),
    ({"host": "b", "table": "t", "tls": False, "tls_insecure": True}, "[mqtt] tls_insecure", "needs tls = true"),
    ({"host": "b", "table": "t", "ca_file": "nowhere.pem"}, "[mqtt] ca_file", "no such file"),
    ({"host": "b", "table": "t", "keepalive_s": 1}, "[mqtt] keepalive_s", "5 to 3600"),
    ({"host": "b", "table": "t", "queue_limit": 0}, "[mqtt] queue_limit", "1 to 100000"),
    ({"host": "b", "table": "t", "reconnect_min_s": 0.0}, "[mqtt] reconnect_min_s", "0.1 to 300"),
    ({"host": "b", "table": "t", "reconnect_min_s": 5, "reconnect_max_s": 2}, "[mqtt] reconnect_max_s",
     "at least reconnect_min_s"),
    ({"host": "b", "table": "t", "reconnect_max_s": float("inf")}, "[mqtt] reconnect_max_s", "finite"),
    ({"host": "b", "table": "t", "discovery_prefix": "home/"}, "[mqtt] discovery_prefix", "trailing"),
    ({"host": "b", "table": "t", "discovery_prefix": "ha/#"}, "[mqtt] discovery_prefix", "must not contain"),
])
def test_every_problem_names_file_section_and_key(section, where, needle):
    with pytest.raises(ConfigError) as err:
        parse_mqtt(section, "companion.toml")
    msg = str(err.value)
    assert msg.startswith(f"companion.toml: {where}: "), msg
    assert needle in msg


def test_bad_certificate_files_are_config_errors(tmp_path):
    (tmp_path / "ca.pem").write_text("not a certificate\n")
    with pytest.raises(ConfigError, match=r"\[mqtt\] ca_file: is not a usable CA"):
        parse_mqtt({"host": "b", "table": "t", "ca_file": "ca.pem"}, "c.toml", base_dir=tmp_path)
    with pytest.raises(ConfigError, match=r"\[mqtt\] key_file: needs cert_file"):
        parse_mqtt({"host": "b", "table": "t", "tls": True, "key_file": "ca.pem"}, "c.toml", base_dir=tmp_path)


@pytest.fixture
def companion(tmp_path):
    cfg = dataclasses.replace(parse({"simulate": {"enabled": True, "demo": False, "seed": 4}}),
                              store_path=tmp_path / "db.sqlite3")
    c = Companion(cfg)
    yield c
    c.stop()


CFG = MqttConfig(host="b", table="t1", hall="club", name="Window table")


def test_state_payload_for_balance_duels(companion):
    host = companion.host
    host.act({"type": "roll", "value": 2})
    state = P.state_payload(host.snapshot(), CFG)
    view = host.snapshot()["view"]
    assert state["hall"] == "club" and state["table"] == "t1" and state["name"] == "Window table"
    assert state["game"] == "balance_duels" and state["title"] == "Balance Duels" and state["seq"] == host.seq
    assert state["to_move"] == view["players"][0]["name"] and state["message"] == view["message"]
    assert state["scores"] == [{"name": n, "score": s} for n, s in host.snapshot()["scores"].items()]
    assert state["balance"]["margin"] == view["margin"] and state["balance"]["tipped"] is False
    assert state["balance"]["roll"] == 2
    json.dumps(state, allow_nan=False)


def test_state_payload_for_another_game_has_no_balance(companion):
    companion.host.new_game("risk", {})
    state = P.state_payload(companion.host.snapshot(), CFG)
    assert state["game"] == "risk" and state["balance"] is None and state["scores"]
    assert all(isinstance(s["name"], str) for s in state["scores"])
    json.dumps(state, allow_nan=False)


@pytest.mark.parametrize("game", ["balance_duels", "imperial", "risk", "balance_of_power", "global_powers"])
def test_every_game_is_over_on_mqtt_when_it_is_over_with_its_winners_by_name(game):
    """Imperial's view says `game_over`, not `over`: the state payload read `over` alone, so a finished Imperial
    game was never over on MQTT. Each game played to its end (the history's simulated plays, whose truth is taken
    from the engine's own final state) must say so, with the winners by name and nobody to move."""
    import random
    from types import SimpleNamespace

    from companion.games import plays
    from companion.games.registry import engines
    from companion.simulation import plays as sim

    makers = {"balance_duels": lambda r: sim.balance_duels(r, sim.model_a(), False), "imperial": sim.imperial,
              "risk": sim.risk_game, "balance_of_power": sim.balance_of_power, "global_powers": sim.global_powers}
    play = makers[game](random.Random(5)) if game == "balance_duels" else makers[game](random.Random(5), False)
    assert play.over and play.winners, "the simulated play no longer ends: the test would test nothing"
    engine = engines(sim.model_a())[game]
    events = [SimpleNamespace(kind=kind, body=body, seq=i) for i, (kind, body) in enumerate(play.steps, start=1)]
    folded = plays.fold(engine, play.options, events)

    def payload(state):
        return P.state_payload({"game": game, "title": engine.title, "view": engine.view(state),
                                "scores": engine.scores(state)}, CFG)

    end = payload(folded.states[-1])
    assert end["over"] is True and end["winners"] == play.winners and end["to_move"] is None, end
    start = payload(folded.states[0])
    assert start["over"] is False and start["winners"] == []


def test_event_payload_carries_the_table():
    ev = {"seq": 3, "game_id": 1, "kind": "action", "body": {"action": {"type": "roll", "value": 4}},
          "source": "page", "at": "2024-01-01T00:00:00Z"}
    assert P.event_payload(ev, CFG) == {"hall": "club", "table": "t1", **ev}


def test_discovery_configs():
    msgs = P.discovery_messages(CFG)
    topics = [t for t, _ in msgs]
    assert topics == P.discovery_topics(CFG) and len(set(topics)) == len(topics)
    assert "homeassistant/binary_sensor/companion_club_t1/tipped/config" in topics
    assert "homeassistant/sensor/companion_club_t1/torque/config" in topics
    ids = set()
    for topic, payload in msgs:
        cfg = json.loads(payload)
        ids.add(cfg["unique_id"])
        summary = cfg["unique_id"].endswith(("_last_winner", "_plays_this_month"))
        assert cfg["state_topic"] == ("companion/club/t1/plays" if summary else "companion/club/t1/state")
        assert cfg["availability"][0] == {"topic": "companion/club/t1/availability"}
        assert cfg["device"]["identifiers"] == ["companion_club_t1"] and cfg["device"]["name"] == "Window table"
        assert "{{" in cfg["value_template"]
        if cfg.get("json_attributes_template"):
            assert cfg["json_attributes_topic"] == cfg["state_topic"]
    assert len(ids) == len(msgs)
    names = {json.loads(p)["name"] for _, p in msgs}
    assert {"Game", "Whose turn", "Scores", "Arm torque", "Tip margin", "Arm tipped", "Seat 1 score"} <= names
    assert {"Last winner", "Plays this month"} <= names


SUMMARY = {"plays": 41, "finished": 36, "month": "2025-01", "plays_this_month": 9,
           "last": {"play_id": 812, "game": "risk", "title": "Risk: Balance of Power", "winners": ["Ann", "Zoë"],
                    "ended": "elimination", "at": "2025-01-31T21:02:11+00:00", "quality": "synced"}}


def render(template, payload):
    """A Home Assistant template, rendered as HA does for an MQTT entity (value_json is the payload)."""
    import jinja2

    return jinja2.Environment().from_string(template).render(value_json=json.loads(payload)).strip()


def test_the_plays_summary_and_its_home_assistant_sensors():
    payload = P.dumps(P.plays_payload(SUMMARY, CFG))
    body = json.loads(payload)
    assert body == {"hall": "club", "table": "t1", "name": "Window table", **SUMMARY}
    configs = {json.loads(p)["unique_id"].removeprefix("companion_club_t1_"): json.loads(p)
               for _, p in P.discovery_messages(CFG)}
    winner, month = configs["last_winner"], configs["plays_this_month"]
    assert render(winner["value_template"], payload) == "Ann & Zoë"
    assert json.loads(render(winner["json_attributes_template"], payload)) == {
        "game": "Risk: Balance of Power", "ended": "elimination", "at": "2025-01-31T21:02:11+00:00",
        "time_quality": "synced"}
    assert render(month["value_template"], payload) == "9"
    assert json.loads(render(month["json_attributes_template"], payload)) == {"month": "2025-01", "plays": 41,
                                                                              "finished": 36}
    # a draw, no finished play yet, the Pi's clock not set
    draw = P.dumps(P.plays_payload({**SUMMARY, "last": {**SUMMARY["last"], "winners": []}}, CFG))
    assert render(winner["value_template"], draw) == "nobody"
    none = P.dumps(P.plays_payload({**SUMMARY, "last": None, "month": None, "plays_this_month": None}, CFG))
    assert render(winner["value_template"], none) == "None" and render(month["value_template"], none) == "None"
    assert render(winner["json_attributes_template"], none) == "{}"


def test_this_month_is_unknown_while_the_pis_clock_is_not_set():
    from datetime import datetime, timezone

    from companion.mqtt.publisher import this_month

    now = datetime(2026, 3, 14, 12, 0, tzinfo=timezone.utc)
    assert this_month(now, False) is None
    local = now.astimezone()
    assert this_month(now, True) == this_month(now, None) == (local.year, local.month)


def test_hall_board_ignores_bad_messages():
    board = HallBoard("127.0.0.1", 1883, "club")
    board.handle("companion/club/t1/state", b"{not json")
    board.handle("companion/club/t1/state", b"[1, 2]")
    board.handle("companion/club/t1/state", b'{"scores": [{"name": "a", "score": NaN}]}')
    board.handle("companion/club/t1/availability", b"maybe")
    board.handle("companion/other/t1/state", b"{}")
    snap = board.snapshot()
    assert snap["tables"] == [] and snap["broker"]["bad_payloads"] == 4
    board.handle("companion/club/t1/state", json.dumps({"title": "Risk", "scores": [{"name": "a", "score": 2},
                                                                                    {"name": 5}]}).encode())
    board.handle("companion/club/t1/availability", b"online")
    (t,) = board.snapshot()["tables"]
    assert t["title"] == "Risk" and t["scores"] == [{"name": "a", "score": 2}] and t["online"] is True
    # empty retained messages on both topics: the table left the hall
    board.handle("companion/club/t1/state", b"")
    board.handle("companion/club/t1/availability", b"")
    assert board.snapshot()["tables"] == []


def test_hall_board_keeps_who_won_once_the_game_is_over_bounded_like_the_scores():
    from companion.mqtt import hall as H

    board = HallBoard("127.0.0.1", 1883, "club")

    def card(state):
        board.handle("companion/club/t1/state", json.dumps(state).encode())
        return board.snapshot()["tables"][0]

    assert card({"over": True, "winners": ["Ann", "Bob"]})["winners"] == ["Ann", "Bob"]
    assert card({"over": True, "winners": []})["winners"] == []                  # a draw
    assert card({"over": False, "winners": ["Ann"]})["winners"] == []            # nobody has won before the end
    assert card({"over": True})["winners"] is None                               # a table that does not say
    assert card({"over": True, "winners": "Ann"})["winners"] is None
    # a hostile table: names that are not names are left out, a long one is cut, no more names than scores kept
    many = ["Ann", 5, "", None, "x" * 500, *(f"p{n}" for n in range(20))]
    won = card({"over": True, "winners": many})["winners"]
    assert len(won) == H.MAX_SCORES and won[:2] == ["Ann", "x" * (H.MAX_TEXT - 1) + "…"] and won[2] == "p0"
    assert board.snapshot()["dropped"] == {"tables": 0, "scores": 22 - H.MAX_SCORES, "cut_texts": 1}


def test_a_hall_flooded_with_large_retained_tables_stays_bounded_and_says_what_it_dropped():
    from companion.foundation.clock import FakeClock
    from companion.mqtt import hall as H

    clock = FakeClock()
    board = HallBoard("127.0.0.1", 1883, "club", clock=clock)
    good = {"name": "Window", "title": "Risk", "message": "Ann to move", "scores": [{"name": "Ann", "score": 3}]}
    board.handle("companion/club/good/availability", b"online")
    board.handle("companion/club/good/state", json.dumps(good).encode())
    big = "x" * 13_000
    for i in range(400):   # 400 retained states of about 40 kB from tables that never said online
        clock.advance(0.01)
        flood = {"name": big, "title": big, "message": big, "seq": i,
                 "scores": [{"name": f"p{n}", "score": n} for n in range(40)]}
        payload = json.dumps(flood).encode()
        assert 39_000 < len(payload) < H.MAX_PAYLOAD
        board.handle(f"companion/club/flood{i:03d}/state", payload)

    app = create_hall_app(board)
    resp = app.test_client().get("/api/tables")
    assert resp.status_code == 200
    body = resp.get_json()
    tables = {t["table"]: t for t in body["tables"]}
    assert len(tables) == H.MAX_TABLES
    assert len(resp.data) < 200_000, len(resp.data)       # was 16 MB
    assert body["dropped"] == {"tables": 400 - H.MAX_TABLES + 1, "scores": 400 * (40 - H.MAX_SCORES),
                               "cut_texts": 400 * 3}
    # the live table kept its card, untouched; the newest flood tables fill the rest, cut to the bounds
    assert tables["good"]["name"] == "Window" and tables["good"]["scores"] == good["scores"]
    assert "flood399" in tables and "flood000" not in tables
    last = tables["flood399"]
    assert len(last["scores"]) == H.MAX_SCORES
    assert all(len(last[k]) == H.MAX_TEXT and last[k].endswith("…") for k in ("name", "title", "message"))
    # a clearing message for a table the hall does not keep pushes nobody out
    board.handle("companion/club/flood000/state", b"")
    assert board.snapshot()["dropped"]["tables"] == 400 - H.MAX_TABLES + 1


def _messages(stream):
    """(event name, data) of each message the hall's stream yields, one per next()."""
    for chunk in stream:
        text = chunk.decode() if isinstance(chunk, bytes) else chunk
        if text.startswith("event: "):
            name, data = text.split("\n", 1)
            yield name[len("event: "):], json.loads(data[len("data: "):])


def test_the_hall_stream_sends_each_page_only_what_changed():
    """Item 12 of issue 34: the whole list went to every page on every change (16 MB a change in the flood). A page
    gets the whole list when it (re)connects, then only the cards of the tables that changed and the ids gone."""
    from companion.mqtt import hall as H

    board = HallBoard("127.0.0.1", 1883, "club")
    words = "w" * (H.MAX_TEXT - 1)
    for i in range(H.MAX_TABLES):        # a full hall of long (already bounded) cards
        board.handle(f"companion/club/t{i:02d}/availability", b"online")
        board.handle(f"companion/club/t{i:02d}/state", json.dumps(
            {"name": words, "title": words, "message": words, "seq": 1,
             "scores": [{"name": words, "score": n} for n in range(H.MAX_SCORES)]}).encode())
    client = create_hall_app(board, refresh_s=0.05).test_client()
    resp = client.get("/api/stream", buffered=False)
    try:
        stream = _messages(resp.response)
        name, whole = next(stream)
        assert name == "tables" and len(whole["tables"]) == H.MAX_TABLES
        full_size = len(json.dumps(whole))

        board.handle("companion/club/t07/state", json.dumps({"name": "Window", "title": "Risk", "seq": 2}).encode())
        name, changes = next(stream)
        assert name == "changes" and [t["table"] for t in changes["tables"]] == ["t07"] and changes["removed"] == []
        assert changes["tables"][0]["name"] == "Window" and changes["since"] == whole["version"]
        assert len(json.dumps(changes)) < full_size / 50, (len(json.dumps(changes)), full_size)

        # a table whose retained topics are both cleared leaves: its id goes, once it is gone
        board.handle("companion/club/t03/state", b"")
        board.handle("companion/club/t03/availability", b"")
        name, changes = next(stream)
        assert name == "changes" and changes["removed"] == ["t03"] and changes["tables"] == []
        # nothing new: the beat a page counts on, with nothing in it but the hall's head
        name, beat = next(stream)
        assert name == "changes" and beat["tables"] == [] and beat["removed"] == [] and beat["broker"]
    finally:
        resp.close()
    # a page that connects (or reconnects) starts from the whole list again
    again = client.get("/api/stream", buffered=False)
    try:
        name, whole = next(_messages(again.response))
        assert name == "tables" and len(whole["tables"]) == H.MAX_TABLES - 1
        assert "t03" not in {t["table"] for t in whole["tables"]}
    finally:
        again.close()


def test_a_page_further_behind_than_the_removals_the_hall_keeps_gets_the_whole_list():
    from companion.mqtt import hall as H

    board = HallBoard("127.0.0.1", 1883, "club")
    board.handle("companion/club/keep/availability", b"online")
    start = board.version
    for i in range(H.REMOVALS_KEPT + 1):       # tables come and go, more of them than the board remembers
        board.handle(f"companion/club/x{i}/availability", b"offline")
        board.handle(f"companion/club/x{i}/availability", b"")
    assert board.changes_since(start) is None
    recent = board.changes_since(board.version - 2)
    assert recent is not None and recent["removed"] == [f"x{H.REMOVALS_KEPT}"]
    assert board.changes_since(board.version + 1) is None           # not a version of this board
