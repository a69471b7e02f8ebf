"""`companion plays`: the exports on the command line, reading the store (and the history's cache) without
writing a byte, beside a running daemon too; bad arguments are one line and exit code 2."""

import dataclasses
import hashlib
import io
import json
import os
import sqlite3
import subprocess
import sys

import pytest

from companion.cli import _parser
from companion.config import parse
from companion.simulation import plays as sim
from companion.store import EventStore, StoreError
from companion.table.daemon import Companion
from companion.table.plays_command import cmd_plays
from companion.web import create_app


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = cmd_plays(_parser().parse_args(["plays", *argv]), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None


@pytest.fixture(scope="module")
def night(tmp_path_factory):
    d = tmp_path_factory.mktemp("plays-command")
    truth = sim.write_store(d / "db.sqlite3", sim.make_plays(30, seed=41), seed=41)
    return d, d / "db.sqlite3", truth


def test_the_csv_is_the_apis(night):
    d, db, truth = night
    code, out, err = run("--csv", "--db", str(db), "--tz", "UTC")
    assert code == 0 and err.strip() == f"companion plays: 30 of 30 plays from {db}"
    assert not out.startswith("\ufeff")                 # no byte-order mark on a pipe unless asked
    c = Companion(dataclasses.replace(parse({"simulate": {"enabled": True, "demo": False, "seed": 7}}),
                                      store_path=db))
    try:
        c.history.warm()
        client = create_app(c).test_client()
        api = client.get("/api/plays/export?format=csv&tz=UTC").get_data().decode("utf-8")
        bg = json.loads(client.get("/api/plays/export?format=bgstats&tz=Europe/Berlin").get_data())
        js = json.loads(client.get("/api/plays/export?format=json").get_data())
    finally:
        c.stop()
    assert api == "\ufeff" + out
    code, out, _ = run("--json", "--bgstats", "--db", str(db), "--tz", "Europe/Berlin")
    assert code == 0 and json.loads(out) == bg
    code, out, _ = run("--json", "--db", str(db))
    assert code == 0 and json.loads(out) == js and len(js["plays"]) == len(truth)


def test_it_writes_not_a_byte_beside_the_store(tmp_path):
    db = tmp_path / "db.sqlite3"
    sim.write_store(db, sim.make_plays(12, seed=42), seed=42)
    before = {p.name: digest(p) for p in tmp_path.iterdir()}
    code, out, err = run("--json", "--bgstats", "--db", str(db), "--tz", "UTC")
    assert code == 0 and len(json.loads(out)["plays"]) == 12
    after = {p.name: digest(p) for p in tmp_path.iterdir()}
    assert after["db.sqlite3"] == before["db.sqlite3"]
    # no acknowledgement record, no backups, no cache: only SQLite's own empty side files of a reader
    assert set(after) - set(before) <= {"db.sqlite3-wal", "db.sqlite3-shm"}
    assert not (tmp_path / "db.sqlite3-wal").exists() or (tmp_path / "db.sqlite3-wal").stat().st_size == 0


def test_a_daemons_cache_is_read_and_left_as_it_was(tmp_path):
    db = tmp_path / "db.sqlite3"
    sim.write_store(db, sim.make_plays(12, seed=43), seed=43)
    c = Companion(dataclasses.replace(parse({"simulate": {"enabled": True, "demo": False, "seed": 7}}),
                                      store_path=db))
    c.history.warm()
    cache = tmp_path / "db.plays.sqlite3"
    assert cache.exists()
    try:
        # the daemon still running (its store and cache open): a play added since the cache was written
        c.host.new_game("risk", {"players": ["Ann", "Bob"]})
        kept = digest(cache)
        code, out, err = run("--json", "--db", str(db))
        assert code == 0, err
        body = json.loads(out)
        assert body["total"] == 13 and body["plays"][0]["game"] == "risk"
        assert digest(cache) == kept
    finally:
        c.stop()


def test_the_real_command_beside_a_running_daemon(tmp_path):
    db = tmp_path / "db.sqlite3"
    sim.write_store(db, sim.make_plays(8, seed=44), seed=44)
    c = Companion(dataclasses.replace(parse({"simulate": {"enabled": True, "demo": False, "seed": 7}}),
                                      store_path=db))
    try:
        c.host.new_game("balance_duels", {"players": 2, "names": ["Zoë", "=1+1"]})
        # a terminal that is not UTF-8: the export is UTF-8 all the same
        env = {**os.environ, "PYTHONIOENCODING": "latin-1"}
        r = subprocess.run([sys.executable, "-m", "companion", "plays", "--csv", "--db", str(db), "--tz", "UTC",
                            "-o", str(tmp_path / "out.csv")], capture_output=True, text=True, timeout=120, env=env)
        assert r.returncode == 0, r.stderr
        text = (tmp_path / "out.csv").read_bytes().decode("utf-8")
        assert "Zoë" in text and ",'=1+1," in text
        assert text.endswith("\r\n") and "\n" not in text.replace("\r\n", "")        # CRLF line ends only
        r = subprocess.run([sys.executable, "-m", "companion", "plays", "--json", "--db", str(db)],
                           capture_output=True, timeout=120, env=env)
        assert r.returncode == 0, r.stderr
        body = json.loads(r.stdout.decode("utf-8"))
        assert body["total"] == 9 and body["plays"][0]["players"][0]["name"] == "Zoë"
    finally:
        c.stop()


@pytest.mark.parametrize("argv,words", [
    ([], "give one of --csv or --json"),
    (["--csv", "--json"], "give one of --csv or --json"),
    (["--csv", "--bgstats"], "--bgstats goes with --json"),
    (["--json", "--bom"], "--bom is for --csv"),
    (["--json", "--tz", "UTC"], "--tz is for --csv and --bgstats"),
    (["--csv", "--limit", "0"], "--limit must be a whole number from 1 to 10000, not '0'"),
    (["--csv", "--limit", "ten"], "--limit must be a whole number"),
    (["--csv", "--offset", "-1"], "--offset must be a whole number from 0 to 1000000"),
    (["--csv", "--since", "yesterday"], "--since must be a date (2026-03-14)"),
    (["--csv", "--since", "2026-02-01", "--until", "2026-01-01"], "--until must come after --since"),
    (["--csv", "--status", "done"], "--status must be one of all, finished, unfinished"),
    (["--csv", "--tz", "Mars/Olympus"], "--tz 'Mars/Olympus' is no time zone"),
    (["--csv", "--game", "chess"], "--game must be one of balance_duels"),
    (["--csv", "--player", "x" * 25], "--player must be a name of 1 to 24 characters"),
    (["--csv", "--config", "/nonexistent/companion.toml"], "no such config file"),
])
def test_bad_arguments_are_one_line_and_exit_code_2(night, argv, words):
    d, db, truth = night
    code, out, err = run(*argv, "--db", str(db))
    assert code == 2 and out == "" and len(err.splitlines()) == 1 and words in err, err


def test_a_store_that_is_not_there_or_not_one(tmp_path):
    code, out, err = run("--csv", "--db", str(tmp_path / "none.sqlite3"))
    assert code == 1 and out == "" and "no event store there" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "none.sqlite3").exists()
    (tmp_path / "junk.sqlite3").write_bytes(b"not a database" * 100)
    code, out, err = run("--csv", "--db", str(tmp_path / "junk.sqlite3"))
    assert code == 1 and "cannot open the event store to read it" in err


