"""Imperial 2030 engine: rulebook numbers, set-up, investor rounds, a whole game."""

from __future__ import annotations

import copy
from dataclasses import replace
import json

import pytest

from companion.games.base import RuleError
from companion.games.imperial import ENGINE, act, final_score, new, rondel_cost, scores, tax, view
from companion.games.imperial_rules import (
    BONDS,
    NATIONS,
    RONDEL,
    load_bond_table,
    passes_investor,
    tax_chart,
    tie_break,
)

# ------------------------------------------------------------------ helpers


def nation(state, nation_id):
    return state.nations[NATIONS.index(nation_id)]


def cash(state, name):
    return next(p.cash for p in state.players if p.name == name)


def bonds(state, name):
    return next(p.bonds for p in state.players if p.name == name)


def treasuries(state):
    return {n.id: n.treasury for n in state.nations}


def governments(state):
    return {n.id: n.government for n in state.nations}


def money(state):
    return state.bank + sum(n.treasury for n in state.nations) + sum(p.cash for p in state.players)


def play(state, *actions):
    for action in actions:
        state = act(state, action)
        assert money(state) == 0
    return state


def move(nation_id, target):
    return {"type": "rondel", "nation": nation_id, "target": target}


def correct(what, value, **keys):
    return {"type": "correct", "what": what, "value": value, **keys}


def draft(state, picks):
    """Run the experienced-variant draft; picks maps (nation, player) to a bond value."""
    while state.phase == "draft":
        player = state.queue[0]
        drafting = NATIONS[state.draft_nation]
        value = picks.get((drafting, player))
        if value is None:
            state = act(state, {"type": "pass", "player": player})
        else:
            state = act(state, {"type": "invest", "player": player, "nation": drafting, "value": value})
    return state


THREE = ["Ann", "Bob", "Cy"]
FOUR = ["A", "B", "C", "D"]


@pytest.fixture
def three():
    return new({"players": THREE})


# ------------------------------------------------------- rondel arithmetic


def test_rulebook_example_china_on_investor_with_11_power_points():
    # power factor 2, so every space past the third costs 3 million
    assert rondel_cost("investor", "taxation", 11) == 3
    assert rondel_cost("investor", "factory", 11) == 6


@pytest.mark.parametrize("space", RONDEL)
def test_first_placement_is_free_anywhere(space):
    assert rondel_cost(None, space, 24) == 0


@pytest.mark.parametrize(
    ("target", "cost_at_0", "cost_at_17"),
    [
        ("production1", 0, 0),
        ("maneuver1", 0, 0),
        ("investor", 0, 0),
        ("import", 1, 4),
        ("production2", 2, 8),
        ("maneuver2", 3, 12),
    ],
)
def test_three_free_spaces_then_one_plus_power_factor_each(target, cost_at_0, cost_at_17):
    assert rondel_cost("factory", target, 0) == cost_at_0
    assert rondel_cost("factory", target, 17) == cost_at_17


@pytest.mark.parametrize(
    ("start", "target", "words"),
    [
        ("import", "import", "stay"),
        ("factory", "taxation", "at most 6"),
        ("factory", "warfare", "unknown rondel space"),
        ("nowhere", "factory", "unknown rondel space"),
    ],
)
def test_rondel_cost_refuses_illegal_moves(start, target, words):
    with pytest.raises(ValueError, match=words):
        rondel_cost(start, target, 0)


def test_rondel_cost_refuses_negative_power_points():
    with pytest.raises(ValueError, match="power_points"):
        rondel_cost("factory", "import", -1)


def test_passing_investor_means_going_over_it_without_landing():
    assert passes_investor("maneuver1", "import")
    assert passes_investor("taxation", "production2")
    assert not passes_investor("maneuver1", "investor")
    assert not passes_investor("investor", "taxation")
    assert not passes_investor(None, "import")


# ------------------------------------------------------------- taxation


def test_rulebook_example_united_states_taxation():
    result = tax(factories=3, flags=5, units=3, treasury=0, power_points=0)
    assert result.revenue == 11
    assert result.soldiers_pay == 3
    assert result.bonus == 2
    assert result.power_gain == 4
    assert result.treasury == 6
    assert result.power_points == 4
    assert not result.game_over


CHART = {
    **{r: (0, 0) for r in range(0, 6)},
    6: (1, 1), 7: (1, 1), 8: (1, 2), 9: (1, 2), 10: (2, 3), 11: (2, 4), 12: (3, 5),
    13: (3, 6), 14: (4, 7), 15: (4, 8), 16: (5, 9), 17: (5, 9),
    **{r: (5, 10) for r in range(18, 24)},
}


@pytest.mark.parametrize("revenue", range(24))
def test_tax_chart(revenue):
    assert tax_chart(revenue) == CHART[revenue]


def test_soldiers_are_paid_only_while_the_treasury_has_money():
    result = tax(factories=0, flags=1, units=6, treasury=2, power_points=0)
    assert (result.revenue, result.soldiers_pay, result.treasury) == (1, 3, 0)


def test_success_bonus_shrinks_to_what_the_treasury_still_holds():
    result = tax(factories=3, flags=4, units=9, treasury=0, power_points=3)
    # revenue 10 promises 2, but only 1 million is left after paying 9 soldiers
    assert (result.revenue, result.soldiers_pay, result.bonus, result.treasury) == (10, 9, 1, 0)
    assert (result.power_gain, result.power_points) == (3, 6)


def test_power_points_stop_at_25_and_end_the_game():
    result = tax(factories=4, flags=15, units=0, treasury=0, power_points=20)
    assert (result.revenue, result.power_gain, result.power_points, result.game_over) == (23, 10, 25, True)


@pytest.mark.parametrize(
    "args",
    [
        {"factories": 5, "flags": 0},
        {"factories": 0, "flags": 16},
        {"factories": -1, "flags": 0},
        {"factories": 1.5, "flags": 0},
        {"factories": True, "flags": 0},
    ],
)
def test_tax_refuses_impossible_counts(args):
    with pytest.raises(ValueError):
        tax(units=0, treasury=0, power_points=0, **args)


# ---------------------------------------------------------------- scoring


def test_bond_cards():
    assert BONDS == ((2, 1), (4, 2), (6, 3), (9, 4), (12, 5), (16, 6), (20, 7), (25, 8), (30, 9))


def test_final_score_is_interest_times_power_factor_plus_cash():
    held = [("russia", 9), ("russia", 16), ("china", 4)]
    # (4 + 6) * 5 for Russia at 25, China at 3 has factor 0
    assert final_score(held, 14, {"russia": 25, "china": 3}) == 64
    assert final_score([("india", 30)], 0, {"india": 14}) == 18
    assert final_score([], 7, {}) == 7


@pytest.mark.parametrize(
    ("held", "points", "words"),
    [
        ([("atlantis", 2)], {"atlantis": 5}, "unknown nation"),
        ([("china", 3)], {"china": 5}, "no china bond is worth 3"),
        ([("china", 2)], {}, "no entry for china"),
    ],
)
def test_final_score_refuses_bad_bonds(held, points, words):
    with pytest.raises(ValueError, match=words):
        final_score(held, 0, points)


def test_ties_go_to_the_larger_bond_total_in_the_strongest_nation_first():
    points = {"russia": 10, "china": 20, "india": 20}
    # China and India tie on points; treasury order puts China first
    assert tie_break([("india", 30), ("russia", 2)], points)[:3] == (0, 30, 2)
    assert tie_break([("china", 4)], points) > tie_break([("india", 30)], points)


