"""The history's HTTP endpoints through the app: bounds on every parameter, 4xx naming the problem, GETs read-only."""

import dataclasses

import pytest

from companion.config import parse
from companion.simulation import plays as sim
from companion.table.daemon import Companion
from companion.web import create_app

PIN = "2468"


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    d = tmp_path_factory.mktemp("api")
    truth = sim.write_store(d / "db.sqlite3", sim.make_plays(24, seed=21), seed=21)
    data = {"simulate": {"enabled": True, "demo": False, "seed": 7}, "web": {"pin": PIN}}
    c = Companion(dataclasses.replace(parse(data), store_path=d / "db.sqlite3"))
    c.history.warm()
    app = create_app(c)
    yield c, app, truth
    c.stop()


@pytest.fixture
def client(table):
    return table[1].test_client()


def login(client):
    r = client.post("/api/login", json={"pin": PIN})
    return r.get_json()["csrf"]


def test_plays_newest_first_with_the_current_game(client, table):
    c, app, truth = table
    body = client.get("/api/plays?limit=200").get_json()
    # the daemon's own game at start-up (the store's newest game is the current one) is among them
    assert body["total"] == 24 and [p["id"] for p in body["plays"]] == sorted(truth, reverse=True)
    assert [p["current"] for p in body["plays"]].count(True) == 1 and body["plays"][0]["current"]


@pytest.mark.parametrize("query,words", [
    ("limit=0", "'limit' must be a whole number from 1 to 200"),
    ("limit=201", "from 1 to 200"),
    ("limit=abc", "'limit'"),
    ("offset=-1", "'offset'"),
    ("offset=99999999999", "'offset'"),
    ("game=chess", "'game' must be one of"),
    ("status=done", "'status' must be one of all, finished, unfinished"),
    ("since=yesterday", "'since' must be a date"),
    ("since=2026-01-01T10:00:00", "has no offset"),
    ("since=2026-02-01&until=2026-01-01", "'until' must come after 'since'"),
    ("player=" + "x" * 25, "'player' must be a name of 1 to 24 characters"),
    ("colour=red", "unknown query parameter(s) 'colour'"),
])
def test_bad_queries_are_refused_by_name(client, query, words):
    r = client.get("/api/plays?" + query)
    assert r.status_code == 400 and words in r.get_json()["error"], r.get_json()


def test_a_play_in_full_and_unknown_ones(client, table):
    c, app, truth = table
    gid = next(g for g, t in truth.items() if t.game == "balance_duels")
    full = client.get(f"/api/plays/{gid}").get_json()
    assert full["id"] == gid and "score_series" in full and "torque_series" in full and full["tip_torque"] > 0
    assert client.get("/api/plays/999999").status_code == 404
    assert client.get("/api/plays/0").status_code == 400
    assert client.get("/api/plays/abc").status_code == 400
    assert client.get(f"/api/plays/{gid}?x=1").status_code == 400


def test_a_date_filter(client, table):
    c, app, truth = table
    every = client.get("/api/plays?limit=200").get_json()["plays"]
    known = sorted(p["start"]["at"] for p in every)
    middle = known[len(known) // 2]
    later = client.get(f"/api/plays?limit=200&since={middle.replace('+', '%2B')}").get_json()
    assert later["total"] == sum(1 for t in known if t >= middle)


def test_reads_change_nothing(client, table):
    c, app, truth = table
    before = c.store.last_seq()
    for path in ("/api/plays", "/api/plays?limit=3&status=finished"):
        assert client.get(path).status_code == 200
    assert c.store.last_seq() == before
