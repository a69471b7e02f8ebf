"""The table PIN: viewing is open, every change needs a session opened with the PIN.

A session is a random cookie (HttpOnly, SameSite=Strict) plus a CSRF token that
each change repeats in the X-CSRF-Token header. The PIN itself is kept only as a
salted PBKDF2 hash.

Wrong PINs are slowed down in two ways, both decided before the slow hash is
computed, under one lock, so guesses sent at once are counted as surely as guesses
sent one by one:

- per place: each client address (or tablet that logged in before, below) has a few
  free tries, then a wait that doubles with every wrong PIN. A stranger's guesses
  make only the stranger wait; a player who mistypes elsewhere is not affected.
- for the whole table: all wrong PINs together are rationed (a small burst, then
  TABLE_GUESSES_PER_HOUR), so that many addresses at once cannot add up their free
  tries. At that rate the 10,000 four-digit PINs take over a month to try.

The table's ration could lock out a new tablet while someone guesses from many
addresses; a tablet that has logged in before carries a device cookie (an HMAC of a
random id under a key from a secret kept in the state directory beside the PIN it
was made under, so it survives restarts and a new PIN revokes it) and is rationed
on its own, never by the table's ration.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import secrets
import threading
from dataclasses import dataclass
from pathlib import Path

from companion.foundation.atomic import write_atomic
from companion.foundation.clock import Clock
from companion.foundation.pin import verify_pin

log = logging.getLogger(__name__)
DEVICE_KEY_FILE = "device-key.json"

COOKIE = "companion_session"
DEVICE_COOKIE = "companion_device"
SESSION_S = 12 * 3600.0
DEVICE_S = 365 * 24 * 3600.0
FREE_TRIES = 3                  # wrong PINs from one place before any wait: a mistyping player never waits
MAX_WAIT_S = 3600.0             # one place's wait, doubling with each wrong PIN, grows to this at most
TABLE_BURST = 30                # wrong PINs the whole table takes at once ...
TABLE_GUESSES_PER_HOUR = 12.0   # ... and then per hour: (10,000 - 30) / 12 h = 34.6 days for four digits
FORGET_S = 24 * 3600.0          # a place with no wrong PIN for this long starts afresh
MAX_PLACES = 4096               # places remembered; past it the longest-quiet are forgotten (the ration still holds)


class Locked(Exception):
    def __init__(self, retry_after: float, message: str):
        super().__init__(f"{message}; try again in {int(retry_after) + 1} s")
        self.retry_after = retry_after


@dataclass
class Session:
    csrf: str
    expires: float


@dataclass
class _Place:
    """One client address's (or device's) wrong PINs in a row, and until when it must wait."""
    failures: int = 0
    wait_until: float = 0.0
    last: float = 0.0


@dataclass(frozen=True)
class Login:
    token: str
    csrf: str
    device: str     # the device cookie to set (the same one again when the tablet sent a good one)


def wait_after(failures: int) -> float:
    """Seconds one place waits after its `failures`-th wrong PIN in a row."""
    if failures < FREE_TRIES:
        return 0.0
    return min(MAX_WAIT_S, 2.0 ** min(failures - FREE_TRIES + 1, 32))


class _Ration:
    """A token bucket of wrong PINs for the whole table (the clock's seconds)."""

    def __init__(self, burst: float, per_hour: float, now: float):
        self.burst, self.rate = burst, per_hour / 3600.0
        self.tokens, self.at = burst, now

    def _refill(self, now: float) -> None:
        # max(): a clock that seemed to go back must not drain the bucket
        self.tokens = min(self.burst, self.tokens + max(0.0, now - self.at) * self.rate)
        self.at = max(self.at, now)

    def take(self, now: float) -> float:
        """0 when a guess may be checked (and its token is taken), else the seconds until one may."""
        self._refill(now)
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return 0.0
        return (1.0 - self.tokens) / self.rate

    def give_back(self, now: float) -> None:
        self._refill(now)
        self.tokens = min(self.burst, self.tokens + 1.0)


def device_secret(state_dir: str | Path, pin_hash: str | None, pin_plain: str | None = None) -> bytes | None:
    """The device cookies' secret, kept in `state_dir` for as long as the PIN stays the same.

    A PIN written plain in the config is hashed with a fresh salt at every start, so a key derived
    from that hash changed at every restart and every tablet's cookie died with it (then a known
    tablet counted as a stranger). The secret is therefore random and stored once (mode 0600, written
    atomically) with the PIN hash it was made under: the same PIN at the next start (checked against
    that hash when the PIN is plain, compared as text when the config holds a hash) finds it again;
    a new PIN gets a new secret, which revokes every cookie. None when the file cannot be kept
    (the caller then derives the key from the PIN hash, as before).
    """
    if not pin_hash:
        return None
    path = Path(state_dir) / DEVICE_KEY_FILE
    try:
        kept = json.loads(path.read_text(encoding="utf-8"))
        stored, secret = kept["pin"], bytes.fromhex(kept["secret"])
        same = verify_pin(pin_plain, stored) if pin_plain is not None else hmac.compare_digest(stored, pin_hash)
        if same and len(secret) >= 16:
            return secret
    except FileNotFoundError:
        pass
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        log.warning("%s: unreadable, making a new device key (tablets log in again): %s", path, exc)
    secret = secrets.token_bytes(32)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps({"pin": pin_hash, "secret": secret.hex()}) + "\n", mode=0o600)
    except OSError as exc:
        log.warning("%s: cannot keep the device key (tablets log in again after a restart): %s", path, exc)
        return None
    return secret


