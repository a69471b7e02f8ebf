"""What the players type, every engine alike (issue 34): names bounded, no control characters, only the game's colours.

A refused name or colour is a RuleError naming the field as the players see it and showing only the
start of what was given; nothing is cut silently, and the options (or the state) given are left as they were.
"""

from __future__ import annotations

import copy
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.games import balance_duels as bd
from companion.games import balance_of_power as bop
from companion.games import global_powers as gp
from companion.games import imperial
from companion.games import names
from companion.games import risk
from companion.games.base import RuleError
from companion.games.registry import engines

ENGINES = engines(bd.load_model("A"))


# each engine's New game options with `name` as the first player's, the other players plainly named
def with_name(game: str, name: str) -> dict:
    return {
        "balance_duels": {"players": 2, "names": [name, "Bob"]},
        "imperial": {"players": [name, "Bob"]},
        "risk": {"players": [name, "Bob"]},
        "balance_of_power": {"players": [{"name": name, "empire": "france"}, {"name": "Bob", "empire": "prussia"}]},
        "global_powers": {"players": [name, "Bob"]},
    }[game]


def player_names(game: str, state) -> list[str]:
    return [p["name"] for p in ENGINES[game].view(state)["players"]]


def refused(call, given, *words):
    """call(given) raises a RuleError holding every word, and leaves `given` as it was; the message, short."""
    before = copy.deepcopy(given)
    with pytest.raises(RuleError) as error:
        call(given)
    message = str(error.value)
    for word in words:
        assert word in message, message
    assert given == before
    assert len(message) < 300, message          # the start of a long value, never all of it
    return message


GAMES = sorted(ENGINES)


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("length", [25, 10_000])
def test_every_engine_refuses_a_name_past_the_bound(game, length):
    message = refused(ENGINES[game].new, with_name(game, "x" * length), "a player's name is at most 24 characters", "'xxxx")
    assert "…" in message


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("hidden", ["\n", "\r", "\t", "\x00", "\x1b", "\x7f", "\u202e", "\u200b", "\ufeff", "\u2028", "\ud800"])
def test_every_engine_refuses_a_name_with_a_control_character(game, hidden):
    message = refused(ENGINES[game].new, with_name(game, f"An{hidden}n"), "a player's name cannot hold control characters",
                      f"U+{ord(hidden):04X}")
    assert hidden not in message                  # shown escaped, so the message cannot garble a line either


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("name", ["A", "x" * 24, "Zoë", "Ángel Núñez", "李雷", "O'Brien-Smith", "🙂" * 24, "Ann  Marie"])
def test_every_engine_keeps_a_name_within_the_bound(game, name):
    state = ENGINES[game].new(with_name(game, name))
    assert player_names(game, state)[0] == name or name in player_names(game, state)


@pytest.mark.parametrize("game", [g for g in GAMES if g != "imperial"])
def test_spaces_around_a_name_do_not_count(game):
    # Imperial refuses spaces around a name (its own rule); the others strip them, then the bound applies
    state = ENGINES[game].new(with_name(game, "  " + "y" * 24 + "  "))
    assert "y" * 24 in player_names(game, state)


# a name of visible characters: letters, digits, marks, symbols, punctuation, from any script
VISIBLE = st.characters(blacklist_categories=("Cc", "Cf", "Cs", "Zl", "Zp", "Zs"))


@pytest.mark.parametrize("game", GAMES)
def test_any_visible_name_within_the_bound_is_kept_and_any_hidden_character_refused(game):
    @settings(max_examples=60, deadline=None, database=None)
    @given(name=st.text(VISIBLE, min_size=1, max_size=24), where=st.integers(0, 24),
           hidden=st.characters(whitelist_categories=("Cc", "Cf", "Zl", "Zp")))
    def run(name, where, hidden):
        if name.lower() in ("bob", "neutral"):     # another player's name, or Risk's third army
            return
        assert name in player_names(game, ENGINES[game].new(with_name(game, name)))
        spoiled = name[:where] + hidden + name[where:]
        if len(spoiled.strip()) <= 24 and spoiled.strip() != name:
            refused(ENGINES[game].new, with_name(game, spoiled), "control characters")

    run()


def test_the_rule_counts_characters_not_bytes_and_shows_hidden_ones_escaped():
    assert names.player_name("é" * 24) == "é" * 24
    with pytest.raises(RuleError, match=r"^a player's name cannot hold control characters \(U\+000A\): 'Ann\\nBob'$"):
        names.player_name("Ann\nBob")
    assert names.shown("x" * 30) == repr("x" * 24 + "…")
    assert all(unicodedata.category(c) in names.HIDDEN for c in "\n\u202e\u2029")


# ---------------------------------------------------------------- colours

CSS = "red;position:fixed;top:0;left:0;width:100vw;height:100vh;z-index:2147483647;background:url(http://x/b.png)"


@pytest.mark.parametrize("colour", [CSS, "purple", "#ff0000", "rgb(1,2,3)", "", 3, None, ["red"]])
def test_risk_refuses_a_colour_that_is_not_one_of_its_own(colour):
    message = refused(risk.new, {"players": ["Ann", "Bob"], "colours": {"Ann": colour, "Bob": "blue"}},
                      "'colours': Ann's colour must be one of red, blue, green, yellow, black, white")
    assert "z-index" not in message


