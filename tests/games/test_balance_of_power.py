"""Balance of Power (1815) tracker: the rulebook's examples, scoring, the action budget and the engine contract."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from companion.games import balance_of_power as bop
from companion.games.base import Engine, RuleError
from tests.games.helpers import json_safe

CAPITALS = {"france": "Paris", "prussia": "Berlin", "austria": "Vienna", "russia": "St Petersburg", "ottoman": "Constantinople"}
PLAYERS = [
    {"name": "Brian", "empire": "great_britain", "colour": "red"},
    {"name": "Fran", "empire": "france", "colour": "blue"},
    {"name": "Gerd", "empire": "prussia", "colour": "black"},
]


def play(state, *actions):
    for action in actions:
        state = bop.act(state, action)
    return state


def place(pawn, territory):
    return {"type": "place", "pawn": pawn, "territory": territory}


def example_board(**options):
    """The position of the rulebook's first example, after the set-up."""
    state = bop.new({"players": PLAYERS, "tracking": "board", "capitals": CAPITALS, **options})
    return play(
        state,
        # Brittany is on the printed map but not in the rulebook's text: the table adds it once.
        {"type": "add_territory", "territory": "Brittany", "empire": "france"},
        # Brian (England): the General in Cornwall; the other two where the text does not look.
        place("general", "Cornwall"), place("king", "Midlands"), place("banker", "Midlands"),
        # Fran (France): the General in Normandy.
        place("general", "Normandy"), place("king", "Normandy"), place("banker", "Brittany"),
        # Gerd (Prussia): King in The Netherlands, Banker in Westphalia, General in Brunswick.
        place("king", "The Netherlands"), place("banker", "Westphalia"), place("general", "Brunswick"),
    )


def counts_game(players=2, **options):
    empires = ["great_britain", "france", "prussia", "austria", "russia", "ottoman"]
    names = ["Ann", "Bob", "Cat", "Dan", "Eve", "Fay"]
    entries = [{"name": names[i], "empire": empires[i]} for i in range(players)]
    return bop.new({"players": entries, **options})


# ---------------------------------------------------------------- pure rules


def test_points_to_win_table():
    assert [bop.points_to_win(n) for n in range(2, 7)] == [30, 27, 24, 21, 18]
    for bad in (1, 7, "3", True):
        with pytest.raises(ValueError):
            bop.points_to_win(bad)


def test_elimination_chart():
    assert bop.beats("general", "king")
    assert bop.beats("king", "banker")
    assert bop.beats("banker", "general")
    assert not bop.beats("king", "general")
    assert not bop.beats("general", "banker")
    assert not bop.beats("banker", "king")
    for cls in bop.CLASSES:
        # Kings do not eliminate each other, and so on.
        assert not bop.beats(cls, cls)
    assert bop.beats("General", "KING")
    with pytest.raises(ValueError):
        bop.beats("queen", "king")


def test_score_examples():
    # A capital with all three classes is worth its point plus three.
    assert bop.score(1, 1) == 4
    assert bop.score(10, 2) == 16
    assert bop.score(0, 0) == 0
    for args in ((-1, 0), (2, 3), (8, 7), (1.5, 0), (True, 0)):
        with pytest.raises(ValueError):
            bop.score(*args)


@given(territories=st.integers(0, 80), capitals=st.integers(0, 6))
def test_score_property(territories, capitals):
    capitals = min(capitals, territories)
    total = bop.score(territories, capitals)
    assert total == territories + 3 * capitals
    assert total >= territories


# ---------------------------------------------------------------- set-up and board scoring


def test_setup_places_capitals_and_checks_the_second_set():
    state = bop.new({"players": PLAYERS, "tracking": "board", "capitals": CAPITALS})
    assert state["board"]["London"] == [["Brian", "king"], ["Brian", "general"], ["Brian", "banker"]]
    assert state["phase"] == "setup"
    with pytest.raises(RuleError, match="outside the capital"):
        bop.act(state, place("king", "London"))
    with pytest.raises(RuleError, match="Kingdom of France"):
        bop.act(state, place("king", "Paris"))
    with pytest.raises(RuleError, match="Brian's turn"):
        bop.act(state, {"type": "place", "player": "Fran", "pawn": "king", "territory": "Normandy"})
    state = bop.act(state, place("king", "Cornwall"))
    with pytest.raises(RuleError, match="second King"):
        bop.act(state, place("king", "Midlands"))
    with pytest.raises(RuleError, match="set-up"):
        bop.act(state, {"type": "end_turn"})


