"""Every rules engine fuzzed with random, mostly illegal, actions (bench/rules_fuzz.py runs many more).

An illegal action is refused with a RuleError that names the rule, and the state is unchanged (repr and
value); anything else raised is a bug (the API would answer 500). An accepted action gives a state the page
can show (strict JSON), leaves the old state alone, and replays to the same state from the log.
"""

import copy

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from companion.games import balance_duels as bd
from companion.games.base import RuleError
from companion.games.registry import engines
from tests.reliability.fuzzing import ActionMaker, EngineRun, engine_vocabulary, json_values, starting_options

pytestmark = pytest.mark.slow   # a long file: handed out to a worker first (tests/conftest.py)

ENGINES = engines(bd.load_model("A"))
# no shrinking: a failure already names the engine, the options and the offending action, and shrinking a
# 25-step game costs far more time than it saves
FUZZ = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow],
                phases=[Phase.explicit, Phase.reuse, Phase.generate])
STEPS = 25


@pytest.mark.parametrize("name", sorted(ENGINES))
def test_random_actions_are_refused_cleanly_or_applied_purely(name):
    engine = ENGINES[name]
    vocab = engine_vocabulary(engine)
    options = starting_options(engine)

    @FUZZ
    @given(rng=st.randoms(use_true_random=False), start=st.sampled_from(options))
    def run(rng, start):
        game = EngineRun(engine, start)
        maker = ActionMaker(vocab, rng)
        for _ in range(STEPS):
            game.step(maker.make(engine.view(game.state)))
        assert game.failures == []
        assert game.replay_matches(), "the accepted actions, replayed from the log, give another state"

    run()


@pytest.mark.parametrize("name", sorted(ENGINES))
def test_random_options_start_a_game_or_are_refused_with_a_message(name):
    engine = ENGINES[name]
    vocab = engine_vocabulary(engine)
    keys = st.sampled_from(("players", "variant", "pawns", "teams", "first", "names", "setup", "colours")
                           + vocab.words[:60])

    @FUZZ
    @given(options=st.dictionaries(keys, st.one_of(json_values(), st.integers(-2, 8)), max_size=4))
    def run(options):
        sent = copy.deepcopy(options)
        try:
            state = engine.new(options)
        except RuleError as exc:
            assert str(exc).strip()
        else:
            engine.view(state)
        assert options == sent, "new() changed the options it was given"

    run()


def test_an_illegal_move_names_the_rule():
    engine = ENGINES["balance_duels"]
    state = engine.act(engine.new({}), {"type": "roll", "value": 3})
    before = repr(state)
    with pytest.raises(RuleError, match="start holder 3"):
        engine.act(state, {"type": "move", "move": {"kind": "place", "seat": 1, "roll": 3, "size": "L",
                                                    "to_holder": "E5"}})
    with pytest.raises(RuleError, match="already shows 3"):
        engine.act(state, {"type": "roll", "value": 5})
    assert repr(state) == before
    fresh = engine.new({})
    with pytest.raises(RuleError, match="1 to 6"):
        engine.act(fresh, {"type": "roll", "value": 7})


def test_an_advance_that_names_no_holder_is_refused():
    """Found by bench/rules_fuzz.py: a legal advance with its 'from_holder' left out raised ValueError (a 500)."""
    engine = ENGINES["balance_duels"]
    state = engine.new({})
    for action in ({"type": "roll", "value": 2},
                   {"type": "move", "move": {"kind": "place", "seat": 1, "roll": 2, "size": "L", "to_holder": "E2"}},
                   {"type": "roll", "value": 4},
                   {"type": "move", "move": {"kind": "place", "seat": 2, "roll": 4, "size": "L", "to_holder": "W4"}},
                   {"type": "roll", "value": 2}):
        state = engine.act(state, action)
    before = repr(state)
    with pytest.raises(RuleError, match="from_holder|holder"):
        engine.act(state, {"type": "move", "move": {"kind": "advance", "seat": 1, "roll": 2, "size": "L",
                                                    "to_holder": "E4"}})
    assert repr(state) == before
