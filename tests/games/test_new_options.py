"""Every engine's `new` refuses any JSON value for any of its options with a RuleError, never another exception.

Options come from the page's New game (and a loaded game record) and from the config: a mistyped one must
be answered with the engine's message naming the option (409 on the page, exit 2 at start-up), not a
TypeError from deep inside (`{"setup": []}` in Risk met `setup in SETUPS` and answered 500).
"""

from __future__ import annotations

import copy

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from companion.games import balance_duels as bd
from companion.games.base import RuleError
from companion.games.registry import engines
from tests.reliability.fuzzing import engine_vocabulary, json_scalars

pytestmark = pytest.mark.slow   # a long file: handed out to a worker first (tests/conftest.py)

ENGINES = engines(bd.load_model("A"))
RISK_MISSIONS = ["six_cities", "two_regions", "swiss_safe", "danish_naval_base", "sea_line", "rough_terrain",
                 "green_region", "eliminate_neutral"]
# options that start a game, to which the fuzzed ones are added: each opens branches the others skip
BASES = {
    "balance_duels": ({}, {"players": 4, "teams": True}, {"players": 3}),
    "imperial": ({"players": ["Ann", "Ben", "Cy"]}, {"players": 3, "variant": "experienced"}, {"players": 2}),
    "risk": ({"players": ["Ann", "Ben"]}, {"players": ["Ann", "Ben"], "variant": "command_post", "missions": RISK_MISSIONS}),
    "balance_of_power": ({}, {"players": 3, "tracking": "board"}),
    "global_powers": ({}, {"players": ["Ann", "Ben"]}),
}
NAMES = ("Ann", "Ben", "Cy", "Red", "Blue", "Player 1", "russia", "china", "britain", "france", "load0")
# the keys of options' own tables (a player's entry, a deal, city names)
KEYS = ("name", "empire", "colour", "russia", "Ann", "Ben", "Cy", "brown1", "red", "Red", "Blue")


def values(words: tuple[str, ...]) -> st.SearchStrategy:
    """Any JSON value, its strings often the game's own words and names, so that lookups are reached."""
    scalars = st.one_of(json_scalars(), st.sampled_from(words), st.sampled_from(NAMES))
    keys = st.one_of(st.text(max_size=6), st.sampled_from(words), st.sampled_from(KEYS), st.sampled_from(KEYS))
    return st.recursive(scalars, lambda inner: st.one_of(
        st.lists(inner, max_size=8), st.dictionaries(keys, inner, max_size=6),
        # a list of players, each named, with anything for the rest of the entry
        st.lists(st.fixed_dictionaries({"name": st.sampled_from(NAMES)}, optional={"empire": inner, "colour": inner}),
                 min_size=2, max_size=4)), max_leaves=16)


def test_every_engine_lists_its_options():
    for name, engine in ENGINES.items():
        assert "players" in engine.option_keys, name
        with pytest.raises(RuleError, match="unknown"):
            engine.new({"no such option": 1})


@pytest.mark.parametrize("name", sorted(ENGINES))
def test_any_json_value_for_any_option_is_a_rule_error_or_a_game(name):
    engine = ENGINES[name]
    words = tuple(w for w in engine_vocabulary(engine).words if len(w) <= 30)[:400] or ("x",)

    @settings(max_examples=400, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(base=st.sampled_from(BASES[name]),
           fuzzed=st.dictionaries(st.sampled_from(engine.option_keys), values(words), min_size=1, max_size=3))
    def run(base, fuzzed):
        options = {**copy.deepcopy(base), **fuzzed}
        given_options = copy.deepcopy(options)
        try:
            engine.new(options)
        except RuleError as error:
            assert str(error).strip()
        assert options == given_options      # refused or not, the caller's options are left alone

    run()
