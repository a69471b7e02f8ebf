"""Calibrating the arm: the numbers, the maths that finds them, and the file that keeps them.

The maths are pure functions of captured rows `(t, sensor, value)` (the trace
format): tare, counts per gram, the arm's stiffness κ and swing, θ_max, and each
holder's position. Each refuses, with the reason, a capture it cannot trust —
saturated or dead channels, a weight that moved the reading too little, a signal
that was still changing — in the spirit of Klipper's load-cell calibration.

`calibration.toml` sits beside the config, carries the date it was made, and is
checked whole when loaded (every problem as file:line). Values in it override
the config's; values missing from it come from the config.
"""

from __future__ import annotations

import math
import os
import tomllib
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from companion.foundation.atomic import write_atomic
from companion.games.balance_model import Model, make_physics
from companion.sensing.filters import GLITCH_VALUES, NEAR_RAIL, TiltDebouncer
from companion.sensing.inference import Geometry
from companion.sensing.swing import G_MM_S2, ArmSwing, fit_swing, measure_swing, refine_swing
from companion.foundation.toml_lines import locate

Row = tuple[float, str, float]
CALIBRATION_FILE = "calibration.toml"
FILE_VERSION = 1
DEFAULT_SWING_HZ = 1.0
DEFAULT_DAMPING = 0.08
DEFAULT_TILT_DEBOUNCE_S = 0.03
MIN_WEIGHT_COUNTS = 1000.0      # below this a known weight says little about counts per gram
MIN_WEIGHT_SNR = 50.0           # and it must stand this far out of a single reading's noise
MIN_CELL_SNR = 10.0
MIN_SAMPLES = 8
MIN_GROWTH, MAX_GROWTH = 0.3, 3.0
MAX_HEIGHT_MM = 200.0
MIN_LOADED_KAPPA = 0.2     # a full arm keeps at least this share of its empty stiffness, or the height is wrong


class CalibrationRefused(ValueError):
    """A capture the calibration cannot trust; the message says why and what to do."""


class CalibrationFileError(ValueError):
    """A calibration file that cannot be used; str() is `FILE:LINE: problem`."""


@dataclass(frozen=True)
class CellCalibration:
    name: str
    offset_counts: float
    counts_per_gram: float
    noise_counts: float | None = None


@dataclass(frozen=True)
class ArmCalibration:
    """Everything sensing needs to turn raw samples into grams and g·mm."""

    cells: tuple[CellCalibration, ...]
    axis: str = "ax"
    level_g: float = 0.0
    accel_noise_g: float | None = None
    kappa_gmm: float = 17000.0
    theta_max_deg: float = 10.0
    swing_hz: float = DEFAULT_SWING_HZ          # the empty arm's
    damping: float = DEFAULT_DAMPING
    arm_inertia_gmm2: float | None = None       # the empty arm's moment of inertia; None: κ·g / ω² from swing_hz
    swing_measured: bool = False                # swing_hz and damping come from a calibration, not the defaults
    # how high the pawns sit above the pivot (κ_eff = κ − Σ m·h, measured on the loaded arm) and how much of m·x²
    # a pawn adds to the swing's inertia (measured by the walk through the holders); 0 and 1 until measured
    pawn_height_mm: float = 0.0
    inertia_growth: float = 1.0
    height_measured: bool = False               # pawn_height_mm comes from a loaded arm, not the default (then learned)
    holder_x: Mapping[str, float] = field(default_factory=dict)
    tilt_debounce_s: float = DEFAULT_TILT_DEBOUNCE_S
    accelerometer: bool = True
    created: str | None = None
    source: str = "config"

    @property
    def tip_torque(self) -> float:
        """τ_tip of the empty arm."""
        return self.kappa_gmm * math.sin(math.radians(self.theta_max_deg))

    def kappa_at(self, load_g: float) -> float:
        """κ_eff with `load_g` grams of pawns on the arm."""
        return max(0.05 * self.kappa_gmm, self.kappa_gmm - self.pawn_height_mm * load_g)

    def tip_torque_at(self, load_g: float) -> float:
        """τ_tip with `load_g` grams of pawns on the arm."""
        return self.kappa_at(load_g) * math.sin(math.radians(self.theta_max_deg))

    def cell(self, name: str) -> CellCalibration | None:
        for c in self.cells:
            if c.name == name:
                return c
        return None

    def geometry(self, model: Model) -> Geometry:
        """The arm as sensing reads it: a holder whose place no calibration measured is where the model draws it,
        give or take what home-made arms differ by (inference.holder_sigma_mm)."""
        return Geometry.from_model(model, holder_x=self.holder_x, tip_torque=self.tip_torque,
                                   unmeasured=[h.id for h in model.holders if h.id not in self.holder_x])

    def swing(self) -> ArmSwing:
        """The arm's swing as physics (the prior the follower starts from)."""
        return ArmSwing.empty(self.kappa_gmm, self.swing_hz, self.damping, self.arm_inertia_gmm2,
                              height_mm=self.pawn_height_mm, growth=self.inertia_growth)

    def to_dict(self) -> dict:
        return {
            "source": self.source, "created": self.created,
            "load_cells": [{"name": c.name, "offset_counts": c.offset_counts, "counts_per_gram": c.counts_per_gram,
                            "noise_counts": c.noise_counts} for c in self.cells],
            "accelerometer": {"axis": self.axis, "level_g": self.level_g, "noise_g": self.accel_noise_g}
            if self.accelerometer else None,
            "kappa_gmm": self.kappa_gmm, "theta_max_deg": self.theta_max_deg, "tip_torque": round(self.tip_torque, 1),
            "swing_hz": self.swing_hz, "damping": self.damping, "arm_inertia_gmm2": self.arm_inertia_gmm2,
            "pawn_height_mm": self.pawn_height_mm, "height_measured": self.height_measured,
            "inertia_growth": self.inertia_growth,
            "holders": dict(self.holder_x),
        }


