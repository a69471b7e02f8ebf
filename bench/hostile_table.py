"""Issue 34, items 6-9, measured again as the attacker did: against `companion run` processes on loopback.

Run: .venv/bin/python bench/hostile_table.py [--json FILE]   (bench/hostile_wifi.py runs it too)

6. Hidden cash: a table with a PIN, Imperial, Ann's cash hidden and corrected to 977 by a player logged in; then a
   stranger without the PIN reads /api/events, /api/record, the stream (fresh, and resumed at the correction) and
   the flight recorder, and tries to replay what /api/record gave on a table of their own. The same reads on a
   table without a PIN. (The MQTT event topic is in bench/hostile_broker.py, which has the broker.)
7. A map completion past what the start loads: 119 territories of 60 characters, 400 borders over 4 POSTs and
   borders_complete; then the daemon is restarted on the same files.
8. A map write the disk refuses: the maps folder on a tmpfs of its own in a private mount namespace, made
   read-only while the daemon runs (`unshare`, `nsenter`, `mount`; needs root), then a tmpfs too small for the file
   (a full disk). Without root, the read-only folder is a folder without write permission, and the full disk
   is left out.
9. A plain PIN in the config: a tablet logs in, the daemon restarts, a stranger spends the table's ration of wrong
   PINs from 40 addresses, and the tablet logs in again with its device cookie; then the PIN is changed.
Exit code 1 if any answer is not the one expected.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import Figures  # first: it also puts the repository on sys.path

from tests.reliability.harness import DaemonProcess, write_config
from tests.reliability.httpfuzz import HIDDEN_CASH, maps_problems

PIN = "2468"


class Tablet:
    """One browser on the Wi-Fi: its own source address on loopback, its cookies, the CSRF token once logged in."""

    def __init__(self, port: int, address: str = "127.0.0.1"):
        self.port, self.address = port, address
        self.cookies: dict[str, str] = {}
        self.csrf: str | None = None

    def request(self, method: str, path: str, body: bytes | None = None, headers: dict | None = None,
                read_stream: int = 0) -> tuple[int, dict[str, str], bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=15, source_address=(self.address, 0))
        try:
            hdrs = {"Content-Type": "application/json"} if method == "POST" else {}
            if self.cookies:
                hdrs["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
            if self.csrf and method == "POST":
                hdrs["X-CSRF-Token"] = self.csrf
            hdrs.update(headers or {})
            conn.request(method, path, body=body, headers=hdrs)
            resp = conn.getresponse()
            for k, v in resp.getheaders():
                if k.lower() == "set-cookie":
                    name, _, rest = v.partition("=")
                    self.cookies[name] = rest.split(";")[0]
            if read_stream:      # the retry line and this many messages of an event stream
                payload = b""
                while payload.count(b"\n\n") < read_stream + 1:
                    line = resp.readline()
                    if not line:
                        break
                    payload += line
            else:
                payload = resp.read()
            return resp.status, {k: v for k, v in resp.getheaders()}, payload
        finally:
            conn.close()

    def post(self, path: str, body) -> tuple[int, dict]:
        status, _, payload = self.request("POST", path, json.dumps(body).encode())
        return status, json.loads(payload) if payload else {}

    def login(self, pin: str = PIN) -> int:
        status, body = self.post("/api/login", {"pin": pin})
        if status == 200:
            self.csrf = body["csrf"]
        return status


def start(workdir: Path, *, pin: str | None = PIN, wrap: tuple[str, ...] = (), extra: str = "") -> DaemonProcess:
    workdir.mkdir(parents=True, exist_ok=True)
    config = write_config(workdir, pin=pin)
    if extra:
        config.write_text(config.read_text() + extra)
    return DaemonProcess(config, workdir / "events.sqlite3", wrap=wrap)


def hidden_cash(fig: Figures, root: Path) -> tuple[bool, dict]:
    """Item 6 over HTTP: what a stranger reads of Ann's hidden, corrected cash."""
    secret = str(HIDDEN_CASH).encode()
    out: dict = {}
    ok = True
    for mode in ("PIN", "no PIN"):
        daemon = start(root / f"cash-{mode.replace(' ', '-')}", pin=PIN if mode == "PIN" else None)
        try:
            player = Tablet(daemon.port, "127.0.0.2")
            if mode == "PIN":
                assert player.login() == 200
            for path, body in (("/api/new_game", {"game": "imperial", "options": {"players": ["Ann", "Bob", "Cy"]}}),
                               ("/api/action", {"action": {"type": "hide_cash", "player": "Ann", "hidden": True}}),
                               ("/api/action", {"action": {"type": "correct", "what": "cash", "player": "Ann",
                                                           "value": HIDDEN_CASH, "reason": "recount"}}),
                               ("/api/action", {"action": {"type": "donate", "player": "Bob", "nation": "china",
                                                           "amount": 1}})):
                status, answer = player.post(path, body)
                assert status == 200, (path, status, answer)
            seq = answer["seq"]
            stranger = Tablet(daemon.port, "127.0.0.66")
            reads = {}
            for what, path, headers, stream in (
                    ("GET /api/events", "/api/events", {}, 0),
                    ("GET /api/record", "/api/record", {}, 0),
                    ("GET /api/state", "/api/state", {}, 0),
                    ("GET /api/stream", "/api/stream", {}, 1),
                    ("GET /api/stream resumed at the correction", "/api/stream", {"Last-Event-ID": str(seq - 2)}, 3),
                    ("GET /api/flight-recorder", "/api/flight-recorder", {}, 0)):
                status, _, payload = stranger.request("GET", path, headers=headers, read_stream=stream)
                leaked = secret in payload
                reads[what] = {"status": status, "holds_977": leaked, "bytes": len(payload)}
                if what == "GET /api/record":
                    record = payload
                ok &= not leaked
                fig.say(f"{'ok ' if not leaked else 'BAD'} {mode}: stranger {what}: {status}, "
                        f"{'977 IN IT' if leaked else 'no 977'} ({len(payload):,} bytes)")
            # the issue replayed the record a stranger downloaded on a table of its own: the figure came back
            other = start(root / f"replay-{mode.replace(' ', '-')}", pin=None)
            try:
                status, _, payload = Tablet(other.port).request("POST", "/api/record", record,
                                                               {"Content-Type": "application/x-ndjson"})
                state = Tablet(other.port).request("GET", "/api/state")[2]
                replay = {"status": status, "state_holds_977": secret in state,
                          "answer": json.loads(payload).get("error", "")[:100]}
                ok &= not replay["state_holds_977"] and status != 200
                fig.say(f"{'ok ' if status != 200 else 'BAD'} {mode}: what the stranger got from /api/record, "
                        f"loaded on a table of their own: {status} {replay['answer']!r}")
            finally:
                other.stop()
            reads["replay of the stranger's record"] = replay
            # the player with the PIN still has it all
            if mode == "PIN":
                status, _, payload = player.request("GET", "/api/record")
                reads["GET /api/record, the player's session"] = {"status": status, "holds_977": secret in payload}
                ok &= status == 200 and secret in payload
            out[mode] = reads
        finally:
            daemon.stop()
    return ok, out


