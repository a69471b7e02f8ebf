"""`companion calibrate`: a person walked through the calibration steps at the terminal.

A thin shell over CalibrationSession: it says what to do, waits for Enter, shows
a progress bar while it captures, then the result or the reason it was refused
(and offers to try again). Prompts go through `ask` and text through `out`, so
tests feed the answers. With the simulated table, the "person" is the table
itself: each step's action (clearing the arm, putting the weight down, pressing
an end onto the board) is done on it before the capture.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Protocol, TextIO

from companion.games.balance_model import Model
from companion.sensing.calibration import (ArmCalibration, CalibrationFileError, CalibrationRefused, CellCalibration,
                                           apply_file, holders_problem, load_file)
from companion.sensing.calibration_steps import STEPS, CalibrationSession
from companion.table.record import DeviceReader, capture

if TYPE_CHECKING:
    from companion.simulation.traces import ArmStyle, NoiseProfile

Row = tuple[float, str, float]
EXIT_OK, EXIT_ABORTED = 0, 1


class ArmSource(Protocol):
    simulated: bool

    def prepare(self, step: str, params: dict[str, Any]) -> str | None:
        """Do the step's physical action if this source can (the simulated table); say what was done."""

    def capture(self, seconds: float, progress: Callable[[float], None]) -> list[Row]:
        """Raw rows for `seconds`."""


class SimulatedArm:
    """The simulated table as the thing being calibrated; its known weight is an L pawn."""

    simulated = True

    def __init__(self, model: Model, *, seed: int = 0, profile: NoiseProfile | str = "quiet-10sps",
                 names: list[str] | None = None, arm: ArmStyle | None = None):
        """`arm`: the simulated arm itself (its swing, and how it was built: its holders' real places, its pawns'
        height), by default the daemon's own."""
        self.model = model
        from companion.simulation.traces import HandStyle, TableScript   # only `calibrate --simulate` needs it

        self.script = TableScript(model, profile, seed=seed, mass_spread=False, names=names, arm=arm,
                                  hands=HandStyle(duration_s=(0.5, 0.7), force_g=(10.0, 20.0), long_press_share=0.0))
        self.known_mass_g = model.physics.pawn_mass_g["L"]
        self.names = [c.name for c in self.script.sensors.cells]

    def base_calibration(self, configured: ArmCalibration | None = None) -> ArmCalibration:
        """What the calibration starts from: the config's when it names these sensors, else an uncalibrated
        one (no tare, the default counts per gram)."""
        if configured is not None and [c.name for c in configured.cells] == self.names:
            return configured
        phys = self.model.physics
        return ArmCalibration(cells=tuple(CellCalibration(n, 0.0, 2150.0) for n in self.names), axis="ax",
                              level_g=0.0, kappa_gmm=phys.kappa_gmm, theta_max_deg=phys.theta_max_deg,
                              source="simulated table (uncalibrated)")

    def load_holders(self, keep_free: str | None, pawns: int = 12) -> list[str]:
        """Where the simulated players put their pawns for the loaded arm: in pairs of holders the same distance
        either side of the pivot, filling each, nearest the pivot first, leaving the weigh holder (and its mirror)
        free."""
        out: list[str] = []
        plus = sorted((h for h in self.model.holders if h.x_mm > 0), key=lambda h: h.x_mm)
        for h in plus:
            mirror = min(self.model.holders, key=lambda o: abs(o.x_mm + h.x_mm))
            if keep_free in (h.id, mirror.id):
                continue
            for _ in range(min(h.capacity, mirror.capacity)):
                if len(out) + 2 <= pawns:
                    out += [h.id, mirror.id]
        return out

    def _clear(self) -> None:
        for h, s in list(self.script.pawns):
            self.script.remove(h, s)
            self.script.wait(0.3)

    def prepare(self, step: str, params: dict[str, Any]) -> str:
        sc = self.script
        if step == "tare":
            self._clear()
            sc.wait(3.0)
            return "took everything off the arm"
        if step in ("weigh", "holder"):
            holder = params["holder"]
            if len(sc.pawns) > 1:
                self._clear()
            if sc.pawns and sc.pawns[0][0] != holder:
                sc.move(sc.pawns[0][0], holder, "L")
            elif not sc.pawns:
                sc.place(holder, "L")
            sc.wait(1.0)
            return f"put an L pawn ({self.known_mass_g:g} g) in {holder}"
        if step == "loaded":
            self._clear()
            for h in self.load_holders(params.get("weigh_holder")):
                sc.place(h, "L")
                sc.wait(0.3)
            sc.wait(1.0)
            return f"put {len(sc.pawns)} L pawns on the arm, in holders the same distance either side of the pivot"
        if step == "loaded_weight":
            sc.place(params["holder"], "L")
            sc.wait(1.0)
            return f"added an L pawn ({self.known_mass_g:g} g) in {params['holder']}"
        if step == "theta_max":
            self._clear()
            end = max(self.model.holders, key=lambda h: h.x_mm).id
            # a hand pressing the end down, firmly, for a little longer than the capture
            sc.table.set_pawns(list(sc.pawns), hand_s=STEPS["theta_max"].seconds + 1.5, hand_force_g=120.0,
                               at_holder=end)
            sc.wait(1.2)
            return f"pressed {end} down onto the board"
        return ""

    def capture(self, seconds: float, progress: Callable[[float], None]) -> list[Row]:
        rows: list[Row] = []
        done = 0.0
        while done < seconds - 1e-9:
            chunk = min(0.25, seconds - done)
            rows.extend(self.script.sensors.run(chunk))
            done += chunk
            progress(done / seconds)
        return rows


