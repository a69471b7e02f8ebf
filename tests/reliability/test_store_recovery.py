"""Startup with a damaged event store: moved aside, said so, restored from a backup (or started clean) with every
event still readable in it salvaged."""

import logging
import os
import shutil
import sqlite3
import subprocess
import sys

import pytest

from companion.store import (EventStore, StoreError, inspect_database, list_backups, open_store)
from tests.reliability.harness import lost_in_notice

GAME = {"game": "balance_duels", "options": {"players": 2}}


def fill(store, games=1, actions=5, tag="x"):
    """Append `games` games of `actions` roll actions each; returns the events' seqs."""
    seqs = []
    for g in range(games):
        start = store.append(None, "new_game", GAME, "test")
        seqs.append(start.seq)
        for i in range(actions):
            seqs.append(store.append(start.game_id, "action", {"action": {"type": "roll", "value": i % 6 + 1},
                                                               "tag": tag}, "test").seq)
    return seqs


def all_events(store):
    return [(e.seq, e.kind, e.body) for e in store.events_after(0, limit=100000)]


def crash_copy(store, target):
    """The database and its WAL as a power cut would leave them: copied while the store is still open."""
    shutil.copyfile(store.path, target)
    wal = store.path.with_name(store.path.name + "-wal")
    if wal.exists():
        shutil.copyfile(wal, target.with_name(target.name + "-wal"))


def aside_files(directory, label):
    return sorted(p.name for p in directory.iterdir() if f".{label}-" in p.name)


def test_a_fresh_path_opens_empty_without_a_notice(tmp_path):
    store, notice = open_store(tmp_path / "new" / "events.sqlite3")
    assert notice is None and store.last_seq() == 0 and store.integrity_check() == "ok"
    store.close()


def test_a_good_store_opens_unchanged(tmp_path):
    db = tmp_path / "events.sqlite3"
    store = EventStore(db)
    fill(store, games=2)
    before = all_events(store)
    store.close()
    again, notice = open_store(db)
    assert notice is None and all_events(again) == before
    assert aside_files(tmp_path, "damaged") == []
    again.close()


def test_a_store_left_by_a_crash_keeps_every_event_in_its_wal(tmp_path):
    db = tmp_path / "events.sqlite3"
    code = ("import os, sys; from companion.store import EventStore\n"
            "s = EventStore(sys.argv[1]); g = s.append(None, 'new_game', {'game': 'balance_duels', 'options': {}}, 't')\n"
            "[s.append(g.game_id, 'action', {'n': i}, 't') for i in range(40)]\n"
            "os._exit(0)\n")
    subprocess.run([sys.executable, "-c", code, str(db)], check=True, timeout=30)
    assert db.with_name(db.name + "-wal").stat().st_size > 0     # the events are only in the WAL
    store, notice = open_store(db)
    assert notice is None and store.last_seq() == 41 and store.integrity_check() == "ok"
    store.close()


