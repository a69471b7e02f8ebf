"""The Flask app on a Companion with the simulated table (Flask's test client; no sockets)."""

import dataclasses
import json

import pytest

from companion.web import create_app


@pytest.fixture
def client(companion):
    app = create_app(companion)
    return app.test_client()


def test_page_and_assets_are_served_locally(client):
    page = client.get("/")
    assert page.status_code == 200 and b"<title>Table Companion</title>" in page.data
    for asset in (b"/static/app.js", b"/static/style.css"):
        assert asset in page.data
        assert client.get(asset.decode()).status_code == 200
    # no external requests: every src/href is local
    html = page.data.decode()
    assert "http://" not in html and "https://" not in html


def test_state_json(client):
    s = client.get("/api/state").get_json()
    assert s["game"] == "balance_duels" and isinstance(s["seq"], int)
    view = s["view"]
    assert len(view["holders"]) == 14 and view["tip_torque"] > 0 and view["to_move"] == 1
    assert s["live"]["simulated"] is True and {d["name"] for d in s["live"]["devices"]} >= {"load0", "accelerometer"}


def test_roll_move_undo_through_the_api(client):
    r = client.post("/api/roll", json={"value": 3})
    assert r.status_code == 200
    view = r.get_json()["state"]["view"]
    assert view["roll"] == 3 and view["moves"] and view["moves"][0]["verdict"] in ("safe", "risky", "tips")
    move = view["moves"][0]["move"]
    r = client.post("/api/action", json={"action": {"type": "move", "move": move}})
    assert r.status_code == 200 and r.get_json()["state"]["view"]["to_move"] == 2
    r = client.post("/api/undo", json={})
    assert r.status_code == 200 and r.get_json()["state"]["view"]["roll"] == 3


def test_companion_rolls_the_die(client):
    r = client.post("/api/roll", json={})
    assert 1 <= r.get_json()["state"]["view"]["roll"] <= 6


@pytest.mark.parametrize("method,path,body,status,needle", [
    ("get", "/nowhere", None, 404, "no such page"),
    ("delete", "/api/state", None, 405, "not allowed"),
    ("post", "/api/action", "not json", 400, "JSON object"),
    ("post", "/api/action", [1, 2], 400, "JSON object"),
    ("post", "/api/action", {"action": "roll"}, 400, "action"),
    ("post", "/api/action", {"action": {"type": "fly"}}, 409, "unknown Balance Duels action"),
    ("post", "/api/action", {"action": {"type": "roll", "value": 7}}, 409, "1 to 6"),
    ("post", "/api/roll", {"value": "six"}, 400, "whole number"),
    ("post", "/api/undo", {}, 409, "nothing to undo"),
    ("post", "/api/new_game", {"game": 5}, 400, "'game'"),
    ("post", "/api/new_game", {"game": "chess"}, 409, "unknown game"),
    ("post", "/api/new_game", {"game": "balance_duels", "options": {"players": 12}}, 409, "players"),
    ("post", "/api/buttons/launch", {}, 404, "no button"),
    ("get", "/api/events?after=x", None, 400, "whole number"),
])
def test_bad_requests_get_a_json_error_and_change_nothing(client, method, path, body, status, needle):
    before = client.get("/api/state").get_json()["seq"]
    kwargs = {}
    if isinstance(body, str):
        kwargs = {"data": body, "content_type": "application/json"}
    elif body is not None:
        kwargs = {"json": body}
    r = getattr(client, method)(path, **kwargs)
    assert r.status_code == status
    assert needle in r.get_json()["error"]
    assert client.get("/api/state").get_json()["seq"] == before


def test_buttons_roll_select_confirm_and_refuse_out_of_turn(client, companion):
    assert client.post("/api/buttons/confirm", json={}).status_code == 409  # nothing rolled yet
    assert companion.indicators.buzzes == 1
    client.post("/api/buttons/roll", json={})
    seq = companion.host.seq
    client.post("/api/buttons/next", json={})
    r = client.post("/api/buttons/confirm", json={})
    assert r.status_code == 200 and companion.host.seq == seq + 1
    r = client.post("/api/buttons/undo", json={"hold": True})
    assert r.status_code == 200 and companion.host.seq == seq + 2


