"""`companion analyze`: run the follower over a trace and report what it decided.

Works anywhere (no hardware): the config supplies the arm (balance model, κ,
θ_max, pawn masses) and how to read the sensors (each load cell's tare and
counts per gram, the accelerometer's axis and level) — the same keys the daemon
reads, from the same file. A calibration.toml beside the config is used too, as
the daemon does, unless told otherwise.
"""

from __future__ import annotations

import json
import re
import sys
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from companion.games.balance_model import Model
from companion.sensing.calibration import (ArmCalibration, CalibrationFileError, apply_file, calibration_path,
                                           from_config, load_file)
from companion.sensing.events import EVENT_KINDS, ArmEvent
from companion.sensing.follower import MAX_BELIEFS_ON_BOARD, ArmFollower, FollowerSettings
from companion.foundation.toml_lines import end_line, locate
from companion.sensing.trace import TraceError, read_trace

EXIT_OK = 0
EXIT_BAD_INPUT = 2
_CONFIG_MESSAGE = re.compile(r"^\[(?P<section>[^\]#]+?)(?: #(?P<index>\d+))?\](?: (?P<key>[A-Za-z0-9_]+))?:")


class AnalysisConfigError(ValueError):
    """A config (or calibration file) that analyze cannot use; str() is `FILE:LINE: problem`."""


@dataclass(frozen=True)
class Setup:
    model: Model
    calibration: ArmCalibration
    calibration_file: Path | None
    config: Any = None                 # the companion.config.Config it came from
    raw: dict = field(default_factory=dict, repr=False)   # the config file's tables as read


# what analyze needs, and what each is for (said when it is missing)
REQUIRED = {
    "balance": {"model": "the balance model (a built-in name or a model file)",
                "kappa_gmm": "the arm's stiffness, which turns the angle into torque",
                "theta_max_deg": "the angle at which the arm rests on the board",
                "pawn_mass_g": "the pawns' masses"},
    "load_cells": {"name": "the load cell's name in the trace",
                   "offset_counts": "the load cell's reading with the empty arm (tare)",
                   "counts_per_gram": "the load cell's counts per gram"},
    "accelerometer": {"axis": "the trace column along the arm",
                      "level_g": "the accelerometer's reading with the arm level"},
}
# keys a calibration file can stand in for
FROM_CALIBRATION = {("balance", "kappa_gmm"), ("balance", "theta_max_deg"), ("load_cells", "offset_counts"),
                    ("load_cells", "counts_per_gram"), ("accelerometer", "level_g"), ("accelerometer", "axis")}


def _locate_config_error(path: Path, text: str, message: str) -> str:
    """`FILE:LINE: problem` for a companion.config.ConfigError message (`FILE: [section] key: problem`)."""
    prefix = f"{path}: "
    body = message[len(prefix):] if message.startswith(prefix) else message
    line = 1
    m = re.search(r"\(at line (\d+)", body)
    if m:
        line = int(m.group(1))
    else:
        m = _CONFIG_MESSAGE.match(body)
        if m:
            section = m.group("section").strip()
            occurrence = int(m.group("index")) - 1 if m.group("index") else 0
            line = locate(text, section, m.group("key"), occurrence=occurrence)
    return f"{path}:{line}: {body}"


