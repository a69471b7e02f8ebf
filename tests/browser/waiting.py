"""page.wait_for_function without eval: the pages' Content-Security-Policy has no 'unsafe-eval', and Playwright's
wait_for_function builds its predicate with new Function() inside the page. page.evaluate goes through the
DevTools protocol, which the page's CSP does not govern, so polling it tests the page as a tablet gets it."""

from __future__ import annotations

import time
from typing import Any

_UNSET = object()


def wait_for_js(page, expression: str, *, arg: Any = _UNSET, timeout: float = 30_000, every_ms: float = 50) -> Any:
    """Poll `expression` (or a function of `arg`) in the page until it is truthy; AssertionError after `timeout` ms."""
    deadline = time.monotonic() + timeout / 1000
    while True:
        value = page.evaluate(expression) if arg is _UNSET else page.evaluate(expression, arg)
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"waited {timeout:.0f} ms for {expression!r}, which stayed {value!r}")
        page.wait_for_timeout(every_ms)
