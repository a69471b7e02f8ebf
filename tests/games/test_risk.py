"""Risk: Balance of Power tracker: rulebook examples, exact odds, and the engine contract."""

from __future__ import annotations

import copy
import json
import time
from fractions import Fraction
from functools import lru_cache
from itertools import product

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.games import risk
from companion.games.base import Engine, RuleError
from tests.games.helpers import json_safe

F = Fraction


def play(state, *actions):
    for action in actions:
        state = risk.act(state, action)
    return state


def basic(**options):
    return risk.new({"players": ["Ann", "Bob"], **options})


def command_post(**options):
    missions = ["six_cities", "two_regions", "swiss_safe", "danish_naval_base", "sea_line", "rough_terrain", "green_region", "eliminate_neutral"]
    return risk.new({"players": ["Ann", "Bob"], "variant": "command_post", "missions": missions, **options})


def counts(state, ann=12, bob=10, neutral=8, **extra):
    return play(
        state,
        {"type": "set_counts", "player": "Ann", "territories": ann, "cities": 3, **extra},
        {"type": "set_counts", "player": "Bob", "territories": bob, "cities": 2},
        {"type": "set_counts", "player": "neutral", "territories": neutral},
    )


# ---------------------------------------------------------------- reinforcements


def test_rulebook_territory_examples():
    # 19 territories and cities give 6; 5 territories and no city give the minimum of 3.
    assert risk.reinforcements(15, cities=4) == 6
    assert risk.reinforcements(5) == 3
    assert risk.reinforcement_breakdown(5)["base"] == 3


def test_rulebook_region_examples():
    # Blue region: +2. Brown (5) and yellow (3): +8. Orange alone: +5.
    assert risk.reinforcements(9, region_bonus=2) == 3 + 2
    assert risk.reinforcements(19, region_bonus=5 + 3) == 6 + 8
    assert risk.REGIONS["orange"]["bonus"] == 5
    assert risk.REGIONS["blue"]["bonus"] == 2
    assert risk.REGIONS["brown"]["bonus"] + risk.REGIONS["yellow"]["bonus"] == 8


def test_rulebook_card_example_and_table():
    # Three cards with four stars between them give 7 troops.
    assert risk.reinforcements(5, stars=4) == 3 + 7
    table = {2: 2, 3: 4, 4: 7, 5: 10, 6: 13, 7: 17, 8: 21, 9: 25, 10: 30}
    assert {s: risk.card_troops(s) for s in table} == table
    assert risk.card_troops(0) == 0


def test_capitals_add_one_each():
    assert risk.reinforcements(12, capitals=2) == 4 + 2
    assert risk.reinforcement_breakdown(12, 3, 2, 1, 5) == {
        "counted": 15, "base": 5, "regions": 2, "capitals": 1, "cards": 10, "total": 18,
    }


@pytest.mark.parametrize(
    "kwargs",
    [
        {"territories": -1},
        {"territories": 31},
        {"territories": 4, "cities": 5},
        {"territories": 20, "cities": 10},
        {"territories": 5, "stars": 1},
        {"territories": 5, "stars": 11},
        {"territories": 5, "capitals": 3},
        {"territories": 0, "capitals": 1},
        {"territories": 5, "region_bonus": -2},
        {"territories": True},
        {"territories": 5.0},
    ],
)
def test_impossible_reinforcement_inputs(kwargs):
    with pytest.raises(ValueError):
        risk.reinforcements(**kwargs)


@given(
    territories=st.integers(0, 30),
    cities=st.integers(0, 9),
    region_bonus=st.integers(0, 25),
    capitals=st.integers(0, 2),
    stars=st.sampled_from([0, *range(2, 11)]),
)
def test_reinforcements_never_below_three(territories, cities, region_bonus, capitals, stars):
    cities = min(cities, territories)
    capitals = min(capitals, territories)
    parts = risk.reinforcement_breakdown(territories, cities, region_bonus, capitals, stars)
    assert parts["base"] >= 3
    assert parts["total"] >= 3
    assert parts["total"] == parts["base"] + parts["regions"] + parts["capitals"] + parts["cards"]


# ---------------------------------------------------------------- exact odds


def test_three_against_two_exact():
    odds = risk.roll_odds(3, 2)
    assert odds == {(2, 0): F(2275, 7776), (0, 2): F(2890, 7776), (1, 1): F(2611, 7776)}


