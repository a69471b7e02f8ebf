"""The sensing subcommands: `companion calibrate`, `companion record`, `companion analyze`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


EXIT_OK = 0
EXIT_START = 1
EXIT_BAD_INPUT = 2


class _SimulatedProfiles:
    """The simulated sensors' noise profiles as argparse choices, read from the simulator only when asked.

    Every `companion` command builds this parser; only `record --simulate` (or its help) needs the simulator.
    """

    def _names(self) -> list[str]:
        from companion.simulation.traces import PROFILES

        return sorted(PROFILES)

    def __contains__(self, name: object) -> bool:
        return name in self._names()

    def __iter__(self):
        return iter(self._names())


def add_commands(subparsers) -> None:
    cal = subparsers.add_parser(
        "calibrate", help="calibrate the balance arm's sensors, step by step",
        description="Walks you through the calibration: the empty arm (tare), a known weight in a holder (counts "
                    "per gram, the arm's stiffness κ and swing), the tipping angle θ_max, and optionally every "
                    "holder's position. Each capture is checked (saturation, too small a change, an unsettled "
                    "signal) and refused with the reason. Writes calibration.toml beside the config.")
    cal.add_argument("--config", type=Path, help="the TOML config (default: built-in defaults)")
    cal.add_argument("--simulate", action="store_true", help="calibrate the simulated table (its known weight is "
                                                             "an L pawn)")
    cal.add_argument("--out", type=Path, help="where to write (default: calibration.toml beside the config)")
    cal.add_argument("--mass", type=float, help="the known weight in grams (asked otherwise)")
    cal.add_argument("--holders", action="store_true",
                     help="also walk the weight through every holder, to measure where each really is")
    cal.add_argument("--loaded", action="store_true",
                     help="also measure the loaded arm (a dozen pawns on it, then the weight with them): how much "
                          "pawns sitting above the pivot soften it")
    cal.add_argument("--seed", type=int, default=0, help="random seed of the simulated table")
    cal.set_defaults(func=cmd_calibrate)

    rec = subparsers.add_parser(
        "record", help="record a sensor trace (t,sensor,value CSV)",
        description="Records every sensor into a trace file until --seconds have passed or Ctrl-C. With "
                    "--simulate, records random hands on the simulated table (instantly) instead.")
    rec.add_argument("--out", type=Path, required=True, help="the trace file to write (CSV)")
    rec.add_argument("--seconds", type=float, help="how long (default: until Ctrl-C; 60 with --simulate)")
    rec.add_argument("--config", type=Path, help="the TOML config naming the sensors")
    rec.add_argument("--simulate", action="store_true", help="record from the simulated table")
    rec.add_argument("--profile", default="quiet-10sps", choices=_SimulatedProfiles(),
                     help="noise of the simulated sensors (default quiet-10sps)")
    rec.add_argument("--seed", type=int, default=0, help="random seed of the simulated table")
    rec.add_argument("--write-config", type=Path, metavar="FILE",
                     help="with --simulate and no --config: also write a config matching the simulated sensors")
    rec.add_argument("--truth", type=Path, metavar="FILE",
                     help="with --simulate: also write what the hands did, one JSON object per line")
    rec.set_defaults(func=cmd_record)

    ana = subparsers.add_parser(
        "analyze", help="infer placements, moves, removals and tips from a trace",
        description="Prints one JSON object per line per inferred event: t (trace time the event was decided), "
                    "event (place/remove/move/tip/untip), size, holder, from, to, confidence, ambiguous. Keys that "
                    "do not apply are left out; a beat prints a move and a remove with the same t.")
    ana.add_argument("trace", type=Path, help="the trace file (t,sensor,value CSV)")
    ana.add_argument("--config", type=Path, required=True, help="the TOML config (sensors, balance model)")
    ana.add_argument("--calibration", type=Path, help="a calibration file (default: calibration.toml beside the "
                                                      "config, if there is one)")
    ana.add_argument("--no-calibration", action="store_true", help="ignore calibration.toml beside the config")
    ana.add_argument("--candidates", action="store_true", help="add the ranked candidates and the measurement")
    ana.set_defaults(func=cmd_analyze)


def _fail(code: int, message: str) -> int:
    print(f"companion: {message}", file=sys.stderr)
    return code


def cmd_analyze(args: argparse.Namespace) -> int:
    from companion.sensing.analysis import run

    if args.calibration is not None and args.no_calibration:
        return _fail(EXIT_BAD_INPUT, "--calibration and --no-calibration contradict each other")
    return run(str(args.trace), str(args.config), calibration=args.calibration, use_beside=not args.no_calibration,
               candidates=args.candidates)


def _config(path: Path | None, *, wiring: bool = True):
    """The config (built-in defaults without a path); a bad one ends the command with exit code 2."""
    from companion.config import load
    from companion.sensing.analysis import AnalysisConfigError, read_config

    if path is None:
        return load(None)
    try:
        return read_config(path, wiring=wiring)[0]
    except AnalysisConfigError as exc:
        raise SystemExit(_fail(EXIT_BAD_INPUT, str(exc))) from None


def cmd_record(args: argparse.Namespace) -> int:
    if args.seconds is not None and not args.seconds > 0:
        return _fail(EXIT_BAD_INPUT, f"--seconds must be more than 0, not {args.seconds:g}")
    if args.simulate:
        return _record_simulated(args)
    if args.write_config or args.truth:
        return _fail(EXIT_BAD_INPUT, "--write-config and --truth go with --simulate")
    from companion.table.record import DeviceReader, DriversUnavailable, build_devices, record_devices

    cfg = _config(args.config)
    if not cfg.load_cells and cfg.accelerometer is None and cfg.tilt_switch is None:
        return _fail(EXIT_BAD_INPUT, f"{cfg.source}: no sensors are configured ([[load_cells]], [accelerometer], "
                                     "[tilt_switch]); nothing to record")
    try:
        devices = build_devices(cfg)
    except DriversUnavailable as exc:
        return _fail(EXIT_START, str(exc))
    print(f"recording to {args.out}" + (f" for {args.seconds:g} s" if args.seconds else "; Ctrl-C stops"),
          file=sys.stderr)
    stats = record_devices(DeviceReader(devices), args.out, args.seconds)
    faults = sum(stats.faults.values())
    print(f"wrote {stats.rows} rows to {args.out}"
          + (f"; {faults} device faults ({stats.last_fault})" if faults else "")
          + (f"; {stats.late} rows too late to place in order were dropped" if stats.late else ""), file=sys.stderr)
    return EXIT_OK


def _record_simulated(args: argparse.Namespace) -> int:
    from companion.sensing.calibration import from_config
    from companion.table.record import write_rows
    from companion.simulation.traces import config_toml, random_session

    if args.config is not None and args.write_config is not None:
        return _fail(EXIT_BAD_INPUT, "--write-config is for a trace without --config (it describes the simulated "
                                     "sensors); with --config the trace follows that config's sensors")
    cfg = _config(args.config, wiring=False)
    model = cfg.model()
    seconds = args.seconds if args.seconds is not None else 60.0
    cal = from_config(cfg) if args.config is not None and cfg.load_cells else None
    script = random_session(model, seconds, profile=args.profile, seed=args.seed, calibration=cal)
    n = write_rows(args.out, script.rows)
    if args.write_config is not None:
        args.write_config.write_text(config_toml(model, script.calibration(), model_ref=cfg.model_ref),
                                     encoding="utf-8")
    if args.truth is not None:
        with args.truth.open("w", encoding="utf-8") as f:
            for a in script.actions:
                f.write(json.dumps(a.to_json(), ensure_ascii=False) + "\n")
    print(f"wrote {n} rows ({script.now:.1f} s of the simulated table, {len(script.actions)} actions, "
          f"profile {args.profile}) to {args.out}", file=sys.stderr)
    return EXIT_OK


def cmd_calibrate(args: argparse.Namespace) -> int:
    from companion.sensing.calibration import calibration_path, from_config
    from companion.sensing.calibration_steps import CalibrationSession
    from companion.table.walkthrough import DeviceArm, SimulatedArm, Walkthrough

    if args.mass is not None and not args.mass > 0:
        return _fail(EXIT_BAD_INPUT, f"--mass must be a positive number of grams, not {args.mass:g}")
    cfg = _config(args.config, wiring=not args.simulate)
    model = cfg.model()
    out = args.out or calibration_path(args.config, cfg.base_dir)
    if args.simulate:
        names = [c.name for c in cfg.load_cells] or None
        source = SimulatedArm(model, seed=args.seed, names=names)
        base = source.base_calibration(from_config(cfg) if cfg.load_cells else None)
        known = source.known_mass_g
    else:
        from companion.table.record import DriversUnavailable, build_devices

        if not cfg.load_cells:
            return _fail(EXIT_BAD_INPUT, f"{cfg.source}: no [[load_cells]] configured: there is nothing to calibrate "
                                         "(or use --simulate)")
        try:
            source = DeviceArm(build_devices(cfg))
        except DriversUnavailable as exc:
            return _fail(EXIT_START, str(exc))
        base = from_config(cfg)
        known = None
    session = CalibrationSession(model, base, known_mass_g=args.mass or known)
    walk = Walkthrough(session, source, ask=input, out=sys.stdout, model_name=model.name)
    return walk.run(out, holders=True if args.holders else None, loaded=True if args.loaded else None,
                    mass_g=args.mass)
