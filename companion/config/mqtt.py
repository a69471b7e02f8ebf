"""The `[mqtt]` config section: optional, off unless present.

`parse_mqtt(section, source, base_dir=...)` checks the section the same way as the
rest of companion.toml: the first problem is a ConfigError reading
`FILE: [mqtt] key: what is wrong`. It returns None when the section is absent or
`enabled = false`. Nothing here imports paho, so checking a config stays cheap.
"""

from __future__ import annotations

import math
import re
import ssl
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from companion.config.errors import ConfigError

TOPIC_ROOT = "companion"
DEFAULT_HALL = "main"
NAME_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")
KNOWN_KEYS = frozenset({
    "enabled", "host", "port", "hall", "table", "name", "username", "password",
    "tls", "ca_file", "cert_file", "key_file", "tls_insecure",
    "keepalive_s", "queue_limit", "reconnect_min_s", "reconnect_max_s",
    "discovery", "discovery_prefix",
})


@dataclass(frozen=True)
class MqttConfig:
    """Where and how one table reports; see docs/mqtt.md for every key."""

    host: str
    table: str
    hall: str = DEFAULT_HALL
    port: int = 1883
    name: str = ""                    # shown on the hall page and in Home Assistant; "" means the table id
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    tls: bool = False
    ca_file: Path | None = None       # None with tls: the system's CA store
    cert_file: Path | None = None
    key_file: Path | None = None
    tls_insecure: bool = False        # skip the broker hostname check (a self-signed broker on the LAN)
    keepalive_s: int = 30
    queue_limit: int = 1000           # events held while the broker is away; the oldest go first beyond this
    reconnect_min_s: float = 1.0
    reconnect_max_s: float = 60.0
    discovery: bool = True
    discovery_prefix: str = "homeassistant"

    @property
    def display_name(self) -> str:
        return self.name or self.table

    @property
    def base_topic(self) -> str:
        return f"{TOPIC_ROOT}/{self.hall}/{self.table}"

    @property
    def client_id(self) -> str:
        """The prefix of the table's MQTT client id; the publisher adds a random suffix at every start."""
        return f"companion-{self.hall}-{self.table}"

    @property
    def broker(self) -> str:
        return f"{self.host}:{self.port}"


def check_name(value: str) -> str | None:
    """A hall or table id: one topic level, also usable in Home Assistant ids."""
    if NAME_RE.fullmatch(value):
        return None
    return "must be 1-64 letters, digits, _ or - (it becomes one MQTT topic level)"


def check_topic_prefix(value: str) -> str | None:
    if not value or value.startswith("/") or value.endswith("/") or "//" in value:
        return "must be a topic like \"homeassistant\" (no empty levels, no leading or trailing /)"
    if any(ch in value for ch in "+#\0") or any(ch.isspace() for ch in value):
        return "must not contain +, #, spaces or NUL"
    return None


