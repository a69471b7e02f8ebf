"""Issue 34, items 6 (the MQTT side) and 10-12, measured again as the attacker did: a real Mosquitto broker with
passwords, a table daemon (`companion run` with [mqtt]) and the hall scoreboard (`companion hall`), both processes,
and a stranger who holds a broker password (the issue's: a password alone lets a user write any topic).

Run: .venv/bin/python bench/hostile_broker.py [--flood 400] [--flood-kb 40] [--json FILE]
(bench/hostile_wifi.py runs it too; smaller --flood and --flood-kb for a quick look)

6.  The MQTT event topic while Ann's hidden cash is corrected to 977 at the table.
10. 300 Home Assistant `online` messages in about 3.3 s: how many times the table republishes its discovery configs.
11. 8 connections in about 11 s under the table's client id as the docs once gave it (companion-<hall>-<table>):
    last wills the broker publishes for the table, and drops of the table's own link.
12. 400 retained states of 40 kB (16 MB) under made-up tables of the hall: /api/tables' size, the hall's memory,
    how long a good table's roll takes to reach the hall (its /api/tables and a page's stream) and what a page is
    sent for it; then the hall restarted into the flood (the broker replays every retained state): when the good
    table's card is back.
Needs Debian's mosquitto and mosquitto_passwd. Exit code 1 if any answer is not the one expected.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from _common import Figures  # first: it also puts the repository on sys.path

from tests.mqtt.conftest import Broker, Watcher, mosquitto_binary
from tests.mqtt.floods import Stranger, hostile_state
from tests.reliability.harness import DaemonProcess, proc_memory_kb, write_config
from tests.reliability.httpfuzz import HIDDEN_CASH

HALL = "club"
USERS = {"t1": "t1-horse", "hall": "hall-battery", "guest": "shared-staple"}   # the stranger is `guest`
PIN = "2468"


def get(port: int, path: str, timeout: float = 30.0) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


class Player:
    """The table's own page: logged in with the PIN, sending changes."""

    def __init__(self, port: int):
        self.port = port
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("POST", "/api/login", body=json.dumps({"pin": PIN}), headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        self.csrf = json.loads(resp.read())["csrf"]
        self.cookie = resp.getheader("Set-Cookie").split(";")[0]
        conn.close()

    def post(self, path: str, body: dict) -> dict:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            conn.request("POST", path, body=json.dumps(body), headers={
                "Content-Type": "application/json", "Cookie": self.cookie, "X-CSRF-Token": self.csrf})
            resp = conn.getresponse()
            answer = json.loads(resp.read())
            if resp.status != 200:
                raise AssertionError(f"{path} {body}: {resp.status} {answer}")
            return answer
        finally:
            conn.close()


def make_broker(root: Path) -> Broker:
    binary = mosquitto_binary()
    passwd = "/usr/bin/mosquitto_passwd" if os.path.exists("/usr/bin/mosquitto_passwd") else "mosquitto_passwd"
    if binary is None:
        raise SystemExit("mosquitto is not installed (apt-get install mosquitto): `make mosquitto` installs it")
    passwords = root / "passwords"
    for n, (user, password) in enumerate(USERS.items()):
        subprocess.run([passwd, "-b", *(["-c"] if n == 0 else []), str(passwords), user, password], check=True,
                       capture_output=True, timeout=30)
    broker = Broker(binary, root / "broker", anonymous=False, extra=(f"password_file {passwords}",))
    broker.start()
    return broker


def table_daemon(root: Path, broker: Broker) -> DaemonProcess:
    work = root / "table"
    work.mkdir(parents=True, exist_ok=True)
    config = write_config(work, pin=PIN)
    config.write_text(config.read_text() + "\n".join([
        "[mqtt]", 'host = "127.0.0.1"', f"port = {broker.port}", f'hall = "{HALL}"', 'table = "t1"',
        'name = "Window"', 'username = "t1"', f'password = "{USERS["t1"]}"', "reconnect_min_s = 0.1",
        "reconnect_max_s = 0.5", "keepalive_s = 5", ""]))
    return DaemonProcess(config, work / "events.sqlite3")


def mqtt_status(port: int) -> dict:
    return json.loads(get(port, "/api/state")[1])["live"].get("mqtt") or {}


def wait(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


class HallProcess:
    """`companion hall` on a free port, with the hall user's password from the environment."""

    def __init__(self, broker: Broker):
        env = {**os.environ, "COMPANION_MQTT_PASSWORD": USERS["hall"]}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "companion", "hall", "--broker", "127.0.0.1", "--port", str(broker.port),
             "--hall", HALL, "--username", "hall", "--listen-port", "0", "--log-level", "ERROR"],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
        self.started = time.monotonic()
        line = self.proc.stdout.readline()
        m = re.search(r"http://[\d.]+:(\d+)", line)
        if not m:
            self.stop()
            raise AssertionError(f"the hall did not start: {line!r}")
        self.port = int(m.group(1))

    def tables(self) -> tuple[int, dict]:
        status, body = get(self.port, "/api/tables")
        assert status == 200, status
        return len(body), json.loads(body)

    def card(self, table: str) -> dict | None:
        return next((t for t in self.tables()[1]["tables"] if t["table"] == table), None)

    def memory(self) -> dict[str, int]:
        return proc_memory_kb(self.proc.pid)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.proc.stdout.close()


class HallPage(threading.Thread):
    """One page on the hall's stream: every message's name, size and arrival."""

    def __init__(self, port: int):
        super().__init__(daemon=True)
        self.port = port
        self.messages: list[tuple[str, int, float, dict]] = []
        self.lock = threading.Lock()
        self.stopped = False
        self.start()

    def run(self) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            conn.request("GET", "/api/stream")
            resp = conn.getresponse()
            name = None
            while not self.stopped:
                line = resp.readline()
                if not line:
                    return
                if line.startswith(b"event: "):
                    name = line[7:].strip().decode()
                elif line.startswith(b"data: ") and name:
                    with self.lock:
                        self.messages.append((name, len(line) - 7, time.monotonic(), json.loads(line[6:])))
        except (OSError, http.client.HTTPException):
            return
        finally:
            conn.close()

    def after(self, t: float) -> list[tuple[str, int, float, dict]]:
        with self.lock:
            return [m for m in self.messages if m[2] >= t]


def event_topic(fig: Figures, broker: Broker, daemon: DaemonProcess, player: Player) -> tuple[bool, dict]:
    """Item 6, MQTT: what a subscriber with a broker password gets on the event topic while cash is hidden."""
    w = _watch(broker, [f"companion/{HALL}/+/event"])
    try:
        player.post("/api/new_game", {"game": "imperial", "options": {"players": ["Ann", "Bob", "Cy"]}})
        hidden_at = player.post("/api/action", {"action": {"type": "hide_cash", "player": "Ann", "hidden": True}})["seq"]
        player.post("/api/action", {"action": {"type": "correct", "what": "cash", "player": "Ann", "value": HIDDEN_CASH,
                                               "reason": "recount"}})
        last = player.post("/api/action", {"action": {"type": "donate", "player": "Bob", "nation": "china",
                                                      "amount": 1}})["seq"]
        topic = f"companion/{HALL}/t1/event"
        wait(lambda: any(json.loads(p)["seq"] == last for p in w.on(topic)), 10, "the events on the broker")
        payloads = [p for p in w.on(topic) if json.loads(p)["seq"] >= hidden_at]
        leaked = [p for p in payloads if str(HIDDEN_CASH).encode() in p]
        keys = sorted({k for p in payloads for k in json.loads(p)})
        # shown again, then a gift: the whole event once more
        player.post("/api/action", {"action": {"type": "hide_cash", "player": "Ann", "hidden": False}})
        shown = player.post("/api/action", {"action": {"type": "donate", "player": "Bob", "nation": "china",
                                                       "amount": 1}})["seq"]
        whole = wait(lambda: next((json.loads(p) for p in w.on(topic) if json.loads(p)["seq"] == shown), None), 10,
                     "the event after the cash was shown")
    finally:
        w.close()
    ok = not leaked and keys == ["hall", "kind", "seq", "table"] and "body" in whole
    fig.say(f"{'ok ' if ok else 'BAD'} MQTT event topic while the cash is hidden: {len(payloads)} events, "
            f"{len(leaked)} holding 977, keys {keys}; after Show my cash the events carry their body again")
    return ok, {"events": len(payloads), "holding_977": len(leaked), "keys_while_hidden": keys,
                "body_once_shown": "body" in whole}


def _watch(broker: Broker, topics: list[str]) -> Watcher:
    """A subscriber logged in as the stranger."""
    return Watcher(broker.port, topics, username="guest", password=USERS["guest"])


def announces(fig: Figures, broker: Broker, daemon: DaemonProcess) -> tuple[bool, dict]:
    """Item 10: 300 `online` announces in about 3.3 s."""
    w = _watch(broker, ["homeassistant/#"])
    try:
        configs = wait(lambda: [t for t, _, retained in w.messages if retained and t.endswith("/config")], 10,
                       "the retained discovery configs")
        n_configs = len(set(configs))
        before = len(w.messages)
        ignored_before = mqtt_status(daemon.port).get("announces_ignored", 0)
        s = Stranger(broker.port, username="guest", password=USERS["guest"])
        try:
            flood = [("homeassistant/status", b"online")] * 300
            took = s.publish_all(flood, retain=False, pace_s=0.011)
        finally:
            s.close()
        time.sleep(3.0)      # what the table sends back comes within this
        w.sync()
        after = [t for t, _, retained in w.messages[before:] if t.endswith("/config")]
        ignored = mqtt_status(daemon.port).get("announces_ignored", 0) - ignored_before
    finally:
        w.close()
    republishes = len(after) / n_configs if n_configs else 0
    ok = republishes <= 1 and ignored >= 299
    fig.say(f"{'ok ' if ok else 'BAD'} 300 `online` announces in {took:.1f} s: {len(after)} discovery messages "
            f"({republishes:g} republish of the {n_configs} configs), {ignored} announces ignored "
            f"(the issue: 135 republishes, 1,890 messages)")
    return ok, {"announces": 300, "seconds": round(took, 2), "configs": n_configs, "discovery_messages": len(after),
                "republishes": republishes, "ignored": ignored}


def client_id_takeover(fig: Figures, broker: Broker, daemon: DaemonProcess) -> tuple[bool, dict]:
    """Item 11: 8 connections in ~11 s under companion-<hall>-<table>."""
    topic = f"companion/{HALL}/t1/availability"
    w = _watch(broker, [topic])
    states: list[str] = []
    stop = threading.Event()

    def follow():
        while not stop.is_set():
            states.append(mqtt_status(daemon.port).get("state", "?"))
            time.sleep(0.05)

    follower = threading.Thread(target=follow, daemon=True)
    try:
        w.sync()
        before = len(w.on(topic))
        follower.start()
        started = time.monotonic()
        connected = 0
        for _ in range(8):
            try:
                s = Stranger(broker.port, client_id=f"companion-{HALL}-t1", username="guest", password=USERS["guest"])
            except AssertionError:
                continue
            connected += 1
            time.sleep(1.3)
            s.close()
        took = time.monotonic() - started
        time.sleep(1.0)
        stop.set()
        follower.join(5)
        w.sync()
        wills = [p for p in w.on(topic)[before:] if p == b"offline"]
    finally:
        stop.set()
        w.close()
    flaps = sum(1 for a, b in zip(states, states[1:]) if a == "connected" and b != "connected")
    ok = connected == 8 and not wills and flaps == 0
    fig.say(f"{'ok ' if ok else 'BAD'} 8 connections under companion-{HALL}-t1 in {took:.1f} s ({connected} "
            f"accepted): {len(wills)} last wills published, {flaps} drops of the table's link in {len(states)} looks "
            f"(the issue: 8 last wills, the page showing the link down each time)")
    return ok, {"connections": connected, "seconds": round(took, 1), "last_wills": len(wills), "link_drops": flaps}


def retained_flood(fig: Figures, broker: Broker, daemon: DaemonProcess, player: Player, count: int,
                   kb: int) -> tuple[bool, dict]:
    """Item 12: the hall under `count` retained states of `kb` kB."""
    from companion.mqtt.hall import MAX_TABLES

    out: dict = {}
    hall = HallProcess(broker)
    try:
        wait(lambda: (hall.card("t1") or {}).get("online") is True, 20, "the good table on the hall")
        size0, _ = hall.tables()
        mem0 = hall.memory()
        rng = random.Random(34)
        flood = [(f"companion/{HALL}/flood{i:03d}/state", hostile_state("large", rng, kb * 1000)) for i in range(count)]
        total = sum(len(p) for _, p in flood)
        s = Stranger(broker.port, username="guest", password=USERS["guest"])
        flood_start = time.monotonic()
        try:
            took = s.publish_all(flood + [(f"companion/{HALL}/zz-last/state", b'{"name": "last"}')], retain=True,
                                 timeout=300)
        finally:
            s.close()
        absorbed = wait(lambda: hall.card("zz-last") is not None and time.monotonic(), 120, "the flood at the hall")
        size1, snap = hall.tables()
        mem1 = hall.memory()
        fig.say(f"flood: {count} retained states of {total / count / 1000:.1f} kB ({total / 1e6:.1f} MB) sent in "
                f"{took:.1f} s, all through the hall {absorbed - flood_start:.1f} s after the first")
        out["flood_through_the_hall_s"] = round(absorbed - flood_start, 2)
        # a good table's rolls: when its card shows at the hall, and what a page on the stream is sent for it
        page = HallPage(hall.port)
        wait(lambda: page.after(0), 10, "the page's first message")
        latencies, sent = [], []
        for i in range(10):
            t0 = time.monotonic()
            seq = player.post("/api/roll" if i % 2 == 0 else "/api/undo", {"value": 3} if i % 2 == 0 else {})["seq"]
            wait(lambda: (hall.card("t1") or {}).get("seq") == seq, 30, "the roll on the hall")
            latencies.append((time.monotonic() - t0) * 1000)
            msg = wait(lambda: next((m for m in page.after(t0) if any(c["table"] == "t1" and c["seq"] == seq
                                                                      for c in m[3].get("tables", []))), None),
                       30, "the roll on the page's stream")
            sent.append(msg[1])
        page.stopped = True
        out.update({
            "flood_states": count, "flood_bytes": total, "tables_bytes_before": size0, "tables_bytes_after": size1,
            "tables_kept": len(snap["tables"]), "dropped": snap["dropped"],
            "hall_memory_kb_before": mem0, "hall_memory_kb_after": mem1,
            "good_table_card_ms": {"median": round(statistics.median(latencies), 1), "max": round(max(latencies), 1)},
            "page_message_bytes_per_roll": {"median": statistics.median(sent), "max": max(sent)},
        })
        fig.say(f"/api/tables {size0:,} → {size1:,} bytes ({len(snap['tables'])} tables kept, dropped "
                f"{snap['dropped']}); hall memory VmRSS {mem0['VmRSS'] / 1024:.0f} → {mem1['VmRSS'] / 1024:.0f} MB "
                f"(VmHWM {mem1['VmHWM'] / 1024:.0f} MB); the good table's roll on the hall in median "
                f"{statistics.median(latencies):.0f} ms, max {max(latencies):.0f} ms; a page is sent "
                f"{statistics.median(sent):,.0f} bytes for it (the issue: 16.2 MB, 47 → 131 MB, 6-8 s or never)")
    finally:
        hall.stop()
    # the hall restarted into the flood: the broker replays every retained state to it at once
    hall = HallProcess(broker)
    try:
        back = wait(lambda: hall.card("t1") is not None and time.monotonic(), 60, "the good table after a restart")
        wait(lambda: hall.card("zz-last") is not None, 60, "the whole flood replayed")
        size2, snap2 = hall.tables()
        mem2 = hall.memory()
        out["restart"] = {"good_table_card_s": round(back - hall.started, 2), "tables_bytes": size2,
                          "hall_memory_kb": mem2, "tables_kept": len(snap2["tables"])}
        fig.say(f"the hall restarted into the flood: the good table's card there {back - hall.started:.2f} s after "
                f"the start; /api/tables {size2:,} bytes, VmRSS {mem2['VmRSS'] / 1024:.0f} MB "
                f"(VmHWM {mem2['VmHWM'] / 1024:.0f} MB)")
    finally:
        hall.stop()
    ok = out["tables_kept"] <= MAX_TABLES and out["tables_bytes_after"] < 500_000 and \
        out["good_table_card_ms"]["max"] < 2000 and out["page_message_bytes_per_roll"]["max"] < 10_000
    return ok, out


def run(fig: Figures, count: int = 400, kb: int = 40) -> bool:
    with tempfile.TemporaryDirectory(prefix="companion-hostile-broker-") as tmp:
        root = Path(tmp)
        broker = make_broker(root)
        daemon = None
        try:
            daemon = table_daemon(root, broker)
            wait(lambda: mqtt_status(daemon.port).get("state") == "connected", 20, "the table on the broker")
            player = Player(daemon.port)
            ok = True
            for key, part in (("mqtt_event_topic", lambda: event_topic(fig, broker, daemon, player)),
                              ("announce_flood", lambda: announces(fig, broker, daemon)),
                              ("client_id_takeover", lambda: client_id_takeover(fig, broker, daemon)),
                              ("retained_flood", lambda: retained_flood(fig, broker, daemon, player, count, kb))):
                if key == "retained_flood":
                    player.post("/api/new_game", {"game": "balance_duels", "options": {}})
                good, data = part()
                fig.put(key, data)
                ok &= good
            return ok
        finally:
            if daemon is not None:
                daemon.stop()
            broker.stop()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--flood", type=int, default=400, help="retained states in the flood (default 400)")
    p.add_argument("--flood-kb", type=int, default=40, help="kB of each (default 40)")
    p.add_argument("--json", help="also write the figures to this file")
    args = p.parse_args(argv)
    fig = Figures("hostile_broker", args.json)
    return fig.finish(run(fig, args.flood, args.flood_kb))


if __name__ == "__main__":
    sys.exit(main())
