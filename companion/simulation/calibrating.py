"""Our own simulated arms as a table would run them: calibrated perfectly, not at all, or by `companion calibrate`.

What nobody measures in advance is drawn over a wide range (`ArmStyle.off_the_model`: holders off the model's
places, pawns sitting above the pivot), and the benchmarks follow each arm three ways:

* `given`: the arm as its simulation knows it (the perfect calibration the benchmarks always used);
* `none`: before anyone calibrates — the config's load cells and accelerometer (a config must name them), the
  model's stiffness and tipping angle, no swing, the holders where the model puts them, the pawns at the pivot's
  height: what the follower then does not know it estimates at the table;
* `walked`: calibrated by the very steps of `companion calibrate` on the simulated table — the known weight, the
  tipping angle, the loaded arm, the walk through every holder — each step tried again when refused, as a person
  would.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, replace

from companion.games.balance_model import Model
from companion.sensing.calibration import ArmCalibration
from companion.sensing.calibration_steps import CalibrationSession
from companion.simulation.traces import ArmStyle, NoiseProfile
from companion.table.walkthrough import SimulatedArm

CALIBRATIONS = ("given", "none", "walked")
TRIES = 3


def built_off(arm: ArmStyle, model: Model, seed: int) -> ArmStyle:
    """The session's arm built off the model (its own draw, so the arm's swing and hands stay the seed's)."""
    return arm.off_the_model(model, random.Random(seed * 53 + 11))


def uncalibrated(model: Model, sensors: ArmCalibration) -> ArmCalibration:
    """The arm as a table runs it before anyone calibrates: the load cells and accelerometer the config states
    (`sensors`), the rest the model's."""
    phys = model.physics
    return ArmCalibration(cells=tuple(replace(c, noise_counts=None) for c in sensors.cells), axis=sensors.axis,
                          level_g=sensors.level_g, kappa_gmm=phys.kappa_gmm, theta_max_deg=phys.theta_max_deg,
                          tilt_debounce_s=sensors.tilt_debounce_s, accelerometer=sensors.accelerometer,
                          source="uncalibrated")


@dataclass(frozen=True)
class Walked:
    """A walk-through's calibration and how far what it measured lies from the arm as built."""

    calibration: ArmCalibration
    holders_rms_mm: float          # the holders' places against the built arm's (scaled as the known weight's holder)
    holders_worst_mm: float
    height_error_mm: float
    swing_error: float             # relative, of the empty arm's frequency
    refused: int                   # captures refused and tried again


def walked(model: Model, arm: ArmStyle, profile: NoiseProfile | str, seed: int,
           sensors: ArmCalibration) -> Walked:
    """`companion calibrate`'s steps on this arm (the simulated table stands in for the person), every optional one
    too; the load cells and accelerometer as the config states them (`sensors`), the arm as the steps measured it."""
    sim = SimulatedArm(model, seed=seed + 4447, profile=profile, arm=arm)
    session = CalibrationSession(model, sim.base_calibration(), known_mass_g=sim.known_mass_g)
    refused = 0

    def step(name: str, **params) -> bool:
        nonlocal refused
        for _ in range(TRIES):
            info = session.begin(name, 0.0, **params)
            sim.prepare(name, {k: info[k] for k in ("holder", "mass_g", "weigh_holder") if k in info})
            if session.finish(sim.capture(info["seconds"], lambda f: None)).ok:
                return True
            refused += 1
        return False

    for name in ("tare", "weigh"):
        if not step(name):
            raise RuntimeError(f"seed {seed}: the simulated walk-through could not get past {name}: "
                               f"{session.results[name].message}")
    step("theta_max")
    if step("loaded"):
        step("loaded_weight")
    for h in model.holders:
        step("holder", holder=h.id)
    measured = session.result()
    cal = replace(measured, cells=sensors.cells, axis=sensors.axis, level_g=sensors.level_g,
                  tilt_debounce_s=sensors.tilt_debounce_s, source="walked")
    built = arm.built(model)
    yard = session.weigh[1]
    scale = model.by_id[yard].x_mm / built.by_id[yard].x_mm
    misses = [cal.holder_x[h.id] - built.by_id[h.id].x_mm * scale for h in model.holders if h.id in cal.holder_x]
    swing = session.swing()
    return Walked(cal, math.sqrt(sum(m * m for m in misses) / len(misses)) if misses else math.nan,
                  max((abs(m) for m in misses), default=math.nan), cal.pawn_height_mm - arm.pawn_height_mm,
                  (swing.empty_hz / arm.frequency_hz - 1.0) if swing else math.nan, refused)


def walks_summary(walks: list[Walked]) -> str:
    """How far the walk-throughs' measurements lie from the arms as built, the worst of each, for a benchmark."""
    swings = [abs(w.swing_error) for w in walks if math.isfinite(w.swing_error)]
    swing = (f"the empty swing within {max(swings) * 100:.1f} % on {len(swings)}" if swings else "no swing measured")
    if len(swings) < len(walks):
        swing += f", left unmeasured on {len(walks) - len(swings)} (too damped to show it)"
    return (f"holders within {max(w.holders_rms_mm for w in walks):.2f} mm rms of where they are (worst "
            f"{max(w.holders_worst_mm for w in walks):.2f} mm), pawn height within "
            f"{max(abs(w.height_error_mm) for w in walks):.2f} mm, {swing}, "
            f"{sum(w.refused for w in walks)} captures refused and taken again")
