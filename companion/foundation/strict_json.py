"""JSON as a browser's JSON.parse reads it: no NaN, no Infinity, in or out.

Python's json module reads `NaN`, `Infinity` and `1e999` (a float too large, so infinite) and
writes them back as the bare words, which are not JSON: one such number stored in an event made
/api/events, /api/record and the stream unreadable to the page for the rest of the game. So what
comes in is refused where it is found, and what goes out is dumped with allow_nan=False (a
non-finite number that got in some other way fails loudly here instead of breaking every page).
"""

from __future__ import annotations

import json
import math
from typing import Any


class NonFinite(ValueError):
    """A non-finite number in a JSON value; `where` names it (`action.x`, `options.setup[2]`)."""

    def __init__(self, where: str, value: float):
        self.where = where
        word = "NaN" if math.isnan(value) else "Infinity" if value > 0 else "-Infinity"
        super().__init__(f"{where or 'the value'} is {word}: a number must be finite (within ±1.8e308)")


def non_finite(value: Any, where: str = "") -> NonFinite | None:
    """The first non-finite number inside value, or None."""
    # iterative: json.loads gives back nesting as deep as the interpreter allows, deeper than recursion here would
    stack = [(where, value)]
    while stack:
        at, v = stack.pop()
        if isinstance(v, float):
            if not math.isfinite(v):
                return NonFinite(at, v)
        elif isinstance(v, dict):
            stack.extend((_key(at, k), x) for k, x in reversed(v.items()))
        elif isinstance(v, (list, tuple)):
            stack.extend((f"{at}[{i}]", x) for i, x in reversed(list(enumerate(v))))
    return None


def _key(at: str, key: Any) -> str:
    name = str(key)
    if not name.isidentifier():
        name = json.dumps(name)
    return f"{at}.{name}" if at else name


def check(value: Any, where: str = "") -> Any:
    """value, if every number in it is finite; else NonFinite naming the first that is not."""
    problem = non_finite(value, where)
    if problem is not None:
        raise problem
    return value


def loads(text: str | bytes, where: str = "") -> Any:
    """json.loads, refusing non-finite numbers (NonFinite); other errors as json.loads raises them."""
    return check(json.loads(text), where)


def unknown_if_not_finite(value: Any) -> Any:
    """value with every non-finite number made None (unknown): for readings, where a NaN means just that."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: unknown_if_not_finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [unknown_if_not_finite(v) for v in value]
    return value


def dumps(value: Any, **kwargs: Any) -> str:
    return json.dumps(value, allow_nan=False, **kwargs)
