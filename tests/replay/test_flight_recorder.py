"""The daemon's flight recorder, end to end: play at a simulated table, download the report, replay it."""

import dataclasses
import io
import json

import pytest

from companion.foundation.clock import FakeClock
from companion.config import parse
from companion.table.daemon import Companion
from companion.replay.commands import cmd_replay, compare
from companion.recorder.inputs import parse_lines
from companion.web import create_app

from .table_play import Players, fake_time_wait, real_time_wait, unpack


def replay_report(path):
    class Args:
        trace = path
        config = inputs = calibration = None
        no_calibration = False
    out, err = io.StringIO(), io.StringIO()
    code = cmd_replay(Args, out=out, err=err)
    assert code == 0, err.getvalue()
    return [json.loads(ln) for ln in out.getvalue().splitlines()], err.getvalue()


def events_of(lines):
    return [{k: ln[k] for k in ("t", "seq", "kind", "body", "source")} for ln in lines if "seq" in ln]


def stored_as_replayed(store_events):
    """The store's events as a replay names their sources."""
    out = []
    for e in store_events:
        source = "sensor" if e.source == "sensor" else "input"
        out.append((e.kind, e.body, source))
    return out


@pytest.fixture
def daemon(tmp_path):
    made = []

    def make(clock=None, **sections):
        data = {"simulate": {"enabled": True, "demo": False, "seed": 11}, **sections}
        c = Companion(dataclasses.replace(parse(data), store_path=tmp_path / f"db{len(made)}.sqlite3"), clock=clock)
        made.append(c)
        return c

    yield make
    for c in made:
        c.stop()


@pytest.mark.slow
def test_a_report_from_the_running_daemon_replays_event_for_event(daemon, tmp_path):
    """Threads, real time, the page and hands on the simulated arm: the replay makes the daemon's very decisions."""
    c = daemon()
    c.start()
    client = create_app(c).test_client()
    players = Players(c, client, real_time_wait, seed=4)
    how = [players.turn() for _ in range(7)]
    print("turns reached the game by", how)
    assert how.count("sensor") >= 3, how
    players.pause(1.0)
    r = client.get("/api/flight-recorder")
    assert r.status_code == 200 and r.mimetype == "application/gzip"
    assert r.headers["Content-Disposition"].startswith('attachment; filename="misread-')
    bundle = tmp_path / "report.tar.gz"
    bundle.write_bytes(r.data)
    files = unpack(r.data, tmp_path)
    assert set(files) == {"README.txt", "trace.csv", "inputs.jsonl", "config.toml", "calibration.toml", "game.jsonl",
                          "daemon.jsonl"}
    assert "companion replay trace.csv --config config.toml --inputs inputs.jsonl" in files["README.txt"].decode()
    lines, err = replay_report(bundle)
    daemon_lines = [json.loads(ln) for ln in files["daemon.jsonl"].decode().splitlines()]
    assert events_of(lines) == events_of(daemon_lines)
    assert "matches the daemon's" in err
    # and the same game as the store holds, source for source
    game = c.host.store.game_events(c.host.game_id)
    assert [(e["kind"], e["body"], "input" if e["source"] == "input" else "sensor") for e in events_of(lines)] == \
        stored_as_replayed(game)
    answered = [e for e in events_of(lines) if e["source"] == "answer"]
    assert len(answered) == how.count("answer")
    assert lines[-1]["summary"]["state"] == c.host.snapshot()["view"]


def test_a_window_that_no_longer_reaches_the_games_start_replays_from_it(daemon, tmp_path):
    """On a fake clock, deterministic: one minute kept of a longer game; the report starts with the game so far."""
    c = daemon(clock=FakeClock(100.0), recorder={"minutes": 1})
    wait = fake_time_wait(c)
    client = create_app(c).test_client()
    players = Players(c, client, wait, seed=9)
    wait(lambda: False, 3.0)
    how = []
    while c.table_time.last < 200:
        how.append(players.turn())
        players.pause(2.0)
    players.pause(1.0)
    r = client.get("/api/flight-recorder")
    files = unpack(r.data, tmp_path)
    inputs = parse_lines(files["inputs.jsonl"].decode().splitlines(), "inputs.jsonl")
    first_row_t = float(files["trace.csv"].decode().splitlines()[1].split(",")[0])
    assert first_row_t > 30, "the window has rolled past the game's start"
    before = [i for i in inputs if i.t < first_row_t]
    assert before[0].kind == "new_game" and len(before) > 4
    assert "(the game's earlier moves are replayed first" in files["README.txt"].decode()
    bundle = tmp_path / "report.tar.gz"
    bundle.write_bytes(r.data)
    lines, err = replay_report(bundle)
    daemon_lines = [json.loads(ln) for ln in files["daemon.jsonl"].decode().splitlines()]
    assert events_of(lines) == events_of(daemon_lines), err
    assert lines[-1]["summary"]["state"] == c.host.snapshot()["view"]
    assert c.recorder.bytes < 2 * 1024 * 1024


def test_the_report_needs_the_pin_and_carries_no_secrets(daemon, tmp_path):
    # a PIN of twelve digits: the bundle is full of numbers, where four digits could turn up by chance
    pin = "731952864031"
    c = daemon(web={"pin": pin}, mqtt={"host": "localhost", "table": "t1", "username": "u",
                                          "password": "hunter2"})
    client = create_app(c).test_client()
    r = client.get("/api/flight-recorder")
    assert r.status_code == 401 and r.get_json()["pin_required"] is True
    assert client.post("/api/login", json={"pin": pin}).status_code == 200
    r = client.get("/api/flight-recorder")
    assert r.status_code == 200
    files = unpack(r.data, tmp_path)
    everything = b"".join(files.values())
    assert pin.encode() not in everything and b"hunter2" not in everything and b"pbkdf2" not in everything
    assert b"[web]" not in files["config.toml"] and b"[mqtt]" not in files["config.toml"]


def test_a_table_without_sensors_has_no_report(daemon):
    c = Companion(dataclasses.replace(parse({"game": {"name": "risk", "players": 3}}),
                                      store_path=None), store=None) if False else None
    c = daemon()
    c.recorder = None
    r = create_app(c).test_client().get("/api/flight-recorder")
    assert r.status_code == 404 and "no sensors" in r.get_json()["error"]


def test_compare_names_where_a_replay_parts_from_the_daemon(tmp_path):
    mine = [{"t": 1.0, "seq": 1, "kind": "action", "body": {"a": 1}, "source": "input"}]
    theirs = tmp_path / "daemon.jsonl"
    theirs.write_text(json.dumps({**mine[0], "source": "sensor"}) + "\n")
    assert "parts from the daemon at event 1" in compare(mine, theirs)
    theirs.write_text(json.dumps(mine[0]) + "\n" + json.dumps(mine[0]) + "\n")
    assert compare(mine, theirs) == "the replay has 1 events, the daemon had 2"
