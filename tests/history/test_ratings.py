"""Skill ratings per game: from finished plays only, teams and ties, guests kept out, recomputed from the events
(a merge recomputes them), and independent of the order of plays that share no player."""

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.config import parse
from companion.history import ratings
from companion.table.daemon import Companion
from companion.web import create_app


def ranked(*ranks, teams=None):
    return [{"rank": r, "team": (teams[i] if teams else None)} for i, r in enumerate(ranks)]


def test_a_win_raises_the_winner_and_lowers_the_loser():
    book = ratings.rate([ratings.match(ranked(1, 2), ["ann", "bob"], False)])
    ann, bob = book.ratings["ann"], book.ratings["bob"]
    assert ann.mu > 25 > bob.mu and ann.sigma < 25 / 3 and bob.sigma < 25 / 3
    assert abs((ann.mu - 25) - (25 - bob.mu)) < 1e-9        # two equal newcomers: symmetric
    rows = ratings.table(book, {"ann": "Ann", "bob": "Bob"})
    assert [r["name"] for r in rows] == ["Ann", "Bob"] and rows[0]["ordinal"] == round(ann.mu - 3 * ann.sigma, 2)


def test_a_tie_moves_nobody_apart_and_teams_share_their_result():
    tie = ratings.rate([ratings.match(ranked(1, 1), ["ann", "bob"], False)])
    assert tie.ratings["ann"].mu == tie.ratings["bob"].mu == 25
    # 2x2: seats 1 and 3 (team 0) beat seats 2 and 4 (team 1)
    m = ratings.match(ranked(1, 2, 1, 2, teams=[0, 1, 0, 1]), ["a", "b", "c", "d"], True)
    assert m == ((("a", "c"), ("b", "d")), (1, 2))
    book = ratings.rate([m])
    assert book.ratings["a"].mu == book.ratings["c"].mu > 25 > book.ratings["b"].mu == book.ratings["d"].mu


def test_guests_play_but_keep_no_rating():
    book = ratings.rate([ratings.match(ranked(1, 2, 3), ["ann", None, "bob"], False)])
    assert set(book.ratings) == {"ann", "bob"}
    assert ratings.match(ranked(1, 2), [None, None], False) is None        # nobody to rate
    assert ratings.match(ranked(1, None), ["a", "b"], False) is None       # no standing: not finished


def test_a_book_is_extended_while_new_plays_only_follow():
    ms = [ratings.match(ranked(1, 2), ["a", "b"], False), ratings.match(ranked(2, 1), ["a", "c"], False)]
    first = ratings.rate(ms[:1])
    again = ratings.rate(ms, first)
    assert again is first and again.ratings == ratings.rate(ms).ratings
    other = ratings.rate(ms[1:], again)          # not a continuation: computed afresh
    assert other is not again and "b" not in other.ratings


people = st.sampled_from(["a", "b", "c", "d", "e", "f", "g", "h"])


@st.composite
def matches(draw):
    who = draw(st.lists(people, min_size=2, max_size=4, unique=True))
    ranks = draw(st.lists(st.integers(1, len(who)), min_size=len(who), max_size=len(who)))
    return ratings.match(ranked(*ranks), who, False)


@settings(max_examples=60, deadline=None)
@given(st.lists(matches(), min_size=2, max_size=12), st.data())
def test_plays_with_no_player_in_common_can_come_in_either_order(ms, data):
    # swap neighbours that share nobody, as often as the draw says: the ratings come out the same, to the bit
    order = list(ms)
    for _ in range(data.draw(st.integers(0, 20))):
        i = data.draw(st.integers(0, len(order) - 2))
        a, b = order[i], order[i + 1]
        if not {p for t in a[0] for p in t} & {p for t in b[0] for p in t}:
            order[i], order[i + 1] = b, a
    one, two = ratings.rate(ms), ratings.rate(order)
    assert {k: (r.mu, r.sigma) for k, r in one.ratings.items()} == {k: (r.mu, r.sigma) for k, r in two.ratings.items()}


# --- from the events, through the index

PIN = "2468"


@pytest.fixture
def companion(tmp_path):
    data = {"simulate": {"enabled": True, "demo": False, "seed": 7}, "web": {"pin": PIN}}
    c = Companion(dataclasses.replace(parse(data), store_path=tmp_path / "db.sqlite3"))
    yield c
    c.stop()


def finish_risk(c, names, winner_first=True):
    """A Risk play the first named wins (Bob left with no territory), through the host as the page plays."""
    a, b = names
    c.host.new_game("risk", {"players": [a, b], "colours": {a: "red", b: "blue"}, "capitals": {a: "Germany", b: "Poland"}})
    for action in ({"type": "set_counts", "player": a, "territories": 12},
                   {"type": "set_counts", "player": b, "territories": 1},
                   {"type": "attack", "defender": b, "attackers": 5, "defenders": 1, "from": "Germany", "to": "Poland"},
                   {"type": "battle", "attacker_dice": [6, 3, 2], "defender_dice": [5]}):
        c.host.act(action)


def test_only_finished_plays_count_and_a_merge_recomputes(companion):
    c = companion
    c.host.new_game("risk", {"players": ["Ann", "Cy"]})        # unfinished: rates nobody
    finish_risk(c, ["Ann", "Jo"])
    finish_risk(c, ["Joanna", "Ann"])
    c.history.warm()
    before = {r["name"]: r for r in c.history.ratings("risk")["ratings"]}
    assert set(before) == {"Ann", "Jo", "Joanna"} and before["Ann"]["plays"] == 2
    c.history.change_people({"op": "merge", "name": "Jo", "into": "Joanna"})
    after = {r["name"]: r for r in c.history.ratings("risk")["ratings"]}
    assert set(after) == {"Ann", "Joanna"} and after["Joanna"]["plays"] == 2
    # the same as if the name had been typed alike both times
    direct = ratings.rate([ratings.match(ranked(1, 2), ["ann", "jo"], False),
                           ratings.match(ranked(1, 2), ["jo", "ann"], False)])
    assert after["Joanna"]["mu"] == round(direct.ratings["jo"].mu, 2)
    # undoing the battle that finished the last play takes it out of the ratings again
    c.host.undo()
    assert {r["name"]: r["plays"] for r in c.history.ratings("risk")["ratings"]} == {"Ann": 1, "Joanna": 1}


def test_the_ratings_endpoint(companion):
    c = companion
    finish_risk(c, ["Ann", "Bob"])
    c.history.warm()
    client = create_app(c).test_client()
    body = client.get("/api/ratings?game=risk").get_json()
    assert [r["name"] for r in body["ratings"]] == ["Ann", "Bob"] and "sigma" in body["model"]
    assert client.get("/api/ratings").status_code == 400
    assert client.get("/api/ratings?game=chess").status_code == 400
    assert client.get("/api/ratings?game=risk&limit=500").status_code == 400
