"""Acknowledged events that SQLite drops without a word (a WAL bit-flipped, cut short or deleted, a bad byte in
the database file) are named at start-up, and every event still readable in a damaged file is salvaged."""

import json
import logging
import os
import random
import shutil
import sqlite3
import subprocess
import sys

import pytest

from companion.store import EventStore, open_store
from tests.reliability.harness import lost_in_notice

PLAY = r"""
import json, os, sys
from companion.store import EventStore
db, backups, plan = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
s = EventStore(db, backups_dir=backups)
made = []
for step in plan:
    if step == "checkpoint":
        s._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        continue
    g = s.append(None, "new_game", {"game": "balance_duels", "options": {"players": 2}}, "page")
    made.append([g.seq, g.game_id])
    for i in range(step):
        e = s.append(g.game_id, "action", {"action": {"type": "roll", "value": i % 6 + 1}, "note": f"ev-{g.game_id}-{i:04d}"}, "page")
        made.append([e.seq, e.game_id])
print(json.dumps(made), flush=True)
os._exit(0)     # as kill -9 leaves it: no close, no checkpoint
"""


def play(tmp_path, plan):
    """Acknowledged events of a process that died without closing the store: {seq: game id}."""
    db = tmp_path / "events.sqlite3"
    out = subprocess.run([sys.executable, "-c", PLAY, str(db), str(tmp_path / "backups"), json.dumps(plan)],
                         check=True, timeout=120, capture_output=True, text=True).stdout
    return db, {seq: game for seq, game in json.loads(out)}


def held(store):
    return {e.seq: e for e in store.events_after(0, limit=10 ** 6)}


def wal_of(db):
    return db.with_name(db.name + "-wal")


def assert_told_exactly(store, notice, acked):
    """Every acknowledged event is either in the store or named lost, with its game; nothing else is named."""
    have = held(store)
    missing = {q: g for q, g in acked.items() if q not in have}
    assert missing, "the damage should have cost some events"
    assert lost_in_notice(notice) == missing
    assert all(have[q].game_id == g for q, g in acked.items() if q in have)
    return missing


def flip(path, offset, n=16, seed=1):
    rng = random.Random(seed)
    data = bytearray(path.read_bytes())
    for i in range(offset, offset + n):
        data[i] ^= rng.randrange(1, 256)
    path.write_bytes(bytes(data))


