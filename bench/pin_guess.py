"""How many PIN guesses an hour parallel attackers get checked, from one address and from many.

The daemon's app is served by waitress in this process (as `companion run` serves it), on loopback; attackers
are threads sending wrong PINs to POST /api/login as fast as they are answered, each source address one of
127.x.y.z (Linux routes the whole of 127/8 to loopback, so every guess can come from an address of its own).

1. 40 wrong PINs sent at once from one address, in real time: how many are checked (the issue's experiment),
   and whether the right PIN from another address then gets in.
2. and 3. parallel attackers for --seconds, from one address and from a new address for every guess. The wait
   between guesses is hours long, so the PIN guard's clock runs --speed times faster than real time (only its
   clock: the requests, the hash and the server are real): guesses checked per simulated hour are the figure.
   At the end the right PIN is tried from a tablet that logged in before (it must get in) and from a new one.

    bench/pin_guess.py [--seconds 60] [--speed 1440] [--attackers 40] [--json FILE]
"""

from __future__ import annotations

import argparse
import dataclasses
import http.client
import json
import logging
import sys
import tempfile
import threading
import time
from pathlib import Path

from _common import Figures

from companion.foundation.clock import Clock
from companion.config import parse
from companion.table.daemon import Companion
from companion.foundation.pin import hash_pin
from companion.web import create_app, serving
from companion.web.auth import DEVICE_COOKIE

PIN = "9999"        # guesses count up from 0000 and never reach it
OWNER = "127.0.0.7"


class FastClock(Clock):
    """Monotonic time running `speed` times faster, for the PIN guard alone."""

    def __init__(self, speed: float):
        self.speed = speed
        self.t0 = time.monotonic()

    def now(self) -> float:
        return self.t0 + (time.monotonic() - self.t0) * self.speed


class Table:
    """A Companion with a PIN, its app on a waitress of its own."""

    def __init__(self, directory: Path, speed: float = 1.0):
        cfg = parse({"simulate": {"enabled": True, "demo": False}, "web": {"pin": hash_pin(PIN)}})
        self.companion = Companion(dataclasses.replace(cfg, store_path=directory / "events.sqlite3"))
        app = create_app(self.companion)
        self.guard = app.extensions["pin_guard"]
        self.clock = FastClock(speed)
        self.guard.clock = self.clock
        self.server = serving.create(app, host="127.0.0.1", port=0, threads=cfg.max_streams + 8)
        self.port = int(self.server.effective_port)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        try:
            self.server.run()
        except OSError:
            pass    # its sockets closed under it by close(): the way a waitress in a thread stops

    def close(self) -> None:
        logging.getLogger("waitress").setLevel(logging.CRITICAL)    # the channels closed under a request say so
        self.server.close()
        self.thread.join(timeout=5)
        self.companion.stop()


def login(port: int, pin: str, source: str, device: str | None = None,
          conn: http.client.HTTPConnection | None = None) -> tuple[int, str | None]:
    """(status, device cookie set) of one POST /api/login; status 0 when the connection was refused or dropped."""
    own = conn is None
    conn = conn or http.client.HTTPConnection("127.0.0.1", port, timeout=30, source_address=(source, 0))
    headers = {"Content-Type": "application/json"}
    if device:
        headers["Cookie"] = f"{DEVICE_COOKIE}={device}"
    try:
        conn.request("POST", "/api/login", body=json.dumps({"pin": pin}), headers=headers)
        resp = conn.getresponse()
        resp.read()
        cookies = [v for k, v in resp.getheaders() if k.lower() == "set-cookie" and v.startswith(DEVICE_COOKIE + "=")]
        return resp.status, cookies[0].split(";")[0].split("=", 1)[1] if cookies else None
    except OSError:
        conn.close()
        return 0, None
    finally:
        if own:
            conn.close()


class Attack:
    """Attackers guessing wrong PINs as fast as they are answered, until stopped."""

    def __init__(self, port: int, attackers: int, many_addresses: bool, clock: Clock):
        self.port, self.many, self.clock = port, many_addresses, clock
        self.lock = threading.Lock()
        self.n = 0
        self.counts: dict[int, int] = {}
        self.checked_at: list[float] = []     # the guard's clock when each wrong PIN was answered 403
        self.stopping = threading.Event()
        self.threads = [threading.Thread(target=self._run, daemon=True) for _ in range(attackers)]

    def _next(self) -> int:
        with self.lock:
            self.n += 1
            return self.n

    def _run(self) -> None:
        conn = None
        while not self.stopping.is_set():
            n = self._next()
            if self.many:
                # 127.1.0.1, 127.1.0.2, ...: a new address, and so a new connection, for every guess
                status, _ = login(self.port, f"{n % 9999:04d}", f"127.{1 + n // 65536 % 250}.{n // 256 % 256}.{n % 256}")
            else:
                if conn is None:
                    conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30,
                                                      source_address=("127.0.0.66", 0))
                status, _ = login(self.port, f"{n % 9999:04d}", "127.0.0.66", conn=conn)
                if status == 0:
                    conn = None
                    time.sleep(0.05)
            with self.lock:
                self.counts[status] = self.counts.get(status, 0) + 1
                if status == 403:
                    self.checked_at.append(self.clock.now())
        if conn is not None:
            conn.close()

    def run_for(self, seconds: float) -> dict[int, int]:
        for t in self.threads:
            t.start()
        time.sleep(seconds)
        self.stopping.set()
        for t in self.threads:
            t.join(timeout=60)
        return dict(self.counts)