def test_a_bare_player_count_seats_the_first_empires():
    state = bop.new({"players": 3})
    assert state["order"] == ["Kingdom of Great Britain", "Kingdom of France", "Kingdom of Prussia"]
    assert bop.view(bop.new({}))["points_to_win"] == 30


def test_board_needs_every_capital():
    with pytest.raises(RuleError, match="capitals"):
        bop.new({"players": PLAYERS, "tracking": "board"})


def test_example_position_scores():
    state = example_board()
    v = bop.view(state)
    rows = {r["name"]: r for r in v["players"]}
    # London full (1 + 3), Cornwall and Midlands held alone.
    assert rows["Brian"]["score"] == 3 + 3
    assert rows["Brian"]["held"] == ["Cornwall", "London", "Midlands"]
    assert rows["Fran"]["score"] == 3 + 3
    assert rows["Gerd"]["score"] == 4 + 3
    assert v["points_to_win"] == 27
    assert v["turn"]["player"] == "Brian"
    assert bop.scores(state) == {"Brian": 6, "Fran": 6, "Gerd": 7}


def test_example_one_three_actions():
    state = example_board()
    state = play(
        state,
        {"type": "duplicate", "pawn": "general", "territory": "Cornwall"},
        # Kings do not eliminate each other: a plain move into The Netherlands.
        {"type": "move", "pawn": "king", "from": "London", "to": "The Netherlands"},
        {"type": "move", "pawn": "banker", "from": "London", "to": "Denmark"},
    )
    assert state["board"]["Cornwall"] == [["Brian", "general"], ["Brian", "general"]]
    assert state["board"]["The Netherlands"] == [["Gerd", "king"], ["Brian", "king"]]
    assert bop.view(state)["turn"]["actions_left"] == {"king": False, "general": False, "banker": False, "bonus": False, "bonus_earned": False}
    assert "end the turn" in bop.view(state)["message"]
    with pytest.raises(RuleError, match="used up"):
        bop.act(state, {"type": "move", "pawn": "general", "from": "London", "to": "Midlands"})
    # London lost its full set: 1 point left there, Denmark gained, the shared Netherlands counts for nobody.
    assert bop.scores(state)["Brian"] == 1 + 1 + 1 + 1
    state = bop.act(state, {"type": "end_turn"})
    assert state["turn"]["player"] == "Fran"


def test_example_two_bonus_action():
    state = example_board()
    state = bop.act(state, {"type": "declare_empire", "player": "Brian", "empire": "great_britain", "achieved": True})
    assert bop.view(state)["turn"]["actions_left"]["bonus"]
    state = play(
        state,
        {"type": "attack", "pawn": "general", "from": "London", "to": "The Netherlands", "target_player": "Gerd", "target_pawn": "king"},
        {"type": "move", "pawn": "king", "from": "London", "to": "The Netherlands"},
        # The fourth action goes to the King: on into Westphalia to eliminate the Banker.
        {"type": "attack", "pawn": "king", "from": "The Netherlands", "to": "Westphalia", "target_player": "Gerd", "target_pawn": "banker"},
    )
    assert state["board"]["Westphalia"] == [["Brian", "king"]]
    assert state["board"]["The Netherlands"] == [["Brian", "general"]]
    assert bop.view(state)["players"][2]["pawns"] == {"king": 1, "general": 2, "banker": 1}
    with pytest.raises(RuleError, match="bonus action are both used up"):
        bop.act(state, {"type": "move", "pawn": "king", "from": "Westphalia", "to": "Hanover"})
    with pytest.raises(RuleError, match="start of the turn"):
        bop.act(state, {"type": "declare_empire", "player": "Brian", "empire": "great_britain", "achieved": False})


def test_attack_rules():
    state = example_board()
    with pytest.raises(RuleError, match="eliminates only a Banker"):
        bop.act(state, {"type": "attack", "pawn": "king", "from": "London", "to": "The Netherlands", "target_player": "Gerd", "target_pawn": "king"})
    with pytest.raises(RuleError, match="no Banker in The Netherlands"):
        bop.act(state, {"type": "attack", "pawn": "king", "from": "London", "to": "The Netherlands", "target_player": "Gerd", "target_pawn": "banker"})
    with pytest.raises(RuleError, match="own pawns"):
        bop.act(state, {"type": "attack", "pawn": "king", "from": "London", "to": "Midlands", "target_player": "Brian", "target_pawn": "banker"})
    with pytest.raises(RuleError, match="does not border"):
        bop.act(state, {"type": "move", "pawn": "king", "from": "London", "to": "Paris"})


