"""Each game's summary of a play, on worked examples: standing, winners, how it ended, turns, what the stats need."""

from types import SimpleNamespace

import pytest

from companion.games import balance_duels as bd
from companion.games import balance_of_power as bop
from companion.games import global_powers as gp
from companion.games import imperial as im
from companion.games import plays
from companion.games import risk
from companion.games.global_powers_rules import REGIONS
from companion.simulation.plays import model_a

MODEL = model_a()
BD = bd.engine(MODEL)

# a two-player game that Bob tips on his second turn: Ann's pawns on E1 and E2, Bob's moved onto E4
TIPPED = [
    {"type": "roll", "value": 1},
    {"type": "move", "move": {"kind": "place", "seat": 1, "roll": 1, "size": "L", "to_holder": "E1"}},
    {"type": "roll", "value": 6},
    {"type": "move", "move": {"kind": "place", "seat": 2, "roll": 6, "size": "L", "to_holder": "W2"}},
    {"type": "roll", "value": 2},
    {"type": "move", "move": {"kind": "place", "seat": 1, "roll": 2, "size": "L", "to_holder": "E2"}},
    {"type": "roll", "value": 5},
    {"type": "move", "move": {"kind": "advance", "seat": 2, "roll": 5, "size": "L", "from_holder": "W2",
                              "to_holder": "E4"}},
]


def events(actions, undo_after=()):
    """Event-like objects for fold: each action, and an undo (then the same action again) after those listed."""
    out, seq = [], 1
    for i, a in enumerate(actions):
        if i in undo_after:
            out.append(SimpleNamespace(kind="action", body={"action": a}, seq=(seq := seq + 1)))
            out.append(SimpleNamespace(kind="undo", body={}, seq=(seq := seq + 1)))
        out.append(SimpleNamespace(kind="action", body={"action": a}, seq=(seq := seq + 1)))
    return out


def summary(game, engine, options, actions, **kw):
    return plays.summarize(game, engine, options, plays.fold(engine, options, events(actions, **kw)))


def test_ranks_share_places_and_put_the_knocked_out_last():
    assert plays.ranks(["a", "b", "c", "d"], {"a": 5, "b": 3, "c": 3, "d": 1}, []) == {"a": 1, "b": 2, "c": 2, "d": 4}
    assert plays.ranks(["a", "b", "c"], {"a": 0, "b": 9, "c": None}, ["a"]) == {"a": 1, "b": 2, "c": 3}
    # d went out first, c last: c ranks above d; the score of those knocked out does not count
    assert plays.ranks(["a", "b", "c", "d"], {"a": 1, "b": 0, "c": 4, "d": 9}, ["a"], below=["c", "d"]) == \
        {"a": 1, "b": 2, "c": 3, "d": 4}


def test_a_tip_in_balance_duels():
    options = {"players": 2, "names": ["Ann", "Bob"], "pawns": 4}
    s = summary("balance_duels", BD, options, TIPPED)
    assert s["over"] and s["winners"] == ["Ann"]
    assert s["ended"]["code"] == "tip" and "Bob tipped the arm" in s["ended"]["text"]
    assert [(p["seat"], p["name"], p["colour"], p["rank"], p["winner"]) for p in s["players"]] == \
        [(1, "Ann", "black", 1, True), (2, "Bob", "yellow", 2, False)]
    assert s["extra"]["tips"] == [{"seat": 2, "name": "Bob", "holder": "E4", "turn": 8}]
    assert s["turns"] == 4 and s["actions"] == 8
    assert s["variant"] == {"pawns": 4}


def test_an_undone_action_is_not_part_of_the_play():
    options = {"players": 2, "names": ["Ann", "Bob"], "pawns": 4}
    plain = summary("balance_duels", BD, options, TIPPED)
    assert summary("balance_duels", BD, options, TIPPED, undo_after=(1, 5)) == plain
    folded = plays.fold(BD, options, events(TIPPED[:3]) + [SimpleNamespace(kind="undo", body={}, seq=99)])
    assert len(folded.actions) == 2 and folded.seqs[-1] == 3


def test_an_unfinished_game_has_no_standing():
    options = {"players": 2, "names": ["Ann", "Bob"]}
    s = summary("balance_duels", BD, options, TIPPED[:4])
    assert not s["over"] and s["winners"] == [] and s["ended"] is None
    assert [p["rank"] for p in s["players"]] == [None, None] and s["extra"]["tips"] == []


def test_imperial_ends_at_25_power_points_with_the_final_scoring():
    options = {"players": ["Ann", "Bob", "Cy"]}
    nation = im.view(im.new(options))["to_move"]
    actions = [{"type": "correct", "what": "power_points", "nation": nation, "value": 22},
               {"type": "correct", "what": "flags", "nation": nation, "value": 8},
               {"type": "rondel", "nation": nation, "target": "taxation"}]
    s = summary("imperial", im.ENGINE, options, actions)
    assert s["over"] and s["ended"]["code"] == "power"
    assert s["extra"]["power"][nation] == 25 and s["turns"] == 1
    scores = {p["name"]: p["score"] for p in s["players"]}
    assert scores == im.scores(plays.fold(im.ENGINE, options, events(actions)).states[-1])
    best = max(scores.values())
    assert s["winners"] == [n for n, v in scores.items() if v == best]
    assert {p["name"]: p["rank"] for p in s["players"]}[s["winners"][0]] == 1


