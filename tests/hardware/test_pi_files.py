"""The Pi side of the repository: default config, boot config fragment, udev rules, install script, docs."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from companion.config import load

ROOT = Path(__file__).resolve().parents[2]
DEFAULT = ROOT / "firmware_config" / "companion.toml"
SCRIPT = ROOT / "scripts" / "install-pi.sh"

# every key config.load accepts, by section
KEYS = {
    "game": ["name", "players", "options"],
    "balance": ["model", "kappa_gmm", "theta_max_deg", "pawn_mass_g", "mass_sigma_g", "tip_sigma_gmm",
                "risky_probability"],
    "store": ["path"],
    "recorder": ["minutes", "max_mb"],
    "web": ["host", "port", "max_streams", "heartbeat_s"],
    "simulate": ["enabled", "demo", "demo_interval_s", "seed"],
    "load_cells": ["name", "adc", "dout_pin", "sck_pin", "gain", "i2c_bus", "address", "offset_counts",
                   "counts_per_gram"],
    "accelerometer": ["chip", "i2c_bus", "address", "axis", "level_g"],
    "tilt_switch": ["pin", "active_low", "debounce_ms"],
    "indicators": ["green", "amber", "red", "buzzer"],
}


def test_the_default_config_loads_and_configures_the_reference_build():
    cfg = load(DEFAULT)
    assert not cfg.simulate
    assert [c.name for c in cfg.load_cells] == ["load0", "load1"]
    assert all(c.adc == "hx711" and c.dout_pin is not None and c.sck_pin is not None for c in cfg.load_cells)
    assert cfg.accelerometer["chip"] == "mpu6050" and cfg.accelerometer["address"] == 0x68
    assert cfg.tilt_switch["pin"] == 26
    assert set(cfg.buttons) == {"roll", "next", "confirm", "undo"}
    assert set(cfg.indicators) == {"green", "amber", "red", "buzzer"}
    assert cfg.host == "0.0.0.0"
    # no GPIO used twice, counting the load cells' pins (config.load does not check those)
    pins = [p for c in cfg.load_cells for p in (c.dout_pin, c.sck_pin)]
    pins += list(cfg.buttons.values()) + list(cfg.indicators.values()) + [cfg.tilt_switch["pin"]]
    assert len(pins) == len(set(pins))
    assert not {0, 1, 2, 3, 14, 15} & set(pins)   # ID EEPROM, I2C and the serial console stay free


def section_text(text: str, section: str) -> str:
    """The lines from [section] (or [[section]]) up to the next section header."""
    match = re.search(rf"^\[\[?{section}\]\]?\s*$(.*?)(?=^\[|\Z)", text, re.S | re.M)
    assert match, f"no [{section}] in the default config"
    return match.group(1)


@pytest.mark.parametrize("section", sorted(KEYS))
def test_every_key_is_in_the_default_config_with_a_comment(section):
    text = section_text(DEFAULT.read_text(), section)
    for key in KEYS[section]:
        line = re.search(rf"^(#\s*)?{key}\s*=", text, re.M)
        assert line, f"[{section}] {key} is not in the default config"
        # the key's paragraph (the lines above it up to a blank line) starts with a comment
        block = []
        for previous in reversed(text[:line.start()].splitlines()):
            if not previous.strip():
                break
            block.append(previous)
        assert any(b.lstrip().startswith("#") for b in block), f"[{section}] {key} has no comment above it"


def test_the_boot_config_fragment_switches_i2c_on():
    text = (ROOT / "firmware_config" / "config.txt.fragment").read_text()
    assert re.search(r"^dtparam=i2c_arm=on$", text, re.M)


def test_udev_rules_give_the_devices_to_the_groups():
    rules = (ROOT / "firmware_config" / "99-companion.rules").read_text()
    assert 'SUBSYSTEM=="i2c-dev"' in rules and 'GROUP="i2c"' in rules
    assert 'KERNEL=="gpiochip*"' in rules and 'GROUP="gpio"' in rules
    assert "gpiomem" in rules


def test_install_script_is_valid_bash_and_its_dry_run_shows_every_step():
    subprocess.run(["bash", "-n", str(SCRIPT)], check=True)
    result = subprocess.run(["bash", str(SCRIPT), "--dry-run", "--no-start"], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "usermod -aG gpio\\,i2c companion" in out
    assert "-m venv --system-site-packages /opt/companion/venv" in out
    assert "pip install --quiet --upgrade" in out
    assert "/etc/systemd/system/companion.service" in out
    assert "systemctl enable companion.service" in out
    assert "systemctl restart" not in out       # --no-start
    assert "firmware_config/companion.toml" in out


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck is not installed here")
def test_install_script_passes_shellcheck():
    subprocess.run(["shellcheck", str(SCRIPT)], check=True)


@pytest.mark.parametrize("doc", ["hardware/wiring.md", "hardware/bill-of-materials.md", "hardware/mounting.md",
                                 "hardware/arm-model-a.md", "firmware_config/groups.md"])
def test_the_hardware_docs_exist(doc):
    assert len((ROOT / doc).read_text().strip()) > 500


def test_wiring_table_matches_the_default_config():
    wiring = (ROOT / "hardware" / "wiring.md").read_text()
    cfg = load(DEFAULT)
    for cell in cfg.load_cells:
        assert f"GPIO {cell.dout_pin}" in wiring and f"GPIO {cell.sck_pin}" in wiring
    for pin in [*cfg.buttons.values(), *cfg.indicators.values(), cfg.tilt_switch["pin"]]:
        assert f"GPIO {pin}" in wiring
    assert "0x68" in wiring and "0x2A" in wiring


def test_arm_model_a_doc_lists_the_model_file_positions():
    import tomllib

    model = tomllib.loads((ROOT / "companion" / "games" / "models" / "A.toml").read_text())
    doc = (ROOT / "hardware" / "arm-model-a.md").read_text()
    for holder in model["holders"]:
        x = re.escape(f"{holder['x_mm']:+.0f}")
        assert re.search(rf"\|\s*{holder['id']}\s*\|\s*{x}\s*\|\s*{holder['capacity']}\s*\|", doc), holder["id"]
