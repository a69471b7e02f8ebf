"""kill -9 while a game record is being loaded: after the restart the current game is the one before, or the whole
record, never part of it (the load is one transaction)."""

import http.client
import json
import threading
import time

import pytest

from tests.reliability.harness import LOOPBACK, DaemonProcess, read_store_copy, write_config

pytestmark = pytest.mark.slow

PAIRS = 350     # 701 lines, 30 kB: well under the 64 kB a request may carry


def record() -> bytes:
    lines = [{"kind": "new_game", "body": {"game": "balance_duels", "options": {}}}]
    for n in range(PAIRS):
        lines += [{"kind": "action", "body": {"action": {"type": "roll", "value": 1 + n % 6}}}, {"kind": "undo"}]
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


def upload(port: int, body: bytes, answers: list) -> None:
    conn = http.client.HTTPConnection(LOOPBACK, port, timeout=30)
    try:
        conn.request("POST", "/api/record", body=body, headers={"Content-Type": "application/x-ndjson"})
        answers.append(conn.getresponse().status)
    except (OSError, http.client.HTTPException):
        answers.append(None)        # killed under it
    finally:
        conn.close()


def current_game(db):
    rows = read_store_copy(db).rows
    game_id = max(r.game_id for r in rows if r.kind == "new_game")
    return [(r.seq, r.kind, r.body) for r in rows if r.game_id == game_id]


def test_kill_9_during_an_upload_leaves_the_game_before_or_the_whole_record(tmp_path):
    config = write_config(tmp_path)
    db = tmp_path / "events.sqlite3"
    body = record()
    daemon = DaemonProcess(config, db)
    try:
        client = daemon.client()
        assert client.post("/api/roll", {"value": 3})[0] == 200
        client.close()
        # how long one load takes here, to kill the next ones at points through it
        answers: list = []
        started = time.monotonic()
        upload(daemon.port, body, answers)
        took = time.monotonic() - started
        assert answers == [200]
    finally:
        daemon.stop()
    outcomes = []
    for share in (0.05, 0.2, 0.35, 0.5, 0.65, 0.8, 0.95):
        daemon = DaemonProcess(config, db)
        try:
            client = daemon.client()
            client.post("/api/roll", {"value": 2})     # the game before differs from the record by this roll
            client.close()
            before = current_game(db)
            answers = []
            t = threading.Thread(target=upload, args=(daemon.port, body, answers))
            t.start()
            time.sleep(took * share)
            daemon.kill()
            t.join(timeout=30)
        finally:
            daemon.kill()
        after = current_game(db)
        if after == before:
            outcomes.append("before")
        else:
            assert len(after) == 2 * PAIRS + 1, f"a kill at {share:.0%} of the load left {len(after)} of its events"
            assert [kind for _, kind, _ in after] == ["new_game"] + ["action", "undo"] * PAIRS
            assert [s for s, _, _ in after] == list(range(after[0][0], after[0][0] + 2 * PAIRS + 1))
            outcomes.append("whole")
        assert answers != [200] or outcomes[-1] == "whole"      # an acknowledged load is never lost
    daemon = DaemonProcess(config, db)      # and the daemon starts over what the kills left
    try:
        client = daemon.client()
        state = client.get("/api/state")
        client.close()
    finally:
        daemon.stop()
    assert state["game_id"] == max(r.game_id for r in read_store_copy(db).rows if r.kind == "new_game")
    assert read_store_copy(db).integrity == "ok"
    assert "before" in outcomes     # a kill landed while the load was under way, not only after it
