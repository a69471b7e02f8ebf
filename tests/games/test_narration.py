"""Who did what: every kind of action of every game is told in words (companion/games/narration.py, issue 36 item 5).

Each game is played through scripts that take every action type it knows at least once (a new type fails the
coverage check until it is scripted and told); each description must name who acted and never show a raw type
name or any other key.
"""

from __future__ import annotations

import copy
import re

import pytest

from companion.games import balance_duels as bd
from companion.games.narration import describe
from companion.games.registry import engines
from tests.games.test_balance_of_power import CAPITALS, PLAYERS, counts_game, place
from tests.games.test_global_powers import two_player_round
from tests.games.test_imperial import blocked_setup, move, swiss_bank_game
from tests.reliability.fuzzing import engine_vocabulary

ENGINES = engines(bd.load_model("A"))
SNAKE = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")
RISK_MISSIONS = ["six_cities", "two_regions", "swiss_safe", "danish_naval_base", "sea_line", "rough_terrain",
                 "green_region", "eliminate_neutral"]


def _bd_moves(engine, state, roll, kind):
    state = engine.act(state, {"type": "roll", "value": roll})
    move_ = next(m["move"] for m in engine.view(state)["moves"] if m["move"]["kind"] == kind)
    return state, {"type": "move", "move": move_}