def test_imperial_hidden_cash_stays_hidden_until_the_end():
    options = {"players": ["Ann", "Bob"]}
    s = summary("imperial", im.ENGINE, options, [{"type": "hide_cash", "player": "Ann", "hidden": True}])
    assert {p["name"]: p["score"] for p in s["players"]}["Ann"] is None


def test_risk_ends_when_a_player_holds_no_territory():
    options = {"players": ["Ann", "Bob"], "colours": {"Ann": "red", "Bob": "blue"},
               "capitals": {"Ann": "Germany", "Bob": "Poland"}}
    actions = [{"type": "set_counts", "player": "Ann", "territories": 12},
               {"type": "set_counts", "player": "Bob", "territories": 1},
               {"type": "attack", "defender": "Bob", "attackers": 5, "defenders": 1, "from": "Germany", "to": "Poland"},
               {"type": "battle", "attacker_dice": [6, 3, 2], "defender_dice": [5]}]
    s = summary("risk", risk.ENGINE, options, actions)
    assert s["winners"] == ["Ann"] and s["ended"]["code"] == "elimination"
    assert [(p["name"], p["colour"], p["rank"]) for p in s["players"]] == [("Ann", "red", 1), ("Bob", "blue", 2)]
    assert s["variant"] == {}      # the capitals name the players: not a variant


def test_balance_of_power_points_and_a_draw():
    options = {"players": [{"name": "Ann", "empire": "france"}, {"name": "Bob", "empire": "prussia"}]}
    s = summary("balance_of_power", bop.ENGINE, options,
                [{"type": "set_counts", "player": "Ann", "territories": 27, "full_capitals": 1}])
    assert s["winners"] == ["Ann"] and s["ended"]["code"] == "points"
    assert s["players"][0]["role"] == "Kingdom of France" and s["players"][0]["score"] == 30
    drawn = summary("balance_of_power", bop.ENGINE, options, [
        {"type": "set_counts", "player": "Ann", "territories": 10, "full_capitals": 0, "pawns": {"general": 15}},
        {"type": "set_counts", "player": "Bob", "territories": 10, "full_capitals": 0, "pawns": {"general": 15}},
        {"type": "duplicate", "pawn": "general"}])
    assert drawn["over"] and drawn["winners"] == [] and drawn["ended"]["code"] == "draw"
    assert [p["rank"] for p in drawn["players"]] == [1, 1]


def test_global_powers_dominance():
    options = {"players": [{"name": "Red", "colour": "red"}, {"name": "Blue", "colour": "blue"}]}
    actions = [{"type": "set_region", "region": r, "politicians": {"Red": 2}} for r in REGIONS[:9]]
    actions += [{"type": "set_region", "region": "Africa", "politicians": {"Blue": 2}}, {"type": "start", "first": "Red"},
                {"type": "activate", "region": "Europe"}, {"type": "migration", "to": "Southeast-Asia"}]
    s = summary("global_powers", gp.ENGINE, options, actions)
    assert s["winners"] == ["Red"] and s["ended"]["code"] == "dominance"
    assert {p["name"]: p["score"] for p in s["players"]} == gp.ENGINE.scores(
        plays.fold(gp.ENGINE, options, events(actions)).states[-1])


def test_the_round_is_the_fold_of_the_events_an_undo_takes_it_back():
    """Risk and Global Powers count rounds in their state (turn.round), so a stored play, folded again by the
    table's host or by the history, says the round the events say, and an undo across a round's start goes back."""
    end = {"type": "end_turn"}
    gp_actions = [{"type": "set_region", "region": "Europe", "politicians": {"Red": 2}},
                  {"type": "start", "first": "Red"}, {"type": "activate", "region": "Europe"}, end,
                  {"type": "evaluate"}]
    for engine, options, actions, before, after in (
            (risk.ENGINE, {"players": ["Ann", "Bob"]}, [end, end], ("Bob", 1), ("Ann", 2)),
            (gp.ENGINE, {"players": ["Red", "Blue"]}, gp_actions, ("Red", 1), ("Blue", 2))):
        folded = plays.fold(engine, options, events(actions))
        turn = engine.view(folded.states[-1])["turn"]
        assert (turn["player"], turn["round"]) == after
        undone = plays.fold(engine, options, events(actions) + [SimpleNamespace(kind="undo", body={}, seq=99)])
        turn = engine.view(undone.states[-1])["turn"]
        assert (turn["player"], turn["round"]) == before and not undone.problems
        assert undone.states[-1] == plays.fold(engine, options, events(actions[:-1])).states[-1]


@pytest.mark.parametrize("n,limit", [(1, 5), (5, 5), (6, 5), (1000, 240)])
def test_series_keep_the_first_and_last_points(n, limit):
    picked = plays.spread(n, limit)
    assert picked[0] == 0 and picked[-1] == n - 1 and len(picked) <= limit and picked == sorted(set(picked))


def test_the_torque_series_follows_the_arm():
    options = {"players": 2, "names": ["Ann", "Bob"], "pawns": 4}
    folded = plays.fold(BD, options, events(TIPPED))
    series = plays.torque_series(lambda s: bd.net_torque(MODEL, s), folded, 100)
    assert series[0] == 0 and series[2] == 1330.0 and series[-1] == 3230.0 > MODEL.tip_torque