def test_three_pawn_limit_and_attack_into_a_full_territory():
    state = example_board()
    state = play(state, {"type": "move", "pawn": "general", "from": "Cornwall", "to": "Normandy"})
    # Normandy now holds three pawns: no more moves in, but an attack still enters.
    assert len(state["board"]["Normandy"]) == 3
    with pytest.raises(RuleError, match="already holds 3"):
        bop.act(state, {"type": "duplicate", "pawn": "general", "territory": "Normandy"})
    state = bop.act(state, {"type": "end_turn"})
    state = bop.act(state, {"type": "attack", "pawn": "banker", "from": "Paris", "to": "Normandy", "target_player": "Brian", "target_pawn": "general"})
    assert sorted(map(tuple, state["board"]["Normandy"])) == [("Fran", "banker"), ("Fran", "general"), ("Fran", "king")]
    with pytest.raises(RuleError, match="already holds 3"):
        bop.act(state, {"type": "move", "pawn": "king", "from": "Paris", "to": "Normandy"})


def test_attack_in_place_keeps_the_pawn_there():
    state = example_board()
    state["board"]["The Netherlands"] = [["Gerd", "banker"], ["Brian", "king"]]
    state = play(
        state,
        {"type": "declare_empire", "player": "Brian", "empire": "great_britain", "achieved": True},
        {"type": "attack", "pawn": "king", "from": "The Netherlands", "target_player": "Gerd", "target_pawn": "banker"},
    )
    assert state["board"]["The Netherlands"] == [["Brian", "king"]]
    with pytest.raises(RuleError, match="attacked without moving"):
        bop.act(state, {"type": "move", "pawn": "king", "from": "The Netherlands", "to": "Hanover"})
    # Another King standing beside it is free to go.
    state["board"]["The Netherlands"].append(["Brian", "king"])
    state = bop.act(state, {"type": "move", "pawn": "king", "from": "The Netherlands", "to": "Hanover"})
    assert state["board"]["Hanover"] == [["Brian", "king"]]


def test_out_of_turn_and_validation():
    state = example_board()
    with pytest.raises(RuleError, match="Brian's turn"):
        bop.act(state, {"type": "end_turn", "player": "Gerd"})
    with pytest.raises(RuleError, match="pawn"):
        bop.act(state, {"type": "move", "pawn": "queen", "from": "London", "to": "Cornwall"})
    with pytest.raises(RuleError, match="from"):
        bop.act(state, {"type": "move", "pawn": "king", "to": "Cornwall"})
    with pytest.raises(RuleError, match="unknown action"):
        bop.act(state, {"type": "teleport"})
    with pytest.raises(RuleError, match="board tracking"):
        bop.act(state, {"type": "set_counts", "player": "Brian", "territories": 3})


@pytest.mark.parametrize(
    "options, key",
    [
        ({"players": 7}, "players"),
        ({"players": "four"}, "players"),
        ({"players": [{"name": "A", "empire": "france"}]}, "players"),
        ({"players": [{"name": "A", "empire": "france"}, {"name": "B", "empire": "france"}]}, "players"),
        ({"players": [{"name": "A", "empire": "spain"}, {"name": "B", "empire": "france"}]}, "players"),
        ({"players": [{"name": "A", "empire": "russia"}, {"name": "A", "empire": "france"}]}, "players"),
        ({"players": PLAYERS, "tracking": "pen"}, "tracking"),
        ({"players": PLAYERS, "first": "Zed"}, "first"),
        ({"players": PLAYERS, "respawn": "yes"}, "respawn"),
        ({"players": PLAYERS, "capitals": {"spain": "Madrid"}}, "capitals"),
        ({"players": PLAYERS, "score_track": True}, "score_track"),
    ],
)
def test_new_names_the_bad_option(options, key):
    with pytest.raises(RuleError, match=key):
        bop.new(options)


def test_old_state_untouched_and_replay_identical():
    actions = [
        {"type": "duplicate", "pawn": "general", "territory": "Cornwall"},
        {"type": "move", "pawn": "king", "from": "London", "to": "The Netherlands"},
        {"type": "end_turn"},
    ]
    state = example_board()
    start = copy.deepcopy(state)
    for action in actions:
        before = copy.deepcopy(state)
        following = bop.act(state, action)
        assert state == before
        state = following
    assert play(start, *actions) == state


