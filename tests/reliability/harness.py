"""Shared by tests/reliability and bench/: the daemon as a real process on loopback, HTTP and SSE clients,
/proc readings, and a copy-then-read view of the event store.

Everything here talks to 127.0.0.1 only, and every wait has a deadline.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import selectors
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.systemd_unit import service_environment

REPO = Path(__file__).resolve().parents[2]
LOOPBACK = "127.0.0.1"
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def write_config(directory: Path, *, demo: bool = False, seed: int = 3, max_streams: int | None = None,
                 heartbeat_s: float | None = None, demo_interval_s: float | None = None, pin: str | None = None,
                 name: str = "companion.toml", recorder_minutes: float | None = None) -> Path:
    """A config for the simulated table, listening on loopback only."""
    lines = ["[simulate]", "enabled = true", f"demo = {'true' if demo else 'false'}", f"seed = {seed}"]
    if demo_interval_s is not None:
        lines.append(f"demo_interval_s = {demo_interval_s}")
    lines += ["[web]", f'host = "{LOOPBACK}"']
    if max_streams is not None:
        lines.append(f"max_streams = {max_streams}")
    if heartbeat_s is not None:
        lines.append(f"heartbeat_s = {heartbeat_s}")
    if pin is not None:
        lines.append(f'pin = "{pin}"')
    if recorder_minutes is not None:
        lines += ["[recorder]", f"minutes = {recorder_minutes}"]
    path = directory / name
    path.write_text("\n".join(lines) + "\n")
    return path


class DaemonError(AssertionError):
    pass


# the settings of the systemd unit that change how the daemon behaves, not where it runs (LG_WD is a
# directory of the Pi's); the caller's own environment wins, to try other allocator settings
SERVICE_SETTINGS = ("GLIBC_TUNABLES", "PYTHONUNBUFFERED")


def service_like_environment() -> dict[str, str]:
    unit = service_environment()
    return {**{k: unit[k] for k in SERVICE_SETTINGS if k in unit}, **os.environ}


class DaemonProcess:
    """`companion run` in its own process; its log goes to a file beside the database."""

    def __init__(self, config: Path, db: Path, *, log_level: str = "WARNING", ready_timeout: float = 20.0,
                 wait: bool = True, wrap: tuple[str, ...] = ()):
        """`wrap` is a command the daemon's own is handed to, which must end by exec'ing it (so `pid` is the
        daemon's): e.g. a shell that first mounts a folder the daemon is to find read-only."""
        self.config = config
        self.db = db
        self.log_path = db.with_name(db.name + ".log")
        self._log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [*wrap, sys.executable, "-m", "companion", "run", "--config", str(config), "--port", "0", "--db", str(db),
             "--log-level", log_level],
            stdout=subprocess.PIPE, stderr=self._log, cwd=str(db.parent), env=service_like_environment())
        self.started = time.monotonic()
        self.port: int | None = None
        self.url: str | None = None
        if wait:
            self.wait_ready(ready_timeout)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def wait_ready(self, timeout: float = 20.0) -> None:
        """Wait for the 'open http://127.0.0.1:PORT' line."""
        line = b""
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as sel:
            sel.register(self.proc.stdout, selectors.EVENT_READ)
            while not line.endswith(b"\n"):
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    self.kill()
                    raise DaemonError(f"the daemon did not start within {timeout} s; log:\n{self.log_text()}")
                chunk = os.read(self.proc.stdout.fileno(), 4096)
                if not chunk:
                    self.proc.wait(timeout=10)
                    raise DaemonError(f"the daemon exited with {self.proc.returncode} before it was ready; log:\n"
                                      f"{self.log_text()}")
                line += chunk
        m = re.search(rb"http://[\d.]+:(\d+)", line)
        if not m:
            self.kill()
            raise DaemonError(f"unexpected first line {line!r}")
        self.port = int(m.group(1))
        self.url = f"http://{LOOPBACK}:{self.port}"

    def log_text(self) -> str:
        if not self._log.closed:
            self._log.flush()
        return self.log_path.read_text(errors="replace")[-4000:]

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        """kill -9, and reap."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)
        self._close()

    def stop(self, timeout: float = 10.0) -> int:
        """SIGTERM (a clean stop), reap, return the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self._close()
        return self.proc.returncode

    def _close(self) -> None:
        if self.proc.stdout and not self.proc.stdout.closed:
            self.proc.stdout.close()
        if not self._log.closed:
            self._log.close()

    def client(self, timeout: float = 5.0) -> "Client":
        assert self.port is not None, "the daemon is not ready"
        return Client(self.port, timeout=timeout)

    # --- /proc
    def memory_kb(self) -> dict[str, int]:
        return proc_memory_kb(self.pid)

    def cpu_seconds(self) -> float:
        return proc_cpu_seconds(self.pid)


