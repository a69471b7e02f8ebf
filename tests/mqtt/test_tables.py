"""Three simulated tables publishing to a real Mosquitto broker; the hall scoreboard; Home Assistant discovery."""

import json
import time

from companion.mqtt import payloads as P
from companion.mqtt.hall import create_hall_app
from tests.mqtt.conftest import HALL, RISK_PAIR, board_for, wait_until, win_risk
from tests.mqtt.floods import Stranger, announce_flood



def play(table, rolls):
    """Roll and play the first listed move, as the page would."""
    host = table.host
    for value in rolls:
        host.act({"type": "roll", "value": value})
        move = host.snapshot()["view"]["moves"][0]["move"]
        host.act({"type": "move", "move": move})


def test_three_tables_on_the_hall_page(broker, tables, watchers):
    events = watchers(broker.port, [f"companion/{HALL}/+/event"])
    ts = [tables(broker.port, f"t{i}") for i in (1, 2, 3)]
    board = board_for(broker)
    try:
        wait_until(lambda: all(t.publisher.status()["state"] == "connected" for t in ts), what="tables connected")
        play(ts[0], [1, 2])
        play(ts[1], [3])
        ts[2].host.new_game("risk", {})
        client = create_hall_app(board).test_client()

        def shows_all():
            data = client.get("/api/tables").get_json()
            got = {t["table"]: t for t in data["tables"]}
            return data if set(got) == {"t1", "t2", "t3"} and all(
                got[t.name]["seq"] == t.host.seq and got[t.name]["online"] is True for t in ts) else None

        data = wait_until(shows_all, what="all three tables on the hall page")
        assert data["hall"] == HALL and data["broker"]["state"] == "connected"
        got = {t["table"]: t for t in data["tables"]}
        for t in ts:
            snap = t.host.snapshot()
            row = got[t.name]
            assert row["title"] == snap["title"] and row["game"] == snap["game"]
            assert row["scores"] == [{"name": n, "score": s} for n, s in snap["scores"].items()]
            assert row["message"] == snap["view"]["message"]
        assert got["t1"]["balance"]["margin"] == ts[0].host.snapshot()["view"]["margin"]
        assert got["t3"]["game"] == "risk" and got["t3"]["balance"] is None

        # every event once, in order, QoS 1
        def all_events():
            seen = {}
            for payload in events.on(f"companion/{HALL}/t1/event"):
                ev = json.loads(payload)
                seen.setdefault(ev["table"], []).append(ev["seq"])
            return seen.get("t1") == [e.seq for e in ts[0].host.events_after(1)]
        wait_until(all_events, what="t1's events")
        first = json.loads(events.on(f"companion/{HALL}/t1/event")[0])
        assert first["kind"] == "action" and first["body"]["action"] == {"type": "roll", "value": 1}
        assert first["source"] == "page" and first["hall"] == HALL

        # the page itself, in the table page's style, with no external requests
        page = client.get("/")
        assert page.status_code == 200
        html = page.data.decode()
        assert "/static/style.css" in html and "/hall/hall.js" in html and "http" not in html.replace("http-equiv", "")
        for asset in ("/static/style.css", "/hall/hall.js", "/hall/hall.css"):
            assert client.get(asset).status_code == 200, asset
        assert client.get("/nowhere").get_json()["error"].startswith("no such page")
    finally:
        board.stop()


def test_the_hall_stream_sends_the_tables(broker, tables):
    t = tables(broker.port, "t1")
    board = board_for(broker)
    try:
        wait_until(lambda: board.snapshot()["tables"], what="the table on the board")
        client = create_hall_app(board, refresh_s=0.2).test_client()
        resp = client.get("/api/stream", buffered=False)
        assert resp.mimetype == "text/event-stream"
        chunks = resp.response
        assert next(chunks).decode().startswith("retry:")
        first = next(chunks).decode()
        assert first.startswith("event: tables\ndata: ")
        data = json.loads(first.split("data: ", 1)[1])
        assert data["tables"][0]["table"] == "t1"
        t.host.act({"type": "roll", "value": 5})
        deadline = time.monotonic() + 5
        seen = None
        while time.monotonic() < deadline and seen != t.host.seq:
            # then only what changed: the table's new card once its state has come through the broker
            message = next(chunks).decode()
            assert message.startswith("event: changes\ndata: ")
            data = json.loads(message.split("data: ", 1)[1])
            seen = next((c["seq"] for c in data["tables"] if c["table"] == "t1"), seen)
        assert seen == t.host.seq
        resp.close()
    finally:
        board.stop()