# ---------------------------------------------------------------- counts mode, endings, variants


def test_counts_mode_wins_on_points_during_the_turn():
    state = counts_game()
    assert state["phase"] == "play"
    assert bop.view(state)["players"][0]["pawns"] == {"king": 2, "general": 2, "banker": 2}
    state = bop.act(state, {"type": "set_counts", "player": "Ann", "territories": 26, "full_capitals": 1})
    assert not state["over"]
    state = bop.act(state, {"type": "set_counts", "player": "Ann", "territories": 27, "full_capitals": 1})
    assert state["over"] and state["winner"] == "Ann"
    assert "30 points" in bop.view(state)["message"]


def test_counts_mode_rejects_impossible_counts():
    state = counts_game()
    with pytest.raises(RuleError, match="full capital"):
        bop.act(state, {"type": "set_counts", "player": "Ann", "territories": 1, "full_capitals": 2})
    with pytest.raises(RuleError, match="territories"):
        bop.act(state, {"type": "set_counts", "player": "Ann", "territories": -3})


def test_counts_mode_tracks_eliminations_and_extinct_classes():
    state = counts_game()
    state = bop.act(state, {"type": "set_counts", "player": "Bob", "pawns": {"king": 1}})
    state = bop.act(state, {"type": "attack", "pawn": "general", "target_player": "Bob", "target_pawn": "king"})
    bob = bop.view(state)["players"][1]
    assert bob["pawns"]["king"] == 0 and bob["gone"] == ["king"] and bob["pool"]["king"] == 15
    state = bop.act(state, {"type": "end_turn"})
    with pytest.raises(RuleError, match="no King left"):
        bop.act(state, {"type": "duplicate", "pawn": "king"})
    with pytest.raises(RuleError, match="re-spawn variant"):
        bop.act(state, {"type": "respawn", "pawn": "king"})


def test_respawn_variant():
    state = counts_game(respawn=True)
    state = play(
        state,
        {"type": "set_counts", "player": "Bob", "pawns": {"king": 1}},
        {"type": "attack", "pawn": "general", "target_player": "Bob", "target_pawn": "king"},
        {"type": "end_turn"},
        {"type": "respawn", "pawn": "king"},
    )
    assert state["counts"]["Bob"]["pawns"]["king"] == 1
    with pytest.raises(RuleError, match="still has a King"):
        bop.act(state, {"type": "respawn", "pawn": "king"})


def test_respawn_on_the_board_goes_to_the_capital():
    state = example_board(respawn=True)
    # Every Prussian General is gone.
    state["board"]["Brunswick"] = [["Gerd", "banker"]]
    state["board"]["Berlin"] = [["Gerd", "king"], ["Gerd", "banker"]]
    state["turn"]["player"] = "Gerd"
    state["wiped"]["Gerd"] = {"general": "now"}
    with pytest.raises(RuleError, match="appears there"):
        bop.act(state, {"type": "respawn", "pawn": "general", "territory": "Brunswick"})
    state = bop.act(state, {"type": "respawn", "pawn": "general", "territory": "Berlin"})
    assert state["board"]["Berlin"].count(["Gerd", "general"]) == 1


def test_duplicate_with_empty_pool_ends_the_game():
    state = counts_game()
    state = play(
        state,
        {"type": "set_counts", "player": "Ann", "territories": 10, "full_capitals": 1, "pawns": {"general": 15}},
        {"type": "set_counts", "player": "Bob", "territories": 13, "full_capitals": 0},
        {"type": "duplicate", "pawn": "general"},
    )
    assert state["over"] and state["winner"] == "Ann"
    assert "pool" in state["end_reason"]


def test_ties_go_to_pawns_then_draw():
    state = counts_game()
    state = play(
        state,
        {"type": "set_counts", "player": "Ann", "territories": 10, "full_capitals": 0, "pawns": {"general": 15}},
        {"type": "set_counts", "player": "Bob", "territories": 10, "full_capitals": 0, "pawns": {"general": 15}},
    )
    more = bop.act(bop.act(state, {"type": "set_counts", "player": "Bob", "pawns": {"king": 5}}), {"type": "duplicate", "pawn": "general"})
    assert more["winner"] == "Bob"
    drawn = bop.act(state, {"type": "duplicate", "pawn": "general"})
    assert drawn["over"] and drawn["winner"] is None
    assert "draw" in bop.view(drawn)["message"]


