"""The table PIN: viewing is open, every change needs a session opened with the PIN.

A session is a random cookie (HttpOnly, SameSite=Strict) plus a CSRF token that
each change repeats in the X-CSRF-Token header. Wrong PINs lock the door for a
growing delay. The PIN itself is kept only as a salted PBKDF2 hash.
"""

from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass

from companion.clock import Clock
from companion.pin import verify_pin

COOKIE = "companion_session"
SESSION_S = 12 * 3600.0
FREE_TRIES = 3
MAX_LOCK_S = 300.0


class Locked(Exception):
    def __init__(self, retry_after: float):
        super().__init__(f"too many wrong PINs; try again in {int(retry_after) + 1} s")
        self.retry_after = retry_after


@dataclass
class Session:
    csrf: str
    expires: float


class PinGuard:
    def __init__(self, pin_hash: str | None, clock: Clock | None = None):
        self.pin_hash = pin_hash
        self.clock = clock or Clock()
        self._lock = threading.Lock()
        self._sessions: dict[str, Session] = {}
        self._failures = 0
        self._locked_until = 0.0

    @property
    def required(self) -> bool:
        return self.pin_hash is not None

    def login(self, pin: object) -> tuple[str, str]:
        """(session token, csrf token) for the right PIN; Locked or ValueError otherwise."""
        now = self.clock.now()
        with self._lock:
            if now < self._locked_until:
                raise Locked(self._locked_until - now)
        if not isinstance(pin, str) or not self.pin_hash or not verify_pin(pin, self.pin_hash):
            with self._lock:
                self._failures += 1
                if self._failures >= FREE_TRIES:
                    # each wrong PIN past the free tries doubles the wait
                    delay = min(MAX_LOCK_S, 2.0 ** (self._failures - FREE_TRIES + 1))
                    self._locked_until = now + delay
            raise ValueError("wrong PIN")
        token, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(24)
        with self._lock:
            self._failures = 0
            self._locked_until = 0.0
            self._sessions = {k: s for k, s in self._sessions.items() if s.expires > now}
            self._sessions[token] = Session(csrf, now + SESSION_S)
        return token, csrf

    def session(self, token: str | None) -> Session | None:
        if not token:
            return None
        with self._lock:
            s = self._sessions.get(token)
            if s is None or s.expires <= self.clock.now():
                return None
            return s

    def logout(self, token: str | None) -> None:
        with self._lock:
            self._sessions.pop(token or "", None)
