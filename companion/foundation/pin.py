"""The table PIN kept as a salted PBKDF2 hash (never in clear)."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets

HASH_PREFIX = "pbkdf2_sha256"
ITERATIONS = 120_000
# a stored hash outside these makes every PIN wrong for ever (0 iterations is refused by hashlib, as is a count
# past 2**31) or every login take minutes: at 120,000 a check takes 33 ms on a 2-core x86 and about 0.3 s on a Pi 3
MIN_ITERATIONS = 10_000
MAX_ITERATIONS = 1_000_000
_HASH = re.compile(r"pbkdf2_sha256\$([0-9]+)\$([0-9a-f]*)\$([0-9a-f]*)")


def hash_pin(pin: str, salt: bytes | None = None, iterations: int = ITERATIONS) -> str:
    salt = salt if salt is not None else secrets.token_bytes(16)
    digest = hashlib.pbkdf2_hmac("sha256", pin.encode(), salt, iterations)
    return f"{HASH_PREFIX}${iterations}${salt.hex()}${digest.hex()}"


def check_pin_text(pin: str) -> str | None:
    """Why a PIN (or stored hash) is unusable, or None."""
    if pin.startswith(HASH_PREFIX + "$"):
        again = "; make a new one with `companion hash-pin`"
        m = _HASH.fullmatch(pin)
        if m is None:
            return "looks like a PIN hash but is damaged (pbkdf2_sha256$ITERATIONS$SALT$DIGEST, lower-case hex)" + again
        count, salt, digest = m.group(1), m.group(2), m.group(3)
        if len(count) > 9 or not MIN_ITERATIONS <= int(count) <= MAX_ITERATIONS:
            return (f"the hash's iterations must be from {MIN_ITERATIONS:,} to {MAX_ITERATIONS:,}, not {count[:20]}"
                    + again)
        if not 16 <= len(salt) <= 128 or len(salt) % 2:
            return "the hash's salt must be 8 to 64 bytes (16 to 128 hex digits)" + again
        if len(digest) != 64:
            return f"the hash's digest must be a SHA-256 one (64 hex digits), not {len(digest)} digits" + again
        return None
    if not (pin.isdigit() and 4 <= len(pin) <= 12):
        return "must be 4 to 12 digits (or a hash from `companion hash-pin`)"
    return None


def verify_pin(pin: str, stored: str) -> bool:
    _, iterations, salt, digest = stored.split("$")
    candidate = hashlib.pbkdf2_hmac("sha256", pin.encode(), bytes.fromhex(salt), int(iterations))
    return hmac.compare_digest(candidate.hex(), digest)