def at_once(directory: Path, fig: Figures, attackers: int) -> bool:
    table = Table(directory)
    try:
        start = threading.Barrier(attackers)
        results: list[int] = []

        def guess(n: int) -> None:
            start.wait()
            results.append(login(table.port, f"{n:04d}", "127.0.0.66")[0])

        threads = [threading.Thread(target=guess, args=(n,)) for n in range(attackers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        owner, _ = login(table.port, PIN, OWNER)
    finally:
        table.close()
    checked = results.count(403)
    fig.say(f"{attackers} wrong PINs at once from one address: {checked} checked, {results.count(429)} told to wait "
            f"(429), {results.count(0)} connections refused; the right PIN from another address then: {owner}")
    fig.put("at_once", {"sent": attackers, "checked": checked, "held_back": results.count(429),
                        "refused_connections": results.count(0), "right_pin_elsewhere": owner})
    return owner == 200 and checked <= 3


def sustained(directory: Path, fig: Figures, attackers: int, seconds: float, speed: float, many: bool) -> bool:
    table = Table(directory, speed)
    label = "a new address for every guess" if many else "one address"
    try:
        _, device = login(table.port, PIN, OWNER)      # the owner's tablet, logged in before the attack
        t0 = table.clock.now()
        attack = Attack(table.port, attackers, many, table.clock)
        counts = attack.run_for(seconds)
        hours = (table.clock.now() - t0) / 3600
        known, _ = login(table.port, PIN, "127.0.0.8", device=device)
        new, _ = login(table.port, PIN, "127.0.0.9")
    finally:
        table.close()
    checked = counts.get(403, 0)
    per_hour = checked / hours
    # the first hours hold the free tries and the table's burst; the pace after them is what goes on for a month
    steady_hours = hours / 2
    steady = sum(1 for t in attack.checked_at if t - t0 >= hours * 3600 - steady_hours * 3600) / steady_hours
    days = (hours + max(0, 10_000 - checked) / steady) / 24 if steady else float("inf")
    sent = sum(counts.values())
    fig.say(f"{attackers} parallel attackers from {label}: {sent} guesses sent in {seconds:g} s ({hours:.1f} simulated "
            f"hours), {checked} checked = {per_hour:.1f} guesses/hour overall, {steady:.1f}/hour over the second half; "
            f"all 10,000 four-digit PINs would take {days:,.0f} days. Right PIN afterwards: {known} from the owner's "
            f"tablet, {new} from a new tablet")
    fig.put("one_address" if not many else "many_addresses",
            {"attackers": attackers, "sent": sent, "statuses": counts, "simulated_hours": round(hours, 2),
             "checked": checked, "guesses_per_hour": round(per_hour, 2), "steady_guesses_per_hour": round(steady, 2),
             "days_for_10000": round(days, 1), "owner_tablet": known, "new_tablet": new})
    return known == 200 and days >= 30 and counts.get(200, 0) == 0 and counts.get(500, 0) == 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seconds", type=float, default=60.0, help="real seconds of each sustained attack")
    p.add_argument("--speed", type=float, default=1440.0, help="how much faster the PIN guard's clock runs")
    p.add_argument("--attackers", type=int, default=40)
    p.add_argument("--json")
    args = p.parse_args(argv)
    for name, value in (("--seconds", args.seconds), ("--speed", args.speed), ("--attackers", args.attackers)):
        if not value > 0:
            p.error(f"{name} must be more than 0, not {value}")
    logging.getLogger("waitress.queue").setLevel(logging.ERROR)     # as `companion run` does
    fig = Figures("pin_guess", args.json)
    with tempfile.TemporaryDirectory(prefix="pin-guess-") as tmp:
        ok = True
        for i, step in enumerate((
                lambda d: at_once(d, fig, args.attackers),
                lambda d: sustained(d, fig, args.attackers, args.seconds, args.speed, many=False),
                lambda d: sustained(d, fig, args.attackers, args.seconds, args.speed, many=True))):
            d = Path(tmp) / str(i)
            d.mkdir()
            ok = step(d) and ok
    return fig.finish(ok)


if __name__ == "__main__":
    sys.exit(main())