def test_on_change_returns_at_once_and_the_queue_is_bounded_while_the_broker_is_away(mosquitto_bin, tmp_path,
                                                                                      tables, watchers):
    from tests.mqtt.conftest import Broker

    broker = Broker(mosquitto_bin, tmp_path / "late-broker")   # its port is free: nobody listens yet
    t = tables(broker.port, "t1", queue_limit=3)
    wait_until(lambda: t.publisher.status()["last_error"], what="a connection error")
    status = t.publisher.status()
    assert status["state"] in ("connecting", "disconnected") and "cannot reach" in status["last_error"]
    assert "ConnectionRefusedError" in status["last_error"]
    started = time.monotonic()
    for value in (1, 2, 3, 4, 5):
        t.host.act({"type": "roll", "value": value})
        t.host.undo()
    assert time.monotonic() - started < 3.0   # ten changes, none waiting for the network (generous: a busy machine)
    wait_until(lambda: t.publisher.status()["dropped"] == 7, what="the oldest events dropped")
    assert t.publisher.status()["queued"] == 3
    broker.start()
    try:
        w = watchers(broker.port, [f"companion/{HALL}/t1/#"])
        wait_until(lambda: t.publisher.status()["state"] == "connected", what="the table connected by itself")
        wait_until(lambda: t.publisher.status()["queued"] == 0, what="the queue drained")
        wait_until(lambda: w.last(f"companion/{HALL}/t1/availability") == b"online", what="retained availability")
        state = wait_until(lambda: w.last(f"companion/{HALL}/t1/state"), what="retained state")
        assert json.loads(state)["seq"] == t.host.seq
        status = t.publisher.status()
        assert status["published_events"] == 3 and status["down_for_s"] is None
    finally:
        broker.stop()


def test_home_assistant_discovery_republished_on_announce_and_removed(broker, tables, watchers):
    t = tables(broker.port, "t1", name="Window")
    wait_until(lambda: t.publisher.status()["state"] == "connected", what="connected")
    cfg = t.publisher.config
    topics = P.discovery_topics(cfg)
    w = watchers(broker.port, ["homeassistant/#"])
    wait_until(lambda: all(w.on(topic) for topic in topics), what="retained discovery configs")
    game = json.loads(w.last("homeassistant/sensor/companion_testhall_t1/game/config"))
    assert game["device"]["name"] == "Window" and game["state_topic"] == f"companion/{HALL}/t1/state"
    tipped = json.loads(w.last("homeassistant/binary_sensor/companion_testhall_t1/tipped/config"))
    assert tipped["availability_mode"] == "all"
    before = len(w.on(topics[0]))
    w.publish("homeassistant/status", "online")   # Home Assistant (re)started
    wait_until(lambda: len(w.on(topics[0])) > before, what="discovery republished")
    w.publish("homeassistant/status", "offline")

    assert t.publisher.remove(timeout=5)
    fresh = watchers(broker.port, ["homeassistant/#"])
    fresh.sync()
    assert not [t for t in topics if fresh.on(t)], "an empty retained config removes the entity"
    # and an announce after the removal does not bring it back
    w.publish("homeassistant/status", "online")
    time.sleep(0.3)
    assert fresh.on(topics[0]) == []


def test_a_flood_of_home_assistant_announces_republishes_discovery_once_per_interval(broker, tables, watchers):
    from companion.foundation.clock import FakeClock
    from companion.mqtt.publisher import ANNOUNCE_MIN_S

    t = tables(broker.port, "t1", start=False)
    clock = t.publisher.announce_clock = FakeClock()
    t.publisher.start()
    wait_until(lambda: t.publisher.status()["state"] == "connected", what="connected")
    topic = P.discovery_topics(t.publisher.config)[0]
    w = watchers(broker.port, ["homeassistant/#"])
    wait_until(lambda: w.on(topic), what="the retained discovery config")
    before = len(w.on(topic))
    # a flood within one instant of the announce clock: 50 announces, junk on the same topic among them
    flood = announce_flood(t.publisher.config.discovery_prefix, 67)
    assert sum(payload == b"online" for _, payload in flood) == 50
    stranger = Stranger(broker.port)
    try:
        stranger.publish_all(flood, retain=False)
    finally:
        stranger.close()
    wait_until(lambda: t.publisher.status()["announces_ignored"] == 49, what="49 announces ignored")
    wait_until(lambda: len(w.on(topic)) == before + 1, what="one republish")
    w.sync()
    assert len(w.on(topic)) == before + 1
    clock.advance(ANNOUNCE_MIN_S - 1)
    w.publish("homeassistant/status", "online")
    wait_until(lambda: t.publisher.status()["announces_ignored"] == 50, what="still within the interval")
    clock.advance(1)   # the interval is over: the next announce is honoured again, once
    for _ in range(20):
        w.publish("homeassistant/status", "online")
    wait_until(lambda: t.publisher.status()["announces_ignored"] == 69, what="19 more ignored")
    wait_until(lambda: len(w.on(topic)) == before + 2, what="the second republish")
    w.sync()
    assert len(w.on(topic)) == before + 2


