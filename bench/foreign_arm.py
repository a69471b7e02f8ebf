"""The companion on an arm it did not build: whole games and sensor traces from ../shared/foreign_arm/.

    .venv/bin/python bench/foreign_arm.py                 # 24 games and 12 traces, fresh seeds (2-3 minutes on 2 cores)
    .venv/bin/python bench/foreign_arm.py --games 6 --traces 3 --seed 100

The foreign arm's generators were written apart from the companion (its physics, hands, cells and
players' timing); this bench only runs them, as their README says, and judges the companion with
their own scorers: `gamegen.py` writes a whole game (trace, config, the players' inputs) that
`companion replay` plays, `tracegen.py` writes a sensor trace that `companion analyze` reads. Every
profile (quiet 10 SPS, normal and noisy 80 SPS) with 2 and 4 players, seeds counted up from --seed.

Printed: per profile and players, the turns followed, wrong and missed moves, questions, tips
missed and the latency; the worst game of each; the sensor-level score per profile; and the
confidence's calibration — of the moves the sensors applied unasked, how many were right at
each stated confidence (a game is walked turn by turn up to its first wrong or missing move,
as the scorer does). The generators' hidden parameters (meta.json) are never read by the
companion; this bench prints each worst game's swing only to say which arms are hard.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from companion.simulation.evaluation import calibration_lines, percentile  # noqa: E402
FOREIGN = REPO.parent / "shared" / "foreign_arm"
PYTHON = sys.executable
COMPANION = str(Path(sys.executable).with_name("companion"))
GAME_PROFILES = ("quiet", "normal", "noisy")


def _run(cmd: list[str], out: Path | None = None) -> subprocess.CompletedProcess:
    if out is None:
        return subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, timeout=3600)
    with out.open("w") as f:
        return subprocess.run(cmd, stdout=f, stderr=subprocess.PIPE, text=True, cwd=REPO, timeout=3600)


def _moves(out_lines: list[dict]) -> list[dict]:
    """The game's moves as the replay left them (an undo takes the last action back)."""
    actions: list[dict] = []
    for ln in out_lines:
        if ln.get("kind") == "new_game":
            actions = []
        elif ln.get("kind") == "action":
            actions.append(ln)
        elif ln.get("kind") == "undo" and actions:
            actions.pop()
    return [a for a in actions if a["body"].get("action", {}).get("type") == "move"]


def _same(a: dict, b: dict) -> bool:
    keys = ("kind", "seat", "size", "from_holder", "to_holder")
    return all(a.get(k) == b.get(k) for k in keys)


def calibration_points(game_dir: Path, out_lines: list[dict]) -> list[tuple[float, bool]]:
    """(stated confidence, right) for each move the sensors applied unasked, up to the game's first bad turn."""
    truth = json.loads((game_dir / "truth.json").read_text())["turns"]
    points = []
    for turn, line in zip(truth, _moves(out_lines)):
        move = line["body"]["action"]["move"]
        right = _same(move, turn["move"])
        if line.get("source") == "sensor" and "confidence" in line:
            points.append((line["confidence"], right))
        if not right:
            break
    return points


