"""How waitress serves our pages, for the table's page and the hall scoreboard alike.

Event streams never end, which changes two of waitress's defaults for us:

- waitress frees a connection's output buffer only when it rotates to a new one, after
  outbuf_high_watermark bytes (16 MB by default) went through it; past outbuf_overflow
  (1 MB) the buffer moves to a temporary file. On a stream that never ends, every tablet's
  buffer grew to 1 MB of memory and then to 16 MB of writes to the Pi's SD card, and the
  daemon's memory crept up all evening (waitress issues #265 and #67 describe the same).
  A small watermark rotates, so frees, the buffer every 64 kB; it is also how much output
  may wait for a slow tablet before the stream waits for it (backpressure, nothing lost).
- Its idle timeout does not apply while a request is running, so nothing would ever close
  a stream whose tablet went to sleep and stopped reading: the thread waits forever and the
  stream slot stays taken. TCP_USER_TIMEOUT makes the kernel drop a connection whose sent
  data stays unacknowledged, or unsent behind a closed receive window, for that long;
  waitress then sees the connection closed, the stream ends and its slot is free.

Anyone on the table's Wi-Fi may be hostile, and waitress's defaults let one guest take the
page away from every tablet: its 100 connections are shared by everyone, and its idle timeout
is restarted by every byte, so a client sending its headers a byte at a time holds a connection
for ever. Here:

- a request must arrive whole within REQUEST_DEADLINE_S of its first byte (a new connection's
  first request, of the connection's opening), checked every CLEANUP_INTERVAL_S;
- CONNECTION_LIMIT connections in all (polled with poll(), as select() stops at descriptor 1024),
  at most PER_ADDRESS_CONNECTIONS of them from one client address: waitress has no such cap,
  so a connection past it is closed as it is accepted, before any of its bytes are read, and the
  listen backlog is drained on every pass of the loop (waitress accepts one connection a pass).

What waitress refuses itself, before the app sees the request (a body past the limit, headers past
theirs, a malformed request line, header or chunk), it answers in plain text; its channel's
error_task_class makes those answers the API's JSON, {"error": ...}, like every other refusal.
"""

from __future__ import annotations

import collections
import functools
import json
import socket
import threading
import time
from typing import Any

CHANNEL_TIMEOUT_S = 15          # idle keep-alive connections (no request running); a tablet just opens a new one
REQUEST_DEADLINE_S = 10         # a whole request, 64 kB at most, from a tablet on poor Wi-Fi takes well under this
CLEANUP_INTERVAL_S = 1          # how often waitress looks for connections past their time (its default: 30 s)
CONNECTION_LIMIT = 400          # waitress's default is 100; a waiting connection costs no thread, only a descriptor
PER_ADDRESS_CONNECTIONS = 8     # a browser opens 6 per host at most, its live page's stream among them
ACCEPTS_PER_PASS = 64
# the machine's own clients (its kiosk screen, the benches, a daemon without a PIN serves no one else) are not
# capped: whoever runs programs on the Pi owns it anyway. A Unix socket's peer has no address ("").
UNCAPPED = frozenset({"", "127.0.0.1", "::1", "::ffff:127.0.0.1"})
STALLED_READER_S = 60           # a page that has read nothing for this long is let go
OUTBUF_HIGH_WATERMARK = 64 * 1024
# the largest request body anything we serve takes (the app refuses more as well): waitress's own limit is 1 GB and
# it spools a body past inbuf_overflow (512 kB) to a temporary file before the app sees it, so one connection
# could fill the SD card without the PIN; at this limit a body is refused as it is announced, never spooled
MAX_BODY_BYTES = 64 * 1024


def socket_options(stalled_reader_s: float = STALLED_READER_S) -> list[tuple[int, int, int]]:
    options = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]   # waitress's own default, kept
    user_timeout = getattr(socket, "TCP_USER_TIMEOUT", None)  # Linux; elsewhere the slot waits for TCP itself
    if user_timeout is not None:
        options.append((socket.IPPROTO_TCP, user_timeout, int(stalled_reader_s * 1000)))
    return options


def create(app: Any, *, threads: int, stalled_reader_s: float = STALLED_READER_S,
           extra_socket_options: list[tuple[int, int, int]] = (), request_deadline_s: float = REQUEST_DEADLINE_S,
           per_address: int = PER_ADDRESS_CONNECTIONS, **adjustments: Any):
    """A waitress server for app (not started); adjustments are waitress's, ours are the defaults."""
    from waitress.server import BaseWSGIServer, create_server

    server = create_server(app, threads=threads, **{"channel_timeout": CHANNEL_TIMEOUT_S,
                                                    "cleanup_interval": CLEANUP_INTERVAL_S,
                                                    "connection_limit": CONNECTION_LIMIT,
                                                    "asyncore_use_poll": True,
                                                    "outbuf_high_watermark": OUTBUF_HIGH_WATERMARK,
                                                    "max_request_body_size": MAX_BODY_BYTES, **adjustments})
    # socket_options is not a create_server argument; the server reads it for every connection it accepts
    server.adj.socket_options = socket_options(stalled_reader_s) + list(extra_socket_options)
    # one listening server, or several (one per address family) sharing one loop: each is guarded alike
    listeners = [server] if isinstance(server, BaseWSGIServer) else \
        [s for s in server.map.values() if isinstance(s, BaseWSGIServer)]
    for listener in listeners:
        # waitress looks both up on the instance: handle_accept() when connections wait to be accepted, and
        # maintenance(now) every cleanup_interval
        listener.connections_by_address = collections.Counter()
        listener.connections_lock = threading.Lock()
        listener.handle_accept = functools.partial(_handle_accept, listener, per_address)
        listener.maintenance = functools.partial(_maintenance, listener, request_deadline_s)
    return server


