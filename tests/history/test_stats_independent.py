"""The history's stats against an independent count over the events (issue 33).

Each game in the store is replayed here straight from its events with the rules engines (`engine.new`, then
`engine.act` for every action event, a pop of the last state for every undo event), not through
companion/history or companion/games/plays.py. From each final state only what the engines plainly expose is
read:

- over: the view's "over" (Balance Duels, Risk, Balance of Power, Global Powers) or "game_over" (Imperial);
- the winners: the view's "winners" as seat numbers mapped to the view's players' names (Balance Duels), its
  "winners" as names (Imperial), its single "winner" name (the other three); counted only once the play is over;
- the scores: `engine.scores(state)`, the one score interface every engine has ({name: number}).

A person is a name compared without case or accents ("Zoë" and "zoe" are one); a seat's own default name,
"Player N" or "Guest…" counts for no one. No people events are written, so nobody is renamed or merged.

From that the count gives, per person and per game and overall: plays, finished plays, wins, the best final
score and the mean final score (points per game) over the finished plays; and per game: plays, finished plays
and the mean winning score. These are asserted equal to what `PlayIndex.stats` (what the page's stats endpoint
returns) reports, on a generated night with every game in it.
"""

import re
import unicodedata
from collections import defaultdict

import pytest

from companion.games import balance_duels as bd
from companion.games import registry
from companion.history.index import PlayIndex
from companion.simulation import plays as sim
from companion.store import EventStore

MODEL = sim.model_a()
ENGINES = registry.engines(MODEL)


@pytest.fixture(scope="module")
def night(tmp_path_factory):
    d = tmp_path_factory.mktemp("nights")
    sim.write_store(d / "db.sqlite3", sim.make_plays(60, seed=11), seed=11)
    store = EventStore(d / "db.sqlite3")
    yield store
    store.close()


def _key(name):
    bare = "".join(c for c in unicodedata.normalize("NFKD", name) if not unicodedata.combining(c))
    return " ".join(bare.casefold().split())


def _guest(name, engine):
    k = _key(name)
    return (not k or k.startswith("guest") or re.match(r"^(player|seat) ?\d+$", k) is not None
            or k in {_key(n) for n in engine.default_names})


def replay(store, game_id):
    """(game, final state) of one game, from its events alone."""
    events = store.game_events(game_id)
    assert events[0].kind == "new_game"
    game = events[0].body["game"]
    engine = ENGINES[game]
    state = engine.new(dict(events[0].body.get("options", {})))
    stack = []
    for ev in events[1:]:
        if ev.kind == "action":
            stack.append(state)
            state = engine.act(state, ev.body["action"])
        elif ev.kind == "undo" and stack:
            state = stack.pop()
    return game, state


def outcome(game, state):
    """(over, winner names, {name: score}) as the engine's view and scores show them."""
    engine = ENGINES[game]
    view = engine.view(state)
    scores = engine.scores(state)
    if game == "balance_duels":
        over = bool(view["over"])
        by_seat = {p["seat"]: p["name"] for p in view["players"]}
        winners = [by_seat[s] for s in view["winners"]]
    elif game == "imperial":
        over = bool(view["game_over"])
        winners = list(view["winners"])
    else:
        over = bool(view["over"])
        winners = [view["winner"]] if view.get("winner") else []
    return over, (winners if over else []), scores


def _mean(xs):
    return round(sum(xs) / len(xs), 2) if xs else None


def independent_count(store):
    per = defaultdict(lambda: defaultdict(lambda: {"plays": 0, "finished": 0, "wins": 0, "scores": []}))
    games = defaultdict(lambda: {"plays": 0, "finished": 0, "winning": []})
    ids = [ev.game_id for ev in store.games(limit=10_000)]
    for gid in ids:
        game, state = replay(store, gid)
        over, winners, scores = outcome(game, state)
        g = games[game]
        g["plays"] += 1
        g["finished"] += int(over)
        g["winning"] += [float(scores[w]) for w in winners]
        for name, score in scores.items():
            if _guest(name, ENGINES[game]):
                continue
            for which in ("*", game):
                t = per[_key(name)][which]
                t["plays"] += 1
                if over:
                    t["finished"] += 1
                    t["wins"] += int(name in winners)
                    t["scores"].append(float(score))
    players = {k: {which: {"plays": t["plays"], "finished": t["finished"], "wins": t["wins"],
                           "best_score": max(t["scores"]) if t["scores"] else None,
                           "points_per_game": _mean(t["scores"])}
                   for which, t in tallies.items()}
               for k, tallies in per.items()}
    game_rows = {g: {"plays": r["plays"], "finished": r["finished"], "average_winning_score": _mean(r["winning"])}
                 for g, r in games.items()}
    return len(ids), players, game_rows


def reported(store):
    idx = PlayIndex(store, lambda: ENGINES, torque=lambda s: bd.net_torque(MODEL, s))
    idx.warm()
    got = idx.stats(limit=1000)
    assert got["total_players"] == len(got["players"])
    fields = ("plays", "finished", "wins", "best_score", "points_per_game")
    players = {}
    for row in got["players"]:
        k = _key(row["name"])
        assert k not in players, f"two stats rows for one person: {row['name']!r}"
        players[k] = {"*": {f: row[f] for f in fields},
                      **{g: {f: t[f] for f in fields} for g, t in row["games"].items()}}
    games = {r["game"]: {"plays": r["plays"], "finished": r["finished"],
                         "average_winning_score": r["average_winning_score"]} for r in got["games"]}
    return players, games


def test_the_night_has_every_game_finished_and_not(night):
    n, _, games = independent_count(night)
    assert n == 60
    assert set(games) == set(sim.GAMES)
    assert all(r["finished"] > 0 for r in games.values())
    assert any(r["finished"] < r["plays"] for r in games.values())


def test_per_game_stats_equal_the_independent_count(night):
    _, _, counted = independent_count(night)
    _, stats = reported(night)
    assert stats == counted


def test_per_player_stats_equal_the_independent_count(night):
    _, counted, _ = independent_count(night)
    stats, _ = reported(night)
    assert set(stats) == set(counted)
    for person in counted:
        assert stats[person] == counted[person], person
