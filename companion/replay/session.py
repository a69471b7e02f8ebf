"""`companion replay`: the daemon's Balance Duels path — follower, arm link, rules — on a recorded session.

The same objects the daemon wires together (companion.table.daemon) run here on the trace's own
clock, as fast as the machine allows: a fresh in-memory event store, no web server, no
buttons, no lights. Trace rows are fed to the arm link as the sensor threads feed it; the
inputs (rolls, page actions, answers, undo) are applied between them at their times. The
output is what the table saw, in time order: every game event, every question, every
notice, every answer that could not be applied, then a summary with the final view.

Everything a run prints follows from its files: two runs print the same bytes.
"""

from __future__ import annotations

import math
import time as _time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from companion.table.arm_link import ArmLink
from companion.foundation.clock import Clock
from companion.config import Config
from companion.games.balance_model import Model
from companion.games.base import RuleError
from companion.games.registry import engines
from companion.table.host import GameHost
from companion.recorder.inputs import Input
from companion.recorder.lines import line_text
from companion.sensing.calibration import ArmCalibration, calibrated_model
from companion.sensing.follower import ArmFollower
from companion.store import Event, EventStore
from companion.foundation.table_time import TableTime

LIVE_EVERY_S = 0.5          # how often the page asks for live readings (and so sees a lasting mismatch)
Row = tuple[float, str, float]


@dataclass(frozen=True)
class ReplaySetup:
    config: Config
    model: Model                       # the game's model: calibrated, as the daemon's, unless the table was simulated
    calibration: ArmCalibration
    calibration_file: Path | None
    simulated: bool


def load_setup(config_path: str | Path, *, calibration: str | Path | None = None,
               use_beside: bool = True) -> ReplaySetup:
    """The daemon's arm and game from a config (and calibration); AnalysisConfigError names file and line."""
    from companion.sensing import analysis

    setup = analysis.load_setup(config_path, calibration=calibration, use_beside=use_beside,
                                need_accelerometer=False)
    cfg, raw = setup.config, setup.raw
    sim = raw.get("simulate", {})
    simulated = isinstance(sim, dict) and sim.get("enabled") is True
    model = setup.model if simulated else calibrated_model(setup.model, setup.calibration)
    return ReplaySetup(cfg, model, setup.calibration, setup.calibration_file, simulated)


class _TraceClock(Clock):
    """The trace's time, for what in the host reads a clock (it is never waited on)."""

    def __init__(self, table_time: TableTime):
        self._time = table_time

    def now(self) -> float:
        return max(0.0, self._time.last)

    def sleep(self, seconds: float) -> None:  # nothing in a replay waits
        pass


def event_line(t: float, seq: int, ev: Event, source: str) -> dict:
    return {"t": round(t, 6), "seq": seq, "kind": ev.kind, "body": ev.body, "source": source}


def is_sensed_move(line: dict) -> bool:
    if line.get("source") != "sensor" or line.get("kind") != "action":
        return False
    action = line["body"].get("action") if isinstance(line.get("body"), dict) else None
    return isinstance(action, dict) and action.get("type") == "move"


@dataclass
class ReplayResult:
    lines: list[dict] = field(default_factory=list)
    rows: int = 0
    trace_seconds: float = 0.0
    processing_seconds: float = 0.0
    sensors: set[str] = field(default_factory=set)

    @property
    def summary(self) -> dict:
        return self.lines[-1]["summary"]

    def events(self) -> list[dict]:
        return [ln for ln in self.lines if "seq" in ln]

    def text(self) -> str:
        return "".join(line_text(ln) + "\n" for ln in self.lines)


