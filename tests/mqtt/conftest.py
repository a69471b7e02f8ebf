"""A real Mosquitto broker per test, on a free loopback port, with its own config, data and log in tmp_path."""

from __future__ import annotations

import dataclasses
import os
import pwd
import shutil
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Callable

import pytest

from companion.config import parse
from companion.table.daemon import Companion
from companion.config.mqtt import parse_mqtt

HALL = "testhall"
BROKER_START_S = 10.0


def mosquitto_binary() -> str | None:
    found = shutil.which("mosquitto")
    if found:
        return found
    for candidate in ("/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto"):
        if os.access(candidate, os.X_OK):
            return candidate
    return None


# Brokers listen on ports below the kernel's ephemeral range (32768-60999 by default), so that no daemon started
# with --port 0 and no client's outgoing socket can take a broker's port between its choice and mosquitto's bind;
# each pytest-xdist worker takes its own block of them, so brokers of tests running at once never share one.
_BROKER_PORTS_BASE = 20000
_BROKER_PORTS_PER_WORKER = 500
_next_broker_port = 0


def _worker_index() -> int:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")          # "gw3" under xdist; absent in a serial run
    return int(worker[2:]) if worker.startswith("gw") and worker[2:].isdigit() else 0


def free_port() -> int:
    """A loopback port nobody listens on, from this worker's block (each call a new one)."""
    global _next_broker_port
    first = _BROKER_PORTS_BASE + (_worker_index() % 20) * _BROKER_PORTS_PER_WORKER
    for _ in range(_BROKER_PORTS_PER_WORKER):
        port = first + _next_broker_port % _BROKER_PORTS_PER_WORKER
        _next_broker_port += 1
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue        # taken by something outside the suite: the next one
            return port
    raise AssertionError(f"no free loopback port in {first}-{first + _BROKER_PORTS_PER_WORKER - 1}")