@pytest.mark.parametrize(
    "a, d, expected",
    [
        (1, 1, {(0, 1): F(15, 36), (1, 0): F(21, 36)}),
        (2, 1, {(0, 1): F(125, 216), (1, 0): F(91, 216)}),
        (3, 1, {(0, 1): F(855, 1296), (1, 0): F(441, 1296)}),
        (1, 2, {(0, 1): F(55, 216), (1, 0): F(161, 216)}),
        (2, 2, {(0, 2): F(295, 1296), (1, 1): F(420, 1296), (2, 0): F(581, 1296)}),
    ],
)
def test_known_single_roll_odds(a, d, expected):
    assert risk.roll_odds(a, d) == expected


def test_airfield_and_recon_single_die():
    # +1 on the attacker's die: it wins whenever it is at least the defender's.
    assert risk.roll_odds(1, 1, attacker_airfield=True)[(0, 1)] == F(21, 36)
    # +1 on the defender's die: the attacker needs to beat it by two.
    assert risk.roll_odds(1, 1, defender_airfield=True)[(0, 1)] == F(10, 36)
    # A recon die is uniform over 2..6.
    assert risk.roll_odds(1, 1, recon=1)[(0, 1)] == F(15, 30)


def test_airfield_only_helps_the_highest_die():
    # Both 5s against 5, 5: the bonus turns only the top pair.
    assert risk.dice.compare_dice([5, 5], [5, 5], attacker_bonus=1) == (1, 1)
    assert risk.dice.compare_dice([6, 3, 2], [5, 5]) == (1, 1)


@pytest.mark.parametrize("a, d", [(1, 1), (1, 2), (2, 1), (2, 2), (3, 1), (3, 2)])
def test_roll_odds_sum_to_one(a, d):
    for options in ({}, {"attacker_airfield": True}, {"defender_airfield": True}, {"recon": 1}):
        assert sum(risk.roll_odds(a, d, **options).values()) == 1


@pytest.mark.parametrize("a, d", [(0, 1), (4, 1), (1, 3), (1, 0)])
def test_roll_odds_rejects_impossible_dice(a, d):
    with pytest.raises(ValueError):
        risk.roll_odds(a, d)


@lru_cache(maxsize=None)
def brute_conquest(a: int, d: int, cap: int = 3, abonus: int = 0, dbonus: int = 0) -> Fraction:
    """An independent recursion that throws every combination of dice."""
    if d == 0:
        return F(1)
    if a == 0:
        return F(0)
    ad, dd = min(a, cap), min(d, 2)
    total = F(0)
    throws = 6 ** (ad + dd)
    for roll in product(range(1, 7), repeat=ad + dd):
        att = sorted(roll[:ad], reverse=True)
        dfd = sorted(roll[ad:], reverse=True)
        att[0] += abonus
        dfd[0] += dbonus
        la = sum(1 for x, y in zip(att, dfd) if x <= y)
        ld = sum(1 for x, y in zip(att, dfd) if x > y)
        total += F(1, throws) * brute_conquest(a - la, d - ld, cap, abonus, dbonus)
    return total


def test_conquest_hand_checked_values():
    assert risk.conquest_probability(1, 1) == F(15, 36)
    # Two dice against one: win at once, or lose one and fall back to one against one.
    assert risk.conquest_probability(2, 1) == F(125, 216) + F(91, 216) * F(15, 36)
    assert risk.conquest_probability(0, 3) == 0
    assert risk.conquest_probability(4, 0) == 1


@pytest.mark.parametrize("a, d", [(1, 2), (2, 2), (3, 2), (4, 3), (5, 4), (3, 5)])
def test_conquest_matches_brute_force(a, d):
    assert risk.conquest_probability(a, d) == brute_conquest(a, d)
    assert risk.conquest_probability(a, d, rough=True) == brute_conquest(a, d, cap=2)
    assert risk.conquest_probability(a, d, attacker_airfield=True) == brute_conquest(a, d, abonus=1)
    assert risk.conquest_probability(a, d, defender_airfield=True) == brute_conquest(a, d, dbonus=1)