def one_game(profile: str, players: int, seed: int, work: Path) -> dict:
    d = work / f"g-{profile}-{players}p-{seed}"
    r = _run([PYTHON, str(FOREIGN / "gamegen.py"), "generate", "--out", str(d), "--profile", profile,
              "--seed", str(seed), "--players", str(players)])
    if r.returncode != 0:
        raise SystemExit(f"gamegen failed: {r.stderr.strip()}")
    out = d / "out.jsonl"
    started = time.monotonic()
    r = _run([COMPANION, "replay", str(d / "trace.csv"), "--config", str(d / "config.toml"),
              "--inputs", str(d / "inputs.jsonl")], out)
    took = time.monotonic() - started
    if r.returncode != 0:
        raise SystemExit(f"companion replay failed on {d}: {r.stderr.strip()}")
    score = json.loads(_run([PYTHON, str(FOREIGN / "gamegen.py"), "score", "--dir", str(d), "--replay",
                             str(out)]).stdout)
    lines = [json.loads(ln) for ln in out.read_text().splitlines() if ln.strip()]
    truth = json.loads((d / "truth.json").read_text())
    # each turn's latency as the scorer reckons it (its summary gives the median only; the issue asks the p95 too)
    latencies = json.loads(_run([PYTHON, "-c", "import json, sys; sys.path.insert(0, sys.argv[1]); import gamegen; "
                                 "print(json.dumps(gamegen.score_one(sys.argv[2], sys.argv[3])['latency']))",
                                 str(FOREIGN), str(d), str(out)]).stdout)
    return {"profile": profile, "players": players, "seed": seed, "score": score, "replay_s": round(took, 1),
            "latencies": latencies,
            "calibration": calibration_points(d, lines),
            "arm": {"fn_hz": round(truth.get("fn_hz", math.nan), 2), "zeta": round(truth.get("zeta", math.nan), 3)}}


def one_trace(profile: str, seed: int, work: Path) -> dict:
    d = work / f"t-{profile}-{seed}"
    style = "duel" if seed % 2 else "mixed"
    r = _run([PYTHON, str(FOREIGN / "tracegen.py"), "generate", "--out", str(d), "--profile", profile,
              "--seed", str(seed), "--style", style])
    if r.returncode != 0:
        raise SystemExit(f"tracegen failed: {r.stderr.strip()}")
    pred = d / "pred.jsonl"
    r = _run([COMPANION, "analyze", str(d / "trace.csv"), "--config", str(d / "config.toml")], pred)
    if r.returncode != 0:
        raise SystemExit(f"companion analyze failed on {d}: {r.stderr.strip()}")
    return {"profile": profile, "seed": seed, "truth": str(d / "truth.jsonl"), "pred": str(pred)}


def _pct(a: int, b: int) -> str:
    return f"{100.0 * a / b:.1f} %" if b else "—"


def _latencies(group: list[dict]) -> list[float]:
    """Every turn's latency over the group's games: the median and p95 are both of these, as gamegen's summary
    reckons its median (a median of each game's median leans on how many turns each game had)."""
    return [x for g in group for x in g["latencies"]]


def _p95(group: list[dict]) -> str:
    """The 95th percentile of every turn's latency over the group's games (as evaluation.percentile reckons it)."""
    lat = _latencies(group)
    return f"{percentile(lat, 0.95):.2f}" if lat else "—"


def report_games(games: list[dict]) -> bool:
    print("\nWhole games (gamegen.py score; a game stops at its first wrong or missing move)")
    print(f"{'profile':8} {'players':>7} {'games':>5} {'turns':>6} {'followed':>9} {'wrong':>5} {'missed':>6} "
          f"{'asked':>7} {'tips missed':>11} {'latency med':>11} {'p95':>6}")
    ok = True
    for profile in GAME_PROFILES:
        for players in (2, 4):
            group = [g for g in games if g["profile"] == profile and g["players"] == players]
            if not group:
                continue
            s = [g["score"] for g in group]
            turns, followed = sum(x["turns"] for x in s), sum(x["followed"] for x in s)
            physical, asked = sum(x["physical"] for x in s), sum(x["asked"] for x in s)
            wrong, missed = sum(x["wrong"] for x in s), sum(x["missed"] for x in s)
            tips, tips_missed = sum(x["tips"] for x in s), sum(x["tips_missed"] for x in s)
            lat = _latencies(group)
            median = statistics.median(lat) if lat else None
            print(f"{profile:8} {players:>7} {len(group):>5} {turns:>6} {_pct(followed, turns):>9} {wrong:>5} "
                  f"{missed:>6} {_pct(asked, physical):>7} {tips_missed:>5} of {tips:<3} "
                  f"{(f'{median:.2f} s' if lat else '—'):>11} {_p95(group):>6}")
            worst = min(group, key=lambda g: (g["score"]["followed_pct"], -g["score"]["wrong"]))
            print(f"{'':8}   worst: seed {worst['seed']}, followed {worst['score']['followed_pct']} %, "
                  f"arm {worst['arm']['fn_hz']} Hz ζ {worst['arm']['zeta']}; first bad: "
                  f"{json.dumps(worst['score'].get('first_bad', [])[:1])[:200]}")
            # the goals: questions on at most 10 % of physical turns at 10 SPS and 5 % at 80 SPS, the median
            # decision within a second of the hands leaving
            most_asked = 0.10 if profile == "quiet" else 0.05
            slow = median is not None and median > 1.0
            ok = (ok and wrong == 0 and missed == 0 and followed == turns and tips_missed == 0
                  and asked <= most_asked * physical and not slow)
    whole = sum(g["score"]["followed"] == g["score"]["turns"] for g in games)
    turns = sum(g["score"]["turns"] for g in games)
    print("goals: every turn followed, none wrong or missed, no tip missed, asked ≤ 10 % (quiet, 10 SPS) or ≤ 5 % "
          "(80 SPS), median latency ≤ 1.0 s")
    print(f"games followed to the end: {whole} of {len(games)}; turns followed "
          f"{_pct(sum(g['score']['followed'] for g in games), turns)} of {turns}")
    return ok


