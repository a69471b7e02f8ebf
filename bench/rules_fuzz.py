"""Rules-engine fuzzing figure: every game's engine fed random, mostly illegal, actions.

Run: .venv/bin/python bench/rules_fuzz.py [--actions 20000] [--steps 40] [--seed 1] [--json FILE]
For each engine in companion.games.registry: --actions actions in games of --steps actions each (from the
simple starting options the engine accepts). An illegal action must raise RuleError with a message and
leave the state unchanged (repr and value); an accepted one must leave the old state alone, give a state
the page can show (strict JSON), and replay to the same state from the log. Exit code 1 on any failure.
"""

from __future__ import annotations

import argparse
import collections
import random
import sys
import time

from _common import Figures  # first: it also puts the repository on sys.path

from companion.games import balance_duels as bd
from companion.games.registry import engines
from tests.reliability.fuzzing import ActionMaker, EngineRun, engine_vocabulary, starting_options


def fuzz_engine(engine, actions: int, steps: int, rng: random.Random) -> dict:
    vocab = engine_vocabulary(engine)
    options = starting_options(engine)
    done = accepted = refused = games = replay_mismatches = 0
    failures: list[str] = []
    kinds: collections.Counter = collections.Counter()
    t = time.monotonic()
    while done < actions:
        game = EngineRun(engine, rng.choice(options))
        maker = ActionMaker(vocab, random.Random(rng.getrandbits(64)))
        games += 1
        for _ in range(min(steps, actions - done)):
            game.step(maker.make(engine.view(game.state)))
            done += 1
        accepted += len(game.accepted)
        refused += game.refused
        kinds.update(a.get("type") for a in game.accepted if isinstance(a.get("type"), str))
        failures += game.failures
        if not game.replay_matches():
            replay_mismatches += 1
            failures.append(f"{engine.name}: replaying game {games} from its log gives another state")
    groups = collections.Counter(f.split(" for ")[0][:160] for f in failures)
    return {"actions": done, "games": games, "accepted": accepted, "refused": refused,
            "accepted_kinds": dict(kinds.most_common()), "failures": len(failures),
            "failure_kinds": [{"count": n, "what": what} for what, n in groups.most_common(10)],
            "examples": failures[:3], "replay_mismatches": replay_mismatches,
            "seconds": round(time.monotonic() - t, 1)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--actions", type=int, default=20_000, help="actions per engine")
    p.add_argument("--steps", type=int, default=40, help="actions per game")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", help="also write the figures to this file")
    args = p.parse_args(argv)
    fig = Figures("rules_fuzz", args.json)
    rng = random.Random(args.seed)
    total = failed = 0
    per_engine = {}
    for name, engine in sorted(engines(bd.load_model("A")).items()):
        r = fuzz_engine(engine, args.actions, args.steps, rng)
        per_engine[name] = r
        total += r["actions"]
        failed += r["failures"]
        fig.say(f"{name}: {r['actions']} actions in {r['games']} games, {r['accepted']} accepted, "
                f"{r['refused']} refused, {r['failures']} failures ({r['seconds']} s)")
    fig.put("engines", per_engine)
    fig.put("actions", total)
    fig.put("failures", failed)
    fig.put("figure", f"{total} random actions over {len(per_engine)} engines, {failed} failures")
    return fig.finish(failed == 0)


if __name__ == "__main__":
    sys.exit(main())
