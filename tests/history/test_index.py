"""The plays from the store: each one as its own events say (checked against the generator's truth), the cache
agreeing with a fresh fold, an index kept up to date change by change agreeing with one built at the end."""

import json
import sqlite3
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from companion.games import balance_duels as bd
from companion.games import registry
from companion.history.index import NotReady, PlayIndex, UnknownPlay
from companion.simulation import plays as sim
from companion.store import EventStore

MODEL = sim.model_a()
ENGINES = registry.engines(MODEL)


def index(store, cache_path=None):
    idx = PlayIndex(store, lambda: ENGINES, cache_path=cache_path, torque=lambda s: bd.net_torque(MODEL, s))
    idx.warm()
    return idx


@pytest.fixture(scope="module")
def night(tmp_path_factory):
    d = tmp_path_factory.mktemp("nights")
    made = sim.make_plays(60, seed=11)
    truth = sim.write_store(d / "db.sqlite3", made, seed=11)
    store = EventStore(d / "db.sqlite3")
    yield d, store, truth
    store.close()


def everything(idx):
    return idx.plays(limit=200)["plays"]


def test_every_play_is_what_its_events_say(night):
    d, store, truth = night
    got = everything(index(store))
    assert len(got) == len(truth) == 60
    for p in got:
        t = truth[p["id"]]
        assert p["game"] == t.game and p["over"] == t.over and p["unfinished"] == (not t.over)
        assert [x["typed"] for x in p["players"]] == t.names
        assert sorted(x["typed"] for x in p["players"] if x["winner"]) == sorted(t.winners)
        assert (p["ended"] or {}).get("code") == t.ended
        if t.game == "balance_duels":
            assert [x["seat"] for x in p["extra"]["tips"]] == t.tips
    # newest first, by their newest event
    assert [p["id"] for p in got] == sorted(truth, reverse=True)


def test_the_cache_agrees_with_a_fresh_fold(night, tmp_path):
    d, store, truth = night
    cache = tmp_path / "plays.sqlite3"
    cold = index(store, cache)
    warm = index(store, cache)             # every summary from the cache this time
    fresh = index(store)                   # no cache at all
    assert everything(cold) == everything(warm) == everything(fresh)
    rows = sqlite3.connect(cache).execute("SELECT COUNT(*) FROM plays").fetchone()[0]
    assert rows == len(truth)


def test_a_cached_summary_that_no_longer_matches_its_events_is_folded_again(tmp_path):
    made = sim.make_plays(6, seed=5, unfinished_rate=1.0, games=("balance_duels",))
    sim.write_store(tmp_path / "db.sqlite3", made, seed=5)
    store = EventStore(tmp_path / "db.sqlite3")
    idx = index(store, tmp_path / "plays.sqlite3")
    target = everything(idx)[-1]["id"]
    # the cache row is tampered with; the game's span still matches, so only a changed game is folded again
    con = sqlite3.connect(tmp_path / "plays.sqlite3")
    con.execute("UPDATE plays SET last_seq = last_seq - 1 WHERE game_id = ?", (target,))
    con.commit()
    con.close()
    assert everything(index(store, tmp_path / "plays.sqlite3")) == everything(index(store))
    # a new event in an old game (a resumed play adds a game instead, but the index must not care)
    store.append(target, "action", {"action": {"type": "roll", "value": 3}}, "page")
    idx.refresh()
    assert everything(idx) == everything(index(store))
    store.close()


def test_a_different_summary_version_drops_the_whole_cache(tmp_path):
    made = sim.make_plays(3, seed=2)
    sim.write_store(tmp_path / "db.sqlite3", made)
    store = EventStore(tmp_path / "db.sqlite3")
    index(store, tmp_path / "plays.sqlite3")
    other = PlayIndex(store, lambda: ENGINES, cache_path=tmp_path / "plays.sqlite3", model_fingerprint="B")
    assert other.cache.load() == {}
    store.close()


def test_an_unreadable_cache_is_set_aside_and_the_plays_still_come(tmp_path):
    made = sim.make_plays(3, seed=2)
    sim.write_store(tmp_path / "db.sqlite3", made)
    store = EventStore(tmp_path / "db.sqlite3")
    (tmp_path / "plays.sqlite3").write_bytes(b"this is not a database" * 100)
    idx = index(store, tmp_path / "plays.sqlite3")
    assert idx.cache.problem and len(everything(idx)) == 3
    assert (tmp_path / "plays.sqlite3.unreadable").exists()
    store.close()


