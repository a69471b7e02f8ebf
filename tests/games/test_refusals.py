"""Refusals in the players' words: no key of an action or an option reaches the page (companion/games/refusals.py).

The engines name what they refuse by its key ('attacker_dice'); the host rewrites every refusal with the game's
glossary before the page or the buttons show it. Checked three ways: the issue's examples; every key the
engines' messages quote is in the glossary (read from their source, so a new message cannot slip by); and the
refusals themselves, collected by walking every engine through many states with bad values for each key each
action reads, hold no known key once worded.
"""

from __future__ import annotations

import ast
import copy
import random
import re
from pathlib import Path

import pytest

from companion.games import balance_duels as bd
from companion.games.base import RuleError
from companion.games.refusals import COMMON, GLOSSARY, glossary, in_words
from companion.games.registry import engines
from tests.reliability.fuzzing import ActionMaker, engine_vocabulary, starting_options, view_values_by_key

pytestmark = pytest.mark.slow   # a long file: handed out to a worker first (tests/conftest.py)

ENGINES = engines(bd.load_model("A"))
GAMES = Path(__file__).resolve().parents[2] / "companion" / "games"
QUOTED = re.compile(r"'([a-z][a-z0-9_]*)(?:\.[^'\s]*)?'")
SNAKE = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")
# quoted words in the engines' messages that are values the players may type or see, not keys
VALUES = {"standard", "experienced", "neutral", "army", "fleet", "base", "rearrange", "has", "shown", "win", "wins",
          "investor", "keep", "none"}
MESSAGE_CALLS = {"require", "RuleError", "fail", "MapFileError", "ValueError"}
WHO = {"player", "party", "defender", "owner", "target_player", "winner", "first", "capital"}
BAD_VALUES = (None, 0, -1, 99, "", "nowhere", [], [0], {}, {"x": 1}, True, 2.5)


def test_the_issues_examples_read_as_the_page_names_things():
    assert in_words("'attacker_dice': roll 1 to 3 dice, not 0", "risk") == "Attacker's dice: roll 1 to 3 dice, not 0"
    assert in_words("line 4: 'defenders' cannot exceed 40", "risk") == "line 4: Defending armies cannot exceed 40"
    assert in_words("option 'deal.Ann': with 3 players the cards go in groups", "imperial") == \
        "Ann's flag cards: with 3 players the cards go in groups"
    assert in_words("roll the die first (house rule pass_needs_roll)", "balance_duels") == \
        "roll the die first (house rule roll before passing)"
    # a quoted value is the players' own word and stays
    assert in_words("'players': 'neutral' is the third army, not a player", "risk") == \
        "The players: 'neutral' is the third army, not a player"