def test_record_is_json_lines(client):
    client.post("/api/roll", json={"value": 2})
    r = client.get("/api/record")
    lines = [json.loads(line) for line in r.data.decode().splitlines()]
    assert [e["kind"] for e in lines] == ["new_game", "action"] and lines[1]["body"]["action"]["value"] == 2


def test_indicators_follow_the_risk(companion):
    host = companion.host
    host.act({"type": "roll", "value": 1})
    assert companion.indicators.light == "green"
    # build a position where some move tips: seat 1 piles pawns on the right end
    from companion.games import balance_duels as bd

    for roll in (1, 1):
        state = host.state
        move = next(m for m in bd.legal_moves(companion.model, state, state.roll) if m.kind == "place")
        host.act({"type": "move", "move": move.to_dict()})
        host.act({"type": "roll", "value": roll})
    view = host.snapshot()["view"]
    assert view["indicator"] in ("green", "amber")


def test_stream_cap_answers_503(companion):
    companion.config = dataclasses.replace(companion.config, max_streams=1)
    app = create_app(companion)
    c = app.test_client()
    first = c.get("/api/stream", buffered=False)
    assert first.status_code == 200
    second = c.get("/api/stream")
    assert second.status_code == 503 and second.headers["Retry-After"] and "too many" in second.get_json()["error"]
    first.close()


def test_a_downloaded_record_loads_back_as_a_game(client):
    client.post("/api/roll", json={"value": 4})
    move = client.get("/api/state").get_json()["view"]["moves"][0]["move"]
    client.post("/api/action", json={"action": {"type": "move", "move": move}})
    client.post("/api/roll", json={"value": 2})
    client.post("/api/undo", json={})
    record = client.get("/api/record").data
    before = client.get("/api/state").get_json()
    r = client.post("/api/record", data=record, content_type="application/x-ndjson")
    assert r.status_code == 200
    after = r.get_json()["state"]
    assert after["game_id"] != before["game_id"] and after["view"] == before["view"]


def rolls_record(pairs: int) -> bytes:
    """A Balance Duels record: a roll and its undo, `pairs` times (every line legal, the game back where it began)."""
    lines = [{"kind": "new_game", "body": {"game": "balance_duels", "options": {}}}]
    for n in range(pairs):
        lines += [{"kind": "action", "body": {"action": {"type": "roll", "value": 1 + n % 6}}}, {"kind": "undo"}]
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


def test_a_record_that_fails_to_be_written_midway_changes_nothing(client, companion):
    import sqlite3

    client.post("/api/roll", json={"value": 5})
    before = client.get("/api/state").get_json()
    seq = companion.store.last_seq()
    record = rolls_record(20)
    # SQLite itself refuses the load's 6th event, as a full disk would: the first five are inside the transaction
    con = sqlite3.connect(str(companion.store.path))
    con.execute(f"CREATE TRIGGER full AFTER INSERT ON events WHEN NEW.seq > {seq + 5} "
                "BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END")
    con.commit()
    try:
        r = client.post("/api/record", data=record, content_type="application/x-ndjson")
        assert r.status_code == 503 and "nothing changed" in r.get_json()["error"]
        assert companion.store.last_seq() == seq and companion.store.latest_game() == before["game_id"]
        after = client.get("/api/state").get_json()
        assert {k: after[k] for k in ("seq", "game_id", "view")} == {k: before[k] for k in ("seq", "game_id", "view")}
        con.execute("DROP TRIGGER full")
        con.commit()
    finally:
        con.close()
    r = client.post("/api/record", data=record, content_type="application/x-ndjson")
    assert r.status_code == 200
    loaded = companion.store.game_events(r.get_json()["game_id"])
    assert len(loaded) == 41 and r.get_json()["seq"] == loaded[-1].seq == seq + 41