# ------------------------------------------------------------------ set-up


def test_flag_card_table_shipped_as_data():
    assert load_bond_table() == {
        "russia": "europe",
        "china": "united_states",
        "india": "brazil",
        "brazil": "china",
        "united_states": "russia",
        "europe": "india",
    }


SETUPS = {
    2: (
        dict.fromkeys(NATIONS, 11),
        {"russia": "Ann", "china": "Bob", "india": "Ann", "brazil": "Bob", "united_states": "Ann", "europe": "Bob"},
    ),
    3: (
        dict.fromkeys(NATIONS, 11),
        {"russia": "Ann", "china": "Bob", "india": "Cy", "brazil": "Ann", "united_states": "Cy", "europe": "Bob"},
    ),
    4: (
        {"russia": 9, "china": 11, "india": 9, "brazil": 11, "united_states": 2, "europe": 2},
        {"russia": "Ann", "china": "Bob", "india": "Cy", "brazil": "Dee", "united_states": "Bob", "europe": "Ann"},
    ),
    5: (
        {"russia": 11, "china": 11, "india": 9, "brazil": 11, "united_states": 11, "europe": 2},
        {"russia": "Ann", "china": "Bob", "india": "Cy", "brazil": "Dee", "united_states": "Eve", "europe": "Ann"},
    ),
    6: (
        dict.fromkeys(NATIONS, 11),
        {"russia": "Ann", "china": "Bob", "india": "Cy", "brazil": "Dee", "united_states": "Eve", "europe": "Fay"},
    ),
}
START_CASH = {2: 35, 3: 24, 4: 13, 5: 13, 6: 13}


@pytest.mark.parametrize("count", sorted(SETUPS))
def test_standard_setup_for_every_player_count(count):
    names = ["Ann", "Bob", "Cy", "Dee", "Eve", "Fay"][:count]
    state = new({"players": names})
    expected_treasuries, expected_governments = SETUPS[count]
    assert treasuries(state) == expected_treasuries
    assert governments(state) == expected_governments
    assert [p.cash for p in state.players] == [2] * count
    assert state.bank == -START_CASH[count] * count
    assert money(state) == 0
    # the seat left of Russia's government
    assert state.investor_card == "Bob"
    assert state.phase == "rondel" and state.nations[state.turn].id == "russia"
    assert all(n.factories == 2 and n.power_points == 0 and n.rondel is None for n in state.nations)


def test_two_player_card_groups_follow_the_dealt_card():
    state = new({"players": ["Ann", "Bob"], "deal": {"Ann": ["china"], "Bob": ["russia"]}})
    assert set(bonds(state, "Ann")) == {
        ("china", 9), ("united_states", 2), ("brazil", 9), ("china", 2), ("europe", 9), ("india", 2),
    }
    assert governments(state)["russia"] == "Bob"
    # left of Russia's government, wrapping round the table
    assert state.investor_card == "Ann"


def test_undealt_card_goes_to_the_small_bond_and_russia_without_government_is_skipped():
    deal = {"Ann": ["china"], "Bob": ["india"], "Cy": ["brazil"], "Dee": ["europe"]}
    state = new({"players": ["Ann", "Bob", "Cy", "Dee"], "deal": deal})
    assert treasuries(state) == {"russia": 0, "china": 11, "india": 11, "brazil": 11, "united_states": 2, "europe": 9}
    assert governments(state) == {
        "russia": None, "china": "Ann", "india": "Bob", "brazil": "Cy", "united_states": "Ann", "europe": "Dee",
    }
    # nobody governs Russia, so the card goes left of China's government
    assert state.investor_card == "Bob"
    assert state.nations[state.turn].id == "china"
    with pytest.raises(RuleError, match="China's turn"):
        act(state, move("russia", "factory"))


def test_bond_table_option_overrides_the_card_backs():
    table = {
        "russia": "china", "china": "india", "india": "brazil",
        "brazil": "united_states", "united_states": "europe", "europe": "russia",
    }
    state = new({"players": ["Ann", "Bob", "Cy", "Dee"], "bond_table": table})
    assert ("china", 2) in bonds(state, "Ann")
    assert treasuries(state) == {"russia": 9, "china": 11, "india": 11, "brazil": 11, "united_states": 2, "europe": 0}
    assert governments(state)["united_states"] == "Dee"
    assert governments(state)["europe"] is None


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({}, "'players' is required"),
        ({"players": ["Ann"]}, "2 to 6"),
        ({"players": ["A", "B", "C", "D", "E", "F", "G"]}, "2 to 6"),
        ({"players": ["Ann", "Ann"]}, "repeats"),
        ({"players": ["Ann", ""]}, "invalid name"),
        ({"players": ["Ann", 3]}, "invalid name"),
        ({"players": "Ann,Bob"}, "list of names"),
        ({"players": True}, "list of names"),
        ({"players": ["Ann", "Bob"], "variant": "expert"}, "'variant'"),
        ({"players": ["Ann", "Bob"], "colour": "red"}, "unknown option 'colour'"),
        ({"players": ["Ann", "Bob"], "deal": {"Ann": ["india"], "Bob": ["china"]}}, "deal.Ann"),
        ({"players": ["Ann", "Bob"], "deal": {"Ann": ["russia"]}}, "no card to 'Bob'"),
        ({"players": ["Ann", "Bob"], "deal": {"Ann": ["russia"], "Bob": ["russia"]}}, "twice"),
        ({"players": ["Ann", "Bob"], "deal": {"Ann": ["russia"], "Zed": ["china"]}}, "unknown player 'Zed'"),
        ({"players": FOUR, "deal": {"A": ["russia", "china"], "B": ["india"], "C": ["brazil"], "D": ["europe"]}}, "exactly one"),
        ({"players": FOUR, "deal": {"A": ["mars"], "B": ["india"], "C": ["brazil"], "D": ["europe"]}}, "unknown nation 'mars'"),
        ({"players": ["Ann", "Bob"], "bond_table": {"russia": "russia"}}, "bond_table"),
        ({"players": ["Ann", "Bob"], "bond_table": {**load_bond_table(), "china": "europe"}}, "both name europe"),
        ({"players": ["Ann", "Bob"], "start_player": "Ann"}, "only for the experienced"),
        ({"players": ["Ann", "Bob"], "variant": "experienced", "start_player": "Zed"}, "'start_player'"),
        ({"players": ["Ann", "Bob"], "variant": "experienced", "deal": {}}, "only for the standard"),
        ({"players": ["Ann", "Bob"], "city_names": {"europe": {"brown3": "Berlin"}}}, "unknown city"),
    ],
)
def test_new_names_the_bad_option(options, words):
    with pytest.raises(RuleError, match=words):
        new(options)


def test_a_player_count_names_the_seats():
    state = new({"players": 4})
    assert [p.name for p in state.players] == ["Player 1", "Player 2", "Player 3", "Player 4"]
    with pytest.raises(RuleError, match="2 to 6"):
        new({"players": 7})


def test_city_names_label_the_home_cities():
    state = new({"players": ["Ann", "Bob"], "city_names": {"europe": {"brown2": "Berlin", "blue2": "Rome"}}})
    labels = {c.id: c.name for c in nation(state, "europe").cities}
    assert labels["brown2"] == "Berlin" and labels["blue2"] == "Rome"


