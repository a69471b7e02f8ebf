"""Counts no box holds: every engine refuses them, naming the field and its bound, and changes nothing.

What the table could hit: a slip of the thumb on the page's number field (2000 for 20),
or a replayed record with a bad line. A refused action must leave the game as it was and
answer at once, because the engines run while the table's lock is held.
"""

from __future__ import annotations

import copy
import time
from fractions import Fraction
from functools import lru_cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.games import balance_of_power as bop
from companion.games import dice
from companion.games import global_powers as gp
from companion.games import imperial
from companion.games import risk
from companion.games.base import RuleError
from companion.games.imperial_rules import MAX_MONEY


def refused(act, state, action, *words):
    """act(state, action) raises a RuleError whose message holds every word, and state is untouched."""
    before = copy.deepcopy(state)
    started = time.process_time()   # CPU time: other processes on a busy machine do not count
    with pytest.raises(RuleError) as error:
        act(state, action)
    assert time.process_time() - started < 0.5
    for word in words:
        assert word in str(error.value), str(error.value)
    assert state == before
    return str(error.value)


# ---------------------------------------------------------------- Risk


def command_post():
    missions = ["six_cities", "two_regions", "swiss_safe", "danish_naval_base", "sea_line", "rough_terrain", "green_region", "eliminate_neutral"]
    return risk.new({"players": ["Ann", "Bob"], "variant": "command_post", "missions": missions})


def attacking(state):
    state = risk.act(state, {"type": "set_counts", "player": "Ann", "territories": 12, "cities": 2})
    state = risk.act(state, {"type": "set_counts", "player": "Bob", "territories": 10})
    return risk.act(state, {"type": "reinforce"})


def test_a_2000_against_2000_attack_is_refused_at_once():
    state = attacking(risk.new({"players": ["Ann", "Bob"]}))
    refused(risk.act, state, {"type": "attack", "defender": "Bob", "attackers": 2000, "defenders": 5}, "'attackers'", str(risk.MAX_TROOPS))
    refused(risk.act, state, {"type": "attack", "defender": "Bob", "attackers": 5, "defenders": 2000}, "'defenders'", str(risk.MAX_TROOPS))


def test_the_largest_battle_the_box_allows_is_shown_quickly():
    state = attacking(risk.new({"players": ["Ann", "Bob"]}))
    n = risk.MAX_TROOPS
    state = risk.act(state, {"type": "attack", "defender": "Bob", "attackers": n, "defenders": n})
    risk.dice.attack_outcomes.cache_clear()
    started = time.process_time()   # CPU time: other processes on a busy machine do not count
    shown = risk.view(state)["attack"]
    assert time.process_time() - started < 2.0
    assert 0 < shown["conquest"] < 1


@pytest.mark.parametrize("call", [
    lambda: risk.attack_odds(2000, 2000),
    lambda: risk.conquest_probability(5, 2000),
    lambda: risk.uprising_probability(3, 5000),
])
def test_the_pure_odds_refuse_armies_beyond_the_box(call):
    with pytest.raises(ValueError, match=str(risk.MAX_TROOPS)):
        call()


def test_set_counts_refuses_troops_beyond_the_box():
    state = command_post()
    refused(risk.act, state, {"type": "set_counts", "player": "Ann", "troops": 10**6}, "'troops'", str(risk.MAX_TROOPS))
    refused(risk.act, state, {"type": "set_counts", "player": "Ann", "lost": 10**6}, "'lost'", str(risk.MAX_TROOPS))
    refused(risk.act, state, {"type": "set_counts", "player": "Ann", "region_bonus": 10**6}, "'region_bonus'")


def test_an_uprising_against_a_full_army_does_not_recurse():
    # The recursion limit is about 1000 frames; the box's largest army must not come near it.
    state = command_post()
    state = risk.act(state, {"type": "set_counts", "player": "Ann", "lost": 6})
    state = risk.act(state, {"type": "buy", "item": "uprising"})
    uprising = {"type": "attack", "uprising": True, "defender": "Bob", "attackers": 3}
    refused(risk.act, state, {**uprising, "defenders": 5000}, "'defenders'", str(risk.MAX_TROOPS))
    state = risk.act(state, {**uprising, "defenders": risk.MAX_TROOPS})
    risk.uprising_probability.cache_clear()
    assert 0 < risk.view(state)["attack"]["conquest"] < 1e-6