def test_rough_terrain_and_special_forces():
    assert risk.conquest_probability(6, 3, rough=True) < risk.conquest_probability(6, 3)
    assert risk.conquest_probability(6, 3, rough=True, special_forces=True) == risk.conquest_probability(6, 3)
    # Special Forces change nothing outside rough terrain.
    assert risk.conquest_probability(6, 3, special_forces=True) == risk.conquest_probability(6, 3)


def test_big_attack_is_fast_enough_for_the_page():
    risk.dice.attack_outcomes.cache_clear()
    started = time.process_time()   # CPU time: other processes on a busy machine do not count
    p = risk.conquest_probability(60, 60, attacker_airfield=True)
    assert time.process_time() - started < 2.0
    assert 0 < p < 1


@settings(max_examples=40, deadline=None)
@given(
    a=st.integers(0, 14),
    d=st.integers(0, 14),
    rough=st.booleans(),
    sf=st.booleans(),
    aa=st.booleans(),
    da=st.booleans(),
)
def test_attack_outcomes_sum_to_one(a, d, rough, sf, aa, da):
    outcomes = risk.attack_odds(a, d, rough, sf, aa, da)
    assert sum(outcomes.values()) == 1
    assert all(p > 0 for p in outcomes.values())
    conquest = risk.conquest_probability(a, d, rough, sf, aa, da)
    assert 0 <= conquest <= 1
    for (kind, left), _ in outcomes.items():
        assert (kind == "won" and 0 <= left <= a) or (kind == "lost" and 1 <= left <= d)


@settings(max_examples=30, deadline=None)
@given(a=st.integers(1, 12), d=st.integers(1, 12))
def test_more_attackers_never_hurt(a, d):
    assert risk.conquest_probability(a + 1, d) >= risk.conquest_probability(a, d)
    assert risk.conquest_probability(a, d + 1) <= risk.conquest_probability(a, d)


def test_uprising_probability():
    # One neutral die against one defender: it must win the only roll.
    assert risk.uprising_probability(1, 1) == F(15, 36)
    # Two defenders: the first roll must be won; then one more win.
    two_v_two = risk.roll_odds(2, 2)
    assert risk.uprising_probability(2, 2) == two_v_two[(0, 2)]
    assert risk.uprising_probability(3, 1) == F(855, 1296)


# ---------------------------------------------------------------- command post tables


def test_neutral_resistance_example():
    # Seven lost neutral troops: the rightmost sits over 6. A roll of 9 brings 4 back.
    assert risk.resistance_threshold(7) == 6
    assert risk.resistance_return(7, 9) == 4
    assert risk.resistance_return(7, 5) == 0
    assert risk.resistance_threshold(1) == 12
    assert risk.resistance_threshold(10) == 3
    assert risk.two_dice_at_least(6) == F(26, 36)


# ---------------------------------------------------------------- engine


def test_engine_export():
    assert isinstance(risk.ENGINE, Engine)
    assert risk.ENGINE.name == "risk"
    assert risk.ENGINE.title == "Risk: Balance of Power"


@pytest.mark.parametrize(
    "options, key",
    [
        ({"colour": "x"}, "colour"),
        ({"players": ["Ann"]}, "players"),
        ({"players": 3}, "players"),
        ({"players": ["Ann", "Ann"]}, "players"),
        ({"players": ["Ann", "neutral"]}, "players"),
        ({"variant": "classic"}, "variant"),
        ({"setup": 5}, "setup"),
        ({"variant": "command_post"}, "missions"),
        ({"variant": "command_post", "missions": ["six_cities"] * 8}, "missions"),
        ({"missions": ["six_cities"]}, "missions"),
        ({"capitals": {"Zed": "Poland"}}, "capitals"),
        ({"capitals": {"Red": "Atlantis"}}, "capitals"),
        ({"first": "Zed"}, "first"),
    ],
)
def test_new_names_the_bad_option(options, key):
    with pytest.raises(RuleError, match=key):
        risk.new(options)


def test_basic_setup_missions_and_cities():
    state = basic(setup=3)
    assert state["board_missions"][-1] == "yellow_region"
    assert "Romania" in state["cities"]
    assert state["turn"]["phase"] == "reinforce"


def test_reinforcement_breakdown_in_view():
    state = counts(basic(), regions=["blue"])
    v = risk.view(state)
    assert v["reinforcements"] == {
        "counted": 15, "base": 5, "regions": 2, "capitals": 1, "cards": 0, "total": 8, "territories": 12, "cities": 3,
    }
    assert "turn in cards" in v["message"]


