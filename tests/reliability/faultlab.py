"""Fault injection on the simulated table's drivers, seen through the daemon's API.

A `Table` is a Companion on the simulated table with a hand-moved clock: `run(seconds)` polls the
sensor loop as its thread would (every 20 ms of clock time), so seconds of a fault take milliseconds.
Each `Fault` starts and clears one kind of trouble on one driver; the checks are the same for all:
the API keeps answering, the device is shown unavailable with its reason, the game goes on by the
page and the buttons, and the device comes back by itself once the trouble is over.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from companion.foundation.clock import Clock, FakeClock
from companion.config import parse
from companion.table.daemon import Companion
from companion.web import create_app

POLL_S = 0.02
RECOVERY_LIMIT_S = 70.0      # the longest a recovered device may stay marked unavailable (backoff is ≤ 30 s)


class Table:
    """A Companion on the simulated table. By default its clock is moved by hand and `run` polls the sensors
    itself; with live=True the clock is real, the sensor thread runs, and `run` just waits."""

    def __init__(self, db: Path, seed: int = 7, *, live: bool = False):
        cfg = dataclasses.replace(parse({"simulate": {"enabled": True, "demo": False, "seed": seed}}), store_path=db)
        self.live = live
        self.clock = Clock() if live else FakeClock()
        self.companion = Companion(cfg, clock=self.clock)
        self.sensors = self.companion.sensors
        self.client = create_app(self.companion).test_client()
        self.loop_errors: list[str] = []     # what escaped a poll (the sensor thread logs it and goes on)
        self._handler = _ErrorRecorder(self.loop_errors)
        logging.getLogger("companion.table.devices").addHandler(self._handler)
        if live:
            self.companion.start()

    def close(self) -> None:
        logging.getLogger("companion.table.devices").removeHandler(self._handler)
        self.companion.stop()

    def run(self, seconds: float, *, until: Callable[[], bool] | None = None) -> float:
        """Let `seconds` of clock time pass (or until `until()` holds); the time it took."""
        if self.live:
            start = time.monotonic()
            while time.monotonic() - start < seconds:
                time.sleep(POLL_S * 2)
                if until is not None and until():
                    break
            return time.monotonic() - start
        t = 0.0
        while t < seconds:
            self.clock.advance(POLL_S)
            try:
                self.sensors.poll()
            except Exception as exc:  # recorded, and reported by inject() as a problem
                self.loop_errors.append(f"{type(exc).__name__}: {exc}")
            t += POLL_S
            if until is not None and until():
                break
        return t

    def state(self) -> dict:
        r = self.client.get("/api/state")
        assert r.status_code == 200, r.data[:300]
        json.loads(r.data.decode(), parse_constant=_no_constants)   # strict JSON: no NaN or Infinity
        return r.get_json()

    def device(self, name: str) -> dict:
        return {d["name"]: d for d in self.state()["live"]["devices"]}[name]

    def ok(self, name: str) -> bool:
        devices = {d["name"]: d for d in self.companion.live()["devices"]}
        if name not in devices and name.startswith("button "):
            return True     # the sensor loop does not poll buttons: they are listed only while unavailable
        return devices[name]["ok"]

    def play_by_page_and_buttons(self) -> list[int]:
        """A roll and a move from the page, then a roll and a confirm from the button panel; the new seqs.

        The page's roll is skipped when the die already shows: a stuck button's long press may have undone
        the last move, leaving its roll to be played again."""
        c = self.client
        seqs = self._playing()
        view = self.state()["view"]
        if view["roll"] is None:
            r = c.post("/api/roll", json={"value": 2})
            assert r.status_code == 200, r.get_json()
            seqs.append(r.get_json()["seq"])
            view = r.get_json()["state"]["view"]
        r = c.post("/api/action", json={"action": {"type": "move", "move": view["moves"][0]["move"]}})
        assert r.status_code == 200, r.get_json()
        seqs.append(r.get_json()["seq"])
        seqs += self._playing()
        for button in ("roll", "next", "confirm"):
            r = c.post(f"/api/buttons/{button}", json={})
            assert r.status_code == 200, (button, r.get_json())
        seqs.append(self.companion.host.seq)
        return seqs

    def _playing(self) -> list[int]:
        """Start a new game from the page if this one is over; the seq of that new game, if any."""
        if not self.state()["view"]["over"]:
            return []
        r = self.client.post("/api/new_game", json={"game": "balance_duels", "options": {"players": 2}})
        assert r.status_code == 200, r.get_json()
        return [r.get_json()["seq"]]


class _ErrorRecorder(logging.Handler):
    """Collects the sensor loop's error records (a poll that raised) so a test can see them."""

    def __init__(self, sink: list[str]):
        super().__init__(logging.ERROR)
        self.sink = sink

    def emit(self, record: logging.LogRecord) -> None:
        self.sink.append(record.getMessage() + (f": {record.exc_info[1]!r}" if record.exc_info else ""))


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


