"""The exports of the plays through the API: the CSV (a row per player per play, formula-safe, UTF-8) and the BG
Stats file (loaded back as JSON: every play, player and score there, every reference resolving), against the
generator's truth and the plays the API gives; their bounds, refusals, and that they only read."""

import csv
import dataclasses
import io
import json
import re
import sqlite3
import threading
from collections import Counter, defaultdict
from datetime import datetime, timedelta, timezone

import pytest

from companion.config import parse
from companion.history import exports
from companion.history.people import key
from companion.simulation import plays as sim
from companion.table.daemon import Companion
from companion.web import create_app

HOSTILE = ["=SUM(A1:A9)", "@Ann", "+Bob", "-Cy", "\uff1dHYPER"]


def hostile_play(seed: int) -> sim.SimPlay:
    """A finished Balance Duels play whose names a spreadsheet would take for formulas."""
    for n in range(200):
        p = sim.make_plays(1, seed=seed + n, games=("balance_duels",), unfinished_rate=0.0)[0]
        if p.over and p.options["players"] == 2:
            names = HOSTILE[:2]
            p.options = {**p.options, "names": names}
            p.winners = [names[p.names.index(w)] for w in p.winners]
            p.names = names
            return p
    raise AssertionError("no finished 2-player play")


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    d = tmp_path_factory.mktemp("exports")
    made = sim.make_plays(40, seed=33)           # with a 2×2 Balance Duels and a guest among them
    made.insert(5, hostile_play(900))
    truth = sim.write_store(d / "db.sqlite3", made, seed=33)
    c = Companion(dataclasses.replace(parse({"simulate": {"enabled": True, "demo": False, "seed": 7}}),
                                      store_path=d / "db.sqlite3"))
    c.history.warm()
    # one unfinished play resumed: two games, one play, under the newer id
    left = next(g for g, t in sorted(truth.items()) if not t.over and g != c.host.game_id)
    resumed = c.host.resume(left).game_id
    truth[resumed] = truth.pop(left)
    yield c, create_app(c).test_client(), truth, (left, resumed)
    c.stop()


def api_plays(client):
    body = client.get("/api/plays?limit=200").get_json()
    assert body["total"] <= 200
    return {p["id"]: p for p in body["plays"]}


def csv_of(client, query=""):
    r = client.get("/api/plays/export?format=csv&tz=UTC" + query)
    assert r.status_code == 200, r.get_json()
    assert r.headers["Content-Type"].startswith("text/csv; charset=utf-8")
    assert r.headers["Content-Disposition"] == 'attachment; filename="plays.csv"'
    raw = r.get_data()
    assert raw.startswith("\ufeff".encode())            # Excel's UTF-8 mark
    text = raw.decode("utf-8-sig")
    assert "\r\n" in text
    return list(csv.DictReader(io.StringIO(text, newline=""))), r


def test_the_csv_has_a_row_per_player_per_play(table):
    c, client, truth, _ = table
    rows, r = csv_of(client)
    plays = api_plays(client)
    assert int(r.headers["X-Plays-Total"]) == len(truth) == len(plays)
    by_play = defaultdict(list)
    for row in rows:
        assert list(row) == list(exports.CSV_COLUMNS)
        by_play[int(row["play_id"])].append(row)
    assert set(by_play) == set(truth)
    assert [int(x) for x in dict.fromkeys(row["play_id"] for row in rows)] == list(plays)   # newest first
    for gid, seats in by_play.items():
        t, p = truth[gid], plays[gid]
        typed = [s["typed_name"].removeprefix("'") for s in seats]
        assert typed == t.names
        assert {key(s["typed_name"].removeprefix("'")) for s in seats if s["winner"] == "yes"} == \
            {key(w) for w in t.winners}
        assert all(s["finished"] == ("yes" if t.over else "no") for s in seats)
        assert [int(s["seat"]) for s in seats] == list(range(1, len(t.names) + 1))
        for s, pl in zip(seats, p["players"]):
            assert s["score"] == ("" if pl["score"] is None else str(pl["score"]))
            assert s["rank"] == ("" if pl["rank"] is None else str(pl["rank"]))
            assert s["guest"] == ("yes" if pl["guest"] else "no")
        assert seats[0]["start"] == p["start"]["at"] and seats[0]["start_quality"] == p["start"]["quality"]
        assert seats[0]["end"] == p["end"]["at"] and seats[0]["end_quality"] == p["end"]["quality"]
        assert seats[0]["duration_min"] == str(round(p["played_s"] / 60, 1)).removesuffix(".0")
        assert seats[0]["ended"] == ((p["ended"] or {}).get("code") or "")
    qualities = {row["start_quality"] for row in rows}
    assert {"synced", "unsynced"} <= qualities          # the made-up nights have both


