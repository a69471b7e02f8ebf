"""The exports of a big store's plays: how long they take in-process, on the command line and over HTTP, and
whether the table still answers while one is made.

Run: .venv/bin/python bench/exports.py [--plays 5000] [--seed 1] [--keep DIR [--reuse]]

Makes up `--plays` plays (as bench/history.py does; `--keep DIR --reuse` takes a store made by either), builds
the history once with its cache beside the store (as the daemon leaves it), then times:

- in-process, from the built history: `PlayIndex.export` (every play described), the CSV, the BG Stats file;
- `companion plays --csv` and `--json --bgstats` (the store opened read-only, the history from the cache);
- over HTTP against `companion run` on that store: `GET /api/plays/export?format=csv` and `format=bgstats`, and
  `GET /api/state` while an export is being made (it must not wait for it).

Prints figures for docs/game-nights.md; not a test (timings vary on shared machines).
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
import threading
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import _common  # noqa: E402,F401  (the import path, PYTHONPATH for the daemon)

from companion.games import registry  # noqa: E402
from companion.history import exports  # noqa: E402
from companion.simulation import plays as sim  # noqa: E402
from companion.store import EventStore  # noqa: E402
from companion.table.daemon import history_index  # noqa: E402


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--plays", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", help="directory to keep the store in (default: a temporary one)")
    ap.add_argument("--reuse", action="store_true", help="with --keep: use the store made by an earlier run")
    args = ap.parse_args()
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="exports-bench-"))
    root.mkdir(parents=True, exist_ok=True)
    db = root / "companion.sqlite3"
    if not (args.reuse and db.exists()):
        for stale in root.glob("companion*"):
            stale.unlink()
    print(f"machine: {_common.machine()}; load average {os.getloadavg()[0]:.1f}")
    if args.reuse and db.exists():
        print(f"reusing {db} ({db.stat().st_size / 1e6:.1f} MB)")
    else:
        (made, spent) = timed(lambda: sim.make_plays(args.plays, seed=args.seed))
        sim.write_store(db, made, seed=args.seed)
        print(f"made {len(made)} plays in {spent:.1f} s; store {db.stat().st_size / 1e6:.1f} MB")

    model = sim.model_a()
    engines = registry.engines(model)
    store = EventStore(db)
    index = history_index(store, lambda: engines, model)
    _, spent = timed(index.warm)
    print(f"history built (from the cache where it held): {spent:.1f} s")
    got, spent = timed(lambda: index.export())
    print(f"PlayIndex.export: {len(got['plays'])} of {got['total']} plays described in {spent * 1000:.0f} ms")
    text, spent = timed(lambda: exports.csv_text(got["plays"], bom=True))
    print(f"CSV: {text.count(chr(10)) - 1} rows, {len(text.encode()) / 1e6:.1f} MB in {spent * 1000:.0f} ms")
    doc, spent = timed(lambda: json.dumps(exports.bgstats(got["plays"], store=got["store"], firsts=got["firsts"]),
                                          ensure_ascii=False))
    print(f"BG Stats file: {len(doc.encode()) / 1e6:.1f} MB in {spent * 1000:.0f} ms")
    index.close()
    store.close()

    for fmt in (["--csv"], ["--json", "--bgstats"]):
        out = root / "out"
        r, spent = timed(lambda: subprocess.run([sys.executable, "-m", "companion", "plays", *fmt, "--db", str(db),
                                                 "-o", str(out)], capture_output=True, text=True, timeout=600))
        assert r.returncode == 0, r.stderr
        print(f"companion plays {' '.join(fmt)}: {spent:.2f} s, {out.stat().st_size / 1e6:.1f} MB "
              f"({r.stderr.strip()})")
        out.unlink()

    cfg = root / "companion.toml"
    cfg.write_text('[simulate]\nenabled = true\ndemo = false\nseed = 5\n[web]\nhost = "127.0.0.1"\n')
    proc = subprocess.Popen([sys.executable, "-m", "companion", "run", "--config", str(cfg), "--port", "0",
                             "--db", str(db), "--log-level", "WARNING"], stdout=subprocess.PIPE, text=True)
    try:
        url = re.search(r"(http://127\.0\.0\.1:\d+)", proc.stdout.readline()).group(1)
        while True:
            try:
                with urllib.request.urlopen(url + "/api/plays?limit=1", timeout=10) as r:
                    if r.status == 200:
                        break
            except urllib.error.HTTPError as exc:
                if exc.code != 503:
                    raise
            time.sleep(0.05)

        def get(path: str) -> bytes:
            with urllib.request.urlopen(url + path, timeout=120) as r:
                return r.read()

        for fmt in ("csv", "bgstats"):
            spans = []
            for _ in range(3):
                body, spent = timed(lambda: get(f"/api/plays/export?format={fmt}"))
                spans.append(spent)
            print(f"GET /api/plays/export?format={fmt}: {len(body) / 1e6:.1f} MB, median {statistics.median(spans):.2f} s "
                  f"of 3")
        quiet = [timed(lambda: get("/api/state"))[1] * 1000 for _ in range(20)]
        busy: list[float] = []
        stop = threading.Event()

        def exporting():
            while not stop.is_set():
                get("/api/plays/export?format=bgstats")

        worker = threading.Thread(target=exporting)
        worker.start()
        try:
            time.sleep(0.2)
            for _ in range(20):
                busy.append(timed(lambda: get("/api/state"))[1] * 1000)
                time.sleep(0.05)
        finally:
            stop.set()
            worker.join()
        print(f"GET /api/state: median {statistics.median(quiet):.0f} ms idle; while exports run back to back median "
              f"{statistics.median(busy):.0f} ms, max {max(busy):.0f} ms")
        print(f"load average {os.getloadavg()[0]:.1f}")
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
