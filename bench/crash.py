"""Crash figure: kill -9 the daemon at random moments of a scripted game, restart, and compare.

Run: .venv/bin/python bench/crash.py [--trials 200] [--seed 1] [--json FILE]
A trial survives when the database (copied as the crash left it) passes PRAGMA integrity_check, holds
every event the daemon acknowledged, byte for byte, nothing else new but the one request in flight,
no earlier event changed, and the restarted daemon serves that same game. About 10 % of the kills
land while the daemon is still starting up. Exit code 1 if any trial fails.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from _common import Figures  # first: it also puts the repository on sys.path

from tests.reliability.crashlab import run_crash_trials, summary


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--trials", type=int, default=200)
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

    with tempfile.TemporaryDirectory(prefix="companion-crash-") as tmp:
        report = run_crash_trials(Path(tmp), args.trials, seed=args.seed, max_play_s=args.max_play_s,
                                  on_trial=progress, deadline_s=args.deadline_s)
    s = summary(report)
    for key, value in s.items():
        fig.put(key, value)
    fig.put("figure", f"{s['survived']} / {s['trials']} kill -9 trials survived "
                      f"({s['acknowledged_events']} acknowledged events, none lost)")
    return fig.finish(s["survived"] == s["trials"] == args.trials and s["final_integrity"] == "ok")


if __name__ == "__main__":
    sys.exit(main())
