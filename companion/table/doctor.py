"""`companion doctor`: check the config and every configured device on this Pi, with a fix for each fault.

It opens each device the way the daemon does (the same drivers and openers), shows
what it found — load-cell counts and their noise, the accelerometer's id and angle,
the tilt switch's state, each button as it is pressed, the lights and the buzzer —
and ends non-zero when anything is wrong. Stop the service first (sudo systemctl stop
companion): a pin or bus can be used by one program at a time.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from companion.foundation.clock import Clock
from companion.config import Config, ConfigError, load
from companion.table.device_factory import accelerometer_opener, load_cell_opener, tilt_opener
from companion.hardware.faults import DeviceFault
from companion.hardware.gpio_devices import GpioButtonPanel, GpioIndicators
from companion.hardware.interfaces import SensorFault

DEFAULT_CONFIG = Path("/etc/companion/companion.toml")
EXIT_OK, EXIT_FAULT, EXIT_CONFIG = 0, 1, 2
OPEN_TIMEOUT_S = 1.0
READ_TIMEOUT_S = 0.5
# a load cell whose noise is above this many grams cannot tell a pawn (6-10 g) from its neighbour
NOISE_WARN_G = 0.5


@dataclass
class Problem:
    device: str
    problem: str
    fix: str | None


class Doctor:
    def __init__(self, out: TextIO | None = None, *, pin_factory: Any = None, smbus_factory: Any = None,
                 clock: Clock | None = None):
        self.out = out or sys.stdout
        self.pin_factory = pin_factory
        self.smbus_factory = smbus_factory
        self.clock = clock or Clock()
        self.problems: list[Problem] = []
        self.warnings = 0
        self._print_lock = threading.Lock()
        encoding = getattr(self.out, "encoding", None) or "utf-8"
        try:
            "✓✗".encode(encoding)
            self.ok_mark, self.bad_mark = "✓", "✗"
        except (UnicodeEncodeError, LookupError):
            # a terminal without UTF-8 (LANG=C over SSH) still gets readable marks
            self.ok_mark, self.bad_mark = "OK", "FAIL"

    # --- output
    def say(self, text: str = "") -> None:
        with self._print_lock:
            print(text, file=self.out, flush=True)

    def ok(self, text: str = "ok") -> None:
        self.say(f"  {self.ok_mark} {text}")

    def warn(self, text: str, fix: str | None = None) -> None:
        self.warnings += 1
        self.say(f"  ! {text}")
        if fix:
            self.say(f"    fix: {fix}")

    def fail(self, device: str, problem: str, fix: str | None = None) -> None:
        self.problems.append(Problem(device, problem, fix))
        self.say(f"  {self.bad_mark} {problem}")
        if fix:
            self.say(f"    fix: {fix}")

    def fault(self, device: str, exc: SensorFault) -> None:
        if isinstance(exc, DeviceFault):
            self.fail(device, exc.problem, exc.fix)
        else:
            self.fail(device, exc.reason)

    # --- the whole check
    def run(self, path: Path | None, *, seconds: float = 3.0, button_seconds: float = 15.0,
            skip_buttons: bool = False) -> int:
        self.say(f"Table Companion doctor — {path if path is not None else 'built-in defaults'}")
        self.say()
        try:
            cfg = load(path)
        except ConfigError as exc:
            self.say(f"{self.bad_mark} config: {exc}")
            self.say("  fix: edit that key (firmware_config/companion.toml has every key, commented)")
            return EXIT_CONFIG
        if not self.check_config(cfg):
            return EXIT_CONFIG
        for cell in cfg.load_cells:
            self.check_load_cell(cell, seconds)
        if cfg.accelerometer is not None:
            self.check_accelerometer(dict(cfg.accelerometer), seconds)
        if cfg.tilt_switch is not None:
            self.check_tilt(dict(cfg.tilt_switch))
        if cfg.buttons:
            if skip_buttons:
                self.say("buttons — skipped (--skip-buttons)")
            else:
                self.check_buttons(dict(cfg.buttons), button_seconds)
        if cfg.indicators:
            self.check_indicators(dict(cfg.indicators), seconds)
        self.say()
        if self.problems:
            names = ", ".join(dict.fromkeys(p.device for p in self.problems))
            self.say(f"{self.bad_mark} {len(self.problems)} problem{'s' if len(self.problems) != 1 else ''}: {names}")
            return EXIT_FAULT
        extra = f" ({self.warnings} warning{'s' if self.warnings != 1 else ''})" if self.warnings else ""
        self.say(f"{self.ok_mark} all configured devices answer{extra}")
        return EXIT_OK

    # --- config: what config.load cannot see from one key alone
    def check_config(self, cfg: Config) -> bool:
        parts = []
        if cfg.load_cells:
            parts.append(f"{len(cfg.load_cells)} load cell{'s' if len(cfg.load_cells) != 1 else ''}")
        if cfg.accelerometer is not None:
            parts.append(f"accelerometer ({cfg.accelerometer['chip']})")
        if cfg.tilt_switch is not None:
            parts.append("tilt switch")
        if cfg.buttons:
            parts.append(f"{len(cfg.buttons)} button{'s' if len(cfg.buttons) != 1 else ''}")
        if cfg.indicators:
            parts.append(f"{len(cfg.indicators)} indicator output{'s' if len(cfg.indicators) != 1 else ''}")
        if not parts:
            self.say(f"{self.ok_mark} config: no devices configured, nothing to check "
                     "(add [[load_cells]], [accelerometer], [tilt_switch], [buttons] or [indicators])")
            return True
        problems = []
        pins: dict[int, str] = {}
        wired = [(f"[buttons] {k}", v) for k, v in cfg.buttons.items()]
        wired += [(f"[indicators] {k}", v) for k, v in cfg.indicators.items()]
        if cfg.tilt_switch is not None and cfg.tilt_switch.get("pin") is not None:
            wired.append(("[tilt_switch] pin", cfg.tilt_switch["pin"]))
        addresses: dict[tuple[int, int], str] = {}
        for cell in cfg.load_cells:
            if cell.adc == "hx711":
                if cell.dout_pin is None or cell.sck_pin is None:
                    problems.append((f"[load_cells] {cell.name}", "an HX711 cell needs dout_pin and sck_pin"))
                    continue
                wired += [(f"[load_cells] {cell.name} dout_pin", cell.dout_pin),
                          (f"[load_cells] {cell.name} sck_pin", cell.sck_pin)]
            else:
                addresses.setdefault((cell.i2c_bus, cell.address), f"[load_cells] {cell.name}")
                if addresses[(cell.i2c_bus, cell.address)] != f"[load_cells] {cell.name}":
                    problems.append((f"[load_cells] {cell.name}",
                                     f"I2C address 0x{cell.address:02X} on bus {cell.i2c_bus} is already used by "
                                     f"{addresses[(cell.i2c_bus, cell.address)]} (a NAU7802's address is fixed: put "
                                     "the second one on another bus, see hardware/wiring.md)"))
        for label, pin in wired:
            if pin in pins:
                problems.append((label, f"GPIO {pin} is already used by {pins[pin]}"))
            pins[pin] = label
        if problems:
            for where, what in problems:
                self.say(f"{self.bad_mark} config: {where}: {what}")
            self.say("  fix: give each device its own pins (hardware/wiring.md has a tested pin plan)")
            return False
        self.say(f"{self.ok_mark} config: {', '.join(parts)}")
        return True

    # --- devices
    def check_load_cell(self, cell, seconds: float) -> None:
        label = f"{cell.adc.upper()}" + (f" on DOUT GPIO {cell.dout_pin}, SCK GPIO {cell.sck_pin}"
                                          if cell.adc == "hx711" else f" on I2C bus {cell.i2c_bus} at 0x{cell.address:02X}")
        self.say()
        self.say(f"{cell.name} — {label}, gain {cell.gain}")
        opener = load_cell_opener(cell, smbus_factory=self.smbus_factory, clock=self.clock)
        try:
            dev = opener(OPEN_TIMEOUT_S)
        except SensorFault as exc:
            self.fault(cell.name, exc)
            return
        try:
            values, last = self._sample(dev.read, seconds)
            health = dev.health()
        finally:
            dev.close()
        if not values:
            if last is not None:
                self.fault(cell.name, last)
            else:
                self.fail(cell.name, f"no reading in {seconds:g} s")
            return
        mean = statistics.fmean(values)
        noise = statistics.pstdev(values) if len(values) > 1 else 0.0
        grams = (mean - cell.offset_counts) / cell.counts_per_gram
        noise_g = noise / abs(cell.counts_per_gram)
        self.say(f"  {len(values)} samples in {seconds:g} s ({len(values) / seconds:.1f}/s): "
                 f"{mean:.0f} counts ±{noise:.0f} (≈ {grams:.1f} g on it, noise {noise_g:.3f} g); "
                 f"{health.get('glitches', 0)} glitches, {health.get('saturations', 0)} saturated, "
                 f"{health.get('timeouts', 0)} timeouts")
        if noise_g > NOISE_WARN_G:
            self.warn(f"noisy: ±{noise_g:.2f} g is too much to tell pawns apart",
                      "twist the four load-cell wires, keep them short and away from the Pi's power lead, "
                      "and give the ADC board a solid ground")
        if last is not None:
            self.warn(f"{len(values)} readings, but also a fault: {last.reason}")
        self.ok()

    def check_accelerometer(self, spec: dict, seconds: float) -> None:
        self.say()
        address = spec.get("address")
        where = f"I2C bus {spec.get('i2c_bus', 1)}" + (f" at 0x{address:02X}" if address is not None else "")
        self.say(f"accelerometer — {spec.get('chip', 'mpu6050')} on {where}")
        opener = accelerometer_opener(spec, smbus_factory=self.smbus_factory, clock=self.clock)
        try:
            dev = opener(OPEN_TIMEOUT_S)
        except SensorFault as exc:
            self.fault("accelerometer", exc)
            return
        try:
            self.say(f"  found {dev.describe()}")
            values, last = self._sample(dev.read, min(seconds, 2.0))
        finally:
            dev.close()
        if not values:
            if last is not None:
                self.fault("accelerometer", last)
            else:
                self.fail("accelerometer", f"no reading in {seconds:g} s")
            return
        x, y, z = (statistics.fmean(v[i] for v in values) for i in range(3))
        magnitude = math.sqrt(x * x + y * y + z * z)
        axis = "ax ay az".split().index(spec.get("axis", "ax"))
        along = (x, y, z)[axis] - spec.get("level_g", 0.0)
        angle = math.degrees(math.asin(max(-1.0, min(1.0, along))))
        self.say(f"  x {x:+.3f} g, y {y:+.3f} g, z {z:+.3f} g (|a| {magnitude:.3f} g); "
                 f"arm angle along {spec.get('axis', 'ax')}: {angle:+.2f}°")
        if not 0.8 <= magnitude <= 1.2:
            self.warn(f"it feels {magnitude:.2f} g, not 1 g at rest",
                      "check that [accelerometer] chip matches the board; keep the arm still while checking")
        if abs(angle) > 20:
            self.warn(f"the arm reads {angle:+.1f}° off level",
                      "check [accelerometer] axis (the axis along the arm) and level_g")
        self.ok()

    def check_tilt(self, spec: dict) -> None:
        self.say()
        wired = "to GND" if spec.get("active_low", True) else "to 3V3"
        self.say(f"tilt_switch — GPIO {spec.get('pin')} ({wired})")
        try:
            dev = tilt_opener(spec, pin_factory=self.pin_factory)(OPEN_TIMEOUT_S)
        except SensorFault as exc:
            self.fault("tilt_switch", exc)
            return
        try:
            closed = dev.is_closed()
        except SensorFault as exc:
            self.fault("tilt_switch", exc)
            return
        finally:
            dev.close()
        self.say("  closed (the arm rests on the board)" if closed else "  open (the arm is off the board)")
        self.ok()

    def check_buttons(self, buttons: dict[str, int], wait_s: float) -> None:
        self.say()
        panel = GpioButtonPanel(buttons, pin_factory=self.pin_factory, clock=self.clock, start=False)
        try:
            failed = dict(panel.failures())
            for name, reason in failed.items():
                self.fail(name, reason)
            usable = [n for n in buttons if f"button {n}" not in failed]
            if not usable:
                return
            seen: set[str] = set()
            all_seen = threading.Event()

            def arrived(name: str) -> None:
                if name not in seen:
                    seen.add(name)
                    self.say(f"  {self.ok_mark} {name}")
                    if seen >= set(usable):
                        all_seen.set()

            panel.on_press(arrived)
            panel.on_hold(arrived)
            # listening before asking: a press the moment the prompt shows must not be missed
            panel.start()
            self.say(f"buttons — press each button now ({wait_s:g} s): {', '.join(usable)}")
            all_seen.wait(wait_s)
            down = set(panel.down_since_open())
        finally:
            panel.close()
        for name in usable:
            if name in down:
                self.fail(f"button {name}", f"{name}: pressed the whole time on GPIO {buttons[name]} (stuck, or "
                          "the wire is shorted to GND)", "free the button, or check its wire for a short to GND")
            elif name not in seen:
                self.fail(f"button {name}", f"{name}: no press seen on GPIO {buttons[name]}",
                          f"check the wire from GPIO {buttons[name]} through the button to GND")

    def check_indicators(self, pins: dict[str, int], seconds: float) -> None:
        self.say()
        order = [k for k in ("green", "amber", "red") if k in pins]
        shown = ""
        if order:
            shown = f"{order[0]} lights up" if len(order) == 1 else f"{', '.join(order)} light up in turn"
        beep = "the buzzer beeps" if "buzzer" in pins else ""
        self.say(f"indicators — watch: {', then '.join(x for x in (shown, beep) if x)}")
        ind = GpioIndicators(pins, pin_factory=self.pin_factory, clock=self.clock)
        try:
            for name, reason in ind.failures():
                self.fail(name, reason)
            step = max(0.05, min(0.4, seconds / 4))
            for light in order:
                ind.show(light)
                self.clock.sleep(step)
            ind.show("off")
            if "buzzer" in pins:
                ind.buzz(step)
                self.clock.sleep(step * 1.5)
        finally:
            ind.close()
        if not ind.failures():
            self.ok("done (one stayed dark or silent? check its wiring, resistor or transistor)")

    # --- helpers
    def _sample(self, read, seconds: float) -> tuple[list, SensorFault | None]:
        """Read for `seconds`; the values, and the last fault seen (if any)."""
        values: list = []
        last: SensorFault | None = None
        start = self.clock.now()
        while self.clock.now() < start + seconds:
            try:
                values.append(read(READ_TIMEOUT_S))
            except SensorFault as exc:
                last = exc
                passing = isinstance(exc, DeviceFault) and exc.passing
                if not values and not passing and self.clock.now() - start >= 2 * READ_TIMEOUT_S:
                    break  # nothing but lasting faults so far: more tries would tell no more
        return values, last


def cmd_doctor(args: argparse.Namespace) -> int:
    path = args.config
    if path is None:
        if not DEFAULT_CONFIG.exists():
            print(f"companion doctor: no --config given and {DEFAULT_CONFIG} does not exist; "
                  "pass --config FILE (firmware_config/companion.toml is the default one)", file=sys.stderr)
            return EXIT_CONFIG
        path = DEFAULT_CONFIG
    for option, value in (("--seconds", args.seconds), ("--button-seconds", args.button_seconds)):
        if not 0 < value <= 600:
            print(f"companion doctor: {option} must be more than 0 and at most 600, not {value:g}", file=sys.stderr)
            return EXIT_CONFIG
    return Doctor().run(path, seconds=args.seconds, button_seconds=args.button_seconds,
                        skip_buttons=args.skip_buttons)


def add_commands(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "doctor", help="check the config and the sensors, buttons and lights wired to this Pi",
        description="Open every device in the config the way the daemon does, show what it finds and end "
                    "non-zero, with a one-line fix, when something is wrong. Stop the service first "
                    "(sudo systemctl stop companion): a pin or bus serves one program at a time.")
    p.add_argument("--config", type=Path, help=f"the TOML config file (default: {DEFAULT_CONFIG})")
    p.add_argument("--seconds", type=float, default=3.0,
                   help="how long to sample each sensor, for counts and noise (default: 3)")
    p.add_argument("--button-seconds", type=float, default=15.0,
                   help="how long to wait for the button presses (default: 15)")
    p.add_argument("--skip-buttons", action="store_true", help="do not wait for button presses")
    p.set_defaults(func=cmd_doctor)