def test_total_domination():
    state = counts_game(total_domination=True)
    assert bop.view(state)["points_to_win"] is None
    state = play(
        state,
        {"type": "set_counts", "player": "Ann", "territories": 40, "full_capitals": 2},
        {"type": "set_counts", "player": "Bob", "pawns": {"king": 1, "general": 0, "banker": 0}},
    )
    assert not state["over"]
    state = bop.act(state, {"type": "attack", "pawn": "general", "target_player": "Bob", "target_pawn": "king"})
    assert state["over"] and state["winner"] == "Ann"


def test_players_without_pawns_are_skipped():
    state = counts_game(players=3)
    state = play(
        state,
        {"type": "set_counts", "player": "Bob", "pawns": {"king": 1, "general": 0, "banker": 0}},
        {"type": "attack", "pawn": "general", "target_player": "Bob", "target_pawn": "king"},
        {"type": "end_turn"},
    )
    assert state["turn"]["player"] == "Cat"


def test_tougher_neutral_empires():
    def with_full_berlin(state):
        state = copy.deepcopy(state)
        state["board"]["Berlin"] = [["Brian", "king"], ["Brian", "general"], ["Brian", "banker"]]
        return state

    two = [PLAYERS[0], PLAYERS[1]]
    plain = bop.new({"players": two, "tracking": "board", "capitals": CAPITALS})
    tough = bop.new({"players": two, "tracking": "board", "capitals": CAPITALS, "tougher_neutral": True})
    # London full (4) + Berlin full (4), or Berlin worth 1 until Prussia is achieved.
    assert bop.scores(with_full_berlin(plain))["Brian"] == 8
    assert bop.scores(with_full_berlin(tough))["Brian"] == 5
    achieved = bop.act(with_full_berlin(tough), {"type": "declare_empire", "player": "Brian", "empire": "prussia", "achieved": True})
    assert bop.scores(achieved)["Brian"] == 8


def test_the_view_says_what_stops_a_neutral_empire():
    two = [PLAYERS[0], PLAYERS[1]]
    tough = bop.new({"players": two, "tracking": "board", "capitals": CAPITALS, "tougher_neutral": True})
    assert bop.view(tough)["neutral_empires"] == ["prussia", "austria", "russia", "ottoman"]
    prussia = lambda state: next(n for n in bop.view(state)["players"][0]["neutral"] if n["empire"] == "prussia")
    assert prussia(tough) == {"empire": "prussia", "title": "Kingdom of Prussia", "capital": "Berlin", "declared": False,
                              "achieved": False, "judged_by_board": False, "blocked": []}
    tough["board"]["Berlin"] = [["Fran", "king"]]
    assert prussia(tough)["blocked"] == [{"territory": "Berlin", "why": "enemy"}]
    declared = bop.act(tough, {"type": "declare_empire", "player": "Brian", "empire": "prussia", "achieved": True})
    assert prussia(declared)["declared"] and not prussia(declared)["achieved"]
    declared["board"]["Berlin"] = [["Brian", "king"]]
    assert prussia(declared)["achieved"] and prussia(declared)["blocked"] == []
    # Without the variant, or with counts tracking, there is nothing to declare for a neutral empire.
    assert bop.view(bop.new({"players": two, "tracking": "board", "capitals": CAPITALS}))["players"][0]["neutral"] == []
    assert bop.view(counts_game(tougher_neutral=True))["players"][0]["neutral"] == []


def test_the_table_settles_how_it_reads_achieving_empire():
    state = example_board()
    state = bop.act(state, {"type": "declare_empire", "player": "Brian", "empire": "great_britain", "achieved": True})
    assert state["turn"]["bonus"] and bop.view(state)["players"][0]["empire_blocked"] == []
    held = bop.act(state, {"type": "set_empire_rule", "empire_rule": "held"})
    # Malta, England's, is empty: no fourth action under the stricter reading, and the view says why.
    assert held["empire_rule"] == "held" and not held["turn"]["bonus"]
    assert {"territory": "Malta", "why": "empty"} in bop.view(held)["players"][0]["empire_blocked"]
    assert bop.act(held, {"type": "set_empire_rule", "empire_rule": "no_enemy"})["turn"]["bonus"]
    # Once an action is spent the turn keeps its bonus; the new reading counts from the next turn.
    moved = bop.act(state, {"type": "move", "pawn": "general", "from": "Cornwall", "to": "Midlands"})
    assert bop.act(moved, {"type": "set_empire_rule", "empire_rule": "held"})["turn"]["bonus"]
    with pytest.raises(RuleError, match="'empire_rule'"):
        bop.act(state, {"type": "set_empire_rule", "empire_rule": "most"})
    with pytest.raises(RuleError, match="counts tracking"):
        bop.act(counts_game(), {"type": "set_empire_rule", "empire_rule": "held"})


