"""`companion plays`: the history's plays on standard output (or a file) as CSV, the API's JSON or a BG Stats file.

It reads the same config and store as `companion run` (`--config`, `--db`) and opens the store read-only, so it
may run beside the daemon: nothing is written to the store, and the history's cache beside it is only read (a
play it does not hold, or holds for other code, is folded from the events here and the cache left as it was).
The filters, bounds and formats are the API's (`GET /api/plays/export`); a bad argument is one line on standard
error and exit code 2, a store that cannot be read exit code 1.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TextIO

EXIT_OK, EXIT_STORE, EXIT_ARGS = 0, 1, 2


def add_commands(subparsers) -> None:
    p = subparsers.add_parser(
        "plays", help="export the history's plays: CSV, JSON or a BG Stats file",
        description="Write the plays of the event store (newest first; at most 10,000 at a time, --offset for the "
                    "next ones) as CSV (one row per player per play), as the API's JSON, or with --json --bgstats "
                    "as a file BG Stats imports. Reads the store only: it may run while the daemon does.")
    p.add_argument("--csv", action="store_true", help="CSV, one row per player per play (UTF-8)")
    p.add_argument("--json", action="store_true", help="JSON: the plays as GET /api/plays gives them")
    p.add_argument("--bgstats", action="store_true", help="with --json: in BG Stats' own export format")
    p.add_argument("--config", type=Path, help="the TOML config file (default: built-in defaults, as `companion run`)")
    p.add_argument("--db", type=Path, help="the event store file (default: [store] path, else ./var/)")
    p.add_argument("--game", help="only this game (balance_duels, imperial, risk, balance_of_power, global_powers)")
    p.add_argument("--player", help="only plays with this person (a name, matched as the page matches names)")
    p.add_argument("--since", help="only plays started at or after this date (2026-03-14) or time with offset")
    p.add_argument("--until", help="only plays started before this date or time")
    p.add_argument("--status", help="all (default), finished or unfinished")
    p.add_argument("--limit", help="at most this many plays, 1-10000 (default 10000)")
    p.add_argument("--offset", help="skip this many of the newest first (default 0)")
    p.add_argument("--tz", help="the time zone of the CSV's and BG Stats' times, e.g. Europe/Berlin (default: this "
                                "machine's)")
    p.add_argument("--bom", action="store_true", help="start the CSV with a UTF-8 byte order mark (for Excel)")
    p.add_argument("-o", "--output", type=Path, help="write to this file instead of standard output")
    p.set_defaults(func=cmd_plays)


def _fail(err: TextIO, code: int, message: str) -> int:
    print(f"companion plays: {message}", file=err)
    return code


def cmd_plays(args: argparse.Namespace, *, out: TextIO | None = None, err: TextIO | None = None) -> int:
    from companion.config import ConfigError, load
    from companion.games.mapdata import MapFileError
    from companion.games.registry import engines
    from companion.history import exports, query
    from companion.history.index import MAX_EXPORT, MAX_OFFSET, NotReady
    from companion.history.people import MAX_NAME
    from companion.sensing.calibration import CalibrationFileError
    from companion.store import EventStore, StoreError
    from companion.table.daemon import arm_model, history_index
    from companion.table.maps import MapCompletions

    if out is None:
        out = sys.stdout
        if hasattr(out, "reconfigure"):
            out.reconfigure(encoding="utf-8")      # UTF-8 whatever the locale says
    err = err or sys.stderr
    if args.csv == args.json:
        return _fail(err, EXIT_ARGS, "give one of --csv or --json (--json --bgstats for a BG Stats file)")
    if args.bgstats and not args.json:
        return _fail(err, EXIT_ARGS, "--bgstats goes with --json (a BG Stats file is JSON)")
    if args.bom and not args.csv:
        return _fail(err, EXIT_ARGS, "--bom is for --csv")
    if args.tz is not None and args.json and not args.bgstats:
        return _fail(err, EXIT_ARGS, "--tz is for --csv and --bgstats; the JSON gives every time in UTC")
    try:
        since, until = query.moment("--since", args.since), query.moment("--until", args.until)
        query.span(since, until, ("--since", "--until"))
        status = query.status("--status", args.status)
        limit = query.whole_number("--limit", args.limit, 1, MAX_EXPORT, MAX_EXPORT)
        offset = query.whole_number("--offset", args.offset, 0, MAX_OFFSET, 0)
        tz = query.zone("--tz", args.tz)
    except ValueError as exc:
        return _fail(err, EXIT_ARGS, str(exc))
    player = " ".join(args.player.split()) if args.player is not None else None
    if player is not None and not 1 <= len(player) <= MAX_NAME:
        return _fail(err, EXIT_ARGS, f"--player must be a name of 1 to {MAX_NAME} characters")
    if args.db is not None and not str(args.db).strip():
        return _fail(err, EXIT_ARGS, "--db must not be empty")
    try:
        cfg = load(args.config)
        model = arm_model(cfg)
        found = engines(model, MapCompletions(cfg.maps_dir()).all())
    except (ConfigError, CalibrationFileError, MapFileError) as exc:
        return _fail(err, EXIT_ARGS, str(exc))
    if args.game is not None and args.game not in found:
        return _fail(err, EXIT_ARGS, f"--game must be one of {', '.join(sorted(found))}, not {args.game[:40]!r}")
    path = args.db if args.db is not None else cfg.database()
    try:
        store = EventStore(path, read_only=True)
    except StoreError as exc:
        return _fail(err, EXIT_STORE, str(exc))
    try:
        # the daemon's current game is the store's newest one (a new game and a resume each start one)
        current = store.latest_game()
    except StoreError as exc:
        store.close()
        return _fail(err, EXIT_STORE, str(exc))
    index = history_index(store, lambda: found, model, current_game=lambda: current, read_only=True)
    try:
        index.warm()
        got = index.export(game=args.game, player=player, since=since, until=until, status=status, limit=limit,
                           offset=offset)
    except StoreError as exc:
        return _fail(err, EXIT_STORE, str(exc))
    except NotReady as exc:           # warm() has just run: only a store restored while it read says this
        return _fail(err, EXIT_STORE, str(exc))
    finally:
        index.close()
        store.close()
    if args.csv:
        chunks = exports.csv_chunks(got["plays"], tz, bom=args.bom)
    elif args.bgstats:
        doc = exports.bgstats(got["plays"], store=got["store"], firsts=got["firsts"], tz=tz,
                              location=(cfg.mqtt.display_name if cfg.mqtt is not None else "Table Companion"),
                              total=got["total"], offset=offset)
        chunks = iter([json.dumps(doc, ensure_ascii=False, allow_nan=False, indent=1), "\n"])
    else:
        page = {k: got[k] for k in ("total", "offset", "limit", "plays")}
        chunks = iter([json.dumps(page, ensure_ascii=False, allow_nan=False, indent=1), "\n"])
    try:
        if args.output is not None:
            # newline="": the CSV's own CRLF line ends, unchanged
            with open(args.output, "w", encoding="utf-8", newline="") as f:
                f.writelines(chunks)
        else:
            out.writelines(chunks)
            out.flush()
    except OSError as exc:
        return _fail(err, EXIT_STORE, f"cannot write {args.output or 'the output'}: {exc}")
    shown = len(got["plays"])
    more = got["total"] - offset - shown
    note = f"; {more} more: --offset {offset + shown}" if more > 0 else ""
    print(f"companion plays: {shown} of {got['total']} plays from {path}{note}", file=err)
    return EXIT_OK
