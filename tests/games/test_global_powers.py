"""Global Powers tracker: the rulebook's examples, evaluation, conflicts and the engine contract."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.games import global_powers as gp
from companion.games.base import Engine, RuleError
from companion.games.global_powers_rules import REGIONS, base, governors, strength
from tests.games.helpers import json_safe


def play(state, *actions):
    for action in actions:
        state = gp.act(state, action)
    return state


def game(players=("Red", "Yellow", "Green", "Blue"), regions=None, first=None, **options):
    """A started game whose regions are entered by hand: {region: ({party: n}, {chip: n})}."""
    state = gp.new({"players": list(players), **options})
    for name, (politicians, chips) in (regions or {}).items():
        state = gp.act(state, {"type": "set_region", "region": name, "politicians": politicians, **chips})
    return gp.act(state, {"type": "start", "first": first or players[0]})


# ---------------------------------------------------------------- pure rules


def test_vp_to_win_table():
    assert [gp.vp_to_win(n) for n in (2, 3, 4, 5)] == [40, 30, 25, 22]
    for bad in (1, 6, "4", None):
        with pytest.raises(ValueError):
            gp.vp_to_win(bad)


def test_rulebook_evaluation_example():
    # Red: majority in Europe with 4 economy chips, opposition in Russia, shared power in
    # Japan, alone in Africa, 3 UN politicians and 2 in Mauritius -> 16 VP.
    regions = {
        "Europe": {"politicians": {"Red": 3, "Yellow": 2, "Blue": 2}, "economy": 4},
        "Russia": {"politicians": {"Blue": 3, "Red": 1}, "economy": 5},
        # Sharing needs a full tie, so Green matches Red in the UN and Mauritius too.
        "Japan": {"politicians": {"Red": 2, "Green": 2}, "economy": 0},
        "Africa": {"politicians": {"Red": 1}, "economy": 2},
    }
    un = {"Red": 3, "Green": 3}
    mauritius = {"Red": 2, "Green": 2}
    vp = gp.evaluate(regions, un, mauritius)
    assert vp["Red"] == 3 + 2 + 1 + 2 + 4 + 6 - 2 == 16
    assert vp["Blue"] == 1 + 3 + 3
    assert vp["Yellow"] == 1
    assert vp["Green"] == 2 + 6 - 2
    lines = gp.evaluation_breakdown(regions, un, mauritius)["Red"]
    assert {(line["source"], line["region"], line["vp"]) for line in lines} == {
        ("region", "Europe", 3), ("economy", "Europe", 2), ("region", "Russia", 1), ("region", "Japan", 2),
        ("region", "Africa", 4), ("un", None, 6), ("mauritius", None, -2),
    }


def test_ties_are_settled_by_un_then_mauritius():
    regions = {"India": {"politicians": {"Red": 2, "Blue": 2}, "economy": 3}}
    # More in the UN wins the tie outright.
    assert gp.evaluate(regions, {"Blue": 1}, {}) == {"Red": 1, "Blue": 3 + 1 + 2}
    # Level in the UN: fewer in Mauritius wins.
    assert gp.evaluate(regions, {}, {"Blue": 1}) == {"Red": 3 + 1, "Blue": 1 - 1}
    # Level everywhere: a shared government, both get the economy bonus.
    assert gp.evaluate(regions, {}, {}) == {"Red": 2 + 1, "Blue": 2 + 1}


def test_economy_bonus_table_and_sanctions():
    for chips, bonus in ((2, 0), (3, 1), (4, 2), (5, 3)):
        assert gp.evaluate({"China": {"politicians": {"Red": 1}, "economy": chips}}) == {"Red": 4 + bonus}
    halved = gp.evaluate({"China": {"politicians": {"Red": 2, "Blue": 1}, "economy": 5, "sanctioned": True}})
    # A sanctioned region produces half its normal VP: (strongest 3 + economy 3) / 2 = 3; opposition 1 -> 0.
    assert halved == {"Red": 3, "Blue": 0}


def test_a_sanctioned_region_halves_its_total_not_each_line():
    china = {"China": {"politicians": {"Red": 2, "Blue": 1}, "economy": 3, "sanctioned": True}}
    # Strongest 3 + economy bonus 1 = 4 VP normally; under sanctions half of that, 2.
    assert gp.evaluate(china) == {"Red": 2, "Blue": 0}
    lines = gp.evaluation_breakdown(china, {}, {})["Red"]
    assert [(line["source"], line["vp"], line["sanctioned"]) for line in lines] == [("region", 2, True)]
    # The other reading, each line rounded down on its own: 3 -> 1 and 1 -> 0.
    assert gp.evaluate(china, sanction_halving="each_line") == {"Red": 1, "Blue": 0}
    state = gp.new({"players": ["Red", "Blue"], "sanction_halving": "each_line"})
    assert state["sanction_halving"] == "each_line"
    with pytest.raises(RuleError, match="'sanction_halving'"):
        gp.new({"players": ["Red", "Blue"], "sanction_halving": "half"})


def test_protectorate_counts_un_politicians():
    regions = {"Orient": {"politicians": {"Red": 2}, "economy": 0, "protectorate": True}}
    # Three UN emissaries outnumber Red's two: Red is now opposition.
    assert gp.evaluate(regions, {"Blue": 3}, {}) == {"Red": 1, "Blue": 6}


def test_evaluate_rejects_bad_input():
    with pytest.raises(ValueError):
        gp.evaluate({"Europe": {"politicians": {"Red": -1}, "economy": 1}})
    with pytest.raises(ValueError):
        gp.evaluate({"Europe": {"economy": 1}})
    with pytest.raises(ValueError):
        gp.evaluate({"Europe": {"politicians": {"Red": 1}, "economy": 6}})
    with pytest.raises(ValueError):
        gp.evaluate({}, {"Red": "two"})


party_names = st.sampled_from(["Red", "Yellow", "Green", "Blue", "Black"])


@settings(max_examples=80, deadline=None)
@given(
    regions=st.dictionaries(
        st.sampled_from(REGIONS),
        st.fixed_dictionaries(
            {"politicians": st.dictionaries(party_names, st.integers(0, 6), max_size=5), "economy": st.integers(0, 5)}
        ),
        max_size=12,
    ),
    un=st.dictionaries(party_names, st.integers(0, 5), max_size=5),
    mauritius=st.dictionaries(party_names, st.integers(0, 5), max_size=5),
)
def test_evaluation_totals_add_up(regions, un, mauritius):
    vp = gp.evaluate(regions, un, mauritius)
    lines = gp.evaluation_breakdown(regions, un, mauritius)
    assert set(vp) == set(lines)
    for party, party_lines in lines.items():
        assert vp[party] == sum(line["vp"] for line in party_lines)
        assert sum(line["vp"] for line in party_lines if line["source"] == "un") == 2 * un.get(party, 0)
        assert sum(line["vp"] for line in party_lines if line["source"] == "mauritius") == -mauritius.get(party, 0)
    for name, data in regions.items():
        present = [p for p, n in data["politicians"].items() if n > 0]
        position = sum(line["vp"] for party_lines in lines.values() for line in party_lines if line["region"] == name and line["source"] == "region")
        if not present:
            assert position == 0
        elif len(present) == 1:
            assert position == 4
        else:
            # 3 + one per opposition party, or 2 per sharing party + one per opposition party.
            assert position in {3 + len(present) - 1} | {2 * g + (len(present) - g) for g in range(2, len(present) + 1)}


def test_war_rulebook_example():
    # Red (3 military) against a coalition with 2: both roll 2, Red wins 5:4.
    assert gp.war(3, 2, 2, 2) == {"winner": "attacker", "replaced": 1, "attack": 5, "defend": 4}
    assert gp.war(3, 2, 3, 2)["replaced"] == 2
    # The attacker can lose.
    assert gp.war(0, 2, 3, 2) == {"winner": "defender", "replaced": 1, "attack": 3, "defend": 4}


def test_war_draws():
    assert gp.war(2, 2, 3, 3)["winner"] is None
    # Two or more chips ahead, rolling 1 against 3: a draw even when the sums say otherwise.
    assert gp.war(5, 2, 1, 3) == {"winner": None, "replaced": 0, "attack": 6, "defend": 5}
    assert gp.war(4, 3, 1, 3)["winner"] == "defender"
    for bad in ((1, 1, 0, 1), (1, 1, 4, 1), (-1, 1, 1, 1)):
        with pytest.raises(ValueError):
            gp.war(*bad)


@given(st.integers(0, 5), st.integers(0, 5), st.sampled_from([1, 2, 3]), st.sampled_from([1, 2, 3]))
def test_war_properties(am, dm, ar, dr):
    result = gp.war(am, dm, ar, dr)
    if result["winner"] is None:
        assert result["replaced"] == 0
    else:
        assert result["replaced"] == abs((am + ar) - (dm + dr)) > 0
    odds = gp.war_odds(am, dm)
    assert abs(sum(odds.values()) - 1) < 1e-12


def test_putsch_rulebook_example():
    # Red: 2 in India + 2 committed + roll 3 = 7; Blue: strength 4 + 1 committed + roll 1 = 6.
    assert gp.putsch(2, 2, 3, 4, 1, 1) == {"success": True, "player": 7, "government": 6}
    # Never on a 1 against the government's 3.
    assert not gp.putsch(5, 5, 1, 1, 0, 3)["success"]


# ---------------------------------------------------------------- set-up


def test_a_bare_player_count_names_parties_by_colour():
    assert gp.new({"players": 4})["parties"] == ["Red", "Yellow", "Green", "Blue"]
    assert gp.new({"players": ["Ann", "Green", "Bob"]})["colours"] == {"Ann": "red", "Green": "green", "Bob": "yellow"}
    assert gp.new({})["dominance"] == 12 - 3


def test_auction_example():
    state = gp.new({"players": ["Red", "Green", "Blue", "Black"]})
    state = gp.act(state, {"type": "auction", "region": "North-America", "offers": {}})
    state = gp.act(state, {"type": "auction", "region": "europe", "offers": {"Red": 3, "Green": 2, "Blue": 2, "Black": 1}})
    assert state["regions"]["Europe"]["politicians"] == {"Red": 3, "Green": 2, "Blue": 2}
    assert state["party"]["Red"]["mauritius"] == 1
    assert base(state, "Red") == 20 - 3 - 1
    assert base(state, "Black") == 20
    # A tie at the top: both place, nobody goes to Mauritius, and second bids stay home.
    state = gp.act(state, {"type": "auction", "region": "Russia", "offers": {"Green": 2, "Blue": 2, "Black": 1}})
    assert state["regions"]["Russia"]["politicians"] == {"Green": 2, "Blue": 2}
    assert state["party"]["Green"]["mauritius"] == 0


def test_auction_rules():
    state = gp.new({"players": ["Red", "Green"]})
    with pytest.raises(RuleError, match="next is North-America"):
        gp.act(state, {"type": "auction", "region": "Europe", "offers": {"Red": 1}})
    with pytest.raises(RuleError, match="at most 19"):
        gp.act(state, {"type": "auction", "region": "North-America", "offers": {"Red": 20}})
    with pytest.raises(RuleError, match="offers"):
        gp.act(state, {"type": "auction", "region": "North-America", "offers": {"Pink": 1}})


def test_start_with_the_weakest_party():
    state = gp.new({"players": ["Red", "Green"]})
    state = gp.act(state, {"type": "auction", "region": "North-America", "offers": {"Red": 3, "Green": 1}})
    state = gp.act(state, {"type": "start"})
    assert state["turn"]["player"] == "Green"
    tied = gp.new({"players": ["Red", "Green"]})
    with pytest.raises(RuleError, match="tied as the weakest party: roll a die each"):
        gp.act(tied, {"type": "start"})


def test_a_tie_for_the_weakest_party_is_rolled_for():
    # with the auction skipped every party is as weak as the others: the dice decide, the highest starts
    tied = gp.new({"players": ["Red", "Green", "Blue"]})
    assert gp.view(tied)["weakest"] == ["Red", "Green", "Blue"]
    state = gp.act(tied, {"type": "start", "tie_rolls": {"Red": 2, "Green": 6, "Blue": 5}})
    assert state["turn"]["player"] == "Green" and state["phase"] == "play"
    with pytest.raises(RuleError, match="Green and Blue both rolled 6: roll again"):
        gp.act(tied, {"type": "start", "tie_rolls": {"Red": 2, "Green": 6, "Blue": 6}})
    with pytest.raises(RuleError, match="one die for each of Red, Green and Blue"):
        gp.act(tied, {"type": "start", "tie_rolls": {"Red": 2, "Green": 6}})
    with pytest.raises(RuleError, match="shows 1 to 6, not 7"):
        gp.act(tied, {"type": "start", "tie_rolls": {"Red": 2, "Green": 7, "Blue": 1}})
    # a first player named at the table still wins over the rule
    assert gp.act(tied, {"type": "start", "first": "Blue"})["turn"]["player"] == "Blue"


@pytest.mark.parametrize(
    "options, key",
    [
        ({"players": 6}, "players"),
        ({"players": ["Red"]}, "players"),
        ({"players": ["A", "B", "C", "D", "E", "F"]}, "players"),
        ({"players": ["Red", "Red"]}, "players"),
        ({"players": [{"name": "A", "colour": "pink"}, "B"]}, "players"),
        ({"players": ["A", "B"], "first": "C"}, "first"),
        ({"players": ["A", "B"], "extended": "yes"}, "extended"),
        ({"players": ["A", "B"], "speed": 2}, "speed"),
    ],
)
def test_new_names_the_bad_option(options, key):
    with pytest.raises(RuleError, match=key):
        gp.new(options)


# ---------------------------------------------------------------- turns and region actions


AFRICA = {
    "Africa": ({"Blue": 4, "Red": 2, "Yellow": 1}, {"economy": 3, "military": 2, "diplomacy": 1}),
    "Orient": ({"Green": 2}, {"economy": 2, "military": 1}),
    "South-America": ({"Red": 1}, {}),
    "India": ({"Yellow": 2}, {}),
}


def test_strength_of_government_is_fixed_at_activation():
    state = game(regions={"Africa": ({"Blue": 2, "Red": 1}, {})})
    assert strength(state, "Africa") == 2
    state = gp.act(state, {"type": "activate", "region": "Africa"})
    assert state["turn"]["actions_left"] == 2
    state["regions"]["Africa"]["politicians"]["Red"] = 2
    assert governors(state, "Africa") == ["Blue", "Red"]
    assert state["turn"]["actions_left"] == 2


def test_rulebook_region_actions_example():
    state = game(regions=AFRICA, first="Yellow")
    state = gp.act(state, {"type": "activate", "region": "Africa"})
    assert state["turn"]["actions_left"] == 4
    state = play(
        state,
        {"type": "budget", "conversion": "arm"},
        # Red vetoes the war, Blue forces it: each recalls one politician.
        {"type": "recall", "party": "Red", "region": "Africa"},
        {"type": "recall", "party": "Blue", "region": "Africa"},
        {"type": "war", "target": "Orient", "attacker_roll": 2, "defender_roll": 2},
        {"type": "migration", "to": "South-America"},
        {"type": "failed_ballot", "proposal": "sanctions against India"},
    )
    africa = state["regions"]["Africa"]
    assert africa["politicians"] == {"Blue": 2, "Red": 1, "Yellow": 1}
    assert state["turn"]["actions_left"] == 0
    # War: 3 + 2 = 5 against 1 + 2 = 3: Green loses 2, Blue sends 2 from home.
    assert state["last_war"]["removed"] == {"Green": 2} and state["last_war"]["added"] == {"Blue": 2}
    assert state["regions"]["Orient"]["politicians"] == {"Blue": 2}
    assert africa["military"] == 2 and africa["economy"] == 2
    assert state["regions"]["Orient"]["military"] == 0 and state["regions"]["Orient"]["economy"] == 1
    assert state["regions"]["South-America"]["politicians"] == {"Red": 1, "Blue": 1}
    with pytest.raises(RuleError, match="used all its actions"):
        gp.act(state, {"type": "budget", "conversion": "grow"})
    assert "ends the turn" in gp.view(state)["message"]


def test_war_against_a_coalition_replaces_per_party():
    regions = {
        "Europe": ({"Red": 3}, {"military": 3}),
        "Russia": ({"Green": 2, "Yellow": 2}, {"military": 2, "economy": 1}),
    }
    won = play(game(regions=regions), {"type": "activate", "region": "Europe"},
               {"type": "war", "target": "Russia", "attacker_roll": 2, "defender_roll": 2})
    assert won["regions"]["Russia"]["politicians"] == {"Green": 1, "Yellow": 1, "Red": 1}
    assert base(won, "Green") == 20 - 1
    big = play(game(regions=regions), {"type": "activate", "region": "Europe"},
               {"type": "war", "target": "Russia", "attacker_roll": 3, "defender_roll": 2})
    assert big["regions"]["Russia"]["politicians"] == {"Red": 2}
    assert big["regions"]["Russia"]["economy"] == 0 and big["regions"]["Europe"]["military"] == 2


def test_war_draw_and_restrictions():
    regions = {"Europe": ({"Red": 3}, {"military": 2}), "Russia": ({"Green": 2}, {"military": 2}), "Japan": ({}, {})}
    state = play(game(regions=regions), {"type": "activate", "region": "Europe"})
    drawn = gp.act(state, {"type": "war", "target": "Russia", "attacker_roll": 3, "defender_roll": 3})
    assert drawn["regions"]["Europe"]["military"] == 1 and drawn["regions"]["Russia"]["military"] == 1
    assert drawn["regions"]["Russia"]["politicians"] == {"Green": 2}
    with pytest.raises(RuleError, match="empty"):
        gp.act(state, {"type": "war", "target": "Japan", "attacker_roll": 3, "defender_roll": 3})
    with pytest.raises(RuleError, match="attacker_roll"):
        gp.act(state, {"type": "war", "target": "Russia", "attacker_roll": 6, "defender_roll": 3})
    state["peace"] = True
    with pytest.raises(RuleError, match="peace"):
        gp.act(state, {"type": "war", "target": "Russia", "attacker_roll": 3, "defender_roll": 3})


def test_diplomacy_rulebook_example():
    regions = {
        "Australia": ({"Red": 2}, {"diplomacy": 3}),
        "North-America": ({"Blue": 2}, {"diplomacy": 2}),
        "Russia": ({"Green": 2}, {"diplomacy": 1}),
        "China": ({"Yellow": 3}, {"military": 4, "economy": 2}),
    }
    state = game(regions=regions)
    state["party"]["Red"]["un"] = 5
    state["party"]["Blue"]["un"] = 5
    state = play(
        state,
        {"type": "activate", "region": "Australia"},
        {
            "type": "diplomacy",
            "application": "disarmament",
            "target": "China",
            "for": {"Australia": 3, "Russia": 1},
            "against": {"North-America": 2},
            "un_for": {"Red": 5},
            "un_against": {"Blue": 5},
        },
    )
    assert state["last_vote"]["for"] == 9 and state["last_vote"]["against"] == 7 and state["last_vote"]["passed"]
    china = state["regions"]["China"]
    assert china["military"] == 2 and china["disarmed"]
    assert state["regions"]["Australia"]["diplomacy"] == 0
    state = play(state, {"type": "end_turn"}, {"type": "activate", "region": "China"})
    with pytest.raises(RuleError, match="disarmed"):
        gp.act(state, {"type": "budget", "conversion": "arm"})


def test_sanctions_and_ban():
    regions = {
        "Europe": ({"Red": 3, "Blue": 1}, {"diplomacy": 5}),
        "India": ({"Blue": 3}, {"diplomacy": 4, "economy": 2}),
    }
    state = play(
        game(regions=regions),
        {"type": "activate", "region": "Europe"},
        {"type": "diplomacy", "application": "sanction", "target": "India", "for": {"Europe": 2}},
        {"type": "diplomacy", "application": "ban", "ban": "Blue", "target": "Europe", "for": {"Europe": 3}, "against": {"India": 2}},
        {"type": "end_turn"},
    )
    assert state["regions"]["India"]["sanctioned"]
    assert state["regions"]["Europe"]["politicians"] == {"Red": 3}
    state = gp.act(state, {"type": "activate", "region": "India"})
    with pytest.raises(RuleError, match="sanctions"):
        gp.act(state, {"type": "budget", "conversion": "grow"})
    with pytest.raises(RuleError, match="sanctions"):
        gp.act(state, {"type": "diplomacy", "application": "sanction", "target": "Europe", "for": {"India": 1}})
    with pytest.raises(RuleError, match="Europe has only 0"):
        gp.act(state, {"type": "diplomacy", "application": "end_sanction", "target": "India", "for": {"India": 1}, "against": {"Europe": 1}})
    state = gp.act(state, {"type": "diplomacy", "application": "end_sanction", "target": "India", "for": {"India": 1}})
    assert not state["regions"]["India"]["sanctioned"]


def test_budget_cap_and_mining():
    regions = {"Russia": ({"Red": 2, "Blue": 2}, {"raw": 2, "economy": 2, "diplomacy": 4})}
    state = play(game(regions=regions), {"type": "activate", "region": "Russia"})
    with pytest.raises(RuleError, match="roll"):
        gp.act(state, {"type": "budget", "conversion": "mine", "roll": 7})
    # A shared government: the mining accident sends one of each governing party away.
    state = gp.act(state, {"type": "budget", "conversion": "mine", "roll": 1})
    assert state["regions"]["Russia"]["economy"] == 5
    assert state["regions"]["Russia"]["politicians"] == {"Red": 1, "Blue": 1}
    assert state["party"]["Red"]["mauritius"] == 1 and state["party"]["Blue"]["mauritius"] == 1
    with pytest.raises(RuleError, match="limit is 5"):
        gp.act(state, {"type": "budget", "conversion": "mine", "roll": 2})
    with pytest.raises(RuleError, match="limit is 5"):
        gp.act(state, {"type": "budget", "conversion": "diplomacy"})


def test_other_region_actions():
    regions = {"Japan": ({"Red": 3, "Blue": 1}, {"military": 1, "diplomacy": 1, "economy": 1}), "China": ({"Green": 1}, {"economy": 2})}
    state = game(regions=regions)
    state["party"]["Blue"]["mauritius"] = 1
    state = play(
        state,
        {"type": "activate", "region": "Japan"},
        {"type": "purge", "party": "Blue"},
        {"type": "rehabilitate", "party": "Blue"},
    )
    with pytest.raises(RuleError, match="opposition"):
        gp.act(state, {"type": "purge", "party": "Red"})
    state = gp.act(state, {"type": "trade", "with": "China", "give": {"economy": 1}, "get": {"economy": 2}})
    japan = state["regions"]["Japan"]
    assert japan["politicians"] == {"Red": 3} and japan["military"] == 0 and japan["diplomacy"] == 0
    assert japan["economy"] == 2 and state["regions"]["China"]["economy"] == 1
    assert state["party"]["Blue"]["mauritius"] == 0
    state = play(state, {"type": "end_turn"}, {"type": "activate", "region": "China"}, {"type": "propaganda", "to": "Japan"})
    assert state["regions"]["Japan"]["politicians"]["Green"] == 1 and state["party"]["Green"]["mauritius"] == 1


def test_recall_only_at_the_right_moments():
    state = game(regions=AFRICA)
    state = gp.act(state, {"type": "recall", "party": "Red", "region": "Africa"})
    assert state["regions"]["Africa"]["politicians"]["Red"] == 1
    with pytest.raises(RuleError, match="start of their party's turn"):
        gp.act(state, {"type": "recall", "party": "Blue", "region": "Africa"})
    state = gp.act(state, {"type": "activate", "region": "India"})
    with pytest.raises(RuleError, match="start of their party's turn"):
        gp.act(state, {"type": "recall", "party": "Red", "region": "Africa"})


def test_turn_order_and_out_of_turn():
    state = game(regions=AFRICA)
    with pytest.raises(RuleError, match="Red's turn"):
        gp.act(state, {"type": "activate", "region": "Africa", "player": "Blue"})
    with pytest.raises(RuleError, match="must play a card"):
        gp.act(state, {"type": "end_turn"})
    state = play(state, {"type": "activate", "region": "Africa"}, {"type": "end_turn"})
    assert state["turn"]["player"] == "Yellow"
    with pytest.raises(RuleError, match="already been activated"):
        gp.act(state, {"type": "activate", "region": "Africa"})
    with pytest.raises(RuleError, match="empty"):
        gp.act(state, {"type": "activate", "region": "Japan"})


# ---------------------------------------------------------------- cards


def test_putsch_card_example():
    regions = {"India": ({"Red": 2, "Blue": 4}, {})}
    state = game(regions=regions, players=("Red", "Blue"))
    state = gp.act(
        state,
        {"type": "play_card", "card": "putsch", "region": "India", "committed": 2, "player_roll": 3,
         "government_committed": {"Blue": 1}, "government_roll": 1},
    )
    assert state["last_card"]["success"] and state["last_card"]["player"] == 7 and state["last_card"]["government"] == 6
    assert state["regions"]["India"]["politicians"] == {"Red": 6}
    assert state["party"]["Red"]["mauritius"] == 2 and state["party"]["Blue"]["mauritius"] == 1
    assert state["party"]["Red"]["hand"] == 4 and state["party"]["Red"]["played"] == 1
    with pytest.raises(RuleError, match="already played"):
        gp.act(state, {"type": "activate", "region": "India"})



def test_putsch_commits_at_least_one_politician_from_home():
    # The putsch card: the player secretly picks one or more politicians from home, who add to
    # the roll and go to Mauritius afterwards. A putsch with nobody picked is no putsch.
    regions = {"India": ({"Red": 3, "Yellow": 2}, {})}
    state = game(regions=regions, players=("Red", "Yellow"), first="Yellow")
    before = copy.deepcopy(state)
    action = {"type": "play_card", "card": "putsch", "region": "India", "committed": 0, "player_roll": 3,
              "government_committed": {}, "government_roll": 1}
    with pytest.raises(RuleError, match="at least one of Yellow's politicians from home") as refused:
        gp.act(state, action)
    assert "committed" not in str(refused.value)
    assert state == before
    assert state["regions"]["India"]["politicians"] == {"Red": 3, "Yellow": 2}
    # one politician is enough: 3 + 1 + 2 = 6 against 1 + 3 = 4
    done = gp.act(state, {**action, "committed": 1})
    assert done["last_card"]["success"] and done["party"]["Yellow"]["mauritius"] == 1

def test_other_cards():
    regions = {"Europe": ({"Red": 2, "Blue": 1}, {"economy": 5}), "Japan": ({"Blue": 3}, {"economy": 1}), "China": ({"Blue": 1}, {"economy": 4})}
    state = game(regions=regions, players=("Red", "Blue"))
    aid = gp.act(state, {"type": "play_card", "card": "development_aid", "from": "Europe", "to": "Japan"})
    assert aid["regions"]["Japan"]["economy"] == 3 and aid["regions"]["Europe"]["economy"] == 3
    hit = gp.act(state, {"type": "play_card", "card": "attentat", "target_party": "Blue", "region": "Japan", "roll": 1})
    assert hit["regions"]["Japan"]["politicians"] == {"Blue": 2} and hit["party"]["Blue"]["removed"] == 1
    fled = gp.act(state, {"type": "play_card", "card": "attentat", "target_party": "Blue", "region": "Japan", "roll": 3})
    assert fled["party"]["Red"]["mauritius"] == 1
    grown = gp.act(state, {"type": "play_card", "card": "expansion", "to": {"Japan": 2}})
    assert grown["regions"]["Japan"]["politicians"]["Red"] == 2
    slump = gp.act(state, {"type": "play_card", "card": "recession", "region": "Europe", "neighbours": ["Japan", "China"]})
    assert [slump["regions"][r]["economy"] for r in ("Europe", "Japan", "China")] == [2, 1, 1]
    with pytest.raises(RuleError, match="neighbours"):
        gp.act(state, {"type": "play_card", "card": "recession", "region": "Europe"})
    riot = gp.act(state, {"type": "play_card", "card": "revolution", "region": "Japan", "neighbours": ["China"], "rolls": {"Japan": 1, "China": 3}})
    assert riot["regions"]["Japan"]["politicians"] == {"Blue": 1} and riot["regions"]["China"]["politicians"] == {"Blue": 1}
    calm = gp.act(state, {"type": "play_card", "card": "peace_initiative"})
    assert calm["peace"]
    calm = play(calm, {"type": "end_turn"}, {"type": "play_card", "card": "warmonger", "use": "cancel_peace"})
    assert not calm["peace"]
    kept = play(state, {"type": "play_card", "card": "warmonger"})
    assert kept["party"]["Red"]["warmonger"] == 1
    with pytest.raises(RuleError, match="card"):
        gp.act(state, {"type": "play_card", "card": "joker"})


def test_warmonger_adds_one_to_the_roll():
    regions = {"Europe": ({"Red": 3}, {"military": 1}), "Russia": ({"Blue": 2}, {"military": 1})}
    state = game(regions=regions, players=("Red", "Blue"))
    state["party"]["Red"]["warmonger"] = 1
    state = play(state, {"type": "activate", "region": "Europe"},
                 {"type": "war", "target": "Russia", "attacker_roll": 2, "defender_roll": 2, "warmonger": ["Red"]})
    assert state["last_war"]["winner"] == "attacker" and state["last_war"]["attack"] == 4
    assert state["party"]["Red"]["warmonger"] == 0


def test_non_aggression_pact():
    regions = {"Europe": ({"Red": 3}, {"military": 1}), "Russia": ({"Blue": 2}, {})}
    state = game(regions=regions, players=("Red", "Blue"))
    state = play(
        state,
        {"type": "play_card", "card": "non_aggression_pact", "region": "Europe", "neighbour": "Russia"},
        {"type": "end_turn"},
        {"type": "activate", "region": "Russia"},
        {"type": "end_turn"},
        {"type": "activate", "region": "Europe"},
    )
    with pytest.raises(RuleError, match="non-aggression"):
        gp.act(state, {"type": "war", "target": "Russia", "attacker_roll": 1, "defender_roll": 1})


# ---------------------------------------------------------------- evaluation and endings


def two_player_round():
    regions = {
        "Europe": ({"Red": 3, "Blue": 1}, {"economy": 4}),
        "Russia": ({"Blue": 2}, {"economy": 3}),
        "China": ({"Red": 1, "Blue": 1}, {}),
    }
    state = game(regions=regions, players=("Red", "Blue"))
    state["party"]["Blue"]["mauritius"] = 1
    return play(
        state,
        {"type": "activate", "region": "Europe"}, {"type": "end_turn"},
        {"type": "activate", "region": "Russia"}, {"type": "end_turn"},
        {"type": "activate", "region": "China"}, {"type": "end_turn"},
    )


def test_evaluation_and_un_step():
    state = two_player_round()
    assert state["phase"] == "evaluation"
    with pytest.raises(RuleError, match="evaluation comes first"):
        gp.act(state, {"type": "activate", "region": "Europe"})
    view = gp.view(state)
    assert {r["name"]: r["vp"] for r in view["players"]} == {"Red": 3 + 2 + 3, "Blue": 1 + 4 + 1 + 1 - 1}
    with pytest.raises(RuleError, match="more VP"):
        gp.act(state, {"type": "evaluate", "un_order": ["Red", "Blue"]})
    state = gp.act(state, {"type": "evaluate", "discard": {"Red": 2}})
    record = state["last_evaluation"]
    assert record["vp"] == {"Red": 8, "Blue": 6} and record["winner"] is None
    # Lowest sends 1 and removes 1 (two players); the next sends 2 and removes none.
    assert record["un_sent"] == {"Blue": 1, "Red": 2}
    assert record["removed"] == {"Blue": 1, "Red": 0}
    assert state["party"]["Blue"]["mauritius"] == 0 and state["party"]["Blue"]["un"] == 1
    assert base(state, "Blue") == 20 - 4 - 1 - 1
    assert state["dominance"] == 12 - 2 - 1
    assert not any(r["done"] for r in state["regions"].values())
    assert state["party"]["Red"]["hand"] == 5 and state["party"]["Red"]["deck"] == 9 and state["party"]["Red"]["played"] == 2
    # Red had the last turn before the evaluation; Blue goes on.
    assert state["turn"]["player"] == "Blue" and state["phase"] == "play"
    assert gp.scores(state)["Red"] == 8 + 2 * 2


def test_the_round_is_the_regions_round_closed_by_the_evaluation():
    # Rounds go by the regions, not by the seating: a played card activates nothing, so the table goes
    # round more than once before every region has acted and the evaluation closes the round.
    regions = {"Europe": ({"Red": 2}, {}), "Russia": ({"Yellow": 2}, {}), "China": ({"Blue": 2}, {})}
    state = game(regions=regions, players=("Red", "Yellow", "Blue"))
    seen = []
    for action in ({"type": "activate", "region": "Europe"}, {"type": "play_card", "card": "peace_initiative"},
                   {"type": "activate", "region": "Russia"}, {"type": "play_card", "card": "warmonger"},
                   {"type": "activate", "region": "China"}):
        turn = gp.view(state)["turn"]
        seen.append((turn["player"], turn["round"], turn["number"]))
        state = play(state, action, {"type": "end_turn"})
    assert seen == [("Red", 1, 1), ("Yellow", 1, 2), ("Blue", 1, 3), ("Red", 1, 4), ("Yellow", 1, 5)]
    # every region has acted: the evaluation is the round's end, still round 1
    assert state["phase"] == "evaluation" and gp.view(state)["turn"]["round"] == 1
    state = gp.act(state, {"type": "evaluate", "un_order": ["Red", "Yellow", "Blue"]})
    # round 2 picks the seating up where the evaluation broke in: Blue, after Yellow
    turn = gp.view(state)["turn"]
    assert (turn["player"], turn["round"], turn["number"]) == ("Blue", 2, 6)
    assert state["evaluations"] == 1


def test_a_game_won_at_the_evaluation_ends_in_its_round():
    state = two_player_round()
    state["party"]["Red"]["un"] = 16
    assert gp.view(state)["turn"]["round"] == 1
    over = gp.act(state, {"type": "evaluate"})
    assert over["winner"] == "Red" and gp.view(over)["turn"]["round"] == 1


def test_evaluation_needs_the_order_of_tied_parties():
    state = copy.deepcopy(two_player_round())
    # Level in Mauritius, China is shared; a poorer Russia leaves both parties on 7.
    state["party"]["Blue"]["mauritius"] = 0
    state["regions"]["Russia"]["economy"] = 2
    assert gp.scores(state) == {"Red": 3 + 2 + 2, "Blue": 1 + 4 + 2 + 2 - 2}
    with pytest.raises(RuleError, match="tied"):
        gp.act(state, {"type": "evaluate"})
    with pytest.raises(RuleError, match="every party"):
        gp.act(state, {"type": "evaluate", "un_order": ["Red"]})
    state = gp.act(state, {"type": "evaluate", "un_order": ["Red", "Blue"]})
    assert state["last_evaluation"]["un_sent"] == {"Red": 1, "Blue": 2}


def test_un_sources_from_regions():
    state = two_player_round()
    state = copy.deepcopy(state)
    # Blue keeps everybody in the regions: the UN envoy and the removal must come from there.
    state["party"]["Blue"]["removed"] = 20 - 4
    with pytest.raises(RuleError, match="un_from"):
        gp.act(state, {"type": "evaluate"})
    state = gp.act(state, {"type": "evaluate", "un_from": {"Blue": {"Russia": 1}}, "remove_from": {"Blue": {"China": 1}}})
    assert state["regions"]["Russia"]["politicians"] == {"Blue": 1}
    assert state["regions"]["China"]["politicians"] == {"Red": 1}


def test_the_view_says_what_the_evaluation_waits_for():
    state = two_player_round()
    assert gp.view(game())["evaluation"] is None
    wait = gp.view(state)["evaluation"]
    assert wait["ends"] is None and wait["tie_for_win"] == [] and wait["tied"] == []
    assert wait["order"] == ["Blue", "Red"] and wait["vp"] == {"Red": 8, "Blue": 6}
    # Blue's politician in Mauritius is back home before the UN step.
    assert wait["home"]["Blue"] == base(state, "Blue") + 1
    assert wait["regions"]["Blue"] == {"Europe": 1, "Russia": 2, "China": 1}
    # Tied on VP: the page is told which parties the dice must order.
    tied = copy.deepcopy(state)
    tied["party"]["Blue"]["mauritius"] = 0
    tied["regions"]["Russia"]["economy"] = 2
    assert gp.view(tied)["evaluation"]["tied"] == [["Red", "Blue"]]
    # Short at home: what the regions hold is what the UN step can take.
    short = copy.deepcopy(state)
    short["party"]["Blue"]["removed"] = 20 - 4
    assert gp.view(short)["evaluation"]["home"]["Blue"] == 0 and gp.view(short)["evaluation"]["available"]["Blue"] == 4
    # A win on a tie: no UN step, the leaders to choose from.
    won = copy.deepcopy(tied)
    won["party"]["Red"]["un"] = won["party"]["Blue"]["un"] = 16
    won["regions"]["China"]["economy"] = 3   # shared: both governing parties get the bonus, 40 each
    wait = gp.view(won)["evaluation"]
    assert wait["ends"] == "vp" and wait["tie_for_win"] == ["Red", "Blue"] and wait["tied"] == []
    with pytest.raises(RuleError, match="winner"):
        gp.act(won, {"type": "evaluate"})
    assert gp.act(won, {"type": "evaluate", "winner": "Blue"})["winner"] == "Blue"


def test_the_view_foresees_an_evaluation_that_leaves_nobody():
    regions = {"Europe": ({"Red": 1}, {}), "Russia": ({"Blue": 1}, {})}
    state = game(regions=regions, players=("Red", "Blue"))
    state["party"]["Red"]["removed"] = state["party"]["Blue"]["removed"] = 18
    state = play(state, {"type": "activate", "region": "Europe"}, {"type": "end_turn"},
                 {"type": "activate", "region": "Russia"}, {"type": "end_turn"})
    wait = gp.view(state)["evaluation"]
    assert wait["ends"] == "no_politicians" and wait["tie_for_win"] == ["Red", "Blue"] and wait["tied"] == [["Red", "Blue"]]
    # Blue, second, sends two to the UN with one at home; Red then removes its last one from Europe.
    step = {"type": "evaluate", "un_order": ["Red", "Blue"], "un_from": {"Blue": {"base": 1, "Russia": 1}},
            "remove_from": {"Red": {"Europe": 1}}}
    with pytest.raises(RuleError, match="winner"):
        gp.act(state, step)
    over = gp.act(state, {**step, "winner": "Red"})
    assert over["phase"] == "over" and over["winner"] == "Red"
    # Not foreseen when a party keeps more than the step takes.
    state["party"]["Red"]["removed"] = 10
    assert gp.view(state)["evaluation"]["ends"] is None


def test_evaluation_victory():
    state = two_player_round()
    state["party"]["Red"]["un"] = 16
    state = gp.act(state, {"type": "evaluate"})
    assert state["winner"] == "Red" and state["phase"] == "over"
    assert "40" in gp.view(state)["message"]


def test_dominance_victory_is_immediate():
    regions = {name: ({"Red": 2}, {}) for name in REGIONS[:9]}
    regions["Africa"] = ({"Blue": 2}, {})
    state = game(regions=regions, players=("Red", "Blue"))
    assert state["dominance"] == 10 and state["phase"] == "play"
    state = play(state, {"type": "activate", "region": "Europe"}, {"type": "migration", "to": "Southeast-Asia"})
    assert state["phase"] == "over" and state["winner"] == "Red"
    assert "10 regions" in state["end_reason"]


def test_un_intervention_extended_rule():
    state = two_player_round()
    state["extended"] = True
    state["regions"]["Russia"]["military"] = 2
    state = gp.act(state, {"type": "evaluate"})
    assert state["un_intervention_open"]
    # 3 UN troops + 2 against 2 chips + 2: one Blue politician goes home, no replacement.
    state = gp.act(state, {"type": "un_intervention", "region": "Russia", "un_roll": 2, "region_roll": 2})
    assert state["regions"]["Russia"]["military"] == 1
    assert state["regions"]["Russia"]["protectorate"]
    assert state["regions"]["Russia"]["politicians"] == {"Blue": 1}
    with pytest.raises(RuleError, match="only right after an evaluation"):
        gp.act(state, {"type": "un_intervention", "region": "Europe", "un_roll": 3, "region_roll": 1})


def test_old_state_untouched_replay_identical_and_json_view():
    actions = [
        {"type": "activate", "region": "Africa"},
        {"type": "budget", "conversion": "grow"},
        {"type": "war", "target": "Orient", "attacker_roll": 3, "defender_roll": 1},
        {"type": "end_turn"},
    ]
    start = game(regions=AFRICA)
    state = start
    for action in actions:
        before = copy.deepcopy(state)
        following = gp.act(state, action)
        assert state == before
        state = following
        view = gp.view(state)
        assert json_safe(view)
        json.dumps(view)
    assert play(start, *actions) == state
    view = gp.view(play(start, {"type": "activate", "region": "Africa"}))
    odds = {o["target"]: o for o in view["war_odds"]}
    assert odds["Orient"]["attacker"] + odds["Orient"]["defender"] + odds["Orient"]["draw"] == pytest.approx(1)
    assert json_safe(gp.view(gp.new({"players": ["A", "B", "C", "D", "E"]})))


def test_corrections():
    state = game(regions=AFRICA)
    with pytest.raises(RuleError, match="only 20"):
        gp.act(state, {"type": "set_party", "party": "Blue", "un": 17})
    with pytest.raises(RuleError, match="economy"):
        gp.act(state, {"type": "set_region", "region": "Japan", "economy": 6})
    with pytest.raises(RuleError, match="add up to 16"):
        gp.act(state, {"type": "set_party", "party": "Blue", "hand": 4})
    state = gp.act(state, {"type": "set_party", "party": "Blue", "un": 2})
    # Strongest in Africa (3) with 3 economy chips (1), and 2 VP per UN politician.
    assert gp.scores(state)["Blue"] == 3 + 1 + 2 * 2


def test_engine_export():
    assert isinstance(gp.ENGINE, Engine)
    assert (gp.ENGINE.name, gp.ENGINE.title) == ("global_powers", "Global Powers")


def test_markers_are_limited_to_the_two_of_each_kind_in_the_box():
    # Material: 2 markers each for sanctions, disarmament and protectorate; adding markers
    # is only possible if available.
    regions = {
        "Europe": ({"Red": 3, "Blue": 1}, {"diplomacy": 5}),
        "India": ({"Blue": 3}, {"diplomacy": 4}),
        "Japan": ({"Blue": 1}, {}),
        "China": ({"Blue": 1}, {}),
    }
    state = play(
        game(regions=regions),
        {"type": "set_region", "region": "Japan", "sanctioned": True, "disarmed": True, "protectorate": True},
        {"type": "set_region", "region": "China", "sanctioned": True, "disarmed": True, "protectorate": True},
    )
    for flag, kind in (("sanctioned", "sanction"), ("disarmed", "disarmament"), ("protectorate", "protectorate")):
        with pytest.raises(RuleError, match=f"no {kind} marker is left: the box has 2 and they lie on China, Japan"):
            gp.act(state, {"type": "set_region", "region": "India", flag: True})
    # a marker already lying on a region is simply left there
    assert gp.act(state, {"type": "set_region", "region": "China", "sanctioned": True})["regions"]["China"]["sanctioned"]
    state = gp.act(state, {"type": "activate", "region": "Europe"})
    before = copy.deepcopy(state)
    for application in ("sanction", "disarmament"):
        with pytest.raises(RuleError, match=f"no {application} marker is left"):
            gp.act(state, {"type": "diplomacy", "application": application, "target": "India", "for": {"Europe": 2}})
    assert state == before
    # once one is lifted, the next application may use it
    state = gp.act(state, {"type": "set_region", "region": "Japan", "sanctioned": False})
    state = gp.act(state, {"type": "diplomacy", "application": "sanction", "target": "India", "for": {"Europe": 2}})
    assert state["regions"]["India"]["sanctioned"]


def cards(p):
    return p["hand"] + p["deck"] + p["played"]


def test_a_kept_warmonger_is_discarded_at_the_evaluation():
    # Warmonger: placed in front of the player for +1 once; after evaluation this card is discarded.
    regions = {
        "Europe": ({"Red": 3, "Blue": 1}, {"economy": 4}),
        "Russia": ({"Blue": 2}, {"economy": 3}),
        "China": ({"Red": 1, "Blue": 1}, {}),
    }
    state = game(regions=regions, players=("Red", "Blue"))
    state = play(state, {"type": "play_card", "card": "warmonger"}, {"type": "end_turn"})
    red = state["party"]["Red"]
    assert red["warmonger"] == 1 and (red["hand"], red["played"]) == (4, 0)
    assert cards(red) + red["warmonger"] == 16
    state = play(
        state,
        {"type": "activate", "region": "Russia"}, {"type": "end_turn"},
        {"type": "activate", "region": "Europe"}, {"type": "end_turn"},
        {"type": "activate", "region": "China"}, {"type": "end_turn"},
    )
    assert state["phase"] == "evaluation"
    state = gp.act(state, {"type": "evaluate"})
    red = state["party"]["Red"]
    assert red["warmonger"] == 0 and red["played"] == 1 and red["hand"] == 5
    assert cards(red) == 16 and cards(state["party"]["Blue"]) == 16
    with pytest.raises(RuleError, match="must add up to 16, not 17"):
        gp.act(state, {"type": "set_party", "party": "Red", "warmonger": 1})
