"""Players at a simulated daemon: the page (Flask's test client) and their hands on the simulated arm."""

from __future__ import annotations

import io
import random
import tarfile
import time

from companion.games import balance_duels as bd


class Players:
    """`wait(predicate, seconds)` lets the daemon run: real time (threads) or a fake clock driven by polls."""

    def __init__(self, companion, client, wait, seed=0):
        self.c = companion
        self.client = client
        self.wait = wait
        self.rng = random.Random(seed)

    def post(self, path, body):
        r = self.client.post(path, json=body)
        assert r.status_code == 200, (path, body, r.get_json())
        return r.get_json()

    def turn(self) -> str:
        """Roll from the page, move a pawn on the arm; answer the page's question, or put a missed turn right.
        Returns how the move reached the game: sensor, answer or page."""
        c = self.c
        assert self.wait(lambda: c.arm.follower.settled, 15), "the arm never settled"
        if c.host.state.over:
            c.table.set_pawns([], hand_s=0.8)
            self.pause(4.0)
            self.post("/api/new_game", {"game": "balance_duels", "options": {"players": 2}})
            return "new game"
        self.post("/api/roll", {"value": self.rng.randint(1, 6)})
        state = c.host.state
        assessed = bd.assess_all(c.model, state, state.roll)
        physical = [m for m, a in assessed if m.kind in ("place", "advance") and a.verdict == "safe"]
        if not physical:
            self.post("/api/action", {"action": {"type": "move", "move": assessed[0][0].to_dict()}})
            return "page"
        move = self.rng.choice(physical)
        seq = c.host.seq
        after = bd._moved(c.model, state, move)
        c.table.set_pawns([(p.holder, p.size) for p in after if p.holder is not None], at_holder=move.to_holder)
        self.wait(lambda: c.host.seq > seq or c.arm.question is not None, 12)
        question = c.arm.question
        if c.host.seq == seq and question is not None:
            want = move.to_dict()
            option = next((i for i, o in enumerate(question["options"])
                           if all(o["move"].get(k) == want.get(k) for k in ("kind", "from_holder", "to_holder"))), None)
            if option is not None:
                self.post("/api/sensing/answer", {"option": option})
                return "answer"
        if c.host.seq == seq:
            self.post("/api/action", {"action": {"type": "move", "move": move.to_dict()}})
            return "page"
        return "sensor"

    def pause(self, seconds):
        self.wait(lambda: False, seconds)


def real_time_wait(predicate, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def fake_time_wait(companion, step=0.02):
    """A wait that runs the daemon's sensor loop by hand on its fake clock: every device polled each step."""
    def wait(predicate, seconds):
        for _ in range(int(seconds / step)):
            if predicate():
                return True
            companion.clock.advance(step)
            companion.sensors.poll()
        return predicate()
    return wait


def unpack(data: bytes, into) -> dict:
    """The report's members by file name (also written under `into`)."""
    out = {}
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        for member in tar:
            name = member.name.split("/", 1)[1]
            out[name] = tar.extractfile(member).read()
            (into / name).write_bytes(out[name])
    return out