def _error_message(error: Any, adj: Any) -> str:
    """What waitress's own refusal (a waitress.utilities.Error: code, reason, body) says to an API client."""
    code = error.code
    if code == 413:
        return f"the request body is too large ({adj.max_request_body_size // 1024} KB at most)"
    if code == 431:
        return f"the request's headers are too large ({adj.max_request_header_size // 1024} KB at most)"
    if code == 400:
        return f"the request could not be read: {error.body}"
    if code == 501:
        return f"not supported by this server: {error.body}"
    # an app that failed before its first byte: waitress's body may hold a traceback (expose_tracebacks)
    return "internal error; the game is unchanged and the fault is in the daemon's log"


@functools.cache
def _error_task() -> type:
    from waitress.task import ErrorTask

    class JsonErrorTask(ErrorTask):
        """waitress's ErrorTask with the API's JSON body; status, and closing the connection after it, as waitress."""

        def execute(self) -> None:
            error = self.request.error
            body = json.dumps({"error": _error_message(error, self.channel.adj)}).encode()
            self.status = f"{error.code} {error.reason}"
            self.response_headers.extend([("Content-Type", "application/json"), ("X-Content-Type-Options", "nosniff"),
                                          ("Cache-Control", "no-store")])
            self.set_close_on_finish()
            self.content_length = len(body)
            self.write(body)

    return JsonErrorTask


@functools.cache
def _channel() -> type:
    from waitress.channel import HTTPChannel

    class Channel(HTTPChannel):
        """waitress's channel, counted per client address, and knowing since when it has waited for the rest of
        a request (None: not waiting); waitress's own refusals in JSON."""

        error_task_class = _error_task()

        def __init__(self, server: Any, sock: socket.socket, addr: Any, adj: Any, map: dict | None = None):
            self.host = _host(addr)
            with server.connections_lock:
                server.connections_by_address[self.host] += 1
            self._counted = True
            super().__init__(server, sock, addr, adj, map=map)
            # a connection's first request counts from its opening (monotonic: a Pi's wall clock jumps when NTP
            # first sets it, and waitress's own time.time() would then cut every waiting connection at once)
            self.waiting_since: float | None = time.monotonic()

        def received(self, data: bytes) -> bool:
            if data and self.waiting_since is None:
                self.waiting_since = time.monotonic()
            done = super().received(data)
            if self.request is None:
                self.waiting_since = None             # every request received so far is whole
            return done

        def del_channel(self, map: dict | None = None) -> None:
            super().del_channel(map)
            with self.server.connections_lock:
                if self._counted:
                    self._counted = False
                    counts = self.server.connections_by_address
                    counts[self.host] -= 1
                    if counts[self.host] <= 0:
                        del counts[self.host]

    return Channel


def _host(addr: Any) -> str:
    return addr[0] if isinstance(addr, tuple) else ""     # a Unix socket's peer has no address to tell apart


def _handle_accept(server: Any, per_address: int) -> None:
    # waitress accepts one connection per pass of its loop: a flood of reconnections then fills the listen backlog
    # ahead of a tablet's. Here the backlog is drained each pass, and a connection past its address's share is
    # closed before anything of it is read.
    for _ in range(ACCEPTS_PER_PASS):
        if len(server._map) >= server.adj.connection_limit:
            return
        try:
            accepted = server.accept()
        except OSError:
            server.logger.warning("accept() failed", exc_info=server.adj.log_socket_errors)
            return
        if accepted is None:
            return
        conn, addr = accepted
        addr = server.fix_addr(addr)
        host = _host(addr)
        if host not in UNCAPPED and server.connections_by_address.get(host, 0) >= per_address:
            conn.close()
            continue
        try:
            server.set_socket_options(conn)
        except OSError:         # the client hung up before its options could be set: as waitress, let it go
            conn.close()
            continue
        _channel()(server, conn, addr, server.adj, map=server._map)


def _maintenance(server: Any, deadline_s: float, now: float) -> None:
    type(server).maintenance(server, now)           # waitress's own: idle keep-alive connections past channel_timeout
    cutoff = time.monotonic() - deadline_s
    for channel in list(server.active_channels.values()):
        since = getattr(channel, "waiting_since", None)
        if since is not None and since < cutoff and not channel.requests:
            channel.will_close = True