@pytest.mark.parametrize(("count", "start_cash"), [(2, 37), (3, 25), (4, 19), (5, 15), (6, 13)])
def test_experienced_variant_starting_money(count, start_cash):
    names = ["Ann", "Bob", "Cy", "Dee", "Eve", "Fay"][:count]
    state = new({"players": names, "variant": "experienced"})
    assert [p.cash for p in state.players] == [start_cash] * count
    assert state.phase == "draft" and state.queue[0] == "Ann"


def test_experienced_draft_rotates_the_first_chooser_and_sets_governments():
    state = new({"players": THREE, "variant": "experienced", "start_player": "Bob"})
    assert state.queue == ("Bob", "Cy", "Ann")
    with pytest.raises(RuleError, match="Bob's turn"):
        act(state, {"type": "invest", "player": "Ann", "nation": "russia", "value": 9})
    with pytest.raises(RuleError, match="choosing Russia bonds"):
        act(state, {"type": "invest", "player": "Bob", "nation": "china", "value": 9})
    state = act(state, {"type": "invest", "player": "Bob", "nation": "russia", "value": 6})
    with pytest.raises(RuleError, match="belongs to Bob"):
        act(state, {"type": "invest", "player": "Cy", "nation": "russia", "value": 6})
    state = play(
        state,
        {"type": "invest", "player": "Cy", "nation": "russia", "value": 9},
        {"type": "pass", "player": "Ann"},
    )
    # China starts one seat further on
    assert state.queue == ("Cy", "Ann", "Bob")
    state = draft(state, {("china", "Ann"): 12})
    assert governments(state) == {
        "russia": "Cy", "china": "Ann", "india": None, "brazil": None, "united_states": None, "europe": None,
    }
    assert treasuries(state)["russia"] == 15 and treasuries(state)["china"] == 12
    assert (cash(state, "Ann"), cash(state, "Bob"), cash(state, "Cy")) == (13, 19, 16)
    assert state.investor_card == "Ann"
    # Bob governs nothing and so holds a Swiss bank
    assert view(state)["swiss_banks"] == ["Bob"]


def test_a_draft_where_nobody_buys_cannot_start():
    state = new({"players": ["Ann", "Bob"], "variant": "experienced"})
    for _ in range(11):
        state = act(state, {"type": "pass", "player": state.queue[0]})
    with pytest.raises(RuleError, match="at least one bond"):
        act(state, {"type": "pass", "player": state.queue[0]})


# ----------------------------------------------------------- turn structure


def test_nations_act_in_treasury_order_and_a_first_turn_places_anywhere(three):
    order = []
    state = three
    for target in ["taxation", "import", "maneuver2", "production1", "factory", "production2"]:
        mover = state.nations[state.turn].id
        order.append(mover)
        state = act(state, move(mover, target))
        while state.phase != "rondel":
            state = act(state, {"type": "skip"})
    assert order == list(NATIONS)
    assert state.nations[state.turn].id == "russia"
    with pytest.raises(RuleError, match="stay"):
        act(state, move("russia", "taxation"))
    with pytest.raises(RuleError, match="at most 6"):
        act(state, move("russia", "maneuver2"))


def test_out_of_turn_and_malformed_actions_are_refused(three):
    cases = [
        ({"type": "rondel", "nation": "china", "target": "factory"}, "Russia's turn on the rondel, not China's"),
        ({"type": "rondel", "nation": "narnia", "target": "factory"}, "unknown nation 'narnia'"),
        ({"type": "rondel", "nation": "russia", "target": 3}, "'target' must be text"),
        ({"type": "rondel", "nation": "russia", "target": "beach"}, "unknown rondel space"),
        ({"type": "rondel", "nation": "russia", "target": "factory", "speed": 2}, "does not take 'speed'"),
        ({"type": "rondel", "target": "factory"}, "missing 'nation'"),
        ({"type": "teleport"}, "unknown action type 'teleport'"),
        ({"nation": "russia"}, "missing 'type'"),
        ({"type": "invest", "player": "Bob", "nation": "china", "value": 4}, "not possible now"),
        ({"type": "produce"}, "not possible now: Russia to move on the rondel"),
        ({"type": "donate", "player": "Zed", "nation": "china", "amount": 1}, "unknown player 'Zed'"),
        ({"type": "donate", "player": "Ann", "nation": "china", "amount": 0}, "at least 1"),
        ({"type": "donate", "player": "Ann", "nation": "china", "amount": 3}, "short by 1"),
        ({"type": "correct", "what": "morale", "value": 3}, "'what' must be one of"),
        ({"type": "correct", "what": "treasury", "nation": "china", "value": -1}, "non-negative"),
        ({"type": "correct", "what": "flags", "nation": "china", "value": 16}, "at most 15"),
    ]
    snapshot = copy.deepcopy(three)
    for action, words in cases:
        with pytest.raises(RuleError, match=words):
            act(three, action)
    assert three == snapshot
    with pytest.raises(RuleError, match="an action must be an object"):
        act(three, ["rondel"])


def test_paid_rondel_moves_come_from_the_government_and_name_the_shortfall(three):
    state = play(three, move("russia", "factory"), {"type": "skip"})
    for other in NATIONS[1:]:
        state = play(state, move(other, "taxation"))
    # five spaces: the last two cost 1 million each, all of Ann's cash
    state = play(state, move("russia", "production2"))
    assert cash(state, "Ann") == 0 and state.phase == "production"
    # going over Investor lets the card holder invest once Russia has produced
    state = play(state, {"type": "produce"})
    assert state.phase == "investor" and state.queue == ("Bob",) and cash(state, "Bob") == 4
    state = play(state, {"type": "pass", "player": "Bob"})
    for other in NATIONS[1:]:
        state = play(state, move(other, "factory"), {"type": "skip"})
    with pytest.raises(RuleError, match="Ann has 0 million .* short by 1 million"):
        act(state, move("russia", "production1"))
    state = play(state, move("russia", "taxation"))
    assert nation(state, "russia").rondel == "taxation"


# --------------------------------------------------------------- spaces


def test_factory_costs_five_from_the_treasury_and_only_in_a_free_city(three):
    state = play(three, correct("occupiers", ["china"], nation="russia", city="brown2"))
    state = play(state, move("russia", "factory"))
    assert view(state)["factory_sites"] == ["blue2"]
    for city, words in [("brown1", "already has a factory"), ("brown2", "hostile armies"), ("green1", "no city")]:
        with pytest.raises(RuleError, match=words):
            act(state, {"type": "build_factory", "city": city})
    state = play(state, {"type": "build_factory", "nation": "russia", "city": "blue2"})
    assert nation(state, "russia").treasury == 6
    assert nation(state, "russia").factories == 3
    assert state.bank == -72 + 5


def test_factory_needs_five_million_in_the_treasury(three):
    state = play(three, correct("treasury", 4, nation="russia"), move("russia", "factory"))
    with pytest.raises(RuleError, match="Russia treasury has 4 million .* short by 1 million"):
        act(state, {"type": "build_factory", "city": "brown2"})
    # the government may top up the treasury from its own cash
    state = play(state, {"type": "donate", "player": "Ann", "nation": "russia", "amount": 1})
    state = play(state, {"type": "build_factory", "city": "brown2"})
    assert (nation(state, "russia").treasury, cash(state, "Ann")) == (0, 1)