def test_two_publishers_of_one_table_get_their_own_client_ids_and_do_not_knock_each_other_off(broker, tables):
    from companion.mqtt.publisher import TablePublisher

    t = tables(broker.port, "t1")
    wait_until(lambda: t.publisher.status()["state"] == "connected", what="connected")
    other = TablePublisher(t.companion, t.publisher.config)   # the same table's config: the same documented id
    prefix = f"companion-{HALL}-t1-"
    assert t.publisher.client_id != other.client_id
    assert t.publisher.client_id.startswith(prefix) and other.client_id.startswith(prefix)
    assert len(t.publisher.client_id) > len(prefix) and len(other.client_id) > len(prefix)
    other.start()
    try:
        wait_until(lambda: other.status()["state"] == "connected", what="the second one connected")
        time.sleep(0.5)
        # with one id the broker would have dropped the first (a takeover) and it would have reconnected
        assert t.publisher.status()["state"] == "connected" and t.publisher._connection == 1
    finally:
        other.stop()


def test_a_clean_stop_publishes_what_is_pending_then_offline(broker, tables, watchers):
    t = tables(broker.port, "t1")
    wait_until(t.settled, what="connected")
    w = watchers(broker.port, [f"companion/{HALL}/t1/event"])
    first = t.host.seq + 1
    for value in range(1, 7):   # a burst, then the daemon stops at once
        t.host.act({"type": "roll", "value": value})
        t.host.undo()
    t.publisher.stop()
    fresh = watchers(broker.port, [f"companion/{HALL}/t1/#"])
    fresh.sync()
    assert fresh.last(f"companion/{HALL}/t1/availability") == b"offline"
    assert json.loads(fresh.last(f"companion/{HALL}/t1/state"))["seq"] == t.host.seq
    wait_until(lambda: [json.loads(p)["seq"] for p in w.on(f"companion/{HALL}/t1/event")]
               == list(range(first, t.host.seq + 1)), what="every event of the burst, in order")
    assert t.publisher.status()["state"] == "disconnected"


def test_the_plays_summary_follows_the_games(broker, tables, watchers, tmp_path):
    """The retained plays topic: published once the history is built, and again when a game ends (the winner) and
    when a new one starts; made for the month the publisher's clock says, None while the Pi's clock is not set."""
    from datetime import datetime, timezone

    from companion.simulation import plays as sim

    sim.write_store(tmp_path / "t1.sqlite3", sim.make_plays(8, seed=4), seed=4)   # its first night synced
    t = tables(broker.port, "t1", start=False)
    synced = [True]
    t.publisher.wall = lambda: (datetime(2025, 1, 20, 12, tzinfo=timezone.utc), synced[0])
    t.publisher.start()
    topic = f"companion/{HALL}/t1/plays"
    w = watchers(broker.port, [topic])
    first = json.loads(wait_until(lambda: w.last(topic), what="the retained plays summary"))
    expected = t.companion.history.summary((2025, 1))
    assert first == {"hall": HALL, "table": "t1", "name": "t1", **expected}
    assert first["plays"] == 8 and first["month"] == "2025-01" and first["plays_this_month"] > 0
    host = t.host
    host.new_game("risk", RISK_PAIR)
    wait_until(lambda: json.loads(w.last(topic))["plays"] == 9, what="the new game counted")
    who, _ = win_risk(host)
    last = wait_until(lambda: (json.loads(w.last(topic))["last"] or {}).get("play_id") == host.game_id
                      and json.loads(w.last(topic))["last"], what="the game's winner published")
    assert last["winners"] == [who] and last["game"] == "risk" and last["ended"] == "elimination"
    # the Pi's clock found not set: the month is not known, nothing is counted in it
    synced[0] = False
    host.new_game("balance_duels", {"players": 2, "names": ["Cy", "Dee"]})
    after = wait_until(lambda: json.loads(w.last(topic))["plays"] == 10 and json.loads(w.last(topic)),
                       what="the summary without a month")
    assert after["month"] is None and after["plays_this_month"] is None and after["last"] == last
    # a moment's events do not republish it: only a game's start or end, the month or a new link
    count = len(w.on(topic))
    host.act({"type": "roll", "value": 3})
    w.sync()
    time.sleep(0.5)
    assert len(w.on(topic)) == count
