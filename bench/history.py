"""Game nights on a big store: how long the history takes to build, to load from its cache, and to open.

Run: .venv/bin/python bench/history.py [--plays 5000] [--seed 1] [--keep DIR]

Makes up `--plays` plays over all five games (companion/simulation/plays.py: real engine actions, undos, one
in eight unfinished) as weekly nights in a fresh event store, then:

- builds the history from the events alone (no cache): every game folded and summarised;
- builds it again with the cache file, then once more from the cache (a restart);
- checks that the cached history and the fresh fold agree, play by play and in every stat;
- starts `companion run` on the store and times what the page's History view asks for when it opens
  (a page of 50 plays, the stats, the people, the current game's ratings) over HTTP, the daemon already warm:
  the first open after start, then twenty more; and an open right after a change to the current game.

Prints figures for README; not a test (timings vary on shared machines).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import _common  # noqa: E402,F401  (the import path, PYTHONPATH for the daemon)

from companion.games import balance_duels as bd  # noqa: E402
from companion.games import registry  # noqa: E402
from companion.history.index import PlayIndex, model_fingerprint  # noqa: E402
from companion.simulation import plays as sim  # noqa: E402
from companion.store import EventStore  # noqa: E402


def all_plays(idx):
    out, offset = [], 0
    while True:
        page = idx.plays(limit=200, offset=offset)
        out += page["plays"]
        offset += 200
        if offset >= page["total"]:
            return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--plays", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--opens", type=int, default=20)
    ap.add_argument("--keep", help="directory to keep the store in (default: a temporary one)")
    ap.add_argument("--reuse", action="store_true", help="with --keep: use the store made by an earlier run")
    args = ap.parse_args()
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="history-bench-"))
    root.mkdir(parents=True, exist_ok=True)
    db = root / "companion.sqlite3"
    for stale in root.glob("companion*"):
        if not (args.reuse and stale.name.startswith("companion.sqlite3")):
            stale.unlink()
    print(f"machine: {_common.machine()}; load average {os.getloadavg()[0]:.1f}")

    t = time.perf_counter()
    if args.reuse and db.exists():
        print(f"reusing {db} ({db.stat().st_size / 1e6:.1f} MB)")
    else:
        made = sim.make_plays(args.plays, seed=args.seed)
        sim.write_store(db, made, seed=args.seed)
        events = sum(len(p.steps) + 1 for p in made)
        print(f"made {len(made)} plays ({events} events, {sum(not p.over for p in made)} unfinished) in "
              f"{time.perf_counter() - t:.1f} s; store {db.stat().st_size / 1e6:.1f} MB")

    model = sim.model_a()
    engines = registry.engines(model)
    store = EventStore(db)

    def index(cache):
        return PlayIndex(store, lambda: engines, cache_path=cache, model_fingerprint=model_fingerprint(model),
                         torque=lambda s: bd.net_torque(model, s))

    fresh = index(None)
    t = time.perf_counter()
    fresh.warm()
    cold = time.perf_counter() - t
    n = fresh.plays(limit=1)["total"]
    print(f"history from the events alone (every game folded): {cold:.1f} s ({cold / n * 1000:.1f} ms a play)")

    cache = db.with_name("companion.plays.sqlite3")
    filling = index(cache)
    t = time.perf_counter()
    filling.warm()
    print(f"history built and cached: {time.perf_counter() - t:.1f} s; cache "
          f"{sum(f.stat().st_size for f in root.glob('companion.plays.sqlite3*')) / 1e6:.1f} MB")
    cached = index(cache)
    t = time.perf_counter()
    cached.warm()
    print(f"history from the cache (a restart): {(time.perf_counter() - t) * 1000:.0f} ms")

    t = time.perf_counter()
    a, b = all_plays(fresh), all_plays(cached)
    same_stats = fresh.stats(limit=200) == cached.stats(limit=200)
    same_ratings = all(fresh.ratings(g) == cached.ratings(g) for g in sim.GAMES)
    print(f"cache == fold: {a == b and same_stats and same_ratings} ({len(a)} plays, stats and ratings of every game; "
          f"{time.perf_counter() - t:.1f} s to compare)")
    store.close()

    # the page's open, over HTTP, against the daemon on this store
    cfg = root / "companion.toml"
    cfg.write_text('[simulate]\nenabled = true\ndemo = false\nseed = 5\n[web]\nhost = "127.0.0.1"\n')
    proc = subprocess.Popen([sys.executable, "-m", "companion", "run", "--config", str(cfg), "--port", "0",
                             "--db", str(db), "--log-level", "WARNING"], stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        url = re.search(r"(http://127\.0\.0\.1:\d+)", line).group(1)
        t = time.perf_counter()
        while True:
            try:
                with urllib.request.urlopen(url + "/api/plays?limit=1", timeout=10) as r:
                    if r.status == 200:
                        break
            except urllib.error.HTTPError as exc:
                if exc.code != 503:
                    raise
            time.sleep(0.05)
        print(f"daemon started; history ready {time.perf_counter() - t:.2f} s after its first answer")
        game = json.loads(urllib.request.urlopen(url + "/api/state").read())["game"]
        paths = ["/api/plays?limit=50", "/api/stats?limit=50", "/api/people?limit=20", f"/api/ratings?game={game}"]

        def page_open() -> float:
            t0 = time.perf_counter()
            for p in paths:
                with urllib.request.urlopen(url + p, timeout=30) as r:
                    r.read()
            return (time.perf_counter() - t0) * 1000

        first = page_open()
        times = [page_open() for _ in range(args.opens)]
        print(f"History view opening ({', '.join(paths)}): first {first:.0f} ms, then median "
              f"{statistics.median(times):.0f} ms, max {max(times):.0f} ms over {args.opens}")
        # a change to the current game, then the view again: that game is folded anew, the rest from memory
        req = urllib.request.Request(url + "/api/dice", data=b'{"n": 1}', method="POST",
                                     headers={"Content-Type": "application/json"})
        urllib.request.urlopen(req).read()
        body = json.dumps({"action": {"type": "roll", "value": 3}} if game == "balance_duels" else
                          {"action": {"type": "end_turn"}}).encode()
        req = urllib.request.Request(url + "/api/action", data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
        try:
            urllib.request.urlopen(req).read()
        except urllib.error.HTTPError:
            pass
        after = page_open()
        print(f"History view right after a change to the current game: {after:.0f} ms")
        print(f"load average {os.getloadavg()[0]:.1f}")
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