def test_production_one_unit_per_unoccupied_factory(three):
    state = play(
        three,
        correct("factory", True, nation="russia", city="brown2"),
        correct("occupiers", ["india"], nation="russia", city="brown1"),
        move("russia", "production2"),
    )
    assert view(state)["production"] == {"armies": 1, "fleets": 1}
    with pytest.raises(RuleError, match="at most 1"):
        act(state, {"type": "produce", "armies": 2})
    state = play(state, {"type": "produce", "fleets": 0})
    assert (nation(state, "russia").armies, nation(state, "russia").fleets) == (1, 0)
    assert state.nations[state.turn].id == "china"


def test_production_prompt_counts_units_in_the_players_words(three):
    state = play(
        three,
        correct("factory", True, nation="russia", city="brown2"),
        correct("occupiers", ["india"], nation="russia", city="brown1"),
        move("russia", "production2"),
    )
    # one of each: the header must not read "1 armies and 1 fleets"
    assert view(state)["expected"].endswith("produce up to 1 army and 1 fleet")


def test_production_with_every_factory_occupied_does_nothing(three):
    state = play(
        three,
        correct("occupiers", ["china"], nation="russia", city="brown1"),
        correct("occupiers", ["china"], nation="russia", city="blue1"),
        move("russia", "production1"),
    )
    assert state.nations[state.turn].id == "china"
    assert "Nothing can be produced" in state.last


def test_import_up_to_three_units_for_a_million_each(three):
    state = play(three, move("russia", "import"))
    with pytest.raises(RuleError, match="at most 3"):
        act(state, {"type": "import", "units": ["army"] * 4})
    with pytest.raises(RuleError, match="'army' or 'fleet'"):
        act(state, {"type": "import", "units": ["tank"]})
    state = play(state, {"type": "import", "units": ["fleet", "army", "army"]})
    russia = nation(state, "russia")
    assert (russia.armies, russia.fleets, russia.treasury) == (2, 1, 8)


def test_imported_fleets_need_a_harbour_free_of_hostile_armies(three):
    state = play(
        three,
        correct("occupiers", ["china"], nation="russia", city="blue1"),
        correct("occupiers", ["india"], nation="russia", city="blue2"),
        move("russia", "import"),
    )
    with pytest.raises(RuleError, match="harbour"):
        act(state, {"type": "import", "units": ["fleet"]})
    state = play(state, {"type": "import", "units": ["army"]})
    assert nation(state, "russia").armies == 1


def test_maneuver_counters(three):
    state = play(
        three,
        correct("armies", 4, nation="russia"),
        correct("fleets", 1, nation="russia"),
        correct("fleets", 2, nation="china"),
        correct("flags", 3, nation="china"),
        move("russia", "maneuver1"),
    )
    state = play(
        state,
        {
            "type": "maneuver",
            "battles": [{"against": "china", "unit": "fleet"}],
            "occupy": [{"owner": "china", "city": "brown1"}],
            "flags": {"russia": 2, "china": -1},
            "done": False,
        },
    )
    assert state.phase == "maneuver"
    assert (nation(state, "russia").fleets, nation(state, "china").fleets) == (0, 1)
    assert (nation(state, "russia").flags, nation(state, "china").flags) == (2, 2)
    assert nation(state, "china").city("brown1").occupiers == ("russia",)
    # China's blue1 is now its last unoccupied factory: it may only be entered peacefully
    with pytest.raises(RuleError, match="last unoccupied factory"):
        act(state, {"type": "maneuver", "occupy": [{"owner": "china", "city": "blue1"}]})
    with pytest.raises(RuleError, match="cannot be destroyed"):
        act(state, {"type": "maneuver", "destroy_factories": [{"owner": "china", "city": "blue1"}]})
    with pytest.raises(RuleError, match="only 15"):
        act(state, {"type": "maneuver", "flags": {"russia": 14}})
    with pytest.raises(RuleError, match="has 0 fleets"):
        act(state, {"type": "maneuver", "battles": [{"against": "india", "unit": "fleet"}]})
    state = play(state, {"type": "maneuver", "destroy_factories": [{"owner": "china", "city": "brown1"}]})
    assert nation(state, "russia").armies == 1
    china = nation(state, "china")
    assert china.factories == 1 and not china.city("brown1").occupied
    assert state.nations[state.turn].id == "china"


def test_taxation_on_the_board_pays_the_government(three):
    state = play(
        three,
        correct("factory", True, nation="russia", city="brown2"),
        correct("flags", 5, nation="russia"),
        correct("armies", 1, nation="russia"),
        correct("fleets", 2, nation="russia"),
        correct("treasury", 0, nation="russia"),
        move("russia", "taxation"),
    )
    russia = nation(state, "russia")
    assert (russia.treasury, russia.power_points, cash(state, "Ann")) == (6, 4, 4)


# ------------------------------------------------------------- investor


def test_landing_on_investor_pays_interest_then_the_card_holder_invests(three):
    state = play(three, move("russia", "investor"))
    assert treasuries(state)["russia"] == 6
    # Ann 4 on her 9, Cy 1 on his 2, Bob gets the 2-million payout with the card
    assert (cash(state, "Ann"), cash(state, "Bob"), cash(state, "Cy")) == (6, 4, 3)
    assert state.phase == "investor" and state.queue == ("Bob",)
    assert view(state)["expected"] == "Bob (investor card) may buy or trade up one bond, or pass"
    with pytest.raises(RuleError, match="Bob's turn to invest, not Cy's"):
        act(state, {"type": "pass", "player": "Cy"})
    with pytest.raises(RuleError, match="short by 2"):
        act(state, {"type": "invest", "player": "Bob", "nation": "russia", "value": 6})
    state = play(state, {"type": "invest", "player": "Bob", "nation": "russia", "value": 4})
    assert (cash(state, "Bob"), treasuries(state)["russia"]) == (0, 10)
    assert governments(state)["russia"] == "Ann"
    assert state.investor_card == "Cy"
    assert state.phase == "rondel" and state.nations[state.turn].id == "china"


def test_government_forgoes_its_own_interest_first(three):
    state = play(three, correct("treasury", 2, nation="russia"), move("russia", "investor"))
    # Cy is paid in full; Ann receives what is left, 1 of her 4
    assert (treasuries(state)["russia"], cash(state, "Ann"), cash(state, "Cy")) == (0, 3, 3)


def test_government_makes_up_the_shortfall_from_its_own_cash(three):
    state = play(three, correct("treasury", 0, nation="russia"), move("russia", "investor"))
    assert (treasuries(state)["russia"], cash(state, "Ann"), cash(state, "Cy")) == (0, 1, 3)
    assert any("adds 1 from their cash" in line for line in state.last)


def test_an_unpayable_interest_shortfall_refuses_the_move(three):
    state = play(three, correct("treasury", 0, nation="russia"), correct("cash", 0, player="Ann"))
    with pytest.raises(RuleError, match="short by 1 million"):
        act(state, move("russia", "investor"))
    option = next(o for o in view(state)["rondel"]["options"] if o["target"] == "investor")
    assert option["shortfall"] == 1


