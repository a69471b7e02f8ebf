"""Crash trials: play a scripted game through the API, `kill -9` the daemon at a random moment, restart, compare.

After every kill, a copy of the database (with its WAL, exactly as the crash left it) must
  * pass PRAGMA integrity_check,
  * hold every event the daemon acknowledged to the client, byte for byte as sent,
  * hold nothing else new but, at most, the one request that was in flight when the process died,
  * leave every earlier event unchanged;
and the restarted daemon must serve that same game (its seq, and the view the client last saw).
Some trials kill the daemon while it is still starting up instead.
"""

from __future__ import annotations

import os
import random
import signal
import threading
import time
import http.client
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from tests.reliability.harness import Client, DaemonError, DaemonProcess, Row, read_store_copy, write_config

NEW_GAME = {"game": "balance_duels", "options": {"players": 2}}


@dataclass
class Expected:
    """A change sent to the daemon and what its event must look like."""
    kind: str
    body: dict | None          # None: the body is the server's to choose (an undo names what it takes back)
    seq: int | None = None     # set when acknowledged


@dataclass
class Trial:
    number: int
    mode: str                  # "play": killed mid-game; "startup": killed while starting
    kill_after_s: float
    acked: int = 0
    refused: int = 0
    in_flight_committed: bool = False
    restart_s: float | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass
class CrashReport:
    trials: list[Trial]
    events_on_disk: int
    final_integrity: str

    @property
    def survived(self) -> int:
        return sum(1 for t in self.trials if t.ok)

    @property
    def acknowledged(self) -> int:
        return sum(t.acked for t in self.trials)

    def problems(self) -> list[str]:
        return [f"trial {t.number} ({t.mode}, kill at {t.kill_after_s:.3f} s): {p}" for t in self.trials
                for p in t.problems]


class ScriptedPlayer:
    """Plays Balance Duels through the API as fast as the answers come, remembering what was acknowledged."""

    def __init__(self, client: Client, rng: random.Random):
        self.client = client
        self.rng = rng
        self.acked: list[Expected] = []
        self.in_flight: Expected | None = None
        self.refused = 0
        self.last_state: dict | None = None    # the state in the newest acknowledged answer

    def play(self, until: float) -> str:
        """Play until the connection breaks (the kill) or `until`; returns why it stopped."""
        try:
            state = self.client.get("/api/state")
        except (OSError, http.client.HTTPException) as exc:
            return f"connection lost: {type(exc).__name__}"
        while time.monotonic() < until:
            path, body, expected = self._next(state)
            self.in_flight = expected
            try:
                status, answer = self.client.post(path, body)
            except (OSError, http.client.HTTPException) as exc:
                return f"connection lost: {type(exc).__name__}"
            self.in_flight = None
            if status == 200:
                expected.seq = answer["seq"]
                self.acked.append(expected)
                state = answer["state"]
                self.last_state = state
            elif status == 409:
                self.refused += 1
                try:
                    state = self.client.get("/api/state")
                except (OSError, http.client.HTTPException) as exc:
                    return f"connection lost: {type(exc).__name__}"
            else:
                raise AssertionError(f"POST {path} {body}: unexpected {status} {answer}")
        return "time is up"

    def _next(self, state: dict) -> tuple[str, dict, Expected]:
        view = state["view"]
        r = self.rng.random()
        if view.get("over") or r < 0.02:
            return "/api/new_game", NEW_GAME, Expected("new_game", NEW_GAME)
        if state.get("can_undo") and r < 0.10:
            return "/api/undo", {}, Expected("undo", None)
        if view.get("roll") is None:
            value = self.rng.randint(1, 6)
            return "/api/roll", {"value": value}, Expected("action", {"action": {"type": "roll", "value": value}})
        moves = view.get("moves") or []
        if not moves:
            # nothing legal after this roll (should not happen: "I can't play" is always listed); start over
            return "/api/new_game", NEW_GAME, Expected("new_game", NEW_GAME)
        action = {"type": "move", "move": self.rng.choice(moves)["move"]}
        return "/api/action", {"action": action}, Expected("action", {"action": action})


def _matches(row: Row, exp: Expected) -> bool:
    if row.kind != exp.kind or row.source != "page":
        return False
    if exp.kind == "new_game" and row.game_id != row.seq:
        return False
    return exp.body is None or row.body == exp.body


def check_disk(before: list[Row], after: list[Row], acked: list[Expected], in_flight: Expected | None,
               *, startup_game_allowed: bool) -> tuple[list[str], bool]:
    """Compare the log after a kill with what the client knows; (problems, whether the in-flight change landed)."""
    problems = []
    if after[:len(before)] != before:
        changed = next(i for i, (a, b) in enumerate(zip(after, before)) if a != b) if len(after) >= len(before) \
            else len(after)
        problems.append(f"events that existed before this trial changed or vanished (from index {changed})")
    new = after[len(before):]
    by_seq = {r.seq: r for r in new}
    for exp in acked:
        row = by_seq.pop(exp.seq, None)
        if row is None:
            problems.append(f"acknowledged event {exp.seq} ({exp.kind}) is missing after the kill")
        elif not _matches(row, exp):
            problems.append(f"acknowledged event {exp.seq} differs: stored {row.kind} {row.body} from {row.source}, "
                            f"sent {exp.kind} {exp.body}")
    extra = sorted(by_seq.values(), key=lambda r: r.seq)
    landed = False
    if startup_game_allowed and extra and extra[0].kind == "new_game" and extra[0].source == "startup":
        extra = extra[1:]
    if extra:
        last_acked = max((e.seq for e in acked), default=0)
        if len(extra) == 1 and in_flight is not None and _matches(extra[0], in_flight) and extra[0].seq > last_acked \
                and extra[0].seq == new[-1].seq:
            landed = True
        else:
            problems.append(f"{len(extra)} event(s) appeared that no acknowledged or in-flight request made: "
                            f"{[(r.seq, r.kind, r.source) for r in extra][:5]}")
    return problems, landed


