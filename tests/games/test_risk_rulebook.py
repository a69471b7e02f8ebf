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


# ---------------------------------------------------------------- region bonuses


def basic(**options):
    return play(
        risk.new({"players": ["Ann", "Bob"], **options}),
        {"type": "set_counts", "player": "Ann", "territories": 12, "cities": 3},
        {"type": "set_counts", "player": "Bob", "territories": 10, "cities": 2},
    )


def test_a_typed_region_bonus_can_be_cleared():
    state = risk.act(basic(), {"type": "set_counts", "player": "Ann", "region_bonus": 7})
    assert risk.view(state)["reinforcements"]["regions"] == 7
    state = risk.act(state, {"type": "set_counts", "player": "Ann", "region_bonus": None})
    assert risk.view(state)["reinforcements"]["regions"] == 0
    assert risk.view(state)["players"][0]["region_bonus_typed"] is None


def test_later_region_ticks_count_again_after_a_typed_bonus():
    # Ann typed 7 for what she held; next she ticks the blue region alone (printed bonus 2).
    state = risk.act(basic(), {"type": "set_counts", "player": "Ann", "region_bonus": 7})
    state = risk.act(state, {"type": "set_counts", "player": "Ann", "regions": ["blue"]})
    assert risk.view(state)["reinforcements"]["regions"] == 2
    # Ticks and a number in the same entry stand together (green's bonus is not in the map data)...
    state = risk.act(state, {"type": "set_counts", "player": "Ann", "regions": ["blue", "green"], "region_bonus": 6})
    assert risk.view(state)["reinforcements"]["regions"] == 6
    # ...and the same ticks saved again keep the number.
    state = risk.act(state, {"type": "set_counts", "player": "Ann", "regions": ["green", "blue"], "territories": 13})
    assert risk.view(state)["reinforcements"]["regions"] == 6


def bob_takes_belgium(state):
    return play(
        state,
        {"type": "end_turn"},
        {"type": "attack", "defender": "Ann", "attackers": 3, "defenders": 1, "to": "Belgium"},
        {"type": "battle", "attacker_dice": [6, 3, 2], "defender_dice": [1]},
        {"type": "draw_card", "stars": 1},
        {"type": "end_turn"},
    )


def test_a_region_lost_to_a_conquest_stops_paying_and_its_mission_is_refused():
    # Ann holds the green region (bonus typed: the map data lacks it) and blue (2).
    state = basic(setup=2)
    state = risk.act(state, {"type": "set_counts", "player": "Ann", "regions": ["green", "blue"], "region_bonus": 6})
    assert risk.mission_status(state, "Ann", "green_region") is True
    # Bob conquers Belgium, one of green's five territories.
    state = bob_takes_belgium(state)
    ann = risk.view(state)["players"][0]
    assert ann["regions"] == ["blue"]
    assert risk.view(state)["reinforcements"]["regions"] == 2
    refused(state, {"type": "take_mission", "mission": "green_region"}, "does not meet", "green")
    refused(state, {"type": "take_mission", "mission": "two_regions"}, "does not meet")


def test_a_region_known_only_from_the_owners_stops_paying_the_typed_bonus():
    state = basic(setup=2)
    for t in risk.REGIONS["green"]["territories"]:
        state = risk.act(state, {"type": "set_owner", "territory": t, "owner": "Ann"})
    state = risk.act(state, {"type": "set_counts", "player": "Ann", "region_bonus": 4})
    state = bob_takes_belgium(state)
    # The typed 4 counted green; the tracker cannot tell how much of it is left.
    assert risk.view(state)["reinforcements"] is None
    assert risk.view(state)["players"][0]["region_bonus_due"]
    refused(state, {"type": "reinforce"}, "lost a region", "region_bonus")
    refused(state, {"type": "take_mission", "mission": "green_region"}, "does not meet")
    state = risk.act(state, {"type": "set_counts", "player": "Ann", "region_bonus": 0})
    assert risk.view(state)["reinforcements"]["regions"] == 0