def test_region_without_known_bonus_needs_a_number():
    state = counts(basic(), regions=["green"])
    assert risk.view(state)["reinforcements"] is None
    with pytest.raises(RuleError, match="region_bonus"):
        risk.act(state, {"type": "reinforce"})
    state = risk.act(state, {"type": "set_counts", "player": "Ann", "region_bonus": 4})
    assert risk.view(state)["reinforcements"]["regions"] == 4


def test_rulebook_battle_example_and_conquest():
    state = counts(basic())
    state = play(
        state,
        {"type": "reinforce"},
        {"type": "attack", "defender": "Bob", "attackers": 3, "defenders": 2, "from": "Sweden", "to": "Finland"},
    )
    attack = risk.view(state)["attack"]
    assert attack["attacker_dice"] == 3 and attack["defender_dice"] == 2
    assert attack["next_roll"][0] == {"attacker_losses": 0, "defender_losses": 2, "p": 2890 / 7776, "exact": "1445/3888"}
    assert abs(sum(o["p"] for o in attack["outcomes"]) - 1) < 1e-12
    # 6-3-2 against 5-5: the six beats a five, the three loses to the other five.
    state = risk.act(state, {"type": "battle", "attacker_dice": [6, 3, 2], "defender_dice": [5, 5]})
    assert state["attack"]["attackers"] == 2 and state["attack"]["defenders"] == 1
    state = risk.act(state, {"type": "battle", "attacker_dice": [4, 1], "defender_dice": [2]})
    assert state["attack"] is None
    assert state["last_battle"]["outcome"] == "conquered"
    assert state["sides"]["Ann"]["territories"] == 13
    assert state["sides"]["Bob"]["territories"] == 9
    assert state["owners"]["Finland"] == "Ann"
    assert state["turn"]["conquered_enemy"]
    # The tracked reinforcements were frozen when the attacks began.
    assert risk.view(state)["reinforcements"]["total"] == 5 + 1


def test_card_after_conquering_an_enemy():
    state = counts(basic())
    state = play(
        state,
        {"type": "attack", "defender": "Bob", "attackers": 3, "defenders": 1},
        {"type": "battle", "attacker_dice": [6, 3, 2], "defender_dice": [5]},
    )
    with pytest.raises(RuleError, match="draw a card first"):
        risk.act(state, {"type": "end_turn"})
    state = play(state, {"type": "draw_card", "stars": 2}, {"type": "end_turn"})
    assert state["sides"]["Ann"]["cards"] == [2]
    assert state["deck"] == 29
    assert state["turn"]["player"] == "Bob"


def test_no_card_for_neutral_conquests():
    state = counts(basic())
    state = play(
        state,
        {"type": "attack", "defender": "neutral", "attackers": 3, "defenders": 1},
        {"type": "battle", "attacker_dice": [6, 3, 2], "defender_dice": [5]},
    )
    assert state["sides"]["neutral"]["territories"] == 7
    with pytest.raises(RuleError, match="neutral"):
        risk.act(state, {"type": "draw_card", "stars": 1})
    state = risk.act(state, {"type": "end_turn"})
    assert state["turn"]["player"] == "Bob"


def test_neutral_defends_with_two_dice_when_it_can():
    state = counts(basic())
    state = risk.act(state, {"type": "attack", "defender": "neutral", "attackers": 3, "defenders": 2})
    with pytest.raises(RuleError, match="neutral army defends with 2"):
        risk.act(state, {"type": "battle", "attacker_dice": [6, 3, 2], "defender_dice": [5]})
    # A player may choose one die.
    state = play(counts(basic()), {"type": "attack", "defender": "Bob", "attackers": 3, "defenders": 2})
    state = risk.act(state, {"type": "battle", "attacker_dice": [6, 3, 2], "defender_dice": [5]})
    assert state["attack"]["defenders"] == 1