def test_trading_a_bond_up_pays_the_difference():
    state = new({"players": THREE, "variant": "experienced"})
    state = draft(state, {("russia", "Cy"): 9, ("china", "Bob"): 9, ("china", "Ann"): 4})
    # the card starts left of Cy, Russia's government: back round to Ann
    assert state.investor_card == "Ann"
    state = play(state, move("russia", "investor"))
    assert state.queue == ("Ann",) and cash(state, "Ann") == 23
    with pytest.raises(RuleError, match="no China 6-million bond"):
        act(state, {"type": "invest", "player": "Ann", "nation": "china", "value": 12, "trade_in": 6})
    with pytest.raises(RuleError, match="must go up"):
        act(state, {"type": "invest", "player": "Ann", "nation": "china", "value": 2, "trade_in": 4})
    with pytest.raises(RuleError, match="belongs to Bob"):
        act(state, {"type": "invest", "player": "Ann", "nation": "china", "value": 9, "trade_in": 4})
    # the rulebook's example: hand back the 4, take the 12, pay 8
    state = play(state, {"type": "invest", "player": "Ann", "nation": "china", "value": 12, "trade_in": 4})
    assert (cash(state, "Ann"), treasuries(state)["china"]) == (15, 21)
    assert ("china", 12) in bonds(state, "Ann") and ("china", 4) not in bonds(state, "Ann")
    assert 4 in view(state)["nations"][1]["bonds_available"]
    # 12 beats Bob's 9: Ann takes China, and Bob, governing nothing, gets a Swiss bank
    assert governments(state)["china"] == "Ann"
    assert view(state)["swiss_banks"] == ["Bob"]


def swiss_bank_game(seating):
    """Only Russia governed (by Ann); the other two hold Swiss banks."""
    state = new({"players": seating, "variant": "experienced"})
    state = draft(state, {("russia", "Ann"): 9, ("russia", "Bob"): 2, ("russia", "Cy"): 6})
    assert (cash(state, "Ann"), cash(state, "Bob"), cash(state, "Cy")) == (16, 23, 19)
    assert view(state)["swiss_banks"] == [p for p in seating if p != "Ann"]
    return play(state, move("russia", "investor"))


def test_a_tie_among_challengers_goes_to_the_first_seat_from_the_investor_card():
    state = swiss_bank_game(["Ann", "Bob", "Cy"])
    # interest 4, 1 and 3 from 17; Bob holds the card and gets 2
    assert treasuries(state)["russia"] == 9
    assert (cash(state, "Ann"), cash(state, "Bob"), cash(state, "Cy")) == (20, 26, 22)
    assert state.queue == ("Bob", "Cy")
    assert view(state)["decision"]["role"] == "investor"
    state = play(state, {"type": "invest", "player": "Bob", "nation": "russia", "value": 16})
    assert view(state)["decision"]["role"] == "swiss_bank"
    state = play(state, {"type": "invest", "player": "Cy", "nation": "russia", "value": 12})
    assert governments(state)["russia"] == "Bob"
    assert view(state)["swiss_banks"] == ["Ann", "Cy"]
    assert state.investor_card == "Cy"
    assert treasuries(state)["russia"] == 37


def test_the_same_tie_with_the_other_seating_goes_to_cy():
    state = swiss_bank_game(["Ann", "Cy", "Bob"])
    assert state.queue == ("Cy", "Bob")
    state = play(
        state,
        {"type": "invest", "player": "Cy", "nation": "russia", "value": 12},
        {"type": "invest", "player": "Bob", "nation": "russia", "value": 16},
    )
    assert governments(state)["russia"] == "Cy"


def test_a_tie_with_the_government_is_not_enough():
    state = new({"players": THREE, "variant": "experienced"})
    state = draft(state, {("russia", "Ann"): 6, ("russia", "Bob"): 2})
    state = play(
        state,
        move("russia", "investor"),
        {"type": "invest", "player": "Bob", "nation": "russia", "value": 4},
        {"type": "pass", "player": "Cy"},
    )
    assert state.phase == "rondel"
    assert [p.bond_total("russia") for p in state.players] == [6, 6, 0]
    assert governments(state)["russia"] == "Ann"


def blocked_setup():
    state = swiss_bank_game(["Ann", "Bob", "Cy"])
    state = play(
        state,
        {"type": "invest", "player": "Bob", "nation": "russia", "value": 16},
        {"type": "invest", "player": "Cy", "nation": "russia", "value": 12},
        move("russia", "taxation"),
    )
    assert cash(state, "Bob") == 9 and treasuries(state)["russia"] == 41
    return state


def test_a_swiss_bank_stops_a_nation_on_the_investor_space():
    # "Investing As Swiss Bank": the owner of a Swiss bank may force a nation not to pass
    # over Investor, if its treasury can pay all interest. The nation stops there and pays it.
    state = blocked_setup()
    option = next(o for o in view(state)["rondel"]["options"] if o["target"] == "import")
    assert option["passes_investor"] and option["swiss_bank_may_block"] and option["cost"] == 2
    state = play(state, move("russia", "import"))
    assert state.phase == "pass_check" and view(state)["swiss_banks_may_block"] == ["Ann", "Cy"]
    with pytest.raises(RuleError, match="Bob has no Swiss bank"):
        act(state, {"type": "block_pass", "player": "Bob"})
    state = play(state, {"type": "block_pass", "player": "Ann"})
    # the forced stop costs nothing (not even the 2 million the move to Import would have)
    assert nation(state, "russia").rondel == "investor"
    assert cash(state, "Bob") == 9 + 7
    assert treasuries(state)["russia"] == 41 - 19
    # interest paid, then the investor card's holder and the Swiss banks invest as on a landing
    assert state.phase == "investor" and state.queue == ("Cy", "Ann")


def test_the_other_reading_of_a_block_lets_the_government_stop_anywhere_up_to_investor():
    state = swiss_bank_game(["Ann", "Bob", "Cy"])
    state = replace(state, swiss_block="up_to_investor")
    state = play(
        state,
        {"type": "invest", "player": "Bob", "nation": "russia", "value": 16},
        {"type": "invest", "player": "Cy", "nation": "russia", "value": 12},
        move("russia", "taxation"),
        move("russia", "import"),
        {"type": "block_pass", "player": "Ann"},
    )
    assert state.phase == "rondel" and state.pass_blocked
    assert cash(state, "Bob") == 9
    with pytest.raises(RuleError, match="stopped Russia from passing Investor"):
        act(state, move("russia", "import"))
    state = play(state, move("russia", "maneuver1"))
    assert nation(state, "russia").rondel == "maneuver1" and state.phase == "maneuver"


def test_swiss_block_option_is_checked():
    assert new({"players": THREE, "swiss_block": "up_to_investor"}).swiss_block == "up_to_investor"
    with pytest.raises(RuleError, match="'swiss_block'"):
        new({"players": THREE, "swiss_block": "never"})


def test_passing_investor_runs_the_investor_and_swiss_banks_after_the_action():
    state = blocked_setup()
    state = play(state, move("russia", "import"), {"type": "allow_pass"})
    assert state.phase == "import" and cash(state, "Bob") == 7
    state = play(state, {"type": "import", "units": ["army"]})
    # no interest is paid; the card holder Cy collects 2, then Ann's Swiss bank invests
    assert state.phase == "investor" and state.queue == ("Cy", "Ann")
    assert cash(state, "Cy") == 12 and treasuries(state)["russia"] == 40
    state = play(
        state,
        {"type": "pass", "player": "Cy"},
        {"type": "invest", "player": "Ann", "nation": "russia", "value": 20},
    )
    # Ann's 9 + 20 beats Bob's 18
    assert governments(state)["russia"] == "Ann"
    assert state.investor_card == "Ann"