def scripts(game):
    """(first state, [actions]) pairs that between them take every action type of the game."""
    e = ENGINES[game]
    if game == "balance_duels":
        table = e.new({"players": 2, "names": ["Anna", "Emil"], "tip_judge": "table"})
        return [(table, [{"type": "roll", "value": 3}, {"type": "move", "move": {"kind": "place", "seat": 1, "roll": 3,
                                                                               "size": "L", "to_holder": "E3"}},
                         {"type": "tip"}])]
    if game == "imperial":
        three = e.new({"players": ["Ann", "Ben", "Cy"]})
        taxes = [move(n, "taxation") for n in ("russia", "china", "india", "brazil", "united_states", "europe")]
        return [
            (three, taxes + [move("russia", "factory"), {"type": "build_factory", "nation": "russia", "city": "brown2"},
                             move("china", "production1"), {"type": "produce", "nation": "china", "armies": 1, "fleets": 0},
                             move("india", "maneuver1"), {"type": "maneuver", "nation": "india", "done": True},
                             move("brazil", "factory"), {"type": "skip", "nation": "brazil"},
                             {"type": "hide_cash", "player": "Ann", "hidden": True},
                             {"type": "donate", "player": "Ben", "nation": "china", "amount": 1},
                             {"type": "correct", "what": "treasury", "nation": "russia", "value": 9}]),
            (blocked_setup(), [move("russia", "import"), {"type": "allow_pass"}, {"type": "import", "units": ["army"]},
                               {"type": "pass", "player": "Cy"},
                               {"type": "invest", "player": "Ann", "nation": "russia", "value": 20}]),
            (blocked_setup(), [move("russia", "import"), {"type": "block_pass", "player": "Ann"}]),
            (swiss_bank_game(["Ann", "Bob", "Cy"]), []),
        ]
    if game == "risk":
        basic = e.new({"players": ["Anna", "Bob"]})
        post = e.new({"players": ["Anna", "Bob"], "variant": "command_post", "missions": RISK_MISSIONS})
        return [
            (basic, [{"type": "set_counts", "player": "Anna", "territories": 10, "cities": 2},
                     {"type": "set_owner", "territory": "Italy", "owner": "Bob"},
                     {"type": "reinforce"},
                     {"type": "attack", "attackers": 3, "defenders": 1, "defender": "Bob", "to": "Italy"},
                     {"type": "battle", "attacker_dice": [6, 5, 1], "defender_dice": [2]},
                     {"type": "draw_card", "stars": 2},
                     {"type": "maneuver"}, {"type": "end_turn"},
                     {"type": "set_counts", "player": "Bob", "territories": 9, "cities": 1},
                     {"type": "reinforce"},
                     {"type": "attack", "attackers": 2, "defenders": 2, "defender": "Anna"}, {"type": "stop_attack"},
                     {"type": "end_turn"},
                     {"type": "turn_in", "stars": [2]}, {"type": "reinforce"},
                     lambda state: {"type": "take_mission", "mission": next(
                         m["id"] for m in e.view(state)["missions"] if m["status"]["Anna"] is not False)}]),
            (post, [{"type": "set_counts", "player": "Anna", "lost": 12, "territories": 10, "cities": 2},
                    {"type": "set_counts", "player": "neutral", "lost": 3},
                    {"type": "end_turn"}, {"type": "set_counts", "player": "Bob", "territories": 9, "cities": 1},
                    {"type": "neutral_resistance", "roll": [6, 6]}, {"type": "end_turn"},
                    {"type": "buy", "item": "airfield"}, {"type": "remove_airfield", "player": "Anna"},
                    {"type": "set_counts", "player": "Anna", "troops": 20}]),
            (basic, [{"type": "set_counts", "player": "Anna", "territories": 10, "cities": 2}]),
        ]
    if game == "balance_of_power":
        board = e.new({"players": PLAYERS, "tracking": "board", "capitals": CAPITALS})
        return [
            (counts_game(respawn=True), [{"type": "set_counts", "player": "Ann", "territories": 4, "full_capitals": 1},
                                         {"type": "set_counts", "player": "Bob", "pawns": {"king": 1}},
                                         {"type": "declare_empire", "player": "Ann", "empire": "france", "achieved": True},
                                         {"type": "add_territory", "territory": "Atlantis"},
                                         {"type": "move", "pawn": "banker"},
                                         {"type": "attack", "pawn": "general", "target_player": "Bob", "target_pawn": "king"},
                                         {"type": "duplicate", "pawn": "king"}, {"type": "end_turn"},
                                         {"type": "respawn", "pawn": "king"}]),
            (board, [{"type": "add_territory", "territory": "Brittany", "empire": "france"},
                     place("general", "Cornwall"), place("king", "Midlands"), place("banker", "Midlands"),
                     place("general", "Normandy"), place("king", "Normandy"), place("banker", "Brittany"),
                     place("king", "The Netherlands"), place("banker", "Westphalia"), place("general", "Brunswick"),
                     {"type": "set_empire_rule", "empire_rule": "held"},
                     {"type": "move", "pawn": "general", "from": "Cornwall", "to": "Midlands"}]),
        ]
    if game == "global_powers":
        gp = e
        setup = gp.new({"players": ["Ann", "Ben", "Cy"]})
        regions = gp.new({"players": ["Ann", "Ben", "Cy"]})
        for name, pols, chips in (("Europe", {"Ann": 3, "Ben": 1}, {"diplomacy": 5, "economy": 3, "raw": 2, "military": 2}),
                                  ("Russia", {"Cy": 2}, {"economy": 2, "diplomacy": 2, "military": 1})):
            regions = gp.act(regions, {"type": "set_region", "region": name, "politicians": pols, **chips})
        evaluated = two_player_round()
        evaluated["extended"] = True
        evaluated["regions"]["Russia"]["military"] = 2
        return [
            (evaluated, [{"type": "evaluate"}, {"type": "un_intervention", "region": "Russia", "un_roll": 2, "region_roll": 2},
                         {"type": "set_region", "region": "Japan", "politicians": {"Red": 1}, "economy": 1}]),
            (setup, [{"type": "auction", "region": "North-America", "offers": {"Ann": 3, "Ben": 1}},
                     {"type": "set_party", "party": "Cy", "un": 1}, {"type": "start"}]),
            (gp.new({"players": ["Ann", "Ben", "Cy"]}), [{"type": "start", "tie_rolls": {"Ann": 2, "Ben": 1, "Cy": 6}}]),
            (regions, [{"type": "start"},
                       {"type": "recall", "party": "Ben", "region": "Europe"},
                       {"type": "play_card", "card": "development_aid", "from": "Europe", "to": "Russia"},
                       {"type": "end_turn"},
                       {"type": "activate", "region": "Europe"},
                       {"type": "budget", "conversion": "grow"},
                       {"type": "diplomacy", "application": "sanction", "target": "Russia", "for": {"Europe": 2}},
                       {"type": "war", "target": "Russia", "attacker_roll": 3, "defender_roll": 1}]),
            (regions, [{"type": "start", "first": "Ann"}, {"type": "set_party", "party": "Ben", "mauritius": 1},
                       {"type": "activate", "region": "Europe"}, {"type": "purge", "party": "Ben"}, {"type": "rehabilitate", "party": "Ben"},
                       {"type": "trade", "with": "Russia", "give": {"economy": 1}, "get": {"economy": 1}}]),
            (regions, [{"type": "start", "first": "Ann"}, {"type": "activate", "region": "Europe"},
                       {"type": "migration", "to": "Russia"}, {"type": "propaganda", "to": "Russia"},
                       {"type": "failed_ballot", "proposal": "a war on Russia"}]),
        ]
    raise AssertionError(game)


