"""Balance Duels speed: assessing every legal move of a position, and playing whole random games.

Run: .venv/bin/python bench/balance_duels_bench.py [--games N] [--seed S]
Prints figures for README; not a test (timings flake on shared machines).
"""

from __future__ import annotations

import argparse
import platform
import random
import statistics
import time

from companion.games import balance_duels as bd


def random_positions(model, n: int, rng: random.Random):
    """Positions met in random games, with the roll that the player faces there."""
    out = []
    while len(out) < n:
        players = rng.choice([2, 3, 4])
        state = bd.new_game(model, players)
        for _ in range(rng.randint(4, 60)):
            if state.over:
                break
            roll = rng.randint(1, 6)
            out.append((state, roll))
            state = bd.apply(model, state, rng.choice(bd.legal_moves(model, state, roll)))
    return out[:n]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--games", type=int, default=300)
    ap.add_argument("--positions", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    model = bd.load_model("A")

    positions = random_positions(model, args.positions, rng)
    times, counts = [], []
    for state, roll in positions:
        t0 = time.perf_counter()
        assessed = bd.assess_all(model, state, roll)
        times.append(time.perf_counter() - t0)
        counts.append(len(assessed))
    times.sort()

    game_times, turns = [], []
    for _ in range(args.games):
        state = bd.new_game(model, rng.choice([2, 3, 4]))
        n = 0
        t0 = time.perf_counter()
        while not state.over and n < 2000:
            roll = rng.randint(1, 6)
            state = bd.apply(model, state, rng.choice(bd.legal_moves(model, state, roll)))
            n += 1
        game_times.append(time.perf_counter() - t0)
        turns.append(n)

    print(f"machine: {platform.machine()} {platform.python_implementation()} {platform.python_version()}, one core")
    print(f"assess every legal move of a position ({len(positions)} positions, "
          f"{statistics.mean(counts):.1f} moves on average):")
    print(f"  median {statistics.median(times) * 1e6:.0f} µs, p95 {times[int(len(times) * 0.95)] * 1e6:.0f} µs, "
          f"max {times[-1] * 1e6:.0f} µs")
    print(f"play a whole random game ({args.games} games, {statistics.mean(turns):.0f} turns on average):")
    print(f"  median {statistics.median(game_times) * 1e3:.1f} ms, "
          f"mean per turn {sum(game_times) / sum(turns) * 1e6:.0f} µs")


if __name__ == "__main__":
    main()
