"""The daemon's configuration: one TOML file, checked whole before anything starts.

Every problem is reported as `FILE: [section] key: what is wrong`, so a person
editing companion.toml on a Pi over SSH can fix it without reading code.

`errors` holds ConfigError, below every module that raises it; `mqtt` checks the `[mqtt]` section.
Imports: games (each game checks its own options), foundation.
"""

from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from companion.config.errors import ConfigError
from companion.config.mqtt import MqttConfig, parse_mqtt
from companion.foundation import strict_json
from companion.foundation.pin import check_pin_text, hash_pin
from companion.games.balance_model import Model, ModelError, load_model

GAMES = ("balance_duels", "imperial", "risk", "balance_of_power", "global_powers")
DEFAULT_PORT = 8080
# far deeper than any real setting (a player list in game options is 3 levels); deeper values would reach the
# rules engines, and json.dumps in the store, as a RecursionError
MAX_DEPTH = 32
# the players' map completions: a folder beside the config unless [maps] dir says otherwise
MAPS_DIR = "maps"


@dataclass(frozen=True)
class LoadCellConfig:
    name: str
    offset_counts: float = 0.0
    counts_per_gram: float = 2150.0
    adc: str = "hx711"
    dout_pin: int | None = None
    sck_pin: int | None = None
    gain: int = 128
    i2c_bus: int = 1
    address: int = 0x2A


@dataclass(frozen=True)
class Config:
    source: str = "built-in defaults"
    base_dir: Path = field(default_factory=Path.cwd)
    game: str = "balance_duels"
    players: int = 2
    game_options: Mapping[str, Any] = field(default_factory=dict)
    balance: Mapping[str, Any] = field(default_factory=dict)
    model_ref: str = "A"
    store_path: Path | None = None
    maps_path: Path | None = None  # [maps] dir: the players' completions of the game maps
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    max_streams: int = 24
    heartbeat_s: float = 15.0
    pin_hash: str | None = None   # the table PIN, salted and hashed; None: changes are open (localhost only)
    # the PIN as written when the config has it plain (its hash gets a fresh salt at every start): only to
    # recognise the same PIN again for the kept device key (web/auth.py device_secret); never shown
    pin_plain: str | None = field(default=None, repr=False, compare=False)
    web_hosts: tuple[str, ...] = ()   # [web] hosts: further names the page answers to (besides IPs, localhost, hostname)
    simulate: bool = False
    demo: bool = True
    demo_interval_s: float = 2.5
    seed: int | None = None
    follow_arm: bool = True       # [simulate] follow_arm / real sensors: the game advances from inferred events
    load_cells: tuple[LoadCellConfig, ...] = ()
    accelerometer: Mapping[str, Any] | None = None
    tilt_switch: Mapping[str, Any] | None = None
    buttons: Mapping[str, int] = field(default_factory=dict)
    indicators: Mapping[str, int] = field(default_factory=dict)
    mqtt: MqttConfig | None = None
    recorder_minutes: float = 20.0   # [recorder] the flight recorder keeps this much table time in RAM
    recorder_max_mb: float = 16.0    # ... and at most this much memory
    # per game, what a named button sends as a game action (on top of roll/next/confirm/undo)
    button_actions: Mapping[str, Mapping[str, Mapping[str, Any]]] = field(default_factory=lambda: {
        g: {"end": {"type": "end_turn"}} for g in ("risk", "balance_of_power", "global_powers")})

    @property
    def game_follows_arm(self) -> bool:
        """Balance Duels advances from the sensed arm: with real sensors, or on the simulated table if asked."""
        return self.follow_arm and (self.simulate or bool(self.load_cells))

    @property
    def sensors(self) -> bool:
        return bool(self.load_cells) or self.accelerometer is not None or self.tilt_switch is not None

    def model(self) -> Model:
        """The balance model with this arm's physics (checked once at load)."""
        ref = self.model_ref
        path = self.base_dir / ref
        target = str(path) if ("/" in ref or ref.endswith(".toml")) else ref
        phys = {k: self.balance[k] for k in
                ("kappa_gmm", "theta_max_deg", "pawn_mass_g", "mass_sigma_g", "tip_sigma_gmm", "risky_probability")
                if k in self.balance}
        return load_model(target, **phys)

    @property
    def start_options(self) -> dict:
        """The options a fresh game of the configured kind starts with ([game] players goes in too)."""
        return {"players": self.players, **dict(self.game_options)}

    def maps_dir(self) -> Path:
        """Where the players' map completions live: [maps] dir, else maps/ beside the config (as calibration.toml)."""
        return self.maps_path if self.maps_path is not None else self.base_dir / MAPS_DIR

    def database(self) -> Path:
        return self.store_path if self.store_path is not None else default_state_dir() / "companion.sqlite3"