def test_the_read_only_store_refuses_to_write_and_reads_an_old_one(tmp_path):
    old = tmp_path / "old.sqlite3"
    con = sqlite3.connect(old)
    con.execute("CREATE TABLE events (seq INTEGER PRIMARY KEY AUTOINCREMENT, game_id INTEGER NOT NULL, kind TEXT NOT "
                "NULL, body TEXT NOT NULL, source TEXT NOT NULL, at TEXT NOT NULL)")
    con.execute("INSERT INTO events VALUES (1, 1, 'new_game', "
                "'{\"game\":\"risk\",\"options\":{\"players\":[\"Ann\",\"Bob\"]}}', 'page', "
                "'2024-01-01T20:00:00+00:00')")
    con.commit()
    con.close()
    kept = digest(old)
    store = EventStore(old, read_only=True)
    try:
        assert store.game_events_stamped(1)[0].clock is None and store.last_seq() == 1
        with pytest.raises(StoreError, match="opened read-only"):
            store.append(1, "action", {"action": {"type": "end_turn"}}, "t")
        with pytest.raises(StoreError, match="opened read-only"):
            store.append_people({"op": "rename", "name": "Ann", "to": "Anna"}, "t")
    finally:
        store.close()
    code, out, err = run("--csv", "--db", str(old), "--tz", "UTC")
    assert code == 0, err
    rows = out.splitlines()
    assert len(rows) == 3 and ",2024-01-01T20:00:00+00:00,unknown," in rows[1]
    assert digest(old) == kept                          # not even the clock column added
