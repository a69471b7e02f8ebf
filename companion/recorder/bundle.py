"""The misread report: one `.tar.gz` with what `companion replay` needs to play the last minutes again.

    misread-20261201-201500/
      README.txt        what this is and the command that replays it
      trace.csv         every sample the arm's follower was given (t,sensor,value)
      inputs.jsonl      the table's inputs: the game so far, then rolls, page and button actions, answers, undo
      config.toml       the settings the daemon ran with that a replay needs (no PIN, MQTT or wiring)
      calibration.toml  the arm's calibration as it was in use, to the last digit
      model.toml        the balance model file, when the arm is not a built-in model
      game.jsonl        the current game's record (as GET /api/record gives it)
      daemon.jsonl      what the daemon did in the window, in the replay's own format, to compare with

Built in memory, written nowhere on the Pi.
"""

from __future__ import annotations

import io
import json
import tarfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

from companion import __version__
from companion.recorder.inputs import Input, write_inputs
from companion.recorder.flight import Recording
from companion.recorder.lines import line_text
from companion.sensing.calibration import ArmCalibration, render
from companion.foundation.toml_lines import toml_value
from companion.store import Event
from companion.foundation.table_time import ACCEL, TICK

PREAMBLE_SOURCE = "input"


PHYSICS_KEYS = ("kappa_gmm", "theta_max_deg", "pawn_mass_g", "mass_sigma_g", "risky_probability")


def config_text(config: Any, cal: ArmCalibration, *, model_ref: str, simulated: bool, physics: Any) -> str:
    """The parts of the daemon's config a replay reads, with the calibration's numbers as they were in use.

    `physics` is the arm's physics as the config gives it (before calibration), written out whole."""
    lines = ["# What Table Companion ran with, for `companion replay` (the PIN, MQTT, the web server and the",
             "# wiring are left out: a replay needs none of them). Made with the flight recorder's report.",
             "[game]", f"name = {toml_value(config.game)}", f"players = {config.players}"]
    if config.game_options:
        lines.append(f"options = {toml_value(dict(config.game_options))}")
    lines += ["", "[balance]", f"model = {toml_value(model_ref)}"]
    for key in PHYSICS_KEYS:
        lines.append(f"{key} = {toml_value(getattr(physics, key))}")
    if "tip_sigma_gmm" in config.balance:
        lines.append(f"tip_sigma_gmm = {toml_value(config.balance['tip_sigma_gmm'])}")
    for c in cal.cells:
        lines += ["", "[[load_cells]]", f"name = {toml_value(c.name)}", f"offset_counts = {toml_value(c.offset_counts)}",
                  f"counts_per_gram = {toml_value(c.counts_per_gram)}"]
    if cal.accelerometer:
        lines += ["", "[accelerometer]", f"axis = {toml_value(cal.axis)}", f"level_g = {toml_value(cal.level_g)}"]
    lines += ["", "[tilt_switch]", f"debounce_ms = {toml_value(cal.tilt_debounce_s * 1000.0)}"]
    if simulated:
        lines += ["", "# the daemon ran on the simulated table", "[simulate]", "enabled = true", "demo = false"]
    return "\n".join(lines) + "\n"


def _trace_csv(rec: Recording) -> bytes:
    names = rec.sensor_names
    accel = {i for i, n in enumerate(names) if n in ACCEL}
    out = io.StringIO()
    out.write("t,sensor,value\n")
    write = out.write
    for times, values, sensors in rec.chunks:
        for t, v, s in zip(times, values, sensors):
            if s in accel:
                write(f"{t:.6f},{names[s]},{v:.6f}\n")
            else:
                write(f"{t:.6f},{names[s]},{int(v)}\n")
    return out.getvalue().encode()


def preamble(events: Iterable[Event], t: float) -> list[Input]:
    """The game so far as inputs at time t: its new game, then every action and undo."""
    out: list[Input] = []
    for ev in events:
        if ev.kind == "new_game":
            out.append(Input(t, "new_game", {"game": ev.body["game"], "options": ev.body.get("options", {})}))
        elif ev.kind == "action":
            out.append(Input(t, "action", ev.body["action"]))
        elif ev.kind == "undo":
            out.append(Input(t, "undo", True))
    return out


