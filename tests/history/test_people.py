"""People across games: names matched case- and accent-insensitively, renames and merges as events that undo
takes back, guests kept guests; and the endpoints that do it, refusing bad input with nothing changed."""

import dataclasses

import pytest

from companion.config import parse
from companion.history.people import PeopleError, Roster, clean_name, is_guest, key
from companion.table.daemon import Companion
from companion.web import create_app

PIN = "2468"


class Ev:
    def __init__(self, seq, body):
        self.seq, self.body = seq, body


def seating(first, last, *names, defaults=("black", "yellow", "red", "blue")):
    return (first, last, [(n, defaults) for n in names])


def test_names_match_without_case_or_accents():
    assert key("  Zoë  ") == key("zoe") == key("ZOE") == "zoe"
    assert key("Ann  Marie") == "ann marie"
    assert key("Ångström") == "angstrom"


def test_guests_are_no_one():
    for name in ("black", "Player 2", "player3", "Guest", "guest of Ann", "Seat 4"):
        assert is_guest(name, ("black", "yellow"))
    assert not is_guest("Ann", ("black",)) and not is_guest("Blackbeard", ("black",))


def test_spellings_are_one_person_shown_as_most_typed():
    r = Roster.build([seating(1, 5, "Zoë", "Ann"), seating(6, 9, "zoe", "black"), seating(10, 12, "Zoë")], [])
    assert sorted(r.people) == ["ann", "zoe"]
    zoe = r.person("ZOE")
    assert zoe.name == "Zoë" and zoe.plays == 3 and zoe.last_seq == 12
    assert r.person("black", ("black",)) is None          # the guest seat
    assert [p.name for p in r.suggestions("zo")] == ["Zoë"] and [p.name for p in r.suggestions("")] == ["Zoë", "Ann"]


def test_rename_merge_and_undo_as_events():
    seats = [seating(1, 5, "Jo", "Ann"), seating(6, 9, "Joanna", "Ann")]
    rename = Ev(10, {"op": "rename", "name": "ann", "to": "Annie"})
    merge = Ev(11, {"op": "merge", "name": "Jo", "into": "Joanna"})
    r = Roster.build(seats, [rename, merge])
    assert r.person("Ann").name == "Annie" and r.person("annie").id == "ann"
    assert r.person("Jo").id == r.person("Joanna").id == "joanna" and r.person("Jo").plays == 2
    assert r.standing == [10, 11]
    # the undo of the merge: two people again, the rename still standing
    undone = Roster.build(seats, [rename, merge, Ev(12, {"op": "undo", "undoes": 11})])
    assert undone.person("Jo").id == "jo" and undone.person("Joanna").id == "joanna" and undone.standing == [10]
    # a name first typed after a rename belongs to the renamed person
    later = Roster.build([*seats, seating(20, 22, "Annie")], [rename])
    assert later.person("Annie").id == "ann" and later.person("Annie").plays == 3


@pytest.mark.parametrize("call,status,words", [
    (lambda r: r.rename("Zed", "Zack"), 404, "nobody called 'Zed'"),
    (lambda r: r.rename("Ann", "Jo"), 409, "someone else already: merge"),
    (lambda r: r.rename("Ann", "Guest 2"), 409, "how guests are named"),
    (lambda r: r.rename("Ann", "black"), 409, "how guests are named"),
    (lambda r: r.rename("Ann", "Ann"), 409, "called that already"),
    (lambda r: r.merge("Ann", "ANN"), 409, "same person already"),
    (lambda r: r.merge("guest", "Ann"), 409, "a guest stays a guest"),
])
def test_changes_that_cannot_be_done(call, status, words):
    r = Roster.build([seating(1, 5, "Jo", "Ann")], [], guest_names=("black",))
    with pytest.raises(PeopleError) as err:
        call(r)
    assert err.value.status == status and words in str(err.value)


@pytest.mark.parametrize("value,words", [
    ("", "is empty"), ("   ", "is empty"), ("x" * 25, "at most 24"), ("x" * 10_000, "at most 24"),
    (None, "must be a name"), (7, "must be a name"), ("a\u0000b", "control"),
])
def test_names_from_requests_are_checked(value, words):
    with pytest.raises(PeopleError, match=words):
        clean_name(value, "to")


# --- through the app

@pytest.fixture
def app_and_companion(tmp_path):
    data = {"simulate": {"enabled": True, "demo": False, "seed": 7}, "web": {"pin": PIN}}
    c = Companion(dataclasses.replace(parse(data), store_path=tmp_path / "db.sqlite3"))
    for names in (["Ann", "Jo"], ["zoe", "Joanna"], ["Zoë", "Ann"]):
        c.host.new_game("balance_duels", {"players": 2, "names": names})
    c.history.warm()
    yield create_app(c), c
    c.stop()