def test_a_swiss_bank_may_donate_so_that_the_treasury_can_pay_and_then_block():
    # Separate Funds: anyone may give personal cash to a treasury at any time.
    state = play(blocked_setup(), correct("treasury", 18, nation="russia"))
    state = play(state, move("russia", "import"))
    assert state.phase == "pass_check" and view(state)["swiss_banks_may_block"] == []
    assert "1 million short" in view(state)["expected"]
    with pytest.raises(RuleError, match="owes 19 in interest"):
        act(state, {"type": "block_pass", "player": "Ann"})
    state = play(state, {"type": "donate", "player": "Ann", "nation": "russia", "amount": 1})
    assert view(state)["swiss_banks_may_block"] == ["Ann", "Cy"]
    state = play(state, {"type": "block_pass", "player": "Ann"})
    assert nation(state, "russia").rondel == "investor" and treasuries(state)["russia"] == 0


def test_no_block_when_not_even_the_swiss_banks_can_make_the_interest_up():
    state = play(blocked_setup(), correct("treasury", 0, nation="russia"), correct("cash", 5, player="Ann"), correct("cash", 5, player="Cy"))
    state = play(state, move("russia", "import"))
    assert state.phase == "import"


# ------------------------------------------------------ corrections, money


def test_corrections_move_money_through_the_bank(three):
    state = play(
        three,
        correct("treasury", 15, nation="china", reason="miscounted"),
        correct("cash", 0, player="Cy"),
        correct("power_points", 7, nation="india"),
        correct("rondel", "import", nation="brazil"),
        correct("investor_card", "Cy"),
    )
    assert treasuries(state)["china"] == 15 and cash(state, "Cy") == 0
    assert state.bank == -72 - 4 + 2
    assert nation(state, "india").power_points == 7
    assert nation(state, "brazil").rondel == "import"
    assert state.investor_card == "Cy"
    with pytest.raises(RuleError, match="does not take 'player'"):
        act(state, correct("treasury", 3, nation="china", player="Ann"))


def test_the_old_state_is_never_changed(three):
    snapshot = copy.deepcopy(three)
    act(three, move("russia", "investor"))
    act(three, correct("treasury", 40, nation="russia"))
    assert three == snapshot


def test_replaying_the_same_actions_gives_the_same_state(three):
    actions = [move("russia", "import"), {"type": "import", "units": ["army"]}, move("china", "investor")]
    assert play(three, *actions) == play(new({"players": THREE}), *actions)


# ------------------------------------------------------------------ view


def test_view_is_json_and_shows_the_costs_for_the_nation_to_move(three):
    state = play(three, move("russia", "maneuver1"), {"type": "maneuver"})
    state = play(state, correct("power_points", 11, nation="russia"))
    while state.nations[state.turn].id != "russia":
        state = play(state, move(state.nations[state.turn].id, "taxation"))
    data = view(state)
    assert json.loads(json.dumps(data)) == data
    assert data["expected"] == "Russia to move on the rondel (Ann)"
    costs = {o["target"]: (o["distance"], o["cost"], o["passes_investor"]) for o in data["rondel"]["options"]}
    assert costs == {
        "investor": (1, 0, False),
        "import": (2, 0, True),
        "production2": (3, 0, True),
        "maneuver2": (4, 3, True),
        "taxation": (5, 6, True),
        "factory": (6, 9, True),
    }
    russia = data["nations"][0]
    assert (russia["power_points"], russia["power_factor"], russia["rondel"]) == (11, 2, "maneuver1")
    ann = data["players"][0]
    assert ann["governs"] == ["russia", "brazil"] and not ann["swiss_bank"]
    assert {"nation": "russia", "value": 9, "interest": 4} in ann["bonds"]
    assert data["investor_card"] == "Bob" and data["scores"] == scores(state)
    assert data["actions"] == ["rondel", "donate", "hide_cash", "correct"]


def test_engine_contract():
    assert ENGINE.name == "imperial" and ENGINE.title == "Imperial 2030"
    state = ENGINE.new({"players": ["Ann", "Bob"]})
    assert ENGINE.scores(state) == {"Ann": 2, "Bob": 2}
    assert ENGINE.act is act and ENGINE.view is view


# --------------------------------------------------------- a whole game


def test_a_whole_game_to_its_final_score():
    state = new({"players": ["Ann", "Bob"], "variant": "experienced"})
    state = draft(state, {("russia", "Ann"): 9, ("russia", "Bob"): 6, ("china", "Bob"): 9, ("china", "Ann"): 4})
    assert treasuries(state)["russia"] == 15 and treasuries(state)["china"] == 13
    assert (cash(state, "Ann"), cash(state, "Bob"), state.investor_card) == (24, 22, "Bob")

    def check(ann, bob, russia, china):
        assert (cash(state, "Ann"), cash(state, "Bob")) == (ann, bob)
        assert (treasuries(state)["russia"], treasuries(state)["china"]) == (russia, china)
        assert money(state) == 0

    state = play(state, move("russia", "factory"), {"type": "build_factory", "city": "brown2"})
    state = play(state, move("china", "production1"), {"type": "produce"})
    state = play(state, move("russia", "production1"), {"type": "produce"})
    assert (nation(state, "russia").armies, nation(state, "russia").fleets) == (2, 1)
    state = play(state, move("china", "maneuver1"), {"type": "maneuver", "flags": {"china": 2}})
    state = play(state, move("russia", "maneuver1"), {"type": "maneuver", "flags": {"russia": 3}})
    check(24, 22, 10, 13)

    state = play(state, move("china", "investor"), {"type": "invest", "player": "Bob", "nation": "china", "value": 12})
    check(26, 16, 10, 19)
    assert state.investor_card == "Ann"

    # five spaces over Investor: 2 million; taxes 9, soldiers 3, bonus 1, +2 points
    state = play(state, move("russia", "taxation"))
    check(25 + 2, 16, 15, 19)
    assert nation(state, "russia").power_points == 2 and state.queue == ("Ann",)
    state = play(state, {"type": "invest", "player": "Ann", "nation": "russia", "value": 16})
    check(11, 16, 31, 19)

    state = play(state, move("china", "taxation"))
    check(11, 16, 31, 22)
    assert nation(state, "china").power_points == 1

    state = play(
        state,
        move("russia", "maneuver1"),
        {
            "type": "maneuver",
            "battles": [{"against": "china", "unit": "fleet"}],
            "occupy": [{"owner": "china", "city": "blue1"}],
            "flags": {"russia": 4, "china": -1},
        },
    )
    state = play(state, move("china", "factory"), {"type": "build_factory", "city": "brown2"})
    check(11, 16, 31, 17)

    state = play(state, move("russia", "taxation"))
    check(12, 18, 39, 17)
    assert nation(state, "russia").power_points == 8
    state = play(state, {"type": "invest", "player": "Bob", "nation": "russia", "value": 20, "trade_in": 6})
    check(12, 4, 53, 17)
    assert governments(state)["russia"] == "Ann"

    state = play(state, move("china", "production1"), {"type": "produce"})
    assert (nation(state, "china").armies, nation(state, "china").fleets) == (3, 0)
    state = play(state, move("russia", "maneuver1"), {"type": "maneuver", "flags": {"russia": 5}})
    state = play(
        state,
        move("china", "maneuver1"),
        {
            "type": "maneuver",
            "battles": [{"against": "russia", "unit": "army"}],
            "vacate": [{"owner": "china", "city": "blue1", "occupier": "russia"}],
            "flags": {"china": 1},
        },
    )

    state = play(state, move("russia", "taxation"), {"type": "pass", "player": "Ann"})
    check(15, 4, 65, 17)
    assert nation(state, "russia").power_points == 18

    state = play(state, move("china", "investor"), {"type": "pass", "player": "Bob"})
    check(17, 15, 65, 6)
    state = play(state, move("russia", "maneuver1"), {"type": "maneuver", "flags": {"russia": 2}})
    state = play(state, move("china", "taxation"))
    check(17, 15, 65, 11)
    assert nation(state, "china").power_points == 3

    # 8 million to move (power factor 3); taxes 20 take Russia past 25; no investing after the end
    state = play(state, move("russia", "taxation"))
    check(14, 15, 79, 11)
    assert state.game_over and state.phase == "over"
    assert nation(state, "russia").power_points == 25
    assert state.investor_card == "Ann"

    assert scores(state) == {"Ann": 64, "Bob": 50}
    data = view(state)
    assert data["winners"] == ["Ann"] and data["expected"] == "Game over: Ann wins"
    with pytest.raises(RuleError, match="game is over"):
        act(state, move("china", "factory"))

    # a late correction levels the score: Ann's larger Russian bonds break the tie
    tied = play(state, correct("cash", 29, player="Bob"))
    assert scores(tied) == {"Ann": 64, "Bob": 64}
    assert view(tied)["winners"] == ["Ann"]