def _message_strings(path: Path) -> list[str]:
    """The literal text of every message the module raises: the string parts of require/RuleError/fail calls."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for call in ast.walk(tree):
        if not isinstance(call, ast.Call):
            continue
        name = call.func.id if isinstance(call.func, ast.Name) else getattr(call.func, "attr", None)
        if name not in MESSAGE_CALLS:
            continue
        for arg in call.args:
            for node in ast.walk(arg):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    found.append(node.value)
    return found


def _modules(game: str) -> list[Path]:
    stem = ENGINES[game].new.__module__.rsplit(".", 1)[1]
    return sorted(GAMES.glob(f"{stem}*.py")) + [GAMES / "base.py"]


@pytest.mark.parametrize("game", sorted(ENGINES))
def test_every_key_the_engines_messages_quote_has_words(game):
    words = glossary(game)
    missing = set()
    for path in _modules(game):
        for text in _message_strings(path):
            for key in QUOTED.findall(text):
                if key not in words and key not in VALUES:
                    missing.add(f"{path.name}: '{key}' in {text!r}")
    assert not missing, "keys without players' words (add them to refusals.GLOSSARY):\n" + "\n".join(sorted(missing))


def test_the_map_forms_keys_have_words():
    missing = {key for text in _message_strings(GAMES / "mapdata.py") for key in QUOTED.findall(text)
               if key not in GLOSSARY["map"] and key not in COMMON}
    assert not missing


def _keys(game: str) -> set[str]:
    engine = ENGINES[game]
    vocab = engine_vocabulary(engine)
    keys = set(engine.option_keys) | set(glossary(game)) - {"value", "type"}
    for own in vocab.own.values():
        keys |= set(own)
    return keys


def _states(game: str, seed: int, walks: int = 6, steps: int = 60) -> list:
    """States the engine reaches from its starting options by random, mostly refused, actions (seeded)."""
    engine = ENGINES[game]
    vocab = engine_vocabulary(engine)
    rng = random.Random(seed)
    states = []
    for w in range(walks):
        options = starting_options(engine)[w % len(starting_options(engine))]
        state = engine.new(copy.deepcopy(options))
        states.append(state)
        maker = ActionMaker(vocab, rng)
        for _ in range(steps):
            try:
                state = engine.act(state, maker.make(engine.view(state)))
            except RuleError:
                continue
            states.append(state)
    return states


# a few steps into each game, so that the walk also meets the refusals of a battle, a factory, a region's actions
SCRIPTS = {
    "balance_duels": ({"players": 2}, [{"type": "roll", "value": 3}]),
    "imperial": ({"players": ["Ann", "Ben", "Cy"]},
                 [{"type": "rondel", "nation": n, "target": "taxation"}
                  for n in ("russia", "china", "india", "brazil", "united_states", "europe")]
                 + [{"type": "rondel", "nation": "russia", "target": "factory"}]),
    "risk": ({"players": ["Ann", "Ben"]},
             [{"type": "set_counts", "player": "Ann", "territories": 10, "cities": 2}, {"type": "reinforce"},
              {"type": "attack", "attackers": 3, "defenders": 2, "defender": "Ben"}]),
    "balance_of_power": ({"players": 3}, []),
    "global_powers": ({"players": ["Ann", "Ben", "Cy"]},
                      [{"type": "set_region", "region": "Europe", "politicians": {"Ann": 3, "Ben": 1}},
                       {"type": "start", "first": "Ann"}, {"type": "activate", "region": "Europe"}]),
}


def _scripted(game: str) -> list:
    engine = ENGINES[game]
    options, actions = SCRIPTS[game]
    states = [engine.new(copy.deepcopy(options))]
    for action in actions:
        states.append(engine.act(states[-1], action))
    return states


def _plausible(key: str, view) -> object:
    """A value the view shows under this key, or a player's name for a key naming one; else None (left out)."""
    shown = view_values_by_key(view).get(key)
    if shown:
        return shown[0]
    if key in WHO:
        players = [p["name"] for p in view.get("players", []) if isinstance(p, dict) and "name" in p]
        return players[-1] if players else None
    return None


def _refusals(game: str) -> dict[str, dict]:
    """Every refusal met: bad values for each key each action type reads, in every state reached; and bad options."""
    engine = ENGINES[game]
    vocab = engine_vocabulary(engine)
    found: dict[str, dict] = {}

    def attempt(fn, *args):
        try:
            fn(*args)
        except RuleError as exc:
            found.setdefault(str(exc), args[-1])

    states = _states(game, seed=36)
    for state in _scripted(game) + states[:: max(1, len(states) // 30)]:
        view = engine.view(state)
        for kind in vocab.types:
            own = vocab.own.get(kind, ())
            attempt(engine.act, state, {"type": kind})
            base = {k: v for k, v in ((k, _plausible(k, view)) for k in own) if v is not None}
            attempt(engine.act, state, {"type": kind, **base})
            for key in own:
                for bad in BAD_VALUES:
                    attempt(engine.act, state, {"type": kind, key: bad})
                    attempt(engine.act, state, {"type": kind, **base, key: bad})
    for key in engine.option_keys:
        for bad in BAD_VALUES:
            attempt(engine.new, {key: bad})
            for options in starting_options(engine):
                attempt(engine.new, {**options, key: bad})
    return found


@pytest.mark.parametrize("game", sorted(ENGINES))
def test_no_refusal_names_a_key_once_in_the_players_words(game):
    keys = _keys(game)
    refusals = _refusals(game)
    assert len(refusals) > 30, f"the walk met only {len(refusals)} refusals"
    named = []
    for message, what in refusals.items():
        worded = in_words(message, game)
        quoted = [k for k in QUOTED.findall(worded) if k in keys]
        bare = [k for k in SNAKE.findall(worded) if k in keys]
        if quoted or bare:
            named.append(f"{worded!r} (from {message!r}, for {what!r})")
    assert not named, f"{len(named)} refusals still name keys:\n" + "\n".join(named[:20])
    # and the raw messages did name keys: the walk reached what the glossary is for
    assert any(QUOTED.search(m) for m in refusals)
