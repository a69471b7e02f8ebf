"""waitress as we run it: a page that stops reading its stream gives its slot back (companion/web/serving.py)."""

import http.client
import json
import socket
import threading
import time

import pytest
from waitress.buffers import TempfileBasedBuffer

from companion.web import create_app, serving
from companion.web.serving import MAX_BODY_BYTES, OUTBUF_HIGH_WATERMARK, socket_options
from tests.shell.table import changes

needs_user_timeout = pytest.mark.skipif(not hasattr(socket, "TCP_USER_TIMEOUT"), reason="TCP_USER_TIMEOUT is Linux's")


@pytest.fixture
def served(make_companion):
    """The daemon's app with room for one stream, on a waitress that gives up on a silent reader after 1 s."""
    companion = make_companion(web={"max_streams": 1})
    companion.start()
    # small buffers so that a few changes fill them; the behaviour is the same at the real sizes
    server = serving.create(create_app(companion), host="127.0.0.1", port=0, threads=4, stalled_reader_s=1.0,
                            outbuf_high_watermark=8 * 1024, max_request_header_size=4096,
                            extra_socket_options=[(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)])
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    yield companion, int(server.effective_port)
    server.close()


def stream_status(port: int) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request("GET", "/api/stream")
        return conn.getresponse().status
    finally:
        conn.close()


def test_the_server_keeps_waitress_defaults_we_rely_on_and_takes_ours():
    server = serving.create(lambda environ, start: [], host="127.0.0.1", port=0, threads=3, channel_timeout=5)
    try:
        adj = server.adj
        assert adj.threads == 3 and adj.channel_timeout == 5
        assert adj.outbuf_high_watermark == OUTBUF_HIGH_WATERMARK < 16 * 1024 * 1024
        assert adj.max_request_body_size == MAX_BODY_BYTES == 64 * 1024
        assert (socket.IPPROTO_TCP, socket.TCP_NODELAY, 1) in adj.socket_options
        assert adj.connection_limit == serving.CONNECTION_LIMIT > 100 and adj.asyncore_use_poll
        assert adj.cleanup_interval == serving.CLEANUP_INTERVAL_S < serving.REQUEST_DEADLINE_S <= 10
    finally:
        server.close()


def test_a_body_larger_than_the_app_takes_is_refused_by_the_server_and_never_spooled(served):
    from waitress.adjustments import Adjustments

    companion, port = served
    before = companion.host.seq
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        # announced larger than the limit: refused before a byte of it is read, let alone written to a file
        conn.putrequest("POST", "/api/record")
        conn.putheader("Content-Type", "application/x-ndjson")
        conn.putheader("Content-Length", str(100 * 1024 * 1024))
        conn.endheaders()
        resp = conn.getresponse()
        assert resp.status == 413 and resp.getheader("Content-Type") == "application/json"
        assert json.loads(resp.read()) == {"error": f"the request body is too large ({MAX_BODY_BYTES // 1024} KB at most)"}
    finally:
        conn.close()
    assert companion.host.seq == before
    assert MAX_BODY_BYTES < Adjustments.inbuf_overflow     # a body within the limit stays in memory