def default_state_dir() -> Path:
    """systemd's StateDirectory when run as a service, else ./var in a checkout."""
    import os

    state = os.environ.get("STATE_DIRECTORY")
    if state:
        return Path(state.split(":")[0])
    return Path.cwd() / "var"


class _Checker:
    def __init__(self, source: str):
        self.source = source

    def fail(self, where: str, message: str) -> ConfigError:
        return ConfigError(f"{self.source}: {where}: {message}")

    def table(self, data: Mapping[str, Any], section: str, allowed: set[str]) -> Mapping[str, Any]:
        value = data.get(section, {})
        if not isinstance(value, Mapping):
            raise self.fail(f"[{section}]", "must be a table")
        unknown = sorted(set(value) - allowed)
        if unknown:
            raise self.fail(f"[{section}] {unknown[0]}", f"unknown key (known keys: {', '.join(sorted(allowed))})")
        return value

    def get(self, table: Mapping[str, Any], section: str, key: str, kind: type | tuple, default: Any,
            check: Callable[[Any], str | None] | None = None) -> Any:
        if key not in table:
            return default
        value = table[key]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if float in kinds and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if isinstance(value, bool) and bool not in kinds or not isinstance(value, kinds):
            names = " or ".join({int: "a whole number", float: "a number", str: "a string", bool: "true or false",
                                 dict: "a table", list: "a list"}.get(k, k.__name__) for k in kinds)
            raise self.fail(f"[{section}] {key}", f"must be {names}, not {value!r}")
        if isinstance(value, float) and not math.isfinite(value):
            raise self.fail(f"[{section}] {key}", "must be a finite number")
        if check is not None:
            problem = check(value)
            if problem:
                raise self.fail(f"[{section}] {key}", problem)
        return value


def _not_empty(v: str) -> str | None:
    # an empty path is not "the default": Path("") is the working directory, and the store went to ./var unasked
    return None if v.strip() else "must not be empty"


def _where(path: str) -> str:
    """`game.options.x` as the config's messages name keys: `[game] options.x`."""
    section, _, rest = path.partition(".")
    if "[" in section:          # an array of tables: load_cells[0].name
        section, _, index = section.partition("[")
        rest = f"#{int(index.rstrip(']')) + 1}" + (f" {rest}" if rest else "")
    return f"[{section}] {rest}" if rest else f"[{section}]"


def _deep(data: Any, limit: int = MAX_DEPTH) -> str | None:
    """The key (section, key and the one below it) holding the first value nested more than `limit` deep."""
    stack = [("", data, 0)]
    while stack:
        at, v, depth = stack.pop()
        if depth > limit:
            return at
        if isinstance(v, Mapping):
            items = ((str(k), x) for k, x in v.items())
        elif isinstance(v, list):
            items = ((f"[{i}]", x) for i, x in enumerate(v))
        else:
            continue
        for k, x in items:
            named = at if depth >= 3 else f"{at}{k}" if k.startswith("[") or not at else f"{at}.{k}"
            stack.append((named, x, depth + 1))
    return None


def _positive(v: float) -> str | None:
    return None if v > 0 else "must be greater than 0"


def _port(v: int) -> str | None:
    return None if 1 <= v <= 65535 else "must be a port number from 1 to 65535"


MAX_WEB_HOSTS = 32
_HOST_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?\.?")


def _host_names(v: list) -> str | None:
    """[web] hosts: the names (as a browser sends them in Host, without the port) the page answers to."""
    if len(v) > MAX_WEB_HOSTS:
        return f"at most {MAX_WEB_HOSTS} names, not {len(v)}"
    for name in v:
        if not isinstance(name, str):
            return f"must be a list of host names (strings), not {name!r}"
        if len(name) > 253 or not _HOST_NAME.fullmatch(name) or ".." in name:
            return f"{name[:60]!r} is not a host name (letters, digits, '-' and '.', at most 253 characters)"
    return None


