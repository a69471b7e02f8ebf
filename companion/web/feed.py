"""The live stream's messages, each encoded once and shared by every open page.

With twenty tablets on the stream, encoding a change per tablet meant twenty copies of the
same few kilobytes of JSON per change, made on twenty threads; over an evening the allocator
kept the freed copies and the daemon's memory crept up. Here each message is turned into
bytes once, and every stream writes those same bytes.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Any, Callable

from companion.foundation import strict_json
from companion.games.base import hides_cash

KEPT_EVENT_MESSAGES = 512   # more than the host keeps for resuming, so a catching-up page never re-encodes
LIVE_MAX_AGE_S = 0.2        # streams ask for live readings on their own beat; one encoding serves all of them


def sse(payload: Any, *, event: str, ev_id: int | None = None) -> bytes:
    """One Server-Sent Events message."""
    head = f"id: {ev_id}\n" if ev_id is not None else ""
    return f"{head}event: {event}\ndata: {strict_json.dumps(payload, separators=(',', ':'))}\n\n".encode()


class StreamFeed:
    """What an event stream sends: the state, the events after a seq, live readings; as shared bytes.

    `host` is the GameHost (snapshot(), events_after()); `live` gives the live readings dict.
    """

    def __init__(self, host, live: Callable[[], dict], *, clock: Callable[[], float] = time.monotonic):
        self.host = host
        self._live_source = live
        self._clock = clock
        self._lock = threading.Lock()
        self._events: OrderedDict[int, bytes] = OrderedDict()   # seq -> the event alone
        self._state: tuple[Any, int | None, bytes] | None = None  # (snapshot, seq of its event, message)
        self._live: tuple[float, bytes] | None = None
        self.encoded = 0    # messages encoded since start: the tests' proof that they are shared

    def state(self) -> tuple[int, bytes]:
        """The newest state on its own (a page that just connected, or is too far behind): (seq, message)."""
        snap = self.host.snapshot()
        return snap["seq"], self._with_state(snap, None)

    def after(self, seq: int) -> tuple[int, list[bytes]] | None:
        """Messages for every event after seq, the newest carrying the state: (the new seq, messages).

        None when seq is too old to resume from memory: send `state()` instead."""
        if seq > self.host.seq:
            return None     # a page from before a restore, or from another database: it needs the whole state
        missed = self.host.events_after(seq)
        if missed is None:
            return None
        if not missed:
            return seq, []
        snap = self.host.snapshot()
        # while some cash is hidden every stream sends events in outline, as /api/events does for a reader
        # without the PIN: the stream is one set of bytes for all pages, and the page reads only the state
        hidden = hides_cash(snap.get("view"))
        out = [self._event_alone(ev, hidden) for ev in missed[:-1]]
        out.append(self._with_state(snap, missed[-1]))
        return missed[-1].seq, out

    def live(self) -> bytes:
        now = self._clock()
        with self._lock:
            if self._live is None or now - self._live[0] >= LIVE_MAX_AGE_S:
                self._live = (now, sse(self._live_source(), event="live"))
                self.encoded += 1
            return self._live[1]

    # --- the cache
    def _event_alone(self, ev, hidden: bool) -> bytes:
        with self._lock:
            text = self._events.get(ev.seq)
            if text is None:
                shown = ev.outline() if hidden else ev.to_dict()
                text = self._events[ev.seq] = sse({"event": shown, "state": None}, event="state", ev_id=ev.seq)
                self.encoded += 1
                while len(self._events) > KEPT_EVENT_MESSAGES:
                    self._events.popitem(last=False)
            return text

    def _with_state(self, snap: dict, ev) -> bytes:
        ev_seq = None if ev is None else ev.seq
        with self._lock:
            # the host builds a new snapshot dict on every change, so identity says "same state"
            if self._state is not None and self._state[0] is snap and self._state[1] == ev_seq:
                return self._state[2]
            shown = None if ev is None else ev.outline() if hides_cash(snap.get("view")) else ev.to_dict()
            payload = {"event": shown, "state": {**snap, "live": self._live_source()}}
            text = sse(payload, event="state", ev_id=snap["seq"] if ev is None else ev.seq)
            self._state = (snap, ev_seq, text)
            self.encoded += 1
            return text