@pytest.mark.parametrize("head,status,needle", [
    (b"POST /api/action HTTP/1.1\r\nHost: x\r\nContent-Length: ten\r\n\r\n", 400, "Content-Length"),
    (b"GET /api/state HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n", 400, "header"),
    (b"POST /api/action HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400, "chunk"),
    (b"GET /api/state HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 6000 + b"\r\n\r\n", 431, "headers are too large (4 KB"),
    (b"POST /api/action HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 501, "Transfer-Encoding"),
])
def test_what_waitress_refuses_itself_is_answered_in_json(served, head, status, needle):
    companion, port = served
    before = companion.host.seq
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(head)
        answer = b""
        while chunk := s.recv(65536):
            answer += chunk
    top, _, body = answer.partition(b"\r\n\r\n")
    assert top.split(b" ")[1] == str(status).encode(), top   # HTTP/1.0 where waitress could not read the version
    assert b"\r\nContent-Type: application/json\r\n" in top and b"\r\nX-Content-Type-Options: nosniff" in top
    error = json.loads(body)["error"]
    assert needle in error, error
    assert companion.host.seq == before


@needs_user_timeout
def test_the_user_timeout_is_in_milliseconds():
    assert (socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT, 60_000) in socket_options()


@needs_user_timeout
def test_a_sleeping_tablet_gives_its_stream_slot_back(served):
    """Without TCP_USER_TIMEOUT the sleeper below holds the only slot for as long as its socket lives
    (waitress's idle timeout does not apply while a request runs): every later page would get 503."""
    companion, port = served
    sleeper = socket.socket()
    sleeper.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
    sleeper.connect(("127.0.0.1", port))
    sleeper.sendall(b"GET /api/stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")   # ...and never reads a byte
    try:
        time.sleep(0.5)
        assert stream_status(port) == 503        # the slot is the sleeper's
        changes(companion, 40)                   # a few hundred kB of state: every buffer fills
        deadline = time.monotonic() + 30
        status = 503
        while time.monotonic() < deadline and status == 503:
            time.sleep(0.5)
            status = stream_status(port)
        assert status == 200
    finally:
        sleeper.close()


def test_head_requests_give_their_stream_slot_back(served):
    _, port = served           # room for one stream
    for _ in range(5):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        try:
            conn.request("HEAD", "/api/stream")
            response = conn.getresponse()
            assert response.status == 200 and response.read() == b""
        finally:
            conn.close()
    assert stream_status(port) == 200


def test_a_stream_the_page_closes_gives_its_slot_back_and_holds_it_while_open(companion):
    import dataclasses

    companion.config = dataclasses.replace(companion.config, max_streams=1)
    client = create_app(companion).test_client()
    for _ in range(3):
        client.get("/api/stream", buffered=False).close()         # closed at once
    first = client.get("/api/stream", buffered=False)
    assert next(first.response) == b"retry: 2000\n\n"              # started, then the page goes away
    first.close()
    second = client.get("/api/stream", buffered=False)
    assert second.status_code == 200
    assert client.get("/api/stream").status_code == 503            # and the slot is really held while open
    second.close()
    assert client.get("/api/stream", buffered=False).status_code == 200


def test_a_reading_page_keeps_its_stream(served):
    companion, port = served
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    conn.request("GET", "/api/stream")
    resp = conn.getresponse()
    try:
        got = b""
        start = companion.host.seq
        changes(companion, 40)
        deadline = time.monotonic() + 10
        while f"id: {start + 40}\n".encode() not in got and time.monotonic() < deadline:
            got += resp.read1(65536)
        assert f"id: {start + 40}\n".encode() in got
        time.sleep(2.5)                          # longer than the stalled-reader limit: a reader is not stalled
        assert stream_status(port) == 503
    finally:
        conn.close()


def output_buffers(server):
    """waitress's output buffers of every open connection: (bytes held in memory, any on disk)."""
    held, on_disk = 0, False
    for channel in list(server._map.values()):
        for outbuf in getattr(channel, "outbufs", ()):
            buf = outbuf.buf
            if isinstance(buf, TempfileBasedBuffer):
                on_disk = True
            elif buf is not None:
                held += len(buf.file.getbuffer())
            held += len(outbuf.strbuf)
    return held, on_disk


def test_a_long_stream_keeps_its_output_buffer_small_and_off_the_disk(companion):
    """waitress frees a buffer only when it rotates it (at the watermark); with its 16 MB default a stream
    that never ends kept 1 MB per tablet in memory, then wrote 16 MB per tablet to a temporary file."""
    # a small kernel send buffer: sends are partial, as on Wi-Fi, and waitress leaves its small-string buffer
    server = serving.create(create_app(companion), host="127.0.0.1", port=0, threads=4,
                            extra_socket_options=[(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)])
    threading.Thread(target=server.run, daemon=True).start()
    conn = http.client.HTTPConnection("127.0.0.1", int(server.effective_port), timeout=5)
    try:
        conn.request("GET", "/api/stream")
        resp = conn.getresponse()
        start, written, peak, batch = companion.host.seq, 0, 0, 0
        # over 2 MB of state messages through one stream (how many a change sends depends on how quickly the
        # stream is read, so the changes go on until that much has gone through)
        while written <= 2 * 1024 * 1024 and batch < 400:
            changes(companion, 20)
            batch += 1
            want = f"id: {start + 20 * batch}\n".encode()
            got = b""
            deadline = time.monotonic() + 10
            while want not in got and time.monotonic() < deadline:
                got += resp.read1(65536)
            assert want in got
            written += len(got)
            held, on_disk = output_buffers(server)
            peak = max(peak, held)
            assert not on_disk
        assert written > 2 * 1024 * 1024
        assert peak < 2 * OUTBUF_HIGH_WATERMARK + 64 * 1024
    finally:
        conn.close()
        server.close()


# --- slow and greedy clients (companion/web/serving.py)

@pytest.fixture
def guarded():
    """A plain app on our waitress, with a 1 s request deadline and room for 3 connections per address."""
    def app(environ, start_response):
        start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "2")])
        return [b"ok"]

    server = serving.create(app, host="127.0.0.1", port=0, threads=2, request_deadline_s=1, per_address=3)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    yield int(server.effective_port)
    server.close()


def connect(port, source="127.0.0.1"):
    sock = socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(source, 0))
    return sock


