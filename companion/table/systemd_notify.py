"""Talking to systemd (sd_notify) with the standard library, and a watchdog that is fed only while alive.

`Notifier` sends READY=1, STATUS=…, WATCHDOG=1 and STOPPING=1 as datagrams to the
socket systemd names in NOTIFY_SOCKET (a path, or an abstract socket written with a
leading '@'). Without NOTIFY_SOCKET (run by hand, in tests) it does nothing.

`Watchdog` is what the daemon's main loop calls: `kick()` sends WATCHDOG=1 only while
every liveness check passes (the sensor thread is alive and polling, the store thread
is alive, …). When one stops, the pings stop, and systemd restarts the service after
WatchdogSec= — a stalled daemon is restarted instead of showing a frozen page.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from typing import Callable, Mapping

from companion.foundation.clock import Clock

log = logging.getLogger(__name__)


def socket_address(value: str) -> str | bytes:
    """NOTIFY_SOCKET as an address for socket.sendto: '@name' is the abstract socket '\\0name'."""
    if value.startswith("@"):
        return b"\0" + value[1:].encode()
    return value


def watchdog_interval(environ: Mapping[str, str] | None = None, pid: int | None = None) -> float | None:
    """systemd's watchdog timeout in seconds (WatchdogSec=), or None when no watchdog is asked of this process."""
    env = os.environ if environ is None else environ
    raw = env.get("WATCHDOG_USEC", "").strip()
    if not raw:
        return None
    try:
        usec = int(raw)
    except ValueError:
        log.warning("WATCHDOG_USEC=%r is not a number: no watchdog", raw)
        return None
    if usec <= 0:
        return None
    owner = env.get("WATCHDOG_PID", "").strip()
    if owner:
        # systemd names the process it watches; a child that inherited the variables is not it
        try:
            if int(owner) != (os.getpid() if pid is None else pid):
                return None
        except ValueError:
            log.warning("WATCHDOG_PID=%r is not a number: no watchdog", owner)
            return None
    return usec / 1_000_000


class Notifier:
    def __init__(self, address: str | None = None):
        """address: a NOTIFY_SOCKET value; by default the environment's (None: notifications are off)."""
        value = os.environ.get("NOTIFY_SOCKET") if address is None else address
        self.address = socket_address(value) if value else None
        self._sock: socket.socket | None = None
        self._lock = threading.Lock()
        self._warned = False

    @property
    def enabled(self) -> bool:
        return self.address is not None

    def send(self, *fields: str) -> bool:
        """Send one notification of KEY=VALUE fields; True when it went out."""
        if self.address is None:
            return False
        data = "\n".join(fields).encode()
        with self._lock:
            try:
                if self._sock is None:
                    self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
                self._sock.sendto(data, self.address)
            except OSError as exc:
                # systemd gone or the socket unreachable: the service keeps running; say so once
                if not self._warned:
                    log.warning("cannot notify systemd at %r: %s", self.address, exc)
                    self._warned = True
                return False
        self._warned = False
        return True

    def ready(self, status: str | None = None) -> bool:
        return self.send("READY=1", *([f"STATUS={status}"] if status else []))

    def status(self, text: str) -> bool:
        return self.send(f"STATUS={text}")

    def watchdog(self) -> bool:
        return self.send("WATCHDOG=1")

    def stopping(self) -> bool:
        return self.send("STOPPING=1")

    def close(self) -> None:
        with self._lock:
            if self._sock is not None:
                self._sock.close()
                self._sock = None


def heartbeat_check(beat: Callable[[], float], max_age_s: float, clock: Clock | None = None) -> Callable[[], bool]:
    """A liveness check: the loop whose last beat (a monotonic time) `beat()` returns ran within max_age_s."""
    clock = clock or Clock()
    return lambda: clock.now() - beat() <= max_age_s


class Watchdog:
    """Feeds systemd's watchdog from the main loop, only while every liveness check passes.

    checks: name -> callable returning True while that part is alive. `kick()` is cheap:
    call it every loop round; it sends WATCHDOG=1 at most every `interval_s` (by default
    half of WatchdogSec=, as systemd recommends). With no watchdog asked of the process
    (no WATCHDOG_USEC) and no interval given, it only watches and reports.
    """

    def __init__(self, checks: Mapping[str, Callable[[], bool]], *, notifier: Notifier | None = None,
                 interval_s: float | None = None, clock: Clock | None = None):
        self.checks = dict(checks)
        self.notifier = notifier or Notifier()
        if interval_s is None:
            timeout = watchdog_interval()
            interval_s = timeout / 2 if timeout is not None else None
        self.interval_s = interval_s
        self.clock = clock or Clock()
        self.failing: list[str] = []
        self._last_sent: float | None = None
        self.sent = 0

    @property
    def enabled(self) -> bool:
        return self.notifier.enabled and self.interval_s is not None

    def dead(self) -> list[str]:
        """Names of the checks that fail now (a check that raises counts as failing, and is logged)."""
        out = []
        for name, check in self.checks.items():
            try:
                ok = bool(check())
            except Exception:  # a broken check means we cannot vouch for that part: withhold the ping
                log.exception("watchdog check %r failed", name)
                ok = False
            if not ok:
                out.append(name)
        return out

    def kick(self) -> bool:
        """One round: True when WATCHDOG=1 was sent now."""
        failing = self.dead()
        if failing != self.failing:
            if failing:
                log.error("not feeding the watchdog: %s stalled", ", ".join(failing))
                self.notifier.status(f"stalled: {', '.join(failing)}")
            else:
                log.info("all parts alive again: feeding the watchdog")
                self.notifier.status("running")
            self.failing = failing
        if failing or not self.enabled:
            return False
        now = self.clock.now()
        if self._last_sent is not None and now - self._last_sent < self.interval_s:
            return False
        if self.notifier.watchdog():
            self._last_sent = now
            self.sent += 1
            return True
        return False
