"""The real daemon in its own process: served by waitress, fed by the simulated table's demo game."""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

pytestmark = pytest.mark.slow   # a long file: handed out to a worker first (tests/conftest.py)

CONFIG = """
[simulate]
enabled = true
demo = {demo}
demo_interval_s = 0.15
seed = 3
[web]
heartbeat_s = 0.5
"""


class Daemon:
    def __init__(self, tmp_path, *, demo=True, port=0, extra=()):
        cfg = tmp_path / "companion.toml"
        cfg.write_text(CONFIG.format(demo="true" if demo else "false"))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "companion", "run", "--config", str(cfg), "--port", str(port),
             "--db", str(tmp_path / "events.sqlite3"), "--log-level", "WARNING", *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        m = re.search(r"http://[\d.]+:(\d+)", line)
        if not m:
            self.proc.kill()
            raise AssertionError(f"daemon did not start: {line!r} {self.proc.stderr.read()}")
        self.url = f"http://127.0.0.1:{m.group(1)}"

    def get(self, path):
        with urllib.request.urlopen(self.url + path, timeout=5) as r:
            return json.loads(r.read())

    def post(self, path, body):
        req = urllib.request.Request(self.url + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=5) as r:
            return json.loads(r.read())

    def stop(self, sig=signal.SIGTERM):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout=10)
        self.proc.stdout.close()
        self.proc.stderr.close()


def read_stream(url, n_events, *, last_id=None, timeout=10.0):
    """Read SSE messages until n 'state' events arrived; returns (events, saw_heartbeat)."""
    req = urllib.request.Request(url + "/api/stream")
    if last_id is not None:
        req.add_header("Last-Event-ID", str(last_id))
    events, current, heartbeat = [], {}, False
    deadline = time.monotonic() + timeout
    with urllib.request.urlopen(req, timeout=timeout) as r:
        assert r.headers["Content-Type"].startswith("text/event-stream")
        while len(events) < n_events and time.monotonic() < deadline:
            line = r.readline().decode().rstrip("\n")
            if line.startswith(":"):
                heartbeat = True
            elif line == "":
                if current.get("event") == "state":
                    events.append(current)
                current = {}
            else:
                key, _, value = line.partition(": ")
                current[key] = value
    return events, heartbeat


def test_state_and_live_stream_from_the_demo(tmp_path):
    d = Daemon(tmp_path)
    try:
        state = d.get("/api/state")
        assert state["game"] == "balance_duels" and "seq" in state
        events, _ = read_stream(d.url, 3)
        assert len(events) == 3
        ids = [int(e["id"]) for e in events]
        assert ids == sorted(ids) and len(set(ids)) == 3
        payloads = [json.loads(e["data"]) for e in events]
        with_state = [(int(e["id"]), p["state"]) for e, p in zip(events, payloads) if p["state"] is not None]
        assert with_state and all(state["seq"] >= seq for seq, state in with_state)
        # resuming from an older id replays what was missed, in order
        replay, _ = read_stream(d.url, 2, last_id=ids[0])
        assert [int(e["id"]) for e in replay][:2] == [ids[0] + 1, ids[0] + 2]
    finally:
        d.stop()


def test_heartbeat_when_nothing_happens(tmp_path):
    d = Daemon(tmp_path, demo=False)
    try:
        req = urllib.request.Request(d.url + "/api/stream")
        with urllib.request.urlopen(req, timeout=5) as r:
            seen = b""
            deadline = time.monotonic() + 4
            while b": heartbeat" not in seen and time.monotonic() < deadline:
                seen += r.readline()
        assert b"id: 1" in seen and b": heartbeat" in seen
    finally:
        d.stop()