def from_config(cfg: Any) -> ArmCalibration:
    """The calibration a config states (companion.config.Config), before any calibration file."""
    phys = cfg.model().physics
    accel = cfg.accelerometer
    tilt = cfg.tilt_switch
    return ArmCalibration(
        cells=tuple(CellCalibration(c.name, float(c.offset_counts), float(c.counts_per_gram)) for c in cfg.load_cells),
        axis=accel["axis"] if accel else "ax",
        level_g=float(accel["level_g"]) if accel else 0.0,
        kappa_gmm=phys.kappa_gmm,
        theta_max_deg=phys.theta_max_deg,
        tilt_debounce_s=(tilt["debounce_ms"] / 1000.0) if tilt else DEFAULT_TILT_DEBOUNCE_S,
        accelerometer=accel is not None,
        source=str(cfg.source),
    )


def calibrated_model(model: Model, cal: ArmCalibration) -> Model:
    """The model with the calibrated κ, θ_max, pawn height and holder positions: the game's tip warnings judge the
    very arm the follower reads, loaded as it is."""
    phys = model.physics
    physics = make_physics(kappa_gmm=cal.kappa_gmm, theta_max_deg=cal.theta_max_deg,
                           pawn_mass_g=phys.pawn_mass_g, mass_sigma_g=phys.mass_sigma_g,
                           risky_probability=phys.risky_probability, pawn_height_mm=cal.pawn_height_mm)
    holders = tuple(replace(h, x_mm=float(cal.holder_x.get(h.id, h.x_mm))) for h in model.holders)
    return Model(model.name, holders, model.seats, physics, model.source)


def calibration_path(config_source: str | os.PathLike | None, base_dir: Path | None = None) -> Path:
    """Where `companion calibrate` writes and the daemon looks: beside the config file."""
    if config_source is not None and Path(config_source).is_file():
        return Path(config_source).resolve().parent / CALIBRATION_FILE
    return (base_dir or Path.cwd()) / CALIBRATION_FILE


# ----------------------------------------------------------------------------- the file

def render(cal: ArmCalibration, *, model_name: str, known_mass_g: float | None = None,
           created: datetime | None = None, exact: bool = False) -> str:
    """calibration.toml text for `cal` (only what this module writes; `load_file` reads it back).

    `exact` writes every number to the last digit (for a replay to use the very values the daemon used)."""
    def f(v: float, digits: int | None = None) -> str:
        return _f(v, None if exact else digits)

    when = (created or datetime.now(timezone.utc)).replace(microsecond=0)
    lines = [
        "# Arm calibration for Table Companion, written by `companion calibrate`.",
        "# Values here override the config's; delete a line to fall back to the config.",
        f"version = {FILE_VERSION}",
        f"created = {when.isoformat().replace('+00:00', 'Z')}",
        f"model = {_q(model_name)}",
    ]
    if known_mass_g is not None:
        lines.append(f"known_mass_g = {f(known_mass_g)}")
    for c in cal.cells:
        lines += ["", f"[load_cells.{c.name}]", f"offset_counts = {f(c.offset_counts, 1)}",
                  f"counts_per_gram = {f(c.counts_per_gram, 3)}"]
        if c.noise_counts is not None:
            lines.append(f"noise_counts = {f(c.noise_counts, 1)}")
    if cal.accelerometer:
        lines += ["", "[accelerometer]", f"axis = {_q(cal.axis)}", f"level_g = {f(cal.level_g, 6)}"]
        if cal.accel_noise_g is not None:
            lines.append(f"noise_g = {f(cal.accel_noise_g, 6)}")
    lines += ["", "[arm]", f"kappa_gmm = {f(cal.kappa_gmm, 1)}", f"theta_max_deg = {f(cal.theta_max_deg, 3)}"]
    if cal.swing_measured:
        # written only when measured: without it the follower knows the swing is a guess
        lines += ["# the empty arm's swing: a prior the follower corrects as pawns add to its moment of inertia",
                  f"swing_hz = {f(cal.swing_hz, 4)}", f"damping = {f(cal.damping, 4)}"]
        if cal.arm_inertia_gmm2 is not None:
            lines.append(f"inertia_gmm2 = {f(cal.arm_inertia_gmm2, 0)}")
        if cal.inertia_growth != 1.0:
            lines.append(f"inertia_growth = {f(cal.inertia_growth, 4)}      # of m·x², each pawn's share of the swing")
    if cal.height_measured or cal.pawn_height_mm != 0.0:
        lines.append(f"pawn_height_mm = {f(cal.pawn_height_mm, 2)}      # a loaded arm is less stiff: κ − Σ m·h")
    if cal.holder_x:
        lines += ["", "# measured holder positions, mm from the pivot (+ is seat 1's right)", "[holders]"]
        lines += [f"{h} = {f(x, 2)}" for h, x in cal.holder_x.items()]
    return "\n".join(lines) + "\n"