# ------------------------------------------------ the printed board's home cities


def chinas_turn(state, *corrections):
    """Russia takes a quiet Factory turn, so China moves next."""
    state = play(state, *corrections, move("russia", "factory"))
    if state.phase == "factory":
        state = play(state, {"type": "skip"})
    assert state.nations[state.turn].id == "china"
    return state


def test_home_cities_follow_the_printed_board():
    state = new({"players": THREE})
    kinds = {n.id: [c.kind for c in n.cities] for n in state.nations}
    assert kinds["china"].count("armament") == 3 and kinds["china"].count("shipyard") == 1
    assert kinds["united_states"].count("armament") == 1 and kinds["united_states"].count("shipyard") == 3
    for other in ("russia", "india", "brazil", "europe"):
        assert kinds[other].count("armament") == 2 and kinds[other].count("shipyard") == 2
    assert nation(state, "china").city("shanghai").kind == "shipyard"
    assert [c.name for c in nation(state, "china").cities if c.factory] == ["Beijing", "Shanghai"]
    assert nation(state, "europe").city("Rome").id == "blue2"


def test_rulebook_import_example_china_places_a_fleet_only_in_shanghai(three):
    # "China imports one fleet and two armies ... All three military units are placed in Shanghai."
    state = chinas_turn(three, correct("treasury", 3, nation="china"))
    state = play(state, move("china", "import"), {"type": "import", "units": ["fleet", "army", "army"]})
    china = nation(state, "china")
    assert (china.armies, china.fleets, china.treasury) == (2, 1, 0)
    # With hostile armies in Shanghai, China has no free harbour for a fleet; armies still land elsewhere.
    state = chinas_turn(three, correct("occupiers", ["india"], nation="china", city="shanghai"))
    state = play(state, move("china", "import"))
    with pytest.raises(RuleError, match="every harbour city of China holds hostile armies"):
        act(state, {"type": "import", "units": ["fleet"]})
    state = play(state, {"type": "import", "units": ["army", "army"]})
    assert nation(state, "china").armies == 2


def test_china_builds_its_third_armament_factory_and_has_no_second_shipyard(three):
    state = chinas_turn(three, correct("factory", True, nation="china", city="brown2"))
    state = play(state, move("china", "factory"))
    assert view(state)["factory_sites"] == ["brown3"]
    with pytest.raises(RuleError, match="China has no city 'blue2'"):
        act(state, {"type": "build_factory", "city": "blue2"})
    state = play(state, {"type": "build_factory", "city": "Chongqing"})
    china = nation(state, "china")
    assert china.factories == 4 and china.unoccupied_factories("armament") == 3


def test_unit_supply_per_nation_follows_the_box():
    # China's colour has 10 armies and 6 fleets, the United States' 6 and 10, the others 8 and 8.
    state = new({"players": THREE})
    state = play(state, correct("armies", 10, nation="china"), correct("fleets", 10, nation="united_states"))
    assert nation(state, "china").armies == 10 and nation(state, "united_states").fleets == 10
    with pytest.raises(RuleError, match="'value' must be at most 6"):
        act(state, correct("fleets", 7, nation="china"))
    with pytest.raises(RuleError, match="'value' must be at most 8"):
        act(state, correct("armies", 9, nation="russia"))
    assert view(state)["nations"][NATIONS.index("china")]["supply"] == {"armies": 10, "fleets": 6}


# ------------------------------------------- Separate Funds: cash kept secret


def hide(name, hidden=True):
    return {"type": "hide_cash", "player": name, "hidden": hidden}


def other_cash(state, name, delta):
    """The same table, except that `name` holds `delta` more (the bank the other side, as always)."""
    players = tuple(replace(p, cash=p.cash + delta) if p.name == name else p for p in state.players)
    return replace(state, players=players, bank=state.bank - delta)


def gives_nothing_away(state, name):
    """Whatever the hidden cash were, the table would see the same page and the same scores."""
    for delta in (1, 7, 40, -cash(state, name)):
        other = other_cash(state, name, delta)
        assert view(other) == view(state), f"the view changes with {name}'s hidden cash (by {delta})"
        assert scores(other) == scores(state)


def test_a_player_keeps_their_cash_secret_and_shows_it_again(three):
    before = view(three)
    state = play(three, hide("Ann"))
    assert cash(state, "Ann") == cash(three, "Ann")  # the engine still counts it
    assert replace(state, hidden_cash=(), last=()) == replace(three, last=())
    data = view(state)
    ann = data["players"][0]
    assert (ann["cash"], ann["score"], ann["cash_hidden"]) == (None, None, True)
    assert data["cash_hidden"] == ["Ann"] and data["last"] == ["Ann keeps their cash secret"]
    # her score less her public bonds would be her cash, her place in the ranking would bound it,
    # and with the treasuries public the bank's balance would leave it as the only unknown
    assert "Ann" not in scores(state) and "Ann" not in data["scores"] and "Ann" not in data["ranking"]
    assert data["scores"] == {"Bob": before["scores"]["Bob"], "Cy": before["scores"]["Cy"]}
    assert data["bank_paid_out"] is None
    # what the rules keep public stays on the page: every treasury, bonds, governments
    assert data["nations"] == before["nations"]
    assert [p["bonds"] for p in data["players"]] == [p["bonds"] for p in before["players"]]
    assert data["players"][1] == before["players"][1]
    gives_nothing_away(state, "Ann")

    shown = play(state, hide("Ann", False))
    assert shown.hidden_cash == () and view(shown)["last"] == ["Ann shows their cash again"]
    assert {k: v for k, v in view(shown).items() if k != "last"} == {k: v for k, v in before.items() if k != "last"}


def test_several_players_may_hide_in_any_order_and_are_kept_in_seat_order(three):
    state = play(three, hide("Cy"), hide("Ann"))
    assert state.hidden_cash == ("Ann", "Cy") and view(state)["cash_hidden"] == ["Ann", "Cy"]
    assert list(scores(state)) == ["Bob"] and view(state)["ranking"] == ["Bob"]
    gives_nothing_away(state, "Ann")
    gives_nothing_away(state, "Cy")
    assert play(state, hide("Cy", False)).hidden_cash == ("Ann",)