def report_calibration(games: list[dict]) -> bool:
    points = [p for g in games for p in g["calibration"]]
    print("\nConfidence's calibration (moves the sensors applied unasked, until each game's first bad turn)")
    lines, ok = calibration_lines(points)
    print("\n".join(lines))
    return ok


def report_traces(traces: list[dict]) -> bool:
    print("\nSensor traces (tracegen.py score)")
    ok = True
    for profile in GAME_PROFILES:
        group = [t for t in traces if t["profile"] == profile]
        if not group:
            continue
        cmd = [PYTHON, str(FOREIGN / "tracegen.py"), "score", "--gate", "--line", profile]
        for t in group:
            cmd += ["--truth", t["truth"], "--pred", t["pred"]]
        r = _run(cmd)
        print(r.stdout.strip())
        ok = ok and r.returncode == 0
    return ok


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=24, help="whole games, spread over the profiles and 2/4 players")
    ap.add_argument("--traces", type=int, default=12, help="sensor traces, spread over the profiles")
    ap.add_argument("--seed", type=int, default=int(time.time()) % 100000, help="the first seed (default: fresh)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--keep", type=Path, help="keep the generated files in this folder")
    args = ap.parse_args(argv)
    for name, value, most in (("--games", args.games, 600), ("--traces", args.traces, 300), ("--jobs", args.jobs, 16)):
        if not 0 <= value <= most:
            ap.error(f"{name} must be from 0 to {most}")
    if not (FOREIGN / "gamegen.py").exists():
        print(f"no foreign arm at {FOREIGN}", file=sys.stderr)
        return 2
    print(f"foreign arm: {args.games} games, {args.traces} traces from seed {args.seed}", flush=True)
    kinds = [(p, n) for p in GAME_PROFILES for n in (2, 4)]
    work_ctx = tempfile.TemporaryDirectory(prefix="foreign-") if args.keep is None else None
    work = Path(work_ctx.name) if work_ctx is not None else args.keep
    work.mkdir(parents=True, exist_ok=True)
    try:
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            games = list(pool.map(lambda i: one_game(*kinds[i % len(kinds)], args.seed + i, work), range(args.games)))
            traces = list(pool.map(lambda i: one_trace(GAME_PROFILES[i % 3], args.seed + i, work), range(args.traces)))
        ok = report_games(games)
        ok = report_calibration(games) and ok
        ok = report_traces(traces) and ok
        print(f"\nall goals met: {ok}")
        return 0 if ok else 1
    finally:
        if work_ctx is not None:
            work_ctx.cleanup()


if __name__ == "__main__":
    sys.exit(main())