def test_a_lost_region_with_a_printed_bonus_takes_just_that_off_the_typed_number():
    # With orange's territories completed by the players, losing one takes its printed 5 off.
    completed = risk.MAP_FORM.add(risk.MAP_FORM.empty(), {"regions": {"orange": {"territories": ["Hungary", "Romania"]}}})
    eng = risk.engine(completed)
    state = eng.new({"players": ["Ann", "Bob"]})
    for action in ({"type": "set_counts", "player": "Ann", "territories": 12, "cities": 3},
                   {"type": "set_counts", "player": "Bob", "territories": 10, "cities": 2},
                   {"type": "set_counts", "player": "Ann", "regions": ["orange", "blue"], "region_bonus": 9},
                   {"type": "end_turn"},
                   {"type": "attack", "defender": "Ann", "attackers": 3, "defenders": 1, "to": "Romania"},
                   {"type": "battle", "attacker_dice": [6, 3, 2], "defender_dice": [1]},
                   {"type": "draw_card", "stars": 1},
                   {"type": "end_turn"}):
        state = eng.act(state, action)
    assert risk.view(state)["reinforcements"]["regions"] == 4
    assert risk.view(state)["players"][0]["regions"] == ["blue"]


def test_a_conquest_in_another_region_changes_nothing():
    state = risk.act(basic(), {"type": "set_counts", "player": "Ann", "regions": ["green"], "region_bonus": 4})
    state = play(
        state,
        {"type": "end_turn"},
        {"type": "attack", "defender": "Ann", "attackers": 3, "defenders": 1, "to": "Finland"},
        {"type": "battle", "attacker_dice": [6, 3, 2], "defender_dice": [1]},
    )
    assert risk.view(state)["players"][0]["regions"] == ["green"]
    assert risk.view(state)["players"][0]["region_bonus"] == 4


@settings(max_examples=60, deadline=None)
@given(typed=st.integers(0, risk.MAX_REGION_BONUS), ticks=st.lists(st.sampled_from(["yellow", "brown", "blue", "orange"]), unique=True))
def test_new_ticks_always_replace_a_typed_bonus(typed, ticks):
    state = risk.act(basic(), {"type": "set_counts", "player": "Ann", "regions": ["purple"], "region_bonus": typed})
    state = risk.act(state, {"type": "set_counts", "player": "Ann", "regions": ticks})
    assert risk.view(state)["reinforcements"]["regions"] == sum(risk.REGIONS[r]["bonus"] for r in ticks)


# ---------------------------------------------------------------- Command Post set-up


def test_command_post_neutral_holds_the_four_object_territories():
    state = risk.new({"players": ["Ann", "Bob"], "variant": "command_post", "missions": MISSIONS})
    assert {t: state["owners"][t] for t in risk.OBJECTS} == {
        "Switzerland": "neutral", "Denmark": "neutral", "Norway": "neutral", "Western Ukraine": "neutral",
    }
    # So nobody starts with the safe, the naval base or a satellite centre.
    for mission in ("swiss_safe", "danish_naval_base"):
        assert risk.mission_status(state, "Ann", mission) is False
    # Basic Training sets its board out from the leaflet's maps, which the tracker does not hold.
    assert risk.new({"players": ["Ann", "Bob"]})["owners"] == {}


@pytest.mark.parametrize("where", ["Switzerland", "denmark", "the Western Ukraine", "Norway"])
def test_command_post_capital_cannot_stand_on_an_object(where):
    with pytest.raises(RuleError, match="'capitals'.*neutral"):
        risk.new({"players": ["Ann", "Bob"], "variant": "command_post", "missions": MISSIONS, "capitals": {"Ann": where}})
    # In Basic Training the leaflet's maps place the capitals.
    assert risk.new({"players": ["Ann", "Bob"], "capitals": {"Ann": where}})["capital_sites"]["Ann"] is not None


def test_an_attack_on_an_object_is_against_the_neutral():
    state = command_post()
    message = refused(state, {"type": "attack", "defender": "Bob", "attackers": 3, "defenders": 2, "to": "Denmark"})
    assert "held by neutral" in message
    # Naming no defender, the tracker names the holder itself; the neutral rolls two dice.
    state = risk.act(state, {"type": "attack", "attackers": 3, "defenders": 2, "to": "Switzerland"})
    assert risk.view(state)["attack"]["defender"] == "neutral"
    refused(state, {"type": "battle", "attacker_dice": [6, 5, 4], "defender_dice": [3]}, "neutral army defends with 2")
    state = risk.act(state, {"type": "battle", "attacker_dice": [6, 5, 4], "defender_dice": [3, 2]})
    assert state["owners"]["Switzerland"] == "Ann"
    assert risk.mission_status(state, "Ann", "swiss_safe") is True
    assert not state["turn"]["conquered_enemy"]  # a neutral conquest earns no card


def test_an_attack_without_a_defender_needs_one_where_the_holder_is_unknown():
    refused(command_post(), {"type": "attack", "attackers": 3, "defenders": 2, "to": "Italy"}, "'defender'")
    refused(command_post(), {"type": "attack", "attackers": 3, "defenders": 2}, "'defender'")
    state = risk.act(command_post(), {"type": "set_owner", "territory": "Italy", "owner": "Ann"})
    refused(state, {"type": "attack", "attackers": 3, "defenders": 2, "to": "Italy"}, "'to'", "Ann's own")


