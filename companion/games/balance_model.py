"""Balance models: where the holders sit on the arm, and the arm's physics.

A model's layout (holders, seat paths) comes from a TOML file, because models B-D
and 3-4 player layouts exist only as booklet drawings and every home-built arm
differs. The physics (stiffness, tipping angle, pawn masses and their
uncertainties) belongs to the physical arm and pawns and comes from the main
config; built-in defaults fill what is not given.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

MODELS_DIR = Path(__file__).parent / "models"
PATH_LENGTH = 7  # holders per area (start 1-7, finish 1-7)
SIZES = ("L", "M")

DEFAULT_KAPPA_GMM = 17000.0
DEFAULT_THETA_MAX_DEG = 10.0
DEFAULT_PAWN_MASS_G = {"L": 10.0, "M": 6.0}
DEFAULT_MASS_SIGMA_G = {"L": 0.3, "M": 0.2}
DEFAULT_TIP_SIGMA_FRACTION = 0.03
DEFAULT_RISKY_PROBABILITY = 0.02
MAX_PAWN_HEIGHT_MM = 200.0


class ModelError(ValueError):
    """A balance model file or physics value that cannot be used; the message names the problem."""


@dataclass(frozen=True)
class Holder:
    id: str
    x_mm: float
    capacity: int
    # holders whose opponent pawn an attacking pawn arriving here may beat (models C/D reach a neighbour)
    beats: tuple[str, ...]


@dataclass(frozen=True)
class SeatPath:
    start: tuple[str, ...]
    finish: tuple[str, ...]

    @property
    def walk(self) -> tuple[str, ...]:
        """The 14 holders a pawn of this seat passes, start 1 first."""
        return self.start + self.finish


@dataclass(frozen=True)
class Physics:
    kappa_gmm: float
    theta_max_deg: float
    pawn_mass_g: Mapping[str, float]
    mass_sigma_g: Mapping[str, float]
    tip_sigma_gmm: float
    risky_probability: float
    # how high the pawns' centre of mass sits above the pivot: each gram there leans out as the arm tilts, so a
    # loaded arm is less stiff (κ_eff = κ − Σ m·h) and tips at a smaller torque
    pawn_height_mm: float = 0.0

    @property
    def tip_torque(self) -> float:
        """τ_tip of the empty arm."""
        return self.kappa_gmm * math.sin(math.radians(self.theta_max_deg))

    def kappa_at(self, load_g: float) -> float:
        """κ_eff with `load_g` grams of pawns on the arm."""
        return max(0.05 * self.kappa_gmm, self.kappa_gmm - self.pawn_height_mm * load_g)

    def tip_torque_at(self, load_g: float) -> float:
        """τ_tip with `load_g` grams of pawns on the arm: it falls as the arm fills when the pawns sit above the pivot."""
        return self.kappa_at(load_g) * math.sin(math.radians(self.theta_max_deg))


@dataclass(frozen=True)
class Model:
    name: str
    holders: tuple[Holder, ...]
    seats: Mapping[int, SeatPath]
    physics: Physics
    source: str = "built-in"
    by_id: Mapping[str, Holder] = field(default=None, repr=False, compare=False)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_id", {h.id: h for h in self.holders})

    @property
    def tip_torque(self) -> float:
        """τ_tip = κ · sin θ_max in g·mm."""
        return self.physics.tip_torque

    def path(self, seat: int) -> SeatPath:
        return self.seats[seat]

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "source": self.source,
            "tip_torque": self.tip_torque,
            "kappa_gmm": self.physics.kappa_gmm,
            "theta_max_deg": self.physics.theta_max_deg,
            "pawn_mass_g": dict(self.physics.pawn_mass_g),
            "pawn_height_mm": self.physics.pawn_height_mm,
            "holders": [{"id": h.id, "x_mm": h.x_mm, "capacity": h.capacity} for h in self.holders],
            "seats": {str(s): {"start": list(p.start), "finish": list(p.finish)} for s, p in self.seats.items()},
        }


def _number(value: Any, what: str, *, positive: bool = True) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ModelError(f"{what} must be a number, not {value!r}")
    if positive and value <= 0:
        raise ModelError(f"{what} must be greater than 0, not {value!r}")
    return float(value)


def _per_size(value: Any, what: str, default: Mapping[str, float], *, allow_zero: bool = False) -> dict[str, float]:
    if value is None:
        return dict(default)
    if not isinstance(value, Mapping):
        raise ModelError(f"{what} must be a table like {{ L = …, M = … }}, not {value!r}")
    unknown = set(value) - set(SIZES)
    if unknown:
        raise ModelError(f"{what} has unknown pawn size(s) {sorted(unknown)}; sizes are L and M")
    out = dict(default)
    for size, v in value.items():
        out[size] = _number(v, f"{what}.{size}", positive=not allow_zero)
        if allow_zero and out[size] < 0:
            raise ModelError(f"{what}.{size} must not be negative")
    return out


def make_physics(
    *,
    kappa_gmm: float | None = None,
    theta_max_deg: float | None = None,
    pawn_mass_g: Mapping[str, float] | None = None,
    mass_sigma_g: Mapping[str, float] | None = None,
    tip_sigma_gmm: float | None = None,
    risky_probability: float | None = None,
    pawn_height_mm: float | None = None,
) -> Physics:
    kappa = DEFAULT_KAPPA_GMM if kappa_gmm is None else _number(kappa_gmm, "kappa_gmm")
    theta = DEFAULT_THETA_MAX_DEG if theta_max_deg is None else _number(theta_max_deg, "theta_max_deg")
    if theta >= 90:
        raise ModelError(f"theta_max_deg must be below 90, not {theta}")
    masses = _per_size(pawn_mass_g, "pawn_mass_g", DEFAULT_PAWN_MASS_G)
    sigmas = _per_size(mass_sigma_g, "mass_sigma_g", DEFAULT_MASS_SIGMA_G, allow_zero=True)
    tip = kappa * math.sin(math.radians(theta))
    tip_sigma = DEFAULT_TIP_SIGMA_FRACTION * tip if tip_sigma_gmm is None else _number(tip_sigma_gmm, "tip_sigma_gmm", positive=False)
    if tip_sigma < 0:
        raise ModelError("tip_sigma_gmm must not be negative")
    risky = DEFAULT_RISKY_PROBABILITY if risky_probability is None else _number(risky_probability, "risky_probability")
    if not 0 < risky < 1:
        raise ModelError(f"risky_probability must be between 0 and 1, not {risky}")
    height = 0.0 if pawn_height_mm is None else _number(pawn_height_mm, "pawn_height_mm", positive=False)
    if abs(height) > MAX_PAWN_HEIGHT_MM:
        raise ModelError(f"pawn_height_mm must be within ±{MAX_PAWN_HEIGHT_MM:g} mm of the pivot, not {height!r}")
    return Physics(kappa, theta, masses, sigmas, tip_sigma, risky, height)


def parse_layout(data: Mapping[str, Any], source: str) -> tuple[str, tuple[Holder, ...], dict[int, SeatPath]]:
    """Check a model table (as read from TOML) and return (name, holders, seats)."""

    def fail(message: str) -> ModelError:
        return ModelError(f"{source}: {message}")

    if not isinstance(data, Mapping):
        raise fail("a model must be a table")
    unknown = set(data) - {"name", "holders", "seats"}
    if unknown:
        raise fail(f"unknown key(s) {sorted(unknown)}; a model has name, [[holders]] and [seats.N]")
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise fail("'name' must be a non-empty string")
    raw_holders = data.get("holders")
    if not isinstance(raw_holders, list) or not raw_holders:
        raise fail("there must be at least one [[holders]] table")
    holders: list[Holder] = []
    seen_ids: set[str] = set()
    seen_x: dict[float, str] = {}
    for i, raw in enumerate(raw_holders, start=1):
        where = f"holder #{i}"
        if not isinstance(raw, Mapping):
            raise fail(f"{where} must be a table")
        extra = set(raw) - {"id", "x_mm", "capacity", "beats"}
        if extra:
            raise fail(f"{where} has unknown key(s) {sorted(extra)}")
        hid = raw.get("id")
        if not isinstance(hid, str) or not hid.strip():
            raise fail(f"{where} needs a string 'id'")
        where = f"holder '{hid}'"
        if hid in seen_ids:
            raise fail(f"duplicate holder id '{hid}'")
        seen_ids.add(hid)
        try:
            x = _number(raw.get("x_mm"), f"{where}: x_mm", positive=False)
        except ModelError as exc:
            raise fail(str(exc)) from None
        if x == 0:
            raise fail(f"{where} sits on the pivot (x_mm = 0); holders are on either side of it")
        if x in seen_x:
            raise fail(f"holders '{seen_x[x]}' and '{hid}' are both at x_mm = {x}")
        seen_x[x] = hid
        cap = raw.get("capacity")
        if cap not in (1, 2) or isinstance(cap, bool):
            raise fail(f"{where}: capacity must be 1 (single) or 2 (double), not {cap!r}")
        beats = raw.get("beats", [hid])
        if not isinstance(beats, list) or not all(isinstance(b, str) for b in beats):
            raise fail(f"{where}: beats must be a list of holder ids")
        holders.append(Holder(hid, x, cap, tuple(beats)))
    for h in holders:
        for b in h.beats:
            if b not in seen_ids:
                raise fail(f"holder '{h.id}': beats names unknown holder '{b}'")
    raw_seats = data.get("seats")
    if not isinstance(raw_seats, Mapping) or not raw_seats:
        raise fail("there must be at least [seats.1] and [seats.2]")
    seats: dict[int, SeatPath] = {}
    for key, raw in raw_seats.items():
        if not str(key).isdigit() or int(key) < 1:
            raise fail(f"seat '{key}' must be a number from 1")
        seat = int(key)
        if not isinstance(raw, Mapping) or set(raw) != {"start", "finish"}:
            raise fail(f"[seats.{key}] must have exactly 'start' and 'finish'")
        areas = {}
        for area in ("start", "finish"):
            ids = raw[area]
            if not isinstance(ids, list) or len(ids) != PATH_LENGTH:
                raise fail(f"[seats.{key}] {area} must list {PATH_LENGTH} holder ids, in path order")
            for hid in ids:
                if hid not in seen_ids:
                    raise fail(f"[seats.{key}] {area} names unknown holder {hid!r}")
            areas[area] = tuple(ids)
        walk = areas["start"] + areas["finish"]
        if len(set(walk)) != len(walk):
            raise fail(f"[seats.{key}] passes a holder twice")
        seats[seat] = SeatPath(areas["start"], areas["finish"])
    if sorted(seats) != list(range(1, len(seats) + 1)) or len(seats) < 2:
        raise fail(f"seats must be numbered 1, 2, … without gaps (found {sorted(seats)})")
    return name.strip(), tuple(holders), seats


def load_model(
    name_or_path: str | Path = "A",
    *,
    kappa_gmm: float | None = None,
    theta_max_deg: float | None = None,
    pawn_mass_g: Mapping[str, float] | None = None,
    mass_sigma_g: Mapping[str, float] | None = None,
    tip_sigma_gmm: float | None = None,
    risky_probability: float | None = None,
) -> Model:
    """A built-in model by name ("A") or a model TOML file, combined with the arm's physics."""
    builtin = MODELS_DIR / f"{name_or_path}.toml"
    if isinstance(name_or_path, str) and "/" not in name_or_path and builtin.is_file():
        path, source = builtin, f"built-in model {name_or_path}"
    else:
        path = Path(name_or_path)
        source = str(path)
        if not path.is_file():
            known = sorted(p.stem for p in MODELS_DIR.glob("*.toml"))
            raise ModelError(f"{source}: no such model file (built-in models: {', '.join(known)})")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ModelError(f"{source}: not valid TOML: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelError(f"{source}: cannot read: {exc}") from None
    name, holders, seats = parse_layout(data, source)
    physics = make_physics(
        kappa_gmm=kappa_gmm,
        theta_max_deg=theta_max_deg,
        pawn_mass_g=pawn_mass_g,
        mass_sigma_g=mass_sigma_g,
        tip_sigma_gmm=tip_sigma_gmm,
        risky_probability=risky_probability,
    )
    return Model(name, holders, seats, physics, source)
