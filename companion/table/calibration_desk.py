"""The page's calibration: the same steps as `companion calibrate`, driven over HTTP.

One session at a time; the sensor loop feeds it raw samples while a step captures.
Refusals (weight too small, signal unsettled, saturated readings…) come back as
RuleError with the reason, so the page shows them and nothing changes.
"""

from __future__ import annotations

import threading
from typing import Any

from companion.games.base import RuleError
from companion.sensing.calibration import CalibrationRefused, calibration_path
from companion.sensing.calibration_steps import CalibrationSession


class CalibrationDesk:
    def __init__(self, companion, base_calibration):
        self.companion = companion
        self.base = base_calibration
        self.session: CalibrationSession | None = None
        self.saved_to: str | None = None
        self._lock = threading.Lock()

    def feed(self, t: float, sensor: str, value: float) -> None:
        session = self.session
        if session is not None and session.capturing:
            with self._lock:
                session.feed(t, sensor, value)

    def start(self, known_mass_g: Any = None) -> dict:
        if known_mass_g is not None and (isinstance(known_mass_g, bool) or not isinstance(known_mass_g, (int, float))
                                         or known_mass_g <= 0):
            raise RuleError("the known weight must be a positive number of grams")
        with self._lock:
            # the holders are checked against the model file's places, not against an earlier walk's
            self.session = CalibrationSession(self.companion.config_model, self.base, known_mass_g=known_mass_g)
            self.saved_to = None
        return self.status()

    def _need(self) -> CalibrationSession:
        if self.session is None:
            raise RuleError("start a calibration first")
        return self.session

    def begin(self, step: Any, mass_g: Any = None, holder: Any = None) -> dict:
        if not isinstance(step, str):
            raise RuleError("name the calibration step to begin")
        with self._lock:
            try:
                self._need().begin(step, self.companion.clock.now(), mass_g=mass_g, holder=holder)
            except CalibrationRefused as exc:
                raise RuleError(str(exc)) from None
        return self.status()

    def finish(self) -> dict:
        with self._lock:
            session = self._need()
            if not session.capturing:
                raise RuleError("no step is capturing; begin one")
            if not session.ready(self.companion.clock.now()):
                raise RuleError("the step is still capturing; keep the arm still a moment longer")
            result = session.finish()
        return {**self.status(), "result": result.to_dict()}

    def cancel(self) -> dict:
        with self._lock:
            if self.session is not None:
                self.session.cancel()
        return self.status()

    def save(self) -> dict:
        cfg = self.companion.config
        path = calibration_path(cfg.source, cfg.base_dir)
        with self._lock:
            try:
                written = self._need().save(path)
            except CalibrationRefused as exc:
                raise RuleError(str(exc)) from None
            except OSError as exc:
                raise RuleError(f"could not write {path}: {exc.strerror or exc}") from None
            self.saved_to = str(written)
        return {**self.status(), "message": f"saved to {written}; restart the companion to use it"}

    def status(self) -> dict:
        s = self.session
        if s is None:
            return {"active": False}
        now = self.companion.clock.now()
        return {"active": True, "steps": s.steps(), "capturing": s.capturing, "progress": s.progress(now),
                "ready": s.ready(now), "complete": s.complete(), "saved_to": self.saved_to}
