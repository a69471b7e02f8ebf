"""`companion doctor` against emulated hardware: what it prints, its exit code, the fix lines."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from companion import cli
from companion.table import doctor as doctor_mod
from companion.table.doctor import Doctor
from tests.hardware.fake_i2c import FakeI2C, MPU6050Chip, NAU7802Chip
from tests.hardware.mock_pins import held_down

ROOT = Path(__file__).resolve().parents[2]

HX_CELLS = """
[[load_cells]]
name = "load0"
adc = "hx711"
dout_pin = 5
sck_pin = 6
offset_counts = 8000.0
counts_per_gram = 2000.0
"""

FULL = HX_CELLS + """
[[load_cells]]
name = "load1"
adc = "nau7802"
i2c_bus = 1
address = 0x2A
offset_counts = 0.0
counts_per_gram = 1000.0

[accelerometer]
chip = "mpu6050"
address = 0x68
axis = "ax"

[tilt_switch]
pin = 26

[buttons]
roll = 17
undo = 23

[indicators]
green = 24
red = 16
buzzer = 12
"""


class Screen(io.StringIO):
    """Doctor's output, with an event set once a given text has been printed."""

    encoding = "utf-8"

    def __init__(self, watch: str = "press each button now"):
        super().__init__()
        self.watch = watch
        self.seen = threading.Event()

    def write(self, s):
        n = super().write(s)
        if self.watch in self.getvalue():
            self.seen.set()
        return n


def config(tmp_path, text: str) -> Path:
    path = tmp_path / "companion.toml"
    path.write_text(text)
    return path


@pytest.fixture
def bench(fake_gpio, pins):
    """Emulated hardware for the reference build, every part answering."""
    net = FakeI2C()
    net.add(0x2A, NAU7802Chip(source=iter(range(50000, 10**9, 3)).__next__))
    net.add(0x68, MPU6050Chip(g=(0.0872, 0.0, 0.9962)))   # the arm 5° off level
    fake_gpio.attach(fake_gpio.HX711Chip(5, 6, lambda: 28000))
    return {"gpio": fake_gpio, "i2c": net, "pins": pins}


def press_buttons_when_asked(screen: Screen, pins, buttons):
    """Press each (name, pin) once the doctor asks, holding it until the doctor has seen it (a fixed press
    length would race the panel's poll thread on a loaded machine), or for at most 5 s."""
    def press():
        if not screen.seen.wait(10):
            return
        for name, pin in buttons:
            pins.pin(pin).drive_low()
            deadline = time.monotonic() + 5.0
            while f"✓ {name}\n" not in screen.getvalue() and time.monotonic() < deadline:
                time.sleep(0.01)
            pins.pin(pin).drive_high()
            time.sleep(0.05)

    t = threading.Thread(target=press, daemon=True)
    t.start()
    return t


def test_a_healthy_table_passes_and_shows_what_was_found(tmp_path, bench):
    screen = Screen()
    presser = press_buttons_when_asked(screen, bench["pins"], [("roll", 17), ("undo", 23)])
    doc = Doctor(screen, pin_factory=bench["pins"], smbus_factory=bench["i2c"].factory)
    code = doc.run(config(tmp_path, FULL), seconds=0.3, button_seconds=5)
    presser.join(15)
    out = screen.getvalue()
    assert code == 0, out
    assert "✓ config: 2 load cells, accelerometer (mpu6050), tilt switch, 2 buttons, 3 indicator outputs" in out
    assert "load0 — HX711 on DOUT GPIO 5, SCK GPIO 6, gain 128" in out
    assert "28000 counts ±0 (≈ 10.0 g on it, noise 0.000 g)" in out
    assert "load1 — NAU7802 on I2C bus 1 at 0x2A" in out
    assert "found MPU-6050 (id 0x68: MPU-6050) on I2C bus 1 at 0x68" in out
    assert "arm angle along ax: +5.00°" in out
    assert "open (the arm is off the board)" in out
    assert "  ✓ roll\n" in out and "  ✓ undo\n" in out
    assert "✓ all configured devices answer" in out


def test_i2c_off_fails_with_the_one_line_fix(tmp_path, bench):
    bench["i2c"].buses.clear()
    screen = Screen()
    code = Doctor(screen, pin_factory=bench["pins"], smbus_factory=bench["i2c"].factory).run(
        config(tmp_path, FULL), seconds=0.2, skip_buttons=True)
    out = screen.getvalue()
    assert code == 1
    assert "✗ /dev/i2c-1 does not exist" in out
    assert "fix: I2C is off: add dtparam=i2c_arm=on to config.txt" in out
    assert out.rstrip().endswith("✗ 2 problems: load1, accelerometer")


def test_an_unplugged_hx711_fails_within_its_deadline(tmp_path, fake_gpio, pins):
    screen = Screen()
    start = time.monotonic()
    code = Doctor(screen, pin_factory=pins).run(config(tmp_path, HX_CELLS), seconds=0.2)
    out = screen.getvalue()
    assert code == 1
    assert time.monotonic() - start < 3
    assert "✗ HX711 not ready within" in out and "fix: check the HX711's VCC (3.3 V) and GND" in out


