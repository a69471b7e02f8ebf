"""File fuzzing figure: config and balance-model files truncated at every character, every value replaced by
values of the wrong type, random garbage; and a sample of the refused files through `companion run`.

Run: .venv/bin/python bench/file_fuzz.py [--garbage 2000] [--cli 60] [--seed 1] [--json FILE]
In-process, a bad file must raise ConfigError / ModelError with one line naming the file. Through the
CLI, a bad file must give exit code 2, one line on stderr, no traceback, and start nothing.
Exit code 1 on any failure.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import Figures  # first: it also puts the repository on sys.path

from tests.reliability.filefuzz import (FULL_CONFIG, MODEL_A, Loader, model_via_config, truncations,
                                        wrong_types)

GAME_OPTION_CASES = [
    "[game]\nplayers = 6\n[simulate]\nenabled = true\n",
    "[game]\noptions = { pawns = 99 }\n[simulate]\nenabled = true\n",
    '[game]\nname = "imperial"\noptions = { players = "x" }\n[simulate]\nenabled = true\n',
    '[game]\nname = "risk"\noptions = { variant = 3 }\n[simulate]\nenabled = true\n',
]


def garbage(rng: random.Random) -> bytes | str:
    kind = rng.randrange(4)
    if kind == 0:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(400)))
    if kind == 1:
        return "".join(rng.choice("[]=\"'{}.,#\n abc123_-\\") for _ in range(rng.randrange(300)))
    if kind == 2:
        text = FULL_CONFIG
        i = rng.randrange(len(text))
        return text[:i] + rng.choice("[]=\"'{}\n#\\") + text[i + 1:]      # one character changed
    text = MODEL_A
    i = rng.randrange(len(text))
    return text[:i] + rng.choice("[]=\"'{}\n#\\") + text[i + 1:]


def run_cli(config: Path, workdir: Path) -> list[str]:
    """Problems with `companion run --config config` (a file the loader refuses)."""
    db = workdir / "events.sqlite3"
    proc = subprocess.run([sys.executable, "-m", "companion", "run", "--config", str(config), "--port", "0",
                           "--db", str(db)], capture_output=True, text=True, timeout=60, cwd=workdir)
    problems = []
    lines = proc.stderr.strip().splitlines()
    if proc.returncode != 2:
        problems.append(f"exit code {proc.returncode}")
    if "Traceback" in proc.stderr:
        problems.append("a traceback: " + " | ".join(lines[-3:])[:300])
    elif len(lines) != 1 or not lines[0].startswith("companion: "):
        problems.append(f"stderr is not one 'companion: ...' line: {proc.stderr[:200]!r}")
    if db.exists():
        problems.append("the event store was created: something started")
        db.unlink()
    return problems


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--garbage", type=int, default=2000, help="random garbage files (half configs, half models)")
    p.add_argument("--cli", type=int, default=60, help="refused configs sent through `companion run`")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", help="also write the figures to this file")
    args = p.parse_args(argv)
    fig = Figures("file_fuzz", args.json)
    rng = random.Random(args.seed)
    config, model = Loader("config"), Loader("model")
    refused_configs: list[str | bytes] = []
    try:
        t = time.monotonic()
        for text in truncations(FULL_CONFIG):
            config(text)
        for text in wrong_types(FULL_CONFIG):
            before = config.result.refused
            config(text)
            if config.result.refused > before:
                refused_configs.append(text)
        for text in truncations(MODEL_A):
            model(text)
        for text in wrong_types(MODEL_A):
            model(text)
        for i in range(args.garbage):
            (config if i % 2 == 0 else model)(garbage(rng))
        fig.say(f"in-process: {config.result.total} configs ({config.result.refused} refused, "
                f"{len(config.result.failures)} failures), {model.result.total} models ({model.result.refused} "
                f"refused, {len(model.result.failures)} failures) in {time.monotonic() - t:.1f} s")
        cli_problems: list[str] = []
        cli_runs = 0
        t = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="companion-file-fuzz-") as tmp:
            work = Path(tmp)
            sample = GAME_OPTION_CASES + rng.sample(refused_configs, min(len(refused_configs),
                                                                         max(0, args.cli - len(GAME_OPTION_CASES) - 2)))
            sample += [model_via_config(MODEL_A[:len(MODEL_A) // 3], work),
                       b"\xff\xfe[web]\nport = 1\n"]
            for data in sample:
                path = work / "companion.toml"
                if isinstance(data, bytes):
                    path.write_bytes(data)
                else:
                    path.write_text(data)
                cli_runs += 1
                for problem in run_cli(path, work):
                    cli_problems.append(f"{problem} for {str(data)[-120:]!r}")
        fig.say(f"through `companion run`: {cli_runs} refused files, {len(cli_problems)} problems "
                f"({time.monotonic() - t:.1f} s)")
        files = config.result.total + model.result.total
        failures = len(config.result.failures) + len(model.result.failures) + len(cli_problems)
        fig.put("config_files", {"total": config.result.total, "refused": config.result.refused,
                                 "loaded": config.result.loaded, "failures": config.result.failures[:10]})
        fig.put("model_files", {"total": model.result.total, "refused": model.result.refused,
                                "loaded": model.result.loaded, "failures": model.result.failures[:10]})
        fig.put("cli", {"runs": cli_runs, "problems": cli_problems[:20], "problem_count": len(cli_problems)})
        fig.put("distinct_messages", len(config.result.messages | model.result.messages))
        fig.put("figure", f"{files} fuzzed files + {cli_runs} through the CLI, {failures} failures")
        return fig.finish(failures == 0)
    finally:
        config.close()
        model.close()


if __name__ == "__main__":
    sys.exit(main())