def test_kill_9_keeps_every_committed_event(tmp_path):
    d = Daemon(tmp_path, demo=False)
    acked = []
    try:
        for value in (3, 5):
            s = d.post("/api/roll", {"value": value})["state"]
            acked.append(s["seq"])
            move = s["view"]["moves"][0]["move"]
            acked.append(d.post("/api/action", {"action": {"type": "move", "move": move}})["seq"])
        before = d.get("/api/state")
    finally:
        d.stop(signal.SIGKILL)
    again = Daemon(tmp_path, demo=False)
    try:
        after = again.get("/api/state")
        assert after["seq"] >= before["seq"] == acked[-1]
        assert after["view"] == before["view"]
        seqs = [e["seq"] for e in again.get("/api/events?after=0")]
        assert set(acked) <= set(seqs)
    finally:
        again.stop()


def test_port_in_use_is_one_clear_line(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        proc = subprocess.run([sys.executable, "-m", "companion", "run", "--port", str(port),
                               "--db", str(tmp_path / "x.sqlite3")], capture_output=True, text=True, timeout=30)
    assert proc.returncode != 0
    assert f"127.0.0.1:{port} is already in use" in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""


@pytest.mark.parametrize("args,needle", [
    (["run", "--frobnicate"], "unrecognized arguments"),
    (["run", "--config", "/nonexistent/c.toml"], "no such config file"),
    (["run", "--port", "99999"], "--port"),
])
def test_bad_command_lines(args, needle, tmp_path):
    proc = subprocess.run([sys.executable, "-m", "companion", *args], capture_output=True, text=True, timeout=30,
                          cwd=tmp_path)
    assert proc.returncode != 0 and needle in proc.stderr and "Traceback" not in proc.stderr


def test_bad_config_file_exits_2(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text("[web]\nport = 'eighty'\n")
    proc = subprocess.run([sys.executable, "-m", "companion", "run", "--config", str(cfg)], capture_output=True,
                          text=True, timeout=30, cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"companion: {cfg}: [web] port: must be a whole number, not 'eighty'"
    assert not (tmp_path / "var").exists()  # nothing half-started


def test_help_on_every_command():
    for args in (["--help"], ["run", "--help"]):
        proc = subprocess.run([sys.executable, "-m", "companion", *args], capture_output=True, text=True, timeout=30)
        assert proc.returncode == 0 and "usage: companion" in proc.stdout


@pytest.mark.parametrize("text,key", [
    ('[web]\npin = "pbkdf2_sha256$0$00$00"', "[web] pin"),
    ('[web]\npin = "pbkdf2_sha256$4000000000$' + "ab" * 16 + "$" + "cd" * 32 + '"', "[web] pin"),
    ('[game]\nname = "risk"\noptions = {setup = []}', "[game] options"),
    ("[game]\noptions = " + "{a = " * 3000 + "1" + "}" * 3000, "nested too deeply"),
    ('[store]\npath = ""', "[store] path"),
    ('[game]\noptions = {pawns = nan}', "[game] options.pawns"),
])
def test_a_config_that_must_not_start_exits_2_in_one_line_creating_nothing(tmp_path, text, key):
    cfg = tmp_path / "c.toml"
    cfg.write_text("[simulate]\nenabled = true\n" + text + "\n")
    proc = subprocess.run([sys.executable, "-m", "companion", "run", "--config", str(cfg), "--port", "0"],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"companion: {cfg}: ") and key in proc.stderr
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr and proc.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.toml"]      # no ./var, no store


def test_a_port_in_use_exits_2_before_creating_the_store(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        cfg = tmp_path / "c.toml"
        cfg.write_text(f"[simulate]\nenabled = true\n[web]\nport = {port}\n")
        from_config = subprocess.run([sys.executable, "-m", "companion", "run", "--config", str(cfg)],
                                     capture_output=True, text=True, timeout=60, cwd=tmp_path)
        from_flag = subprocess.run([sys.executable, "-m", "companion", "run", "--port", str(port),
                                    "--db", str(tmp_path / "x.sqlite3")], capture_output=True, text=True, timeout=60,
                                   cwd=tmp_path)
    for proc, key in ((from_config, "[web] port"), (from_flag, "--port")):
        assert proc.returncode == 2, proc.stderr
        assert f"127.0.0.1:{port} is already in use" in proc.stderr and key in proc.stderr
        assert proc.stderr.count("\n") == 1 and proc.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.toml"]
