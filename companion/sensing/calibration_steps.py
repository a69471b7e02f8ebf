"""The calibration, step by step: one object both `companion calibrate` and the page drive.

A step is begun (with the known weight and a holder where it needs them), fed raw
samples for its capture time, and finished: the maths in calibration.py either
accepts the capture or refuses it with the reason, and the person tries again.

For the page (Flask handler + the daemon's sensor loop):

    session = CalibrationSession(model, base_calibration)
    session.steps()                               # what to show: titles, instructions, done, results
    session.begin("weigh", now, mass_g=10, holder="E4")
    ... the sensor loop calls session.feed(t, sensor, value) for every sample ...
    session.progress(now)                          # {"fraction": 0.4, ...} for a progress bar
    if session.ready(now): result = session.finish()   # result.ok, result.message, result.values
    session.save(calibration_path(config.source))  # once done: calibration.toml beside the config
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from companion.games.balance_model import Model
from companion.sensing.swing import ArmSwing
from companion.sensing.calibration import (ArmCalibration, CalibrationRefused, CellCalibration, PawnReading,
                                           SwingLook, TareResult, counts_per_gram, holders_problem, pawn_height,
                                           pawn_reading, save, stiffness, swing_as_loaded, tare, theta_max)

Row = tuple[float, str, float]

# an empty arm's ω known worse than this (1σ, relative) is left unmeasured: the follower then searches a wide fan of
# frequencies and dampings at the table, where a "measured" swing would hold it near a wrong one
MAX_SWING_REL_SIGMA = 0.05


@dataclass(frozen=True)
class Step:
    id: str
    title: str
    seconds: float
    needs: tuple[str, ...]
    instructions: str
    after: tuple[str, ...] = ()


STEPS: dict[str, Step] = {
    "tare": Step("tare", "Empty arm (tare)", 3.0, (),
                 "Take everything off the arm and your hands too; let it come to rest."),
    "weigh": Step("weigh", "Known weight (counts per gram and stiffness)", 5.0, ("mass_g", "holder"),
                  "Put the known weight of {mass_g:g} g in holder {holder} and take your hands off. "
                  "Let it swing: the swing is measured too.", ("tare",)),
    "theta_max": Step("theta_max", "Tipping angle (θ_max)", 4.0, (),
                      "Remove the weight. Press the arm's {side} end down onto the board and hold it there, "
                      "steady, until the capture ends.", ("tare",)),
    "loaded": Step("loaded", "Loaded arm (how much the pawns soften it)", 4.0, (),
                   "Put the pawns you play with on the arm, a dozen or more, in pairs of holders the same distance "
                   "either side of the pivot and none in {weigh_holder}; take your hands off.", ("tare", "weigh")),
    "loaded_weight": Step("loaded_weight", "Loaded arm with the known weight", 5.0, ("mass_g",),
                          "Leave those pawns where they are and add the known weight of {mass_g:g} g in holder "
                          "{weigh_holder}; take your hands off.", ("loaded",)),
    "holder": Step("holder", "Holder walk (where each holder really is)", 3.0, ("mass_g",),
                   "Clear the arm. Put the known weight of {mass_g:g} g alone on it in holder {holder} ({n} of "
                   "{total}) and take your hands off; the walk moves it on through every holder.", ("tare", "weigh")),
}


@dataclass(frozen=True)
class StepResult:
    step: str
    ok: bool
    message: str
    values: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"step": self.step, "ok": self.ok, "message": self.message, "values": self.values}


class CalibrationSession:
    def __init__(self, model: Model, base: ArmCalibration, *, known_mass_g: float | None = None):
        self.model = model
        self.base = base
        self.known_mass_g = known_mass_g
        self.tare_result: TareResult | None = None
        self.cpg: dict[str, float] = {}
        self.kappa_w: float | None = None              # m·x / sin θ with the known weight: κ − W·h
        self.weigh: tuple[float, str, SwingLook | None] | None = None   # (the weight, its holder, its swing)
        self.theta_max_deg: float | None = None
        self.loaded: PawnReading | None = None
        self.height: float | None = None               # the pawns' height above the pivot, from the loaded arm
        self.walk: dict[str, PawnReading] = {}         # the walk through the holders, holder by holder
        self.results: dict[str, StepResult] = {}
        self._step: Step | None = None
        self._params: dict[str, Any] = {}
        self._started = 0.0
        self._rows: list[Row] = []

    # ------------------------------------------------------------------ what to show
    def default_holder(self, mass_g: float) -> str:
        """Where to put the weight for the stiffness: the + side holder giving about 40 % of the tipping torque
        (a clear angle, well clear of the board)."""
        target = 0.4 * self.base.tip_torque
        plus = [h for h in self.model.holders if h.x_mm > 0]
        return min(plus, key=lambda h: abs(mass_g * h.x_mm - target)).id

    def plus_end(self) -> str:
        return max(self.model.holders, key=lambda h: h.x_mm).id

    def next_holder(self) -> str:
        """The walk's next holder: the first, in the model's order, not measured yet (all measured: from the start)."""
        for h in self.model.holders:
            if h.id not in self.walk:
                return h.id
        return self.model.holders[0].id

    def walked(self) -> bool:
        return all(h.id in self.walk for h in self.model.holders)

    def instructions(self, step: str, **params: Any) -> str:
        s = STEPS[step]
        holder = params.get("holder") or (self.next_holder() if step == "holder" else "?")
        ids = [h.id for h in self.model.holders]
        values = {"mass_g": params.get("mass_g") or self.known_mass_g or 0.0, "holder": holder,
                  "side": f"+ ({self.plus_end()})", "weigh_holder": self.weigh[1] if self.weigh else "?",
                  "n": ids.index(holder) + 1 if holder in ids else "?", "total": len(ids)}
        return s.instructions.format(**values)

    def steps(self) -> list[dict]:
        out = []
        for s in STEPS.values():
            r = self.results.get(s.id)
            done = self.walked() if s.id == "holder" else bool(r and r.ok)
            out.append({"id": s.id, "title": s.title, "seconds": s.seconds, "needs": list(s.needs),
                        "after": list(s.after), "instructions": self.instructions(s.id),
                        "done": done, "result": r.to_dict() if r else None})
        return out

    # ------------------------------------------------------------------ running a step
    @property
    def capturing(self) -> str | None:
        return self._step.id if self._step else None

    def begin(self, step: str, now: float, *, mass_g: float | None = None, holder: str | None = None) -> dict:
        """Start capturing for `step`; CalibrationRefused when it cannot start yet (and why)."""
        if step not in STEPS:
            raise CalibrationRefused(f"no calibration step {step!r} (steps: {', '.join(STEPS)})")
        s = STEPS[step]
        missing = [a for a in s.after if not (self.results.get(a) and self.results[a].ok)]
        if missing:
            raise CalibrationRefused(f"do the {' and '.join(STEPS[m].title.lower() for m in missing)} step first")
        if step in ("theta_max", "loaded", "loaded_weight", "holder") and not self.base.accelerometer:
            raise CalibrationRefused(f"the {s.title.lower()} is read from the accelerometer, and none is configured")
        params: dict[str, Any] = {}
        if "mass_g" in s.needs:
            mass = mass_g if mass_g is not None else self.known_mass_g
            if mass is None or isinstance(mass, bool) or not isinstance(mass, (int, float)) \
                    or not math.isfinite(mass) or mass <= 0:
                raise CalibrationRefused(f"the known weight must be a positive number of grams, not {mass!r}")
            params["mass_g"] = float(mass)
            self.known_mass_g = float(mass)
        if "holder" in s.needs or step == "holder":
            h = holder or (self.default_holder(params["mass_g"]) if step == "weigh" else self.next_holder())
            if h not in self.model.by_id:
                raise CalibrationRefused(f"name a holder of model {self.model.name} "
                                         f"({', '.join(x.id for x in self.model.holders)}), not {h!r}")
            params["holder"] = h
        if step == "loaded":
            params["weigh_holder"] = self.weigh[1]
        if step == "loaded_weight":
            params["holder"] = self.weigh[1]
        self._step = s
        self._params = params
        self._started = now
        self._rows = []
        return {"step": step, "seconds": s.seconds, "instructions": self.instructions(step, **params), **params}

    def feed(self, t: float, sensor: str, value: float) -> None:
        if self._step is not None:
            self._rows.append((t, sensor, value))

    def progress(self, now: float) -> dict:
        if self._step is None:
            return {"step": None, "fraction": 0.0}
        elapsed = now - self._started
        return {"step": self._step.id, "elapsed_s": round(elapsed, 2), "seconds": self._step.seconds,
                "fraction": round(min(1.0, elapsed / self._step.seconds), 3), "samples": len(self._rows)}

    def ready(self, now: float) -> bool:
        return self._step is not None and now - self._started >= self._step.seconds

    def cancel(self) -> None:
        self._step = None
        self._rows = []

    def finish(self, rows: list[Row] | None = None) -> StepResult:
        """Judge the capture (the rows fed, or `rows`): the step's values, or the reason it was refused."""
        if self._step is None:
            raise CalibrationRefused("no step is being captured; begin one first")
        step, params = self._step, self._params
        captured = self._rows if rows is None else rows
        self._step = None
        self._rows = []
        try:
            values = getattr(self, f"_finish_{step.id}")(captured, **params)
        except CalibrationRefused as exc:
            result = StepResult(step.id, False, str(exc), {"holder": params["holder"]} if step.id == "holder" else {})
        else:
            result = StepResult(step.id, True, _summary(step.id, values), values)
        self.results[step.id] = result
        return result

    def _finish_tare(self, rows: list[Row]) -> dict:
        axis = self.base.axis if self.base.accelerometer else None
        t = tare(rows, [c.name for c in self.base.cells], axis=axis, debounce_s=self.base.tilt_debounce_s)
        self.tare_result = t
        # a new zero invalidates what was measured against the old one
        self.cpg.clear()
        return {"offsets": {k: round(v, 1) for k, v in t.offsets.items()},
                "noise_counts": {k: round(v, 1) for k, v in t.noise_counts.items()},
                "level_g": None if t.level_g is None else round(t.level_g, 5)}

    def _finish_weigh(self, rows: list[Row], *, mass_g: float, holder: str) -> dict:
        assert self.tare_result is not None
        cpg = counts_per_gram(self.tare_result, rows, mass_g)
        values: dict[str, Any] = {"counts_per_gram": {k: round(v, 2) for k, v in cpg.items()}}
        if self.base.accelerometer and self.tare_result.level_g is not None:
            x_mm = self.model.by_id[holder].x_mm
            st = stiffness(rows, axis=self.base.axis, level_g=self.tare_result.level_g,
                           x_mm=x_mm, mass_g=mass_g, debounce_s=self.base.tilt_debounce_s)
            self.kappa_w, self.cpg = st.kappa_gmm, cpg
            # the loaded arm was measured against the old stiffness and holder: measure it again
            self.loaded, self.height = None, None
            self.results.pop("loaded", None)
            self.results.pop("loaded_weight", None)
            self.weigh = (mass_g, holder, None)
            seen = self._reading(rows, "the weighing", mass_g * x_mm * x_mm, mass_g)
            if seen.swing_measured:
                self.weigh = (mass_g, holder, SwingLook(mass_g, x_mm, 2 * math.pi * seen.swing_hz, seen.damping,
                                                        seen.omega_var))
            swing = self.swing()
            values.update({"kappa_gmm": round(st.kappa_gmm, 1),
                           "swing_hz": round(swing.empty_hz if swing else st.swing_hz, 3),
                           "damping": round(swing.empty_damping if swing else st.damping, 3)})
            if swing is not None:
                values["inertia_gmm2"] = round(swing.inertia_gmm2)
        self.cpg = cpg
        return values

    def _finish_theta_max(self, rows: list[Row]) -> dict:
        assert self.tare_result is not None
        if self.tare_result.level_g is None:
            raise CalibrationRefused("θ_max is read from the accelerometer, and none is configured")
        deg = theta_max(rows, axis=self.base.axis, level_g=self.tare_result.level_g,
                        debounce_s=self.base.tilt_debounce_s)
        self.theta_max_deg = deg
        return {"theta_max_deg": round(deg, 2)}

    def _reading(self, rows: list[Row], what: str, load_gmm2: float = 0.0, mass_g: float = 0.0) -> PawnReading:
        assert self.tare_result is not None and self.tare_result.level_g is not None
        # the best guess so far, however loose, is where the next look's search starts
        swing = swing_as_loaded(self._looks(), self.kappa(), self.pawn_height()) or ArmSwing.empty(
            self.kappa(), self.base.swing_hz, self.base.damping, self.base.arm_inertia_gmm2)
        omega, zeta = swing.at(load_gmm2, mass_g)      # the load slows the swing: a start near it
        return pawn_reading(rows, tare_result=self.tare_result, cpg=self.cpg, axis=self.base.axis,
                            level_g=self.tare_result.level_g, swing_hz=omega / (2 * math.pi), damping=zeta,
                            debounce_s=self.base.tilt_debounce_s, what=what)

    def _finish_loaded(self, rows: list[Row], *, weigh_holder: str) -> dict:
        r = self._reading(rows, "the loaded arm's capture")
        self.loaded, self.height = r, None
        self.results.pop("loaded_weight", None)
        return {"load_g": round(r.mass_g, 2), "sin_theta": round(r.sin, 5)}

    def _finish_loaded_weight(self, rows: list[Row], *, mass_g: float, holder: str) -> dict:
        assert self.loaded is not None and self.weigh is not None and self.kappa_w is not None
        r = self._reading(rows, "the loaded arm's capture with the weight")
        added = r.mass_g - self.loaded.mass_g
        if abs(added - mass_g) > max(0.5, 0.05 * mass_g):
            raise CalibrationRefused(
                f"the arm gained {added:.1f} g, not the {mass_g:g} g weight: leave the pawns as they were and add "
                f"only the weight, in {holder}")
        h = pawn_height(kappa_w=self.kappa_w, weight_g=mass_g, weight_x=self.model.by_id[holder].x_mm,
                        load_g=self.loaded.mass_g, sin_load=self.loaded.sin, sin_both=r.sin)
        self.height = h
        return {"pawn_height_mm": round(h, 2), "load_g": round(self.loaded.mass_g, 1),
                "kappa_full_gmm": round(self.kappa() - h * r.mass_g, 0)}

    def _finish_holder(self, rows: list[Row], *, mass_g: float, holder: str) -> dict:
        model_x = self.model.by_id[holder].x_mm
        r = self._reading(rows, f"the measurement of {holder}", mass_g * model_x * model_x, mass_g)
        # the cells' zero drifts by tenths of a gram over a walk, which would put every holder a few per cent off:
        # the weight's known mass is what turns its torque into a place, the cells only check it is alone there
        if abs(r.mass_g - mass_g) > 0.4 * min(self.model.physics.pawn_mass_g.values()):
            raise CalibrationRefused(
                f"the arm carries {round(r.mass_g, 1) + 0.0:.1f} g: put the known weight of {mass_g:g} g alone on it, "
                f"in {holder}")
        r = replace(r, mass_g=mass_g)
        if abs(r.sin) < 10 * r.sin_sigma:
            raise CalibrationRefused(f"the arm barely tilted with the weight in {holder}: use a heavier weight")
        x = self._x(r)
        problem = holders_problem(self.model, {holder: x})
        if problem:
            raise CalibrationRefused(problem[1])
        self.walk[holder] = r
        left = [h.id for h in self.model.holders if h.id not in self.walk]
        values = {"holder": holder, "x_mm": round(x, 1), "model_x_mm": model_x, "mass_g": round(r.mass_g, 2),
                  "left": len(left), "next": left[0] if left else None}
        if not left:
            swing = self.swing()
            values["swing_hz"] = None if swing is None else round(swing.empty_hz, 3)
        return values

    # ------------------------------------------------------------------ what follows from the readings
    def kappa(self) -> float:
        """The empty arm's κ: the known weight's (κ − W·h) with W·h put back once the loaded arm gave h."""
        if self.kappa_w is None:
            return self.base.kappa_gmm
        return self.kappa_w + (self.weigh[0] * self.height if self.height is not None and self.weigh else 0.0)

    def pawn_height(self) -> float:
        return self.height if self.height is not None else self.base.pawn_height_mm

    def _x(self, r: PawnReading) -> float:
        """x = Δτ / m: the holder's place from the weight in it, through the arm's stiffness as that weight loads it."""
        kappa = max(0.05 * self.kappa(), self.kappa() - self.pawn_height() * r.mass_g)
        return kappa * r.sin / r.mass_g

    def holder_x(self) -> dict[str, float]:
        """Every holder the walk measured, at its place (in the model's order)."""
        return {h.id: self._x(self.walk[h.id]) for h in self.model.holders if h.id in self.walk}

    def _looks(self) -> list[SwingLook]:
        looks = [self.weigh[2]] if self.weigh and self.weigh[2] is not None else []
        xs = self.holder_x()
        return looks + [SwingLook(r.mass_g, xs[h], 2 * math.pi * r.swing_hz, r.damping, r.omega_var)
                        for h, r in self.walk.items() if r.swing_measured]

    def swing(self) -> ArmSwing | None:
        """The arm's swing as it loads, from every swing measured: the known weight's and the walk's; None while
        they do not pin the empty arm's ω down to MAX_SWING_REL_SIGMA."""
        return swing_as_loaded(self._looks(), self.kappa(), self.pawn_height(), max_rel_sigma=MAX_SWING_REL_SIGMA)

    # ------------------------------------------------------------------ the outcome
    def result(self) -> ArmCalibration:
        """The base calibration with everything measured so far."""
        cal = self.base
        if self.tare_result is not None:
            t = self.tare_result
            cells = tuple(CellCalibration(c.name, t.offsets.get(c.name, c.offset_counts),
                                          self.cpg.get(c.name, c.counts_per_gram),
                                          t.noise_counts.get(c.name, c.noise_counts)) for c in cal.cells)
            cal = replace(cal, cells=cells)
            if t.level_g is not None:
                cal = replace(cal, level_g=t.level_g, accel_noise_g=t.accel_noise_g)
        if self.kappa_w is not None:
            cal = replace(cal, kappa_gmm=self.kappa(), pawn_height_mm=self.pawn_height(),
                          height_measured=cal.height_measured or self.height is not None)
            swing = self.swing()
            if swing is not None:
                cal = replace(cal, swing_hz=swing.empty_hz, damping=swing.empty_damping,
                              arm_inertia_gmm2=swing.inertia_gmm2, inertia_growth=swing.growth, swing_measured=True)
        if self.theta_max_deg is not None:
            cal = replace(cal, theta_max_deg=self.theta_max_deg)
        if self.walk:
            cal = replace(cal, holder_x={**cal.holder_x, **self.holder_x()})
        return replace(cal, created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                       source="calibration session")

    def complete(self) -> bool:
        """Tare and known weight done: enough to be worth saving."""
        return all(self.results.get(s) and self.results[s].ok for s in ("tare", "weigh"))

    def save(self, path: str | Path) -> Path:
        if not self.complete():
            raise CalibrationRefused("nothing worth saving yet: the tare and the known weight are needed at least")
        cal = self.result()
        problem = holders_problem(self.model, cal.holder_x)
        if problem:
            raise CalibrationRefused(f"not saved: {problem[1]}")
        return save(cal, Path(path), model_name=self.model.name, known_mass_g=self.known_mass_g)