def test_csv_cells_a_spreadsheet_would_run_are_made_text(table):
    c, client, truth, _ = table
    rows, _ = csv_of(client)
    names = {row["typed_name"] for row in rows}
    assert "'=SUM(A1:A9)" in names and "'@Ann" in names
    assert not any(v.startswith(exports.FORMULA_STARTS) for row in rows for v in row.values())
    assert [exports.cell(v) for v in ("+Bob", "-Cy", "\uff1dHYPER", "\tx", "Ann", "Zoë")] == \
        ["'+Bob", "'-Cy", "'\uff1dHYPER", "'\tx", "Ann", "Zoë"]
    # numbers stay numbers (a negative score is no formula), truth values read as words
    assert [exports.cell(v) for v in (-3, 2.0, 2.5, True, None)] == [-3, 2, 2.5, "yes", ""]
    assert "Zoë" in names or "zoe" in names             # UTF-8, not escaped
    assert any(row["guest"] == "yes" for row in rows) and any(row["team"] for row in rows)


def test_the_csv_times_are_in_the_zone_asked_for(table):
    c, client, truth, _ = table
    utc, _ = csv_of(client)
    r = client.get("/api/plays/export?format=csv&tz=Europe/Berlin")
    berlin = list(csv.DictReader(io.StringIO(r.get_data().decode("utf-8-sig"), newline="")))
    for a, b in zip(utc, berlin):
        if a["start"]:
            assert datetime.fromisoformat(a["start"]) == datetime.fromisoformat(b["start"])
            assert b["start"].endswith(("+01:00", "+02:00"))


def store_of(client):
    c = client.application.extensions["companion"]
    return c.history.export(limit=1)["store"]


def load_bgstats(client, query=""):
    r = client.get("/api/plays/export?format=bgstats" + query)
    assert r.status_code == 200, r.get_json()
    assert r.headers["Content-Disposition"] == 'attachment; filename="plays.bgstats.json"'
    return json.loads(r.get_data().decode("utf-8")), r


