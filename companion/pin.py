"""The table PIN kept as a salted PBKDF2 hash (never in clear)."""

from __future__ import annotations

import hashlib
import hmac
import secrets

HASH_PREFIX = "pbkdf2_sha256"
ITERATIONS = 120_000


def hash_pin(pin: str, salt: bytes | None = None, iterations: int = ITERATIONS) -> str:
    salt = salt if salt is not None else secrets.token_bytes(16)
    digest = hashlib.pbkdf2_hmac("sha256", pin.encode(), salt, iterations)
    return f"{HASH_PREFIX}${iterations}${salt.hex()}${digest.hex()}"


def check_pin_text(pin: str) -> str | None:
    """Why a PIN (or stored hash) is unusable, or None."""
    if pin.startswith(HASH_PREFIX + "$"):
        parts = pin.split("$")
        try:
            ok = len(parts) == 4 and parts[1].isdigit() and bytes.fromhex(parts[2]) and bytes.fromhex(parts[3])
        except ValueError:
            ok = False
        return None if ok else "looks like a PIN hash but is damaged; make a new one with `companion hash-pin`"
    if not (pin.isdigit() and 4 <= len(pin) <= 12):
        return "must be 4 to 12 digits (or a hash from `companion hash-pin`)"
    return None


def verify_pin(pin: str, stored: str) -> bool:
    _, iterations, salt, digest = stored.split("$")
    candidate = hashlib.pbkdf2_hmac("sha256", pin.encode(), bytes.fromhex(salt), int(iterations))
    return hmac.compare_digest(candidate.hex(), digest)
