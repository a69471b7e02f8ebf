"""An emulated RPi.GPIO (the subset the hx711 package and the driver use) with HX711 chips on its pins.

The chip model follows the HX711 datasheet:
- DOUT goes low when a conversion is ready; it stays low until the word is read;
- each PD_SCK rising edge shifts out the next data bit, MSB first, 24 bits in two's complement;
- 1, 2 or 3 further pulses choose the next conversion: 25 = channel A gain 128, 26 = channel B
  gain 32, 27 = channel A gain 64; after the 25th pulse DOUT is high until the next conversion;
- PD_SCK held high (60 µs on the chip; `power_down_s` here) powers the chip down, and taking it low
  again powers it up at channel A gain 128;
- after power-up and after a gain change the first conversions are garbage (settling).

Faults: `present = False` (board unplugged: DOUT floats, pulled high, never ready),
`stuck_low = True` (DOUT shorted low: reads as ready, every bit 0), `never_ready = True`.
"""

from __future__ import annotations

import os
import random
import threading
import time
from collections import deque
from typing import Callable, Iterable

BCM = 11
BOARD = 10
OUT = 0
IN = 1
LOW = 0
HIGH = 1
PUD_OFF = 20
PUD_DOWN = 21
PUD_UP = 22
VERSION = "0.7.1-emulated"
RPI_INFO = {"P1_REVISION": 3, "TYPE": "emulated", "PROCESSOR": "emulated"}

GAIN_BY_PULSES = {25: ("A", 128), 26: ("B", 32), 27: ("A", 64)}
GARBAGE_BASE = 0x0BAD00


class HX711Chip:
    """One emulated HX711 on a DOUT/SCK pin pair."""

    def __init__(self, dout: int, sck: int, values: Iterable[int] | Callable[[], int] = (), *,
                 settle_garbage: int = 4, conversion_s: float = 0.0, power_down_s: float = 0.001):
        self.dout = dout
        self.sck = sck
        if callable(values):
            self._next_value = values
            self._queue: deque[int] = deque()
        else:
            self._next_value = None
            self._queue = deque(values)
        self.settle_garbage = settle_garbage
        self.conversion_s = conversion_s
        # the real chip powers down after 60 µs; an emulation in Python stretches that to 1 ms so
        # that a thread switch between two GPIO calls does not power it down by accident
        self.power_down_s = power_down_s
        self.present = True
        self.stuck_low = False
        self.never_ready = False
        self.powered = True
        self.channel, self.gain = "A", 128
        self.words_read = 0            # complete words (24 bits) shifted out
        self.pulses_per_word: list[int] = []
        self.garbage_sent = 0
        self._lock = threading.RLock()
        self._sck_high_since: float | None = None
        self._in_word = False
        self._word = 0
        self._word_is_data = False
        self._word_value = 0
        self._pulses = 0
        self._bits_read = 0
        self._bit = 1
        self._garbage_left = settle_garbage
        self._ready_at = time.monotonic() + conversion_s

    # --- what a test does to the chip
    def push(self, *values: int) -> None:
        with self._lock:
            self._queue.extend(values)

    def unplug(self) -> None:
        with self._lock:
            self.present = False
            self._in_word = False

    def plug(self) -> None:
        """Connected again: a freshly powered chip that settles first."""
        with self._lock:
            self.present = True
            self._power_up(time.monotonic())

    @property
    def pending(self) -> int:
        return len(self._queue)

    # --- the chip
    def _power_up(self, now: float) -> None:
        if self._in_word and self._word_is_data and self._bits_read < 24:
            # the reader never sampled all 24 bits, so it never got this value (the package gives
            # up on a word when a pulse runs late): it is converted again, so that tests can
            # expect the exact sequence
            self._queue.appendleft(self._word_value)
        self._in_word = False
        self.powered = True
        self.channel, self.gain = "A", 128
        self._garbage_left = self.settle_garbage
        self._ready_at = now + self.conversion_s

    def _conversion(self) -> tuple[int, bool]:
        if self._garbage_left > 0:
            self._garbage_left -= 1
            self.garbage_sent += 1
            return GARBAGE_BASE + self.garbage_sent, False
        if self._queue:
            return self._queue.popleft(), True
        return int(self._next_value()), True

    def _has_conversion(self) -> bool:
        # a chip whose test gave it no more values converts nothing more: DOUT stays high
        return self._garbage_left > 0 or bool(self._queue) or self._next_value is not None

    def _finish_word(self, now: float) -> None:
        channel_gain = GAIN_BY_PULSES.get(self._pulses)
        self.pulses_per_word.append(self._pulses)
        self._in_word = False
        if channel_gain is not None and channel_gain != (self.channel, self.gain):
            self.channel, self.gain = channel_gain
            self._garbage_left = self.settle_garbage
        self._ready_at = now + self.conversion_s

    def _ready(self, now: float) -> bool:
        return self.powered and not self._in_word and now >= self._ready_at and self._has_conversion()

    def dout_level(self) -> int:
        with self._lock:
            now = time.monotonic()
            if not self.present or self.never_ready:
                return HIGH
            if self.stuck_low:
                return LOW
            if self._in_word and self._pulses > 24:
                # the reader is back polling DOUT: the gain/channel pulses for this word are done
                self._finish_word(now)
            if self._in_word:
                # the reader samples DOUT once after each data pulse
                self._bits_read = max(self._bits_read, self._pulses)
                return self._bit
            return LOW if self._ready(now) else HIGH

    def drive_sck(self, level: int) -> None:
        with self._lock:
            now = time.monotonic()
            if level:
                if self._sck_high_since is None:
                    self._sck_high_since = now
                    self._rising(now)
                return
            if self._sck_high_since is None:
                return
            held = now - self._sck_high_since
            self._sck_high_since = None
            if held >= self.power_down_s:
                self.powered = False
                if self.present:
                    self._power_up(now)

    def _rising(self, now: float) -> None:
        if not self.present or not self.powered or self.stuck_low or self.never_ready:
            return
        if self._in_word and self._pulses >= 27:
            self._finish_word(now)
        if not self._in_word:
            if not self._ready(now):
                return
            value, is_data = self._conversion()
            self._word = value & 0xFFFFFF
            self._word_value = value
            self._word_is_data = is_data
            self._in_word = True
            self._pulses = 0
            self._bits_read = 0
        self._pulses += 1
        if self._pulses <= 24:
            self._bit = (self._word >> (24 - self._pulses)) & 1
            if self._pulses == 24:
                self.words_read += 1
        else:
            self._bit = HIGH