def test_the_bgstats_file_loads_back_with_every_play_player_and_score(table):
    c, client, truth, (left, resumed) = table
    doc, r = load_bgstats(client, "&tz=UTC")
    plays = api_plays(client)
    assert {"about", "games", "players", "locations", "plays"} <= set(doc)
    games = {g["id"]: g for g in doc["games"]}
    people = {p["id"]: p for p in doc["players"]}
    places = {loc["id"]: loc for loc in doc["locations"]}
    for table_ in (doc["games"], doc["players"], doc["locations"], doc["plays"]):
        assert len({x["uuid"] for x in table_}) == len(table_)           # every uuid its own
        assert all(re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", x["uuid"])
                   for x in table_)
    assert len(games) == len(doc["games"]) and len(people) == len(doc["players"])
    assert {g["name"] for g in doc["games"]} == {p["title"] for p in plays.values()}
    assert len(doc["plays"]) == len(truth) == len(plays)
    seen = set()
    for bp, (gid, p) in zip(doc["plays"], plays.items()):
        t = truth[gid]
        seen.add(gid)
        assert games[bp["gameRefId"]]["name"] == p["title"] and bp["locationRefId"] in places
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}", bp["playDate"])
        assert bp["playDate"] == datetime.fromisoformat(p["start"]["at"]).strftime("%Y-%m-%d %H:%M:%S")
        assert bp["playDateYmd"] == int(bp["playDate"][:10].replace("-", ""))
        assert bp["durationMin"] == round(p["played_s"] / 60)
        assert bp["ignored"] == (not t.over) and isinstance(bp["comments"], str)
        assert f"Table Companion play {gid}" in bp["comments"]
        if p["start"]["quality"] in ("unsynced", "unknown"):
            assert "Start time NOT KNOWN" in bp["comments"]
        else:
            assert "NOT KNOWN" not in bp["comments"]
        scores = bp["playerScores"]
        assert len(scores) == len(t.names) == len(p["players"])
        for s, pl in zip(scores, p["players"]):
            who = people[s["playerRefId"]]                               # every reference resolves
            assert who["name"] == pl["name"] and who["isAnonymous"] == pl["guest"]
            assert s["score"] == ("" if pl["score"] is None else str(pl["score"]))
            assert s["winner"] is pl["winner"] and s["seatOrder"] == pl["seat"]
            assert s["rank"] == (pl["rank"] or 0) and s["startPlayer"] is False
        assert {key(people[s["playerRefId"]]["name"]) for s in scores if s["winner"]} == \
            {key(w) for w in p["winners"]}
        if t.game == "balance_duels" and t.options.get("teams"):
            assert bp["usesTeams"] and {s["team"] for s in scores} == {"Team 1", "Team 2"}
    assert seen == set(truth)
    assert any(bp["usesTeams"] for bp in doc["plays"]) and any(p["isAnonymous"] for p in doc["players"])
    assert not any(s["newPlayer"] for bp in doc["plays"] for s in bp["playerScores"]
                   if people[s["playerRefId"]]["isAnonymous"])
    # the resumed play is one play, under its newest part, its parts named
    bp = next(x for x in doc["plays"] if f"play {resumed} " in x["comments"])
    assert f"games {left}, {resumed}" in bp["comments"]
    # its uuid is its first part's: the same as an export made before the resume gave it
    before = exports.bgstats([{**plays[resumed], "id": left, "parts": [left]}], store=store_of(client))
    assert bp["uuid"] == before["plays"][0]["uuid"]
    # exported again: the same file (uuids and all), so an app matching by uuid counts nothing twice
    again, _ = load_bgstats(client, "&tz=UTC")
    assert again == doc


def test_new_player_marks_each_persons_first_play_of_each_game(table):
    c, client, truth, _ = table
    doc, _ = load_bgstats(client, "&tz=UTC")
    games = {g["id"]: g["name"] for g in doc["games"]}
    people = {p["id"]: p for p in doc["players"]}
    firsts = defaultdict(list)
    order = []
    for bp in reversed(doc["plays"]):                                    # oldest first
        for s in bp["playerScores"]:
            pair = (s["playerRefId"], games[bp["gameRefId"]])
            if not people[s["playerRefId"]]["isAnonymous"]:
                order.append(pair)
            if s["newPlayer"]:
                firsts[pair].append(bp["uuid"])
    persons = set(order)
    assert set(firsts) == persons and all(len(v) == 1 for v in firsts.values())
    # ... and it is the oldest of them (a resumed play counts from its first part, which is the oldest here too)
    first_seen = {}
    for bp in reversed(doc["plays"]):
        for s in bp["playerScores"]:
            first_seen.setdefault((s["playerRefId"], games[bp["gameRefId"]]), bp["uuid"])
    assert all(firsts[pair] == [first_seen[pair]] for pair in persons)
    # a page of the export still says it from the whole history
    page, _ = load_bgstats(client, "&tz=UTC&limit=3")
    assert [p["playerScores"] for p in page["plays"]] == [p["playerScores"] for p in doc["plays"][:3]]


