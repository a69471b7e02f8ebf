"""Crash figure: kill -9 the daemon at random moments of a scripted game, restart, and compare.

Run: .venv/bin/python bench/crash.py [--trials 200] [--damage-trials 25] [--seed 1] [--json FILE]
A trial survives when the database (copied as the crash left it) passes PRAGMA integrity_check, holds
every event the daemon acknowledged, byte for byte, nothing else new but the one request in flight,
no earlier event changed, and the restarted daemon serves that same game. About 10 % of the kills
land while the daemon is still starting up.
Then the damage trials, each on a fresh store, the five kinds in turn: after a kill -9, 16 bytes flipped
in the WAL, the WAL cut short, the WAL deleted after a checkpointed game, one byte of an event of the game
in progress in the database file, or the header of the page holding it. One passes when the restarted
daemon names on the page every event that is gone (with its game), names nothing it holds, changes no
event, keeps the game in progress, and numbers new events after the lost ones.
Last, what the acknowledgement record those checks rely on costs a commit (appends in turn to a store with
it and one without). Exit code 1 if any trial fails.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from _common import Figures  # first: it also puts the repository on sys.path

from tests.reliability.crashlab import ack_record_cost, damage_summary, run_crash_trials, run_damage_trials, summary


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--trials", type=int, default=200)
    p.add_argument("--damage-trials", type=int, default=25, help="trials of WAL and file damage after a kill")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--max-play-s", type=float, default=0.8, help="kill within this many seconds of play")
    p.add_argument("--deadline-s", type=float, default=1800.0, help="stop starting trials after this long")
    p.add_argument("--json", help="also write the figures to this file")
    args = p.parse_args(argv)
    fig = Figures("crash", args.json)

    def progress(trial):
        if trial.number % 20 == 0 or not trial.ok:
            fig.say(f"trial {trial.number}: {trial.mode}, killed at {trial.kill_after_s:.3f} s, "
                    f"{trial.acked} acknowledged, {'ok' if trial.ok else trial.problems}")

    def damage_progress(trial):
        if trial.number % 5 == 0 or not trial.ok:
            fig.say(f"damage trial {trial.number}: {trial.damage}, {trial.events} events on disk, {trial.lost} lost, "
                    f"{trial.named} named, {trial.salvaged} salvaged, {'ok' if trial.ok else trial.problems}")

    with tempfile.TemporaryDirectory(prefix="companion-crash-") as tmp:
        report = run_crash_trials(Path(tmp) / "kills", args.trials, seed=args.seed, max_play_s=args.max_play_s,
                                  on_trial=progress, deadline_s=args.deadline_s)
        damaged = run_damage_trials(Path(tmp) / "damage", args.damage_trials, seed=args.seed,
                                    on_trial=damage_progress, deadline_s=args.deadline_s)
        cost = ack_record_cost(Path(tmp))
    s = summary(report)
    for key, value in s.items():
        fig.put(key, value)
    d = damage_summary(damaged)
    fig.put("damage", d)
    fig.put("ack_record_cost", cost)
    fig.put("figure", f"{s['survived']} / {s['trials']} kill -9 trials survived "
                      f"({s['acknowledged_events']} acknowledged events, none lost); {d['ok']} / {d['trials']} damage "
                      f"trials told exactly what was lost ({d['lost']} events lost, all named); a commit "
                      f"{cost['append_median_ms_with']} ms median with the acknowledgement record, "
                      f"{cost['append_median_ms_without']} ms without")
    return fig.finish(s["survived"] == s["trials"] == args.trials and s["final_integrity"] == "ok"
                      and d["ok"] == d["trials"] == args.damage_trials)


if __name__ == "__main__":
    sys.exit(main())