def test_bit_flips_in_the_wal_after_a_kill_are_told(tmp_path, caplog):
    db, acked = play(tmp_path, [150])
    wal = wal_of(db)
    flip(wal, wal.stat().st_size // 2)
    with caplog.at_level(logging.ERROR, logger="companion.store"):
        store, notice = open_store(db)
    missing = assert_told_exactly(store, notice, acked)
    assert min(missing) > 1 and max(missing) == max(acked)
    assert any("Lost:" in r.getMessage() for r in caplog.records)
    assert "rejected part of the event store's write-ahead log" in notice
    assert [p for p in tmp_path.iterdir() if ".lost-" in p.name and p.name.endswith("-wal")], "the WAL as it was kept"
    # a lost seq is not handed out again, and the loss is told once
    assert store.append(1, "action", {"action": {"type": "roll", "value": 1}}, "page").seq == max(acked) + 1
    store.close()
    again, notice = open_store(db)
    assert notice is None
    again.close()


def test_a_wal_cut_short_is_told(tmp_path):
    db, acked = play(tmp_path, [120])
    wal = wal_of(db)
    os.truncate(wal, wal.stat().st_size * 2 // 3)
    store, notice = open_store(db)
    assert_told_exactly(store, notice, acked)
    store.close()


def test_a_wal_deleted_after_a_checkpointed_game_is_told(tmp_path):
    db, acked = play(tmp_path, [30, "checkpoint", 40])
    wal_of(db).unlink()
    db.with_name(db.name + "-shm").unlink(missing_ok=True)
    store, notice = open_store(db)
    missing = assert_told_exactly(store, notice, acked)
    assert sorted(missing) == list(range(32, 73)) and set(missing.values()) == {32}
    assert "game 32: events 32–72 (from the game's first event)" in notice and "log was missing" in notice
    assert store.latest_game() == 1
    store.close()


def checkpointed(tmp_path, plan):
    db, acked = play(tmp_path, plan)
    con = sqlite3.connect(db)                     # as the next start would: the WAL folded into the file
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    return db, acked


def test_a_bad_byte_in_one_event_loses_that_event_only(tmp_path):
    db, acked = checkpointed(tmp_path, [5, 5, 5, 300])     # three finished games backed up, one in progress
    data = bytearray(db.read_bytes())
    at = data.index(b"ev-19-0150")
    data[at + 3] = 0xFF                            # not UTF-8 any more: that one body is unreadable
    db.write_bytes(bytes(data))
    store, notice = open_store(db)
    missing = assert_told_exactly(store, notice, acked)
    assert missing == {19 + 151: 19}
    assert "salvaged" in notice and store.latest_game() == 19            # the game in progress is still the game
    assert len(held(store)) == len(acked) - 1 and store.integrity_check() == "ok"
    store.close()


def test_a_damaged_page_loses_only_the_events_on_it(tmp_path):
    db, acked = checkpointed(tmp_path, [5, 5, 5, 300])
    data = bytearray(db.read_bytes())
    page = data.index(b"ev-19-0150") // 4096 * 4096
    data[page:page + 8] = b"\x00" * 8              # the leaf's header: none of its rows can be read
    db.write_bytes(bytes(data))
    store, notice = open_store(db)
    missing = assert_told_exactly(store, notice, acked)
    assert 0 < len(missing) < 40 and 19 + 151 in missing
    have = held(store)
    for seq, ev in have.items():                   # what was salvaged is what was written
        if ev.kind == "action":
            assert ev.body["note"] == f"ev-{ev.game_id}-{seq - ev.game_id - 1:04d}"
    assert store.latest_game() == 19 and max(have) == max(acked)
    store.close()


def test_salvage_without_a_backup_keeps_every_readable_event(tmp_path):
    db, acked = checkpointed(tmp_path, [200])
    shutil.rmtree(tmp_path / "backups", ignore_errors=True)
    data = bytearray(db.read_bytes())
    data[data.index(b"ev-1-0100") + 2] = 0xFE
    db.write_bytes(bytes(data))
    store, notice = open_store(db)
    assert assert_told_exactly(store, notice, acked) == {102: 1}
    assert "rebuilt from the 200 event(s) still readable" in notice
    store.close()


def test_the_record_survives_a_torn_write_and_says_when_it_is_unreadable(tmp_path):
    from companion.store import ACK_SLOT, AckRecord, ack_path

    db = tmp_path / "events.sqlite3"
    store = EventStore(db)
    g = store.append(None, "new_game", {"game": "balance_duels", "options": {}}, "page")
    for i in range(5):
        store.append(g.game_id, "action", {"n": i}, "page")
    store.close()
    rec = ack_path(db)
    assert AckRecord(rec).load().seq == 6
    data = bytearray(rec.read_bytes())
    newest = max(range(2), key=lambda i: int(data[i * ACK_SLOT:(i + 1) * ACK_SLOT].split()[2]))
    data[newest * ACK_SLOT + 20] ^= 0x55           # the slot being written when the power went
    rec.write_bytes(bytes(data))
    assert AckRecord(rec).load().seq in (5, 6)
    rec.write_bytes(b"\x00" * 2 * ACK_SLOT)
    again, notice = open_store(db)
    assert "could not be read" in notice and again.last_seq() == 6
    again.close()
    assert AckRecord(rec).load().seq == 6          # a new record from what the store holds


def test_a_damaged_file_claiming_huge_seqs_does_not_send_salvage_looking_for_ever(tmp_path):
    db, acked = checkpointed(tmp_path, [40])
    con = sqlite3.connect(db)
    con.execute("UPDATE sqlite_sequence SET seq = 1000000000000000 WHERE name = 'events'")
    con.execute("UPDATE events SET body = 'not json' WHERE seq = 20")
    con.commit()
    con.close()
    store, notice = open_store(db)
    assert lost_in_notice(notice) == {20: 1} and store.last_seq() == 41
    assert store.append(1, "action", {"action": {"type": "roll", "value": 1}}, "page").seq == 42
    store.close()


def test_a_record_that_cannot_be_written_does_not_stop_the_store(tmp_path):
    from companion.store import ack_path

    db = tmp_path / "events.sqlite3"
    ack_path(db).mkdir()                           # something in the way: the record cannot be opened
    store = EventStore(db)
    assert store.ack_problem and store.append(None, "new_game", {"game": "balance_duels"}, "page").seq == 1
    store.close()
