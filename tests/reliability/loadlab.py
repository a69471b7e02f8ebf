"""Many tablets at once: event-stream clients, a burst of changes, /api/state latency, the stream cap.

Used by tests/reliability/test_load.py (one short round) and bench/load.py (figures, soak, CPU).
All traffic is on loopback; every wait has a deadline.
"""

from __future__ import annotations

import http.client
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.reliability.harness import (Client, DaemonProcess, StreamClient, percentile, proc_cpu_seconds,
                                       write_config)


class Mover:
    """Makes Balance Duels changes through the API (roll, then the first legal move; a new game when over)."""

    def __init__(self, client: Client):
        self.client = client
        self.state = client.get("/api/state")
        self.sent_at: dict[int, float] = {}      # seq -> monotonic time the POST that made it was sent
        self.refused = 0

    def change(self) -> int:
        """One change; the seq of its event. A change the rules refuse because the game moved on without us
        (the sensors reported a tip, say) is retried from the fresh state."""
        for _ in range(3):
            view = self.state["view"]
            if view["over"]:
                path, body = "/api/new_game", {"game": "balance_duels", "options": {"players": 2}}
            elif view["roll"] is None:
                path, body = "/api/roll", {"value": 1 + len(self.sent_at) % 6}
            else:
                path, body = "/api/action", {"action": {"type": "move", "move": view["moves"][0]["move"]}}
            t = time.monotonic()
            status, answer = self.client.post(path, body)
            if status == 200:
                self.state = answer["state"]
                self.sent_at[answer["seq"]] = t
                return answer["seq"]
            if status != 409:
                break
            self.refused += 1
            self.state = self.client.get("/api/state")
        raise AssertionError(f"POST {path}: {status} {answer}")


class StatePoller(threading.Thread):
    """GET /api/state in a loop (keep-alive), recording each answer's latency in seconds."""

    def __init__(self, port: int, pause_s: float = 0.01):
        super().__init__(name="poller", daemon=True)
        self.client = Client(port, timeout=10)
        self.pause_s = pause_s
        self.latencies: list[float] = []
        self.errors: list[str] = []
        self._stop_flag = threading.Event()

    def run(self) -> None:
        try:
            while not self._stop_flag.is_set():
                t = time.monotonic()
                try:
                    status, _, _ = self.client.request("GET", "/api/state")
                except (OSError, http.client.HTTPException) as exc:
                    self.errors.append(f"{type(exc).__name__}: {exc}")
                    continue
                self.latencies.append(time.monotonic() - t)
                if status != 200:
                    self.errors.append(f"status {status}")
                self._stop_flag.wait(self.pause_s)
        finally:
            self.client.close()

    def stop(self) -> None:
        self._stop_flag.set()
        self.join(timeout=15)


@dataclass
class Round:
    clients: int
    changes: int
    first_seq: int
    last_seq: int
    complete: int                    # clients that saw every event, in order
    gaps: list[str] = field(default_factory=list)
    latencies_s: list[float] = field(default_factory=list)      # POST sent -> event at a client
    state_latencies_s: list[float] = field(default_factory=list)
    poll_errors: list[str] = field(default_factory=list)
    over_cap_status: int | None = None
    over_cap_retry_after: str | None = None
    over_cap_error: str | None = None
    over_cap_s: float | None = None

    def figures(self) -> dict:
        out = {"clients": self.clients, "changes": self.changes, "complete_clients": self.complete,
               "events_per_client": self.last_seq - self.first_seq}
        if self.latencies_s:
            out["event_latency_ms"] = {"median": round(percentile(self.latencies_s, 50) * 1000, 1),
                                       "p95": round(percentile(self.latencies_s, 95) * 1000, 1),
                                       "max": round(max(self.latencies_s) * 1000, 1)}
        if self.state_latencies_s:
            out["state_latency_ms"] = {"median": round(percentile(self.state_latencies_s, 50) * 1000, 1),
                                       "p95": round(percentile(self.state_latencies_s, 95) * 1000, 1),
                                       "samples": len(self.state_latencies_s)}
        out["over_cap"] = {"status": self.over_cap_status, "retry_after": self.over_cap_retry_after,
                           "answered_in_s": self.over_cap_s}
        return out


RECORDER_MINUTES = 1    # the flight recorder fills by table time up to its bound; at one minute it is full after the warm-up


