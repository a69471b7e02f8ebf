"""Devices with no hardware behind them: the page's button panel and indicators that only remember.

The daemon always has them: a table without GPIO buttons still presses them from the page
(`POST /api/buttons/NAME`), and LEDs and buzzer that are not wired still say what they would show.
The simulated table (companion.simulation) and fault injection use them too.
"""

from __future__ import annotations

import logging
import threading
from typing import Callable, Iterable

from companion.foundation.clock import Clock
from companion.hardware.faults import STUCK_BUTTON_S, stuck_button_fault

log = logging.getLogger(__name__)


class VirtualButtonPanel:
    """Buttons pressed by code (the demo, tests, the page's virtual panel), whose physical side can stick.

    `press()` is the page's virtual panel, a path of its own: it works whatever the physical
    buttons do. `stick(name)` holds the physical button down as a stuck GPIO button is: it
    gives its one long press (at once, as there is no poll loop here to wait hold_s), and
    `failures()` lists it once it has been down for stuck_s. `release(name)` lets it go:
    that fires nothing, as a stuck GPIO button's release does not, and the button is back.
    """

    def __init__(self, names: Iterable[str] = ("roll", "next", "confirm", "undo"), *, clock: Clock | None = None,
                 stuck_s: float = STUCK_BUTTON_S):
        if not stuck_s > 0:
            raise ValueError(f"stuck_s must be above 0 s, not {stuck_s!r}")
        self.names = tuple(names)
        self.clock = clock or Clock()
        self.stuck_s = stuck_s
        self._press: list[Callable[[str], None]] = []
        self._hold: list[Callable[[str], None]] = []
        self._lock = threading.Lock()   # fault injection sticks buttons while the page asks for failures()
        self._down_since: dict[str, float] = {}
        self._reported: set[str] = set()

    def on_press(self, callback: Callable[[str], None]) -> None:
        self._press.append(callback)

    def on_hold(self, callback: Callable[[str], None]) -> None:
        self._hold.append(callback)

    def _check(self, name: str) -> None:
        if name not in self.names:
            raise ValueError(f"no button named {name!r} (buttons: {', '.join(self.names)})")

    def press(self, name: str, *, hold: bool = False) -> None:
        self._check(name)
        for cb in self._hold if hold else self._press:
            cb(name)

    def stick(self, name: str) -> None:
        """The physical button goes down and stays down (fault injection)."""
        self._check(name)
        with self._lock:
            if name in self._down_since:
                return          # still the same stuck press: its long press was given already
            self._down_since[name] = self.clock.now()
        for cb in self._hold:
            cb(name)

    def release(self, name: str) -> None:
        """The stuck button comes up again: no press, and it is back."""
        self._check(name)
        with self._lock:
            self._down_since.pop(name, None)
            reported = name in self._reported
            self._reported.discard(name)
        if reported:
            log.info("button %s is back", name)

    def failures(self) -> list[tuple[str, str]]:
        """(device name, reason) for each button stuck down for stuck_s or longer."""
        now = self.clock.now()
        out, new = [], []
        with self._lock:
            for name, since in self._down_since.items():
                if now - since >= self.stuck_s:
                    out.append((f"button {name}", stuck_button_fault(name, now - since).reason))
                    if name not in self._reported:
                        self._reported.add(name)
                        new.append(out[-1])
        for name, reason in new:
            log.warning("%s unavailable: %s", name, reason)
        return out


class VirtualIndicators:
    """LEDs and buzzer that remember what they show."""

    def __init__(self, clock: Clock | None = None):
        self.clock = clock or Clock()
        self.light = "off"
        self.buzz_until = 0.0
        self.buzzes = 0

    def show(self, light: str) -> None:
        if light not in ("off", "green", "amber", "red"):
            raise ValueError(f"unknown light {light!r}")
        self.light = light

    def buzz(self, seconds: float) -> None:
        self.buzzes += 1
        self.buzz_until = self.clock.now() + seconds

    @property
    def buzzing(self) -> bool:
        return self.clock.now() < self.buzz_until