def test_dice_limits():
    state = counts(basic())
    state = risk.act(state, {"type": "attack", "defender": "Bob", "attackers": 2, "defenders": 3, "rough": True})
    with pytest.raises(RuleError, match="attacker_dice"):
        risk.act(state, {"type": "battle", "attacker_dice": [6, 3, 2], "defender_dice": [5, 1]})
    with pytest.raises(RuleError, match="defender_dice"):
        risk.act(state, {"type": "battle", "attacker_dice": [6, 3], "defender_dice": [5, 1, 1]})
    with pytest.raises(RuleError, match="die value"):
        risk.act(state, {"type": "battle", "attacker_dice": [7, 3], "defender_dice": [5]})
    with pytest.raises(RuleError, match="attacker_dice"):
        risk.act(state, {"type": "battle", "attacker_dice": "63", "defender_dice": [5]})


def test_attack_validation():
    state = counts(basic())
    with pytest.raises(RuleError, match="defender"):
        risk.act(state, {"type": "attack", "defender": "Ann", "attackers": 2, "defenders": 1})
    with pytest.raises(RuleError, match="defender"):
        risk.act(state, {"type": "attack", "defender": "Zed", "attackers": 2, "defenders": 1})
    with pytest.raises(RuleError, match="attackers"):
        risk.act(state, {"type": "attack", "defender": "Bob", "attackers": 0, "defenders": 1})
    with pytest.raises(RuleError, match="to"):
        risk.act(state, {"type": "attack", "defender": "Bob", "attackers": 2, "defenders": 1, "to": "Atlantis"})
    # Poland's borders are all in the map data.
    with pytest.raises(RuleError, match="does not border"):
        risk.act(state, {"type": "attack", "defender": "Bob", "attackers": 2, "defenders": 1, "from": "Poland", "to": "Italy"})
    with pytest.raises(RuleError, match="Recon|airfield"):
        risk.act(state, {"type": "attack", "defender": "Bob", "attackers": 2, "defenders": 1, "attacker_airfield": True})


def test_out_of_turn_and_bad_actions():
    state = counts(basic())
    with pytest.raises(RuleError, match="Ann's turn"):
        risk.act(state, {"type": "end_turn", "player": "Bob"})
    with pytest.raises(RuleError, match="unknown action"):
        risk.act(state, {"type": "fly"})
    with pytest.raises(RuleError, match="type"):
        risk.act(state, {})
    with pytest.raises(RuleError, match="territories"):
        risk.act(state, {"type": "set_counts", "player": "Ann", "territories": "many"})
    with pytest.raises(RuleError, match="only 30"):
        risk.act(state, {"type": "set_counts", "player": "Ann", "territories": 25})
    with pytest.raises(RuleError, match="not a player"):
        risk.act(state, {"type": "set_counts", "player": "Zed", "territories": 2})
    with pytest.raises(RuleError, match="Command Post"):
        risk.act(state, {"type": "buy", "item": "recon"})


def test_old_state_is_never_touched_and_replay_is_deterministic():
    actions = [
        {"type": "set_counts", "player": "Ann", "territories": 12, "cities": 3},
        {"type": "set_counts", "player": "Bob", "territories": 10, "cities": 2},
        {"type": "attack", "defender": "Bob", "attackers": 4, "defenders": 2, "to": "Finland"},
        {"type": "battle", "attacker_dice": [6, 3, 2], "defender_dice": [5, 5]},
        {"type": "battle", "attacker_dice": [6, 6, 2], "defender_dice": [5]},
        {"type": "draw_card", "stars": 1},
        {"type": "end_turn"},
    ]
    state = basic()
    for action in actions:
        before = copy.deepcopy(state)
        following = risk.act(state, action)
        assert state == before
        state = following
    assert play(basic(), *actions) == state
    with pytest.raises(RuleError):
        before = copy.deepcopy(state)
        risk.act(state, {"type": "battle", "attacker_dice": [1], "defender_dice": [1]})
    assert state == before


def test_the_round_counts_both_players_turns_not_each_one():
    # The player who places the armies leaves the other to say who goes first: a round opens with that player.
    state = counts(basic(first="Bob"))
    seen = []
    for _ in range(5):
        turn = risk.view(state)["turn"]
        seen.append((turn["player"], turn["round"], turn["number"]))
        state = risk.act(state, {"type": "end_turn"})
    assert seen == [("Bob", 1, 1), ("Ann", 1, 2), ("Bob", 2, 3), ("Ann", 2, 4), ("Bob", 3, 5)]


