"""A play's times, said as well as the Pi knows them: synced, worked back through the monotonic clock, or not."""

from types import SimpleNamespace

from companion.foundation import wall_clock
from companion.history import times


def ev(at, boot="b1", mono=None, synced=True):
    clock = None if mono is None and boot is None else {"boot": boot, "mono": mono, "synced": synced}
    return SimpleNamespace(at=at, clock=clock)


def test_played_time_is_the_monotonic_gaps_without_the_breaks():
    events = [ev("2026-01-02T19:00:00+00:00", mono=100.0), ev("2026-01-02T19:10:00+00:00", mono=700.0),
              # the wall clock leapt an hour (NTP) between these two: the monotonic clock says 20 s
              ev("2026-01-02T20:10:20+00:00", mono=720.0),
              # an hour and a half with no event: a break, not play
              ev("2026-01-02T21:40:20+00:00", mono=6120.0), ev("2026-01-02T21:41:00+00:00", mono=6160.0),
              # the Pi restarted: a new boot, its monotonic clock from near zero
              ev("2026-01-02T21:50:00+00:00", boot="b2", mono=30.0), ev("2026-01-02T21:51:00+00:00", boot="b2",
                                                                         mono=90.0)]
    facts = times.clock_facts(events)
    assert facts["played_s"] == 600 + 20 + 40 + 60 and facts["breaks"] == 2
    assert facts["anchors"] == {"b1": [100.0, "2026-01-02T19:00:00+00:00"], "b2": [30.0, "2026-01-02T21:50:00+00:00"]}


def test_an_unsynced_start_is_worked_back_from_a_later_sync_in_the_same_boot():
    # the Pi's clock said 2019 until NTP synced at mono 1000, when it was really 2026-01-02 20:00
    events = [ev("2019-05-01T10:00:00+00:00", mono=400.0, synced=False),
              ev("2019-05-01T10:05:00+00:00", mono=700.0, synced=False),
              ev("2026-01-02T20:00:00+00:00", mono=1000.0, synced=True)]
    facts = times.clock_facts(events)
    start = times.when(facts["first"], facts["anchors"])
    assert start == {"at": "2026-01-02T19:50:00+00:00", "quality": "worked_back"}
    assert times.when(facts["last"], facts["anchors"])["quality"] == "synced"
    assert facts["played_s"] == 600.0      # the monotonic clock, not 2019 to 2026


def test_a_night_that_never_synced_is_said_to_be_unsynced():
    events = [ev("2019-05-01T10:00:00+00:00", boot="b9", mono=50.0, synced=False)]
    facts = times.clock_facts(events)
    assert facts["anchors"] == {}
    assert times.when(facts["first"], {}) == {"at": "2019-05-01T10:00:00+00:00", "quality": "unsynced"}
    # another play of the same boot that did sync puts it right
    assert times.when(facts["first"], {"b9": [150.0, "2026-03-01T18:00:00+00:00"]}) == \
        {"at": "2026-03-01T17:58:20+00:00", "quality": "worked_back"}


def test_events_from_before_the_stamps_have_an_unknown_time_and_length():
    events = [SimpleNamespace(at="2026-01-02T19:00:00+00:00", clock=None),
              SimpleNamespace(at="2026-01-02T19:05:00+00:00", clock=None)]
    facts = times.clock_facts(events)
    assert facts["played_s"] is None
    assert times.when(facts["first"], {}) == {"at": "2026-01-02T19:00:00+00:00", "quality": "unknown"}
    assert times.when(None, {}) == {"at": None, "quality": "unknown"}


def test_the_stamp_the_store_writes():
    s = wall_clock.stamp()
    assert set(s) == {"boot", "mono", "synced"} and s["synced"] in (True, False, None)
    assert isinstance(s["mono"], float) and (s["boot"] is None or len(s["boot"]) <= 64)


def test_the_store_keeps_each_events_stamp(tmp_path):
    from companion.store import EventStore

    stamps = iter([{"boot": "x", "mono": 1.5, "synced": False}, {"boot": "x", "mono": 9.0, "synced": True}])
    store = EventStore(tmp_path / "db.sqlite3", stamp=lambda: next(stamps))
    g = store.append(None, "new_game", {"game": "risk", "options": {}}, "page")
    store.append(g.game_id, "action", {"action": {"type": "end_turn"}}, "page")
    got = store.game_events_stamped(g.game_id)
    assert [e.clock for e in got] == [{"boot": "x", "mono": 1.5, "synced": False},
                                      {"boot": "x", "mono": 9.0, "synced": True}]
    assert [e.to_dict() for e in store.game_events(g.game_id)] == [e.to_dict() for e in got]   # records unchanged
    store.close()


def test_an_older_store_gains_the_clock_column(tmp_path):
    import sqlite3

    from companion.store import EventStore

    con = sqlite3.connect(tmp_path / "old.sqlite3")
    con.execute("CREATE TABLE events (seq INTEGER PRIMARY KEY AUTOINCREMENT, game_id INTEGER NOT NULL, kind TEXT NOT "
                "NULL, body TEXT NOT NULL, source TEXT NOT NULL, at TEXT NOT NULL)")
    con.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    con.execute("INSERT INTO events VALUES (1, 1, 'new_game', '{\"game\":\"risk\"}', 'page', '2024-01-01T00:00:00+00:00')")
    con.commit()
    con.close()
    store = EventStore(tmp_path / "old.sqlite3", record_acks=False)
    assert store.game_events_stamped(1)[0].clock is None
    store.close()
