"""The flight recorder: the last minutes of the table, in RAM, in the formats `companion replay` reads.

It keeps every sample the arm's follower was given (time, sensor, value, packed into
arrays: 17 bytes a row) and every input from the table — page and button actions, rolls,
undo, new games, and the answers to "Which move was made?" as the move chosen — plus what
the daemon did with them (its events, questions and notices, to compare a replay with).
All of it is stamped on the table clock (companion/foundation/table_time.py) under the table lock.

Memory is bounded two ways: the newest `window_s` seconds, and at most `max_bytes`. Time
is cut into chunks of `CHUNK_S`; each remembers where the game stood when it began (its
game and the last event's seq), so a window that no longer reaches back to the start of
the game can still be replayed: the game's events up to then come first.

For the follower to be replayed exactly from a window's start, the window starts where the
daemon restarted its follower from its memory (companion/sensing/memory.py; the arm link
does so every quarter of the window, at a quiet moment). Trimming drops the chunks before
the oldest such restart that keeps the window within bounds. Only if the size bound leaves
no restart to start from does a window start elsewhere; it is then marked as not exact.

Nothing is written anywhere: `snapshot()` copies the window out for a bundle.
"""

from __future__ import annotations

import json
import threading
from array import array
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

from companion.recorder.inputs import Input

WINDOW_S = 20 * 60.0
MAX_BYTES = 16 * 1024 * 1024
CHUNK_S = 10.0
ROW_BYTES = 8 + 8 + 1               # time and value as doubles, the sensor as one byte
ITEM_OVERHEAD = 120                 # a kept input or output line, besides its JSON text
MAX_SENSORS = 255


@dataclass(frozen=True)
class Checkpoint:
    game_id: int
    seq: int                         # the last event of that game when the chunk began


class _Chunk:
    __slots__ = ("t0", "t1", "checkpoint", "restart", "times", "values", "sensors", "inputs", "outputs", "bytes")

    def __init__(self, t0: float, checkpoint: Checkpoint, restart: bool = False):
        self.t0 = t0
        self.t1 = t0
        self.checkpoint = checkpoint
        self.restart = restart            # it begins with a follower restart: a replay can start here exactly
        self.times = array("d")
        self.values = array("d")
        self.sensors = bytearray()
        self.inputs: list[Input] = []
        self.outputs: list[dict] = []
        self.bytes = 0


@dataclass
class Recording:
    """A copy of the window: rows, inputs and the daemon's own lines, oldest first."""

    start: float                                  # table time of the window's first item
    end: float
    checkpoint: Checkpoint | None                 # where the game stood at `start`
    sensor_names: list[str]
    chunks: list[tuple[array, array, bytes]] = field(default_factory=list)
    inputs: list[Input] = field(default_factory=list)
    outputs: list[dict] = field(default_factory=list)
    trimmed: bool = False                         # older table time was let go
    exact: bool = True                            # it starts at the daemon's start or at a follower restart

    @property
    def rows(self) -> int:
        return sum(len(t) for t, _, _ in self.chunks)

    def iter_rows(self):
        names = self.sensor_names
        for times, values, sensors in self.chunks:
            for t, v, s in zip(times, values, sensors):
                yield t, names[s], v


