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


# --- storage damage after a kill: what SQLite cannot tell, the store must

DAMAGES = ("wal_flip", "wal_truncate", "wal_deleted_after_checkpoint", "main_byte", "main_page")


@dataclass
class DamageTrial:
    number: int
    damage: str
    events: int = 0            # on disk after the kill, before the damage
    lost: int = 0              # not in the store after the restart (each must be named)
    named: int = 0             # named lost on the page
    salvaged: int = 0          # beyond the restored backup, read back from a damaged file
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def _play_for(daemon: DaemonProcess, rng: random.Random, seconds: float, *, new_game: bool = False) -> int:
    client = daemon.client()
    try:
        if new_game:
            status, _ = client.post("/api/new_game", NEW_GAME)
            assert status == 200, status
        player = ScriptedPlayer(client, rng)
        player.play(until=time.monotonic() + seconds)
        return len(player.acked)
    finally:
        client.close()


def _damage(db: Path, damage: str, rng: random.Random) -> str:
    """Damage the files as a failing card or a careless hand would; says where."""
    wal = db.with_name(db.name + "-wal")
    if damage in ("wal_flip", "wal_truncate"):
        size = wal.stat().st_size
        at = rng.randrange(32, size)
        if damage == "wal_truncate":
            os.truncate(wal, at)
            return f"WAL cut at {at} of {size} bytes"
        data = bytearray(wal.read_bytes())
        for i in range(at, min(at + 16, size)):
            data[i] ^= rng.randrange(1, 256)
        wal.write_bytes(bytes(data))
        return f"16 bytes flipped at {at} of {size} in the WAL"
    if damage == "wal_deleted_after_checkpoint":
        wal.unlink(missing_ok=True)
        db.with_name(db.name + "-shm").unlink(missing_ok=True)
        return "WAL deleted"
    import sqlite3

    con = sqlite3.connect(str(db))          # fold the WAL in, as a clean stop would: the damage hits the file
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    # the events table's leaves in key order: the last holds the newest events, the game in progress
    leaves = [r[0] for r in con.execute("SELECT pageno FROM dbstat WHERE name = 'events' AND pagetype = 'leaf' "
                                        "ORDER BY path")]
    page_size = con.execute("PRAGMA page_size").fetchone()[0]
    con.close()
    if not leaves:
        return "no damage: the events table has no leaf page"
    pageno = leaves[-1]
    start = (pageno - 1) * page_size
    data = bytearray(db.read_bytes())
    if damage == "main_page":
        data[start:start + 8] = bytes(8)
        db.write_bytes(bytes(data))
        return f"the header of page {pageno}, the leaf of the newest events"
    cells = int.from_bytes(data[start + 3:start + 5], "big")
    cell = start + int.from_bytes(data[start + 8 + 2 * (k := rng.randrange(cells)):start + 10 + 2 * k], "big")
    at = data.index(b'{"', cell) + 3      # inside the cell's body (the first text that starts like JSON)
    data[at] = 0xFF
    db.write_bytes(bytes(data))
    return f"one byte (at {at}) of event cell {k} of page {pageno}, the leaf of the newest events"


