"""kill -9 at random moments while a scripted game is played through the API (bench/crash.py runs 200+)."""

import pytest

from tests.reliability.crashlab import (DAMAGES, Expected, check_disk, damage_summary, run_crash_trials,
                                       run_damage_trials, summary)
from tests.reliability.harness import DaemonProcess, Row, read_store_copy, write_config

pytestmark = pytest.mark.slow


def test_kill_9_at_random_moments_loses_no_acknowledged_event(tmp_path):
    report = run_crash_trials(tmp_path, trials=6, seed=11, startup_share=0.2, deadline_s=120)
    s = summary(report)
    assert s["problems"] == []
    assert s["trials"] == 6 and s["survived"] == 6
    assert s["acknowledged_events"] > 20            # the kills really landed in the middle of a game
    assert s["final_integrity"] == "ok"


def test_the_checker_catches_lost_changed_and_invented_events():
    """The comparison itself: a lost ack, a rewritten body, an event nobody sent, an earlier event changed."""
    roll = {"action": {"type": "roll", "value": 3}}
    before = [Row(1, 1, "new_game", {"game": "balance_duels", "options": {}}, "startup")]
    acked = [Expected("action", roll, seq=2)]
    good = before + [Row(2, 1, "action", roll, "page")]
    assert check_disk(before, good, acked, None, startup_game_allowed=False) == ([], False)
    in_flight = Expected("undo", None)
    assert check_disk(before, good + [Row(3, 1, "undo", {"undoes": "roll"}, "page")], acked, in_flight,
                      startup_game_allowed=False) == ([], True)
    problems, _ = check_disk(before, before, acked, None, startup_game_allowed=False)
    assert "acknowledged event 2 (action) is missing" in problems[0]
    other = {"action": {"type": "roll", "value": 4}}
    problems, _ = check_disk(before, before + [Row(2, 1, "action", other, "page")], acked, None,
                             startup_game_allowed=False)
    assert "differs" in problems[0]
    problems, _ = check_disk(before, good + [Row(3, 1, "action", roll, "demo")], acked, None,
                             startup_game_allowed=False)
    assert "appeared that no acknowledged or in-flight request made" in problems[0]
    changed = [Row(1, 1, "new_game", {"game": "risk", "options": {}}, "startup")]
    problems, _ = check_disk(before, changed + good[1:], acked, None, startup_game_allowed=False)
    assert "existed before this trial changed" in problems[0]


def test_the_daemon_starts_over_a_damaged_database_and_says_so(tmp_path):
    config = write_config(tmp_path)
    db = tmp_path / "events.sqlite3"
    db.write_bytes(b"this is not an SQLite database\n" * 300)
    daemon = DaemonProcess(config, db)
    try:
        client = daemon.client()
        state = client.get("/api/state")
        client.close()
    finally:
        daemon.stop()
    notices = state["live"].get("notices", [])
    assert any("moved aside" in n for n in notices)
    assert "moved aside" in daemon.log_text()
    assert [p.name for p in tmp_path.iterdir() if ".damaged-" in p.name]
    assert read_store_copy(db).integrity == "ok"


def test_wal_and_file_damage_after_a_kill_is_named_on_the_page(tmp_path):
    """One trial of each damage (bench/crash.py runs 25): every event gone is named with its game, none kept is."""
    results = run_damage_trials(tmp_path, trials=len(DAMAGES), seed=5, deadline_s=300)
    d = damage_summary(results)
    assert d["problems"] == [] and d["trials"] == len(DAMAGES)
    assert d["lost"] > 0 and d["lost"] == sum(t.lost for t in results)