def test_missions_one_per_turn_no_card_and_victory():
    state = basic(setup=2, capitals={"Ann": "Germany", "Bob": "Finland"})
    state = counts(state)
    state = risk.act(state, {"type": "set_counts", "player": "Ann", "cities": 6, "regions": ["blue", "orange"]})
    state = play(
        state,
        {"type": "attack", "defender": "Bob", "attackers": 3, "defenders": 1},
        {"type": "battle", "attacker_dice": [6, 3, 2], "defender_dice": [5]},
        {"type": "take_mission", "mission": "six_cities"},
    )
    with pytest.raises(RuleError, match="already took a mission"):
        risk.act(state, {"type": "take_mission", "mission": "two_regions"})
    with pytest.raises(RuleError, match="no card"):
        risk.act(state, {"type": "draw_card", "stars": 1})
    state = play(state, {"type": "end_turn"}, {"type": "end_turn"})
    with pytest.raises(RuleError, match="already took"):
        risk.act(state, {"type": "take_mission", "mission": "six_cities"})
    # Missions the tracker can see are not met are refused.
    with pytest.raises(RuleError, match="does not meet"):
        risk.act(state, {"type": "take_mission", "mission": "green_region"})
    state = play(state, {"type": "take_mission", "mission": "two_regions"}, {"type": "end_turn"}, {"type": "end_turn"})
    state = risk.act(state, {"type": "set_owner", "territory": "Switzerland", "owner": "Ann"})
    assert risk.view(state)["missions"][2]["status"]["Ann"] is True
    state = risk.act(state, {"type": "take_mission", "mission": "swiss_safe"})
    assert risk.scores(state) == {"Ann": 3, "Bob": 0}
    state = risk.act(state, {"type": "end_turn"})
    assert state["winner"] == "Ann"
    view = risk.view(state)
    assert view["over"] and "3 missions" in view["message"]
    # won in Ann's third turn: the round the game ended in stays
    assert (view["turn"]["player"], view["turn"]["round"]) == ("Ann", 3)
    with pytest.raises(RuleError, match="over"):
        risk.act(state, {"type": "end_turn"})


def test_three_missions_without_own_capital_do_not_win():
    state = counts(basic(setup=2))
    state = risk.act(state, {"type": "set_counts", "player": "Ann", "cities": 6, "regions": ["blue", "orange"]})
    state["sides"]["Ann"]["missions"] = ["swiss_safe", "danish_naval_base"]
    state = play(
        state,
        {"type": "set_counts", "player": "Ann", "capitals": []},
        {"type": "take_mission", "mission": "six_cities"},
        {"type": "end_turn"},
    )
    assert state["winner"] is None
    assert state["turn"]["player"] == "Bob"


def test_capital_moves_with_conquest_and_elimination_wins():
    state = basic(capitals={"Ann": "Germany", "Bob": "Poland"})
    state = play(
        state,
        {"type": "set_counts", "player": "Ann", "territories": 12},
        {"type": "set_counts", "player": "Bob", "territories": 1},
        {"type": "attack", "defender": "Bob", "attackers": 5, "defenders": 1, "from": "Germany", "to": "Poland"},
        {"type": "battle", "attacker_dice": [6, 3, 2], "defender_dice": [5]},
    )
    assert state["sides"]["Ann"]["capitals"] == ["Ann", "Bob"]
    assert state["winner"] == "Ann"
    assert "no territory" in risk.view(state)["message"]


def test_counts_that_stop_fitting_wait_for_a_correction():
    state = play(
        basic(),
        {"type": "set_counts", "player": "Ann", "territories": 12, "capitals": []},
        {"type": "set_counts", "player": "Bob", "territories": 2, "cities": 2, "capitals": ["Bob", "Ann"]},
        {"type": "attack", "defender": "Bob", "attackers": 3, "defenders": 1},
        {"type": "battle", "attacker_dice": [6, 3, 2], "defender_dice": [5]},
        {"type": "draw_card", "stars": 1},
        {"type": "end_turn"},
    )
    bob = state["sides"]["Bob"]
    assert bob["territories"] == 1 and bob["cities"] == 1
    # Two capitals on one territory cannot be: the page asks for a correction instead of guessing.
    assert risk.view(state)["reinforcements"] is None
    with pytest.raises(RuleError, match="do not fit together"):
        risk.act(state, {"type": "reinforce"})
    state = risk.act(state, {"type": "set_counts", "player": "Bob", "capitals": ["Bob"]})
    assert risk.view(state)["reinforcements"]["total"] == 3 + 1