def map_completion(fig: Figures, root: Path) -> tuple[bool, dict]:
    """Item 7: the issue's completion over several POSTs; what is saved; the next start."""
    from tests.reliability.httpfuzz import map_requests

    work = root / "maps-size"
    daemon = start(work)
    try:
        tablet = Tablet(daemon.port)
        assert tablet.login() == 200
        sequence = [r for r in map_requests() if r.expect is None]       # the issue's: within each bound
        answers = []
        path = work / "maps" / "balance_of_power.toml"
        for req in sequence:
            status, _, payload = tablet.request("POST", req.path, req.body)
            answers.append({"status": status, "body_bytes": len(req.body),
                            "error": json.loads(payload).get("error", "")[:140] if status != 200 else None,
                            "file_bytes": path.stat().st_size if path.exists() else 0})
            fig.say(f"map POST ({len(req.body):,}-byte body): {status}; file {answers[-1]['file_bytes']:,} bytes"
                    + (f"; {answers[-1]['error']!r}" if status != 200 else ""))
        completed = json.loads(tablet.request("GET", "/api/map/balance_of_power")[2])["completed"]
    finally:
        daemon.stop()
    problems = maps_problems(work / "maps")
    again = None
    try:
        again = start(work)
        restarted = json.loads(Tablet(again.port).request("GET", "/api/map/balance_of_power")[2])["completed"]
        starts = restarted == completed
    except AssertionError as exc:       # DaemonError: it would not start
        starts, restarted = False, str(exc)[:300]
    finally:
        if again is not None:
            again.stop()
    refused = [a for a in answers if a["status"] != 200]
    ok = bool(refused) and all(a["status"] == 400 and "nothing was saved" in a["error"] for a in refused) \
        and not problems and starts
    fig.say(f"{'ok ' if ok else 'BAD'} map file {path.stat().st_size:,} bytes after "
            f"{len(answers) - len(refused)} saved and {len(refused)} refused; the next start "
            f"{'loads it' if starts else 'FAILS'}")
    return ok, {"answers": answers, "file_bytes": path.stat().st_size, "load_problems": problems,
                "next_start_loads_it": starts}


