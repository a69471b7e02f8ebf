"""The `companion` command."""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import logging
import signal
import sys
import threading
from pathlib import Path

from companion import __version__

EXIT_CONFIG = 2
EXIT_START = 1
# modules that add their own subcommands: each has add_commands(subparsers), and every parser it adds
# sets `func` (args -> exit code) with set_defaults
PLUGIN_COMMANDS: tuple[str, ...] = ("companion.table.sensing_commands", "companion.table.doctor", "companion.mqtt.hall",
                                   "companion.replay.commands", "companion.table.plays_command")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="companion", description="Table Companion: keeps a board game's state beside the "
                                "real board and serves a live page for a tablet.")
    p.add_argument("--version", action="version", version=f"companion {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)
    run = sub.add_parser("run", help="run the daemon and serve the table page",
                         description="Run the daemon. With no --config it uses built-in defaults: the simulated "
                                     "table, Balance Duels, 2 players, balance model A.")
    run.add_argument("--config", type=Path, help="the TOML config file (default: built-in defaults)")
    run.add_argument("--simulate", action="store_true", help="use the simulated table instead of real sensors")
    run.add_argument("--host", help="address to listen on (default: from the config, else 127.0.0.1)")
    run.add_argument("--port", type=int, help="port to listen on (default: from the config, else 8080)")
    run.add_argument("--db", type=Path, help="the event store file (default: [store] path, else ./var/)")
    run.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    run.set_defaults(func=cmd_run)
    hp = sub.add_parser("hash-pin", help="turn a table PIN into the salted hash to put in [web] pin",
                        description="Reads a PIN (4-12 digits) and prints the line for the config's [web] section.")
    hp.add_argument("--stdin", action="store_true", help="read the PIN from standard input instead of asking")
    hp.set_defaults(func=cmd_hash_pin)
    for module in PLUGIN_COMMANDS:
        importlib.import_module(module).add_commands(sub)
    return p


def _fail(code: int, message: str) -> int:
    print(f"companion: {message}", file=sys.stderr)
    return code


def cmd_run(args: argparse.Namespace) -> int:
    from companion.config import ConfigError, load

    logging.basicConfig(level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # waitress warns about queue depth under many event streams; the stream cap answers those with 503
    logging.getLogger("waitress.queue").setLevel(logging.ERROR)
    try:
        cfg = load(args.config)
    except ConfigError as exc:
        return _fail(EXIT_CONFIG, str(exc))
    changes = {}
    port_key = "[web] port" if args.config is not None else "--port"
    if args.config is None or args.simulate:
        changes["simulate"] = True
    if args.host is not None:
        changes["host"] = args.host
    if args.port is not None:
        if not 0 <= args.port <= 65535:
            return _fail(EXIT_CONFIG, f"--port must be from 0 to 65535, not {args.port}")
        changes["port"] = args.port
        port_key = "--port"
    if args.db is not None:
        if not str(args.db).strip():
            return _fail(EXIT_CONFIG, "--db must not be empty")
        changes["store_path"] = args.db
    if args.host is not None and not args.host.strip():
        return _fail(EXIT_CONFIG, "--host must not be empty")
    cfg = dataclasses.replace(cfg, **changes)
    return serve(cfg, port_key=port_key)


def cmd_hash_pin(args: argparse.Namespace) -> int:
    import getpass

    from companion.foundation.pin import check_pin_text, hash_pin

    pin = sys.stdin.readline().strip() if args.stdin else getpass.getpass("Table PIN (six digits or more): ")
    problem = check_pin_text(pin) if not pin.startswith("pbkdf2") else "give the PIN itself, not a hash"
    if problem:
        return _fail(EXIT_CONFIG, f"the PIN {problem}")
    if len(pin) < SUGGESTED_PIN_DIGITS:
        print(pin_advice(len(pin)), file=sys.stderr)
    print(f'pin = "{hash_pin(pin)}"')
    return 0


SUGGESTED_PIN_DIGITS = 6


def pin_advice(digits: int) -> str:
    """What a PIN of `digits` digits withstands at the table's ration of wrong PINs (companion/web/auth.py)."""
    from companion.web.auth import TABLE_BURST, TABLE_GUESSES_PER_HOUR

    def days(n: int) -> float:
        return max(0.0, 10 ** n - TABLE_BURST) / TABLE_GUESSES_PER_HOUR / 24

    return (f"companion: a {digits}-digit PIN can be tried out online in {days(digits):,.0f} days (the table checks "
            f"{TABLE_GUESSES_PER_HOUR:g} wrong PINs an hour at most); six digits take {days(6) / 365:,.0f} years. "
            "Six digits or more are suggested.")


def serve(cfg, port_key: str = "[web] port") -> int:
    from companion.table.daemon import Companion
    from companion.store import StoreError
    from companion.web import create_app
    from companion.web import join, serving

    from companion.games.mapdata import MapFileError
    from companion.sensing.calibration import CalibrationFileError

    # the port is taken first, with the app put in later (nothing is served before server.run()): a port in use
    # must stop the daemon before it creates its store, backups or calibration files
    app: list = []
    try:
        server = serving.create(lambda environ, start_response: app[0](environ, start_response), host=cfg.host,
                                port=cfg.port, ident="companion", threads=cfg.max_streams + 8)
    except OSError as exc:
        reason = "is already in use" if exc.errno in (98, 48) else f"cannot be opened ({exc.strerror or exc})"
        return _fail(EXIT_CONFIG, f"{cfg.host}:{cfg.port} {reason} ({port_key}); choose another")
    try:
        companion = Companion(cfg)
    except StoreError as exc:
        server.close()
        return _fail(EXIT_START, str(exc))
    except (CalibrationFileError, MapFileError) as exc:
        server.close()
        return _fail(EXIT_CONFIG, str(exc))
    app.append(create_app(companion))
    port = server.effective_port
    shown = "127.0.0.1" if cfg.host in join.EVERYWHERE else cfg.host
    mode = "simulated table" if cfg.simulate else "real table"
    print(f"Table Companion on the {mode}: open http://{shown}:{port}", flush=True)
    if join.reachable_from_wifi(cfg.host):
        print(f"  on a tablet on this Wi-Fi: {' or '.join(join.urls(cfg.host, port))} (the page shows it as a QR code)",
              flush=True)
        if not cfg.pin_hash:
            print("  WARNING: no PIN is set, so anyone on this Wi-Fi can change the game; set one with "
                  "`companion hash-pin` and [web] pin in the config", flush=True)
    else:
        print("  (this machine only: start with --host 0.0.0.0 so that a tablet on the Wi-Fi can open the page)",
              flush=True)

    stopping = threading.Event()

    def stop(signum, frame):
        stopping.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    companion.start()
    # the HTTP server runs in its own thread so the main thread can supervise the workers and feed systemd
    web = threading.Thread(target=server.run, name="http", daemon=True)
    web.start()
    try:
        companion.main_loop(stopping, checks={"http": web.is_alive})
    finally:
        server.close()
        companion.stop()
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    raise SystemExit(main())
