"""gpiozero mock pins the MockFactory does not have."""

from __future__ import annotations

from gpiozero.pins.mock import MockPin


def held_down(factory, pin: int):
    """A mock pin held at GND before anything opens it: a button already pressed at start, or shorted.

    MockPin drives itself high when a pull-up is set, which would let go of the press; this one stays
    low until the test drives it high."""
    class HeldDownPin(MockPin):
        def _set_pull(self, value):
            super()._set_pull(value)
            self.drive_low()

    mock = factory.pin(pin, pin_class=HeldDownPin)
    mock.drive_low()
    return mock
