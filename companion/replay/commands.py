"""`companion replay`: a recorded session through the daemon's Balance Duels path, off-line."""

from __future__ import annotations

import argparse
import json
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import TextIO

EXIT_OK = 0
EXIT_BAD_INPUT = 2
BUNDLE_SUFFIXES = (".tar.gz", ".tgz")
BUNDLE_MAX_BYTES = 512 * 1024 * 1024      # unpacked: a 20-minute window is about 30 MB
BUNDLE_FILES = ("README.txt", "trace.csv", "inputs.jsonl", "config.toml", "calibration.toml", "model.toml",
                "game.jsonl", "daemon.jsonl")


def add_commands(subparsers) -> None:
    rp = subparsers.add_parser(
        "replay", help="re-run a recorded session through the daemon's Balance Duels path",
        description="Runs the daemon's Balance Duels path (follower, arm link, rules) on a trace and the table's "
                    "inputs, on the trace's own clock, as fast as the machine allows, with a fresh in-memory store. "
                    "Prints JSON lines in time order: every game event {t, seq, kind, body, source}, every question "
                    "{t, question, options}, every notice {t, notice}, every answer that could not be applied "
                    "{t, ignored_answer, why}; last a {summary}. TRACE may also be a misread report (.tar.gz) as "
                    "the page downloads it; its files are then used unless named here.")
    rp.add_argument("trace", type=Path, help="the trace (t,sensor,value CSV), or a misread report .tar.gz")
    rp.add_argument("--config", type=Path, help="the daemon's TOML config (sensors, balance model, game)")
    rp.add_argument("--inputs", type=Path, help="the table's inputs, JSON lines (default: none; the config's game "
                                                "starts at t = 0)")
    rp.add_argument("--calibration", type=Path, help="a calibration file (default: calibration.toml beside the "
                                                     "config, if there is one)")
    rp.add_argument("--no-calibration", action="store_true", help="ignore calibration.toml beside the config")
    rp.set_defaults(func=cmd_replay)


def _fail(err: TextIO, message: str) -> int:
    print(f"companion replay: {message}", file=err)
    return EXIT_BAD_INPUT


def _unpack(bundle: Path, into: Path) -> Path:
    """The report's files in `into`; ValueError says what is wrong with it. Only plain files it should hold."""
    try:
        tar = tarfile.open(bundle, mode="r:gz")
    except FileNotFoundError:
        raise ValueError(f"{bundle}: no such file") from None
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise ValueError(f"{bundle}: not a misread report (.tar.gz): {exc}") from None
    total = 0
    found = []
    with tar:
        try:
            for member in tar:
                name = Path(member.name).name
                if not member.isfile() or name not in BUNDLE_FILES or ".." in Path(member.name).parts:
                    continue
                total += member.size
                if total > BUNDLE_MAX_BYTES:
                    raise ValueError(f"{bundle}: unpacks to more than {BUNDLE_MAX_BYTES // (1024 * 1024)} MB")
                data = tar.extractfile(member)
                if data is None:
                    continue
                (into / name).write_bytes(data.read())
                found.append(name)
        except (tarfile.TarError, OSError, EOFError) as exc:
            raise ValueError(f"{bundle}: damaged ({exc})") from None
    if "trace.csv" not in found:
        raise ValueError(f"{bundle}: has no trace.csv; is it a misread report?")
    return into