def _snapshot_view(state: dict) -> dict:
    return {"seq": state["seq"], "game_id": state["game_id"], "view": state["view"], "scores": state["scores"]}


def run_crash_trials(workdir: Path, trials: int, *, seed: int = 1, max_play_s: float = 0.8,
                     startup_share: float = 0.1, on_trial: Callable[[Trial], None] | None = None,
                     deadline_s: float = 1800.0) -> CrashReport:
    """`trials` kill -9 trials against one database in workdir; bounded by deadline_s overall."""
    rng = random.Random(seed)
    workdir.mkdir(parents=True, exist_ok=True)
    config = write_config(workdir, demo=False, seed=seed)
    db = workdir / "events.sqlite3"
    on_disk: list[Row] = []
    last_seen: dict | None = None     # the state the client last saw acknowledged, when nothing landed after it
    results: list[Trial] = []
    stop_at = time.monotonic() + deadline_s
    for number in range(1, trials + 1):
        if time.monotonic() > stop_at:
            break
        startup = number > 1 and rng.random() < startup_share
        trial = Trial(number, "startup" if startup else "play", 0.0)
        results.append(trial)
        t0 = time.monotonic()
        try:
            if startup:
                trial.kill_after_s = rng.uniform(0.0, 0.35)
                daemon = DaemonProcess(config, db, wait=False)
                time.sleep(trial.kill_after_s)
                daemon.kill()
                player = None
            else:
                daemon = DaemonProcess(config, db)
                trial.restart_s = time.monotonic() - t0
                client = daemon.client()
                state = client.get("/api/state")
                problems = _check_restart(state, on_disk, last_seen)
                trial.problems.extend(problems)
                trial.kill_after_s = rng.uniform(0.02, max_play_s)
                player = ScriptedPlayer(client, rng)
                killer = threading.Timer(trial.kill_after_s, os.kill, (daemon.pid, signal.SIGKILL))
                killer.start()
                try:
                    player.play(until=time.monotonic() + trial.kill_after_s + 10.0)
                finally:
                    killer.cancel()
                    client.close()
                    daemon.kill()
        except DaemonError as exc:
            trial.problems.append(f"the daemon did not come back: {exc}")
            break
        view = read_store_copy(db)
        if view.integrity != "ok":
            trial.problems.append(f"integrity_check after the kill: {view.integrity}")
        acked = player.acked if player else []
        in_flight = player.in_flight if player else None
        problems, landed = check_disk(on_disk, view.rows, acked, in_flight, startup_game_allowed=not on_disk)
        trial.problems.extend(problems)
        trial.acked = len(acked)
        trial.refused = player.refused if player else 0
        trial.in_flight_committed = landed
        if player is not None and player.last_state is not None:
            last_seen = None if landed else _snapshot_view(player.last_state)
        elif view.rows != on_disk:
            last_seen = None
        on_disk = view.rows
        if on_trial:
            on_trial(trial)
    final = _final_restart(config, db, on_disk, last_seen, results)
    return CrashReport(results, len(on_disk), final)


def _check_restart(state: dict, on_disk: list[Row], last_seen: dict | None) -> list[str]:
    problems = []
    if on_disk:
        if state["seq"] != on_disk[-1].seq:
            problems.append(f"restarted at seq {state['seq']}, the log ends at {on_disk[-1].seq}")
        latest_game = max(r.seq for r in on_disk if r.kind == "new_game")
        if state["game_id"] != latest_game:
            problems.append(f"restarted in game {state['game_id']}, the latest is {latest_game}")
    if last_seen is not None and last_seen["seq"] == state["seq"] and _snapshot_view(state) != last_seen:
        problems.append("the restarted daemon shows a different game than the client last saw")
    return problems


def _final_restart(config: Path, db: Path, on_disk: list[Row], last_seen: dict | None,
                   results: list[Trial]) -> str:
    """Start once more after the last kill, check, stop cleanly; the integrity after the clean stop."""
    try:
        daemon = DaemonProcess(config, db)
    except DaemonError as exc:
        if results:
            results[-1].problems.append(f"the daemon did not come back after the last kill: {exc}")
        return "not checked"
    try:
        client = daemon.client()
        state = client.get("/api/state")
        client.close()
        problems = _check_restart(state, on_disk, last_seen)
        if problems and results:
            results[-1].problems.extend(problems)
    finally:
        code = daemon.stop()
    if code != 0 and results:
        results[-1].problems.append(f"the final clean stop exited with {code}")
    return read_store_copy(db).integrity


def summary(report: CrashReport) -> dict[str, Any]:
    restarts = sorted(t.restart_s for t in report.trials if t.restart_s is not None)
    return {
        "trials": len(report.trials),
        "survived": report.survived,
        "startup_kills": sum(1 for t in report.trials if t.mode == "startup"),
        "acknowledged_events": report.acknowledged,
        "in_flight_committed": sum(1 for t in report.trials if t.in_flight_committed),
        "events_on_disk": report.events_on_disk,
        "final_integrity": report.final_integrity,
        "restart_median_s": round(restarts[len(restarts) // 2], 3) if restarts else None,
        "problems": report.problems(),
    }