def test_a_record_loads_whole_while_another_tablet_plays(companion):
    import threading

    app = create_app(companion)
    record = rolls_record(60)
    lines = [json.loads(line) for line in record.splitlines()]
    uploads, plays = [], []

    def upload():
        c = app.test_client()
        for _ in range(6):
            r = c.post("/api/record", data=record, content_type="application/x-ndjson")
            uploads.append((r.status_code, r.get_json().get("game_id")))

    def play():
        c = app.test_client()
        for n in range(80):
            plays.append(c.post("/api/roll", json={"value": 1 + n % 6}).status_code)
            plays.append(c.post("/api/undo", json={}).status_code)

    threads = [threading.Thread(target=upload), threading.Thread(target=play)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [status for status, _ in uploads] == [200] * 6 and set(plays) <= {200, 409}
    store = app.extensions["companion"].store
    for _, game_id in uploads:
        events = store.game_events(game_id)
        # the record's events, one after another: no roll of the other tablet in between
        assert [e.seq for e in events[:len(lines)]] == list(range(game_id, game_id + len(lines)))
        assert [e.kind for e in events[:len(lines)]] == [line["kind"] for line in lines]
        assert all(e.kind == "undo" or e.body == line["body"] for e, line in zip(events[1:], lines[1:]))


@pytest.mark.parametrize("record,needle", [
    (b"not json\n", "line 1 of the game record is not JSON"),
    (b'{"kind": "action", "body": {}}\n', "line 1 of the record must be its new_game"),
    (b'{"kind": "new_game", "body": {"game": "balance_duels", "options": {}}}\n'
     b'{"kind": "action", "body": {"action": {"type": "roll", "value": 9}}}\n', "line 2: a die shows 1 to 6"),
    (b'{"kind": "new_game", "body": {"game": "balance_duels", "options": {}}}\n{"kind": "undo"}\n', "line 2: an undo"),
    (b"[" * 20000 + b"\n", "line 1 of the game record is nested too deeply"),
    (b'{"kind": "new_game", "body": {"game": "balance_duels", "options": {"x": ' + b"[" * 900 + b"]" * 900
     + b"}}}\n", "line 1"),
])
def test_a_bad_record_is_refused_whole(client, record, needle):
    before = client.get("/api/state").get_json()["seq"]
    r = client.post("/api/record", data=record, content_type="application/x-ndjson")
    assert r.status_code in (400, 409) and needle in r.get_json()["error"]
    assert client.get("/api/state").get_json()["seq"] == before



def test_imperial_with_a_random_deal_stores_the_cards_dealt(client):
    r = client.post("/api/new_game", json={"game": "imperial", "options": {"players": ["Ann", "Bob", "Cy", "Di"],
                                                                         "deal": "random"}})
    assert r.status_code == 200
    deal = r.get_json()["state"]["options"]["deal"]
    assert sorted(deal) == ["Ann", "Bob", "Cy", "Di"] and all(len(v) == 1 for v in deal.values())
    assert len({v[0] for v in deal.values()}) == 4


def test_the_first_page_is_small(client):
    """Everything the first page loads (HTML, scripts, styles) stays under 256 KB, and under 64 KB on the Wi-Fi:
    a browser that takes gzip (every tablet's) gets it compressed, byte for byte the same once unpacked."""
    import gzip
    import re

    html = client.get("/").data
    total, wire = len(html), len(client.get("/", headers={"Accept-Encoding": "gzip"}).data)
    for path in re.findall(rb'(?:src|href)="(/static/[^"]+)"', html):
        plain = client.get(path.decode())
        assert plain.status_code == 200 and "Content-Encoding" not in plain.headers, path
        packed = client.get(path.decode(), headers={"Accept-Encoding": "gzip, deflate"})
        assert packed.headers.get("Content-Encoding") == "gzip" and packed.headers["Vary"] == "Accept-Encoding", path
        assert gzip.decompress(packed.data) == plain.data
        total += len(plain.data)
        wire += len(packed.data)
    assert total < 256 * 1024, f"first page is {total / 1024:.0f} KB"
    assert wire < 64 * 1024, f"first page is {wire / 1024:.0f} KB compressed"


def test_a_compressed_asset_is_revalidated_not_sent_again(client):
    first = client.get("/static/app.js", headers={"Accept-Encoding": "gzip"})
    tag = first.headers["ETag"]
    assert tag.endswith('-gzip"')
    again = client.get("/static/app.js", headers={"Accept-Encoding": "gzip", "If-None-Match": tag})
    assert again.status_code == 304 and not again.data
    assert client.get("/static/nothing-here.js", headers={"Accept-Encoding": "gzip"}).status_code == 404
