"""Where the companion's confidence between look-alike moves comes from, on both worlds; and what judging costs.

    .venv/bin/python bench/look_alikes.py                          # 12 foreign games, 8 sessions of ours (~4 min)
    .venv/bin/python bench/look_alikes.py --foreign 6 --ours 4 --seed 33400

Whole games are replayed as the daemon runs them (`companion replay`'s code, in this process, on one core): the
foreign arm's from its own gamegen.py (../shared/foreign_arm/: quiet, normal and noisy, 2 and 4 players), ours from
the game bench's random arms (bench/sensing_accuracy.py's draws, every noise level, 2 and 4 players). Each decided
change is matched to the turn whose hands left within a second of it, and is right when it does to the arm what the
turn did (a beat of like pawns read as the mover's removal is: the game takes the legal move of the two).

Printed per world:
- Look-alikes: of the decided changes whose true move was among the accounts ranked, those whose weight and rest
  torque barely told the truth from the best wrong account (within 3 nats, the wrong one not ruled out), and what
  each source of evidence said between the two (inference.evidence_of; evaluation.evidence_lines): per bin of how
  surely it spoke, how often it pointed the wrong way against how often its odds allow. This says which readings
  the confidence between look-alikes rests on, and whether each is as sure as it says: fewer wrong than promised is
  an underconfident source, more an overconfident one. (A source's own odds are checked only where they are
  modest: a bin whose odds promise 0.1 wrong shows nothing either way in one run.)
- The band the game applies short of 0.999 (0.99-0.999): how many, how many right, and the source that set each
  apart most.
- Held touches: per profile, the share of touches that held the arm at the board which each game's hands had learned
  by its end are placed toward the pivot (touches.HandSpread.clipped), and how many held touches it rests on.
- Judging's cost: per decided change, the CPU time from the hands leaving to the decision, its latency on the
  table's clock, and the latency a Pi about 8× slower would give — the later of the two, since a follower that
  needs more time than the table gives it falls behind and decides once it has caught up (moves and placements
  apart from the removals that clear the arm, which the game does not wait for). The replay-speed figures of
  bench/game_following.py average over whole games; this is the burst each decision costs.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from companion.games.balance_model import load_model  # noqa: E402
from companion.recorder.inputs import read_inputs  # noqa: E402
from companion.replay.session import Replay, ReplaySetup, load_setup  # noqa: E402
from companion.sensing.inference import (EVIDENCE_SOURCES, _net, evidence_of, inertia_of,  # noqa: E402
                                         touches_for)
from companion.sensing.touches import HELD_SHARE, HandSpread, TouchScale  # noqa: E402
from companion.sensing.trace import read_trace  # noqa: E402
from companion.simulation.evaluation import evidence_lines, percentile  # noqa: E402
from companion.simulation.games import play_session  # noqa: E402
from sensing_accuracy import LEVELS, session_arm, session_calibration, session_cells  # noqa: E402  (bench/ is here)

FOREIGN = REPO.parent / "shared" / "foreign_arm"
FOREIGN_PROFILES = ("quiet", "normal", "noisy")
PI_SLOWER = 8.0          # a Raspberry Pi against this machine, about (the issue's own figure)
MATCH_S = 1.0            # a change is a turn's when its hands left within this of the turn's
LOOK_ALIKE_NATS = 3.0    # the weight and rest torque set the two accounts less than this apart
BAND = (0.99, 0.999)
SOURCES = (*EVIDENCE_SOURCES, "prior")
GESTURE_Z = 2.0          # two independent touches each as sure as said both miss this far the same way 0.1 % of the time
BOARD_SHARE = 0.3        # a touch this much of whose span the arm spent on the board is counted as held there
SHOW_NATS = 3.0          # --show: the look-alikes a source set this far apart the wrong way


def _effect(move_or_candidate) -> tuple:
    """What a rules-engine move dict or a sensing Candidate does to the arm: ((holder, size) taken off, put on), what
    cancels taken out. Accounts that differ only in which like pawn went where — a beat of like pawns and the mover's
    removal, "W2 → W3 beating W3" and "W2 → W5 beating W5" — do the same, and the game takes the legal one of them."""
    if isinstance(move_or_candidate, dict):
        m = move_or_candidate
        removed = [(m["from_holder"], m["size"])] if m.get("from_holder") else []
        if m.get("beats"):
            removed.append((m["beats"], m["beaten_size"]))
        return _net(removed, [(m["to_holder"], m["size"])])
    return (tuple(move_or_candidate.removed), tuple(move_or_candidate.added))


def judged(setup: ReplaySetup, rows, inputs) -> tuple[list[tuple], list[tuple[float, float]], dict]:
    """Replay and return (change, CPU seconds spent judging it) per decided change — the follower's time from the
    hands leaving to its decision, sample by sample as the daemon gives them — when the tilt switch said the arm
    was on the board: (from, to) spans, and what the hands had learned by the end (the share of held touches placed
    toward the pivot, and how many held touches it was learned from)."""
    rp = Replay(setup, inputs)
    out: list[tuple] = []
    board: list[tuple[float, float]] = []
    since = None
    cpu, last = 0.0, None
    clock = time.perf_counter
    for row in rows:
        if row[1] == "tilt":
            if row[2] and since is None:
                since = row[0]
            elif not row[2] and since is not None:
                board.append((since, row[0]))
                since = None
        f = getattr(rp, "arm", None) and rp.arm.follower
        judging = f is not None and f.mode == "deciding"
        start = clock()
        rp.feed((row,))
        took = clock() - start
        f = rp.arm.follower
        newest = f.changes[-1] if f.changes else None
        if newest is not None and newest is not last:
            out.append((newest, cpu + took))
            cpu, last = 0.0, newest
        elif judging or f.mode == "deciding":
            cpu += took
        else:
            cpu = 0.0
    rp.finish()
    hands = rp.arm.follower.hands
    learned = {"clipped": hands.clipped, "held": sum(r[3] >= HELD_SHARE for r in hands.touches),
               "touches": len(hands.touches)}
    return out, board, learned


def _parts(ch, s) -> dict[str, float]:
    """What each source said of account `s` of change `ch` (log-likelihoods, nats), its prior apart."""
    pawns = ch.beliefs_before[s.hypothesis][1] if s.hypothesis < len(ch.beliefs_before) else ch.before
    parts = evidence_of(s.candidate, ch.measurement, s.shift, inertia_of(ch.geometry, pawns))
    parts["prior"] = s.log_likelihood - sum(parts.values())
    return parts


def _on_board(start: float, end: float, board: list[tuple[float, float]]) -> float:
    """The share of [start, end] the arm spent on the board."""
    return sum(max(0.0, min(end, b) - max(start, a)) for a, b in board) / max(end - start, 1e-6)


def _gesture(ch, truth, board) -> dict | None:
    """How a two-touch move's touches missed its true holders, each in the near σ the hands were judged with then
    (touches.loglik: the located σ scaled as learned, and the hands' spread), and the share of each on the board."""
    m, c = ch.measurement, truth.candidate
    touches = touches_for(c, m)
    if len(c.touch_x) != 2 or len(touches) != 2 or any(t.x is None or not math.isfinite(t.sigma) for t in touches):
        return None
    z = []
    for t, x in zip(touches, c.touch_x):
        scale = m.touch_scale.of(t) if isinstance(m.touch_scale, TouchScale) else m.touch_scale
        z.append((t.x - m.touch_gain * x) / math.hypot(scale * t.sigma, m.finger_mm))
    # signed outward (+: located farther from the pivot than its holder)
    out = [v if x >= 0 else -v for v, x in zip(z, c.touch_x)]
    return {"z": z, "outward": out, "board": [_on_board(t.start, t.end, board) for t in touches]}


def scored(world: str, name: str, profile: str, judging: tuple, turns: list[dict]) -> list[dict]:
    """Per decided change matched to a turn: the truth against the best wrong account, source by source."""
    decided, board, learned = judging
    out = []
    free = list(turns)
    for ch, cpu in decided:
        near = [tr for tr in free if abs(tr["t"] - ch.hands_off_t) <= MATCH_S]
        rec = {"world": world, "game": name, "profile": profile, "t": round(ch.t, 2), "cpu": cpu, "latency": ch.t - ch.hands_off_t,
               "kind": ch.best.kind if ch.best else None, "confidence": ch.confidence, "learned": learned}
        if not near:
            out.append(rec)
            continue
        turn = min(near, key=lambda tr: abs(tr["t"] - ch.hands_off_t))
        free.remove(turn)
        want = _effect(turn["move"])
        rec["right"] = ch.best is not None and _effect(ch.best) == want
        truth = next((s for s in ch.ranked if _effect(s.candidate) == want), None)
        wrong = next((s for s in ch.ranked if _effect(s.candidate) != want), None)
        if truth is not None:
            rec["gesture"] = _gesture(ch, truth, board)
        if truth is not None and wrong is not None:
            a, b = _parts(ch, truth), _parts(ch, wrong)
            rec["told"] = {k: a[k] - b[k] for k in SOURCES}
            rec["wrong_p"] = wrong.probability
            rec["versus"] = f"{wrong.candidate.describe()} against {truth.candidate.describe()}"
        out.append(rec)
    return out


def foreign_game(i: int, seed: int, work: Path) -> list[dict]:
    profile, players = FOREIGN_PROFILES[i % 3], (2, 4)[(i // 3) % 2]
    d = work / f"f-{profile}-{players}p-{seed}"
    r = subprocess.run([sys.executable, str(FOREIGN / "gamegen.py"), "generate", "--out", str(d), "--profile",
                        profile, "--seed", str(seed), "--players", str(players)], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"gamegen failed: {r.stderr.strip()}")
    setup = load_setup(d / "config.toml")
    rows = read_trace(d / "trace.csv", load_cells=[c.name for c in setup.calibration.cells])
    truth = json.loads((d / "truth.json").read_text())
    turns = [{"t": tr["t"], "move": tr["move"]} for tr in truth["turns"]
             if tr.get("physical") and tr["move"]["kind"] in ("place", "advance")]
    return scored("foreign", d.name, profile, judged(setup, rows, read_inputs(d / "inputs.jsonl")), turns)


def our_session(i: int, seed: int) -> list[dict]:
    level, players = LEVELS[i % len(LEVELS)], (2, 4)[(i // len(LEVELS)) % 2]
    model = load_model("A")
    _, hands, _ = session_arm(seed, "random")
    arm, _, _ = session_calibration(model, level, seed, "random", "given")
    s = play_session(model, profile=session_cells(level, seed, "random"), seed=seed, players=players, turns=50,
                     arm=arm, hands=hands)
    turns = [{"t": tr.hands_off, "move": tr.move} for tr in s.turns if tr.hands_off is not None]
    return scored("ours", f"{level}-{players}p-{seed}", level, judged(s.setup(), s.rows, s.inputs), turns)


def gestures(recs: list[dict]) -> None:
    """Moves whose two touches both missed their holders beyond GESTURE_Z the same way (a whole gesture shifted: the
    look-alike a holder or more off then fits), by profile and by how long the first touch held the arm on the
    board; and which way touches miss by how long they held it there (while the arm rests on the board its angle
    cannot show the torque a touch adds, which locates the touch)."""
    bins = (("none", 0.0, 1e-9), ("< 30 %", 1e-9, BOARD_SHARE), (f"≥ {100 * BOARD_SHARE:g} %", BOARD_SHARE, 2.0))
    print(f"\nTwo-touch moves both of whose touches missed beyond {GESTURE_Z:g}σ the same way, by the share of the "
          "first touch on the board")
    for profile in sorted({r["profile"] for r in recs}):
        row = []
        for name, lo, hi in bins:
            g = [r["gesture"] for r in recs if r["profile"] == profile and r.get("gesture")
                 and lo <= r["gesture"]["board"][0] < hi]
            shifted = sum(min(abs(v) for v in x["z"]) > GESTURE_Z and x["z"][0] * x["z"][1] > 0 for x in g)
            row.append(f"{name} {shifted} of {len(g)}")
        print(f"  {profile:12} " + "; ".join(row))
    print(f"Which way touches miss (in σ, + farther out than the holder), by their own share on the board: touches, "
          f"mean, beyond {GESTURE_Z:g}σ inward / outward")
    for profile in sorted({r["profile"] for r in recs}):
        row = []
        for name, lo, hi in ((bins[1][0], 0.0, BOARD_SHARE), bins[2]):
            zs = [v for r in recs if r["profile"] == profile and r.get("gesture")
                  for v, b in zip(r["gesture"]["outward"], r["gesture"]["board"]) if lo <= b < hi]
            if zs:
                row.append(f"{name} {len(zs)}, {sum(zs) / len(zs):+.2f}, "
                           f"{sum(v < -GESTURE_Z for v in zs)} / {sum(v > GESTURE_Z for v in zs)}")
        print(f"  {profile:12} " + "; ".join(row))


def clipped(recs: list[dict]) -> None:
    """What each game's hands had learned by its end of how often touches that held the arm at the board are placed
    toward the pivot (touches.HandSpread.clipped), by profile."""
    games: dict[str, dict] = {}
    for r in recs:
        games.setdefault(r["game"], {"profile": r["profile"], **r["learned"]})
    print(f"\nHeld touches placed toward the pivot, as each game's hands learned it by its end (prior "
          f"{HandSpread.CLIPPED_PRIOR:g}): share median (range); held touches of the last {HandSpread.KEEP} learned")
    for profile in sorted({g["profile"] for g in games.values()}):
        mine = [g for g in games.values() if g["profile"] == profile]
        shares = [g["clipped"] for g in mine]
        print(f"  {profile:12} {len(mine):3} games: {statistics.median(shares):.3f} ({min(shares):.3f}-"
              f"{max(shares):.3f}); held {statistics.median([g['held'] for g in mine]):g} of "
              f"{statistics.median([g['touches'] for g in mine]):g}")


def report(world: str, recs: list[dict], show: bool = False) -> None:
    print(f"\n=== {world}: {len({r['game'] for r in recs})} games, {len(recs)} decided changes, "
          f"{sum('right' in r for r in recs)} matched to a turn, {sum(r.get('right') is False for r in recs)} "
          "of those decided otherwise (asked, or wrong)")
    pairs = [r for r in recs if "told" in r]
    alike = [r for r in pairs if abs(r["told"]["weight and torque"]) < LOOK_ALIKE_NATS and r["wrong_p"] > 1e-6]
    print(f"\nLook-alikes ({len(alike)} of {len(pairs)} changes with the truth and a wrong account ranked): "
          "log L(truth) − log L(best wrong) by source")
    for line in evidence_lines([r["told"] for r in alike], SOURCES):
        print("  " + line)
    if show:
        for r in alike:
            astray = [k for k in SOURCES if r["told"][k] <= -SHOW_NATS]
            if astray:
                print(f"  {', '.join(astray)} the wrong way: {r['game']} at {r['t']} s ({r['confidence']:.4f}, "
                      f"{'right' if r['right'] else 'not right'}), {r['versus']}: "
                      + ", ".join(f"{k} {v:+.1f}" for k, v in r["told"].items() if v))
    band = [r for r in recs if BAND[0] <= r["confidence"] < BAND[1] and "right" in r]
    lead = Counter(max(("touches", "pause", "swing frequency", "weight and torque"), key=lambda k: r["told"][k])
                   for r in band if "told" in r)
    print(f"\nDecided at {BAND[0]}-{BAND[1]}: {len(band)}, {sum(r['right'] for r in band)} right, their odds "
          f"promising {sum(1 - r['confidence'] for r in band):.2f} wrong; set apart most by "
          + ", ".join(f"{k} {v}" for k, v in lead.most_common()))
    for r in band:
        if not r["right"]:
            print(f"  wrong: {r['game']} at {r['t']} s, {r['confidence']:.4f}: {r.get('versus', '')}")
    gestures(recs)
    clipped(recs)
    print("\nJudging's cost per decided change (CPU on this machine, one core; latency after the hands left, s)")
    for name, kinds in (("moves", ("place", "move", "beat")), ("removals", ("remove", "clear"))):
        group = [r for r in recs if r["kind"] in kinds]
        if not group:
            continue
        cpu = [r["cpu"] for r in group]
        lat = [r["latency"] for r in group]
        pi = [max(r["latency"], PI_SLOWER * r["cpu"]) for r in group]
        print(f"  {name:8} {len(group):4}: CPU median {statistics.median(cpu):.3f} p95 {percentile(cpu, 0.95):.3f} "
              f"max {max(cpu):.3f}; latency median {statistics.median(lat):.2f} p95 {percentile(lat, 0.95):.2f}; "
              f"on a Pi ({PI_SLOWER:g}× slower) median {statistics.median(pi):.2f} p95 {percentile(pi, 0.95):.2f} "
              f"max {max(pi):.2f}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--foreign", type=int, default=12, help="foreign whole games (every profile, 2 and 4 players)")
    p.add_argument("--ours", type=int, default=8, help="sessions of ours (every noise level, 2 and 4 players)")
    p.add_argument("--seed", type=int, default=None, help="the first seed (default: fresh)")
    p.add_argument("--show", action="store_true",
                   help=f"print each look-alike a source set {SHOW_NATS:g} nats or more apart the wrong way")
    args = p.parse_args()
    for name in ("foreign", "ours"):
        if not 0 <= getattr(args, name) <= 200:
            p.error(f"--{name} must be 0 to 200")
    if args.foreign and not (FOREIGN / "gamegen.py").is_file():
        p.error(f"no foreign arm at {FOREIGN} (--foreign 0 runs ours alone)")
    seed = args.seed if args.seed is not None else random.randrange(10 ** 6, 10 ** 8)
    print(f"seeds from {seed}")
    with tempfile.TemporaryDirectory() as tmp:
        foreign = [r for i in range(args.foreign) for r in foreign_game(i, seed + i, Path(tmp))]
    ours = [r for i in range(args.ours) for r in our_session(i, seed + 1000 + i)]
    if foreign:
        report("foreign arm", foreign, args.show)
    if ours:
        report("our random arms", ours, args.show)


if __name__ == "__main__":
    main()
