"""Where the time between the hands leaving and a decision goes, stage by stage, on foreign sensor traces.

    .venv/bin/python bench/release_stages.py --seed 19400 --traces 4            # quiet (10 SPS) traces
    .venv/bin/python bench/release_stages.py --dir /tmp/fa/q1 --dir /tmp/fa/q2   # traces made already

For each change `companion analyze` decides on a foreign trace (../shared/foreign_arm/tracegen.py), timed from
the true release the trace's truth gives: the cells' last move (`t_off`, where the follower puts the hands off),
when it declared them off, its first look that had a measurement, and the decision. A diagnosis, not a gate: the
follower is watched by wrapping its own methods, and nothing of what it decides changes.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from companion.sensing.analysis import analyze, load_setup  # noqa: E402
from companion.sensing.follower.core import ArmFollower  # noqa: E402

TRACEGEN = REPO.parent / "shared" / "foreign_arm" / "tracegen.py"
STAGES = ("cells' last move", "hands declared off", "first look", "decision")


def watch() -> dict:
    """Wrap the follower's stage methods; returns what they record, per change keyed by its `t_off`."""
    seen: dict = {"off": {}, "look": {}, "decided": []}
    quiet, measure, decide = ArmFollower._maybe_quiet, ArmFollower._measure_after, ArmFollower._decide

    def _maybe_quiet(self, now):
        before = self.mode
        quiet(self, now)
        if before != "deciding" and self.mode == "deciding":
            seen["off"][self.t_off] = now

    def _measure_after(self, t, final, **kw):
        m, board = measure(self, t, final, **kw)
        if m is not None and self.mode == "deciding":
            seen["look"].setdefault(self.t_off, t)
        return m, board

    def _decide(self, t, verdict, m, board, pairs, **kw):
        seen["decided"].append((self.t_off, t))
        return decide(self, t, verdict, m, board, pairs, **kw)

    ArmFollower._maybe_quiet, ArmFollower._measure_after, ArmFollower._decide = _maybe_quiet, _measure_after, _decide
    return seen


def stages(d: Path, seen: dict) -> list[tuple[float, ...]]:
    """(release, then each stage's time after it) for every change decided on the trace in `d`."""
    for v in seen.values():
        v.clear()
    analyze(d / "trace.csv", load_setup(d / "config.toml"))
    releases = sorted(e["t"] for e in map(json.loads, (d / "truth.jsonl").read_text().splitlines())
                      if e["event"] in ("place", "remove", "move"))
    rows = []
    for t_off, t in seen["decided"]:
        # the cells report a release 0.3-0.5 s late: the last release before the hands were put off is its own
        before = [r for r in releases if t_off - 1.5 <= r <= t_off + 0.05]
        if before:
            r = before[-1]
            rows.append((r, t_off - r, seen["off"].get(t_off, float("nan")) - r,
                         seen["look"].get(t_off, float("nan")) - r, t - r))
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=19400, help="the first trace's seed")
    ap.add_argument("--traces", type=int, default=4)
    ap.add_argument("--profile", default="quiet", choices=("quiet", "normal", "noisy"))
    ap.add_argument("--dir", action="append", type=Path, help="a trace directory made already (repeatable)")
    ap.add_argument("--each", action="store_true", help="print every change, not only the medians")
    args = ap.parse_args()
    seen = watch()
    with tempfile.TemporaryDirectory() as tmp:
        dirs = args.dir or []
        for i in range(0 if args.dir else args.traces):
            seed = args.seed + i
            d = Path(tmp) / f"t{seed}"
            subprocess.run([sys.executable, str(TRACEGEN), "generate", "--out", str(d), "--profile", args.profile,
                            "--seed", str(seed), "--style", "duel" if seed % 2 else "mixed"],
                           check=True, capture_output=True)
            dirs.append(d)
        rows = []
        for d in dirs:
            got = stages(d, seen)
            rows.extend(got)
            if args.each:
                for r in got:
                    print(f"{d.name} {r[0]:9.2f} " + " ".join(f"{v:5.2f}" for v in r[1:]))
    print(f"{len(rows)} decided changes in {len(dirs)} traces, seconds after the true release: median (p95)")
    for k, name in enumerate(STAGES, 1):
        vals = sorted(r[k] for r in rows if r[k] == r[k])
        if vals:
            print(f"  {name:<20} {statistics.median(vals):.2f} ({vals[int(0.95 * (len(vals) - 1))]:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
