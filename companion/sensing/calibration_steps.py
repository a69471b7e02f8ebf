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
from companion.sensing.calibration import (ArmCalibration, CalibrationRefused, CellCalibration, TareResult,
                                           counts_per_gram, holder_position, save, stiffness, tare, theta_max)

Row = tuple[float, str, float]


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
    "holder": Step("holder", "Holder position", 3.0, ("mass_g", "holder"),
                   "Put the known weight of {mass_g:g} g in holder {holder}, alone on the arm, hands off.",
                   ("tare", "weigh")),
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
        self.kappa: float | None = None
        self.swing_hz: float | None = None
        self.inertia: float | None = None          # the empty arm's moment of inertia, g·mm²
        self.damping: float | None = None
        self.theta_max_deg: float | None = None
        self.holder_x: dict[str, float] = {}
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

    def instructions(self, step: str, **params: Any) -> str:
        s = STEPS[step]
        values = {"mass_g": params.get("mass_g") or self.known_mass_g or 0.0,
                  "holder": params.get("holder") or "?", "side": f"+ ({self.plus_end()})"}
        return s.instructions.format(**values)

    def steps(self) -> list[dict]:
        out = []
        for s in STEPS.values():
            r = self.results.get(s.id)
            out.append({"id": s.id, "title": s.title, "seconds": s.seconds, "needs": list(s.needs),
                        "after": list(s.after), "instructions": self.instructions(s.id),
                        "done": bool(r and r.ok), "result": r.to_dict() if r else None})
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
        params: dict[str, Any] = {}
        if "mass_g" in s.needs:
            mass = mass_g if mass_g is not None else self.known_mass_g
            if mass is None or isinstance(mass, bool) or not isinstance(mass, (int, float)) \
                    or not math.isfinite(mass) or mass <= 0:
                raise CalibrationRefused(f"the known weight must be a positive number of grams, not {mass!r}")
            params["mass_g"] = float(mass)
            self.known_mass_g = float(mass)
        if "holder" in s.needs:
            h = holder or (self.default_holder(params["mass_g"]) if step == "weigh" else None)
            if h not in self.model.by_id:
                raise CalibrationRefused(f"name a holder of model {self.model.name} "
                                         f"({', '.join(x.id for x in self.model.holders)}), not {h!r}")
            params["holder"] = h
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
            result = StepResult(step.id, False, str(exc))
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
            self.kappa = st.kappa_gmm
            if st.swing_measured:
                # the weight added m·x² to the arm's moment of inertia: what is kept is the empty arm's swing
                empty = st.empty_arm(mass_g, x_mm)
                self.swing_hz, self.damping, self.inertia = empty.empty_hz, empty.empty_damping, empty.inertia_gmm2
            values.update({"kappa_gmm": round(st.kappa_gmm, 1), "swing_hz": round(self.swing_hz or st.swing_hz, 3),
                           "damping": round(self.damping if self.damping is not None else st.damping, 3)})
            if self.inertia is not None:
                values["inertia_gmm2"] = round(self.inertia)
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

    def _finish_holder(self, rows: list[Row], *, mass_g: float, holder: str) -> dict:
        assert self.tare_result is not None and self.tare_result.level_g is not None
        kappa = self.kappa or self.base.kappa_gmm
        x_model = self.model.by_id[holder].x_mm
        empty = ArmSwing.empty(kappa, self.swing_hz or self.base.swing_hz,
                               self.damping if self.damping is not None else self.base.damping,
                               self.inertia or self.base.arm_inertia_gmm2)
        omega, zeta = empty.at(mass_g * x_model * x_model)   # the weight slows the swing
        x = holder_position(rows, axis=self.base.axis, level_g=self.tare_result.level_g, kappa_gmm=kappa,
                            mass_g=mass_g, expected_x=x_model, holder=holder,
                            swing_hz=omega / (2 * math.pi), damping=zeta, debounce_s=self.base.tilt_debounce_s)
        self.holder_x[holder] = x
        return {"holder": holder, "x_mm": round(x, 1), "model_x_mm": self.model.by_id[holder].x_mm}

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
        if self.kappa is not None:
            cal = replace(cal, kappa_gmm=self.kappa, swing_hz=self.swing_hz or cal.swing_hz,
                          damping=self.damping if self.damping is not None else cal.damping,
                          arm_inertia_gmm2=self.inertia if self.inertia is not None else cal.arm_inertia_gmm2,
                          swing_measured=cal.swing_measured or self.inertia is not None)
        if self.theta_max_deg is not None:
            cal = replace(cal, theta_max_deg=self.theta_max_deg)
        if self.holder_x:
            cal = replace(cal, holder_x={**cal.holder_x, **self.holder_x})
        return replace(cal, created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                       source="calibration session")

    def complete(self) -> bool:
        """Tare and known weight done: enough to be worth saving."""
        return all(self.results.get(s) and self.results[s].ok for s in ("tare", "weigh"))

    def save(self, path: str | Path) -> Path:
        if not self.complete():
            raise CalibrationRefused("nothing worth saving yet: the tare and the known weight are needed at least")
        return save(self.result(), Path(path), model_name=self.model.name, known_mass_g=self.known_mass_g)


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
    return f"{v['holder']} at {v['x_mm']:+.1f} mm (the model says {v['model_x_mm']:+.1f})"