def run_damage_trials(workdir: Path, trials: int, *, seed: int = 1, play_s: float = 0.6,
                      on_trial: Callable[[DamageTrial], None] | None = None,
                      deadline_s: float = 900.0) -> list[DamageTrial]:
    """Each trial on a fresh store: play, kill -9, damage the files one of DAMAGES' ways (in turn), restart.

    The restarted daemon must come up, every event that was on disk before the damage must be either in
    the store unchanged or named lost on the page with its game, nothing in the store may be named lost,
    a damaged database file must not hide the game in progress, and new events must number on."""
    from tests.reliability.harness import lost_in_notice

    rng = random.Random(seed)
    results: list[DamageTrial] = []
    stop_at = time.monotonic() + deadline_s
    for number in range(1, trials + 1):
        if time.monotonic() > stop_at:
            break
        damage = DAMAGES[(number - 1) % len(DAMAGES)]
        trial = DamageTrial(number, damage)
        results.append(trial)
        tdir = workdir / f"damage-{number}"
        tdir.mkdir(parents=True, exist_ok=True)
        config = write_config(tdir, demo=False, seed=seed + number)
        db = tdir / "events.sqlite3"
        daemon: DaemonProcess | None = None
        try:
            daemon = DaemonProcess(config, db)
            _play_for(daemon, rng, play_s * rng.uniform(0.5, 1.5))
            if damage.startswith("main") or damage == "wal_deleted_after_checkpoint":
                # a finished game in the backups (and, stopped cleanly, in the database file) before the next
                daemon.stop()
                daemon = DaemonProcess(config, db)
                _play_for(daemon, rng, play_s * rng.uniform(0.5, 1.5), new_game=True)
            daemon.kill()
            truth = read_store_copy(db).rows
            trial.events = len(truth)
            where = _damage(db, damage, rng)
            daemon = DaemonProcess(config, db)
            client = daemon.client()
            state = client.get("/api/state")
            notice = " ".join(state["live"].get("notices", []))
            status, answer = client.post("/api/roll", {"value": 1})
            client.close()
            daemon.stop()
            daemon = None
        except (DaemonError, AssertionError, OSError, http.client.HTTPException) as exc:
            trial.problems.append(f"{damage}: {type(exc).__name__}: {exc}")
            if daemon is not None:
                daemon.kill()
            if on_trial:
                on_trial(trial)
            continue
        after = {r.seq: r for r in read_store_copy(db).rows}
        named = lost_in_notice(notice)
        lost = {r.seq: r for r in truth if r.seq not in after}
        trial.lost, trial.named = len(lost), len(named)
        for r in truth:
            if r.seq in after and after[r.seq] != r:
                trial.problems.append(f"{where}: event {r.seq} changed: {after[r.seq]} != {r}")
        unnamed = sorted(set(lost) - set(named))
        if unnamed:
            trial.problems.append(f"{where}: {len(unnamed)} lost event(s) not named, from {unnamed[0]}; notice: "
                                  f"{notice[:300]!r}")
        wrong = sorted(q for q in named if q in after or (q in lost and named[q] not in (None, lost[q].game_id)))
        if wrong:
            trial.problems.append(f"{where}: named wrongly (held, or under another game): {wrong[:5]}")
        if damage.startswith("main") and truth:
            current = max(r.seq for r in truth if r.kind == "new_game")
            if current in after and state["game_id"] != current:
                trial.problems.append(f"{where}: restarted in game {state['game_id']}, not the game in progress "
                                      f"{current}")
            backed_up = max((r.seq for r in truth if r.seq < current), default=0)
            trial.salvaged = sum(1 for q in after if backed_up < q <= max(r.seq for r in truth))
        if status == 200 and truth and answer["seq"] <= max(r.seq for r in truth):
            trial.problems.append(f"{where}: a new event got seq {answer['seq']}, already used before the loss")
        if on_trial:
            on_trial(trial)
    return results


def damage_summary(results: list[DamageTrial]) -> dict[str, Any]:
    per = {}
    for d in DAMAGES:
        mine = [t for t in results if t.damage == d]
        per[d] = {"trials": len(mine), "ok": sum(t.ok for t in mine), "events": sum(t.events for t in mine),
                  "lost_and_named": sum(t.lost for t in mine if t.ok),
                  "trials_with_loss": sum(1 for t in mine if t.lost),
                  "salvaged": sum(t.salvaged for t in mine)}
    return {"trials": len(results), "ok": sum(t.ok for t in results), "per_damage": per,
            "lost": sum(t.lost for t in results), "named": sum(t.named for t in results),
            "problems": [f"trial {t.number} ({t.damage}): {p}" for t in results for p in t.problems]}


def ack_record_cost(workdir: Path, appends: int = 400) -> dict[str, float]:
    """What the acknowledgement record costs a commit: appends to two stores, one with it, in turn (ms)."""
    from companion.store import EventStore

    stores = {False: EventStore(workdir / "cost-without.sqlite3", record_acks=False),
              True: EventStore(workdir / "cost-with.sqlite3", record_acks=True)}
    times: dict[bool, list[float]] = {False: [], True: []}
    try:
        games = {k: s.append(None, "new_game", NEW_GAME, "page").game_id for k, s in stores.items()}
        for i in range(appends):
            for k in ((False, True) if i % 2 else (True, False)):
                t = time.perf_counter()
                stores[k].append(games[k], "action", {"action": {"type": "roll", "value": i % 6 + 1}}, "page")
                times[k].append(time.perf_counter() - t)
    finally:
        for s in stores.values():
            s.close()
    out = {}
    for k, name in ((False, "without"), (True, "with")):
        ts = sorted(times[k])
        out[f"append_median_ms_{name}"] = round(ts[len(ts) // 2] * 1000, 2)
        out[f"append_p95_ms_{name}"] = round(ts[int(len(ts) * 0.95)] * 1000, 2)
    return out