def closed_by_server(sock, dribble=b"", within=10.0):
    """True once the server closes sock (read gives b"" or a reset), sending `dribble` a byte every 0.2 s meanwhile."""
    sock.settimeout(0.2)
    deadline = time.monotonic() + within
    i = 0
    while time.monotonic() < deadline:
        try:
            if dribble:
                sock.sendall(dribble[i % len(dribble):i % len(dribble) + 1])
                i += 1
            if sock.recv(1024) == b"":
                return True
        except socket.timeout:
            continue
        except OSError:
            return True
    return False


def get_ok(sock) -> bool:
    try:
        sock.settimeout(10)
        sock.sendall(b"GET / HTTP/1.1\r\nHost: table\r\n\r\n")
        got = b""
        while not got.endswith(b"\r\n\r\nok"):      # the whole response, so the next starts clean
            chunk = sock.recv(1024)
            if not chunk:
                return False
            got += chunk
        return got.startswith(b"HTTP/1.1 200")
    except OSError:
        return False


def test_headers_sent_a_byte_at_a_time_are_cut_off(guarded):
    """waitress's idle timeout restarts with every byte; the request deadline does not."""
    sock = connect(guarded)
    try:
        sock.sendall(b"GET / HTTP/1.1\r\n")
        assert closed_by_server(sock, dribble=b"X-Slow: yes\r\n")
    finally:
        sock.close()


def test_a_connection_that_sends_nothing_is_cut_off(guarded):
    sock = connect(guarded)
    try:
        assert closed_by_server(sock)
    finally:
        sock.close()


def test_an_idle_keep_alive_connection_is_not_held_to_the_request_deadline(guarded):
    sock = connect(guarded)
    try:
        assert get_ok(sock)
        time.sleep(2.5)         # past the 1 s deadline, well within the 15 s idle timeout
        assert get_ok(sock)
    finally:
        sock.close()


def test_one_address_gets_only_its_share_of_connections(guarded):
    mine = [connect(guarded, "127.0.0.5") for _ in range(3)]
    try:
        assert all(get_ok(s) for s in mine)
        extra = connect(guarded, "127.0.0.5")
        try:
            assert not get_ok(extra)                        # closed as it was accepted
        finally:
            extra.close()
        other = connect(guarded, "127.0.0.6")               # another address is not held back
        try:
            assert get_ok(other)
        finally:
            other.close()
        mine.pop().close()
        deadline = time.monotonic() + 10
        again = False
        while not again and time.monotonic() < deadline:     # once the server has seen that one close
            s = connect(guarded, "127.0.0.5")
            again = get_ok(s)
            (mine.append(s) if again else s.close())
        assert again
        local = [connect(guarded) for _ in range(5)]       # the machine's own 127.0.0.1 is not capped
        mine += local
        assert all(get_ok(s) for s in local)
    finally:
        for s in mine:
            s.close()