def wait_until(predicate, timeout: float = 10.0, interval: float = 0.02, what: str = "condition", detail=None):
    """Poll predicate until it is truthy; on timeout say what was awaited (and detail(), what was seen)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            seen = f"; seen: {detail()}" if detail is not None else ""
            raise AssertionError(f"timed out after {timeout} s waiting for {what}{seen}")
        time.sleep(interval)


class Broker:
    """mosquitto -c <generated config>: loopback only, anonymous, persistence on (retained messages survive)."""

    def __init__(self, binary: str, workdir: Path, *, anonymous: bool = True, extra: tuple[str, ...] = (),
                 settings: Callable[[int], list[str]] | None = None):
        """settings(port) gives the broker's own lines (listener, users, ACLs) in place of the loopback listener,
        `anonymous` and `extra`; the lines after them keep its data and log in workdir either way."""
        self.binary = binary
        self.dir = workdir
        self.dir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.conf = self.dir / "mosquitto.conf"
        self.log = self.dir / "mosquitto.log"
        own = settings(self.port) if settings is not None else [
            f"listener {self.port} 127.0.0.1",
            f"allow_anonymous {'true' if anonymous else 'false'}",
            *extra,
        ]
        self.conf.write_text("\n".join([
            *own,
            "persistence true",
            f"persistence_location {self.dir}/",
            "persistence_file mosquitto.db",
            "autosave_interval 1",
            f"log_dest file {self.log}",
            "log_type error",
            "log_type warning",
            "log_type notice",
            # as root, mosquitto would switch to the 'mosquitto' user, who cannot write in tmp_path
            f"user {pwd.getpwuid(os.geteuid()).pw_name}",
            "",
        ]))
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen([self.binary, "-c", str(self.conf)], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + BROKER_START_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                err = self.proc.stderr.read().decode(errors="replace")
                raise AssertionError(f"mosquitto exited with {self.proc.returncode}: {err} {self.read_log()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return
            except OSError:
                time.sleep(0.02)
        raise AssertionError(f"mosquitto did not listen on 127.0.0.1:{self.port} within {BROKER_START_S} s")

    def stop(self) -> None:
        """A clean stop: mosquitto writes its persistence file (retained messages, sessions) on the way out."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=10)
        if self.proc is not None:
            self.proc.stderr.close()
        self.proc = None

    def read_log(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""


@pytest.fixture
def mosquitto_bin():
    binary = mosquitto_binary()
    if binary is None:
        if os.environ.get("CI") == "true":
            pytest.fail("mosquitto is not installed, but CI must run the MQTT tests: "
                        "install it with `apt-get install -y mosquitto` (the Makefile does this when missing)")
        pytest.skip("mosquitto is not installed (apt-get install mosquitto); the MQTT tests need a real broker")
    return binary


@pytest.fixture
def broker(mosquitto_bin, tmp_path):
    b = Broker(mosquitto_bin, tmp_path / "broker")
    b.start()
    yield b
    b.stop()


def mqtt_config(port: int, table: str, **extra):
    section = {"host": "127.0.0.1", "port": port, "hall": HALL, "table": table,
               "reconnect_min_s": 0.1, "reconnect_max_s": 0.5, "keepalive_s": 5, **extra}
    return parse_mqtt(section, "test.toml")


class Table:
    """A Companion on the simulated table (demo off) with its TablePublisher."""

    def __init__(self, tmp_path: Path, port: int, table: str, seed: int = 1, **extra):
        from companion.mqtt.publisher import TablePublisher

        cfg = dataclasses.replace(parse({"simulate": {"enabled": True, "demo": False, "seed": seed}}),
                                  store_path=tmp_path / f"{table}.sqlite3")
        self.companion = Companion(cfg)
        self.publisher = TablePublisher(self.companion, mqtt_config(port, table, **extra))
        self.name = table

    @property
    def host(self):
        return self.companion.host

    def settled(self) -> bool:
        """Connected, the latest state published and nothing waiting or unacknowledged."""
        s = self.publisher.status()
        return s["state"] == "connected" and s["queued"] == 0 and s["state_seq"] == self.host.seq

    def close(self) -> None:
        self.publisher.stop()
        self.companion.stop()


@pytest.fixture
def tables(tmp_path):
    """make(port, name, **mqtt keys) -> a started Table; all are stopped at the end."""
    made: list[Table] = []

    def make(port: int, table_id: str, *, start: bool = True, **extra) -> Table:
        t = Table(tmp_path, port, table_id, seed=len(made) + 1, **extra)
        made.append(t)
        if start:
            t.publisher.start()
        return t

    yield make
    for t in made:
        t.close()


RISK_PAIR = {"players": ["Ann", "Bob"], "capitals": {"Ann": "Germany", "Bob": "Poland"}}   # a Risk game for two


def win_risk(host) -> tuple[str, str]:
    """The host's Risk game of RISK_PAIR played to its end: the player to move takes the other's last territory.
    (winner, loser)."""
    who = host.snapshot()["view"]["turn"]["player"]
    loser = "Bob" if who == "Ann" else "Ann"
    own, their = ("Germany", "Poland") if who == "Ann" else ("Poland", "Germany")
    host.act({"type": "set_counts", "player": who, "territories": 12})
    host.act({"type": "set_counts", "player": loser, "territories": 1})
    host.act({"type": "attack", "defender": loser, "attackers": 5, "defenders": 1, "from": own, "to": their})
    host.act({"type": "battle", "attacker_dice": [6, 3, 2], "defender_dice": [5]})
    assert host.snapshot()["view"]["over"]
    return who, loser


def board_for(broker):
    """A started HallBoard of HALL on this broker, quick to reconnect."""
    from companion.mqtt.hall import HallBoard

    board = HallBoard("127.0.0.1", broker.port, HALL, reconnect_min_s=0.1, reconnect_max_s=0.5)
    board.start()
    return board


def rows(board):
    """The board's tables by id."""
    return {t["table"]: t for t in board.snapshot()["tables"]}


class Watcher:
    """A plain paho subscriber that records every message (retained or live) per topic."""

    def __init__(self, port: int, topics: list[str], *, client_id: str = "", clean_session: bool = True,
                 username: str | None = None, password: str | None = None, sync_prefix: str = "test/sync"):
        import paho.mqtt.client as mqtt
        from paho.mqtt.enums import CallbackAPIVersion

        self.topics = topics
        # under a broker's ACL the watcher's user must be allowed to read and write its sync topic
        self.sync_topic = f"{sync_prefix}/{id(self)}"
        self.lock = threading.Lock()
        self.messages: list[tuple[str, bytes, bool]] = []
        # set once the broker has acknowledged the subscription (SUBACK), not merely once connected: a
        # message published between CONNACK and the broker's handling of SUBSCRIBE is not delivered, and a
        # persistent session only queues for subscriptions the broker already holds
        self.connected = threading.Event()
        self._subscribe_mid: int | None = None
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id, clean_session=clean_session,
                                  protocol=mqtt.MQTTv311)
        self.client.reconnect_delay_set(0.1, 0.5)
        if username is not None:
            self.client.username_pw_set(username, password)
        self.client.on_connect = self._on_connect
        self.client.on_subscribe = self._on_subscribe
        self.client.on_message = self._on_message
        self.client.on_disconnect = lambda *a: self.connected.clear()
        self.client.connect_async("127.0.0.1", port, keepalive=5)
        self.client.loop_start()
        assert self.connected.wait(10), "watcher did not connect and subscribe"

    def _on_connect(self, client, userdata, flags, reason_code, properties):
        _, self._subscribe_mid = client.subscribe([(t, 1) for t in self.topics] + [(self.sync_topic, 1)])

    def _on_subscribe(self, client, userdata, mid, reason_codes, properties):
        if mid == self._subscribe_mid and all(not rc.is_failure for rc in reason_codes):
            self.connected.set()

    def _on_message(self, client, userdata, msg):
        with self.lock:
            self.messages.append((msg.topic, bytes(msg.payload), bool(msg.retain)))

    def on(self, topic: str) -> list[bytes]:
        with self.lock:
            return [p for t, p, _ in self.messages if t == topic]

    def last(self, topic: str) -> bytes | None:
        got = self.on(topic)
        return got[-1] if got else None

    def sync(self) -> None:
        """Wait for a message sent after the subscription: every retained message has arrived by then."""
        marker = f"sync-{time.monotonic_ns()}".encode()
        self.publish(self.sync_topic, marker)
        wait_until(lambda: marker in self.on(self.sync_topic), what="the watcher's sync marker")

    def publish(self, topic: str, payload: bytes | str, retain: bool = False):
        info = self.client.publish(topic, payload, qos=1, retain=retain)
        info.wait_for_publish(5)

    def close(self):
        self.client.disconnect()
        self.client.loop_stop()


@pytest.fixture
def watchers():
    made: list[Watcher] = []

    def make(port: int, topics: list[str], **kw) -> Watcher:
        w = Watcher(port, topics, **kw)
        made.append(w)
        return w

    yield make
    for w in made:
        w.close()