def test_a_cache_closed_while_the_history_is_built_is_left_as_it_was(tmp_path):
    # the daemon stops (closing the cache) while the history is still being built in its own thread: the build's
    # later writes are dropped, the file is kept, and no connection is closed under a write (that crashed the
    # process: a segfault in `save` during `close`, make test 2026-12-07)
    import threading

    from companion.history.cache import SummaryCache

    path = tmp_path / "plays.sqlite3"
    cache = SummaryCache(path, "fp")
    cache.save({1: (5, 5, {"game": "balance_duels"})})
    cache.close()
    cache.save({2: (9, 4, {"game": "balance_duels"})})
    assert cache.load() == {} and cache.problem is None
    assert not (tmp_path / "plays.sqlite3.unreadable").exists()
    again = SummaryCache(path, "fp")
    assert again.load() == {1: (5, 5, {"game": "balance_duels"})}
    again.close()
    # many writes racing a close: each write happens wholly before it, or not at all
    cache = SummaryCache(path, "fp")
    rows = {g: (g, 1, {"game": "balance_duels", "n": g}) for g in range(300)}
    writer = threading.Thread(target=lambda: [cache.save(rows) for _ in range(50)])
    writer.start()
    cache.close()
    writer.join()
    assert cache.problem is None and not (tmp_path / "plays.sqlite3.unreadable").exists()


def test_before_the_first_build_the_history_says_so(tmp_path):
    store = EventStore(tmp_path / "db.sqlite3")
    idx = PlayIndex(store, lambda: ENGINES)
    with pytest.raises(NotReady):
        idx.plays()
    idx.warm()
    assert idx.plays()["total"] == 0
    with pytest.raises(UnknownPlay):
        idx.play(12345)
    store.close()


def test_filters_and_pages(night):
    d, store, truth = night
    idx = index(store)
    bd_ids = {g for g, t in truth.items() if t.game == "balance_duels"}
    assert {p["id"] for p in idx.plays(game="balance_duels", limit=200)["plays"]} == bd_ids
    unfinished = {g for g, t in truth.items() if not t.over}
    assert {p["id"] for p in idx.plays(status="unfinished", limit=200)["plays"]} == unfinished
    # a player by any spelling: "zoe", "Zoë" and "ZOË" are one person
    zoe = {g for g, t in truth.items() if any(n.casefold() in ("zoë", "zoe") for n in t.names)}
    for spelling in ("zoe", "ZOË", "Zoë"):
        assert {p["id"] for p in idx.plays(player=spelling, limit=200)["plays"]} == zoe
    first = idx.plays(limit=7)
    second = idx.plays(limit=7, offset=7)
    assert first["total"] == 60 and len(first["plays"]) == 7
    assert [p["id"] for p in first["plays"] + second["plays"]] == [p["id"] for p in idx.plays(limit=14)["plays"]]


def test_a_play_in_full_has_its_score_and_torque_over_time(night):
    d, store, truth = night
    idx = index(store)
    gid = next(g for g, t in truth.items() if t.game == "balance_duels" and t.over)
    full = idx.play(gid)
    assert full["score_series"][0] == {n: 0 for n in truth[gid].names}
    assert len(full["torque_series"]) == len(full["score_series"]) <= 240
    assert full["score_series"][-1] == {p["typed"]: p["score"] for p in full["players"]}


# --- change by change, as the table writes: the incremental index agrees with one built once at the end

step = st.one_of(
    st.tuples(st.just("new"), st.sampled_from(["balance_duels", "risk"]), st.integers(0, 3)),
    st.tuples(st.just("act"), st.integers(1, 6)),
    st.tuples(st.just("undo")),
    st.tuples(st.just("look")),
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(step, min_size=1, max_size=30))
def test_an_index_kept_up_to_date_agrees_with_one_built_at_the_end(tmp_path_factory, steps):
    d = tmp_path_factory.mktemp("steps")
    store = EventStore(d / "db.sqlite3", record_acks=False)
    names = [["Ann", "Bob"], ["zoe", "Bob"], ["Zoë", "Cy"], ["black", "Ann"]]
    live = index(store, d / "plays.sqlite3")
    game = state = engine = None
    for s in steps:
        if s[0] == "new":
            engine = ENGINES[s[1]]
            who = names[s[2]]
            options = ({"players": 2, "names": who} if s[1] == "balance_duels"
                       else {"players": who, "colours": {who[0]: "red", who[1]: "blue"}})
            game = store.append(None, "new_game", {"game": s[1], "options": options}, "page").game_id
            state = [engine.new(options)]
        elif s[0] == "act" and game is not None:
            if engine.name == "balance_duels":
                st_ = state[-1]
                action = ({"type": "roll", "value": s[1]} if st_.roll is None
                          else {"type": "move", "move": bd.legal_moves(MODEL, st_, st_.roll)[0].to_dict()})
            else:
                action = {"type": "end_turn"}
            try:
                state.append(engine.act(state[-1], action))
            except Exception:
                continue
            store.append(game, "action", {"action": action}, "page")
        elif s[0] == "undo" and game is not None and len(state) > 1:
            state.pop()
            store.append(game, "undo", {"undoes": "x"}, "page")
        elif s[0] == "look":
            live.plays(limit=200)
    assert everything(live) == everything(index(store)) == everything(index(store, d / "plays.sqlite3"))
    store.close()


def test_the_cached_summaries_are_plain_json(night, tmp_path):
    d, store, truth = night
    index(store, tmp_path / "c.sqlite3")
    for (text,) in sqlite3.connect(tmp_path / "c.sqlite3").execute("SELECT summary FROM plays"):
        assert isinstance(json.loads(text), dict)
    assert Counter(t.game for t in truth.values()).keys() <= set(ENGINES)
