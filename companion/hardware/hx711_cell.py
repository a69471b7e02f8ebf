"""A load cell read through an HX711, using the `hx711` package (and so whatever `RPi.GPIO` is importable).

The package has traps that this driver works around:

- it imports `RPi.GPIO` at import time, so it is imported here lazily, on first use
  (on a Pi 5 `RPi.GPIO` comes from `rpi-lgpio`; tests put an emulation on the path);
- `get_raw_data` loops forever while DOUT stays high and drops genuine 0 readings
  (`0 in [False, -1]` is true), so it is never called: the driver waits for DOUT low
  itself against a deadline, then reads one word with the package's `_read`;
- its `_apply_setting` reads and sleeps 0.5 s on every gain change, and its
  `_set_channel_gain` calls the unbounded `get_raw_data` when a clock pulse ran late;
  both are replaced (see `_chip_class`) by bounded versions that ask for a settle;
- it rejects the saturated words 0x7FFFFF / 0x800000 by returning False, the same
  False as for a late clock pulse; whether the 24 data bits were complete tells the two apart;
- the first conversions after power-up or a gain change are garbage: they are discarded.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from companion.foundation.clock import Clock
from companion.hardware.deadline import SampleStats
from companion.hardware.faults import DeviceFault, gpio_fault

log = logging.getLogger(__name__)

SATURATED = (0x7FFFFF, -0x800000)
GLITCHES = (0, -1)
# The datasheet's settling time is 4 conversions after power-up, reset or a gain change.
SETTLE_CONVERSIONS = 4
# PD_SCK high for 60 µs or more powers the chip down (datasheet); the package checks the same bound.
POWER_DOWN_US = 60

_chip_classes: dict[int, type] = {}


def _import_hx711(device: str) -> Any:
    """The hx711 module, imported now; a missing or unusable RPi.GPIO becomes a DeviceFault with the fix."""
    try:
        import hx711  # noqa: PLC0415 - lazy on purpose: it imports RPi.GPIO, which exists only on a Pi
    except ImportError as exc:
        raise DeviceFault(device, f"RPi.GPIO is not installed (the hx711 package needs it: {exc})",
                          "on a Pi 3, 4 or Zero 2 W pip install RPi.GPIO, on a Pi 5 pip install rpi-lgpio, "
                          "into the daemon's venv (make install-pi does this)") from exc
    except RuntimeError as exc:
        # the real RPi.GPIO raises RuntimeError at import on a machine that is not a Pi
        raise DeviceFault(device, f"RPi.GPIO cannot run here ({exc})",
                          "run on a Raspberry Pi, or put an emulation of RPi.GPIO on the path to try the "
                          "driver without one (tests/hardware/emulated)") from exc
    return hx711


def _chip_class(module: Any) -> type:
    """hx711.HX711 with its two unbounded waits replaced; made per module object because it is imported lazily."""
    cls = _chip_classes.get(id(module))
    if cls is not None and cls.__bases__[0] is module.HX711:
        return cls
    gpio = module.GPIO

    class BoundedHX711(module.HX711):
        word_complete = False    # set once the 24 data bits of a word were clocked in
        clock_overrun = False    # a gain/channel pulse ran late: the chip powered down after this word
        settle_needed = True

        def _apply_setting(self):
            # The package reads a word and sleeps 0.5 s here. The driver discards the settling
            # conversions itself instead, within each read's deadline.
            self.settle_needed = True
            return True

        def _set_channel_gain(self, num):
            # Called by _read after the 24 data bits; the pulses choose the next conversion's gain.
            # The package's version reads 6 words with get_raw_data after a late pulse, which never
            # returns if the chip is gone; here a late pulse only marks the chip for a reset.
            self.word_complete = True
            for _ in range(num):
                start = time.perf_counter()
                gpio.output(self._pd_sck, True)
                gpio.output(self._pd_sck, False)
                if time.perf_counter() - start >= POWER_DOWN_US / 1e6:
                    self.clock_overrun = True
            return True

    _chip_classes[id(module)] = BoundedHX711
    return BoundedHX711


class HX711Cell:
    """LoadCell on an HX711 (channel A, gain 128 or 64). Never blocks past a read's timeout by more than one word."""

    def __init__(self, name: str, dout_pin: int, sck_pin: int, gain: int = 128, *, clock: Clock | None = None,
                 settle_conversions: int = SETTLE_CONVERSIONS, poll_s: float = 0.0005):
        if gain not in (128, 64):
            raise ValueError(f"{name}: HX711 gain must be 128 or 64, not {gain}")
        self.name = name
        self.dout_pin = dout_pin
        self.sck_pin = sck_pin
        self.gain = gain
        self.clock = clock or Clock()
        self.settle_conversions = settle_conversions
        self.poll_s = poll_s
        self.stats = SampleStats(self.clock)
        self._module: Any = None
        self._chip: Any = None
        self._lock = threading.Lock()
        self._settle_left = 0
        self._needs_reset = False

    # --- identity, for the page and doctor
    @property
    def pins(self) -> str:
        return f"DOUT GPIO {self.dout_pin}, SCK GPIO {self.sck_pin}"

    def describe(self) -> str:
        return f"HX711 on {self.pins}, gain {self.gain}"

    def health(self) -> dict:
        return self.stats.as_dict()

    # --- opening
    def open(self) -> None:
        """Import the package and claim the pins; DeviceFault with the fix when that is impossible."""
        with self._lock:
            self._open_locked()

    def _open_locked(self) -> None:
        if self._chip is not None:
            return
        module = _import_hx711(self.name)
        try:
            chip = _chip_class(module)(self.dout_pin, self.sck_pin, gain=self.gain, channel="A")
            # DOUT floats when the board is unplugged; a pull-up turns that into "never ready"
            # (a clean timeout) instead of random bits. The HX711 drives DOUT push-pull, so it
            # does not mind the pull-up.
            module.GPIO.setup(self.dout_pin, module.GPIO.IN, pull_up_down=module.GPIO.PUD_UP)
            module.GPIO.output(self.sck_pin, False)
        except Exception as exc:  # RPi.GPIO raises RuntimeError, rpi-lgpio its own lgpio.error: all mean the pins
            raise gpio_fault(self.name, self.pins, exc) from exc
        self._module = module
        self._chip = chip
        # the first word after opening is at the chip's power-up gain (128); with gain 64 the
        # conversions after it need their own settling, hence one more to discard
        self._settle_left = self.settle_conversions + (1 if self.gain != 128 else 0)
        self._needs_reset = False

    def probe(self, timeout: float) -> None:
        """Open and wait until the chip shows a conversion ready (DOUT low): proof that it is there."""
        deadline = self.clock.now() + timeout
        with self._lock:
            self._open_locked()
            if not self._wait_ready(deadline):
                self.stats.timeouts += 1
                raise self._not_ready(timeout)

    # --- reading
    def read(self, timeout: float = 0.5) -> int:
        deadline = self.clock.now() + timeout
        with self._lock:
            self._open_locked()
            bad = {"saturated": 0, "glitch": 0, "overrun": 0}   # unusable words in this read, by kind
            settled_seen = False
            words = 0
            while True:
                if self._needs_reset:
                    # at once, not at the next read: the chip has already powered down and come back
                    # up converting garbage, and this read may go on discarding words
                    self._reset()
                # a chip whose DOUT is stuck low is always "ready": the deadline must end that loop too
                if words and self.clock.now() >= deadline or not self._wait_ready(deadline):
                    raise self._timed_out(timeout, bad, settled_seen)
                words += 1
                value, kind = self._read_word()
                if kind == "overrun":
                    # the chip may have powered down mid-word: the rest of this word is lost
                    self.stats.glitches += 1
                    bad["overrun"] += 1
                    self._needs_reset = True
                    continue
                if kind == "saturated":
                    self.stats.saturations += 1
                    bad["saturated"] += 1
                    continue
                if value in GLITCHES:
                    self.stats.glitches += 1
                    bad["glitch"] += 1
                    continue
                if self._settle_left > 0:
                    self._settle_left -= 1
                    settled_seen = True
                    continue
                self.stats.sample()
                return value

    def _wait_ready(self, deadline: float) -> bool:
        chip = self._chip
        while True:
            if chip._ready():
                return True
            if self.clock.now() >= deadline:
                return False
            self.clock.sleep(self.poll_s)

    def _read_word(self) -> tuple[int | None, str]:
        chip = self._chip
        chip.word_complete = False
        chip.clock_overrun = False
        value = chip._read(max_tries=1)
        if value is False:
            # the package returns False both for a saturated word (after all 24 bits and the
            # gain pulses) and for a data pulse that ran late (before the word was complete)
            return None, "saturated" if chip.word_complete else "overrun"
        if chip.clock_overrun:
            # the word is good, but a late gain pulse powered the chip down: wake and settle it
            self._needs_reset = True
        return value, "ok"

    def _reset(self) -> None:
        """Power-cycle the chip through PD_SCK (the package's power_down/power_up, 20 ms) and settle again."""
        self._chip.power_down()
        self._chip.power_up()
        self._settle_left = self.settle_conversions + (1 if self.gain != 128 else 0)
        self._needs_reset = False
        self.stats.resets += 1

    def _not_ready(self, timeout: float) -> DeviceFault:
        return DeviceFault(self.name, f"HX711 not ready within {timeout:.2f} s (DOUT stays high)",
                           f"check the HX711's VCC (3.3 V) and GND, and that DOUT is on GPIO {self.dout_pin} "
                           f"and SCK on GPIO {self.sck_pin}")

    def _timed_out(self, timeout: float, bad: dict[str, int], settling: bool) -> DeviceFault:
        # name the commonest problem: a stray late pulse among many 0 words is still a stuck DOUT;
        # late pulses count only when they keep coming (one of them just means a settle)
        words = {k: n for k, n in bad.items() if n and (k != "overrun" or n >= 3)}
        last = max(words, key=words.get) if words else None
        settling = settling or bad["overrun"] > 0
        if last == "saturated":
            return DeviceFault(self.name, f"HX711 readings saturated (0x7FFFFF/0x800000) for {timeout:.2f} s",
                               "the load cell is overloaded or its wires (E+, E-, A+, A-) are loose")
        if last == "glitch":
            return DeviceFault(self.name, f"HX711 gave only 0/-1 for {timeout:.2f} s (DOUT stuck low or floating)",
                               f"check the DOUT wire to GPIO {self.dout_pin} and the HX711's power")
        if last == "overrun":
            self._needs_reset = True
            return DeviceFault(self.name, "HX711 clock pulses ran longer than 60 µs, so the chip kept powering down",
                               "the Pi is too busy: stop other heavy programs, or use a NAU7802 (adc = \"nau7802\")")
        if settling:
            # the chip answers; it is still discarding its first conversions after power-up
            return DeviceFault(self.name, "HX711 is settling after power-up", passing=True)
        self.stats.timeouts += 1
        self._needs_reset = True
        return self._not_ready(timeout)

    def close(self) -> None:
        with self._lock:
            chip, module = self._chip, self._module
            self._chip = None
            if chip is None:
                return
            try:
                module.GPIO.cleanup([self.sck_pin, self.dout_pin])
            except Exception as exc:  # releasing pins at shutdown: report, but closing must go on
                log.warning("%s: could not release %s: %s", self.name, self.pins, exc)