class DeviceArm:
    """The real sensors (from the hardware factory)."""

    simulated = False

    def __init__(self, devices: Any):
        self.devices = devices

    def prepare(self, step: str, params: dict[str, Any]) -> None:
        return None

    def capture(self, seconds: float, progress: Callable[[float], None]) -> list[Row]:
        return capture(DeviceReader(self.devices), seconds, progress=progress)


class Walkthrough:
    def __init__(self, session: CalibrationSession, source: ArmSource, *, ask: Callable[[str], str],
                 out: TextIO, model_name: str):
        self.session = session
        self.source = source
        self.ask = ask
        self.out = out
        self.model_name = model_name

    def say(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    def _answer(self, prompt: str) -> str:
        try:
            return self.ask(prompt).strip().lower()
        except EOFError:
            return "q"

    def _bar(self, fraction: float) -> None:
        width = 30
        filled = int(round(fraction * width))
        print(f"\r  [{'#' * filled}{'.' * (width - filled)}] {fraction * 100:3.0f} %", end="", file=self.out,
              flush=True)

    def run_step(self, step: str, *, required: bool, **params: Any) -> bool | None:
        """True done, False skipped, None: the person quit."""
        s = STEPS[step]
        while True:
            try:
                info = self.session.begin(step, 0.0, **params)
            except CalibrationRefused as exc:
                self.say(f"  cannot start: {exc}")
                return False
            self.say(f"\n{s.title}: {info['instructions']}")
            choice = self._answer("  Press Enter to start (s to skip, q to quit): ")
            if choice == "q":
                self.session.cancel()
                return None
            if choice == "s":
                self.session.cancel()
                if required:
                    self.say("  this step is needed; without it nothing is saved")
                return False
            done = self.source.prepare(step, {k: info[k] for k in ("holder", "mass_g", "weigh_holder") if k in info})
            if done:
                self.say(f"  (simulated table: {done})")
            rows = self.source.capture(s.seconds, self._bar)
            self.say()
            result = self.session.finish(rows)
            if result.ok:
                self.say(f"  ✓ {result.message}")
                return True
            self.say(f"  ✗ refused: {result.message}")
            if self._answer("  Try again? [Y/n] ") in ("n", "no", "q"):
                return False

    def run(self, save_to, *, holders: bool | None = None, loaded: bool | None = None,
            mass_g: float | None = None) -> int:
        self.say(f"Calibrating the balance arm (model {self.model_name}) with "
                 f"{len(self.session.base.cells)} load cell(s)"
                 + (", an accelerometer" if self.session.base.accelerometer else "") + ".")
        self.say("Each step captures a few seconds of readings; keep the table still meanwhile.")
        if self.run_step("tare", required=True) is not True:
            self.say("\nNothing was saved.")
            return EXIT_ABORTED
        mass = mass_g
        while mass is None:
            default = self.session.known_mass_g
            text = self._answer(f"\nKnown weight in grams{f' [{default:g}]' if default else ''}: ")
            if text == "q":
                self.say("\nNothing was saved.")
                return EXIT_ABORTED
            if not text and default:
                mass = default
                break
            try:
                mass = float(text.replace("g", "").strip())
                if not mass > 0:
                    raise ValueError(text)
            except ValueError:
                self.say(f"  {text!r} is not a weight in grams; type a number like 10 or 20.5")
                mass = None
        if self.run_step("weigh", required=True, mass_g=mass) is not True:
            self.say("\nNothing was saved.")
            return EXIT_ABORTED
        if self.session.base.accelerometer:
            if self.run_step("theta_max", required=False) is None:
                self.say("\nNothing was saved.")
                return EXIT_ABORTED
        accel = self.session.base.accelerometer
        if loaded is None and accel:
            loaded = self._answer("\nMeasure how much the pawns soften the loaded arm (a dozen pawns on it, then the "
                                  "weight with them)? [y/N] ") in ("y", "yes")
        if loaded and accel:
            went = self.run_step("loaded", required=False)
            if went is None or (went and self.run_step("loaded_weight", required=False, mass_g=mass) is None):
                self.say("\nNothing was saved.")
                return EXIT_ABORTED
        if holders is None and accel:
            holders = self._answer("\nWalk the weight through every holder, to measure where each really is? [y/N] ") \
                in ("y", "yes")
        if holders and accel:
            for h in self.session.model.holders:
                if self.run_step("holder", required=False, mass_g=mass, holder=h.id) is None:
                    self.say("\nNothing was saved.")
                    return EXIT_ABORTED
        cal = self.session.result()
        self.say("\nCalibration:")
        for c in cal.cells:
            self.say(f"  {c.name}: zero {c.offset_counts:.0f} counts, {c.counts_per_gram:.2f} counts/g, "
                     f"noise ±{c.noise_counts or 0:.0f}")
        if cal.accelerometer:
            self.say(f"  accelerometer {cal.axis}: level {cal.level_g:+.4f} g")
        self.say(f"  κ = {cal.kappa_gmm:.0f} g·mm, θ_max = {cal.theta_max_deg:.2f}°, tipping torque "
                 f"{cal.tip_torque:.0f} g·mm, swing {cal.swing_hz:.2f} Hz (damping {cal.damping:.3f})")
        if cal.pawn_height_mm:
            full = sum(h.capacity for h in self.session.model.holders) * self.session.model.physics.pawn_mass_g["L"]
            self.say(f"  the pawns sit {cal.pawn_height_mm:+.1f} mm above the pivot: a full arm ({full:.0f} g) tips "
                     f"at {cal.tip_torque_at(full):.0f} g·mm")
        if cal.inertia_growth != 1.0:
            self.say(f"  each pawn adds {cal.inertia_growth:.2f} × its m·x² to the swing's inertia")
        for h, x in cal.holder_x.items():
            self.say(f"  {h}: {x:+.1f} mm (the model says {self.session.model.by_id[h].x_mm:+.1f})")
        problem = holders_problem(self.session.model, cal.holder_x)
        if problem:
            self.say(f"\nNothing was saved: {problem[1]}")
            return EXIT_ABORTED
        if self._answer(f"\nWrite {save_to}? [Y/n] ") in ("n", "no", "q"):
            self.say("Nothing was saved.")
            return EXIT_ABORTED
        path = self.session.save(save_to)
        try:
            apply_file(self.session.base, load_file(path), self.session.model)
        except CalibrationFileError as exc:
            self.say(f"the written file does not read back: {exc}")
            return EXIT_ABORTED
        self.say(f"Wrote {path} (dated {cal.created}); the daemon and `companion analyze` use it from now on.")
        return EXIT_OK