def test_a_wrong_accelerometer_id_names_the_chip(tmp_path, pins):
    net = FakeI2C()
    net.add(0x68, MPU6050Chip(who_am_i=0x12))
    screen = Screen()
    code = Doctor(screen, pin_factory=pins, smbus_factory=net.factory).run(
        config(tmp_path, "[accelerometer]\nchip = \"mpu6050\"\n"), seconds=0.2)
    assert code == 1
    assert "WHO_AM_I 0x12: not an MPU-6050" in screen.getvalue()


def test_a_button_never_pressed_is_a_fault(tmp_path, pins):
    screen = Screen()
    code = Doctor(screen, pin_factory=pins).run(config(tmp_path, "[buttons]\nroll = 17\n"), seconds=0.2,
                                                button_seconds=0.2)
    out = screen.getvalue()
    assert code == 1
    assert "press each button now (0.2 s): roll" in out
    assert "✗ roll: no press seen on GPIO 17" in out
    assert "fix: check the wire from GPIO 17 through the button to GND" in out


def test_a_button_held_down_all_along_is_named_as_stuck_not_as_seen(tmp_path, pins):
    held_down(pins, 17)          # stuck, or its wire shorted to GND
    screen = Screen()
    code = Doctor(screen, pin_factory=pins).run(config(tmp_path, "[buttons]\nroll = 17\n"), seconds=0.2,
                                                button_seconds=1.5)
    out = screen.getvalue()
    assert code == 1
    assert "✓ roll" not in out
    assert "✗ roll: pressed the whole time on GPIO 17 (stuck, or the wire is shorted to GND)" in out
    assert "fix: free the button, or check its wire for a short to GND" in out


def test_a_noisy_cell_warns_but_passes(tmp_path, fake_gpio, pins):
    import random

    rng = random.Random(3)
    fake_gpio.attach(fake_gpio.HX711Chip(5, 6, lambda: round(rng.gauss(28000, 3000))))
    screen = Screen()
    code = Doctor(screen, pin_factory=pins).run(config(tmp_path, HX_CELLS), seconds=0.3)
    out = screen.getvalue()
    assert code == 0, out
    assert "! noisy" in out and "fix: twist the four load-cell wires" in out
    assert "(1 warning)" in out


def test_a_config_error_exits_2_with_the_key(tmp_path):
    screen = Screen()
    code = Doctor(screen).run(config(tmp_path, "[buttons]\nroll = 3\n"), seconds=0.2)
    out = screen.getvalue()
    assert code == 2
    assert "[buttons] roll: GPIO 2 and 3 carry I2C" in out


def test_pins_shared_between_a_load_cell_and_a_button_are_caught(tmp_path):
    screen = Screen()
    code = Doctor(screen).run(config(tmp_path, HX_CELLS + "\n[buttons]\nroll = 5\n"), seconds=0.2)
    out = screen.getvalue()
    assert code == 2
    assert "GPIO 5 is already used by [load_cells #1] dout_pin" in out


def test_two_nau7802_on_one_bus_are_caught(tmp_path):
    two = "".join(f"[[load_cells]]\nname = \"load{i}\"\nadc = \"nau7802\"\n" for i in range(2))
    screen = Screen()
    assert Doctor(screen).run(config(tmp_path, two), seconds=0.2) == 2
    assert "address 0x2a is already used by load0" in screen.getvalue()


def test_nothing_configured_is_fine(tmp_path):
    screen = Screen()
    assert Doctor(screen).run(config(tmp_path, ""), seconds=0.2) == 0
    assert "nothing to check" in screen.getvalue()


def test_cli_doctor_runs_the_real_drivers(tmp_path, bench, monkeypatch, mocker, capsys):
    from gpiozero import Device

    monkeypatch.setattr(Device, "pin_factory", bench["pins"])
    mocker.patch("smbus2.SMBus", side_effect=bench["i2c"].factory)
    path = config(tmp_path, FULL)
    code = cli.main(["doctor", "--config", str(path), "--seconds", "0.2", "--skip-buttons"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "buttons — skipped (--skip-buttons)" in out


def test_cli_doctor_without_a_config_file(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(doctor_mod, "DEFAULT_CONFIG", tmp_path / "absent.toml")
    assert cli.main(["doctor"]) == 2
    assert "no --config given" in capsys.readouterr().err


def test_cli_doctor_refuses_a_bad_duration(tmp_path, capsys):
    assert cli.main(["doctor", "--config", str(config(tmp_path, "")), "--seconds", "0"]) == 2
    assert "--seconds must be more than 0" in capsys.readouterr().err


def test_doctor_with_an_emulated_rpi_gpio_on_the_path(tmp_path):
    """What the README of tests/hardware/emulated describes: the real package, driver and CLI in a process."""
    path = config(tmp_path, HX_CELLS + "\n[tilt_switch]\npin = 26\n\n[indicators]\ngreen = 24\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "tests" / "hardware" / "emulated"), str(ROOT)]),
               COMPANION_EMULATED_HX711="5:6:28000:20", GPIOZERO_PIN_FACTORY="mock", PYTHONIOENCODING="utf-8")
    result = subprocess.run([sys.executable, "-m", "companion", "doctor", "--config", str(path), "--seconds", "0.3"],
                            capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "load0 — HX711 on DOUT GPIO 5, SCK GPIO 6" in result.stdout
    assert "✓ all configured devices answer" in result.stdout
