"""The tilt switch, the button panel, the LEDs and the buzzer, through gpiozero.

Debouncing is done here against the daemon's monotonic clock, not by gpiozero's
`bounce_time` (which differs between pin libraries and which mock pins ignore), so
it behaves the same on every Pi and can be tested with a fake clock.

Buttons and outputs are opened one by one: a pin that cannot be claimed is reported
and retried with backoff, while the others work; a button held down past stuck_s is
reported as stuck the same way. Buttons are wired from the GPIO to GND and use the
internal pull-up; GPIO 2 and 3 are refused because their fixed 1.8 kΩ I2C pull-ups
(and the I2C bus) sit on them.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

from gpiozero import LED, Buzzer, DigitalInputDevice

from companion.foundation.clock import Clock
from companion.hardware.deadline import Backoff
from companion.hardware.debounce import Debouncer
from companion.hardware.faults import STUCK_BUTTON_S, DeviceFault, gpio_fault, stuck_button_fault

log = logging.getLogger(__name__)

I2C_PINS = (2, 3)
LIGHTS = ("green", "amber", "red")


def _claim(device: str, pin: int, make: Callable[[], Any]) -> Any:
    """make() -> a gpiozero device on `pin`; any failure becomes a DeviceFault with the fix."""
    _check_pin(device, pin)
    try:
        return make()
    except Exception as exc:  # gpiozero and the pin libraries under it raise many types: all mean the pin
        fault = gpio_fault(device, f"GPIO {pin}", exc)
    # Raised outside the except block on purpose: a chained exception would keep its traceback
    # alive, and with it gpiozero's half-built device, whose pin reservation would then make
    # every retry fail with "already in use".
    raise fault


def _check_pin(device: str, pin: int) -> None:
    if pin in I2C_PINS:
        raise DeviceFault(device, f"GPIO {pin} carries I2C (with fixed pull-ups)",
                          "wire it to another GPIO (see hardware/wiring.md) and change the config")


class GpioTiltSwitch:
    """The contact that closes when the arm rests on the board. Raw state: SensorMonitor debounces it."""

    def __init__(self, pin: int, *, active_low: bool = True, name: str = "tilt_switch", pin_factory: Any = None):
        self.name = name
        self.pin = pin
        self.active_low = active_low
        # wired to GND (active_low) it needs the pull-up; wired to 3V3 the pull-down
        self._dev = _claim(name, pin, lambda: DigitalInputDevice(pin, pull_up=active_low, bounce_time=None,
                                                                 pin_factory=pin_factory))

    def describe(self) -> str:
        return f"tilt switch on GPIO {self.pin} ({'to GND' if self.active_low else 'to 3V3'})"

    def is_closed(self) -> bool:
        try:
            return bool(self._dev.value)
        except Exception as exc:  # a closed device or a pin library error: a fault with the reason
            raise gpio_fault(self.name, f"GPIO {self.pin}", exc) from exc

    def close(self) -> None:
        self._dev.close()


@dataclass
class _Button:
    name: str
    pin: int
    debouncer: Debouncer
    device: Any = None
    error: DeviceFault | None = None
    backoff: Backoff = field(default_factory=Backoff)
    pressed_at: float | None = None
    held: bool = False
    stuck: bool = False
    down_at_open: bool = False   # already pressed when the pin was opened: no press of the players'


class GpioButtonPanel:
    """Buttons from GPIO to GND: a short press fires on release, a long press fires once held for hold_s.

    A button still held after stuck_s is stuck: `failures()` lists it with the reason, and
    its release fires nothing (it was no press) and brings it back. The long press it gave
    at hold_s has gone through by then: holding it back until the release would make every
    deliberate undo wait for the player to let go, and would still undo for a box that
    leans on the button for less than stuck_s.

    A button already down when its pin is opened (at start, or when a failed pin comes back) gives
    nothing, not even on release: after a power cut, a box resting on the undo button must not take
    back the last move of the restored game. Past stuck_s it is listed as stuck like any other.

    A poll thread samples the pins every poll_s; `poll()` does one round (tests call it
    with a fake clock). Callbacks run on the poll thread, one at a time.
    """

    def __init__(self, buttons: Mapping[str, int], *, pin_factory: Any = None, clock: Clock | None = None,
                 debounce_s: float = 0.03, hold_s: float = 1.0, stuck_s: float = STUCK_BUTTON_S,
                 poll_s: float = 0.01, start: bool = True):
        if not 0 < hold_s < stuck_s:
            # a stuck_s at or below hold_s would call every long press stuck and no undo could be given
            raise ValueError(f"stuck_s ({stuck_s:g} s) must be longer than hold_s ({hold_s:g} s), both above 0")
        self.names = tuple(buttons)
        self.clock = clock or Clock()
        self.pin_factory = pin_factory
        self.debounce_s = debounce_s
        self.hold_s = hold_s
        self.stuck_s = stuck_s
        self.poll_s = poll_s
        self._press: list[Callable[[str], None]] = []
        self._hold: list[Callable[[str], None]] = []
        self._lock = threading.Lock()
        self._buttons = [_Button(n, p, Debouncer(debounce_s)) for n, p in buttons.items()]
        now = self.clock.now()
        for b in self._buttons:
            self._open(b, now)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        if start:
            self.start()

    def describe(self) -> str:
        return ", ".join(f"{b.name} on GPIO {b.pin}" for b in self._buttons)

    # --- ButtonPanel
    def on_press(self, callback: Callable[[str], None]) -> None:
        self._press.append(callback)

    def on_hold(self, callback: Callable[[str], None]) -> None:
        self._hold.append(callback)

    def press(self, name: str, *, hold: bool = False) -> None:
        """A press that did not come from a pin (the page's virtual panel): same callbacks."""
        if name not in self.names:
            raise ValueError(f"no button named {name!r} (buttons: {', '.join(self.names)})")
        self._fire([(name, "hold" if hold else "press")])

    def failures(self) -> list[tuple[str, str]]:
        """(device name, reason) for each button whose pin is not working now or that is stuck pressed."""
        now = self.clock.now()
        with self._lock:
            out = []
            for b in self._buttons:
                if b.error is not None:
                    out.append((f"button {b.name}", b.error.reason))
                elif b.stuck and b.pressed_at is not None:
                    out.append((f"button {b.name}", self._stuck_reason(b, now - b.pressed_at)))
            return out

    def down_since_open(self) -> list[str]:
        """The buttons pressed when their pin was opened and not let go since (they give nothing)."""
        with self._lock:
            return [b.name for b in self._buttons if b.down_at_open]

    # --- opening
    def _open(self, b: _Button, now: float) -> None:
        device = f"button {b.name}"
        try:
            b.device = _claim(device, b.pin, lambda: DigitalInputDevice(b.pin, pull_up=True, bounce_time=None,
                                                                        pin_factory=self.pin_factory))
        except DeviceFault as fault:
            if b.error is None or b.error.reason != fault.reason:
                log.warning("%s unavailable: %s", device, fault.reason)
            b.error = fault
            b.backoff.failed(now)
            return
        if b.error is not None:
            log.info("%s is back", device)
        b.error = None
        b.backoff.succeeded()
        try:
            down = bool(b.device.value)
        except Exception:  # the first poll reads it again and reports the fault
            down = False
        b.debouncer = Debouncer(self.debounce_s, initial=down)
        b.pressed_at, b.held, b.stuck, b.down_at_open = (now if down else None), False, False, down
        if down:
            log.warning("%s is pressed already; it counts once it has been let go", device)

    # --- sampling
    def poll(self) -> None:
        now = self.clock.now()
        events: list[tuple[str, str]] = []
        with self._lock:
            for b in self._buttons:
                if b.device is None:
                    if b.backoff.ready(now):
                        self._open(b, now)
                    continue
                try:
                    raw = bool(b.device.value)
                except Exception as exc:  # the pin went away: report it, retry opening later
                    fault = gpio_fault(f"button {b.name}", f"GPIO {b.pin}", exc)
                    log.warning("button %s unavailable: %s", b.name, fault.reason)
                    self._drop(b, fault, now)
                    continue
                events.extend(self._step(b, raw, now))
        self._fire(events)

    def _drop(self, b: _Button, fault: DeviceFault, now: float) -> None:
        device, b.device = b.device, None
        b.error = fault
        b.backoff.failed(now)
        b.pressed_at, b.held, b.stuck, b.down_at_open = None, False, False, False
        try:
            device.close()
        except Exception as exc:  # closing a failed pin: report, the retry opens a fresh one
            log.warning("button %s: closing GPIO %d: %s", b.name, b.pin, exc)

    def _step(self, b: _Button, raw: bool, now: float) -> list[tuple[str, str]]:
        before = b.debouncer.value
        pressed = b.debouncer.update(raw, now)
        if pressed and not before:
            b.pressed_at, b.held, b.stuck, b.down_at_open = now, False, False, False
        elif pressed and b.pressed_at is not None and not b.stuck and now - b.pressed_at >= self.stuck_s:
            b.stuck = True
            log.warning("button %s unavailable: %s", b.name, self._stuck_reason(b, now - b.pressed_at))
        elif (pressed and not b.held and not b.down_at_open and b.pressed_at is not None
              and now - b.pressed_at >= self.hold_s):
            b.held = True
            return [(b.name, "hold")]
        elif not pressed and before:
            # a short press counts on release, so that a long press is never also a short one
            was_held, was_stuck, was_down = b.held, b.stuck, b.down_at_open
            b.pressed_at, b.held, b.stuck, b.down_at_open = None, False, False, False
            if was_stuck:
                log.info("button %s is back", b.name)
            elif was_down:
                log.info("button %s let go: it was pressed before it was opened, so it gives nothing", b.name)
            elif not was_held:
                return [(b.name, "press")]
        return []

    @staticmethod
    def _stuck_reason(b: _Button, held_s: float) -> str:
        # a poll thread stalled past stuck_s never fired the hold: the reason must not claim an undo then
        return stuck_button_fault(b.name, held_s, long_press_given=b.held).reason

    def _fire(self, events: Iterable[tuple[str, str]]) -> None:
        for name, kind in events:
            for cb in list(self._hold if kind == "hold" else self._press):
                try:
                    cb(name)
                except Exception:  # a failing reaction must not stop the buttons; logged with its traceback
                    log.exception("button %s: %s callback failed", name, kind)

    # --- the thread
    def start(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="buttons", daemon=True)
        self._thread.start()

    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.poll()
            except Exception:  # keep polling the other buttons; the error is logged with its traceback
                log.exception("button poll failed")
            self._stop.wait(self.poll_s)

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        with self._lock:
            for b in self._buttons:
                if b.device is not None:
                    b.device.close()
                    b.device = None


class GpioIndicators:
    """Green, amber and red LEDs and a buzzer (each optional). Outputs that fail are retried on later calls."""

    def __init__(self, pins: Mapping[str, int], *, pin_factory: Any = None, clock: Clock | None = None):
        unknown = sorted(set(pins) - set(LIGHTS) - {"buzzer"})
        if unknown:
            raise ValueError(f"unknown indicator {unknown[0]!r} (known: {', '.join(LIGHTS)}, buzzer)")
        self.pins = dict(pins)
        self.pin_factory = pin_factory
        self.clock = clock or Clock()
        self.light = "off"
        self.buzz_until = 0.0
        self._devices: dict[str, Any] = {}
        self._errors: dict[str, DeviceFault] = {}
        self._backoff: dict[str, Backoff] = {k: Backoff() for k in self.pins}
        self._lock = threading.Lock()
        now = self.clock.now()
        for key in self.pins:
            self._open(key, now)

    def describe(self) -> str:
        return ", ".join(f"{k} on GPIO {p}" for k, p in self.pins.items())

    def failures(self) -> list[tuple[str, str]]:
        with self._lock:
            return [(f"indicator {k}", e.reason) for k, e in self._errors.items()]

    def _open(self, key: str, now: float) -> None:
        device, pin = f"indicator {key}", self.pins[key]
        cls = Buzzer if key == "buzzer" else LED
        try:
            self._devices[key] = _claim(device, pin, lambda: cls(pin, pin_factory=self.pin_factory))
        except DeviceFault as fault:
            if key not in self._errors or self._errors[key].reason != fault.reason:
                log.warning("%s unavailable: %s", device, fault.reason)
            self._errors[key] = fault
            self._backoff[key].failed(now)
            return
        if self._errors.pop(key, None) is not None:
            log.info("%s is back", device)
        self._backoff[key].succeeded()

    def _output(self, key: str) -> Any:
        """The gpiozero device for an output, reopening a failed one when its backoff allows."""
        if key not in self.pins:
            return None
        if key not in self._devices and self._backoff[key].ready(self.clock.now()):
            self._open(key, self.clock.now())
        return self._devices.get(key)

    def _drive(self, key: str, action: Callable[[Any], None]) -> None:
        dev = self._output(key)
        if dev is None:
            return
        try:
            action(dev)
        except Exception as exc:  # the pin failed under us: report it and reopen it later
            fault = gpio_fault(f"indicator {key}", f"GPIO {self.pins[key]}", exc)
            log.warning("indicator %s unavailable: %s", key, fault.reason)
            self._errors[key] = fault
            self._backoff[key].failed(self.clock.now())
            self._devices.pop(key, None)

    def show(self, light: str) -> None:
        if light not in ("off",) + LIGHTS:
            raise ValueError(f"unknown light {light!r}")
        with self._lock:
            self.light = light
            for key in LIGHTS:
                self._drive(key, (lambda d: d.on()) if key == light else (lambda d: d.off()))

    def buzz(self, seconds: float) -> None:
        with self._lock:
            self.buzz_until = self.clock.now() + seconds
            # gpiozero times the beep on its own background thread, so this returns at once
            self._drive("buzzer", lambda d: d.beep(on_time=seconds, off_time=0, n=1, background=True))

    @property
    def buzzing(self) -> bool:
        return self.clock.now() < self.buzz_until

    def close(self) -> None:
        with self._lock:
            for dev in self._devices.values():
                dev.close()
            self._devices.clear()