def test_risk_keeps_its_own_colours_in_any_case_and_refuses_one_twice():
    state = risk.new({"players": ["Ann", "Bob"], "colours": {"Ann": " Green", "Bob": "WHITE"}})
    assert state["colours"] == {"Ann": "green", "Bob": "white"}
    assert [p["colour"] for p in risk.view(state)["players"]] == ["green", "white"]
    assert risk.new({"players": ["Ann", "Bob"]})["colours"] == {"Ann": "red", "Bob": "blue"}
    refused(risk.new, {"players": ["Ann", "Bob"], "colours": {"Ann": "red", "Bob": "Red"}}, "'colours': both players chose red")


@pytest.mark.parametrize("colour", [CSS, "purple", "grey", "#00f", 3, ["blue"]])
def test_balance_of_power_refuses_a_colour_that_is_not_one_of_its_own(colour):
    players = [{"name": "Ann", "empire": "france", "colour": colour}, {"name": "Bob", "empire": "prussia"}]
    message = refused(bop.new, {"players": players}, "'players': Ann's colour must be one of blue, red, green, yellow, black, white")
    assert "z-index" not in message


def test_balance_of_power_keeps_its_own_colours_and_gives_one_to_who_chose_none():
    players = [{"name": "Ann", "empire": "france", "colour": "Black "}, {"name": "Bob", "empire": "prussia", "colour": ""},
               {"name": "Cy", "empire": "austria"}]
    state = bop.new({"players": players})
    assert [p["colour"] for p in bop.view(state)["players"]] == ["black", "blue", "red"]
    everyone = [{"name": f"P{i}", "empire": e} for i, e in enumerate(bop.EMPIRES)]
    assert sorted(p["colour"] for p in bop.new({"players": everyone})["players"].values()) == sorted(bop.COLOURS)


def test_global_powers_still_refuses_a_colour_of_its_own_choosing():
    refused(gp.new, {"players": [{"name": "Ann", "colour": CSS}, "Bob"]}, "'players': Ann's colour must be one of")


# ---------------------------------------------------------------- other typed text


def test_an_1815_capital_the_map_does_not_know_is_a_bounded_name():
    state = bop.new({"players": 2, "capitals": {"france": "Lutetia  Parisiorum"}})
    assert state["capitals"]["france"] == "Lutetia Parisiorum"
    refused(bop.new, {"players": 2, "capitals": {"france": "x" * 10_000}}, "'capitals': france's capital is at most 40 characters")
    refused(bop.new, {"players": 2, "capitals": {"france": "Par\u202eis"}}, "'capitals': france's capital cannot hold control")
    # a name the map knows is the map's own, whatever the case and spacing it was typed in
    assert bop.new({"players": 2, "capitals": {"france": "  paris "}})["capitals"]["france"] == "Paris"


def test_an_added_1815_territory_is_a_bounded_name():
    state = bop.new({"players": 2})
    for bad, words in (("x" * 41, "'territory' is at most 40 characters"), ("Bri\u200btany", "'territory' cannot hold control"),
                       ("   ", "'territory' must be a name of 1 to 40 characters")):
        refused(lambda s: bop.act(s, {"type": "add_territory", "territory": bad}), state, words)
    after = bop.act(state, {"type": "add_territory", "territory": "Brittany\nCoast"})   # whitespace runs are one space
    assert "Brittany Coast" in after["added"]


def test_imperial_city_names_are_bounded_names():
    bad = {"city_names": {"russia": {"brown1": "Mos\x00cow"}}, "players": ["Ann", "Bob"]}
    refused(imperial.new, bad, "option 'city_names.russia.brown1' cannot hold control")
    refused(imperial.new, {**bad, "city_names": {"russia": {"brown1": "x" * 41}}}, "1 to 40 characters")


def test_notes_kept_with_a_move_are_bounded():
    state = gp.new({"players": ["Red", "Blue"]})
    state = gp.act(state, {"type": "set_region", "region": "Africa", "politicians": {"Red": 2}, "economy": 1})
    state = gp.act(gp.act(state, {"type": "start", "first": "Red"}), {"type": "activate", "region": "Africa"})
    refused(lambda s: gp.act(s, {"type": "failed_ballot", "proposal": "x" * 101}), state, "'proposal' is at most 100 characters")
    refused(lambda s: gp.act(s, {"type": "failed_ballot", "proposal": "a\nb"}), state, "'proposal' cannot hold control")
    after = gp.act(state, {"type": "failed_ballot", "proposal": "sanctions against India"})
    assert after["turn"]["log"][-1] == {"action": "failed_ballot", "proposal": "sanctions against India"}

    game = imperial.new({"players": ["Ann", "Bob"]})
    fix = {"type": "correct", "what": "treasury", "nation": "china", "value": 5}
    refused(lambda s: imperial.act(s, {**fix, "reason": "r" * 101}), game, "'reason' is at most 100 characters")
    assert imperial.act(game, {**fix, "reason": "miscounted"}) != game
