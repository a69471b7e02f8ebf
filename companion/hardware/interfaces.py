"""One small interface per kind of device. Real drivers and simulated ones both fit these.

Reads take a deadline and raise SensorFault rather than hang or return garbage:
the daemon turns a fault into a visible "unavailable" state and retries.
"""

from __future__ import annotations

from typing import Callable, Protocol, runtime_checkable


class SensorFault(RuntimeError):
    """A device did not answer, or answered nonsense. `device` names it, the message says why."""

    def __init__(self, device: str, reason: str):
        super().__init__(f"{device}: {reason}")
        self.device = device
        self.reason = reason


@runtime_checkable
class LoadCell(Protocol):
    name: str

    def read(self, timeout: float) -> int:
        """One raw ADC sample in counts (signed 24-bit)."""


@runtime_checkable
class Accelerometer(Protocol):
    name: str

    def read(self, timeout: float) -> tuple[float, float, float]:
        """(x, y, z) in g."""


@runtime_checkable
class TiltSwitch(Protocol):
    name: str

    def is_closed(self) -> bool:
        """The raw contact state (closed: the arm touches the board). Bounces; debounce upstream."""


@runtime_checkable
class ButtonPanel(Protocol):
    names: tuple[str, ...]

    def on_press(self, callback: Callable[[str], None]) -> None:
        """callback(button name) on a short press."""

    def on_hold(self, callback: Callable[[str], None]) -> None:
        """callback(button name) on a long press."""

    def failures(self) -> list[tuple[str, str]]:
        """(device name, reason) for each button not working now: a dead pin, a button stuck pressed."""


@runtime_checkable
class Indicators(Protocol):
    def show(self, light: str) -> None:
        """light: "off", "green", "amber" or "red"."""

    def buzz(self, seconds: float) -> None:
        """Sound the buzzer for a while (non-blocking)."""
