"""Keeping hardware calls bounded: backoff between retries, a worker thread per device, sample counters.

A read from a real device can block in the kernel (an I2C transfer on a hung bus) or
wait for a chip that is gone. The daemon's loop must never wait on it for longer
than the read's deadline, so blocking calls run on the device's own worker thread
and the caller gives up at the deadline; the worker refuses new work until the
stuck call returns, so calls never pile up behind it.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections import deque
from typing import Any, Callable

from companion.foundation.clock import Clock
from companion.hardware.faults import DeviceFault

log = logging.getLogger(__name__)


class Backoff:
    """When to try again: the delay doubles after each failure up to a cap, and resets on success."""

    def __init__(self, start_s: float = 1.0, max_s: float = 30.0):
        self.start_s = start_s
        self.max_s = max_s
        self.delay = start_s
        self.retry_at = float("-inf")

    def ready(self, now: float) -> bool:
        return now >= self.retry_at

    def failed(self, now: float) -> None:
        self.retry_at = now + self.delay
        self.delay = min(self.max_s, self.delay * 2)

    def succeeded(self) -> None:
        self.delay = self.start_s
        self.retry_at = float("-inf")


class _Job:
    def __init__(self, fn: Callable[[], Any]):
        self.fn = fn
        self.done = threading.Event()
        self.result: Any = None
        self.error: BaseException | None = None


class DeadlineWorker:
    """Runs one device's blocking calls on a daemon thread; `call` gives up at its timeout."""

    def __init__(self, name: str, *, clock: Clock | None = None):
        self.name = name
        self.clock = clock or Clock()
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._pending: _Job | None = None
        self._pending_since = 0.0

    def call(self, fn: Callable[[], Any], timeout: float) -> Any:
        with self._lock:
            pending = self._pending
            if pending is not None and not pending.done.is_set():
                stuck = self.clock.now() - self._pending_since
                raise DeviceFault(self.name, f"an earlier call has not returned for {stuck:.1f} s",
                                  "the bus or chip is hung: check its wiring and power; a reboot clears a stuck bus")
            job = _Job(fn)
            self._pending = job
            self._pending_since = self.clock.now()
            if self._thread is None or not self._thread.is_alive():
                # a daemon thread: a call stuck in the kernel must not keep the process from exiting
                self._thread = threading.Thread(target=self._run, name=f"dev-{self.name}", daemon=True)
                self._thread.start()
            self._jobs.put(job)
        if not job.done.wait(max(0.0, timeout)):
            raise DeviceFault(self.name, f"no answer within {timeout:.2f} s",
                              "check the device's wiring and power")
        if job.error is not None:
            raise job.error
        return job.result

    def _run(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            try:
                job.result = job.fn()
            except BaseException as exc:  # handed to the caller, which raises it in its own thread
                job.error = exc
            finally:
                job.done.set()

    def close(self) -> None:
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                self._jobs.put(None)
            self._thread = None


class SampleStats:
    """Per-device health counters: samples (and their rate), glitches, saturations, timeouts, resets."""

    WINDOW_S = 5.0

    def __init__(self, clock: Clock):
        self.clock = clock
        self.samples = 0
        self.glitches = 0
        self.saturations = 0
        self.timeouts = 0
        self.resets = 0
        self._times: deque[float] = deque()
        self._lock = threading.Lock()

    def sample(self) -> None:
        now = self.clock.now()
        with self._lock:
            self.samples += 1
            self._times.append(now)
            while self._times and now - self._times[0] > self.WINDOW_S:
                self._times.popleft()

    def samples_per_s(self) -> float:
        with self._lock:
            if len(self._times) < 2:
                return 0.0
            span = self._times[-1] - self._times[0]
            return (len(self._times) - 1) / span if span > 0 else 0.0

    def as_dict(self) -> dict:
        return {"samples": self.samples, "samples_per_s": round(self.samples_per_s(), 1),
                "glitches": self.glitches, "saturations": self.saturations,
                "timeouts": self.timeouts, "resets": self.resets}
