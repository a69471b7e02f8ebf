"""The systemd unit, and sd_notify / the watchdog against a fake notify socket (a real AF_UNIX datagram socket)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from companion.foundation.clock import FakeClock
from companion.table.systemd_notify import Notifier, Watchdog, heartbeat_check, socket_address, watchdog_interval
from tests.systemd_unit import UNIT, parse_unit, service_environment


@pytest.fixture(scope="module")
def unit():
    return parse_unit(UNIT.read_text())


def one(section: dict[str, list[str]], key: str) -> str:
    values = section.get(key)
    assert values, f"{key}= is missing"
    return values[-1]


def test_unit_runs_the_daemon_as_a_notify_service_with_a_watchdog(unit):
    svc = unit["Service"]
    assert one(svc, "Type") == "notify"
    assert one(svc, "NotifyAccess") in ("main", "all")
    assert int(one(svc, "WatchdogSec")) > 0
    assert one(svc, "Restart") == "on-failure"
    exec_start = one(svc, "ExecStart").split()
    assert exec_start[0] == "/opt/companion/venv/bin/companion"
    assert exec_start[1:] == ["run", "--config", "/etc/companion/companion.toml"]
    assert one(unit["Install"], "WantedBy") == "multi-user.target"


def test_unit_runs_unprivileged_in_the_gpio_and_i2c_groups(unit):
    svc = unit["Service"]
    assert one(svc, "User") not in ("", "root")
    assert {"gpio", "i2c"} <= set(one(svc, "SupplementaryGroups").split())
    assert one(svc, "NoNewPrivileges") == "yes"
    assert one(svc, "CapabilityBoundingSet") == ""


def test_unit_sandbox_still_allows_gpio_and_i2c_devices(unit):
    svc = unit["Service"]
    assert one(svc, "ProtectSystem") == "strict"
    assert one(svc, "ProtectHome") == "yes"
    assert svc.get("PrivateDevices", ["no"])[-1] in ("no", "false")   # it would hide /dev/gpiochip*
    assert one(svc, "DevicePolicy") == "closed"
    allowed = {v.split()[0] for v in svc["DeviceAllow"]}
    assert {"char-gpiochip", "char-i2c"} <= allowed
    assert all(v.split()[1] == "rw" for v in svc["DeviceAllow"])


def test_unit_keeps_state_under_state_directory(unit):
    svc = unit["Service"]
    assert one(svc, "StateDirectory") == "companion"
    # lgpio writes its pipes into the working directory: it must be writable under ProtectSystem=strict
    assert one(svc, "WorkingDirectory") == "/run/" + one(svc, "RuntimeDirectory")


def test_unit_sets_glibcs_malloc_so_memory_stays_flat_under_load():
    """Per-thread malloc arenas and caches made resident memory keep creeping up under load
    (docs/reliability.md, "Load"); the reliability labs run the daemon with the same settings."""
    env = service_environment()
    assert env["GLIBC_TUNABLES"].split(":") == ["glibc.malloc.arena_max=2", "glibc.malloc.tcache_count=0"]
    assert env["PYTHONUNBUFFERED"] == "1"


def test_the_reliability_labs_run_the_daemon_with_the_units_malloc_settings(monkeypatch):
    from tests.reliability.harness import service_like_environment

    monkeypatch.delenv("GLIBC_TUNABLES", raising=False)
    assert service_like_environment()["GLIBC_TUNABLES"] == service_environment()["GLIBC_TUNABLES"]
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.malloc.arena_max=1")    # someone trying other settings
    assert service_like_environment()["GLIBC_TUNABLES"] == "glibc.malloc.arena_max=1"
    assert "LG_WD" not in service_like_environment() or "LG_WD" in os.environ


def test_service_environment_reads_every_assignment_and_refuses_a_bad_one():
    text = "[Service]\nEnvironment=A=1 B=x=y\nEnvironment=C=\n"
    assert service_environment(text) == {"A": "1", "B": "x=y", "C": ""}
    with pytest.raises(ValueError, match="is not NAME=value"):
        service_environment("[Service]\nEnvironment=A=1 oops\n")


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed here")
def test_unit_passes_systemd_analyze_verify(tmp_path):
    text = UNIT.read_text()
    binary = "/opt/companion/venv/bin/companion"
    if not os.access(binary, os.X_OK):
        # verify checks that ExecStart's program exists; off a Pi any executable stands in for it
        text = text.replace(binary, sys.executable)
    unit_file = tmp_path / "companion.service"
    unit_file.write_text(text)
    result = subprocess.run(["systemd-analyze", "verify", str(unit_file)], capture_output=True, text=True,
                            timeout=60)
    output = result.stdout + result.stderr
    mine = [line for line in output.splitlines() if "companion.service" in line]
    assert result.returncode == 0, output
    assert mine == [], output


# --- sd_notify
@pytest.fixture
def notify_socket(tmp_path, monkeypatch):
    path = tmp_path / "notify"
    if len(str(path)) > 100:   # AF_UNIX paths are limited to 108 bytes
        path = Path("/tmp") / f"companion-notify-{os.getpid()}"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.settimeout(1.0)
    monkeypatch.setenv("NOTIFY_SOCKET", str(path))
    yield sock
    sock.close()
    path.unlink(missing_ok=True)


def received(sock: socket.socket, wait: float = 0.0) -> list[str]:
    """Every datagram waiting on the socket (waiting up to `wait` for the first)."""
    out = []
    sock.settimeout(wait if wait > 0 else 0.001)
    while True:
        try:
            out.append(sock.recv(4096).decode())
        except (socket.timeout, BlockingIOError):
            return out
        sock.settimeout(0.001)


def test_ready_status_watchdog_and_stopping_arrive(notify_socket):
    n = Notifier()
    assert n.enabled
    assert n.ready(status="table ready")
    assert n.watchdog()
    assert n.status("2 devices unavailable")
    assert n.stopping()
    assert received(notify_socket, 1.0) == ["READY=1\nSTATUS=table ready", "WATCHDOG=1",
                                            "STATUS=2 devices unavailable", "STOPPING=1"]
    n.close()


def test_abstract_notify_socket(monkeypatch):
    name = f"companion-test-{os.getpid()}"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind("\0" + name)
    try:
        monkeypatch.setenv("NOTIFY_SOCKET", "@" + name)
        assert Notifier().ready()
        assert received(sock, 1.0) == ["READY=1"]
    finally:
        sock.close()
    assert socket_address("@x") == b"\0x"
    assert socket_address("/run/systemd/notify") == "/run/systemd/notify"


def test_without_notify_socket_nothing_is_sent(monkeypatch):
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    n = Notifier()
    assert not n.enabled
    assert n.ready() is False and n.watchdog() is False


def test_an_unreachable_socket_is_logged_not_raised(tmp_path, caplog):
    n = Notifier(str(tmp_path / "nobody-listens"))
    assert n.ready() is False
    assert n.watchdog() is False
    assert sum("cannot notify systemd" in r.message for r in caplog.records) == 1


def test_watchdog_usec_parsing():
    assert watchdog_interval({}) is None
    assert watchdog_interval({"WATCHDOG_USEC": "20000000"}) == 20.0
    assert watchdog_interval({"WATCHDOG_USEC": "0"}) is None
    assert watchdog_interval({"WATCHDOG_USEC": "soon"}) is None
    assert watchdog_interval({"WATCHDOG_USEC": "5000000", "WATCHDOG_PID": "42"}, pid=42) == 5.0
    assert watchdog_interval({"WATCHDOG_USEC": "5000000", "WATCHDOG_PID": "42"}, pid=43) is None


def test_watchdog_interval_defaults_to_half_of_watchdog_sec(notify_socket, monkeypatch):
    monkeypatch.setenv("WATCHDOG_USEC", "20000000")
    monkeypatch.delenv("WATCHDOG_PID", raising=False)
    wd = Watchdog({})
    assert wd.enabled and wd.interval_s == 10.0


# --- the watchdog fed only while alive
def test_watchdog_pings_only_while_every_check_passes(notify_socket):
    alive = {"sensors": True, "store": True}
    wd = Watchdog({"sensors": lambda: alive["sensors"], "store": lambda: alive["store"]}, interval_s=0)
    assert wd.kick() is True
    assert received(notify_socket, 1.0) == ["WATCHDOG=1"]
    alive["store"] = False
    assert wd.kick() is False and wd.kick() is False
    assert received(notify_socket, 0.05) == ["STATUS=stalled: store"]
    alive["store"] = True
    assert wd.kick() is True
    assert received(notify_socket, 1.0) == ["STATUS=running", "WATCHDOG=1"]


def test_a_check_that_raises_withholds_the_ping(notify_socket):
    def broken():
        raise RuntimeError("cannot tell")

    wd = Watchdog({"sensors": broken}, interval_s=0)
    assert wd.kick() is False
    assert "WATCHDOG=1" not in received(notify_socket, 0.05)


def test_watchdog_sends_at_most_once_per_interval(notify_socket):
    clock = FakeClock()
    wd = Watchdog({"ok": lambda: True}, interval_s=5.0, clock=clock)
    assert [wd.kick() for _ in range(3)] == [True, False, False]
    clock.advance(5)
    assert wd.kick() is True
    assert received(notify_socket, 1.0) == ["WATCHDOG=1", "WATCHDOG=1"]


def test_a_stalled_loop_stops_the_watchdog_pings(notify_socket):
    """A worker loop beats; the main loop kicks. Stall the worker: WATCHDOG=1 stops within max_age."""
    beat = {"t": time.monotonic()}
    stall, stop = threading.Event(), threading.Event()

    def worker():
        while not stop.is_set():
            if not stall.is_set():
                beat["t"] = time.monotonic()
            time.sleep(0.005)

    t = threading.Thread(target=worker, daemon=True)
    t.start()
    wd = Watchdog({"sensors": lambda: t.is_alive(), "sensor loop": heartbeat_check(lambda: beat["t"], 0.1)},
                  interval_s=0)
    try:
        for _ in range(10):
            wd.kick()
            time.sleep(0.01)
        assert received(notify_socket, 1.0).count("WATCHDOG=1") >= 5
        stall.set()
        time.sleep(0.15)
        sent = [wd.kick() for _ in range(10)]
        assert not any(sent)
        assert received(notify_socket, 0.05) == ["STATUS=stalled: sensor loop"]
        stall.clear()
        time.sleep(0.02)
        assert wd.kick() is True
    finally:
        stop.set()
        t.join(1)
    # a dead thread is caught too
    assert wd.kick() is False and "sensors" in wd.failing