def played(game):
    """Every (before, action, after) the scripts give, in order."""
    e = ENGINES[game]
    steps = []
    for state, actions in scripts(game):
        for action in actions:
            action = action(state) if callable(action) else action
            after = e.act(state, copy.deepcopy(action))
            steps.append((state, action, after))
            state = after
    return steps


def names_in(game, state) -> set[str]:
    view = ENGINES[game].view(state)
    found = {p["name"] for p in view.get("players", []) if isinstance(p, dict)}
    found |= {n["name"] for n in view.get("nations", []) if isinstance(n, dict)}
    return found | {"The table", "Correction", "Auction", "Evaluation", "The game", "UN troops"}


@pytest.mark.parametrize("game", sorted(ENGINES))
def test_every_action_type_is_told_in_words_naming_who(game):
    types = set(engine_vocabulary(ENGINES[game]).types)
    steps = played(game)
    told = {a["type"] for _, a, _ in steps}
    assert types <= told, f"scripts miss {sorted(types - told)}: script and describe them"
    for before, action, after in steps:
        text = describe(game, before, action, after)
        assert text and text.strip() == text
        assert not SNAKE.search(text), f"{text!r} shows a key ({action})"
        assert text != action["type"] and not text.startswith(action["type"]) and len(text.split()) >= 3, \
            f"{text!r} names the action by its type"
        assert "None" not in text and "{" not in text, f"{text!r} shows raw data ({action})"
        assert any(who in text for who in names_in(game, before)), f"{text!r} does not say who ({action})"


def test_the_issues_examples():
    engine = ENGINES["balance_duels"]
    state = engine.new({"players": 2, "names": ["Anna", "Emil"]})
    rolled = engine.act(state, {"type": "roll", "value": 6})
    assert describe("balance_duels", state, {"type": "roll", "value": 6}, rolled) == "Anna rolled 6"
    place = next(m["move"] for m in engine.view(rolled)["moves"] if m["move"]["kind"] == "place")
    after = engine.act(rolled, {"type": "move", "move": place})
    assert describe("balance_duels", rolled, {"type": "move", "move": place}, after) == "Anna placed L on E6"
    imp = ENGINES["imperial"].new({"players": ["Ann", "Ben", "Cy"]})
    hide = {"type": "hide_cash", "player": "Ann", "hidden": True}
    assert describe("imperial", imp, hide, ENGINES["imperial"].act(imp, hide)) == "Ann keeps their cash secret"


def test_risk_says_the_round_as_the_header_does():
    engine = ENGINES["risk"]
    end = {"type": "end_turn"}
    first = engine.new({"players": ["Anna", "Bob"]})
    second = engine.act(first, end)
    assert describe("risk", first, end, second) == "Anna ended the turn; Bob is next"
    assert describe("risk", second, end, engine.act(second, end)) == "Bob ended the turn; Anna opens round 2"


def test_an_action_the_words_do_not_know_is_still_told_by_its_kind():
    engine = ENGINES["risk"]
    state = engine.new({"players": ["Anna", "Bob"]})
    assert describe("risk", state, {"type": "new_kind_of_thing"}, state) == "Anna: new kind of thing"
    assert describe("nonesuch", state, {"type": "hide_cash"}, state) == "hide cash"