def start_daemon(workdir: Path, *, max_streams: int, heartbeat_s: float = 1.0) -> DaemonProcess:
    workdir.mkdir(parents=True, exist_ok=True)
    config = write_config(workdir, demo=False, max_streams=max_streams, heartbeat_s=heartbeat_s,
                          recorder_minutes=RECORDER_MINUTES)
    return DaemonProcess(config, workdir / "events.sqlite3")


def open_streams(port: int, n: int, *, timeout_s: float = 600.0) -> list[StreamClient]:
    clients = [StreamClient(port, timeout=timeout_s, name=f"tablet-{i}") for i in range(n)]
    for c in clients:
        c.start()
    deadline = time.monotonic() + 20
    for c in clients:
        c.connected.wait(max(0.0, deadline - time.monotonic()))
    # the first state event (the snapshot) proves the stream is really being served
    while time.monotonic() < deadline and not all(c.log.ids or c.log.error for c in clients):
        time.sleep(0.02)
    return clients


def over_the_cap(port: int) -> tuple[int | None, str | None, str | None, float]:
    """One more stream than the cap allows: (status, Retry-After, error text, seconds to the answer)."""
    t = time.monotonic()
    extra = StreamClient(port, timeout=10, name="one-too-many")
    extra.start()
    extra.join(timeout=10)
    took = time.monotonic() - t
    extra.stop()
    return extra.log.status, extra.log.headers.get("retry-after"), extra.log.error, took


def run_round(daemon: DaemonProcess, clients: list[StreamClient], changes: int, *, pace_s: float = 0.0,
              poll: bool = True, wait_s: float = 30.0, min_polls: int = 20) -> Round:
    """`changes` changes (as fast as possible, or one every pace_s) while the clients listen; what they saw.

    The state poller answers at least `min_polls` times while the streams are open: a fast burst can be over
    before it has, and a latency figure needs its samples whatever the machine's speed."""
    client = daemon.client(timeout=10)
    mover = Mover(client)
    first = mover.state["seq"]
    starts = {id(c): len(c.log.ids) for c in clients}
    poller = StatePoller(daemon.port) if poll else None
    if poller:
        poller.start()
    try:
        for _ in range(changes):
            t = time.monotonic()
            mover.change()
            if pace_s:
                time.sleep(max(0.0, pace_s - (time.monotonic() - t)))
        last = mover.state["seq"]
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline and not all(
                (c.log.ids and c.log.ids[-1] >= last) or c.log.error for c in clients):
            time.sleep(0.02)
        while poller and len(poller.latencies) < min_polls and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        if poller:
            poller.stop()
        client.close()
    rnd = Round(len(clients), changes, first, last, 0)
    expected = list(range(first + 1, last + 1))
    for c in clients:
        before = c.log.ids[:starts[id(c)]]
        ids = c.log.ids[starts[id(c)]:]
        arrivals = c.log.arrivals[starts[id(c)]:]
        seen = [i for i in ids if i <= last]
        if before and before[-1] == first and seen == expected:
            rnd.complete += 1
        else:
            missing = sorted(set(expected) - set(seen))[:5]
            rnd.gaps.append(f"{c.name}: had {before[-1:] or 'nothing'} before, then {len(seen)} of {len(expected)} "
                            f"ids (missing {missing}, in order: {seen == sorted(seen)}), error: {c.log.error}")
        for seq, at in zip(ids, arrivals):
            if seq in mover.sent_at:
                rnd.latencies_s.append(at - mover.sent_at[seq])
    if poller:
        rnd.state_latencies_s = poller.latencies
        rnd.poll_errors = poller.errors
    return rnd


def close_streams(clients: list[StreamClient]) -> None:
    for c in clients:
        c.stop()
    for c in clients:
        c.join(timeout=10)


def wait_for_free_slot(port: int, timeout_s: float = 10.0) -> bool:
    """After clients hang up, the server frees their slots at its next write; True once a stream is accepted."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        probe = StreamClient(port, timeout=3, name="probe")
        probe.start()
        probe.connected.wait(5)
        ok = probe.log.status == 200
        probe.stop()
        probe.join(timeout=5)
        if ok:
            return True
        time.sleep(0.3)
    return False


def cpu_seconds(daemon: DaemonProcess) -> float:
    return proc_cpu_seconds(daemon.pid)