# ---------------------------------------------------------------- what the rulebook allows


def test_special_forces_may_be_bought_twice_in_a_turn():
    # The same ability may be bought more than once: 16 lost troops buy two Special Forces.
    state = play(command_post(), {"type": "buy", "item": "special_forces"}, {"type": "buy", "item": "special_forces"})
    assert state["sides"]["Ann"]["lost"] == 20 - 16
    assert state["turn"]["bought"] == ["special_forces", "special_forces"]
    assert risk.view(state)["turn"]["special_forces"]
    # Still three dice at most into rough terrain.
    state = risk.act(state, {"type": "attack", "defender": "Bob", "attackers": 5, "defenders": 2, "rough": True})
    assert risk.view(state)["attack"]["attacker_dice"] == 3


def test_troops_may_move_after_the_card_is_drawn():
    # Move troops and draw the card at the end of the turn, in either order; still only one movement.
    state = play(
        command_post(),
        {"type": "attack", "defender": "Bob", "attackers": 3, "defenders": 1},
        {"type": "battle", "attacker_dice": [6, 3, 2], "defender_dice": [5]},
        {"type": "draw_card", "stars": 2},
        {"type": "maneuver"},
    )
    assert state["turn"]["maneuver_done"] and state["turn"]["card_drawn"]
    refused(state, {"type": "maneuver"}, "only one troop movement")
    assert risk.act(state, {"type": "end_turn"})["turn"]["player"] == "Bob"


# ---------------------------------------------------------------- owners and airfields from the page


def test_an_airfield_bought_without_a_territory_can_be_removed():
    # No conquest can destroy it (the tracker does not know where it stands), so the table takes it off.
    state = with_airfield()
    assert risk.view(state)["players"][0]["airfield"] == {"territory": None}
    state = risk.act(state, {"type": "remove_airfield", "player": "Ann"})
    assert risk.view(state)["players"][0]["airfield"] is None
    refused(state, {"type": "remove_airfield", "player": "Ann"}, "Ann has no airfield")
    refused(state, {"type": "remove_airfield", "player": "Zed"}, "'player'", "Zed")
    # Each player may have one airfield at a time: with it gone, another may be built.
    assert risk.act(state, {"type": "buy", "item": "airfield", "territory": "Italy"})["sides"]["Ann"]["airfield"] == {"territory": "Italy"}


def test_owners_set_at_the_table_show_in_the_view():
    state = risk.act(command_post(), {"type": "set_owner", "territory": "the netherlands", "owner": "Bob"})
    assert risk.view(state)["owners"]["Netherlands"] == "Bob"
    state = risk.act(state, {"type": "set_owner", "territory": "Netherlands", "owner": None})
    assert "Netherlands" not in risk.view(state)["owners"]
    refused(state, {"type": "set_owner", "territory": "Itly", "owner": "Bob"}, "'territory'", "Italy")
    refused(state, {"type": "set_owner", "territory": "Italy", "owner": "Zed"}, "'owner'", "Zed")
    refused(state, {"type": "set_owner", "territory": "Italy", "owner": 3}, "'owner'")


def test_an_airfield_whose_territory_changes_hands_at_the_table_is_destroyed():
    # Building an Airfield: it stays only while its territory is under its owner's control and
    # adds 1 to its owner's highest die. Bob takes Germany in a battle whose target was not
    # named; the table then tells the tracker Germany is Bob's.
    state = with_airfield("Germany")
    # one airfield at a time: while it stands, a second is refused and nothing changes
    refused(state, {"type": "buy", "item": "airfield", "territory": "Belgium"}, "Ann already has an airfield")
    state = play(state, {"type": "end_turn"})
    assert state["sides"]["Ann"]["airfield"] == {"territory": "Germany"}
    state = play(
        state,
        {"type": "attack", "defender": "Ann", "attackers": 3, "defenders": 1},
        {"type": "battle", "attacker_dice": [6, 5, 4], "defender_dice": [1]},
        {"type": "set_owner", "territory": "Germany", "owner": "Bob"},
    )
    assert state["owners"]["Germany"] == "Bob"
    assert state["sides"]["Ann"]["airfield"] is None
    # Ann's +1 is gone from battles next to Germany, such as Bob's attack from it into the Netherlands.
    attack = risk.act(state, {"type": "attack", "defender": "Ann", "attackers": 3, "defenders": 2, "from": "Germany", "to": "Netherlands"})
    assert not attack["attack"]["defender_airfield"] and attack["attack"]["airfield_unsure"] == []
    # And Ann may build one elsewhere on her next turn.
    state = play(state, {"type": "draw_card", "stars": 1}, {"type": "end_turn"})
    built = risk.act(state, {"type": "buy", "item": "airfield", "territory": "Belgium"})
    assert built["sides"]["Ann"]["airfield"] == {"territory": "Belgium"}