def parse_mqtt(section: Any, source: str, *, base_dir: Path | None = None) -> MqttConfig | None:
    """Check the `[mqtt]` table (None when the file has no such section)."""
    def fail(key: str | None, problem: str) -> ConfigError:
        return ConfigError(f"{source}: [mqtt]{' ' + key if key else ''}: {problem}")

    if section is None:
        return None
    if not isinstance(section, Mapping):
        raise fail(None, "must be a table")
    unknown = sorted(set(section) - KNOWN_KEYS)
    if unknown:
        raise fail(unknown[0], f"unknown key (known keys: {', '.join(sorted(KNOWN_KEYS))})")

    def get(key: str, kind: type, default: Any, check: Callable[[Any], str | None] | None = None) -> Any:
        if key not in section:
            return default
        value = section[key]
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if isinstance(value, bool) != (kind is bool) or not isinstance(value, kind):
            name = {int: "a whole number", float: "a number", str: "a string", bool: "true or false"}[kind]
            raise fail(key, f"must be {name}, not {value!r}")
        if isinstance(value, float) and not math.isfinite(value):
            raise fail(key, "must be a finite number")
        if check is not None:
            problem = check(value)
            if problem:
                raise fail(key, problem)
        return value

    def required(key: str, what: str) -> None:
        if key not in section:
            raise fail(key, f"is required ({what})")

    if not get("enabled", bool, True):
        return None
    required("host", "the broker's host name or address")
    required("table", "this table's id in the hall, e.g. \"t1\"")
    host = get("host", str, "", lambda v: None if v and len(v) <= 253 and not any(c.isspace() for c in v)
               and "/" not in v else "must be a host name or address (no spaces, no scheme or path)")
    table = get("table", str, "", check_name)
    hall = get("hall", str, DEFAULT_HALL, check_name)
    name = get("name", str, "", lambda v: None if 1 <= len(v) <= 64 and v.isprintable()
               else "must be 1-64 printable characters")
    username = get("username", str, None, lambda v: None if v else "must not be empty")
    password = get("password", str, None, lambda v: None if v else "must not be empty")
    if password is not None and username is None:
        raise fail("password", "needs a username too")

    base = base_dir or Path.cwd()

    def path(key: str) -> Path | None:
        value = get(key, str, None, lambda v: None if v else "must not be empty")
        if value is None:
            return None
        p = Path(value).expanduser()
        p = p if p.is_absolute() else base / p
        if not p.is_file():
            raise fail(key, f"no such file: {p}")
        return p

    ca_file, cert_file, key_file = path("ca_file"), path("cert_file"), path("key_file")
    uses_tls_files = ca_file is not None or cert_file is not None
    tls = get("tls", bool, uses_tls_files)
    for key in ("ca_file", "cert_file", "key_file", "tls_insecure"):
        if key in section and not tls:
            raise fail(key, "needs tls = true")
    if key_file is not None and cert_file is None:
        raise fail("key_file", "needs cert_file (the client certificate it belongs to)")
    tls_insecure = get("tls_insecure", bool, False)
    if tls:
        _check_tls_files(ca_file, cert_file, key_file, fail)
    port = get("port", int, 8883 if tls else 1883,
               lambda v: None if 1 <= v <= 65535 else "must be a port number from 1 to 65535")
    keepalive = get("keepalive_s", int, 30, lambda v: None if 5 <= v <= 3600 else "must be from 5 to 3600 seconds")
    queue_limit = get("queue_limit", int, 1000, lambda v: None if 1 <= v <= 100_000 else "must be from 1 to 100000")
    rmin = get("reconnect_min_s", float, 1.0, lambda v: None if 0.1 <= v <= 300 else "must be from 0.1 to 300 seconds")
    rmax = get("reconnect_max_s", float, max(60.0, rmin),
               lambda v: None if v <= 3600 else "must be at most 3600 seconds")
    if rmax < rmin:
        raise fail("reconnect_max_s", f"must be at least reconnect_min_s ({rmin:g})")
    discovery = get("discovery", bool, True)
    prefix = get("discovery_prefix", str, "homeassistant", check_topic_prefix)
    return MqttConfig(
        host=host, table=table, hall=hall, port=port, name=name, username=username, password=password,
        tls=tls, ca_file=ca_file, cert_file=cert_file, key_file=key_file, tls_insecure=tls_insecure,
        keepalive_s=keepalive, queue_limit=queue_limit, reconnect_min_s=rmin, reconnect_max_s=rmax,
        discovery=discovery, discovery_prefix=prefix,
    )


def _no_password() -> bytes:
    """An encrypted key file would make OpenSSL prompt on the terminal; refuse it instead."""
    return b""


def _check_tls_files(ca_file: Path | None, cert_file: Path | None, key_file: Path | None, fail) -> None:
    """Load the certificates once now, so a bad file is a config error and not a silent link failure later."""
    try:
        ctx = ssl.create_default_context(cafile=str(ca_file) if ca_file else None)
    except (ssl.SSLError, OSError) as exc:
        raise fail("ca_file", f"is not a usable CA certificate file (PEM): {exc}") from None
    if cert_file is not None:
        try:
            ctx.load_cert_chain(str(cert_file), str(key_file) if key_file else None, password=_no_password)
        except (ssl.SSLError, OSError) as exc:
            raise fail("cert_file", f"certificate and key do not load (PEM, unencrypted key): {exc}") from None