def read_config(config_path: str | Path, *, wiring: bool = True) -> tuple[Any, str, dict]:
    """(Config, its text, its raw table), checked by companion.config with every problem as FILE:LINE.

    `wiring=False` leaves out the checks of how sensors are wired to a Pi (GPIO pins), as for the
    simulated table: analysing a trace, or simulating one, does not touch the wires.
    """
    from companion.config import ConfigError, parse

    path = Path(config_path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise AnalysisConfigError(f"{path}:1: no such config file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise AnalysisConfigError(f"{path}:1: cannot read: {exc}") from None
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise AnalysisConfigError(_locate_config_error(path, text, f"{path}: not valid TOML: {exc}")) from None
    data = dict(raw)
    if not wiring and isinstance(data.get("simulate", {}), dict):
        data["simulate"] = {**data.get("simulate", {}), "enabled": True}
    try:
        cfg = parse(data, str(path), path.resolve().parent)
    except ConfigError as exc:
        raise AnalysisConfigError(_locate_config_error(path, text, str(exc))) from None
    return cfg, text, raw


def load_setup(config_path: str | Path, *, calibration: str | Path | None = None,
               use_beside: bool = True, need_accelerometer: bool = True) -> Setup:
    """The model and calibration a config (plus its calibration file) describe, every required key present.

    `need_accelerometer=False` accepts a config without [accelerometer], as the daemon does (weight alone)."""
    path = Path(config_path)
    cfg, text, raw = read_config(path, wiring=False)
    cal_path = Path(calibration) if calibration is not None else None
    if cal_path is None and use_beside:
        beside = calibration_path(path)
        cal_path = beside if beside.is_file() else None
    cal_file = None
    if cal_path is not None:
        try:
            cal_file = load_file(cal_path)
        except CalibrationFileError as exc:
            raise AnalysisConfigError(str(exc)) from None
    _check_required(path, text, raw, cal_file, need_accelerometer=need_accelerometer)
    model = cfg.model()
    base = from_config(cfg)
    if cal_file is not None:
        try:
            base = apply_file(base, cal_file, model)
        except CalibrationFileError as exc:
            raise AnalysisConfigError(str(exc)) from None
    return Setup(model, base, cal_path, cfg, raw)


def _check_required(path: Path, text: str, raw: dict[str, Any], cal_file, *, need_accelerometer: bool = True) -> None:
    def covered(section: str, key: str, cell: str | None = None) -> bool:
        if cal_file is None or (section, key) not in FROM_CALIBRATION:
            return False
        if section == "load_cells":
            return cell is not None and key in cal_file.cells.get(cell, {})
        if section == "balance":
            return getattr(cal_file, key) is not None
        return (cal_file.level_g if key == "level_g" else cal_file.axis) is not None

    for section in ("balance", "accelerometer"):
        table = raw.get(section)
        if section == "accelerometer" and table is None and not need_accelerometer:
            continue
        if not isinstance(table, dict):
            raise AnalysisConfigError(f"{path}:{end_line(text)}: there is no [{section}] table; analyze needs "
                                      + ", ".join(REQUIRED[section]))
        for key, why in REQUIRED[section].items():
            if key not in table and not covered(section, key):
                raise AnalysisConfigError(f"{path}:{locate(text, section)}: [{section}] has no {key} ({why})")
    cells = raw.get("load_cells")
    if not isinstance(cells, list) or not cells:
        raise AnalysisConfigError(f"{path}:{end_line(text)}: there is no [[load_cells]] table; analyze needs one per "
                                  "load cell in the trace")
    for i, cell in enumerate(cells):
        for key, why in REQUIRED["load_cells"].items():
            if key not in cell and not covered("load_cells", key, cell.get("name")):
                raise AnalysisConfigError(f"{path}:{locate(text, 'load_cells', occurrence=i)}: [[load_cells]] #{i + 1} "
                                          f"has no {key} ({why})")


@dataclass
class Result:
    events: list[ArmEvent]
    rows: int
    trace_seconds: float
    processing_seconds: float


LEARN_FROM = 0.999     # a change this sure, and not ambiguous, counts as confirmed


# no game names the moves here: every account of the pawns a look-alike change leaves is kept, as many as the
# follower keeps on the board (foreign quiet seed 12009: the true account of a like pawn's move across the pivot was
# the fifth likeliest, and with four kept, three placements later were read a holder off, into holders the kept
# accounts had full)
ANALYZE_SETTINGS = FollowerSettings(max_beliefs=MAX_BELIEFS_ON_BOARD)


def analyze(trace: str | Path, setup: Setup, *, settings: FollowerSettings | None = None) -> Result:
    """Every event the follower decides over the whole trace (TraceError at the first bad row)."""
    follower = ArmFollower(setup.model, setup.calibration, settings=settings or ANALYZE_SETTINGS)
    events: list[ArmEvent] = []
    rows = 0
    first = last = None
    started = time.perf_counter()
    feed = follower.feed
    for t, sensor, value in read_trace(trace, load_cells=[c.name for c in setup.calibration.cells]):
        if first is None:
            first = t
        last = t
        rows += 1
        got = feed(t, sensor, value)
        if got:
            events.extend(got)
            # no game confirms a move here: what no other account explains teaches the hands and the cells' settling
            for change in {id(ev.change): ev.change for ev in got if ev.change is not None}.values():
                if change.confidence >= LEARN_FROM:
                    follower.learn_from(change)
    elapsed = time.perf_counter() - started
    span = 0.0 if first is None else last - first
    return Result(events, rows, span, elapsed)


def run(trace: str, config: str, *, calibration: str | None = None, use_beside: bool = True,
        candidates: bool = False, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """The command: one JSON object per line per event on `out`; problems on `err` with exit code 2."""
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        setup = load_setup(config, calibration=calibration, use_beside=use_beside)
    except AnalysisConfigError as exc:
        print(f"companion analyze: {exc}", file=err)
        return EXIT_BAD_INPUT
    if setup.calibration_file is not None:
        print(f"companion analyze: using calibration {setup.calibration_file} "
              f"(made {setup.calibration.created})", file=err)
    try:
        result = analyze(trace, setup)
    except TraceError as exc:
        # nothing has been printed yet: a bad trace gives no events at all rather than some of them
        print(f"companion analyze: {exc}", file=err)
        return EXIT_BAD_INPUT
    lines = []
    for e in result.events:
        if e.event not in EVENT_KINDS:
            # the documented output has place/remove/move/tip/untip only; the rest is a note for the person
            print(f"companion analyze: at t={e.t:.3f} {e.message}" + (f" ({e.details})" if e.details else ""),
                  file=err)
            continue
        lines.append(json.dumps(e.to_json(candidates=candidates), ensure_ascii=False))
    if lines:
        out.write("\n".join(lines) + "\n")
    out.flush()
    rate = result.trace_seconds / result.processing_seconds if result.processing_seconds > 0 else float("inf")
    print(f"companion analyze: {result.rows} rows, {result.trace_seconds:.1f} s of trace, {len(lines)} events "
          f"({rate:.0f}× real time)", file=err)
    return EXIT_OK