def test_bgstats_dates_in_the_zone_asked_for(table):
    c, client, truth, _ = table
    utc, _ = load_bgstats(client, "&tz=UTC")
    berlin, _ = load_bgstats(client, "&tz=Europe/Berlin")
    for a, b in zip(utc["plays"], berlin["plays"]):
        ta = datetime.strptime(a["playDate"], "%Y-%m-%d %H:%M:%S")
        tb = datetime.strptime(b["playDate"], "%Y-%m-%d %H:%M:%S")
        assert tb - ta in (timedelta(hours=1), timedelta(hours=2))       # CET or CEST


def test_the_json_export_is_the_plays_of_the_api(table):
    c, client, truth, _ = table
    r = client.get("/api/plays/export?format=json")
    body = json.loads(r.get_data())
    assert body["total"] == len(truth) and body["plays"] == list(api_plays(client).values())


def test_exports_are_paged_and_the_pages_add_up(table):
    c, client, truth, _ = table
    whole, _ = csv_of(client)
    got, offset = [], 0
    while True:
        rows, r = csv_of(client, f"&limit=7&offset={offset}")
        got += rows
        assert int(r.headers["X-Plays-Count"]) <= 7 and int(r.headers["X-Plays-Total"]) == len(truth)
        if "X-Plays-Next-Offset" not in r.headers:
            break
        offset = int(r.headers["X-Plays-Next-Offset"])
    assert got == whole
    # the API's filters hold for the exports too
    rows, r = csv_of(client, "&status=finished&game=balance_duels")
    assert rows and {row["finished"] for row in rows} == {"yes"} and {row["game"] for row in rows} == {"balance_duels"}
    assert int(r.headers["X-Plays-Total"]) == sum(1 for t in truth.values() if t.over and t.game == "balance_duels")
    rows, r = csv_of(client, "&status=unfinished")
    assert rows and {row["finished"] for row in rows} == {"no"}
    assert int(r.headers["X-Plays-Total"]) == sum(1 for t in truth.values() if not t.over)


@pytest.mark.parametrize("query,words", [
    ("", "'format' names the export: csv, json, bgstats"),
    ("format=xls", "'format' must be one of csv, json, bgstats"),
    ("format=csv&limit=0", "'limit' must be a whole number from 1 to 10000"),
    ("format=csv&limit=10001", "from 1 to 10000"),
    ("format=csv&offset=-2", "'offset'"),
    ("format=csv&tz=Mars/Olympus", "'tz' 'Mars/Olympus' is no time zone"),
    ("format=csv&tz=../../etc/passwd", "'tz' must be a time zone's name"),
    ("format=json&tz=UTC", "'tz' is for the csv and bgstats formats"),
    ("format=bgstats&game=chess", "'game' must be one of"),
    ("format=csv&status=done", "'status' must be one of all, finished, unfinished"),
    ("format=csv&since=2026-02-01&until=2026-01-01", "'until' must come after 'since'"),
    ("format=csv&player=" + "x" * 25, "'player' must be a name of 1 to 24 characters"),
    ("format=csv&colour=red", "unknown query parameter(s) 'colour'"),
])
def test_bad_export_queries_are_refused_by_name(table, query, words):
    c, client, truth, _ = table
    r = client.get("/api/plays/export?" + query)
    assert r.status_code == 400 and words in r.get_json()["error"], r.get_json()


def test_exports_only_read_and_never_wait_for_the_table(table):
    c, client, truth, _ = table
    before = c.store.last_seq()
    for method in ("post", "put", "delete"):
        assert getattr(client, method)("/api/plays/export?format=csv").status_code == 405
    # the table's lock held elsewhere (a move being applied) does not hold up an export
    held, release = threading.Event(), threading.Event()

    def hold():
        with c.table_lock:
            held.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait(5)
    try:
        done = []
        reader = threading.Thread(target=lambda: done.append(client.get("/api/plays/export?format=bgstats")))
        reader.start()
        reader.join(30)
        assert done and done[0].status_code == 200
    finally:
        release.set()
        holder.join()
    assert c.store.last_seq() == before