def _can_mount() -> bool:
    return os.geteuid() == 0 and all(shutil.which(c) for c in ("unshare", "nsenter", "mount"))


def map_write_refused(fig: Figures, root: Path) -> tuple[bool, dict]:
    """Item 8: the maps folder read-only, then full, while the daemon runs."""
    out, ok = {}, True
    cases = ("read-only folder", "full disk") if _can_mount() else ("read-only folder",)
    for case in cases:
        work = root / f"maps-{case.replace(' ', '-')}"
        maps = work / "maps"
        maps.mkdir(parents=True)
        size = "1m" if case == "read-only folder" else "8k"
        wrap: tuple[str, ...] = ()
        if _can_mount():
            # a tmpfs on the maps folder, seen by the daemon alone (its own mount namespace), then exec the daemon
            wrap = ("unshare", "--mount", "--propagation", "private", "sh", "-c",
                    f'mount -t tmpfs -o size={size} tmpfs "$0" && exec "$@"', str(maps))
        daemon = start(work, wrap=wrap)
        try:
            tablet = Tablet(daemon.port)
            assert tablet.login() == 200
            if case == "read-only folder":
                game, first_add = "risk", {"borders": [["Germany", "Denmark"]]}
                # a write the form takes, refused by the folder
                then_add = {"regions": {"purple": {"bonus": 3}}}
            else:
                game, first_add = "balance_of_power", {"territories": ["Isle of Man"]}
                # within the form's bounds, but more than the 8 kB the folder has
                then_add = {"territories": [f"Isle {i:03d} " + "q" * 50 for i in range(110)]}
            first, _ = tablet.post(f"/api/map/{game}", {"add": first_add})
            path = maps / f"{game}.toml"
            mounted = lambda *cmd: subprocess.run(["nsenter", "-t", str(daemon.pid), "-m", *cmd],  # noqa: E731
                                                  check=True, capture_output=True, timeout=10)
            read_file = (lambda: mounted("cat", str(path)).stdout) if wrap else path.read_bytes
            old = read_file()
            if case == "read-only folder":
                if wrap:
                    mounted("mount", "-o", "remount,ro", str(maps))
                else:
                    maps.chmod(0o555)
            status, headers, payload = tablet.request("POST", f"/api/map/{game}", json.dumps({"add": then_add}).encode())
            error = json.loads(payload).get("error", "")
            now = read_file()
            left = (mounted("ls", "-a", str(maps)).stdout.decode().split() if wrap else os.listdir(maps))
            temporaries = [n for n in left if n not in (".", "..", path.name)]
            good = first == 200 and status == 503 and headers.get("Retry-After", "").isdigit() and \
                "nothing was saved" in error and now == old and not temporaries
            ok &= good
            out[case] = {"first_write": first, "status": status, "retry_after": headers.get("Retry-After"),
                         "error": error[:200], "old_file_kept": now == old, "temporary_files_left": temporaries,
                         "how": "a tmpfs in a mount namespace" if wrap else "chmod 555 (not root)"}
            fig.say(f"{'ok ' if good else 'BAD'} map write on a {case}: {status}, Retry-After "
                    f"{headers.get('Retry-After')}, '…{error[-60:]}'; old file kept: {now == old}; "
                    f"temporary files left: {temporaries or 'none'}")
        finally:
            daemon.stop()
            if not wrap:
                maps.chmod(0o755)
    if len(cases) == 1:
        fig.say("the full disk needs root (a tmpfs of 8 kB in a mount namespace): left out")
    return ok, out