def _renumbered(lines: list[dict], first_events: list[dict]) -> list[dict]:
    """The daemon's lines with seq counted from 1, as a replay counts them (the store's seq runs on across games)."""
    out = []
    seq = 0
    for ln in first_events + lines:
        if "seq" in ln:
            seq += 1
            ln = {**ln, "seq": seq}
        out.append(ln)
    return out


def readme(rec: Recording, *, made: str, model_file: bool, rows: int) -> str:
    minutes = (rec.end - rec.start) / 60.0
    start = ("the daemon's start" if not rec.trimmed
             else "where the window begins (the game's earlier moves are replayed first, from inputs.jsonl)")
    if not rec.exact:
        start += (". The window had to start where the follower had not restarted (memory was short), so the "
                  "first minute may replay a little differently from the table")
    return f"""Table Companion: a misread report ({made}, companion {__version__})

This is the flight recorder's window: the last {minutes:.1f} minutes of the table
(table time {rec.start:.3f} to {rec.end:.3f} s), {rows} sensor rows and {len(rec.inputs)} inputs.
It replays from {start}.

Replay it on any computer with the companion installed (no Pi, no sensors needed):

    companion replay trace.csv --config config.toml --inputs inputs.jsonl --calibration calibration.toml

or, without unpacking:

    companion replay THIS-FILE.tar.gz

It prints every game event, question and notice as JSON lines, then a summary. daemon.jsonl
holds what the daemon itself did in the same window, in the same form; the replay says on
stderr whether it matches.

Files: trace.csv (samples), inputs.jsonl (rolls, page and button actions, answers, undo),
config.toml and calibration.toml (the settings in use; the PIN and other secrets are left out),
{'model.toml (the balance model), ' if model_file else ''}game.jsonl (the game record), daemon.jsonl.
"""


def build(rec: Recording, *, config: Any, calibration: ArmCalibration, model, physics: Any, simulated: bool,
          game_events: list[Event], window_events: list[Event], now: datetime | None = None) -> tuple[str, bytes]:
    """(file name, .tar.gz bytes) of a misread report. `game_events` is the current game; `window_events` the
    events of the game that was on at the window's start, up to its checkpoint."""
    when = (now or datetime.now(timezone.utc)).replace(microsecond=0)
    stamp = when.strftime("%Y%m%d-%H%M%S")
    folder = f"misread-{stamp}"
    model_path = Path(model.source)
    model_file = model_path.is_file()
    model_ref = "model.toml" if model_file else model.name
    t_pre = max(0.0, round(rec.start - TICK, 6)) if rec.chunks else rec.start
    first = preamble(window_events, t_pre)
    pre_lines = [{"t": round(i.t, 6), "seq": 0, "kind": ev.kind, "body": ev.body, "source": PREAMBLE_SOURCE}
                 for i, ev in zip(first, [e for e in window_events if e.kind in ("new_game", "action", "undo")])]
    daemon = _renumbered(rec.outputs, pre_lines)
    files: list[tuple[str, bytes]] = [
        ("README.txt", readme(rec, made=when.isoformat(), model_file=model_file, rows=rec.rows).encode()),
        ("trace.csv", _trace_csv(rec)),
        ("inputs.jsonl", write_inputs(first + rec.inputs).encode()),
        ("config.toml", config_text(config, calibration, model_ref=model_ref, simulated=simulated,
                                    physics=physics).encode()),
        ("calibration.toml", render(calibration, model_name=model.name, exact=True,
                                    created=_created(calibration, when)).encode()),
        ("game.jsonl", "".join(json.dumps(e.to_dict(), separators=(",", ":")) + "\n" for e in game_events).encode()),
        ("daemon.jsonl", "".join(line_text(ln) + "\n" for ln in daemon).encode()),
    ]
    if model_file:
        files.append(("model.toml", model_path.read_bytes()))
    buf = io.BytesIO()
    mtime = time.time()     # the files' date for whoever unpacks them: a calendar date, not a timing
    with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=6) as tar:
        for name, data in files:
            info = tarfile.TarInfo(f"{folder}/{name}")
            info.size = len(data)
            info.mtime = mtime
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    return f"{folder}.tar.gz", buf.getvalue()


def _created(cal: ArmCalibration, when: datetime) -> datetime:
    if cal.created:
        try:
            return datetime.fromisoformat(cal.created.replace("Z", "+00:00"))
        except ValueError:
            pass
    return when