class Replay:
    """One run of the daemon's Balance Duels path over rows and inputs (see the module docstring).

    run(rows) does it all. For a caller that reacts to what the table shows (a simulated player),
    rows and inputs can also be given as they come: push(input), feed(rows), advance(t), finish().
    """

    def __init__(self, setup: ReplaySetup, inputs: Sequence[Input] = ()):
        self.setup = setup
        self._pending: deque[Input] = deque(inputs)
        self.result = ReplayResult()
        self.time = TableTime(0.0)
        self._counts = {"events": 0, "moves_from_sensors": 0, "questions": 0, "answered": 0, "notices": 0,
                        "ignored_answers": 0}
        self._mismatch: str | None = None
        self._next_live = -math.inf
        self._started = False
        self._last_input_t = -math.inf
        self._t0: float | None = None
        self._t = 0.0
        self._seconds = 0.0

    # --- output
    def _out(self, line: dict) -> None:
        self.result.lines.append(line)

    def _on_commit(self, ev: Event) -> None:
        if ev.source == "sensor":
            source = "answer" if self.arm.answering else "sensor"
        else:
            source = "input"
        self._seq += 1
        line = event_line(self.time.last, self._seq, ev, source)
        if source == "sensor" and self.arm.applied_confidence is not None:
            line["confidence"] = round(self.arm.applied_confidence, 4)
        self._counts["events"] += 1
        if is_sensed_move(line):
            self._counts["moves_from_sensors"] += 1
        self._out(line)

    def _on_report(self, kind: str, data: Any) -> None:
        t = round(max(0.0, self.time.last), 6)
        if kind == "notice":
            self._counts["notices"] += 1
            self._out({"t": t, "notice": data})
        elif kind == "question":
            self._counts["questions"] += 1
            self._out({"t": t, "question": data["text"], "options": [o["move"] for o in data["options"]]})

    def _notice(self, t: float, text: str) -> None:
        self._counts["notices"] += 1
        self._out({"t": round(t, 6), "notice": text})

    # --- the table
    def _start(self, first_row_t: float) -> None:
        self._started = True
        cfg = self.setup.config
        model = self.setup.model
        self.store = EventStore(":memory:")
        game, options, source_line = cfg.game, cfg.start_options, None
        first = self._pending[0] if self._pending else None
        if first is not None and first.kind == "new_game" and first.t <= first_row_t:
            game, options, source_line = first.body["game"], first.body["options"], first
        try:
            self.host = GameHost(self.store, engines(model), game, options, _TraceClock(self.time))
        except RuleError:
            # the line's game cannot start: the config's game does, and the line is refused in its turn
            source_line = None
            self.host = GameHost(self.store, engines(model), cfg.game, cfg.start_options, _TraceClock(self.time))
        if source_line is not None:
            self._pending.popleft()
            self.time.input(source_line.t)
        else:
            self.time.input(0.0)
        self._seq = 0
        for ev in self.store.game_events(self.host.game_id):
            self._on_commit(ev)
        host = self.host
        pawns = host.state.on_arm() if host.game == "balance_duels" else []
        follower = ArmFollower(model, self.setup.calibration, pawns=pawns)
        self.arm = ArmLink(host, model, follower, time=self.time)
        host.on_commit(self.arm.on_game_change)
        host.on_commit(self._on_commit)
        self.arm.on_report(self._on_report)

    def _apply(self, item: Input) -> None:
        t = self.time.input(item.t)
        host = self.host
        try:
            if item.kind == "new_game":
                host.new_game(item.body["game"], item.body["options"], source="input")
            elif item.kind == "action" and item.body.get("type") == "roll" and host.game == "balance_duels":
                self.arm.roll(item.body.get("value"), source="input", action=item.body)   # kept, never refused
            elif item.kind == "action":
                host.act(item.body, source="input")
            elif item.kind == "undo":
                host.undo(source="input")
            elif item.kind == "follower":
                self.arm.restart(item.body)
            else:
                self._answer(t, item)
        except RuleError as exc:
            where = f" of line {item.line}" if item.line else ""
            self._notice(t, f"the game refused the {item.describe()}{where}: {exc}")

    def _answer(self, t: float, item: Input) -> None:
        why = None
        if self.arm.question is not None or self.arm.judging:
            # an option of the open question, or any legal move: the players' word for the change asked about; named
            # before the companion asked, their word for the move being judged
            try:
                self.arm.answer_move(item.body)
            except RuleError as exc:
                why = str(exc)
            else:
                self._counts["answered"] += 1
                return
        else:
            why = "the companion was not asking which move was made"
        self._counts["ignored_answers"] += 1
        self._out({"t": round(t, 6), "ignored_answer": item.body, "why": why})

    def _live(self, t: float) -> None:
        """What the page would show on its next look: a lasting disagreement between the arm and the game."""
        self._next_live = t + LIVE_EVERY_S
        mismatch = self.arm.mismatch_shown()[0]
        if mismatch is not None and mismatch != self._mismatch:
            self._notice(t, mismatch)
        self._mismatch = mismatch

    # --- feeding it
    def push(self, item: Input) -> None:
        """One more input, no earlier than the last (applied when the rows pass its time, or at finish)."""
        if item.t < self._last_input_t:
            raise ValueError(f"inputs must come in time order: {item.t} after {self._last_input_t}")
        self._last_input_t = item.t
        self._pending.append(item)

    def feed(self, rows: Iterable[Row]) -> None:
        started = _time.perf_counter()
        it: Iterator[Row] = iter(rows)
        if not self._started:
            first = next(it, None)
            if first is None:
                return
            self._start(first[0])
            self._t0 = first[0]
            it = _chain(first, it)
        pending = self._pending
        feed = self.arm.feed
        sensors = self.result.sensors
        count = 0
        t = self._t
        for t, sensor, value in it:
            t = round(t, 6)     # on the table clock, as a trace file carries it (rows given in memory may not be)
            while pending and pending[0].t < t:
                self._apply(pending.popleft())
            feed(t, sensor, value)
            sensors.add(sensor)
            count += 1
            if t >= self._next_live:
                self._live(t)
        self._t = t
        self.result.rows += count
        self._seconds += _time.perf_counter() - started

    def advance(self, t: float) -> None:
        """Apply every input up to time t (no row of t or earlier is still to come)."""
        if not self._started:
            self._start(math.inf)
        while self._pending and self._pending[0].t <= t:
            self._apply(self._pending.popleft())

    def finish(self) -> ReplayResult:
        started = _time.perf_counter()
        if not self._started:
            self._start(math.inf)
        while self._pending:
            self._apply(self._pending.popleft())
        res = self.result
        res.trace_seconds = 0.0 if self._t0 is None else self._t - self._t0
        self._out({"summary": {**self._counts, "state": self.host.snapshot()["view"]}})
        self.store.close()
        res.processing_seconds = self._seconds + _time.perf_counter() - started
        return res

    def run(self, rows: Iterable[Row]) -> ReplayResult:
        self.feed(rows)
        return self.finish()


def _chain(first: Row, rest: Iterator[Row]) -> Iterator[Row]:
    yield first
    yield from rest


def check_inputs(setup: ReplaySetup, inputs: Sequence[Input], name: str) -> None:
    """What only the arm can judge: every follower memory must fit this calibration and model (InputError)."""
    from companion.recorder.inputs import InputError
    from companion.sensing.memory import resume

    for item in inputs:
        if item.kind == "follower":
            try:
                resume(setup.model, setup.calibration, item.body)
            except ValueError as exc:
                raise InputError(name, item.line, str(exc)) from None


def replay(setup: ReplaySetup, rows: Iterable[Row], inputs: Sequence[Input] = ()) -> ReplayResult:
    return Replay(setup, inputs).run(rows)