def test_an_empty_history_exports_a_header_and_an_empty_file(tmp_path):
    c = Companion(dataclasses.replace(parse({"simulate": {"enabled": True, "demo": False, "seed": 7}}),
                                      store_path=tmp_path / "db.sqlite3"))
    try:
        c.history.warm()
        client = create_app(c).test_client()
        r = client.get("/api/plays/export?format=bgstats")
        doc = json.loads(r.get_data())
        # the daemon's own first game (not started by anyone) is the one play
        assert len(doc["plays"]) == 1 and doc["plays"][0]["ignored"] is True
        text = client.get("/api/plays/export?format=csv").get_data().decode("utf-8-sig")
        assert text.splitlines()[0] == ",".join(exports.CSV_COLUMNS)
    finally:
        c.stop()


def test_unknown_clocks_are_said_in_the_comments():
    base = {"id": 7, "parts": [7], "game": "risk", "title": "Risk", "variant": {}, "players": [], "winners": [],
            "over": True, "ended": None, "turns": 3, "played_s": None, "breaks": 0}
    cases = {
        "synced": ({"at": "2026-03-14T18:00:00+00:00", "quality": "synced"}, "2026-03-14 18:00:00", None),
        "worked_back": ({"at": "2026-03-14T18:00:00+00:00", "quality": "worked_back"}, "2026-03-14 18:00:00",
                        "worked back"),
        "unsynced": ({"at": "2021-01-01T00:00:07+00:00", "quality": "unsynced"}, "2021-01-01 00:00:07",
                     "the Pi's clock was not set"),
        "unknown": ({"at": None, "quality": "unknown"}, exports.UNKNOWN_DATE, "no time was recorded"),
    }
    for quality, (start, date, words) in cases.items():
        doc = exports.bgstats([{**base, "start": start, "end": start}], store="s", tz=timezone.utc)
        play = doc["plays"][0]
        assert play["playDate"] == date, quality
        assert play["durationMin"] == 0 and "Length not known" in play["comments"]
        if words:
            assert words in play["comments"], (quality, play["comments"])
        else:
            assert "NOT KNOWN" not in play["comments"]


def test_the_tables_summary_counts_the_month_by_known_times_only(table):
    """The summary MQTT and Home Assistant get, against a count straight from the events: a play's start (its
    first part's first event) put right from the first synced event of the same boot, in this machine's zone."""
    c, client, truth, (left, resumed) = table
    db = sqlite3.connect(f"file:{c.store.path}?mode=ro", uri=True)
    try:
        rows = [(g, kind, json.loads(clock), at) for g, kind, clock, at in db.execute(
            "SELECT game_id, kind, clock, at FROM events ORDER BY seq")]
    finally:
        db.close()
    anchors = {}
    for g, kind, clock, at in rows:
        if clock["synced"]:
            anchors.setdefault(clock["boot"], (clock["mono"], datetime.fromisoformat(at)))
    month_of = {}
    for g, kind, clock, at in rows:
        if kind == "new_game" and clock["boot"] in anchors:
            mono, base = anchors[clock["boot"]]
            t = (base + timedelta(seconds=clock["mono"] - mono)).astimezone()
            month_of[g] = (t.year, t.month)
    plays = api_plays(client)
    counts = Counter(month_of.get(p["parts"][0]) for p in plays.values())
    assert len([m for m in counts if m]) >= 2 and counts[None] > 0          # several months, and unknown starts
    for month, n in counts.items():
        if month is None:
            continue
        got = c.history.summary(month)
        assert got["plays_this_month"] == n, month
        assert got["month"] == f"{month[0]:04d}-{month[1]:02d}" and got["plays"] == len(plays)
    assert c.history.summary((2030, 1))["plays_this_month"] == 0
    assert c.history.summary(None)["plays_this_month"] is None and c.history.summary(None)["month"] is None
    got = c.history.summary(None)
    assert got["finished"] == sum(1 for t in truth.values() if t.over)
    newest_done = next(p for p in plays.values() if p["over"])
    assert got["last"]["play_id"] == newest_done["id"] and got["last"]["winners"] == newest_done["winners"]
    assert got["last"]["title"] == newest_done["title"] and got["last"]["at"] == newest_done["end"]["at"]