def test_command_post_flow():
    state = counts(command_post(lost_table_size=12))
    assert state["turn"]["phase"] == "support"
    assert state["sides"]["Ann"]["troops"] == 27 and state["sides"]["neutral"]["troops"] == 60
    # Battles fill the lost-troop tables.
    state = play(
        state,
        {"type": "attack", "defender": "neutral", "attackers": 3, "defenders": 2},
        {"type": "battle", "attacker_dice": [6, 6, 2], "defender_dice": [5, 5]},
        {"type": "end_turn"},
    )
    assert state["sides"]["neutral"]["lost"] == 2
    assert state["turn"]["phase"] == "resistance"
    view = risk.view(state)
    assert view["resistance"] == {"lost": 2, "needed": 11, "chance": 3 / 36, "would_return": 1}
    state = risk.act(state, {"type": "neutral_resistance", "roll": [6, 5]})
    assert state["last_resistance"] == {"lost": 2, "needed": 11, "roll": 11, "returned": 1, "boxed": 1}
    assert state["sides"]["neutral"]["troops"] == 60 - 2 + 1
    assert state["sides"]["neutral"]["lost"] == 0
    assert state["turn"]["phase"] == "support"


def test_rear_support_example():
    state = counts(command_post())
    state = risk.act(state, {"type": "set_counts", "player": "Ann", "lost": 12})
    state = play(state, {"type": "buy", "item": "maneuver"}, {"type": "buy", "item": "special_forces"})
    assert state["sides"]["Ann"]["lost"] == 1
    assert state["turn"]["special_forces"]
    with pytest.raises(RuleError, match="costs 2"):
        risk.act(state, {"type": "buy", "item": "recon"})
    # Special Forces allow three dice into rough terrain.
    state = play(
        state,
        {"type": "attack", "defender": "Bob", "attackers": 4, "defenders": 2, "rough": True},
        {"type": "battle", "attacker_dice": [6, 3, 2], "defender_dice": [5, 5]},
    )
    assert state["attack"]["attackers"] == 3
    with pytest.raises(RuleError, match="over for this turn"):
        risk.act(state, {"type": "buy", "item": "recon"})


def test_purchase_costs():
    assert {k: c for k, (c, _) in risk.PURCHASES.items()} == {
        "recon": 2, "maneuver": 3, "uprising": 6, "troops": 7, "special_forces": 8, "card": 9, "airfield": 10,
    }


def test_airfield_one_per_player_bonus_and_destruction():
    state = counts(command_post(), ann=12, bob=10)
    state = play(state, {"type": "set_counts", "player": "Ann", "lost": 20}, {"type": "buy", "item": "airfield", "territory": "Poland"})
    with pytest.raises(RuleError, match="already has an airfield"):
        risk.act(state, {"type": "buy", "item": "airfield", "territory": "Germany"})
    state = risk.act(state, {"type": "attack", "defender": "Bob", "attackers": 3, "defenders": 2, "from": "Poland", "to": "Prussia"})
    assert state["attack"]["attacker_airfield"]
    # With the airfield the 5 counts as 6 and beats the 5; 4 against 4 goes to the defender.
    state = risk.act(state, {"type": "battle", "attacker_dice": [5, 4, 1], "defender_dice": [5, 4]})
    assert state["attack"]["defenders"] == 1 and state["attack"]["attackers"] == 2
    state = play(state, {"type": "stop_attack"}, {"type": "end_turn"})
    # Bob takes the airfield's territory: the airfield is gone.
    state = play(
        state,
        {"type": "attack", "defender": "Ann", "attackers": 3, "defenders": 1, "from": "Lithuania", "to": "Poland"},
        {"type": "battle", "attacker_dice": [6, 6, 6], "defender_dice": [6]},
    )
    assert state["attack"]["defender_airfield"]
    assert state["attack"]["attackers"] == 2
    state = risk.act(state, {"type": "battle", "attacker_dice": [6, 6], "defender_dice": [4]})
    assert state["sides"]["Ann"]["airfield"] is None


