"""Shared by the reliability benchmarks (bench/crash.py, http_fuzz.py, hostile_wifi.py, rules_fuzz.py,
file_fuzz.py, faults.py, load.py): the import path to the test harness, the machine line, and the figures' output."""

from __future__ import annotations

import json
import os
import platform
import signal
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))      # the harness lives in tests/reliability/
# the daemons a bench starts import this checkout's companion too, not the copy the virtualenv was installed from
os.environ["PYTHONPATH"] = os.pathsep.join([str(REPO), *[p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
                                                        if p and p != str(REPO)]])


def _stop(signum, frame):
    # a bench stopped with `kill` unwinds like Ctrl-C, so its finally blocks stop the daemons it started
    raise SystemExit(128 + signum)


signal.signal(signal.SIGTERM, _stop)


def machine() -> str:
    return f"{platform.machine()}, {os.cpu_count()} cores, CPython {platform.python_version()}"


class Figures:
    """Collects a benchmark's figures; prints them as it goes and as JSON at the end (and to --json FILE)."""

    def __init__(self, name: str, json_path: str | None = None):
        self.name = name
        self.json_path = json_path
        self.data: dict = {"bench": name, "machine": machine()}
        self.started = time.monotonic()
        print(f"{name} on {machine()}", flush=True)

    def say(self, text: str) -> None:
        print(f"[{time.monotonic() - self.started:7.1f} s] {text}", flush=True)

    def put(self, key: str, value) -> None:
        self.data[key] = value

    def finish(self, ok: bool) -> int:
        self.data["seconds"] = round(time.monotonic() - self.started, 1)
        self.data["ok"] = ok
        text = json.dumps(self.data, indent=2, default=str)
        print(text, flush=True)
        if self.json_path:
            Path(self.json_path).write_text(text + "\n")
        return 0 if ok else 1
