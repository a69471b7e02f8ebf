"""Every bad input answered 4xx naming what is wrong, nothing changed; nothing but strict JSON goes out.

Python's json reads NaN, Infinity and 1e999; a browser's JSON.parse reads none of them, so one such
number stored in an event left the page unable to read /api/events, /api/record or its stream.
"""

import json

import pytest

from companion.foundation import strict_json
from companion.games.refusals import glossary
from companion.web import create_app
from companion.web.feed import sse


@pytest.fixture
def client(companion):
    return create_app(companion).test_client()


def strict(text):
    """json.loads as JSON.parse: the bare words are not JSON."""
    def refuse(word):
        raise AssertionError(f"{word} in the daemon's JSON: {text[:200]}")
    return json.loads(text, parse_constant=refuse)


def post_raw(client, path, text, content_type="application/json"):
    return client.post(path, data=text, content_type=content_type)


@pytest.mark.parametrize("word", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_a_non_finite_number_in_an_action_is_refused_naming_where(client, companion, word):
    before = companion.store.last_seq()
    r = post_raw(client, "/api/action", f'{{"action": {{"type": "roll", "value": 3, "x": [1, {word}]}}}}')
    assert r.status_code == 400
    assert "action.x[1]" in r.get_json()["error"] and "finite" in r.get_json()["error"]
    assert companion.store.last_seq() == before
    strict(client.get("/api/events?after=0").get_data(as_text=True))
    for line in client.get("/api/record").get_data(as_text=True).splitlines():
        strict(line)


@pytest.mark.parametrize("path,body,where", [
    ("/api/new_game", '{"game": "risk", "options": {"players": NaN}}', "options.players"),
    ("/api/roll", '{"value": Infinity}', "value"),
    ("/api/dice", '{"n": NaN}', "n"),
    ("/api/login", '{"pin": NaN}', "pin"),
])
def test_non_finite_numbers_are_refused_in_every_body(client, companion, path, body, where):
    before = companion.store.last_seq()
    r = post_raw(client, path, body)
    assert r.status_code == 400 and r.get_json()["error"].startswith(f"{where} is ")
    assert companion.store.last_seq() == before


def test_a_non_finite_number_in_a_game_record_is_refused_naming_its_line(client, companion):
    record = client.get("/api/record").get_data(as_text=True)
    before = companion.store.last_seq()
    bad = record + '{"kind": "action", "body": {"action": {"type": "roll", "value": 2, "extra": NaN}}}\n'
    r = post_raw(client, "/api/record", bad, "application/x-ndjson")
    assert r.status_code == 400
    assert "line 2" in r.get_json()["error"] and "body.action.extra is NaN" in r.get_json()["error"]
    assert companion.store.last_seq() == before


def test_the_host_refuses_non_finite_numbers_from_any_source(companion):
    from companion.games.base import RuleError

    before = companion.store.last_seq()
    with pytest.raises(RuleError, match=r"action\.x is NaN"):
        companion.host.act({"type": "roll", "value": 3, "x": float("nan")}, source="button")
    with pytest.raises(RuleError, match=r"options\.pawns is Infinity"):
        companion.host.new_game("balance_duels", {"pawns": float("inf")})
    with pytest.raises(ValueError):     # the store's own guard, below every caller
        companion.store.append(companion.host.game_id, "action", {"action": {"x": float("nan")}}, "test")
    assert companion.store.last_seq() == before


def test_what_the_daemon_sends_is_strict_json(client, companion):
    with pytest.raises(ValueError):
        sse({"x": float("nan")}, event="state")
    with pytest.raises(ValueError):
        strict_json.dumps([float("inf")])
    with client.application.app_context():
        with pytest.raises(ValueError):
            client.application.json.dumps({"x": float("nan")})


@pytest.mark.parametrize("path,name,bound", [
    ("/api/events?after=9223372036854775808", "after", "9223372036854775807"),
    ("/api/events?after=-1", "after", "0 to"),
    ("/api/events?after=" + "9" * 5000, "after", "9223372036854775807"),
    ("/api/stream?last_event_id=9223372036854775808", "Last-Event-ID", "9223372036854775807"),
    ("/api/stream?last_event_id=-5", "Last-Event-ID", "0 to"),
])
def test_numbers_in_queries_are_bounded(client, path, name, bound):
    r = client.get(path)
    assert r.status_code == 400
    assert name in r.get_json()["error"] and bound in r.get_json()["error"]


def test_events_after_the_largest_sequence_number_is_empty(client):
    r = client.get("/api/events?after=9223372036854775807")
    assert r.status_code == 200 and r.get_json() == []


@pytest.mark.parametrize("options", [{"setup": []}, {"setup": {}}, {"variant": []}, {"first": {}},
                                     {"capitals": {"Red": []}}, {"airfield_reach": [1]}])
def test_mistyped_game_options_get_the_engines_message(client, companion, options):
    before = companion.store.last_seq()
    r = client.post("/api/new_game", json={"game": "risk", "options": {"players": ["Red", "Blue"], **options}})
    assert r.status_code == 409, r.get_json()
    key = next(iter(options))
    # named as the New game form names it, not by its key (issue 36)
    words = glossary("risk")[key]
    assert words.lower() in r.get_json()["error"].lower() and f"'{key}'" not in r.get_json()["error"]
    record = json.dumps({"seq": 1, "game_id": 1, "kind": "new_game",
                         "body": {"game": "risk", "options": {"players": ["Red", "Blue"], **options}}})
    r = post_raw(client, "/api/record", record + "\n", "application/x-ndjson")
    assert r.status_code == 409 and r.get_json()["error"].startswith("line 1: ") and words in r.get_json()["error"].lower()
    assert companion.store.last_seq() == before


def test_a_store_that_cannot_save_asks_to_try_again_later(client, companion, monkeypatch):
    from companion.store import StoreError

    def full(*args, **kwargs):
        raise StoreError("database or disk is full")

    monkeypatch.setattr(companion.store, "append", full)
    r = client.post("/api/roll", json={"value": 3})
    assert r.status_code == 503 and "nothing changed" in r.get_json()["error"]
    assert int(r.headers["Retry-After"]) > 0


def test_a_reading_gone_nan_is_shown_unknown_not_a_500(client, companion, monkeypatch):
    # the arm's follower gives the readings the page shows, over the sensors' own
    for source in (companion.sensors, companion.arm):
        monkeypatch.setattr(source, "live", lambda real=source.live: {**real(), "weight_g": float("nan"),
                                                                     "torque_gmm": float("inf")})
    r = client.get("/api/state")
    assert r.status_code == 200
    live = strict(r.get_data(as_text=True))["live"]
    assert live["weight_g"] is None and live["torque_gmm"] is None
    feed = client.application.extensions["stream_feed"]
    strict(feed.live().decode().split("data: ", 1)[1])
