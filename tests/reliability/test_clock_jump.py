"""A wall-clock jump of hours (a Pi without RTC syncing NTP) changes nothing in game timing or ordering.

Ordering is by the store's sequence numbers; timing is by time.monotonic. The wall clock only
labels things for people (an event's `at`, a device's `since`, backup file names).
"""

import ast
import dataclasses
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

import companion
from companion.table import daemon as daemon_module
from companion.config import parse
from companion.table.daemon import Companion
from companion.store import open_store
from companion.web import create_app
from companion.web.auth import COOKIE

PACKAGE = Path(companion.__file__).parent
HOURS = timedelta(hours=1)


class WallClock:
    """A wall clock that people (and NTP) move by hours; time.monotonic is left alone."""

    def __init__(self):
        self.offset = timedelta(0)

    def jump(self, delta: timedelta) -> None:
        self.offset += delta

    def install(self, mocker) -> None:
        clock = self
        real = datetime

        class JumpingDatetime(real):
            @classmethod
            def now(cls, tz=None):
                return real.now(tz) + clock.offset

            @classmethod
            def utcnow(cls):
                return real.now(timezone.utc).replace(tzinfo=None) + clock.offset

        for module in ("companion.store.log", "companion.store.files", "companion.table.devices"):
            mocker.patch(f"{module}.datetime", JumpingDatetime)
        real_time = __import__("time").time
        mocker.patch("time.time", side_effect=lambda: real_time() + clock.offset.total_seconds())


@pytest.fixture
def wall(mocker):
    w = WallClock()
    w.install(mocker)
    return w


def make_companion(db, **web):
    data = {"simulate": {"enabled": True, "demo": True, "seed": 5}}
    if web:
        data["web"] = web
    cfg = dataclasses.replace(parse(data), store_path=db)
    return Companion(cfg)


def play(companion, steps, wall, jumps):
    """Roll and move through the host, jumping the wall clock between changes; returns the seqs made."""
    host = companion.host
    seqs = []
    for i in range(steps):
        wall.jump(jumps[i % len(jumps)])
        view = host.snapshot()["view"]
        if view["over"]:
            break
        if view["roll"] is None:
            seqs.append(host.act({"type": "roll", "value": i % 6 + 1}).seq)
        else:
            seqs.append(host.act({"type": "move", "move": view["moves"][0]["move"]}).seq)
    return seqs


def test_jumps_back_and_forth_change_neither_order_nor_the_game(tmp_path, wall):
    db = tmp_path / "events.sqlite3"
    c = make_companion(db)
    jumps = [5 * HOURS, -3 * HOURS, 26 * HOURS, -48 * HOURS, timedelta(seconds=-1)]
    seqs = play(c, 24, wall, jumps)
    events = c.store.game_events(c.host.game_id)
    stamps = [e.at for e in events]
    assert sorted(stamps) != stamps                    # the labels went backwards: the jumps really happened
    assert seqs == sorted(seqs) and [e.seq for e in events][1:] == seqs
    seen = c.host.snapshot()
    c.stop()
    again = make_companion(db)                         # a restart folds by seq, whatever the labels say
    assert again.host.snapshot()["view"] == seen["view"] and again.host.seq == seen["seq"]
    again.stop()


def test_the_demo_still_pauses_after_a_person_acts_when_the_wall_clock_leaps(tmp_path, wall):
    c = make_companion(tmp_path / "events.sqlite3")
    c.host.act({"type": "roll", "value": 3}, source="page")
    seq = c.host.seq
    wall.jump(6 * HOURS)                               # NTP sync right after a person's move
    for _ in range(5):
        c._demo_step()
    assert c.host.seq == seq                           # the demo waits its minute of monotonic time
    wall.jump(-30 * HOURS)
    c._demo_step()
    assert c.host.seq == seq
    c.stop()


