"""The shipped systemd unit, read the way systemd reads it, so tests can run the daemon as the service does."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
UNIT = ROOT / "systemd" / "companion.service"


def parse_unit(text: str) -> dict[str, dict[str, list[str]]]:
    """systemd unit syntax: [Section] and Key=Value lines; a key may repeat (DeviceAllow=)."""
    sections: dict[str, dict[str, list[str]]] = {}
    current = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], {})
            continue
        key, sep, value = line.partition("=")
        if not sep or current is None:
            raise ValueError(f"{UNIT.name}: not a unit line: {raw!r}")
        current.setdefault(key.strip(), []).append(value.strip())
    return sections


def service_environment(text: str | None = None) -> dict[str, str]:
    """The variables the unit's Environment= lines set (each line: one or more NAME=value, space-separated)."""
    unit = parse_unit(UNIT.read_text() if text is None else text)
    env: dict[str, str] = {}
    for line in unit.get("Service", {}).get("Environment", []):
        for assignment in line.split():
            name, sep, value = assignment.partition("=")
            if not sep:
                raise ValueError(f"{UNIT.name}: Environment={line!r} is not NAME=value")
            env[name] = value
    return env
