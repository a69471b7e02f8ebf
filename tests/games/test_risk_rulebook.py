"""Risk: Balance of Power, case by case from the rulebook: what a careful table would catch (issue 18)."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.games import risk
from companion.games.base import RuleError

MISSIONS = ["six_cities", "two_regions", "swiss_safe", "danish_naval_base", "sea_line", "rough_terrain", "green_region", "eliminate_neutral"]


def play(state, *actions):
    for action in actions:
        state = risk.act(state, action)
    return state


def refused(state, action, *words):
    """The action is refused with every word in the message, and the state is untouched."""
    before = copy.deepcopy(state)
    with pytest.raises(RuleError) as error:
        risk.act(state, action)
    for word in words:
        assert word in str(error.value), str(error.value)
    assert state == before
    return str(error.value)


def command_post(**options):
    state = risk.new({"players": ["Ann", "Bob"], "variant": "command_post", "missions": MISSIONS, **options})
    return play(
        state,
        {"type": "set_counts", "player": "Ann", "territories": 12, "cities": 3, "lost": 20},
        {"type": "set_counts", "player": "Bob", "territories": 10, "cities": 2, "lost": 20},
        {"type": "set_counts", "player": "neutral", "territories": 8},
    )


def with_airfield(where=None, **options):
    buy = {"type": "buy", "item": "airfield"}
    if where is not None:
        buy["territory"] = where
    return risk.act(command_post(**options), buy)


# ---------------------------------------------------------------- airfields


def test_an_airfield_helps_the_attack_launched_from_its_own_territory():
    # Ann's airfield stands in Italy; she attacks Austria from Italy. The map data has no
    # border between them, but an attack's target always borders its source: 5 + 1 beats 5.
    state = play(
        with_airfield("Italy"),
        {"type": "attack", "defender": "Bob", "attackers": 1, "defenders": 1, "from": "Italy", "to": "Austria"},
    )
    assert state["attack"]["attacker_airfield"]
    assert risk.view(state)["attack"]["airfield_unsure"] == []
    state = risk.act(state, {"type": "battle", "attacker_dice": [5], "defender_dice": [5]})
    assert state["last_battle"]["outcome"] == "conquered"
    assert state["owners"]["Austria"] == "Ann"


def test_an_airfield_helps_its_owner_defend_the_territory_it_stands_on():
    state = play(with_airfield("Italy"), {"type": "end_turn"})
    state = play(
        state,
        {"type": "attack", "defender": "Ann", "attackers": 1, "defenders": 1, "from": "Slovenia", "to": "Italy"},
        # Bob's 6 meets Ann's 5 + 1: a tie, and ties go to the defender.
        {"type": "battle", "attacker_dice": [6], "defender_dice": [5]},
    )
    assert state["last_battle"]["outcome"] == "repelled"


def test_an_airfield_helps_battles_next_to_it_when_the_map_knows_the_border():
    # Poland's borders are all in the map data: Prussia is next to it, Italy is not.
    state = with_airfield("Poland")
    next_door = risk.act(state, {"type": "attack", "defender": "Bob", "attackers": 3, "defenders": 2, "from": "Lithuania", "to": "Prussia"})
    assert next_door["attack"]["attacker_airfield"]
    far = risk.act(state, {"type": "attack", "defender": "Bob", "attackers": 3, "defenders": 2, "from": "Austria", "to": "Italy"})
    assert not far["attack"]["attacker_airfield"]
    assert risk.view(far)["attack"]["airfield_unsure"] == []


def test_when_the_tracker_cannot_tell_the_view_says_so():
    # An airfield in Italy and a battle in Slovenia: the map data lacks that border.
    state = risk.act(with_airfield("Italy"), {"type": "attack", "defender": "Bob", "attackers": 3, "defenders": 2, "to": "Slovenia"})
    attack = risk.view(state)["attack"]
    assert not attack["attacker_airfield"]
    assert attack["airfield_unsure"] == [{"player": "Ann", "territory": "Italy", "flag": "attacker_airfield"}]
    # No territory named at all.
    state = risk.act(with_airfield("Italy"), {"type": "attack", "defender": "Bob", "attackers": 3, "defenders": 2})
    assert risk.view(state)["attack"]["airfield_unsure"][0]["player"] == "Ann"
    # An airfield placed without saying where.
    state = risk.act(with_airfield(), {"type": "attack", "defender": "Bob", "attackers": 3, "defenders": 2, "from": "Poland", "to": "Prussia"})
    assert risk.view(state)["attack"]["airfield_unsure"] == [{"player": "Ann", "territory": None, "flag": "attacker_airfield"}]
    # The table's tick settles it, and then nothing is left unsure.
    state = risk.act(with_airfield(), {"type": "attack", "defender": "Bob", "attackers": 3, "defenders": 2, "attacker_airfield": True})
    attack = risk.view(state)["attack"]
    assert attack["attacker_airfield"] and attack["airfield_unsure"] == []


def test_the_other_reading_counts_the_territory_an_attack_is_launched_from():
    # Germany borders Poland, the Netherlands does not: an attack from Germany into the
    # Netherlands is fought next to the airfield only if its source counts.
    attack = {"type": "attack", "defender": "Bob", "attackers": 3, "defenders": 2, "from": "Germany", "to": "Netherlands"}
    assert not risk.act(with_airfield("Poland"), attack)["attack"]["attacker_airfield"]
    assert risk.act(with_airfield("Poland", airfield_reach="either"), attack)["attack"]["attacker_airfield"]
    assert risk.view(with_airfield("Poland", airfield_reach="either"))["airfield_reach"] == "either"


def test_airfield_reach_option_is_checked():
    with pytest.raises(RuleError, match="'airfield_reach'"):
        risk.new({"players": ["Ann", "Bob"], "airfield_reach": "anywhere"})


territory_or_none = st.one_of(st.none(), st.sampled_from(risk.TERRITORIES))


@settings(max_examples=200, deadline=None)
@given(strip=st.sampled_from(risk.TERRITORIES), source=territory_or_none, target=territory_or_none)
def test_airfield_reach_properties(strip, source, target):
    attacked = risk.airfield_reaches(strip, source, target, "attacked")
    either = risk.airfield_reaches(strip, source, target, "either")
    if strip in (source, target):
        assert attacked is True and either is True
    if target is not None and target in risk.ADJACENT[strip]:
        assert attacked is True
    # The wider reading never takes a bonus away.
    if attacked is True:
        assert either is True
    # An airfield placed without a territory is never guessed at.
    assert risk.airfield_reaches(None, source, target) is None
