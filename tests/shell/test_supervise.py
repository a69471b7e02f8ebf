"""No worker dies silently: the main loop notices a dead thread and restarts it."""

import dataclasses
import threading

from companion.config import parse
from companion.table.daemon import Companion


def make(tmp_path, demo=True):
    cfg = dataclasses.replace(parse({"simulate": {"enabled": True, "demo": demo, "demo_interval_s": 30.0}}),
                              store_path=tmp_path / "db.sqlite3")
    return Companion(cfg)


def test_dead_workers_are_restarted(tmp_path, caplog):
    c = make(tmp_path)
    c.start()
    try:
        assert c.supervise() == []
        c.sensors.stop()                      # the sensor thread ends as if it had crashed
        c._threads = [threading.Thread(target=lambda: None)]  # a demo thread that is no longer running
        assert sorted(c.supervise()) == ["demo", "sensors"]
        assert c.sensors.alive() and any(t.is_alive() for t in c._threads)
        assert "sensor thread died" in caplog.text and c.restarts == 2
    finally:
        c.stop()


def test_health_checks_cover_store_sensors_and_extra(tmp_path):
    c = make(tmp_path, demo=False)
    c.start()
    try:
        assert c.healthy({"http": lambda: True}) == {"store": True, "sensors": True, "http": True}
        assert c.healthy({"http": lambda: False})["http"] is False
    finally:
        c.stop()
    assert c.healthy()["store"] is False   # a closed store no longer answers


def test_main_loop_stops_when_asked(tmp_path):
    c = make(tmp_path, demo=False)
    stopping = threading.Event()
    t = threading.Thread(target=c.main_loop, args=(stopping,), kwargs={"period_s": 0.01})
    t.start()
    stopping.set()
    t.join(timeout=5)
    assert not t.is_alive()
    c.stop()


def test_main_loop_tells_systemd_ready_and_feeds_the_watchdog_only_while_alive(tmp_path, monkeypatch):
    import socket
    import time

    sock_path = tmp_path / "notify.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    server.bind(str(sock_path))
    server.settimeout(0.1)
    monkeypatch.setenv("NOTIFY_SOCKET", str(sock_path))
    monkeypatch.setenv("WATCHDOG_USEC", "100000")  # 0.1 s: pings every 0.05 s
    monkeypatch.delenv("WATCHDOG_PID", raising=False)
    c = make(tmp_path, demo=False)
    c.start()
    stalled = threading.Event()
    stopping = threading.Event()
    t = threading.Thread(target=c.main_loop, args=(stopping,),
                         kwargs={"period_s": 0.02, "checks": {"http": lambda: not stalled.is_set()}})
    t.start()

    def received(seconds):
        out, end = [], time.monotonic() + seconds
        while time.monotonic() < end:
            try:
                out.append(server.recv(4096).decode())
            except socket.timeout:
                pass
        return out

    try:
        first = received(0.6)
        assert any("READY=1" in m for m in first) and any("WATCHDOG=1" in m for m in first)
        stalled.set()
        received(0.2)  # let a ping already on its way arrive
        assert not any("WATCHDOG=1" in m for m in received(0.5))
        stalled.clear()
        assert any("WATCHDOG=1" in m for m in received(0.6))
    finally:
        stopping.set()
        t.join(timeout=5)
        c.stop()
        server.close()
    assert not t.is_alive()