def test_an_airfield_stays_when_its_territory_is_only_confirmed_or_made_unknown():
    state = with_airfield("Germany")
    state = play(state, {"type": "set_owner", "territory": "Germany", "owner": "Ann"})
    assert state["sides"]["Ann"]["airfield"] == {"territory": "Germany"}
    state = play(state, {"type": "set_owner", "territory": "Germany", "owner": None})
    assert state["sides"]["Ann"]["airfield"] == {"territory": "Germany"}
    # A territory given to the neutral army has left Ann's control too.
    state = play(state, {"type": "set_owner", "territory": "Germany", "owner": "neutral"})
    assert state["sides"]["Ann"]["airfield"] is None


def test_an_airfield_helps_only_its_owner_while_he_holds_its_territory():
    # A state saved before the tracker destroyed such airfields: Ann's still stands in
    # Germany, which the tracker knows is Bob's. It gives Ann nothing.
    state = play(with_airfield("Germany"), {"type": "end_turn"})
    state["owners"]["Germany"] = "Bob"
    attack = risk.act(state, {"type": "attack", "defender": "Ann", "attackers": 3, "defenders": 2, "from": "Germany", "to": "Netherlands"})
    assert not attack["attack"]["defender_airfield"] and not attack["attack"]["attacker_airfield"]


# ---------------------------------------------------------------- new troops are all placed


def test_every_troop_raised_is_placed_or_the_raise_is_refused():
    # Raising troops: the player receives every troop worked out and places them all. The
    # tracker's count of a side stops at MAX_TROOPS (its own bound; the box's pieces are not
    # counted in the rulebook), so a raise past it is refused rather than cut short.
    state = command_post()
    gets = risk.view(state)["reinforcements"]["total"]
    full = play(state, {"type": "set_counts", "player": "Ann", "troops": risk.MAX_TROOPS - gets + 3})
    message = refused(full, {"type": "reinforce"}, "Ann", str(risk.MAX_TROOPS), f"{risk.MAX_TROOPS + 3} troops")
    # every later step of the turn passes the raise, and is refused the same way
    refused(full, {"type": "attack", "defender": "Bob", "attackers": 3, "defenders": 1}, message)
    exact = play(state, {"type": "set_counts", "player": "Ann", "troops": risk.MAX_TROOPS - gets}, {"type": "reinforce"})
    assert exact["sides"]["Ann"]["troops"] == risk.MAX_TROOPS
    # the way on: a troop count left blank is not counted
    blank = play(full, {"type": "set_counts", "player": "Ann", "troops": None}, {"type": "reinforce"})
    assert blank["sides"]["Ann"]["troops"] is None and blank["turn"]["phase"] == "attack"


def test_three_additional_troops_are_all_placed_or_refused():
    state = play(command_post(), {"type": "set_counts", "player": "Ann", "troops": risk.MAX_TROOPS - 2})
    refused(state, {"type": "buy", "item": "troops"}, "3 Additional Troops", str(risk.MAX_TROOPS))
    state = play(state, {"type": "set_counts", "player": "Ann", "troops": risk.MAX_TROOPS - 3}, {"type": "buy", "item": "troops"})
    assert state["sides"]["Ann"]["troops"] == risk.MAX_TROOPS and state["sides"]["Ann"]["lost"] == 13


def test_neutral_troops_returned_by_resistance_are_all_placed_or_refused():
    # 8 lost neutral troops and a roll of 12: half of them, 4, go back on the board.
    state = play(command_post(), {"type": "set_counts", "player": "neutral", "troops": risk.MAX_TROOPS - 3, "lost": 8}, {"type": "end_turn"})
    assert state["turn"]["phase"] == "resistance"
    refused(state, {"type": "neutral_resistance", "roll": [6, 6]}, "the neutral army", str(risk.MAX_TROOPS))
    state = play(state, {"type": "set_counts", "player": "neutral", "troops": risk.MAX_TROOPS - 4}, {"type": "neutral_resistance", "roll": [6, 6]})
    assert state["sides"]["neutral"]["troops"] == risk.MAX_TROOPS and state["last_resistance"]["returned"] == 4