@dataclass
class Fault:
    kind: str
    device: str                       # which device's health shows it
    reason_words: tuple[str, ...]     # what the reason must mention (any of them, case-insensitive)
    start: Callable[[Table], None]
    clear: Callable[[Table], None]
    duration_s: float = 3.0
    more: tuple[tuple[str, tuple[str, ...]], ...] = ()   # further (device, reason words) hit at the same time

    @property
    def hits(self) -> list[tuple[str, tuple[str, ...]]]:
        return [(self.device, self.reason_words), *self.more]


def _set(obj: Any, **values: Any) -> None:
    """Set a driver's fault knobs; a knob the driver does not have is an error, not a silent no-op."""
    for k, v in values.items():
        if not hasattr(obj, k):
            raise AttributeError(f"{type(obj).__name__} has no fault knob {k!r}")
        setattr(obj, k, v)


def _cell(t: Table, i: int = 0):
    return t.sensors.cells[i]


def _replace_read(obj: Any, attr: str, fn: Callable) -> None:
    """Swap a driver method for a faulty one; the original comes back on clear (instance attribute removed)."""
    setattr(obj, attr, fn)


def _restore_read(obj: Any, attr: str) -> None:
    if attr in vars(obj):
        delattr(obj, attr)


def _oserror(*args: Any, **kwargs: Any) -> Any:
    raise OSError(121, "Remote I/O error")


class _Drift:
    """A load cell whose reading runs away at a steady rate from the moment the fault starts.

    Not SimLoadCell's own `drift` knob: that keeps what has drifted when it is set back to 0, as a
    real cell does, while this fault must end with the cell reading right again.
    """

    def __init__(self, table: Table, counts_per_s: float):
        self.cell = _cell(table)
        self.read = self.cell.read            # the driver's own read, bound before it is replaced
        self.clock = table.clock
        self.start = table.clock.now()
        self.rate = counts_per_s

    def __call__(self, timeout: float = 0.5) -> int:
        return int(self.read(timeout) + self.rate * (self.clock.now() - self.start))


class _Chatter:
    """A tilt switch that flips on every read."""

    def __init__(self) -> None:
        self.state = False

    def __call__(self) -> bool:
        self.state = not self.state
        return self.state


def stuck_button(name: str) -> Fault:
    """A physical button held down (a box leaning on it) past the panel's stuck time, then let go."""
    return Fault(
        "button stuck pressed", f"button {name}", ("stuck",),
        lambda t: t.companion.buttons.stick(name),
        lambda t: t.companion.buttons.release(name), duration_s=12.0)