def proc_memory_kb(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM (peak resident set) of a process, in kB, from /proc/PID/status."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(value.split()[0])
    return out


def proc_cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (all its threads), from /proc/PID/stat."""
    text = Path(f"/proc/{pid}/stat").read_text()
    fields = text[text.rindex(")") + 2:].split()
    # fields after the command: state is index 0, utime is field 14 of stat (index 11 here), stime 15 (index 12)
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


class Client:
    """A keep-alive JSON client for one daemon on loopback."""

    def __init__(self, port: int, *, timeout: float = 5.0):
        self.port = port
        self.timeout = timeout
        self._conn: http.client.HTTPConnection | None = None

    def request(self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None,
                raw: bytes | None = None) -> tuple[int, dict[str, str], Any]:
        """(status, headers, parsed JSON or None). Connection problems raise OSError/HTTPException."""
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        hdrs = {"Content-Type": "application/json"} if data is not None else {}
        hdrs.update(headers or {})
        if self._conn is None:
            self._conn = http.client.HTTPConnection(LOOPBACK, self.port, timeout=self.timeout)
        try:
            self._conn.request(method, path, body=data, headers=hdrs)
            resp = self._conn.getresponse()
            payload = resp.read()
        except BaseException:
            self.close()
            raise
        if resp.will_close:
            self.close()
        ctype = resp.getheader("Content-Type", "")
        parsed = json.loads(payload) if payload and ctype.startswith("application/json") else None
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, parsed

    def get(self, path: str) -> Any:
        status, _, body = self.request("GET", path)
        if status != 200:
            raise AssertionError(f"GET {path}: {status} {body}")
        return body

    def post(self, path: str, body: Any) -> tuple[int, Any]:
        status, _, parsed = self.request("POST", path, body)
        return status, parsed

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


@dataclass
class StreamLog:
    """What one event-stream client saw: state event ids with their arrival (monotonic) times."""
    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    ids: list[int] = field(default_factory=list)
    arrivals: list[float] = field(default_factory=list)
    live: int = 0
    heartbeats: int = 0
    error: str | None = None


class StreamClient(threading.Thread):
    """Holds GET /api/stream open and records every `event: state` id until stopped or `until_id` arrives."""

    def __init__(self, port: int, *, last_event_id: int | None = None, until_id: int | None = None,
                 timeout: float = 30.0, name: str = "sse"):
        super().__init__(name=name, daemon=True)
        self.port = port
        self.last_event_id = last_event_id
        self.until_id = until_id
        self.timeout = timeout
        self.log = StreamLog()
        self.connected = threading.Event()
        self._stop_flag = threading.Event()
        self._sock: socket.socket | None = None

    def run(self) -> None:
        deadline = time.monotonic() + self.timeout
        conn = http.client.HTTPConnection(LOOPBACK, self.port, timeout=5)
        try:
            headers = {"Accept": "text/event-stream"}
            if self.last_event_id is not None:
                headers["Last-Event-ID"] = str(self.last_event_id)
            conn.request("GET", "/api/stream", headers=headers)
            resp = conn.getresponse()
            self._sock = conn.sock
            self.log.status = resp.status
            self.log.headers = {k.lower(): v for k, v in resp.getheaders()}
            if resp.status != 200:
                resp.read()
                return
            self.connected.set()
            event: dict[str, str] = {}
            while not self._stop_flag.is_set() and time.monotonic() < deadline:
                line = resp.readline()
                if not line:
                    self.log.error = self.log.error or "the server closed the stream"
                    return
                text = line.decode().rstrip("\r\n")
                if text.startswith(":"):
                    self.log.heartbeats += 1
                elif text == "":
                    if event.get("event") == "state":
                        self.log.ids.append(int(event["id"]))
                        self.log.arrivals.append(time.monotonic())
                        if self.until_id is not None and self.log.ids[-1] >= self.until_id:
                            return
                    elif event.get("event") == "live":
                        self.log.live += 1
                    event = {}
                else:
                    key, _, value = text.partition(":")
                    event[key] = value[1:] if value.startswith(" ") else value
        except (OSError, http.client.HTTPException, ValueError) as exc:
            if not self._stop_flag.is_set():
                self.log.error = f"{type(exc).__name__}: {exc}"
        finally:
            self.connected.set()
            conn.close()

    def stop(self) -> None:
        self._stop_flag.set()
        sock = self._sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass  # already closed by the server or by run(): either way the reader wakes up


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0-100), nearest-rank."""
    if not values:
        raise ValueError("no values")
    ordered = sorted(values)
    rank = max(1, min(len(ordered), int(-(-q * len(ordered) // 100))))
    return ordered[rank - 1]


# --- the store on disk, read without disturbing it

@dataclass(frozen=True)
class Row:
    seq: int
    game_id: int
    kind: str
    body: dict
    source: str


@dataclass
class DiskView:
    integrity: str
    rows: list[Row]


def read_store_copy(db: Path) -> DiskView:
    """Copy the database and its WAL aside and read the copy, so the files stay exactly as a crash left them."""
    with tempfile.TemporaryDirectory(prefix="companion-view-") as tmp:
        copy = Path(tmp) / db.name
        shutil.copyfile(db, copy)
        for suffix in ("-wal", "-journal"):
            side = db.with_name(db.name + suffix)
            if side.exists():
                shutil.copyfile(side, copy.with_name(copy.name + suffix))
        con = sqlite3.connect(str(copy))
        try:
            integrity = "; ".join(r[0] for r in con.execute("PRAGMA integrity_check").fetchall())
            tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            rows = []
            if "events" in tables:
                rows = [Row(s, g, k, json.loads(b), src) for s, g, k, b, src in
                        con.execute("SELECT seq, game_id, kind, body, source FROM events ORDER BY seq")]
        finally:
            con.close()
    return DiskView(integrity, rows)


_LOST_RUN = re.compile(r"game (\d+|\?): events? (\d+)(?:–(\d+))?")


def lost_in_notice(notice: str | None) -> dict[int, int | None]:
    """The events a store notice says were lost ("Lost: … game 398: events 412–437; …"), seq -> game (None: '?')."""
    if not notice or "Lost:" not in notice:
        return {}
    named: dict[int, int | None] = {}
    for m in _LOST_RUN.finditer(notice[notice.index("Lost:"):]):
        game = None if m.group(1) == "?" else int(m.group(1))
        first = int(m.group(2))
        for q in range(first, int(m.group(3) or first) + 1):
            named[q] = game
    return named
