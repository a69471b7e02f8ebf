"""Hypothesis strategies and checks shared by the fuzz tests and bench/: game actions and HTTP requests.

Random input is built from each game's own vocabulary (the string constants of its module and
the strings its view shows), so a good share of it gets past the first type check and reaches
the rules proper; the rest is plain noise. Legal moves listed by a view are mutated too.
"""

from __future__ import annotations

import ast
import copy
import importlib
import inspect
import json
import random
import textwrap
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

from hypothesis import strategies as st

from companion.games.base import Engine, RuleError

STARTING_OPTIONS = ({}, {"players": 2}, {"players": 3}, {"players": ["Ann", "Ben", "Cy"]})
FALLBACK_TYPES = {"balance_duels": ("roll", "move", "tip")}
FALLBACK_KEYS = {"balance_duels": {"roll": ("value",), "move": ("move",), "tip": ("seat",)}}
VALUE_HINTS = {"balance_duels": {"value": [1, 2, 3, 4, 5, 6]}}   # the die: documented in the README


# --- JSON-like values

def json_scalars() -> st.SearchStrategy:
    return st.one_of(st.none(), st.booleans(), st.integers(-10, 40), st.integers(), st.floats(allow_nan=False,
                     allow_infinity=False), st.text(max_size=12))


def json_values(max_leaves: int = 12) -> st.SearchStrategy:
    return st.recursive(json_scalars(), lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)), max_leaves=max_leaves)


# --- a game's vocabulary

@dataclass(frozen=True)
class Vocabulary:
    types: tuple[str, ...]
    words: tuple[str, ...]                      # string constants of the game's modules: keys and values
    by_type: Mapping[str, tuple[str, ...]]      # keys to try for each action type (its handler's first)
    own: Mapping[str, tuple[str, ...]] = field(default_factory=dict)   # keys each type's handler reads itself
    hints: Mapping[str, list] = field(default_factory=dict)            # likely values for some keys


def _strings(tree: ast.AST) -> set[str]:
    return {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and 0 < len(n.value) <= 40 and "\n" not in n.value and "{" not in n.value}