def cmd_replay(args: argparse.Namespace, *, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    if args.calibration is not None and args.no_calibration:
        return _fail(err, "--calibration and --no-calibration contradict each other")
    if str(args.trace).endswith(BUNDLE_SUFFIXES):
        with tempfile.TemporaryDirectory(prefix="companion-replay-") as tmp:
            try:
                folder = _unpack(args.trace, Path(tmp))
            except ValueError as exc:
                return _fail(err, str(exc))
            given = lambda name: folder / name if (folder / name).is_file() else None  # noqa: E731
            config = args.config or given("config.toml")
            if config is None:
                return _fail(err, f"{args.trace}: has no config.toml; give one with --config")
            calibration = args.calibration
            if calibration is None and not args.no_calibration and args.config is None:
                calibration = given("calibration.toml")
            return run(folder / "trace.csv", config, inputs=args.inputs or given("inputs.jsonl"),
                       calibration=calibration, use_beside=not args.no_calibration,
                       expected=given("daemon.jsonl"), out=out, err=err)
    if args.config is None:
        return _fail(err, "--config is needed with a trace file (the daemon's config: sensors, balance model, game)")
    return run(args.trace, args.config, inputs=args.inputs, calibration=args.calibration,
               use_beside=not args.no_calibration, out=out, err=err)


def run(trace: str | Path, config: str | Path, *, inputs: str | Path | None = None,
        calibration: str | Path | None = None, use_beside: bool = True, expected: Path | None = None,
        out: TextIO | None = None, err: TextIO | None = None) -> int:
    """The command's work: problems on `err` with exit code 2 and nothing on `out`; else every line on `out`."""
    from companion.recorder.inputs import InputError, read_inputs
    from companion.replay.session import Replay, check_inputs, load_setup
    from companion.sensing.analysis import AnalysisConfigError
    from companion.sensing.trace import TraceError, read_trace

    out = out or sys.stdout
    err = err or sys.stderr
    try:
        setup = load_setup(config, calibration=calibration, use_beside=use_beside)
    except AnalysisConfigError as exc:
        return _fail(err, str(exc))
    cells = [c.name for c in setup.calibration.cells]
    if not cells:
        return _fail(err, f"{config}: no [[load_cells]]: a replay follows the arm by its load cells")
    try:
        items = read_inputs(inputs) if inputs is not None else []
        check_inputs(setup, items, str(inputs))
    except InputError as exc:
        return _fail(err, str(exc))
    if setup.calibration_file is not None:
        print(f"companion replay: using calibration {setup.calibration_file}", file=err)
    try:
        result = Replay(setup, items).run(read_trace(trace, load_cells=cells))
    except TraceError as exc:
        # nothing has been printed: a trace that goes bad half-way gives no output rather than half of one
        return _fail(err, str(exc))
    if not result.sensors & set(cells):
        return _fail(err, f"{trace}: no row of any load cell the config names ({', '.join(cells)}): the trace and "
                          "the config do not fit")
    missing = [c for c in cells if c not in result.sensors]
    if missing:
        print(f"companion replay: the trace has no rows of {', '.join(missing)} (named in {config}); the follower "
              "waited for them as the daemon would", file=err)
    out.write(result.text())
    out.flush()
    rate = result.trace_seconds / result.processing_seconds if result.processing_seconds > 0 else float("inf")
    s = result.summary
    print(f"companion replay: {result.rows} rows, {result.trace_seconds:.1f} s of trace, {s['events']} events "
          f"({s['moves_from_sensors']} moves from the sensors), {s['questions']} questions, {s['notices']} notices "
          f"in {result.processing_seconds:.2f} s ({rate:.0f}× real time)", file=err)
    if expected is not None:
        print(f"companion replay: {compare(result.events(), expected)}", file=err)
    return EXIT_OK


def compare(events: list[dict], expected: Path) -> str:
    """Whether the replay's events are the daemon's (daemon.jsonl of a report), and where they part."""
    theirs = []
    for line in expected.read_text(encoding="utf-8").splitlines():
        try:
            item = json.loads(line)
        except (ValueError, RecursionError):
            return f"{expected} is not JSON lines; nothing compared"
        if isinstance(item, dict) and "seq" in item:
            theirs.append(item)
    keys = ("kind", "body", "source")
    for i, (a, b) in enumerate(zip(events, theirs)):
        if any(a.get(k) != b.get(k) for k in keys) or abs(a["t"] - b.get("t", 0)) > 1e-6:
            return (f"the replay parts from the daemon at event {i + 1}: replay {json.dumps(a, sort_keys=True)}; "
                    f"daemon {json.dumps(b, sort_keys=True)}")
    if len(events) != len(theirs):
        return f"the replay has {len(events)} events, the daemon had {len(theirs)}"
    return f"the replay matches the daemon's {len(theirs)} events, event for event"
