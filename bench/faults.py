"""Fault-injection figure: faulty drivers on the simulated table, seen through the daemon's API.

Run: .venv/bin/python bench/faults.py [--rounds 20] [--live-rounds 1] [--seed 1] [--json FILE]
Each round injects every kind of fault (a load cell that stops answering, glitches, drifts fast or returns a
wrong type; an accelerometer raising OSError or reading NaN; a chattering tilt switch; a button stuck
pressed) on a random device for a random time, plus one pair of faults at once. A fault is survived when the API kept answering, the
device was shown unavailable with a reason naming the trouble, the other devices kept being read, the
game went on by the page and the buttons, nothing escaped the sensor loop, and the device came back by
itself afterwards. --rounds run on a hand-moved clock (fast); --live-rounds run in real time with the
daemon's sensor thread. Exit code 1 unless every fault is survived.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import logging
import random
import sys
import tempfile
import time
from pathlib import Path

from _common import Figures  # first: it also puts the repository on sys.path

from companion.hardware.faults import STUCK_BUTTON_S
from tests.reliability.faultlab import FAULTS, Fault, Outcome, Table, inject, stuck_button

# a button is stuck only once it has been down for STUCK_BUTTON_S: shorter is a long press, not a fault
DURATIONS_S = {"load cell drifts fast": (12.0, 25.0), "button stuck pressed": (STUCK_BUTTON_S + 1, 25.0)}
DEFAULT_DURATION_S = (1.0, 10.0)
LIVE_DURATIONS_S = {"load cell drifts fast": 12.0, "button stuck pressed": STUCK_BUTTON_S + 2}
LIVE_DEFAULT_S = 2.0


def on_cell(fault: Fault, index: int) -> Fault:
    """The same fault on load cell `index` instead of load0."""
    if fault.device != "load0" or index == 0:
        return fault

    def retarget(fn):
        def run(table):
            real = table.sensors.cells[0]
            table.sensors.cells[0], table.sensors.cells[index] = table.sensors.cells[index], real
            try:
                fn(table)
            finally:
                table.sensors.cells[0], table.sensors.cells[index] = real, table.sensors.cells[0]
        return run

    return dataclasses.replace(fault, device=f"load{index}", start=retarget(fault.start), clear=retarget(fault.clear))


def pick(kind: str, table: Table, rng: random.Random) -> Fault:
    """The fault of this kind on a random device of its kind: a load cell, or a button of the panel."""
    if kind == "button stuck pressed":
        return stuck_button(rng.choice(table.companion.buttons.names))
    return on_cell(FAULTS[kind], rng.randrange(len(table.sensors.cells)))


def pair(a: Fault, b: Fault) -> Fault:
    """Two faults at once on two devices; both must be shown, and both must come back."""
    return Fault(f"{a.kind} + {b.kind}", a.device, a.reason_words,
                 lambda t: (a.start(t), b.start(t)), lambda t: (a.clear(t), b.clear(t)),
                 max(a.duration_s, b.duration_s), more=b.hits)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=20)
    p.add_argument("--live-rounds", type=int, default=1)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", help="also write the figures to this file")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.ERROR)      # the devices' warnings are the point, not news here
    fig = Figures("faults", args.json)
    rng = random.Random(args.seed)
    outcomes: list[tuple[str, Outcome]] = []
    with tempfile.TemporaryDirectory(prefix="companion-faults-") as tmp:
        table = Table(Path(tmp) / "events.sqlite3", seed=args.seed)
        t = time.monotonic()
        try:
            for r in range(args.rounds):
                kinds = list(FAULTS)
                rng.shuffle(kinds)
                for kind in kinds:
                    low, high = DURATIONS_S.get(kind, DEFAULT_DURATION_S)
                    outcomes.append(("simulated clock", inject(table, pick(kind, table, rng),
                                                               duration_s=rng.uniform(low, high))))
                a, b = rng.sample([k for k in FAULTS if FAULTS[k].device == "load0"], 1) + \
                    rng.sample([k for k in FAULTS if FAULTS[k].device != "load0"], 1)
                both = pair(FAULTS[a], pick(b, table, rng))
                # long enough for the slower of the two to show (a drift, a stuck button), and at least 5 s
                longest = max(DURATIONS_S.get(k, (5.0, 5.0))[0] for k in (a, b))
                outcomes.append(("simulated clock", inject(table, both, duration_s=max(longest, 5.0))))
                fig.say(f"round {r + 1}: {sum(o.survived for _, o in outcomes)} / {len(outcomes)} survived so far; "
                        f"game at seq {table.companion.host.seq}")
        finally:
            table.close()
        fig.say(f"simulated clock: {len(outcomes)} faults in {time.monotonic() - t:.1f} s")
        for r in range(args.live_rounds):
            live = Table(Path(tmp) / f"live{r}.sqlite3", seed=args.seed + r, live=True)
            try:
                for kind, fault in FAULTS.items():
                    outcome = inject(live, fault, duration_s=LIVE_DURATIONS_S.get(kind, LIVE_DEFAULT_S))
                    if not live.sensors.alive():
                        outcome.problems.append("the sensor thread died")
                    outcomes.append(("real time", outcome))
                    fig.say(f"live: {kind}: {'survived' if outcome.survived else outcome.problems}, back after "
                            f"{outcome.recovered_after_s} s")
            finally:
                live.close()
    by_kind: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for mode, o in outcomes:
        key = o.kind if "+" not in o.kind else "two at once"
        by_kind[key]["injected"] += 1
        by_kind[key]["survived"] += o.survived
    failed = [(mode, o.kind, o.problems) for mode, o in outcomes if not o.survived]
    recovery = sorted(o.recovered_after_s for _, o in outcomes if o.recovered_after_s is not None)
    survived = sum(o.survived for _, o in outcomes)
    fig.put("injected", len(outcomes))
    fig.put("survived", survived)
    fig.put("by_kind", {k: dict(v) for k, v in sorted(by_kind.items())})
    fig.put("recovery_s", {"median": recovery[len(recovery) // 2] if recovery else None,
                           "max": recovery[-1] if recovery else None})
    fig.put("failures", [{"mode": m, "kind": k, "problems": p} for m, k, p in failed[:30]])
    fig.put("figure", f"{survived} / {len(outcomes)} injected faults survived")
    return fig.finish(survived == len(outcomes))


if __name__ == "__main__":
    sys.exit(main())