def _summary(step: str, v: dict) -> str:
    if step == "tare":
        parts = [f"{k} {v['offsets'][k]:.0f} ± {v['noise_counts'][k]:.0f} counts" for k in v["offsets"]]
        if v.get("level_g") is not None:
            parts.append(f"level {v['level_g']:+.4f} g")
        return "zero: " + ", ".join(parts)
    if step == "weigh":
        text = ", ".join(f"{k} {c:.1f} counts/g" for k, c in v["counts_per_gram"].items())
        if "kappa_gmm" in v:
            text += f"; κ = {v['kappa_gmm']:.0f} g·mm, swing {v['swing_hz']:.2f} Hz, damping {v['damping']:.3f}"
        return text
    if step == "theta_max":
        return f"θ_max = {v['theta_max_deg']:.2f}°"
    if step == "loaded":
        return f"{v['load_g']:.1f} g of pawns on the arm"
    if step == "loaded_weight":
        return (f"the pawns sit {v['pawn_height_mm']:+.1f} mm above the pivot: with {v['load_g']:.0f} g on it the arm's "
                f"stiffness falls to {v['kappa_full_gmm']:.0f} g·mm")
    text = f"{v['holder']} at {v['x_mm']:+.1f} mm (the model says {v['model_x_mm']:+.1f})"
    if v["next"]:
        return text + f"; next {v['next']} ({v['left']} to go)"
    text += "; every holder measured"
    if "swing_hz" in v:
        text += (f"; the empty arm swings at {v['swing_hz']:.2f} Hz" if v["swing_hz"] is not None else
                 "; the arm's swing died too fast to measure: the companion learns it at the table")
    return text