class PinGuard:
    def __init__(self, pin_hash: str | None, clock: Clock | None = None, device_secret: bytes | None = None):
        self.pin_hash = pin_hash
        self.clock = clock or Clock()
        self._lock = threading.Lock()
        self._sessions: dict[str, Session] = {}
        self._places: dict[str, _Place] = {}
        self._ration = _Ration(TABLE_BURST, TABLE_GUESSES_PER_HOUR, self.clock.now())
        # device cookies stay valid across restarts and die with the PIN they were issued under: the kept
        # secret (see device_secret) when there is one, else the PIN hash itself (stable only when the
        # config holds a hash)
        base = device_secret if device_secret is not None else (pin_hash or "").encode()
        self._device_key = hashlib.sha256(b"companion device\0" + base).digest()

    @property
    def required(self) -> bool:
        return self.pin_hash is not None

    # --- device cookies
    def _sign(self, device_id: str) -> str:
        return hmac.new(self._device_key, device_id.encode(), hashlib.sha256).hexdigest()[:32]

    def known_device(self, cookie: str | None) -> str | None:
        """The device id of a device cookie this table issued, else None."""
        if not cookie or cookie.count(".") != 1 or len(cookie) > 128:
            return None
        device_id, mac = cookie.split(".")
        return device_id if hmac.compare_digest(mac, self._sign(device_id)) else None

    def _device_cookie(self, device_id: str | None) -> str:
        device_id = device_id or secrets.token_urlsafe(12)
        return f"{device_id}.{self._sign(device_id)}"

    # --- logging in
    def login(self, pin: object, client: str = "", device: str | None = None) -> Login:
        """A new session for the right PIN from `client` (its address) with `device` (its device cookie, if any).

        Locked when that place, or the table as a whole, must wait first; ValueError for a wrong PIN.
        """
        device_id = self.known_device(device)
        key = f"device:{device_id}" if device_id else f"addr:{client}"
        now = self.clock.now()
        with self._lock:
            place = self._place(key, now)
            if now < place.wait_until:
                raise Locked(place.wait_until - now, "too many wrong PINs from this tablet")
            if device_id is None:
                wait = self._ration.take(now)
                if wait:
                    raise Locked(wait, "too many wrong PINs on this table lately (someone may be guessing; a tablet "
                                       "that has logged in before is not held back)")
            # the guess counts as wrong until the hash says otherwise: guesses sent at once each see the ones before
            place.failures += 1
            place.last = now
            place.wait_until = max(place.wait_until, now + wait_after(place.failures))
        right = isinstance(pin, str) and bool(self.pin_hash) and verify_pin(pin, self.pin_hash)
        if not right:
            raise ValueError("wrong PIN")
        token, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(24)
        with self._lock:
            place.failures, place.wait_until = 0, 0.0
            if device_id is None:
                self._ration.give_back(now)
            self._sessions = {k: s for k, s in self._sessions.items() if s.expires > now}
            self._sessions[token] = Session(csrf, now + SESSION_S)
        return Login(token, csrf, self._device_cookie(device_id))

    def _place(self, key: str, now: float) -> _Place:
        place = self._places.get(key)
        if place is not None and now - place.last < FORGET_S:
            return place
        if len(self._places) >= MAX_PLACES:
            quiet = sorted(self._places, key=lambda k: self._places[k].last)
            for k in quiet[:len(quiet) // 4]:
                del self._places[k]
        place = self._places[key] = _Place(last=now)
        return place

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