@pytest.mark.parametrize(
    ("action", "words"),
    [
        ({"type": "hide_cash", "player": "Dee", "hidden": True}, "unknown player 'Dee'"),
        ({"type": "hide_cash", "player": 3, "hidden": True}, "'player' must be text"),
        ({"type": "hide_cash", "player": "Ann", "hidden": "yes"}, "'hidden' must be true or false"),
        ({"type": "hide_cash", "player": "Ann", "hidden": 1}, "'hidden' must be true or false"),
        ({"type": "hide_cash", "player": "Ann"}, "missing 'hidden'"),
        ({"type": "hide_cash", "hidden": True}, "missing 'player'"),
        ({"type": "hide_cash", "player": "Ann", "hidden": True, "nation": "china"}, "does not take 'nation'"),
        ({"type": "hide_cash", "player": "Bob", "hidden": False}, "Bob's cash is already shown"),
        ({"type": "hide_cash", "player": "Ann", "hidden": True}, "Ann's cash is already hidden"),
    ],
)
def test_hide_cash_names_what_is_wrong_and_changes_nothing(three, action, words):
    state = play(three, hide("Ann"))
    snapshot = copy.deepcopy(state)
    with pytest.raises(RuleError, match=words):
        act(state, action)
    assert state == snapshot


def test_the_government_moves_on_the_rondel_without_the_page_saying_what_it_can_afford(three):
    state = play(three, move("russia", "factory"), {"type": "skip"})
    for other in NATIONS[1:]:
        state = play(state, move(other, "taxation"))
    state = play(state, hide("Ann"))
    options = {o["target"]: o for o in view(state)["rondel"]["options"]}
    # free spaces tell nothing; for the paid ones "short by" would bound Ann's 2 million
    assert options["production1"]["shortfall"] == 0
    assert options["maneuver2"]["cost"] == 3 and options["maneuver2"]["shortfall"] is None
    assert options["import"]["shortfall"] is None
    gives_nothing_away(state, "Ann")
    # a move she cannot pay is still refused, but without her figures; what she pays is said as at the table
    with pytest.raises(RuleError, match=r"^Ann cannot pay the 3 million moving Russia to Maneuver costs \(their cash is hidden\)$"):
        act(state, move("russia", "maneuver2"))
    with pytest.raises(RuleError, match=r"^Ann cannot pay the 5 million a gift of 5 million costs"):
        act(state, {"type": "donate", "player": "Ann", "nation": "china", "amount": 5})
    state = play(state, move("russia", "production2"))
    assert cash(state, "Ann") == 0 and view(state)["last"][0].startswith("Russia moves to Production; Ann pays 2 million")
    gives_nothing_away(state, "Ann")


def test_an_investor_with_hidden_cash_chooses_without_the_page_marking_what_they_can_buy():
    state = swiss_bank_game(["Ann", "Bob", "Cy"])
    state = play(state, hide("Bob"))
    decision = view(state)["decision"]
    assert decision["player"] == "Bob" and decision["cash"] is None and decision["cash_hidden"]
    assert {c["affordable"] for c in decision["choices"]} == {None}
    assert {c["price"] for c in decision["choices"]} >= {4, 30}  # prices are on the bonds for all to see
    gives_nothing_away(state, "Bob")
    with pytest.raises(RuleError, match=r"^Bob cannot pay the 30 million the Russia 30-million bond costs"):
        act(state, {"type": "invest", "player": "Bob", "nation": "russia", "value": 30})
    state = play(state, {"type": "invest", "player": "Bob", "nation": "russia", "value": 16})
    assert cash(state, "Bob") == 10
    gives_nothing_away(state, "Bob")
    # the next decider's cash is theirs to show
    assert view(state)["decision"]["cash"] == cash(state, "Cy")


def test_a_hidden_swiss_bank_is_always_asked_so_the_question_tells_nothing():
    # with open cash, nobody is asked when the Swiss banks together could not make the interest up ...
    state = play(blocked_setup(), correct("treasury", 0, nation="russia"), correct("cash", 5, player="Ann"), correct("cash", 5, player="Cy"))
    assert play(state, move("russia", "import")).phase == "import"
    # ... but asking only then would tell the table what a hidden Swiss bank holds
    hidden = play(state, hide("Cy"))
    option = next(o for o in view(hidden)["rondel"]["options"] if o["target"] == "import")
    assert option["swiss_bank_may_block"]
    gives_nothing_away(hidden, "Cy")
    asked = play(hidden, move("russia", "import"))
    assert asked.phase == "pass_check" and view(asked)["swiss_banks_may_block"] == []
    gives_nothing_away(asked, "Cy")
    assert play(asked, {"type": "allow_pass"}).phase == "import"


def test_a_correction_of_hidden_cash_is_noted_without_its_figures(three):
    state = play(three, hide("Cy"), correct("cash", 11, player="Cy"))
    assert cash(state, "Cy") == 11 and money(state) == 0
    assert view(state)["last"] == ["Correction: Cy's cash (hidden)"]
    gives_nothing_away(state, "Cy")
    # corrections of the public counts still say what changed
    state = play(state, correct("treasury", 3, nation="china"))
    assert view(state)["last"] == ["Correction: China treasury 11 → 3"]


def nearly_over(state):
    """Russia one taxation short of 25 power points."""
    return play(state, correct("power_points", 24, nation="russia"), correct("flags", 6, nation="russia"))


def test_the_end_of_the_game_shows_everyones_cash(three):
    state = play(nearly_over(three), hide("Ann"), hide("Cy"))
    assert list(scores(state)) == ["Bob"]
    state = play(state, move("russia", "taxation"))
    assert state.phase == "over" and state.hidden_cash == ("Ann", "Cy")
    data = view(state)
    assert data["cash_hidden"] == [] and [p["cash"] for p in data["players"]] == [cash(state, n) for n in THREE]
    assert scores(state) == data["scores"] == {"Ann": 24, "Bob": 2, "Cy": 7}
    assert data["ranking"] == ["Ann", "Cy", "Bob"] and data["winners"] == ["Ann"]
    assert data["bank_paid_out"] == -state.bank
    assert "hide_cash" not in data["actions"]
    with pytest.raises(RuleError, match="game is over"):
        act(state, hide("Bob"))


def test_hiding_is_an_event_like_any_other_so_a_replay_is_exact(three):
    actions = [
        hide("Ann"),
        move("russia", "import"),
        {"type": "import", "units": ["army"]},
        {"type": "donate", "player": "Ann", "nation": "china", "amount": 1},
        hide("Bob"),
        correct("cash", 9, player="Bob"),
        hide("Ann", False),
        move("china", "investor"),
    ]
    state = play(three, *actions)
    assert state == play(new({"players": THREE}), *actions)
    assert state.hidden_cash == ("Bob",) and state.phase == "investor"
    # Bob's corrected 9, then 4 interest from China and the investor card's 2; Ann's last million and 1 interest
    assert (cash(state, "Bob"), cash(state, "Ann")) == (15, 2)
    assert view(state)["players"][1]["cash"] is None and view(state)["players"][0]["cash"] == 2
    # the record is JSON like every other action, so the game record keeps it as it came
    assert json.loads(json.dumps(actions)) == actions
