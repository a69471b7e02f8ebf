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
"""

from __future__ import annotations

import socket
from typing import Any

CHANNEL_TIMEOUT_S = 60          # idle keep-alive connections (no request running)
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
           extra_socket_options: list[tuple[int, int, int]] = (), **adjustments: Any):
    """A waitress server for app (not started); adjustments are waitress's, ours are the defaults."""
    from waitress.server import create_server

    server = create_server(app, threads=threads, **{"channel_timeout": CHANNEL_TIMEOUT_S,
                                                    "outbuf_high_watermark": OUTBUF_HIGH_WATERMARK,
                                                    "max_request_body_size": MAX_BODY_BYTES, **adjustments})
    # socket_options is not a create_server argument; the server reads it for every connection it accepts
    server.adj.socket_options = socket_options(stalled_reader_s) + list(extra_socket_options)
    return server