def test_uprising():
    state = counts(command_post())
    state = play(state, {"type": "set_counts", "player": "Ann", "lost": 6}, {"type": "buy", "item": "uprising"})
    state = risk.act(state, {"type": "attack", "uprising": True, "defender": "Bob", "attackers": 2, "defenders": 2})
    assert risk.view(state)["attack"]["conquest"] == pytest.approx(295 / 1296)
    with pytest.raises(RuleError, match="uprising fights on"):
        risk.act(state, {"type": "stop_attack"})
    # A neutral loss ends the uprising.
    state = risk.act(state, {"type": "battle", "attacker_dice": [6, 2], "defender_dice": [5, 4]})
    assert state["attack"] is None and state["last_battle"]["outcome"] == "uprising spent"
    assert state["sides"]["Bob"]["territories"] == 10
    state = play(
        state,
        {"type": "set_counts", "player": "Ann", "lost": 6},
        {"type": "buy", "item": "uprising"},
        {"type": "attack", "uprising": True, "defender": "Bob", "attackers": 3, "defenders": 1},
        {"type": "battle", "attacker_dice": [6, 2, 1], "defender_dice": [5]},
    )
    assert state["sides"]["Bob"]["territories"] == 9
    assert state["sides"]["neutral"]["territories"] == 9
    assert not state["turn"]["conquered_enemy"]


def test_recon_forbids_ones_on_protected_dice():
    state = counts(command_post())
    state = play(
        state,
        {"type": "set_counts", "player": "Ann", "lost": 2},
        {"type": "buy", "item": "recon"},
        # Denmark's naval base starts with the neutral army in Command Post.
        {"type": "attack", "defender": "neutral", "attackers": 3, "defenders": 2, "to": "Denmark"},
    )
    assert state["attack"]["recon"] == 1
    with pytest.raises(RuleError, match="Recon"):
        risk.act(state, {"type": "battle", "attacker_dice": [1, 1, 1], "defender_dice": [2, 2]})
    state = risk.act(state, {"type": "battle", "attacker_dice": [2, 1, 1], "defender_dice": [2, 2]})
    assert state["attack"]["attackers"] == 1


def test_turn_in_cards_and_deck_reshuffle():
    state = counts(basic())
    state["sides"]["Ann"]["cards"] = [2, 1, 1]
    state["deck"] = 0
    state["discard"] = 27
    state = risk.act(state, {"type": "turn_in", "stars": [2, 1, 1]})
    assert risk.view(state)["reinforcements"]["cards"] == 7
    with pytest.raises(RuleError, match="already turned in"):
        risk.act(state, {"type": "turn_in", "stars": [1, 1]})
    state = play(
        state,
        {"type": "attack", "defender": "Bob", "attackers": 3, "defenders": 1},
        {"type": "battle", "attacker_dice": [6, 3, 2], "defender_dice": [5]},
        {"type": "draw_card", "stars": 1},
    )
    assert state["reshuffles"] == 1
    assert state["deck"] == 29 and state["discard"] == 0


def test_turn_in_needs_the_cards():
    state = counts(basic())
    state["sides"]["Ann"]["cards"] = [2]
    with pytest.raises(RuleError, match="no more 1-star"):
        risk.act(state, {"type": "turn_in", "stars": [2, 1]})
    state["sides"]["Ann"]["cards"] = [1]
    with pytest.raises(RuleError, match="2 to 10"):
        risk.act(state, {"type": "turn_in", "stars": [1]})


def test_one_maneuver_per_turn():
    state = risk.act(counts(basic()), {"type": "maneuver"})
    with pytest.raises(RuleError, match="one troop movement"):
        risk.act(state, {"type": "maneuver"})
    with pytest.raises(RuleError, match="over for this turn"):
        risk.act(state, {"type": "attack", "defender": "Bob", "attackers": 2, "defenders": 1})


def test_view_is_json_safe_in_every_phase():
    states = [basic(), counts(basic()), counts(command_post())]
    state = counts(command_post())
    state = risk.act(state, {"type": "attack", "defender": "Bob", "attackers": 5, "defenders": 3})
    states.append(state)
    state = risk.act(state, {"type": "battle", "attacker_dice": [6, 5, 4], "defender_dice": [1, 1]})
    states.append(state)
    for s in states:
        v = risk.view(s)
        assert json_safe(v)
        json.dumps(v)
        assert isinstance(v["message"], str) and v["message"]
        assert set(risk.scores(s)) == {"Ann", "Bob"}