def logged_in(app):
    client = app.test_client()
    csrf = client.post("/api/login", json={"pin": PIN}).get_json()["csrf"]
    return client, {"X-CSRF-Token": csrf}


def test_new_game_is_offered_earlier_names_most_recent_first(app_and_companion):
    app, c = app_and_companion
    client = app.test_client()
    names = [p["name"] for p in client.get("/api/people").get_json()["people"]]
    assert names[:2] in (["Zoë", "Ann"], ["Ann", "Zoë"]) and set(names) == {"Ann", "Jo", "Zoë", "Joanna"}
    assert "black" not in names          # the start-up game's guests
    assert [p["name"] for p in client.get("/api/people?q=ZO").get_json()["people"]] == ["Zoë"]
    assert [p["name"] for p in client.get("/api/people?q=jo").get_json()["people"]] == ["Joanna", "Jo"]
    assert client.get("/api/people?q=" + "x" * 25).status_code == 400
    assert client.get("/api/people?limit=0").status_code == 400


def test_rename_merge_undo_through_the_api(app_and_companion):
    app, c = app_and_companion
    client, h = logged_in(app)
    r = client.post("/api/people", json={"op": "merge", "name": "Jo", "into": "Joanna"}, headers=h)
    assert r.status_code == 200 and r.get_json()["name"] == "Joanna"
    page = client.get("/api/plays?player=jo&limit=200").get_json()
    assert page["total"] == 2 and all("Joanna" in [p["name"] for p in play["players"]] for play in page["plays"])
    r = client.post("/api/people", json={"op": "rename", "name": "Ann", "to": "Annie"}, headers=h)
    assert r.get_json()["name"] == "Annie"
    # undo takes back the rename, then the merge, then there is nothing left to undo
    assert client.post("/api/people/undo", json={}, headers=h).get_json()["undid"]["op"] == "rename"
    assert client.get("/api/plays?player=Ann").get_json()["plays"][0]["players"][1]["name"] == "Ann"
    assert client.post("/api/people/undo", json={}, headers=h).get_json()["undid"]["op"] == "merge"
    assert client.get("/api/plays?player=jo&limit=200").get_json()["total"] == 1
    r = client.post("/api/people/undo", json={}, headers=h)
    assert r.status_code == 409 and "no rename or merge to undo" in r.get_json()["error"]
    kinds = [e.kind for e in c.store.people_events()]
    assert kinds == ["people"] * 4


@pytest.mark.parametrize("body,status,words", [
    ({"op": "rename", "name": "Ann", "to": ""}, 400, "'to' is empty"),
    ({"op": "rename", "name": "Ann", "to": "x" * 10_000}, 400, "at most 24"),
    ({"op": "merge", "name": "Ann", "into": "ann"}, 409, "same person already"),
    ({"op": "merge", "name": "Nobody", "into": "Ann"}, 404, "nobody called 'Nobody'"),
    ({"op": "rename", "name": "black", "to": "Bea"}, 409, "a guest stays a guest"),
    ({"op": "delete", "name": "Ann"}, 400, "'op' must be one of"),
    ({"op": "rename", "name": "Ann", "to": "Bea", "colour": "red"}, 400, "unknown field(s) 'colour'"),
])
def test_bad_changes_are_refused_and_nothing_is_written(app_and_companion, body, status, words):
    app, c = app_and_companion
    client, h = logged_in(app)
    before = c.store.last_seq()
    r = client.post("/api/people", json=body, headers=h)
    assert r.status_code == status and words in r.get_json()["error"], r.get_json()
    assert c.store.last_seq() == before


def test_changes_need_the_pin_and_json(app_and_companion):
    app, c = app_and_companion
    before = c.store.last_seq()
    anon = app.test_client()
    assert anon.post("/api/people", json={"op": "rename", "name": "Ann", "to": "Bea"}).status_code == 401
    client, h = logged_in(app)
    r = client.post("/api/people", data='{"op": "rename", "name": "Ann", "to": "Bea"}', headers=h,
                    content_type="text/plain")
    assert r.status_code == 415
    r = client.post("/api/people", json={"op": "rename", "name": "Ann", "to": "Bea"},
                    headers={**h, "Origin": "http://evil.example"})
    assert r.status_code == 403
    assert c.store.last_seq() == before