def device_cookie(fig: Figures, root: Path) -> tuple[bool, dict]:
    """Item 9: a plain PIN; a tablet's device cookie across a restart while a stranger spends the table's ration,
    then a new PIN."""
    work = root / "device-cookie"
    out, ok = {}, True

    def spend_the_ration(port: int) -> dict:
        # one wrong PIN from each of 40 addresses: each is within its own free tries, together past the table's 30
        answers: dict[int, int] = {}
        for i in range(40):
            status = Tablet(port, f"127.0.1.{10 + i}").login("0000")
            answers[status] = answers.get(status, 0) + 1
        return answers

    daemon = start(work)
    tablet = Tablet(daemon.port, "127.0.0.2")
    try:
        assert tablet.login() == 200
        device = tablet.cookies["companion_device"]
    finally:
        daemon.stop()
    for step, pin in (("restart, same plain PIN", PIN), ("restart, a new PIN", "135790")):
        config = work / "companion.toml"
        if pin != PIN:
            config.write_text(config.read_text().replace(f'pin = "{PIN}"', f'pin = "{pin}"'))
        daemon = DaemonProcess(config, work / "events.sqlite3")
        try:
            tablet.port = daemon.port
            tablet.cookies = {"companion_device": device}
            spent = spend_the_ration(daemon.port)
            status = tablet.login(pin)
            stranger = Tablet(daemon.port, "127.0.2.1").login(pin)
            kept = status == 200 and tablet.cookies.get("companion_device") == device
            out[step] = {"wrong_pins_from_40_addresses": spent, "tablet_with_its_device_cookie": status,
                         "device_cookie_kept": kept, "a_new_tablet_with_the_right_pin": stranger}
            want = 200 if pin == PIN else 429
            good = status == want and (kept if pin == PIN else True)
            ok &= good
            fig.say(f"{'ok ' if good else 'BAD'} {step}: 40 wrong PINs from 40 addresses answered {spent}; "
                    f"then the tablet that logged in before, with its device cookie and the right PIN: {status}"
                    f"{' (its cookie kept)' if kept else ''}; a tablet new to the table: {stranger}")
        finally:
            daemon.stop()
    return ok, out


def run(fig: Figures) -> bool:
    with tempfile.TemporaryDirectory(prefix="companion-hostile-table-") as tmp:
        root = Path(tmp)
        ok = True
        for key, part in (("hidden_cash", hidden_cash), ("map_completion", map_completion),
                          ("map_write_refused", map_write_refused), ("device_cookie", device_cookie)):
            t = time.monotonic()
            good, data = part(fig, root)
            fig.put(key, data)
            fig.say(f"{key}: {'ok' if good else 'NOT AS EXPECTED'} ({time.monotonic() - t:.1f} s)")
            ok &= good
    return ok


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", help="also write the figures to this file")
    args = p.parse_args(argv)
    fig = Figures("hostile_table", args.json)
    return fig.finish(run(fig))


if __name__ == "__main__":
    sys.exit(main())