@pytest.mark.parametrize("damage", ["garbage", "empty", "header_only", "half", "missing_last_page"])
def test_damaged_file_without_backup_is_moved_aside_and_what_is_readable_kept(tmp_path, damage, caplog):
    db = tmp_path / "events.sqlite3"
    store = EventStore(db)
    fill(store, games=3, actions=60)
    before = all_events(store)
    store.close()
    data = db.read_bytes()
    damaged = {
        "garbage": os.urandom(len(data)),
        "empty": b"",
        "header_only": data[:100],
        "half": data[:len(data) // 2],
        "missing_last_page": data[:-4096],
    }[damage]
    db.write_bytes(damaged)
    with caplog.at_level(logging.ERROR, logger="companion.store"):
        fresh, notice = open_store(db, tmp_path / "backups")
    assert notice is not None and "moved aside" in notice and str(db) in notice
    assert any("moved aside" in r.getMessage() for r in caplog.records if r.levelno == logging.ERROR)
    moved = aside_files(tmp_path, "damaged")
    assert len(moved) == 1 and (tmp_path / moved[0]).read_bytes() == damaged   # kept as it was, for inspection
    kept = all_events(fresh)
    assert all(e in before for e in kept) and fresh.integrity_check() == "ok"     # salvaged exactly as written
    assert set(lost_in_notice(notice)) == {e[0] for e in before} - {e[0] for e in kept}
    assert ("empty store" in notice) == (not kept)
    # nothing of the events survives garbage, an empty file or a header alone; a file missing only its last page
    # keeps them; half a file keeps whatever leaf pages lie in that half (it depends on the rows' size)
    if damage != "half":
        assert (damage == "missing_last_page") == bool(kept)
    assert fresh.append(None, "new_game", GAME, "test").seq == 184     # and it works, numbering on
    fresh.close()


def test_damaged_file_is_replaced_by_the_newest_good_backup(tmp_path):
    db = tmp_path / "events.sqlite3"
    backups = tmp_path / "backups"
    store, _ = open_store(db, backups)
    fill(store, games=3, actions=4)        # a backup is taken before each new game after the first
    finished = all_events(store)
    fill(store, games=1, actions=7)        # its new game backs up the three finished ones; it is in none yet
    assert [b.last_seq for b in store.backups()] == [15, 10, 5]
    store.close()
    db.write_bytes(db.read_bytes()[:3000])
    restored, notice = open_store(db, backups)
    assert "Restored the newest good backup" in notice and "could be read" in notice
    assert lost_in_notice(notice) == {q: 16 for q in range(16, 24)}         # the game in no backup, named
    assert all_events(restored) == finished and restored.integrity_check() == "ok"
    restored.close()


def test_a_damaged_backup_is_skipped_for_an_older_good_one(tmp_path):
    db = tmp_path / "events.sqlite3"
    backups = tmp_path / "backups"
    store, _ = open_store(db, backups)
    fill(store, games=3, actions=2)
    store.close()
    newest, older = list_backups(backups, db.stem)
    newest.path.write_bytes(b"\0" * 8192)
    db.write_bytes(b"not a database at all" * 50)
    restored, notice = open_store(db, backups)
    assert newest.path.name in notice and "skipped" in notice
    assert restored.last_seq() == older.last_seq
    restored.close()


def test_a_wal_from_another_database_is_moved_aside(tmp_path):
    db, other = tmp_path / "events.sqlite3", tmp_path / "other.sqlite3"
    a = EventStore(db)
    fill(a, games=1, actions=30, tag="mine")
    a.close()
    b = EventStore(other)
    fill(b, games=2, actions=50, tag="theirs")
    crash_copy(b, tmp_path / "theirs.sqlite3")
    b.close()
    shutil.copyfile(tmp_path / "theirs.sqlite3-wal", db.with_name(db.name + "-wal"))
    # plain SQLite would replay it and show the other database's events
    con = sqlite3.connect(tmp_path / "theirs.sqlite3")
    assert con.execute("SELECT COUNT(*) FROM events").fetchone()[0] == 102
    con.close()
    store, notice = open_store(db)
    assert notice is not None and "write-ahead log did not belong" in notice
    mine = all_events(store)
    assert len(mine) == 31 and all(e[2].get("tag", "mine") == "mine" for e in mine)
    assert len(aside_files(tmp_path, "stale")) == 1
    store.close()


def test_an_older_wal_of_the_same_database_cannot_roll_it_back(tmp_path):
    db = tmp_path / "events.sqlite3"
    store = EventStore(db)
    fill(store, games=1, actions=20)
    old_wal = tmp_path / "old-wal"
    shutil.copyfile(db.with_name(db.name + "-wal"), old_wal)
    fill(store, games=1, actions=20)
    everything = all_events(store)
    store.close()                                      # checkpointed: the database file holds all 42 events
    shutil.copyfile(old_wal, db.with_name(db.name + "-wal"))
    again, notice = open_store(db)
    assert "did not belong" in notice
    assert all_events(again) == everything
    again.close()


def test_a_garbage_wal_is_ignored_and_loses_nothing(tmp_path):
    db = tmp_path / "events.sqlite3"
    store = EventStore(db)
    fill(store, games=1, actions=10)
    everything = all_events(store)
    store.close()
    db.with_name(db.name + "-wal").write_bytes(os.urandom(40000))
    again, notice = open_store(db)
    assert all_events(again) == everything and again.integrity_check() == "ok"
    assert notice is None        # SQLite rejects a WAL whose header and checksums do not match: nothing to report
    again.close()


def test_a_wal_without_its_database_is_not_replayed_into_a_new_one(tmp_path):
    db = tmp_path / "events.sqlite3"
    store = EventStore(db)
    fill(store, games=1, actions=10)
    crash_copy(store, tmp_path / "copy.sqlite3")
    store.close()
    db.unlink()
    shutil.copyfile(tmp_path / "copy.sqlite3-wal", db.with_name(db.name + "-wal"))
    fresh, notice = open_store(db)
    assert "moved aside" in notice and fresh.last_seq() == 0
    fresh.close()


@pytest.mark.parametrize("sql,why,lost", [
    ("UPDATE events SET body = 'not json' WHERE seq = 3", "not valid JSON", {3}),
    ("UPDATE events SET kind = 'teleport' WHERE seq = 2", "unknown kind", {2}),
    ("UPDATE events SET game_id = 99 WHERE seq = 4", "never started", {4}),
    ("DROP TABLE meta", "not a Table Companion event store", set()),
])
def test_rows_that_no_daemon_could_have_written_count_as_damage(tmp_path, sql, why, lost):
    db = tmp_path / "events.sqlite3"
    store = EventStore(db)
    fill(store)
    before = all_events(store)
    store.close()
    con = sqlite3.connect(db)
    con.execute(sql)
    con.commit()
    con.close()
    assert why in inspect_database(db).problem
    fresh, notice = open_store(db)
    assert why in notice and "moved aside" in notice
    # the other events are salvaged, the damaged one named
    assert all_events(fresh) == [e for e in before if e[0] not in lost] and set(lost_in_notice(notice)) == lost
    fresh.close()


def test_a_store_from_a_newer_version_is_refused_not_moved(tmp_path):
    db = tmp_path / "events.sqlite3"
    store = EventStore(db)
    fill(store)
    store.close()
    con = sqlite3.connect(db)
    con.execute("UPDATE meta SET value = '99' WHERE key = 'schema'")
    con.commit()
    con.close()
    with pytest.raises(StoreError, match="newer version"):
        open_store(db)
    assert db.exists() and aside_files(tmp_path, "damaged") == []


def test_a_store_in_use_by_another_process_is_refused(tmp_path):
    db = tmp_path / "events.sqlite3"
    code = ("import sys, time; from companion.store import EventStore\n"
            "s = EventStore(sys.argv[1]); s.append(None, 'new_game', {}, 't'); print('open', flush=True)\n"
            "sys.stdin.readline()\n")
    holder = subprocess.Popen([sys.executable, "-c", code, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout.readline().strip() == "open"
        with pytest.raises(StoreError, match="in use by another process"):
            open_store(db)
    finally:
        holder.communicate("\n", timeout=10)
    store, notice = open_store(db)
    assert notice is None and store.last_seq() == 1
    store.close()


def test_rolling_backups_keep_the_newest_few_and_skip_duplicates(tmp_path):
    backups = tmp_path / "backups"
    store, _ = open_store(tmp_path / "events.sqlite3", backups, keep_backups=3)
    fill(store, games=6, actions=1)
    assert [b.last_seq for b in store.backups()] == [10, 8, 6]    # one before each new game after the first
    made = store.backup()                           # e.g. the daemon calls it when a game ends
    assert [b.last_seq for b in store.backups()] == [12, 10, 8] and made == store.backups()[0].path
    assert store.backup() == made                   # nothing new since: the newest backup is reused
    assert not [p for p in backups.iterdir() if p.name.startswith(".")]   # no temp files left
    for b in store.backups():
        info = inspect_database(shutil.copyfile(b.path, tmp_path / "check.sqlite3"))
        assert info.ok and info.last_seq == b.last_seq
        assert not b.path.with_name(b.path.name + "-wal").exists()
    store.close()


def test_a_failing_backup_does_not_stop_the_new_game(tmp_path, caplog):
    blocker = tmp_path / "backups"
    blocker.write_text("a file where the backups directory should be")
    store = EventStore(tmp_path / "events.sqlite3", backups_dir=blocker)
    fill(store, games=1)
    with caplog.at_level(logging.WARNING, logger="companion.store"):
        ev = store.append(None, "new_game", GAME, "test")
    assert ev.seq == 7 and store.last_seq() == 7
    assert store.backup_problem and "backup" in store.backup_problem
    assert any("backup before the new game failed" in r.getMessage() for r in caplog.records)
    store.close()


def test_the_public_methods_still_behave(tmp_path):
    store, _ = open_store(tmp_path / "events.sqlite3")
    g = store.append(None, "new_game", GAME, "page")
    a = store.append(g.game_id, "action", {"action": {"type": "roll", "value": 2}}, "page")
    assert store.latest_game() == g.seq and [e.seq for e in store.game_events(g.game_id)] == [g.seq, a.seq]
    assert [e.seq for e in store.events_after(g.seq)] == [a.seq] and store.last_seq() == a.seq
    assert [e.seq for e in store.games()] == [g.seq] and store.integrity_check() == "ok"
    store.close()
    store.close()                                   # closing twice is harmless