@lru_cache(maxsize=None)
def uprising_by_recursion(attackers, defenders):
    """The rulebook's uprising, told as it is played: roll, and fight on only while the neutral lost nothing."""
    if defenders == 0:
        return Fraction(1)
    total = Fraction(0)
    for (la, ld), p in dice.roll_distribution(min(attackers, 3), min(defenders, 2)).items():
        if defenders - ld == 0:
            total += p
        elif la == 0:
            total += p * uprising_by_recursion(attackers, defenders - ld)
    return total


@settings(max_examples=30, deadline=None)
@given(a=st.integers(1, 3), d=st.integers(0, 40))
def test_uprising_odds_match_the_fight_told_roll_by_roll(a, d):
    assert risk.uprising_probability(a, d) == uprising_by_recursion(a, d)


def test_troops_raised_past_the_bound_are_refused_not_cut():
    state = command_post()
    state = risk.act(state, {"type": "set_counts", "player": "Ann", "territories": 12, "troops": risk.MAX_TROOPS - 1})
    state = risk.act(state, {"type": "set_counts", "player": "Bob", "territories": 10})
    refused(risk.act, state, {"type": "reinforce"}, "Ann", str(risk.MAX_TROOPS))


# ---------------------------------------------------------------- Imperial 2030


def test_imperial_money_corrections_beyond_any_table_are_refused():
    state = imperial.new({"players": ["Ann", "Bob", "Cy"]})
    refused(imperial.act, state, {"type": "correct", "what": "cash", "player": "Ann", "value": 10**9}, "'value'", str(MAX_MONEY))
    refused(imperial.act, state, {"type": "correct", "what": "treasury", "nation": "china", "value": MAX_MONEY + 1}, "'value'", str(MAX_MONEY))
    state = imperial.act(state, {"type": "correct", "what": "cash", "player": "Ann", "value": MAX_MONEY})
    assert next(p.cash for p in state.players if p.name == "Ann") == MAX_MONEY


def test_imperial_battles_cannot_remove_more_units_than_stand_on_the_board():
    state = imperial.new({"players": ["Ann", "Bob", "Cy"]})
    state = imperial.act(state, {"type": "rondel", "nation": "russia", "target": "maneuver1"})
    battle = {"type": "maneuver", "nation": "russia", "battles": [{"against": "china", "unit": "army", "count": 10**6}]}
    refused(imperial.act, state, battle, "Russia has 0 armies")


# ---------------------------------------------------------------- Balance of Power (1815)


def test_balance_of_power_counts_are_bounded_by_the_pawns():
    state = bop.new({"players": [{"name": "Ann", "empire": "great_britain"}, {"name": "Bob", "empire": "france"}]})
    # A territory held alone needs one of the player's 45 pawns.
    refused(bop.act, state, {"type": "set_counts", "player": "Ann", "territories": 10**6}, "'territories'", "45")
    refused(bop.act, state, {"type": "set_counts", "player": "Ann", "full_capitals": 7}, "'full_capitals'", "6")


# ---------------------------------------------------------------- Global Powers


def test_global_powers_party_counts_are_bounded_by_the_box():
    state = gp.new({"players": ["Red", "Blue"]})
    refused(gp.act, state, {"type": "set_party", "party": "Red", "warmonger": 10**6}, "'warmonger'", "16")
    refused(gp.act, state, {"type": "set_party", "party": "Red", "un": 10**6}, "'un'", "20")


def test_risk_territory_names_off_the_map_are_refused_with_the_nearest_names():
    state = attacking(risk.new({"players": ["Ann", "Bob"]}))
    message = refused(risk.act, state, {"type": "set_owner", "territory": "Switzerlnd", "owner": "Ann"}, "'territory'")
    assert "did you mean Switzerland" in message