def test_view_is_json_safe():
    for state in (bop.new({"players": PLAYERS, "tracking": "board", "capitals": CAPITALS}), example_board(), counts_game(6)):
        v = bop.view(state)
        assert json_safe(v)
        json.dumps(v)
        assert v["message"]
    v = bop.view(example_board())
    assert v["chart"][0] == {"pawn": "king", "beats": "banker", "label": "King beats Banker"}


def test_engine_export():
    assert isinstance(bop.ENGINE, Engine)
    assert (bop.ENGINE.name, bop.ENGINE.title) == ("balance_of_power", "Balance of Power (1815)")


# ---------------------------------------------------------------- the board decides


def test_achieving_empire_is_judged_from_the_board_at_the_start_of_each_turn():
    # Achieving Empire: no enemy pawns in any territory of the player's empire at the start of the turn.
    state = example_board()
    state = bop.act(state, {"type": "declare_empire", "player": "Brian", "empire": "great_britain", "achieved": True})
    assert bop.view(state)["turn"]["actions_left"]["bonus"]
    # Brian's turn passes; France walks a General into Cornwall, England's own territory.
    state = play(state, {"type": "end_turn"}, {"type": "move", "pawn": "general", "from": "Normandy", "to": "Cornwall"},
                 {"type": "end_turn"}, {"type": "end_turn"})
    assert state["turn"]["player"] == "Brian"
    assert not bop.view(state)["turn"]["actions_left"]["bonus_earned"]
    # A declaration cannot override what the board shows.
    state = bop.act(state, {"type": "declare_empire", "player": "Brian", "empire": "great_britain", "achieved": True})
    assert not state["turn"]["bonus"]
    # Once the French General has gone home, the next turn brings the fourth action back.
    state = play(state, {"type": "end_turn"}, {"type": "move", "pawn": "general", "from": "Cornwall", "to": "Normandy"},
                 {"type": "end_turn"}, {"type": "end_turn"})
    assert state["turn"]["player"] == "Brian" and state["turn"]["bonus"]


def test_the_held_reading_of_achieving_empire_wants_a_pawn_in_every_territory():
    state = example_board(empire_rule="held")
    state = bop.act(state, {"type": "declare_empire", "player": "Brian", "empire": "great_britain", "achieved": True})
    # Malta, England's by the Set-Up, is empty.
    assert not state["turn"]["bonus"]
    with pytest.raises(RuleError, match="'empire_rule'"):
        bop.new({"players": PLAYERS, "empire_rule": "most"})


def test_an_empty_pool_ends_the_game_only_for_an_action_still_open():
    state = counts_game()
    state = play(
        state,
        {"type": "set_counts", "player": "Ann", "territories": 10, "full_capitals": 1, "pawns": {"general": 15}},
        {"type": "move", "pawn": "general"},
    )
    # The General action is spent: asking to duplicate one is just refused, the game goes on.
    with pytest.raises(RuleError, match="General action is used up"):
        bop.act(state, {"type": "duplicate", "pawn": "general"})
    assert not state["over"]


def test_malta_is_english_at_the_set_up():
    # Set-Up: Constantinople counts as adjacent to England, as Malta is directly connected to Turkey.
    state = bop.new({"players": PLAYERS, "tracking": "board", "capitals": CAPITALS})
    state = play(state, place("general", "Cornwall"), place("king", "Malta"), place("banker", "Midlands"))
    assert state["board"]["Malta"] == [["Brian", "king"]]
    with pytest.raises(RuleError, match="Malta belongs to Kingdom of Great Britain"):
        bop.act(state, place("general", "Malta"))