class FlightRecorder:
    """`checkpoint()` says where the game and the follower stand now (called under the table lock)."""

    def __init__(self, checkpoint: Callable[[], Checkpoint], *, window_s: float = WINDOW_S,
                 max_bytes: int = MAX_BYTES, chunk_s: float = CHUNK_S):
        if not window_s > 0 or not max_bytes > 0:
            raise ValueError("the flight recorder needs a positive window and size")
        self.window_s = float(window_s)
        self.max_bytes = int(max_bytes)
        self.chunk_s = float(chunk_s)
        self._checkpoint = checkpoint
        self._lock = threading.Lock()
        self._chunks: deque[_Chunk] = deque()
        self._bytes = 0
        self._names: list[str] = []
        self._index: dict[str, int] = {}
        self.trimmed = False
        self.exact = True
        self.dropped_rows = 0

    # --- in (under the table lock)
    def _chunk(self, t: float) -> _Chunk:
        chunks = self._chunks
        if not chunks or t - chunks[-1].t0 >= self.chunk_s:
            chunks.append(_Chunk(t, self._checkpoint()))
            self._trim()
        return chunks[-1]

    def restart(self, item: Input) -> None:
        """The follower restarted from its memory (`item` is its inputs line): a window may begin here."""
        with self._lock:
            self._chunks.append(_Chunk(item.t, self._checkpoint(), restart=True))
            self._item(item.t, "inputs", item)
            self._trim()

    def row(self, t: float, sensor: str, value: float) -> None:
        with self._lock:
            i = self._index.get(sensor)
            if i is None:
                if len(self._names) >= MAX_SENSORS:
                    self.dropped_rows += 1
                    return
                i = self._index[sensor] = len(self._names)
                self._names.append(sensor)
            c = self._chunk(t)
            c.times.append(t)
            c.values.append(value)
            c.sensors.append(i)
            c.t1 = t
            c.bytes += ROW_BYTES
            self._bytes += ROW_BYTES
            if self._bytes > self.max_bytes:
                self._trim()

    def _item(self, t: float, kind: str, item: Any) -> None:
        size = ITEM_OVERHEAD + len(json.dumps(item.to_json() if isinstance(item, Input) else item, default=str))
        c = self._chunk(t)
        getattr(c, kind).append(item)
        c.t1 = max(c.t1, t)
        c.bytes += size
        self._bytes += size

    def input(self, item: Input) -> None:
        with self._lock:
            self._item(item.t, "inputs", item)

    def output(self, t: float, line: dict) -> None:
        """What the daemon did (an event, a question, a notice), as `companion replay` prints it."""
        with self._lock:
            self._item(t, "outputs", line)

    def _trim(self) -> None:
        chunks = self._chunks
        if len(chunks) < 2:
            return
        newest = chunks[-1].t1
        if newest - chunks[0].t0 <= self.window_s and self._bytes <= self.max_bytes:
            return
        # where a window may start (a follower restart), with the table time and the bytes kept from there
        starts = []
        rest = self._bytes
        for k, c in enumerate(chunks):
            if k and c.restart:
                starts.append((k, newest - c.t0, rest))
            rest -= c.bytes
        if self._bytes > self.max_bytes:
            fit = [k for k, _, kept in starts if kept <= self.max_bytes]
            if fit:
                self._cut(fit[0], exact=True)
            else:
                # no restart to start from within the size: let the oldest go; the window is no longer exact
                k = 0
                rest = self._bytes
                while k < len(chunks) - 1 and rest > self.max_bytes:
                    rest -= chunks[k].bytes
                    k += 1
                self._cut(k, exact=chunks[k].restart)
            return
        within = [(k, span) for k, span, _ in starts if span <= self.window_s]
        if within and within[0][1] >= self.window_s / 2:
            self._cut(within[0][0], exact=True)
        elif newest - chunks[0].t0 > 2 * self.window_s:
            # restarts have been rare (an arm seldom at rest): the oldest within twice the window
            twice = [k for k, span, _ in starts if span <= 2 * self.window_s]
            if twice:
                self._cut(twice[0], exact=True)
        # else: a little longer than the window until a restart comes that leaves at least half of it

    def _cut(self, k: int, *, exact: bool) -> None:
        for _ in range(k):
            self._bytes -= self._chunks.popleft().bytes
        if k:
            self.trimmed = True
            self.exact = exact

    # --- out
    @property
    def bytes(self) -> int:
        return self._bytes

    def status(self) -> dict:
        """How much it holds now: table seconds and kB (for the page and the load bench)."""
        with self._lock:
            span = self._chunks[-1].t1 - self._chunks[0].t0 if self._chunks else 0.0
            return {"seconds": round(span, 1), "kb": round(self._bytes / 1024), "exact": self.exact}

    def snapshot(self) -> Recording:
        with self._lock:
            chunks = list(self._chunks)
            if not chunks:
                return Recording(0.0, 0.0, None, list(self._names), trimmed=self.trimmed)
            rec = Recording(chunks[0].t0, chunks[-1].t1, chunks[0].checkpoint, list(self._names),
                            trimmed=self.trimmed, exact=self.exact)
            for c in chunks:
                rec.chunks.append((array("d", c.times), array("d", c.values), bytes(c.sensors)))
                rec.inputs.extend(c.inputs)
                rec.outputs.extend(c.outputs)
        return rec
