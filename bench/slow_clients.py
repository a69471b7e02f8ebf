"""A tablet's GET /api/state while guests on the Wi-Fi hold connections with slow headers and flood /api/login.

The daemon runs as `companion run` (simulated table, a PIN) on loopback. Attackers run in a process of their
own, so that their Python does not slow the tablets' timing down:

- slow connections (--slow, 200), from 40 addresses (127.0.2.1-40; Linux routes all of 127/8 to loopback):
  each sends a request line, then one header line a second and never finishes; cut off, it reconnects at once;
- a login flood from one address (127.0.0.66): --flood threads (100) sending wrong PINs back to back on
  keep-alive connections; a refused connection is retried after 20 ms.

Two tablets poll GET /api/state ten times a second each: one on a keep-alive connection (127.0.0.7), one on a
new connection every time (127.0.0.8). Figures: their latency (p50 / p95 / max) without and with the attack,
and the right PIN from another tablet during the flood.

Run: .venv/bin/python bench/slow_clients.py [--seconds 60] [--slow 200] [--flood 100] [--json FILE]
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import selectors
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

from _common import Figures

from tests.reliability.harness import LOOPBACK, DaemonProcess, percentile, write_config

PIN = "246813"
SLOW_ADDRESSES = 40      # 5 connections each: within the per-address cap, so only the request deadline cuts them


def _slow_connections(port: int, count: int, stopping: threading.Event, stats: dict) -> None:
    """`count` connections sending headers a line a second, never finishing; reconnected when cut off."""
    sel = selectors.DefaultSelector()
    opened: dict[socket.socket, tuple[str, float, int]] = {}

    def open_one(address: str) -> None:
        s = socket.socket()
        s.bind((address, 0))
        s.setblocking(False)
        s.connect_ex((LOOPBACK, port))
        opened[s] = (address, time.monotonic(), 0)
        sel.register(s, selectors.EVENT_READ)
        stats["opened"] += 1

    def cut(s: socket.socket) -> None:
        address, since, _ = opened.pop(s)
        sel.unregister(s)
        s.close()
        stats["cut_off"] += 1
        stats["lifetimes"].append(time.monotonic() - since)
        open_one(address)

    for i in range(count):
        open_one(f"127.0.2.{1 + i % SLOW_ADDRESSES}")
    next_line = time.monotonic() + 0.1
    while not stopping.is_set():
        for key, _ in sel.select(timeout=0.1):
            try:
                data = key.fileobj.recv(4096)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            if not data:             # the server hung up (or answered: it never should, the request is unfinished)
                cut(key.fileobj)
        if time.monotonic() >= next_line:
            next_line += 1.0
            stats["held_samples"].append(len(opened))
            for s, (address, since, lines) in list(opened.items()):
                line = b"GET /api/state HTTP/1.1\r\nHost: table\r\n" if lines == 0 else b"X-Slow-%d: 1\r\n" % lines
                try:
                    s.send(line)
                    opened[s] = (address, since, lines + 1)
                except BlockingIOError:
                    pass
                except OSError:
                    cut(s)
    for s in list(opened):
        s.close()


def _flood(port: int, stopping: threading.Event, stats: dict, lock: threading.Lock) -> None:
    conn = None
    body = json.dumps({"pin": "000000"})
    while not stopping.is_set():
        if conn is None:
            conn = http.client.HTTPConnection(LOOPBACK, port, timeout=10, source_address=("127.0.0.66", 0))
        try:
            conn.request("POST", "/api/login", body=body, headers={"Content-Type": "application/json"})
            resp = conn.getresponse()
            resp.read()
            key = str(resp.status)
            if resp.will_close:
                conn.close()
                conn = None
        except (OSError, http.client.HTTPException):
            conn.close()
            conn = None
            key = "refused"
            time.sleep(0.02)
        with lock:
            stats[key] = stats.get(key, 0) + 1
    if conn is not None:
        conn.close()


def attack(port: int, slow: int, flood: int, seconds: float, out: "multiprocessing.Queue") -> None:
    stopping = threading.Event()
    slow_stats = {"opened": 0, "cut_off": 0, "lifetimes": [], "held_samples": []}
    flood_stats: dict = {}
    lock = threading.Lock()
    threads = [threading.Thread(target=_slow_connections, args=(port, slow, stopping, slow_stats), daemon=True)]
    threads += [threading.Thread(target=_flood, args=(port, stopping, flood_stats, lock), daemon=True)
                for _ in range(flood)]
    for t in threads:
        t.start()
    time.sleep(seconds)
    stopping.set()
    for t in threads:
        t.join(timeout=15)
    lifetimes = sorted(slow_stats["lifetimes"])
    held = slow_stats["held_samples"]
    out.put({"slow": {"connections": slow, "opened": slow_stats["opened"], "cut_off": slow_stats["cut_off"],
                      "lifetime_median_s": round(lifetimes[len(lifetimes) // 2], 1) if lifetimes else None,
                      "lifetime_max_s": round(lifetimes[-1], 1) if lifetimes else None,
                      "held_median": sorted(held)[len(held) // 2] if held else 0},
             "flood": {"threads": flood, **flood_stats}})


class Tablet(threading.Thread):
    """GET /api/state ten times a second, timing each; keep-alive or a new connection each time."""

    def __init__(self, port: int, address: str, keep_alive: bool):
        super().__init__(daemon=True)
        self.port, self.address, self.keep_alive = port, address, keep_alive
        self.latencies_ms: list[float] = []
        self.failures = 0
        self.stopping = threading.Event()

    def run(self) -> None:
        conn = None
        while not self.stopping.wait(0.1):
            if conn is None:
                conn = http.client.HTTPConnection(LOOPBACK, self.port, timeout=10, source_address=(self.address, 0))
            started = time.perf_counter()
            try:
                conn.request("GET", "/api/state")
                resp = conn.getresponse()
                resp.read()
                ok = resp.status == 200
            except (OSError, http.client.HTTPException):
                ok = False
            took = (time.perf_counter() - started) * 1000
            if ok:
                self.latencies_ms.append(took)
            else:
                self.failures += 1
            if not ok or not self.keep_alive:
                conn.close()
                conn = None
        if conn is not None:
            conn.close()


def measure(port: int, seconds: float) -> dict:
    tablets = [Tablet(port, "127.0.0.7", keep_alive=True), Tablet(port, "127.0.0.8", keep_alive=False)]
    for t in tablets:
        t.start()
    time.sleep(seconds)
    for t in tablets:
        t.stopping.set()
    for t in tablets:
        t.join(timeout=15)
    out = {}
    for t, name in zip(tablets, ("keep_alive", "new_connections")):
        lat = t.latencies_ms
        out[name] = {"requests": len(lat), "failures": t.failures,
                     "p50_ms": round(percentile(lat, 50), 1) if lat else None,
                     "p95_ms": round(percentile(lat, 95), 1) if lat else None,
                     "max_ms": round(max(lat), 1) if lat else None}
    return out


def owner_login(port: int) -> tuple[int, float]:
    conn = http.client.HTTPConnection(LOOPBACK, port, timeout=10, source_address=("127.0.0.9", 0))
    started = time.perf_counter()
    try:
        conn.request("POST", "/api/login", body=json.dumps({"pin": PIN}), headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        resp.read()
        return resp.status, (time.perf_counter() - started) * 1000
    except (OSError, http.client.HTTPException):
        return 0, (time.perf_counter() - started) * 1000
    finally:
        conn.close()


def describe(m: dict) -> str:
    return "; ".join(f"{name.replace('_', ' ')}: {v['p50_ms']} / {v['p95_ms']} / {v['max_ms']} ms "
                     f"({v['requests']} answered, {v['failures']} failed)" for name, v in m.items())


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seconds", type=float, default=60.0, help="how long the attack runs")
    p.add_argument("--slow", type=int, default=200, help="slow connections held at once")
    p.add_argument("--flood", type=int, default=100, help="threads flooding /api/login from one address")
    p.add_argument("--json")
    args = p.parse_args(argv)
    for name, value in (("--seconds", args.seconds), ("--slow", args.slow), ("--flood", args.flood)):
        if not value > 0:
            p.error(f"{name} must be more than 0, not {value}")
    fig = Figures("slow_clients", args.json)
    with tempfile.TemporaryDirectory(prefix="slow-clients-") as tmp:
        daemon = DaemonProcess(write_config(Path(tmp), pin=PIN), Path(tmp) / "events.sqlite3")
        try:
            quiet = measure(daemon.port, min(10.0, args.seconds))
            fig.say(f"GET /api/state p50 / p95 / max, no attack: {describe(quiet)}")
            out: multiprocessing.Queue = multiprocessing.get_context("spawn").Queue()
            attacker = multiprocessing.get_context("spawn").Process(
                target=attack, args=(daemon.port, args.slow, args.flood, args.seconds, out))
            attacker.start()
            time.sleep(min(15.0, args.seconds / 4))     # past the first request deadline: cut-offs are under way
            login = owner_login(daemon.port)
            attacked = measure(daemon.port, max(1.0, args.seconds - min(15.0, args.seconds / 4) - 2))
            report = out.get(timeout=args.seconds + 60)
            attacker.join(timeout=30)
            alive = daemon.alive()
        finally:
            daemon.stop()
    slow, flood = report["slow"], report["flood"]
    fig.say(f"GET /api/state p50 / p95 / max under {args.slow} slow connections and a login flood from one address "
            f"({args.flood} threads): {describe(attacked)}")
    fig.say(f"slow connections: {slow['held_median']} held at once (median), {slow['cut_off']} cut off after "
            f"{slow['lifetime_median_s']} s (median; longest {slow['lifetime_max_s']} s); login flood answers: "
            + ", ".join(f"{k}: {v}" for k, v in sorted(flood.items()) if k != "threads")
            + f"; the right PIN from another tablet during it: {login[0]} in {login[1]:.0f} ms")
    fig.put("quiet", quiet)
    fig.put("attacked", attacked)
    fig.put("attack", report)
    fig.put("owner_login", {"status": login[0], "ms": round(login[1], 1)})
    worst = max(v["p95_ms"] or 1e9 for v in attacked.values())
    failures = sum(v["failures"] for v in attacked.values())
    return fig.finish(alive and worst < 100 and failures == 0 and login[0] == 200)


if __name__ == "__main__":
    sys.exit(main())