def test_a_pin_session_survives_a_jump_past_its_lifetime(tmp_path, wall):
    c = make_companion(tmp_path / "events.sqlite3", pin="2468")
    client = create_app(c).test_client()
    csrf = client.post("/api/login", json={"pin": "2468"}).get_json()["csrf"]
    wall.jump(13 * HOURS)                              # longer than a session's 12 h, on the wall clock only
    r = client.post("/api/roll", json={"value": 4}, headers={"X-CSRF-Token": csrf})
    assert r.status_code == 200
    assert client.get_cookie(COOKIE) is not None
    c.stop()


def test_device_fault_age_is_monotonic(tmp_path, wall):
    c = make_companion(tmp_path / "events.sqlite3")
    cell = c.sensors.cells[0]
    cell.fault = "no answer"
    c.sensors.poll()
    wall.jump(-20 * HOURS)
    health = {d["name"]: d for d in c.live()["devices"]}[cell.name]
    assert health["ok"] is False and 0 <= health["for_s"] < 60
    c.stop()


def test_backups_are_chosen_by_sequence_not_by_their_wall_clock_names(tmp_path, wall):
    db = tmp_path / "events.sqlite3"
    store, _ = open_store(db)
    game = {"game": "balance_duels", "options": {}}
    for jump in (10 * HOURS, -40 * HOURS):             # the newer backup gets the older time in its name
        wall.jump(jump)
        g = store.append(None, "new_game", game, "test")
        store.append(g.game_id, "action", {"action": {"type": "roll", "value": 2}}, "test")
    wall.jump(-HOURS)
    store.append(None, "new_game", game, "test")
    newest = store.backups()[0]
    assert newest.last_seq == 4
    store.close()
    db.write_bytes(b"garbage" * 100)
    restored, notice = open_store(db)
    assert newest.path.name in notice and restored.last_seq() == 4
    restored.close()


WALL_CLOCK_CALLS = {("time", "time"), ("time", "time_ns"), ("time", "localtime"), ("time", "gmtime"),
                    ("time", "ctime"), ("datetime", "now"), ("datetime", "utcnow"), ("datetime", "today"),
                    ("date", "today")}
LABELS = {"isoformat", "strftime", "ctime"}


def wall_clock_uses(source: str):
    """Calls that read the wall clock: (line, call, timed) where timed means the reading is added,
    subtracted or compared in the same expression before being turned into a label."""
    tree = ast.parse(source)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and isinstance(node.func.value, ast.Name) and (node.func.value.id, node.func.attr) in WALL_CLOCK_CALLS:
            timed = False
            up = parents.get(node)
            while up is not None and not isinstance(up, ast.stmt):
                if isinstance(up, ast.Attribute) and up.attr in LABELS:
                    break
                if isinstance(up, ast.Compare) or (isinstance(up, ast.BinOp) and isinstance(up.op, (ast.Add, ast.Sub))):
                    timed = True
                    break
                up = parents.get(up)
            if isinstance(up, ast.AugAssign):
                timed = True
            yield node.lineno, f"{node.func.value.id}.{node.func.attr}", timed


def test_no_module_times_anything_by_the_wall_clock():
    """The wall clock may label things for people; no module adds, subtracts or compares its readings."""
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for line, call, timed in wall_clock_uses(path.read_text(encoding="utf-8")):
            if timed:
                offenders.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {call}()")
    assert offenders == [], "use companion.foundation.clock.Clock (time.monotonic) for timing:\n" + "\n".join(offenders)


def test_the_scanner_itself_tells_labels_from_timing():
    code = ("import time\nfrom datetime import datetime\n"
            "a = datetime.now(tz).isoformat()\n"
            "b = time.time() - start\n"
            "c = (given or datetime.now(tz)).replace(microsecond=0)\n"
            "d = 'at ' + datetime.now().isoformat()\n"
            "if datetime.now() > deadline:\n    pass\n"
            "e = time.monotonic() - start\n"
            "total += time.time()\n")
    found = sorted((line, timed) for line, _, timed in wall_clock_uses(code))
    assert found == [(3, False), (4, True), (5, False), (6, False), (7, True), (10, True)]


def test_the_daemon_clock_ignores_the_jump(wall):
    clock = daemon_module.Clock()
    before = clock.now()
    wall.jump(-72 * HOURS)
    after = clock.now()
    assert 0 <= after - before < 1.0