def _is_action(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and "action" in node.id


def _str(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _action_keys(tree: ast.AST) -> set[str]:
    """Keys the code reads from an action: field(action, "k"), action["k"], action.get("k"), "k" in action."""
    keys = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and len(n.args) >= 2 and _is_action(n.args[0]) and _str(n.args[1]):
            keys.add(_str(n.args[1]))
        elif isinstance(n, ast.Call) and len(n.args) >= 2 and _is_action(n.args[0]) \
                and isinstance(n.args[1], (ast.Set, ast.List, ast.Tuple)):
            keys.update(k for k in map(_str, n.args[1].elts) if k)        # _only_keys(action, {"a", "b"})
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "get" \
                and _is_action(n.func.value) and n.args and _str(n.args[0]):
            keys.add(_str(n.args[0]))
        elif isinstance(n, ast.Subscript) and _is_action(n.value) and _str(n.slice):
            keys.add(_str(n.slice))
        elif isinstance(n, ast.Compare) and _str(n.left) and any(_is_action(c) for c in n.comparators):
            keys.add(_str(n.left))
    return keys


@lru_cache(maxsize=None)
def vocabulary(engine_name: str, module_name: str) -> Vocabulary:
    module = importlib.import_module(module_name)
    folder = Path(module.__file__).parent
    stem = Path(module.__file__).stem
    words: set[str] = set()
    keys: set[str] = set()
    for path in sorted(folder.glob(f"{stem}*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        words |= _strings(tree)
        keys |= _action_keys(tree)
    types = getattr(module, "ACTION_TYPES", None) or tuple(getattr(module, "_HANDLERS", {})) \
        or FALLBACK_TYPES.get(engine_name, ())
    handlers: dict[str, Any] = {}
    for value in vars(module).values():
        if isinstance(value, dict) and value and all(isinstance(k, str) and callable(v) for k, v in value.items()):
            handlers.update({k: v for k, v in value.items() if k in types})
    by_type = dict(FALLBACK_KEYS.get(engine_name, {}))
    own_keys = dict(FALLBACK_KEYS.get(engine_name, {}))
    for kind, fn in handlers.items():
        own = _function_keys(fn, vars(importlib.import_module(fn.__module__)), depth=2)
        # the handler's own keys twice over, so they are drawn more often than keys read by helpers
        by_type[kind] = tuple(sorted(own)) * 2 + tuple(sorted(keys - {"type"}))
        own_keys[kind] = tuple(sorted(own - {"type"}))
    return Vocabulary(tuple(types), tuple(sorted(words)), by_type, own_keys, VALUE_HINTS.get(engine_name, {}))


def _function_keys(fn: Any, namespace: Mapping[str, Any], depth: int) -> set[str]:
    """Keys a handler reads from its action, also through the helpers it hands the action to."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return set()   # no readable source (a builtin or a lambda): the game-wide keys still apply
    keys = _action_keys(tree)
    if depth > 0:
        for n in ast.walk(tree):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and any(_is_action(a) for a in n.args):
                helper = namespace.get(n.func.id)
                if inspect.isfunction(helper) and helper is not fn:
                    keys |= _function_keys(helper, namespace, depth - 1)
    return keys


def engine_vocabulary(engine: Engine) -> Vocabulary:
    return vocabulary(engine.name, engine.new.__module__)


def starting_options(engine: Engine) -> list[dict]:
    """The simple option sets this engine accepts (every game takes at least one of them)."""
    found = []
    for options in STARTING_OPTIONS:
        try:
            engine.new(copy.deepcopy(options))
        except RuleError:
            continue
        found.append(options)
    if not found:
        raise AssertionError(f"{engine.name}: none of {STARTING_OPTIONS} starts a game")
    return found


def view_strings(view: Any, limit: int = 400) -> list[str]:
    """Strings a view shows (names of players, territories, holders, …): values a valid action may use."""
    seen: list[str] = []
    stack = [view]
    while stack and len(seen) < limit:
        v = stack.pop()
        if isinstance(v, str):
            if len(v) <= 40:
                seen.append(v)
        elif isinstance(v, Mapping):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
    return sorted(set(seen))


def view_values_by_key(view: Any, limit: int = 2000) -> dict[str, list[Any]]:
    """Scalar values the view shows under each key: the likeliest values for an action's key of that name."""
    out: dict[str, set] = {}
    stack = [view]
    n = 0
    while stack and n < limit:
        v = stack.pop()
        n += 1
        if isinstance(v, Mapping):
            for k, x in v.items():
                if isinstance(x, (str, int)) and not isinstance(x, bool) and isinstance(k, str):
                    out.setdefault(k, set()).add(x)
                else:
                    stack.append(x)
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
    return {k: sorted(vals, key=repr) for k, vals in out.items()}


def view_moves(view: Any) -> list[dict]:
    """Legal moves a view lists (Balance Duels: view['moves'][i]['move'])."""
    out = []
    if isinstance(view, Mapping):
        for m in view.get("moves") or []:
            if isinstance(m, Mapping) and isinstance(m.get("move"), Mapping):
                out.append(dict(m["move"]))
    return out


class ActionMaker:
    """Random actions for a game in the state a view shows: mostly plausible, often illegal, sometimes noise.

    Driven by a random.Random (from Hypothesis' st.randoms(), so a failure replays and shrinks)."""

    def __init__(self, vocab: Vocabulary, rng: random.Random):
        self.vocab = vocab
        self.rng = rng
        self.previous: list[dict] = []

    def value(self, shown: list[str], words: tuple[str, ...]) -> Any:
        r = self.rng
        pick = r.randrange(14)
        if pick <= 3:
            return r.randint(-2, 12)
        if pick <= 6 and shown:
            return r.choice(shown)
        if pick == 7 and words:
            return r.choice(words)
        if pick == 8:
            return r.choice([True, False, None, 0.5, -1, 10 ** 12, "", float("inf"), float("nan")])
        if pick == 9:
            return [r.randint(1, 6) for _ in range(r.randrange(5))]
        if pick == 10 and shown:
            return [r.choice(shown) for _ in range(r.randrange(4))]
        if pick == 11 and shown:
            return {r.choice(shown): r.randint(-1, 8) for _ in range(r.randrange(4))}
        if pick == 12:
            return {"nested": {"deeper": [r.randint(0, 3)]}}
        return "".join(r.choice("abcXYZ 0123_-é") for _ in range(r.randrange(8)))

    def make(self, view: Any) -> dict:
        r = self.rng
        shown = view_strings(view)
        moves = view_moves(view)
        roll = r.random()
        if moves and roll < 0.25:
            action = {"type": "move", "move": r.choice(moves)}
        elif moves and roll < 0.45:
            action = self._mutated(r.choice(moves), shown)
        elif self.previous and roll < 0.55:
            action = copy.deepcopy(r.choice(self.previous))          # an old action again, likely out of turn
        elif roll < 0.97 and self.vocab.types:
            kind = r.choice(self.vocab.types)
            keys = self.vocab.by_type.get(kind) or self.vocab.words
            by_key = {**view_values_by_key(view), **self.vocab.hints}
            action = {"type": kind}
            own = self.vocab.own.get(kind, ())
            # often exactly the keys this action's handler reads, with values the view shows under those keys
            chosen = list(own) if own and r.random() < 0.6 else [r.choice(keys) for _ in range(r.randrange(5))]
            for key in chosen:
                if key in by_key and r.random() < 0.6:
                    action[key] = r.choice(by_key[key])
                else:
                    action[key] = self.value(shown, keys)
        else:
            keys = self.vocab.words or ("x",)
            action = {r.choice(keys): self.value(shown, ()) for _ in range(r.randrange(3))}   # no 'type' at all
        self.previous.append(action)
        del self.previous[:-20]
        return action

    def _mutated(self, move: dict, shown: list[str]) -> dict:
        r = self.rng
        m = dict(move)
        keys = sorted(m)
        how = r.randrange(4)
        if how == 0 and keys:
            m[r.choice(keys)] = self.value(shown, self.vocab.words)      # one field takes a random value
        elif how == 1 and keys:
            m.pop(r.choice(keys))                                        # one field is missing
        elif how == 2:
            m[r.choice(self.vocab.words or ("extra",))] = self.value(shown, ())   # an extra field
        else:
            m["roll"] = r.randint(0, 7)                                  # the roll it claims
        return {"type": "move", "move": m}


# --- checking one engine step

@dataclass
class EngineRun:
    """An engine driven by random actions: what was accepted, refused, and what went wrong."""
    engine: Engine
    options: dict
    state: Any = None
    accepted: list[dict] = field(default_factory=list)
    refused: int = 0
    failures: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.state = self.engine.new(copy.deepcopy(self.options))

    def step(self, action: dict) -> None:
        before_repr = repr(self.state)
        before = copy.deepcopy(self.state)
        try:
            new = self.engine.act(self.state, action)
        except RuleError as exc:
            self.refused += 1
            if not str(exc).strip():
                self.failures.append(f"{self.engine.name}: RuleError without a message for {action!r}")
            if repr(self.state) != before_repr or self.state != before:
                self.failures.append(f"{self.engine.name}: a refused action changed the state: {action!r} ({exc})")
            return
        except Exception as exc:  # anything but RuleError is a bug in the engine: recorded with the action
            self.failures.append(f"{self.engine.name}: {type(exc).__name__}: {exc} for {_short(action)}")
            return
        if repr(self.state) != before_repr or self.state != before:
            self.failures.append(f"{self.engine.name}: an accepted action changed the old state in place: "
                                 f"{_short(action)}")
        try:
            text = json.dumps(self.engine.view(new), allow_nan=False)
            json.dumps(self.engine.scores(new), allow_nan=False)
        except Exception as exc:  # the page could not show this state: a bug, recorded
            self.failures.append(f"{self.engine.name}: the state after {_short(action)} cannot be shown: "
                                 f"{type(exc).__name__}: {exc}")
            return
        if not text:
            self.failures.append(f"{self.engine.name}: empty view")
        self.accepted.append(json.loads(json.dumps(action)))
        self.state = new

    def replay_matches(self) -> bool:
        """The host rebuilds a game from its log: the same actions, through JSON, must give the same state."""
        state = self.engine.new(copy.deepcopy(self.options))
        for action in self.accepted:
            state = self.engine.act(state, json.loads(json.dumps(action, sort_keys=True)))
        return repr(state) == repr(self.state)


def _short(action: Any) -> str:
    text = repr(action)
    return text if len(text) <= 200 else text[:200] + "…"

