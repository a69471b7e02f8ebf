"""What keeps other web pages out of the companion's apps (the table page and the hall scoreboard).

A page from anywhere, open in a browser on the table's Wi-Fi, can send requests to the Pi. Three answers:

- Host: a request must name the daemon by one of its own names (an IP address, localhost, the machine's
  hostname or <hostname>.local, or a name the config adds). Anything else is a DNS-rebinding page whose own
  name now points at the Pi, and gets 421: it never sees the state nor changes it.
- Origin: a change (any method but GET and HEAD) sent from another origin (Origin not this very
  scheme://host:port, or Sec-Fetch-Site: cross-site) is refused with 403, PIN or no PIN.
- Content-Type: the table's POSTs must say application/json. A plain form or a no-cors fetch can only send
  text/plain, forms or multipart bodies; a JSON content type makes the browser ask first (CORS preflight),
  which the daemon never grants.

Every answer also says how a browser may use it: scripts, styles and connections only from the daemon itself,
never inside another site's frame (Content-Security-Policy, X-Frame-Options).
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Iterable, Mapping
from urllib.parse import urlsplit

from flask import Flask, Response, jsonify, request

CSP = ("default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; "
       "frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
SAFE_METHODS = frozenset({"GET", "HEAD"})
DEFAULT_PORTS = {"http": 80, "https": 443}
JSON = "application/json"


def own_names(extra: Iterable[str] = ()) -> frozenset[str]:
    """The names a request's Host may give (IP literals pass besides): localhost, this machine's hostname,
    <hostname>.local and `extra` (the config's [web] hosts)."""
    names = {"localhost"}
    hostname = socket.gethostname().lower().rstrip(".")
    if hostname:
        short = hostname.split(".")[0]
        names |= {hostname, short, f"{short}.local", f"{hostname}.local"}
    names |= {n.lower().rstrip(".") for n in extra}
    return frozenset(n for n in names if n)


def split_host(raw: str) -> tuple[str, int | None] | None:
    """A Host header as (name, port): the name lowercased, without brackets or a trailing dot; None if malformed."""
    raw = raw.strip()
    if raw.startswith("["):
        name, sep, rest = raw[1:].partition("]")
        if not sep or rest and not rest.startswith(":"):
            return None
        port = rest[1:] if rest else ""
    else:
        name, sep, port = raw.rpartition(":")
        if not sep:
            name, port = raw, ""
        elif ":" in name:        # a bare IPv6 address (no brackets): no port in it
            name, port = raw, ""
    if port and not (port.isascii() and port.isdigit() and len(port) <= 5):
        return None
    return name.lower().rstrip("."), int(port) if port else None


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def _refuse(status: int, message: str) -> Response:
    resp = jsonify({"error": message})
    resp.status_code = status
    return resp


def install(app: Flask, names: Iterable[str], *, json_posts: bool = False,
            also_types: Mapping[str, Iterable[str]] | None = None) -> None:
    """The Host and Origin checks and the browser headers on `app`; with `json_posts`, every POST to one of its
    endpoints must say Content-Type: application/json (or, per endpoint name, one of `also_types`)."""
    allowed = frozenset(names)
    extra_types = {endpoint: frozenset(types) for endpoint, types in (also_types or {}).items()}
    # /api//state answered as /api/state would be redirected to an absolute URL built from Host: no merging
    app.url_map.merge_slashes = False

    @app.before_request
    def check_request():
        raw = request.environ.get("HTTP_HOST")
        if raw is None:
            if request.environ.get("SERVER_PROTOCOL", "HTTP/1.1") == "HTTP/1.0":
                host = None      # HTTP/1.0 may leave it out: nothing a rebinding page could have named
            else:
                return _refuse(400, "the request has no Host header")
        else:
            host = split_host(raw)
            if host is None:
                return _refuse(400, f"malformed Host header {raw[:80]!r}")
            name = host[0]
            if not (_is_ip(name) or name in allowed):
                return _refuse(421, f"this server does not answer to the name {name[:80]!r}; open it by its "
                                    "address, localhost or its hostname (or add the name to [web] hosts)")
        if request.method not in SAFE_METHODS:
            problem = _foreign(request.headers.get("Origin"), host)
            if problem is None and request.headers.get("Sec-Fetch-Site", "").strip().lower() == "cross-site":
                problem = "the browser says it was sent by another site (Sec-Fetch-Site: cross-site)"
            if problem:
                return _refuse(403, f"refused: {problem}; changes come only from the companion's own page")
        if json_posts and request.method == "POST" and request.url_rule is not None:
            types = {JSON} | extra_types.get(request.endpoint or "", frozenset())
            if request.mimetype not in types:
                sent = request.mimetype or "none"
                return _refuse(415, f"a POST must send Content-Type: {' or '.join(sorted(types))} "
                                    f"(this one sent {sent[:60]}), even with an empty body")
        return None

    @app.after_request
    def browser_headers(resp: Response):
        resp.headers["Content-Security-Policy"] = CSP
        resp.headers["X-Frame-Options"] = "DENY"
        resp.headers["X-Content-Type-Options"] = "nosniff"
        return resp


def _foreign(origin: str | None, host: tuple[str, int | None] | None) -> str | None:
    """Why a request's Origin is not this server's own (None: absent, or the same scheme, host and port)."""
    if origin is None:
        return None
    shown = origin[:80]
    if host is None:
        return f"it came from the page at {shown!r} and names no Host to compare with"
    try:
        parts = urlsplit(origin.strip())
        port = parts.port
    except ValueError:
        return f"its Origin {shown!r} is not an origin"
    scheme = parts.scheme.lower()
    if scheme != request.scheme or not parts.hostname:
        return f"it came from another origin ({shown!r})"
    name = parts.hostname.lower().rstrip(".")
    default = DEFAULT_PORTS.get(request.scheme)
    if name != host[0] or (port or default) != (host[1] or default):
        return f"it came from another origin ({shown!r})"
    return None