def _gpio(v: int) -> str | None:
    if not 0 <= v <= 27:
        return "must be a BCM GPIO number from 0 to 27"
    if v in (2, 3):
        return "GPIO 2 and 3 carry I2C (with fixed pull-ups); use another pin"
    return None


def parse(data: Mapping[str, Any], source: str = "built-in defaults", base_dir: Path | None = None) -> Config:
    """Check a config table (as read from TOML); ConfigError names the first problem."""
    c = _Checker(source)
    deep = _deep(data)
    if deep is not None:
        raise c.fail(_where(deep), f"nested too deeply (more than {MAX_DEPTH} levels)")
    top = {"game", "balance", "store", "web", "simulate", "load_cells", "accelerometer", "tilt_switch",
           "buttons", "indicators", "mqtt", "button_actions", "recorder", "maps"}
    unknown = sorted(set(data) - top)
    if unknown:
        raise c.fail(unknown[0], f"unknown section (known: {', '.join(sorted(top))})")
    base = base_dir or Path.cwd()

    game = c.table(data, "game", {"name", "players", "options"})
    name = c.get(game, "game", "name", str, "balance_duels",
                 lambda v: None if v in GAMES else f"must be one of {', '.join(GAMES)}")
    players = c.get(game, "game", "players", int, 2, lambda v: None if 2 <= v <= 6 else "must be from 2 to 6")
    options = c.get(game, "game", "options", dict, {})

    bal = c.table(data, "balance", {"model", "kappa_gmm", "theta_max_deg", "pawn_mass_g", "mass_sigma_g",
                                    "tip_sigma_gmm", "risky_probability"})
    model_ref = c.get(bal, "balance", "model", str, "A", _not_empty)
    balance = {}
    for key in ("kappa_gmm", "theta_max_deg", "tip_sigma_gmm", "risky_probability"):
        if key in bal:
            balance[key] = c.get(bal, "balance", key, float, None)
    for key in ("pawn_mass_g", "mass_sigma_g"):
        if key in bal:
            balance[key] = c.get(bal, "balance", key, dict, None)

    store = c.table(data, "store", {"path"})
    store_path = c.get(store, "store", "path", str, None, _not_empty)
    maps = c.table(data, "maps", {"dir"})
    maps_dir = c.get(maps, "maps", "dir", str, None, lambda v: None if v.strip() else "must name a directory")

    web = c.table(data, "web", {"host", "port", "max_streams", "heartbeat_s", "pin", "hosts"})
    web_hosts = tuple(h.lower().rstrip(".") for h in c.get(web, "web", "hosts", list, [], _host_names))
    pin = c.get(web, "web", "pin", str, None, check_pin_text)
    pin_hash = None if pin is None else pin if "$" in pin else hash_pin(pin)
    pin_plain = pin if pin is not None and "$" not in pin else None
    # the whole Wi-Fi may see the table only when changes need the PIN
    host = c.get(web, "web", "host", str, "0.0.0.0" if pin_hash else "127.0.0.1", _not_empty)
    port = c.get(web, "web", "port", int, DEFAULT_PORT, _port)
    max_streams = c.get(web, "web", "max_streams", int, 24, lambda v: None if 1 <= v <= 200 else "must be from 1 to 200")
    heartbeat = c.get(web, "web", "heartbeat_s", float, 15.0,
                      lambda v: None if 0.05 <= v <= 15 else "must be from 0.05 to 15 seconds")

    rec = c.table(data, "recorder", {"minutes", "max_mb"})
    recorder_minutes = c.get(rec, "recorder", "minutes", float, 20.0,
                             lambda v: None if 1 <= v <= 180 else "must be from 1 to 180 minutes")
    recorder_max_mb = c.get(rec, "recorder", "max_mb", float, 16.0,
                            lambda v: None if 1 <= v <= 256 else "must be from 1 to 256 (MB of RAM)")

    sim = c.table(data, "simulate", {"enabled", "demo", "demo_interval_s", "seed", "follow_arm"})
    follow_arm = c.get(sim, "simulate", "follow_arm", bool, True)
    simulate = c.get(sim, "simulate", "enabled", bool, False)
    demo = c.get(sim, "simulate", "demo", bool, True)
    demo_interval = c.get(sim, "simulate", "demo_interval_s", float, 2.5, _positive)
    seed = c.get(sim, "simulate", "seed", int, None)

    cells_raw = data.get("load_cells", [])
    if not isinstance(cells_raw, list):
        raise c.fail("[[load_cells]]", "must be an array of tables ([[load_cells]])")
    cells = []
    names = set()
    for i, raw in enumerate(cells_raw):
        sec = f"load_cells #{i + 1}"
        if not isinstance(raw, Mapping):
            raise c.fail(f"[[load_cells]] #{i + 1}", "must be a table")
        known = {"name", "offset_counts", "counts_per_gram", "adc", "dout_pin", "sck_pin", "gain", "i2c_bus", "address"}
        unknown = sorted(set(raw) - known)
        if unknown:
            raise c.fail(f"[{sec}] {unknown[0]}", f"unknown key (known keys: {', '.join(sorted(known))})")
        cname = c.get(raw, sec, "name", str, f"load{i}",
                      lambda v: None if v.startswith("load") and v[4:].isdigit() else "must be load0, load1, …")
        if cname in names:
            raise c.fail(f"[{sec}] name", f"'{cname}' is used twice")
        names.add(cname)
        cells.append(LoadCellConfig(
            name=cname,
            offset_counts=c.get(raw, sec, "offset_counts", float, 0.0),
            counts_per_gram=c.get(raw, sec, "counts_per_gram", float, 2150.0,
                                  lambda v: None if v != 0 else "must not be 0"),
            adc=c.get(raw, sec, "adc", str, "hx711",
                      lambda v: None if v in ("hx711", "nau7802") else "must be \"hx711\" or \"nau7802\""),
            dout_pin=c.get(raw, sec, "dout_pin", int, None, _gpio),
            sck_pin=c.get(raw, sec, "sck_pin", int, None, _gpio),
            gain=c.get(raw, sec, "gain", int, 128, lambda v: None if v in (64, 128) else "must be 128 or 64"),
            i2c_bus=c.get(raw, sec, "i2c_bus", int, 1, lambda v: None if v >= 0 else "must be 0 or more"),
            address=c.get(raw, sec, "address", int, 0x2A, lambda v: None if 0x03 <= v <= 0x77 else "must be an I2C address 0x03-0x77"),
        ))

    accel = None
    if "accelerometer" in data:
        a = c.table(data, "accelerometer", {"chip", "i2c_bus", "address", "axis", "level_g"})
        accel = {
            "chip": c.get(a, "accelerometer", "chip", str, "mpu6050",
                          lambda v: None if v in ("mpu6050", "adxl345") else "must be \"mpu6050\" or \"adxl345\""),
            "i2c_bus": c.get(a, "accelerometer", "i2c_bus", int, 1),
            "address": c.get(a, "accelerometer", "address", int, None),
            "axis": c.get(a, "accelerometer", "axis", str, "ax",
                          lambda v: None if v in ("ax", "ay", "az") else "must be ax, ay or az"),
            "level_g": c.get(a, "accelerometer", "level_g", float, 0.0,
                             lambda v: None if -1 < v < 1 else "must be between -1 and 1"),
        }
    tilt = None
    if "tilt_switch" in data:
        t = c.table(data, "tilt_switch", {"pin", "active_low", "debounce_ms"})
        tilt = {
            "pin": c.get(t, "tilt_switch", "pin", int, None, _gpio),
            "active_low": c.get(t, "tilt_switch", "active_low", bool, True),
            "debounce_ms": c.get(t, "tilt_switch", "debounce_ms", float, 30.0, _positive),
        }
    buttons_raw = data.get("buttons", {})
    if not isinstance(buttons_raw, Mapping):
        raise c.fail("[buttons]", "must be a table of button name = GPIO number")
    for k in buttons_raw:
        if not k.replace("_", "").isalnum():
            raise c.fail(f"[buttons] {k}", "a button name is letters, digits and _")
    buttons = {k: c.get(buttons_raw, "buttons", k, int, None, _gpio) for k in buttons_raw}
    ind_raw = c.table(data, "indicators", {"green", "amber", "red", "buzzer"})
    indicators = {k: c.get(ind_raw, "indicators", k, int, None, _gpio) for k in ind_raw}
    pins: dict[int, str] = {}
    for i, cell in enumerate(cells):
        if cell.adc == "hx711" and (cell.dout_pin is None or cell.sck_pin is None) and not simulate:
            raise c.fail(f"[load_cells #{i + 1}] dout_pin", "an HX711 cell needs dout_pin and sck_pin")
    seen_i2c: dict[tuple[int, int], str] = {}
    for i, cell in enumerate(cells):
        if cell.adc == "nau7802":
            key = (cell.i2c_bus, cell.address)
            if key in seen_i2c:
                raise c.fail(f"[load_cells #{i + 1}] address",
                             f"I2C bus {key[0]} address {key[1]:#04x} is already used by {seen_i2c[key]}")
            seen_i2c[key] = cell.name
    wired = [(f"[load_cells #{i + 1}] {k}", getattr(cell, k)) for i, cell in enumerate(cells) if cell.adc == "hx711"
             for k in ("dout_pin", "sck_pin") if getattr(cell, k) is not None]
    wired += [(f"[buttons] {k}", v) for k, v in buttons.items()] + [(f"[indicators] {k}", v) for k, v in indicators.items()]
    if tilt and tilt["pin"] is not None:
        wired.append(("[tilt_switch] pin", tilt["pin"]))
    for label, pin in wired:
        if pin in pins:
            raise c.fail(label, f"GPIO {pin} is already used by {pins[pin]}")
        pins[pin] = label

    mqtt = parse_mqtt(data.get("mqtt"), source, base_dir=base)
    button_actions = {g: dict(v) for g, v in Config().button_actions.items()}
    raw_actions = data.get("button_actions", {})
    if not isinstance(raw_actions, Mapping):
        raise c.fail("[button_actions]", "must be tables [button_actions.GAME] of button = { type = … }")
    for game_name, table in raw_actions.items():
        if game_name not in GAMES:
            raise c.fail(f"[button_actions.{game_name}]", f"unknown game (games: {', '.join(GAMES)})")
        if not isinstance(table, Mapping):
            raise c.fail(f"[button_actions.{game_name}]", "must map button names to actions")
        for button, action in table.items():
            if not isinstance(action, Mapping) or not isinstance(action.get("type"), str):
                raise c.fail(f"[button_actions.{game_name}] {button}",
                             "must be an action table with a 'type', e.g. { type = \"end_turn\" }")
            if button in ("roll", "next", "step", "select", "confirm", "undo"):
                raise c.fail(f"[button_actions.{game_name}] {button}", "is a built-in button; name another one")
        button_actions[game_name] = {**button_actions.get(game_name, {}), **dict(table)}
    cfg = Config(
        source=source, base_dir=base, game=name, players=players, game_options=options,
        balance=balance, model_ref=model_ref,
        store_path=(base / store_path) if store_path else None,
        maps_path=(base / maps_dir) if maps_dir else None,
        host=host, port=port, max_streams=max_streams, heartbeat_s=heartbeat, pin_hash=pin_hash,
        pin_plain=pin_plain, web_hosts=web_hosts,
        simulate=simulate, demo=demo, demo_interval_s=demo_interval, seed=seed, follow_arm=follow_arm,
        load_cells=tuple(cells), accelerometer=accel, tilt_switch=tilt, buttons=buttons, indicators=indicators,
        mqtt=mqtt, button_actions=button_actions, recorder_minutes=recorder_minutes, recorder_max_mb=recorder_max_mb,
    )
    # last, so that a known key's own check names it first: NaN or inf anywhere else (TOML has both) would reach
    # the store through the game's options or a button's action
    problem = strict_json.non_finite(data)
    if problem is not None:
        raise c.fail(_where(problem.where), "must be a finite number")
    try:
        model = cfg.model()
    except ModelError as exc:
        raise c.fail("[balance]", str(exc)) from None
    # the daemon must not start half-configured: the game itself checks its options now
    from companion.games.base import RuleError
    from companion.games.registry import engines

    try:
        engines(model)[cfg.game].new(cfg.start_options)
    except RuleError as exc:
        raise c.fail("[game] options", str(exc)) from None
    return cfg


def load(path: str | Path | None) -> Config:
    """Read and check a config file; None gives the built-in defaults."""
    if path is None:
        return parse({})
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{p}: no such config file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{p}: cannot read: {exc}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{p}: not valid TOML: {exc}") from None
    except RecursionError:      # tomllib parses nested arrays and tables recursively
        raise ConfigError(f"{p}: not valid TOML: nested too deeply (more than {MAX_DEPTH} levels)") from None
    return parse(data, str(p), p.resolve().parent)