# --- module state: the pins and the chips behind them
_lock = threading.Lock()
_mode: int | None = None
_setup: dict[int, tuple[int, int]] = {}
_outputs: dict[int, int] = {}
_chips_by_dout: dict[int, HX711Chip] = {}
_chips_by_sck: dict[int, HX711Chip] = {}
calls: list[tuple] = []


def attach(chip: HX711Chip) -> HX711Chip:
    with _lock:
        _chips_by_dout[chip.dout] = chip
        _chips_by_sck[chip.sck] = chip
    return chip


def reset() -> None:
    global _mode
    with _lock:
        _mode = None
        _setup.clear()
        _outputs.clear()
        _chips_by_dout.clear()
        _chips_by_sck.clear()
        calls.clear()


def _from_environment() -> None:
    """Chips listed in COMPANION_EMULATED_HX711 as DOUT:SCK:mean[:noise], comma separated."""
    spec = os.environ.get("COMPANION_EMULATED_HX711", "").strip()
    for i, item in enumerate(x for x in spec.split(",") if x.strip()):
        parts = item.strip().split(":")
        dout, sck, mean = int(parts[0]), int(parts[1]), float(parts[2])
        noise = float(parts[3]) if len(parts) > 3 else 0.0
        rng = random.Random(1000 + i)
        attach(HX711Chip(dout, sck, lambda m=mean, n=noise, r=rng: round(r.gauss(m, n))))


# --- the RPi.GPIO API
def setwarnings(flag: bool) -> None:
    calls.append(("setwarnings", flag))


def setmode(mode: int) -> None:
    global _mode
    if mode not in (BCM, BOARD):
        raise ValueError("An invalid mode was passed to setmode()")
    if _mode is not None and _mode != mode:
        raise ValueError("A different mode has already been set!")
    _mode = mode


def getmode() -> int | None:
    return _mode


def _channels(channel) -> list[int]:
    return list(channel) if isinstance(channel, (list, tuple)) else [channel]


def setup(channel, direction: int, pull_up_down: int = PUD_OFF, initial: int | None = None) -> None:
    if _mode is None:
        raise RuntimeError("Please set pin numbering mode using GPIO.setmode(GPIO.BOARD) or GPIO.setmode(GPIO.BCM)")
    for ch in _channels(channel):
        if not isinstance(ch, int) or not 0 <= ch <= 27:
            raise ValueError("The channel sent is invalid on a Raspberry Pi")
        _setup[ch] = (direction, pull_up_down)
        if direction == OUT:
            output(ch, initial if initial is not None else LOW)
        calls.append(("setup", ch, direction, pull_up_down))


def input(channel: int) -> int:  # noqa: A001 - the RPi.GPIO name
    if channel not in _setup:
        raise RuntimeError("You must setup() the GPIO channel first")
    chip = _chips_by_dout.get(channel)
    if chip is not None and _setup[channel][0] == IN:
        return chip.dout_level()
    if _setup[channel][0] == OUT:
        return _outputs.get(channel, LOW)
    # nothing connected: the pull resistor decides (a floating pin reads high here)
    return LOW if _setup[channel][1] == PUD_DOWN else HIGH


def output(channel, value) -> None:
    for ch in _channels(channel):
        if _setup.get(ch, (None,))[0] != OUT:
            raise RuntimeError("The GPIO channel has not been set up as an OUTPUT")
        level = HIGH if value else LOW
        _outputs[ch] = level
        chip = _chips_by_sck.get(ch)
        if chip is not None:
            chip.drive_sck(level)


def cleanup(channel=None) -> None:
    targets = list(_setup) if channel is None else _channels(channel)
    for ch in targets:
        _setup.pop(ch, None)
        _outputs.pop(ch, None)
    calls.append(("cleanup", tuple(targets)))


_from_environment()