def test_a_misspelt_territory_is_refused_with_the_nearest_names():
    state = example_board()
    before = copy.deepcopy(state)
    with pytest.raises(RuleError, match="'Normandie' is not a territory on the map; did you mean Normandy"):
        bop.act(state, {"type": "move", "pawn": "general", "from": "Cornwall", "to": "Normandie"})
    assert state == before and bop.scores(state) == bop.scores(before)
    with pytest.raises(RuleError, match="Brittany is already on the map"):
        bop.act(state, {"type": "add_territory", "territory": "brittany"})
    with pytest.raises(RuleError, match="'empire'"):
        bop.act(state, {"type": "add_territory", "territory": "Scotland", "empire": "scotland"})
    state = bop.act(state, {"type": "add_territory", "territory": "Scotland", "empire": "great_britain"})
    assert "Scotland" in bop.view(state)["known_territories"]


def test_respawn_only_in_the_next_turn_and_nearest_the_capital():
    # Re-spawn: in the player's next turn after the class is wiped out, in the capital, else
    # in the territory holding one of the player's pawns closest to it.
    state = example_board(respawn=True)
    state["board"]["London"] = [["Brian", "general"], ["Brian", "banker"]]
    state["board"]["Denmark"] = [["Brian", "king"]]
    state["board"]["Midlands"] = [["Brian", "banker"]]
    state["board"]["Hanover"] = [["Gerd", "general"]]
    state["board"]["Mecklenburg"] = [["Brian", "general"]]
    state = play(state, {"type": "end_turn"}, {"type": "end_turn"})
    # Gerd's General takes Brian's last King, in Denmark; Brian still holds London, his capital.
    state = bop.act(state, {"type": "attack", "pawn": "general", "from": "Hanover", "to": "Denmark", "target_player": "Brian", "target_pawn": "king"})
    assert state["wiped"]["Brian"] == {"king": "next"}
    with pytest.raises(RuleError, match="still has a pawn in London"):
        play(state, {"type": "end_turn"}, {"type": "respawn", "pawn": "king", "territory": "Midlands"})
    later = play(state, {"type": "end_turn"}, {"type": "end_turn"}, {"type": "end_turn"}, {"type": "end_turn"})
    with pytest.raises(RuleError, match="only in Brian's next turn"):
        bop.act(later, {"type": "respawn", "pawn": "king", "territory": "London"})
    # Without a pawn in London, the nearest territory with one: Midlands (1 border) before Mecklenburg (2).
    state["board"].pop("London")
    state = bop.act(state, {"type": "end_turn"})
    with pytest.raises(RuleError, match="Midlands is closer to London than Mecklenburg"):
        bop.act(state, {"type": "respawn", "pawn": "king", "territory": "Mecklenburg"})
    state = bop.act(state, {"type": "respawn", "pawn": "king", "territory": "Midlands"})
    assert ["Brian", "king"] in state["board"]["Midlands"] and state["wiped"]["Brian"] == {}


def test_players_who_name_no_colour_get_one_of_their_own():
    from companion.games import balance_of_power as bop

    state = bop.new({"players": [{"name": "Ann", "empire": "france", "colour": "blue"},
                                 {"name": "Bob", "empire": "prussia"}, {"name": "Cy", "empire": "russia"}]})
    colours = [p["colour"] for p in bop.view(state)["players"]]
    assert colours[0] == "blue" and len(set(colours)) == 3 and "" not in colours
    with pytest.raises(bop.RuleError, match="chosen twice"):
        bop.new({"players": [{"name": "Ann", "empire": "france", "colour": "red"},
                             {"name": "Bob", "empire": "prussia", "colour": "red"}]})


def test_the_round_counts_the_table_going_round_not_every_turn():
    state = counts_game(3, first="Bob")
    turns = []
    for _ in range(4):
        turns.append((bop.view(state)["turn"]["player"], bop.view(state)["turn"]["round"], bop.view(state)["turn"]["number"]))
        state = bop.act(state, {"type": "end_turn"})
    # Bob starts, the seating goes on clockwise, and Bob's second turn opens round 2
    assert turns == [("Bob", 1, 1), ("Cat", 1, 2), ("Ann", 1, 3), ("Bob", 2, 4)]
    # a player with no pawn left is passed over; the round still turns at the first player
    state = bop.act(state, {"type": "set_counts", "player": "Ann", "pawns": {"king": 0, "general": 0, "banker": 0}})
    assert bop.view(state)["turn"]["player"] == "Cat"
    state = bop.act(state, {"type": "end_turn"})
    assert (bop.view(state)["turn"]["player"], bop.view(state)["turn"]["round"]) == ("Bob", 3)