def _q(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _f(v: float, digits: int | None = None) -> str:
    text = repr(round(float(v), digits) if digits is not None else float(v))
    return text if ("." in text or "e" in text or "inf" in text or "nan" in text) else text + ".0"


def save(cal: ArmCalibration, path: Path, *, model_name: str, known_mass_g: float | None = None) -> Path:
    return write_atomic(Path(path), render(cal, model_name=model_name, known_mass_g=known_mass_g))


@dataclass(frozen=True)
class CalibrationFile:
    """What a calibration file says (None: not in the file)."""

    path: str
    created: str
    model: str
    known_mass_g: float | None
    cells: Mapping[str, Mapping[str, float]]
    axis: str | None
    level_g: float | None
    accel_noise_g: float | None
    kappa_gmm: float | None
    theta_max_deg: float | None
    swing_hz: float | None
    damping: float | None
    holder_x: Mapping[str, float]
    inertia_gmm2: float | None = None
    pawn_height_mm: float | None = None
    inertia_growth: float | None = None
    text: str = field(default="", repr=False)


def load_file(path: str | os.PathLike) -> CalibrationFile:
    """Read and check a calibration file; CalibrationFileError names file and line."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CalibrationFileError(f"{p}:1: no such calibration file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CalibrationFileError(f"{p}:1: cannot read: {exc}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line = 1
        msg = str(exc)
        if "(at line " in msg:
            line = int(msg.split("(at line ", 1)[1].split(",", 1)[0].rstrip(")"))
        raise CalibrationFileError(f"{p}:{line}: not valid TOML: {msg}") from None

    def fail(table: str | None, key: str | None, message: str) -> CalibrationFileError:
        return CalibrationFileError(f"{p}:{locate(text, table, key)}: {message}")

    def number(table: Mapping[str, Any], tname: str | None, key: str, *, required: bool = False,
               check=None) -> float | None:
        where = f"[{tname}] {key}" if tname else key
        if key not in table:
            if required:
                raise fail(tname, None, f"{where} is missing")
            return None
        v = table[key]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise fail(tname, key, f"{where} must be a number, not {v!r}")
        v = float(v)
        if check is not None:
            problem = check(v)
            if problem:
                raise fail(tname, key, f"{where} {problem}")
        return v

    def known(table: Mapping[str, Any], tname: str | None, allowed: set[str]) -> None:
        for k in table:
            if k not in allowed:
                where = f"[{tname}] {k}" if tname else k
                raise fail(tname, k, f"unknown key {where} (known: {', '.join(sorted(allowed))})")

    known(data, None, {"version", "created", "model", "known_mass_g", "load_cells", "accelerometer", "arm", "holders"})
    if data.get("version") != FILE_VERSION:
        raise fail(None, "version", f"version must be {FILE_VERSION} (this file says {data.get('version')!r})")
    created = data.get("created")
    if not isinstance(created, datetime):
        raise fail(None, "created", "created must be a date and time like 2025-01-31T18:00:00Z (when it was made)")
    model = data.get("model")
    if not isinstance(model, str) or not model:
        raise fail(None, "model", "model must name the balance model it was made for")
    known_mass = number(data, None, "known_mass_g", check=lambda v: None if v > 0 else "must be greater than 0")
    cells: dict[str, dict[str, float]] = {}
    raw_cells = data.get("load_cells", {})
    if not isinstance(raw_cells, Mapping):
        raise fail(None, "load_cells", "[load_cells.NAME] tables are expected")
    for name, table in raw_cells.items():
        tname = f"load_cells.{name}"
        if not (name.startswith("load") and name[4:].isdigit()):
            raise fail(tname, None, f"[{tname}]: a load cell is named load0, load1, …")
        if not isinstance(table, Mapping):
            raise fail(tname, None, f"[{tname}] must be a table")
        known(table, tname, {"offset_counts", "counts_per_gram", "noise_counts"})
        cells[name] = {
            "offset_counts": number(table, tname, "offset_counts", required=True),
            "counts_per_gram": number(table, tname, "counts_per_gram", required=True,
                                      check=lambda v: None if v != 0 else "must not be 0"),
        }
        noise = number(table, tname, "noise_counts", check=lambda v: None if v >= 0 else "must not be negative")
        if noise is not None:
            cells[name]["noise_counts"] = noise
    accel = data.get("accelerometer", {})
    if not isinstance(accel, Mapping):
        raise fail(None, "accelerometer", "[accelerometer] must be a table")
    known(accel, "accelerometer", {"axis", "level_g", "noise_g"})
    axis = accel.get("axis")
    if axis is not None and axis not in ("ax", "ay", "az"):
        raise fail("accelerometer", "axis", f"[accelerometer] axis must be ax, ay or az, not {axis!r}")
    level = number(accel, "accelerometer", "level_g",
                   check=lambda v: None if -1 < v < 1 else "must be between -1 and 1")
    anoise = number(accel, "accelerometer", "noise_g", check=lambda v: None if v >= 0 else "must not be negative")
    arm = data.get("arm", {})
    if not isinstance(arm, Mapping):
        raise fail(None, "arm", "[arm] must be a table")
    known(arm, "arm", {"kappa_gmm", "theta_max_deg", "swing_hz", "damping", "inertia_gmm2", "inertia_growth",
                       "pawn_height_mm"})
    kappa = number(arm, "arm", "kappa_gmm", check=lambda v: None if v > 0 else "must be greater than 0")
    theta = number(arm, "arm", "theta_max_deg", check=lambda v: None if 0 < v < 45 else "must be between 0 and 45")
    swing = number(arm, "arm", "swing_hz", check=lambda v: None if 0.05 <= v <= 20 else "must be from 0.05 to 20 Hz")
    damping = number(arm, "arm", "damping", check=lambda v: None if 0 <= v < 1 else "must be from 0 to below 1")
    inertia = number(arm, "arm", "inertia_gmm2",
                     check=lambda v: None if 1e3 <= v <= 1e10 else "must be from 1e3 to 1e10 g·mm²")
    growth = number(arm, "arm", "inertia_growth",
                    check=lambda v: None if MIN_GROWTH <= v <= MAX_GROWTH else
                    f"must be from {MIN_GROWTH:g} to {MAX_GROWTH:g} (a pawn adds about its m·x² to the swing's inertia)")
    height = number(arm, "arm", "pawn_height_mm",
                    check=lambda v: None if abs(v) <= MAX_HEIGHT_MM else
                    f"must be within ±{MAX_HEIGHT_MM:g} mm (how high the pawns sit above the pivot)")
    holders = data.get("holders", {})
    if not isinstance(holders, Mapping):
        raise fail(None, "holders", "[holders] must be a table of holder = x_mm")
    holder_x = {}
    for h in holders:
        holder_x[h] = number(holders, "holders", h, check=lambda v: None if v != 0 else "must not be 0 (the pivot)")
    return CalibrationFile(str(p), created.isoformat(), model, known_mass, cells, axis, level, anoise, kappa, theta,
                           swing, damping, holder_x, inertia_gmm2=inertia, pawn_height_mm=height,
                           inertia_growth=growth, text=text)


def apply_file(base: ArmCalibration, cf: CalibrationFile, model: Model | None = None) -> ArmCalibration:
    """`base` (from the config) with the file's values on top; checks the file fits this config and model."""
    def fail(table: str | None, key: str | None, message: str) -> CalibrationFileError:
        return CalibrationFileError(f"{cf.path}:{locate(cf.text, table, key)}: {message}")

    names = [c.name for c in base.cells]
    for name in cf.cells:
        if name not in names:
            raise fail(f"load_cells.{name}", None,
                       f"[load_cells.{name}]: the config has no such load cell (it names {', '.join(names) or 'none'})")
    if model is not None:
        if cf.model != model.name:
            raise fail(None, "model", f"made for balance model {cf.model!r}, but the config uses {model.name!r}; "
                                      "calibrate again")
        for h in cf.holder_x:
            if h not in model.by_id:
                raise fail("holders", h, f"[holders] {h}: model {model.name} has no such holder")
        problem = holders_problem(model, cf.holder_x)
        if problem:
            raise fail("holders", problem[0], f"[holders] {problem[1]}")
        if cf.pawn_height_mm:
            kappa = cf.kappa_gmm if cf.kappa_gmm is not None else base.kappa_gmm
            full = sum(h.capacity for h in model.holders) * max(model.physics.pawn_mass_g.values())
            if kappa - cf.pawn_height_mm * full < MIN_LOADED_KAPPA * kappa:
                raise fail("arm", "pawn_height_mm",
                           f"[arm] pawn_height_mm = {cf.pawn_height_mm:g} would leave the arm almost no stiffness with "
                           f"{full:g} g of pawns on it (κ {kappa:.0f} g·mm): measure the loaded arm again")
    cells = []
    for c in base.cells:
        v = cf.cells.get(c.name)
        if v is None:
            cells.append(c)
        else:
            cells.append(CellCalibration(c.name, v["offset_counts"], v["counts_per_gram"], v.get("noise_counts")))
    return replace(
        base,
        cells=tuple(cells),
        axis=cf.axis if cf.axis is not None else base.axis,
        level_g=cf.level_g if cf.level_g is not None else base.level_g,
        accel_noise_g=cf.accel_noise_g if cf.accel_noise_g is not None else base.accel_noise_g,
        kappa_gmm=cf.kappa_gmm if cf.kappa_gmm is not None else base.kappa_gmm,
        theta_max_deg=cf.theta_max_deg if cf.theta_max_deg is not None else base.theta_max_deg,
        swing_hz=cf.swing_hz if cf.swing_hz is not None else base.swing_hz,
        damping=cf.damping if cf.damping is not None else base.damping,
        arm_inertia_gmm2=cf.inertia_gmm2 if cf.inertia_gmm2 is not None else base.arm_inertia_gmm2,
        pawn_height_mm=cf.pawn_height_mm if cf.pawn_height_mm is not None else base.pawn_height_mm,
        height_measured=base.height_measured or cf.pawn_height_mm is not None,
        inertia_growth=cf.inertia_growth if cf.inertia_growth is not None else base.inertia_growth,
        swing_measured=base.swing_measured or cf.swing_hz is not None,
        holder_x={**base.holder_x, **cf.holder_x},
        created=cf.created,
        source=f"{base.source} + {cf.path}",
    )


def for_config(cfg: Any, *, use_file: bool = True) -> tuple[ArmCalibration, Path | None]:
    """What the daemon runs with: the config, plus calibration.toml beside it when there is one.

    Returns (calibration, the file used or None). CalibrationFileError if the file is bad:
    the daemon must not start half-calibrated.
    """
    base = from_config(cfg)
    path = calibration_path(cfg.source, cfg.base_dir)
    if not use_file or not path.is_file():
        return base, None
    return apply_file(base, load_file(path), cfg.model()), path


# ----------------------------------------------------------------------------- captured signals

@dataclass(frozen=True)
class ChannelStats:
    """One load cell over a capture (glitches and rail readings left out of the statistics)."""

    name: str
    total: int
    n: int
    mean: float
    sigma: float          # spread of the readings
    noise: float          # sample-to-sample noise (from successive differences)
    change: float         # mean of the last third minus mean of the first third
    glitches: int
    rails: int


def channel_stats(rows: Iterable[Row], name: str) -> ChannelStats:
    values = []
    total = glitches = rails = 0
    for _, sensor, v in rows:
        if sensor != name:
            continue
        total += 1
        if v >= NEAR_RAIL or v <= -NEAR_RAIL:
            rails += 1
        elif v in GLITCH_VALUES:
            glitches += 1
        else:
            values.append(float(v))
    # a flipped bit is one reading far from both its neighbours, which agree with each other (a real change stays)
    if len(values) >= 3:
        jump = 12.0 * max(_noise_of(values), 1.0) + 50.0
        kept = [values[0]] if abs(values[0] - values[1]) <= jump else []
        for a, v, b in zip(values, values[1:], values[2:]):
            if abs(v - a) > jump and abs(v - b) > jump and abs(a - b) <= jump:
                continue
            kept.append(v)
        if abs(values[-1] - values[-2]) <= jump:
            kept.append(values[-1])
        glitches += len(values) - len(kept)
        values = kept
    n = len(values)
    if n == 0:
        return ChannelStats(name, total, 0, math.nan, math.nan, math.nan, math.nan, glitches, rails)
    mean = sum(values) / n
    sigma = math.sqrt(sum((v - mean) ** 2 for v in values) / max(1, n - 1))
    diffs = sorted(abs(b - a) for a, b in zip(values, values[1:]))
    # the median difference resists a stray glitch of another value that the rail/zero test missed
    noise = (diffs[len(diffs) // 2] / (0.6745 * math.sqrt(2))) if diffs else 0.0
    third = max(1, n // 3)
    change = sum(values[-third:]) / third - sum(values[:third]) / third
    return ChannelStats(name, total, n, mean, sigma, noise, change, glitches, rails)


def _check_channel(s: ChannelStats, what: str) -> None:
    if s.total == 0:
        raise CalibrationRefused(f"{s.name} sent no readings during {what}: check its wiring (DOUT/SCK) and power")
    if s.rails > 0.1 * s.total:
        raise CalibrationRefused(
            f"{s.name} is saturated during {what} ({s.rails} of {s.total} readings at full scale): the bridge is "
            "overloaded or miswired (E+/E-, A+/A-); nothing can be calibrated from a clipped signal")
    if s.glitches > 0.3 * s.total or s.n < MIN_SAMPLES:
        raise CalibrationRefused(
            f"{s.name} gave too few good readings during {what} ({s.n} of {s.total}; {s.glitches} read 0 or -1): "
            "check the HX711's wiring and supply")
    third = max(1, s.n // 3)
    allowed = 6.0 * max(s.noise, 1.0) * math.sqrt(2.0 / third) + 3.0
    moving = abs(s.change) > allowed
    if moving or s.sigma > 3.0 * max(s.noise, 1.0) + 2.0:
        raise CalibrationRefused(
            f"{s.name} was still changing during {what} (by {s.change:+.0f} counts, noise ±{s.noise:.0f}): take your "
            "hands off, let the arm come to rest and try again")


def _series(rows: Iterable[Row], sensor: str) -> tuple[list[float], list[float]]:
    ts, vs = [], []
    for t, s, v in rows:
        if s == sensor:
            ts.append(float(t))
            vs.append(float(v))
    return ts, vs


def _tilt_closed_any(rows: Sequence[Row], debounce_s: float) -> bool:
    deb = TiltDebouncer(debounce_s)
    closed_at_end = False
    for t, s, v in rows:
        if s == "tilt":
            closed_at_end = deb.feed(t, v >= 0.5)
    return closed_at_end


def _noise_of(values: Sequence[float]) -> float:
    diffs = sorted(abs(b - a) for a, b in zip(values, values[1:]))
    return diffs[len(diffs) // 2] / (0.6745 * math.sqrt(2)) if diffs else 0.0


SWING_SEARCH_HZ = (0.35, 3.0)     # wider than the 0.5-2 Hz real arms have: a loaded arm swings slower


def _coarse_omega(ts: Sequence[float], vs: Sequence[float], damping: float, step: float = 0.02) -> float | None:
    """The frequency (rad/s) whose swing fits the readings best, over every frequency an arm may have, in steps of
    `step` (relative), on every few readings (a swing needs no 100 Hz to show its frequency)."""
    every = max(1, len(ts) // 200)
    cts, cvs = ts[::every], vs[::every]
    lo, hi = (2 * math.pi * f for f in SWING_SEARCH_HZ)
    n = math.ceil(math.log(hi / lo) / step) + 1
    best = None
    for k in range(n):
        w = lo * math.exp(k * step)
        fit = fit_swing(cts, cvs, w, damping)
        if fit is not None and (best is None or fit.rms < best[0]):
            best = (fit.rms, w)
    return None if best is None else best[1]


@dataclass(frozen=True)
class RestAngle:
    sin: float           # reading - level at rest (sin θ), from the swing fit
    sigma: float
    amplitude: float
    noise: float
    swing_hz: float
    damping: float
    on_board: bool


def rest_angle(rows: Sequence[Row], axis: str, level_g: float, *, swing_hz: float = DEFAULT_SWING_HZ,
               damping: float = DEFAULT_DAMPING, debounce_s: float = DEFAULT_TILT_DEBOUNCE_S,
               refine: bool = False, what: str = "this step") -> RestAngle:
    """Where the arm rests during a capture, even while it still swings."""
    ts, vs = _series(rows, axis)
    if len(ts) < 20:
        raise CalibrationRefused(f"the accelerometer sent too few readings during {what} ({len(ts)}): check it on "
                                 "the I2C bus (i2cdetect)")
    vs = [v - level_g for v in vs]
    noise = _noise_of(vs)
    omega = 2 * math.pi * swing_hz
    if refine:
        # an arm nobody measured may swing anywhere from half a hertz to two: look across all of it first (a search
        # about a guess finds only a nearby minimum of the residuals), then refine about the best
        omega = _coarse_omega(ts, vs, damping) or omega
        fit = refine_swing(ts, vs, omega, damping, noise=noise, span=0.05)
    else:
        fit = fit_swing(ts, vs, omega, damping, noise=noise)
    if fit is None:
        raise CalibrationRefused(f"the accelerometer readings during {what} could not be fitted")
    if fit.rms > 3.0 * noise + 0.002:
        raise CalibrationRefused(
            f"the arm was not swinging freely during {what} (residual {fit.rms:.4f} g against noise {noise:.4f} g): "
            "take your hands off the arm and keep the table still, then try again")
    on_board = _tilt_closed_any(rows, debounce_s)
    return RestAngle(fit.rest, fit.rest_sigma, fit.amplitude, noise, fit.omega / (2 * math.pi), fit.zeta, on_board)


# ----------------------------------------------------------------------------- the steps' maths

@dataclass(frozen=True)
class TareResult:
    offsets: Mapping[str, float]
    noise_counts: Mapping[str, float]
    level_g: float | None
    accel_noise_g: float | None


def tare(rows: Sequence[Row], cells: Sequence[str], *, axis: str | None = None,
         debounce_s: float = DEFAULT_TILT_DEBOUNCE_S) -> TareResult:
    """Zero of every load cell and the accelerometer's level reading, from the empty arm at rest."""
    offsets, noise = {}, {}
    for name in cells:
        s = channel_stats(rows, name)
        _check_channel(s, "the tare")
        offsets[name] = s.mean
        noise[name] = s.noise
    level = anoise = None
    if axis is not None:
        r = rest_angle(rows, axis, 0.0, debounce_s=debounce_s, what="the tare")
        if r.on_board:
            raise CalibrationRefused("the arm rests on the board during the tare: take everything off it and let it "
                                     "swing free")
        if r.amplitude > 0.05:
            swing = math.degrees(math.asin(min(1.0, r.amplitude)))
            raise CalibrationRefused(f"the arm was still swinging (±{swing:.1f}°) during the tare: wait until it "
                                     "rests")
        level, anoise = r.sin, r.noise
    return TareResult(offsets, noise, level, anoise)


def counts_per_gram(t: TareResult, rows: Sequence[Row], mass_g: float) -> dict[str, float]:
    """Each cell's counts per gram from a known weight on the arm.

    The arm hangs from one free pivot, so how its load splits among the cells under
    the bridge does not depend on where the pawns sit: only the sum is calibrated.
    Each cell is given the counts per gram that makes it report an equal share of
    the known weight, so the sum reads the weight exactly.
    """
    if not (isinstance(mass_g, (int, float)) and math.isfinite(mass_g) and mass_g > 0):
        raise CalibrationRefused(f"the known weight must be a positive number of grams, not {mass_g!r}")
    n = len(t.offsets)
    deltas, noises = {}, {}
    for name, offset in t.offsets.items():
        s = channel_stats(rows, name)
        _check_channel(s, "the weighing")
        deltas[name] = s.mean - offset
        noises[name] = max(s.noise, t.noise_counts.get(name, 0.0), 1.0)
    total = sum(deltas.values())
    noise = math.sqrt(sum(v * v for v in noises.values()))
    need = max(MIN_WEIGHT_COUNTS, MIN_WEIGHT_SNR * noise)
    if abs(total) < need:
        grams = need / abs(total) * mass_g if total else float("inf")
        raise CalibrationRefused(
            f"the {mass_g:g} g weight moved the reading by only {total:+.0f} counts (noise ±{noise:.0f}); "
            f"at least {need:.0f} are needed: use a heavier weight (about {grams:.0f} g or more)")
    for name, d in deltas.items():
        if abs(d) < MIN_CELL_SNR * noises[name] or d * total < 0:
            raise CalibrationRefused(
                f"{name} hardly responded to the weight ({d:+.0f} counts, noise ±{noises[name]:.0f}) while the others "
                "did: is it under the bridge and wired the same way round?")
    return {name: n * d / mass_g for name, d in deltas.items()}


@dataclass(frozen=True)
class StiffnessResult:
    kappa_gmm: float
    swing_hz: float          # as measured, with the weight on the arm
    damping: float
    sin_theta: float
    swing_measured: bool = True       # False: the swing was too small to show its frequency (the defaults stand)

    def empty_arm(self, mass_g: float, x_mm: float) -> ArmSwing:
        """The empty arm's swing, from this one measured with `mass_g` at `x_mm` (which added m·x² to it)."""
        return ArmSwing.measured(self.kappa_gmm, self.swing_hz, self.damping, mass_g * x_mm * x_mm)


def stiffness(rows: Sequence[Row], *, axis: str, level_g: float, x_mm: float, mass_g: float,
              swing_hz: float = DEFAULT_SWING_HZ, damping: float = DEFAULT_DAMPING,
              debounce_s: float = DEFAULT_TILT_DEBOUNCE_S) -> StiffnessResult:
    """κ = m·x / sin θ from a known weight at a known holder; also the swing's frequency and damping."""
    if not (math.isfinite(mass_g) and mass_g > 0):
        raise CalibrationRefused(f"the known weight must be a positive number of grams, not {mass_g!r}")
    r = rest_angle(rows, axis, level_g, swing_hz=swing_hz, damping=damping, debounce_s=debounce_s, refine=True,
                   what="the stiffness step")
    if r.on_board:
        raise CalibrationRefused("the arm rests on the board with the weight on it, so its angle says nothing about "
                                 "its stiffness: use a lighter weight or a holder nearer the pivot")
    if abs(r.sin) < max(0.004, 20 * r.sigma):
        raise CalibrationRefused(
            f"the arm barely tilted (sin θ = {r.sin:+.4f} ± {r.sigma:.4f}): use a heavier weight or a holder farther "
            "from the pivot")
    if r.sin * x_mm < 0:
        raise CalibrationRefused(
            "the arm tilted the wrong way for that holder: the accelerometer's axis points the other way (turn it "
            "round or pick the other axis), or the weight is not on the holder named")
    # trust the fitted swing only when it was big enough to show its frequency
    swing_ok = r.amplitude > 10 * r.noise
    return StiffnessResult(mass_g * x_mm / r.sin, r.swing_hz if swing_ok else swing_hz,
                           r.damping if swing_ok else damping, r.sin, swing_ok)


def theta_max(rows: Sequence[Row], *, axis: str, level_g: float,
              debounce_s: float = DEFAULT_TILT_DEBOUNCE_S, edge_s: float = 0.15) -> float:
    """θ_max in degrees: the angle while the arm rests on the board with the tilt switch closed."""
    ts, vs = _series(rows, axis)
    if not ts:
        raise CalibrationRefused("no accelerometer readings: θ_max is read from the accelerometer")
    deb = TiltDebouncer(debounce_s)
    runs: list[tuple[float, float]] = []
    start = None
    seen = False
    for t, s, v in rows:
        if s != "tilt":
            continue
        seen = True
        closed = deb.feed(t, v >= 0.5)
        if closed and start is None:
            start = deb.changed_at
        elif not closed and start is not None:
            runs.append((start, deb.changed_at))
            start = None
    if not seen:
        raise CalibrationRefused("no tilt-switch readings: θ_max is the angle at which the tilt switch closes")
    if start is not None:
        runs.append((start, ts[-1]))
    picked = [v - level_g for t, v in zip(ts, vs)
              if any(a + edge_s <= t <= b - edge_s for a, b in runs)]
    if not runs:
        raise CalibrationRefused("the tilt switch never closed: press the end down until the arm rests on the board, "
                                 "and hold it there")
    if len(picked) < 20:
        raise CalibrationRefused("the arm rested on the board too briefly: hold it down for two seconds")
    mean = sum(picked) / len(picked)
    spread = math.sqrt(sum((v - mean) ** 2 for v in picked) / (len(picked) - 1))
    noise = _noise_of(picked)
    if spread > 4 * noise + 0.003:
        raise CalibrationRefused("the angle moved while the tilt switch was closed: the arm was not resting on the "
                                 "board (press it down firmly and hold still)")
    deg = math.degrees(math.asin(min(1.0, abs(mean))))
    if not 1.0 <= deg <= 45.0:
        raise CalibrationRefused(f"the tilt switch closed at {deg:.1f}°, which is not a plausible θ_max (1-45°): "
                                 "check the switch's position and the accelerometer's axis")
    return deg


def holder_position(rows: Sequence[Row], *, axis: str, level_g: float, kappa_gmm: float, mass_g: float,
                    expected_x: float | None = None, swing_hz: float = DEFAULT_SWING_HZ,
                    damping: float = DEFAULT_DAMPING, debounce_s: float = DEFAULT_TILT_DEBOUNCE_S,
                    holder: str = "the holder") -> float:
    """x = Δτ / m: the holder's position from the known weight in it (the arm otherwise empty)."""
    r = rest_angle(rows, axis, level_g, swing_hz=swing_hz, damping=damping, debounce_s=debounce_s,
                   what=f"the measurement of {holder}")
    if r.on_board:
        raise CalibrationRefused(f"the arm rests on the board with the weight in {holder}: use a lighter weight")
    x = kappa_gmm * r.sin / mass_g
    if abs(r.sin) < 10 * r.sigma:
        raise CalibrationRefused(f"the arm barely tilted with the weight in {holder}: use a heavier weight")
    if expected_x is not None and x * expected_x < 0:
        raise CalibrationRefused(
            f"the arm tilted to the {'+' if x > 0 else '-'} side, but {holder} is on the "
            f"{'+' if expected_x > 0 else '-'} side: is the weight in {holder}?")
    return x


def arm_load(rows: Sequence[Row], t: TareResult, cpg: Mapping[str, float], what: str) -> float:
    """Grams on the arm during a capture, once the tare and the counts per gram are known."""
    total = 0.0
    for name, offset in t.offsets.items():
        s = channel_stats(rows, name)
        _check_channel(s, what)
        total += (s.mean - offset) / cpg[name]
    return total


@dataclass(frozen=True)
class PawnReading:
    """The arm at rest with a load on it: how much it carries, its angle, and its swing (when big enough to show)."""

    mass_g: float
    sin: float
    sin_sigma: float
    swing_hz: float
    damping: float
    swing_measured: bool
    omega_var: float = math.inf      # how well the swing showed its frequency ((rad/s)²)


def pawn_reading(rows: Sequence[Row], *, tare_result: TareResult, cpg: Mapping[str, float], axis: str,
                 level_g: float, swing_hz: float = DEFAULT_SWING_HZ, damping: float = DEFAULT_DAMPING,
                 debounce_s: float = DEFAULT_TILT_DEBOUNCE_S, what: str = "this step") -> PawnReading:
    """What the cells weigh and where the arm rests (its swing fitted, frequency and damping searched too)."""
    mass = arm_load(rows, tare_result, cpg, what)
    r = rest_angle(rows, axis, level_g, swing_hz=swing_hz, damping=damping, debounce_s=debounce_s, refine=True,
                   what=what)
    if r.on_board:
        raise CalibrationRefused(f"the arm rests on the board during {what}, so its angle says nothing: take "
                                 "some weight off its heavy side")
    # the swing's frequency, weighed by how well it shows it: a small swing in a noisy accelerometer says little
    ts, vs = _series(rows, axis)
    seen = measure_swing(ts, [v - level_g for v in vs], 2 * math.pi * r.swing_hz, r.damping, noise=r.noise, whole=True)
    if seen is None:
        return PawnReading(mass, r.sin, r.sigma, swing_hz, damping, False)
    return PawnReading(mass, r.sin, r.sigma, seen.omega / (2 * math.pi), seen.zeta, True, seen.omega_var)


def pawn_height(*, kappa_w: float, weight_g: float, weight_x: float, load_g: float, sin_load: float,
                sin_both: float) -> float:
    """How high the pawns sit above the pivot, from the known weight's tilt on the empty arm (κ_w = W·x / sin θ, which
    is κ − W·h) and on the arm carrying `load_g` grams of pawns (sin θ before and after the weight went on).

    With κ_eff = κ − Σ m·h, sin θ_load = τ_P / (κ − P·h) and sin θ_both = (τ_P + W·x) / (κ − (P + W)·h); with
    κ = κ_w + W·h, h is the one unknown left."""
    if load_g < 2.0 * weight_g:
        raise CalibrationRefused(
            f"the arm carries only {load_g:.1f} g of pawns besides the weight: put at least {2 * weight_g:.0f} g on "
            "it (a dozen pawns or so), in holders the same distance either side of the pivot")
    moved = sin_both - sin_load
    if moved * weight_x <= 0 or abs(moved) < 0.2 * weight_g * abs(weight_x) / kappa_w:
        raise CalibrationRefused("the arm hardly tilted when the weight went on: is the weight in its holder, and "
                                 "were the pawns left as they were?")
    den = sin_both * load_g + sin_load * (weight_g - load_g)
    h = (kappa_w * moved - weight_g * weight_x) / den
    if abs(h) > MAX_HEIGHT_MM or kappa_w + weight_g * h - (load_g + weight_g) * h < MIN_LOADED_KAPPA * kappa_w:
        raise CalibrationRefused(
            f"the loaded arm gives a pawn height of {h:+.0f} mm above the pivot, which no arm has: were the pawns left "
            "where they were when the weight went on, and the arm resting free both times?")
    return h


@dataclass(frozen=True)
class SwingLook:
    """One swing measured during the calibration: `mass_g` in the holder at `x_mm`, alone on the arm."""

    mass_g: float
    x_mm: float
    omega: float
    zeta: float
    omega_var: float = 0.0


MAX_GROWTH_SIGMA = 0.15    # a growth known worse than this stays the point-mass physics' 1


def swing_as_loaded(looks: Sequence[SwingLook], kappa_gmm: float, height_mm: float = 0.0, *,
                    max_rel_sigma: float = math.inf) -> ArmSwing | None:
    """The empty arm's swing and how a pawn adds to it, from swings measured with one weight in several holders.

    Each look gives the arm's whole moment of inertia, κ_eff·g / ω²; less m·h² (a pawn above the pivot), that is
    I0 + growth · m·x². Over holders at several distances a straight line gives both: the inertia's growth as the
    arm loads, which the follower predicts every swing from. A growth the looks do not pin down (a heavy arm, a
    light weight) stays 1, the point mass; one look gives the empty arm alone, as before the walk. None when the
    empty arm's ω is known no better than `max_rel_sigma` (1σ, relative; the looks' scatter counted when it is
    wider than their variances say): a swing too damped to show itself leaves the arm unmeasured."""
    if not looks:
        return None
    pts = []
    for k in looks:
        kappa = max(0.05 * kappa_gmm, kappa_gmm - height_mm * k.mass_g)
        total = kappa * G_MM_S2 / (k.omega * k.omega)
        # I ∝ ω⁻², so its relative variance is 4·var(ω)/ω²; never surer than 0.2 % (the κ it rests on)
        var = total * total * max(4.0 * k.omega_var / (k.omega * k.omega), 0.002 ** 2)
        pts.append((k.mass_g * k.x_mm * k.x_mm, total - k.mass_g * height_mm * height_mm, total, k, 1.0 / var))
    total_w = sum(p[4] for p in pts)
    growth = 1.0
    intercept_var = 1.0 / total_w
    if len(pts) >= 3:
        mx = sum(p[4] * p[0] for p in pts) / total_w
        my = sum(p[4] * p[1] for p in pts) / total_w
        sxx = sum(p[4] * (p[0] - mx) ** 2 for p in pts)
        if sxx > 0:
            slope = sum(p[4] * (p[0] - mx) * (p[1] - my) for p in pts) / sxx
            # the scatter about the line, when it is wider than the looks' own variances say
            chi2 = sum(p[4] * (p[1] - my - slope * (p[0] - mx)) ** 2 for p in pts) / (len(pts) - 2)
            if math.sqrt(max(1.0, chi2) / sxx) <= MAX_GROWTH_SIGMA and MIN_GROWTH <= slope <= MAX_GROWTH:
                growth = slope
                intercept_var = 1.0 / total_w + mx * mx / sxx
    inertia = sum(p[4] * (p[1] - growth * p[0]) for p in pts) / total_w
    inertia = max(inertia, 0.05 * max(p[2] for p in pts))
    if len(pts) >= 2:
        free = len(pts) - (2 if growth != 1.0 else 1)
        scatter = sum(p[4] * (p[1] - growth * p[0] - inertia) ** 2 for p in pts) / max(1, free)
        intercept_var *= max(1.0, scatter)
    # ω ∝ I^(-1/2)
    if 0.5 * math.sqrt(intercept_var) / inertia > max_rel_sigma:
        return None
    viscous = sum(p[4] * 2 * p[3].zeta * p[3].omega * p[2] for p in pts) / total_w
    return ArmSwing(kappa_gmm, inertia, viscous, height_mm, growth)


def holders_problem(model: Model, holder_x: Mapping[str, float]) -> tuple[str, str] | None:
    """What is wrong with measured holder positions, as (holder, reason), or None.

    A holder must lie on the side the model puts it, nearer its own place in the model than any other holder's
    (farther off, a pawn in it could not be told from one in the neighbour the model has there, and the holders
    would not keep the model's order along the arm: the model file is what to correct then)."""
    by_x = sorted(model.holders, key=lambda h: h.x_mm)
    for i, h in enumerate(by_x):
        if h.id not in holder_x:
            continue
        x = holder_x[h.id]
        if x * h.x_mm <= 0:
            return h.id, (f"{h.id} measured at {x:+.1f} mm, on the other side of the pivot from its place in the "
                          f"model ({h.x_mm:+.1f} mm): was the pawn in {h.id}?")
        toward = by_x[i + 1] if x > h.x_mm and i + 1 < len(by_x) else by_x[i - 1] if x < h.x_mm and i > 0 else None
        if toward is not None and abs(x - toward.x_mm) < abs(x - h.x_mm):
            return h.id, (f"{h.id} measured at {x:+.1f} mm, nearer {toward.id}'s place in the model "
                          f"({toward.x_mm:+.1f} mm) than its own ({h.x_mm:+.1f} mm): was the pawn in {h.id}? If your "
                          "arm's holders sit elsewhere, describe them in a model file")
        if toward is None and x != h.x_mm:
            inner = by_x[i - 1] if x > h.x_mm else by_x[i + 1]
            if abs(x - h.x_mm) > 0.5 * abs(h.x_mm - inner.x_mm):
                return h.id, (f"{h.id} measured at {x:+.1f} mm, more than half a holder's spacing beyond its place "
                              f"in the model ({h.x_mm:+.1f} mm): was the pawn in {h.id}? If your arm's holders sit "
                              "elsewhere, describe them in a model file")
    # (each nearer its own place than its neighbours', the holders keep the model's order along the arm)
    return None