FAULTS: dict[str, Fault] = {
    "load cell stops answering": Fault(
        "load cell stops answering", "load0", ("no answer",),
        lambda t: _set(_cell(t), fault="no answer from the HX711 (DOUT stayed high)"),
        lambda t: _set(_cell(t), fault=None)),
    "load cell glitches": Fault(
        "load cell glitches", "load0", ("glitch",),
        lambda t: _set(_cell(t), glitch_rate=1.0),
        lambda t: _set(_cell(t), glitch_rate=0.0)),
    "load cell drifts fast": Fault(
        "load cell drifts fast", "load0", ("drift",),
        # 5 g/s on a 2150 counts/g cell
        lambda t: _replace_read(_cell(t), "read", _Drift(t, 10_750.0)),
        lambda t: _restore_read(_cell(t), "read"), duration_s=20.0),
    "accelerometer raises OSError": Fault(
        "accelerometer raises OSError", "accelerometer", ("remote i/o error", "oserror"),
        lambda t: _replace_read(t.sensors.accel, "read", _oserror),
        lambda t: _restore_read(t.sensors.accel, "read")),
    "accelerometer reads NaN": Fault(
        "accelerometer reads NaN", "accelerometer", ("nan", "finite", "invalid", "nonsense"),
        lambda t: _replace_read(t.sensors.accel, "read", lambda timeout=0.5: (math.nan, 0.0, 1.0)),
        lambda t: _restore_read(t.sensors.accel, "read")),
    "load cell returns a wrong type": Fault(
        "load cell returns a wrong type", "load0", ("type", "invalid", "nonsense", "number", "count"),
        lambda t: _replace_read(_cell(t), "read", lambda timeout=0.5: "0x7fffff"),
        lambda t: _restore_read(_cell(t), "read")),
    "tilt switch chatters": Fault(
        "tilt switch chatters", "tilt_switch", ("chatter", "bounc", "flicker"),
        lambda t: _replace_read(t.sensors.tilt, "is_closed", _Chatter()),
        lambda t: _restore_read(t.sensors.tilt, "is_closed")),
    "button stuck pressed": stuck_button("undo"),
}


@dataclass
class Outcome:
    kind: str
    served: bool = False
    shown: bool = False
    reason: str | None = None
    played: bool = False
    others_ok: bool = False
    recovered_after_s: float | None = None
    problems: list[str] = dataclasses.field(default_factory=list)

    @property
    def survived(self) -> bool:
        return not self.problems


def inject(table: Table, fault: Fault, *, duration_s: float | None = None) -> Outcome:
    """Run one fault through its whole life and say how the daemon fared."""
    out = Outcome(fault.kind)
    names = [d for d, _ in fault.hits]
    table.run(0.5)
    if not all(table.ok(d) for d in names):
        out.problems.append(f"{names} not all available before the fault")
        return out
    errors_before = len(table.loop_errors)
    fault.start(table)
    try:
        table.run(duration_s or fault.duration_s)
        out.served = True
        shown = []
        for device, words in fault.hits:
            dev = table.device(device)
            out.reason = out.reason or dev["reason"]
            ok = not dev["ok"] and bool(dev["reason"]) and any(w in dev["reason"].lower() for w in words)
            shown.append(ok)
            if not ok:
                out.problems.append(f"{device} is shown {'unavailable' if not dev['ok'] else 'available'} with "
                                    f"reason {dev['reason']!r}; expected unavailable with one of {words}")
        out.shown = all(shown)
        others = [d for d in table.state()["live"]["devices"] if d["name"] not in names]
        # a button listed here is unavailable, and has no samples: it fails the check instead of the lab
        fresh = {d["name"]: d.get("samples", 0) for d in others}
        # read on means their counts grow: in real time a busy machine may not run the sensor thread within one
        # short look, so look again for a few seconds before calling them stopped
        for _ in range(25):
            table.run(0.2)
            later = {d["name"]: d.get("samples", 0) for d in table.state()["live"]["devices"]
                     if d["name"] not in names}
            if all(later.get(n, 0) > fresh[n] for n in fresh):
                break
        out.others_ok = all(d["ok"] for d in others) and all(later.get(n, 0) > fresh[n] for n in fresh)
        if not out.others_ok:
            out.problems.append("the other devices stopped being read or were marked unavailable too")
        before = table.companion.host.seq
        seqs = table.play_by_page_and_buttons()
        out.played = table.companion.host.seq > before and seqs == sorted(seqs)
        if not out.played:
            out.problems.append("the game did not go on by the page and the buttons")
    finally:
        fault.clear(table)
    escaped = table.loop_errors[errors_before:]
    if escaped:
        out.problems.append(f"{len(escaped)} poll(s) of the sensor loop failed instead of marking the device: "
                            f"{escaped[0]}")
    took = table.run(RECOVERY_LIMIT_S, until=lambda: all(table.ok(d) for d in names))
    if all(table.ok(d) for d in names):
        out.recovered_after_s = round(took, 2)
    else:
        out.problems.append(f"{[d for d in names if not table.ok(d)]} did not come back within "
                            f"{RECOVERY_LIMIT_S} s after the fault ended")
    return out
