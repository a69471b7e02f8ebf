"""The hall scoreboard: every table of a hall on one live page.

`HallBoard` subscribes to `companion/<hall>/+/state` and `…/availability` and keeps
each table's latest state; `create_hall_app(board)` is the Flask app (the page,
`/api/tables`, and `/api/stream` with Server-Sent Events); `companion hall` serves
it with waitress. The page reuses the table page's stylesheet.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import ssl
import sys
import threading
import uuid
from collections import deque
from pathlib import Path
from typing import Any, Mapping

from flask import Flask, Response, jsonify, send_from_directory

from companion.foundation import strict_json
from companion.foundation.clock import Clock
from companion.mqtt import payloads as P
from companion.mqtt.publisher import CONNECTED, CONNECTING, DISCONNECTED, make_client
from companion.config.mqtt import DEFAULT_HALL, check_name
from companion.web import hardening
from companion.web.errors import install_json_errors, strict_json_app

log = logging.getLogger(__name__)
HALL_STATIC = Path(__file__).resolve().parent.parent / "web" / "hall"
TABLE_STATIC = Path(__file__).resolve().parent.parent / "web" / "static"
PASSWORD_ENV = "COMPANION_MQTT_PASSWORD"
DEFAULT_LISTEN_PORT = 8090
MAX_PAYLOAD = 64 * 1024
# Bounds on what the hall keeps, because any client allowed to publish under companion/<hall>/ can fill it: 400
# retained states of 40 kB each once made /api/tables 16 MB, sent whole to every page on every change. Text is
# cut (with "…") rather than refused, so a table with a long message still shows; what goes past a bound is counted
# and shown in /api/tables under "dropped".
MAX_TEXT = 120          # name, game, title, message, to_move; a player's name
MAX_SCORES = 16         # players on one card (and winners)
MAX_BALANCE_KEYS = 16   # Balance Duels' torque/margin/tip fields
MAX_TABLES = 64         # cards in one hall; past it the least useful table goes (see _make_room)
# tables gone (cleared or pushed out) remembered for the pages' changes; a page further behind gets the whole list
REMOVALS_KEPT = 4 * MAX_TABLES
ELLIPSIS = "…"
EXIT_CONFIG = 2
EXIT_START = 1


class HallBoard:
    """The latest state and availability of every table in one hall, fed by the broker."""

    def __init__(self, broker: str, port: int = 1883, hall: str = DEFAULT_HALL, *, username: str | None = None,
                 password: str | None = None, tls: bool = False, ca_file: str | Path | None = None,
                 keepalive_s: int = 30, reconnect_min_s: float = 1.0, reconnect_max_s: float = 30.0,
                 clock: Clock | None = None):
        problem = check_name(hall)
        if problem:
            raise ValueError(f"hall {hall!r} {problem}")
        self.broker = broker
        self.port = port
        self.hall = hall
        self.keepalive_s = keepalive_s
        self.clock = clock or Clock()
        self.state_filter, self.availability_filter = P.hall_topics(hall)
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._tables: dict[str, dict[str, Any]] = {}
        self._version = 0
        self._link = DISCONNECTED
        self._last_error: str | None = None
        self._bad_payloads = 0
        self._dropped = {"tables": 0, "scores": 0, "cut_texts": 0}   # what the bounds above left out
        # (version, table) of each table gone, newest last; changes_since() cannot go back past `_forgotten`
        self._removals: deque[tuple[int, str]] = deque(maxlen=REMOVALS_KEPT)
        self._forgotten = 0
        self._started = False
        self._client = make_client(f"companion-hall-{hall}-{uuid.uuid4().hex[:10]}", username=username,
                                   password=password, tls=tls, ca_file=ca_file,
                                   reconnect_min_s=reconnect_min_s, reconnect_max_s=reconnect_max_s)
        self._client.on_pre_connect = self._on_pre_connect
        self._client.on_connect = self._on_connect
        self._client.on_connect_fail = self._on_connect_fail
        self._client.on_disconnect = self._on_disconnect
        self._client.on_message = self._on_message

    # --- lifecycle
    def start(self) -> None:
        if self._started:
            return
        self._started = True
        self._set_link(CONNECTING)
        self._client.connect_async(self.broker, self.port, keepalive=self.keepalive_s)
        self._client.loop_start()

    def stop(self) -> None:
        if not self._started:
            return
        self._started = False
        self._client.disconnect()
        self._client.loop_stop()
        self._set_link(DISCONNECTED)

    # --- reading
    @property
    def version(self) -> int:
        with self._lock:
            return self._version

    def wait_for_change(self, version: int, timeout: float) -> bool:
        with self._lock:
            return self._changed.wait_for(lambda: self._version != version, timeout=timeout)

    def snapshot(self) -> dict[str, Any]:
        """What /api/tables returns: the hall, the broker link, and every table sorted by id."""
        now = self.clock.now()
        with self._lock:
            return {**self._head(), "tables": [self._card(t, now) for t in sorted(self._tables)]}

    def changes_since(self, version: int) -> dict[str, Any] | None:
        """What changed after `version` (a snapshot's or an earlier change's): the cards of the tables that changed,
        the ids of those gone, and the hall's head (link, drops). None when the board cannot say (the version is
        from before the removals it remembers, or not its own): send the whole snapshot then.

        This is what keeps a page's traffic to what changed: one table's roll sends that table's card, never
        the whole hall (a flood of retained tables once made every change 16 MB to every page)."""
        now = self.clock.now()
        with self._lock:
            if version < self._forgotten or version > self._version:
                return None
            changed = sorted(t for t, entry in self._tables.items() if entry["changed"] > version)
            gone = sorted({t for v, t in self._removals if v > version and t not in self._tables})
            return {**self._head(), "since": version, "tables": [self._card(t, now) for t in changed],
                    "removed": gone}

    def _head(self) -> dict[str, Any]:
        return {
            "hall": self.hall,
            "version": self._version,
            "broker": {"address": f"{self.broker}:{self.port}", "state": self._link,
                       "last_error": self._last_error, "bad_payloads": self._bad_payloads},
            "dropped": dict(self._dropped),
        }

    def _card(self, table_id: str, now: float) -> dict[str, Any]:
        entry = self._tables[table_id]
        state = entry.get("state") or {}
        return {
            "table": table_id,
            "name": state.get("name") or table_id,
            "online": entry.get("online"),
            "game": state.get("game"),
            "title": state.get("title"),
            "message": state.get("message"),
            "to_move": state.get("to_move"),
            "over": state.get("over", False),
            "winners": state.get("winners"),
            "scores": state.get("scores", []),
            "balance": state.get("balance"),
            "seq": state.get("seq"),
            "updated_s_ago": round(now - entry["updated"], 1),
        }

    # --- paho callbacks (its network thread)
    def _on_pre_connect(self, client, userdata) -> None:
        self._set_link(CONNECTING)

    def _on_connect(self, client, userdata, flags, reason_code, properties) -> None:
        try:
            if reason_code.is_failure:
                self._set_link(DISCONNECTED, f"the broker at {self.broker}:{self.port} refused the connection: "
                                             f"{reason_code}")
                return
            # availability first, in a SUBSCRIBE of its own: the broker sends each subscription's retained messages
            # in turn, and a hall starting into a flood of retained states must already know which tables are
            # online, or it makes room by dropping a live table whose state came before its `online` (its card then
            # stayed without a state until the table next changed: tests/mqtt/test_floods.py, once in CI)
            client.subscribe(self.availability_filter, 1)
            client.subscribe(self.state_filter, 1)
            self._set_link(CONNECTED)
        except Exception:  # paho would drop it silently: logged below
            log.exception("hall: on_connect failed")

    def _on_connect_fail(self, client, userdata) -> None:
        self._set_link(DISCONNECTED,
                       f"cannot reach the broker at {self.broker}:{self.port} ({client.connect_failure()})")

    def _on_disconnect(self, client, userdata, flags, reason_code, properties) -> None:
        with self._lock:
            was_up = self._link == CONNECTED
        if not self._started or not was_up:
            self._set_link(DISCONNECTED)
            return
        self._set_link(DISCONNECTED, f"lost the link to the broker at {self.broker}:{self.port} ({reason_code})")

    def _on_message(self, client, userdata, message) -> None:
        try:
            self.handle(message.topic, message.payload)
        except Exception:  # paho would drop it silently: logged below
            log.exception("hall: handling a message on %s failed", message.topic)

    def handle(self, topic: str, payload: bytes) -> None:
        """Take one message from a table (also called directly by tests)."""
        parts = topic.split("/")
        if len(parts) != 4 or parts[1] != self.hall or parts[3] not in ("state", "availability"):
            return
        table_id, kind = parts[2], parts[3]
        now = self.clock.now()
        if kind == "availability":
            text = payload.decode("utf-8", "replace").strip()
            if text and text not in (P.ONLINE, P.OFFLINE):
                self._bad(f"{topic}: availability must be 'online' or 'offline', not {text[:40]!r}")
                return
            self._update(table_id, online=None if not text else text == P.ONLINE, now=now)
            return
        if not payload:
            self._update(table_id, state=None, now=now)   # an empty retained state: the table was cleared
            return
        state = self._clean_state(topic, payload)
        if state is not None:
            self._update(table_id, state=state, now=now)

    def _clean_state(self, topic: str, payload: bytes) -> dict | None:
        if len(payload) > MAX_PAYLOAD:
            self._bad(f"{topic}: state payload of {len(payload)} bytes is too large")
            return None
        try:
            data = strict_json.loads(payload)
        except RecursionError:
            self._bad(f"{topic}: state is nested too deeply")
            return None
        except (UnicodeDecodeError, ValueError) as exc:
            self._bad(f"{topic}: state is not JSON: {exc}")
            return None
        if not isinstance(data, Mapping):
            self._bad(f"{topic}: state must be a JSON object")
            return None
        cut = 0

        def bounded(value: str) -> str:
            nonlocal cut
            if len(value) <= MAX_TEXT:
                return value
            cut += 1
            return value[:MAX_TEXT - 1] + ELLIPSIS

        scores = []
        extra_scores = 0
        raw_scores = data.get("scores")
        for item in raw_scores if isinstance(raw_scores, list) else []:
            if isinstance(item, Mapping) and isinstance(item.get("name"), str):
                if len(scores) >= MAX_SCORES:
                    extra_scores += 1
                    continue
                score = item.get("score")
                ok = isinstance(score, (int, float)) and not isinstance(score, bool)
                scores.append({"name": bounded(item["name"]), "score": score if ok else None})
        over = data.get("over") is True
        # who won, by name ([] before the end and for a draw); None from a table whose state does not say (older
        # software), so that the page does not call its finished game a draw
        winners = None
        raw_winners = data.get("winners")
        if isinstance(raw_winners, list):
            named = [w for w in raw_winners if isinstance(w, str) and w] if over else []
            extra_scores += max(0, len(named) - MAX_SCORES)
            winners = [bounded(w) for w in named[:MAX_SCORES]]
        balance = data.get("balance")
        if isinstance(balance, Mapping):
            kept = {}
            for k, v in balance.items():
                if not isinstance(k, str) or len(k) > MAX_TEXT or len(kept) >= MAX_BALANCE_KEYS:
                    continue
                if v is None or isinstance(v, (int, float, bool)):
                    kept[k] = v
                elif isinstance(v, str):
                    kept[k] = bounded(v)
            balance = kept

        def text(key: str) -> str | None:
            value = data.get(key)
            return bounded(value) if isinstance(value, str) else None

        seq = data.get("seq")
        state = {
            "name": text("name"), "game": text("game"), "title": text("title"), "message": text("message"),
            "to_move": text("to_move"), "over": over, "winners": winners, "scores": scores,
            "balance": balance if isinstance(balance, dict) else None,
            "seq": seq if isinstance(seq, int) and not isinstance(seq, bool) else None,
        }
        if cut or extra_scores:
            with self._lock:
                self._dropped["cut_texts"] += cut
                self._dropped["scores"] += extra_scores
        return state

    def _bad(self, message: str) -> None:
        with self._lock:
            self._bad_payloads += 1
            first = self._bad_payloads <= 20
        if first:
            log.warning("hall: ignored a message: %s", message)

    _UNSET = object()

    def _update(self, table_id: str, *, now: float, state: Any = _UNSET, online: Any = _UNSET) -> None:
        with self._lock:
            self._version += 1
            version = self._version
            # a clearing message for a table not kept adds nothing, so it must not push another out
            adds = state not in (None, HallBoard._UNSET) or online not in (None, HallBoard._UNSET)
            known = table_id in self._tables
            if not known and adds:
                self._make_room(version)
            entry = self._tables.setdefault(table_id, {"state": None, "online": None, "updated": now})
            if state is not HallBoard._UNSET:
                entry["state"] = state
            if online is not HallBoard._UNSET:
                entry["online"] = online
            entry["updated"] = now
            entry["changed"] = version
            if entry["state"] is None and entry["online"] is None:
                del self._tables[table_id]   # both retained topics cleared: the table left the hall
                if known:
                    self._removed(version, table_id)
            self._changed.notify_all()

    def _make_room(self, version: int) -> None:
        """Before a new table is added at the bound (the lock is held): drop one, counted. Tables not known to be
        online go first, the least recently heard of among them; so a flood of retained states from tables that
        never said `online` pushes out its own kind, and a live table's card stays."""
        while len(self._tables) >= MAX_TABLES:
            victim = min(self._tables, key=lambda t: (self._tables[t]["online"] is True, self._tables[t]["updated"]))
            del self._tables[victim]
            self._removed(version, victim)
            self._dropped["tables"] += 1
            if self._dropped["tables"] in (1, 100) or self._dropped["tables"] % 1000 == 0:
                log.warning("hall: more than %d tables; dropped %s (%d dropped so far)", MAX_TABLES, victim,
                            self._dropped["tables"])

    def _removed(self, version: int, table_id: str) -> None:
        if len(self._removals) == self._removals.maxlen:
            self._forgotten = self._removals[0][0]     # a page from before it could miss that one: whole list
        self._removals.append((version, table_id))

    def _set_link(self, state: str, error: str | None = None) -> None:
        with self._lock:
            before, before_error = self._link, self._last_error
            self._link = state
            if error is not None:
                self._last_error = error
            if before != state:
                self._version += 1
                self._changed.notify_all()
        if state == CONNECTED and before != CONNECTED:
            log.info("hall: connected to %s:%d, following hall %s", self.broker, self.port, self.hall)
        elif error is not None and (before == CONNECTED or error != before_error):
            log.warning("hall: %s; retrying in the background", error)


def create_hall_app(board: HallBoard, *, max_streams: int = 32, refresh_s: float = 5.0,
                    hosts: tuple[str, ...] = ()) -> Flask:
    """The scoreboard app: the page, /api/tables and a Server-Sent Events stream of the same JSON. It answers
    only to its own names (IP addresses, localhost, the hostname, <hostname>.local and `hosts`)."""
    app = Flask(__name__, static_folder=None)
    strict_json_app(app)
    hardening.install(app, hardening.own_names(hosts))
    app.extensions["hall_board"] = board
    streams = threading.BoundedSemaphore(max_streams)

    install_json_errors(app, internal="internal error; the fault is in the hall server's log")

    @app.get("/")
    def index():
        return send_from_directory(HALL_STATIC, "index.html")

    @app.get("/hall/<path:name>")
    def hall_file(name: str):
        return send_from_directory(HALL_STATIC, name)

    @app.get("/static/<path:name>")
    def table_file(name: str):
        # the table page's stylesheet (and anything else it shares), so both pages look alike
        return send_from_directory(TABLE_STATIC, name)

    @app.get("/api/tables")
    def api_tables():
        return jsonify(board.snapshot())

    @app.get("/api/stream")
    def api_stream():
        if not streams.acquire(blocking=False):
            resp = jsonify({"error": f"too many scoreboards are open ({max_streams}); try again shortly"})
            resp.status_code = 503
            resp.headers["Retry-After"] = "5"
            return resp
        return Response(_stream(), mimetype="text/event-stream",
                        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})

    def _stream():
        try:
            yield "retry: 2000\n\n"
            version = None      # a page that (re)connects gets the whole list first
            while True:
                # every change, and at least every refresh_s: the page's proof of life and its clock. Only what
                # changed goes (one table's card, the ids gone); the whole list when the board cannot say
                changes = None if version is None else board.changes_since(version)
                if changes is None:
                    snap = board.snapshot()
                    version = snap["version"]
                    yield f"event: tables\ndata: {strict_json.dumps(snap, separators=(',', ':'))}\n\n"
                else:
                    version = changes["version"]
                    yield f"event: changes\ndata: {strict_json.dumps(changes, separators=(',', ':'))}\n\n"
                board.wait_for_change(version, timeout=refresh_s)
        finally:
            streams.release()

    return app


# --- the command

def add_commands(subparsers) -> None:
    """`companion hall`: the scoreboard of every table in a hall."""
    p = subparsers.add_parser(
        "hall", help="serve a scoreboard of every table in a hall (from an MQTT broker)",
        description="Subscribe to every table of a hall on an MQTT broker and serve one live page listing each "
                    f"table's game, scores and online state. A broker password is read from ${PASSWORD_ENV}.")
    p.add_argument("--broker", required=True, help="the MQTT broker's host name or address")
    p.add_argument("--port", type=int, help="the broker's port (default 1883, or 8883 with --tls)")
    p.add_argument("--hall", default=DEFAULT_HALL, help=f"the hall to follow (default: {DEFAULT_HALL})")
    p.add_argument("--username", help=f"broker user name (the password comes from ${PASSWORD_ENV})")
    p.add_argument("--tls", action="store_true", help="connect with TLS (the system's CA store unless --ca-file)")
    p.add_argument("--ca-file", type=Path, help="CA certificate (PEM) for the broker; implies --tls")
    p.add_argument("--listen-host", default="127.0.0.1", help="address the page listens on (default: 127.0.0.1)")
    p.add_argument("--listen-port", type=int, default=DEFAULT_LISTEN_PORT,
                   help=f"port the page listens on (default: {DEFAULT_LISTEN_PORT}; 0 picks a free one)")
    p.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    p.set_defaults(func=cmd_hall)


def _fail(code: int, message: str) -> int:
    print(f"companion: {message}", file=sys.stderr)
    return code


def cmd_hall(args: argparse.Namespace) -> int:
    logging.basicConfig(level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("waitress.queue").setLevel(logging.ERROR)
    problem = check_name(args.hall)
    if problem:
        return _fail(EXIT_CONFIG, f"--hall {problem}")
    if not args.broker or any(c.isspace() for c in args.broker) or "/" in args.broker:
        return _fail(EXIT_CONFIG, f"--broker must be a host name or address, not {args.broker!r}")
    tls = args.tls or args.ca_file is not None
    port = args.port if args.port is not None else (8883 if tls else 1883)
    if not 1 <= port <= 65535:
        return _fail(EXIT_CONFIG, f"--port must be from 1 to 65535, not {port}")
    if not 0 <= args.listen_port <= 65535:
        return _fail(EXIT_CONFIG, f"--listen-port must be from 0 to 65535, not {args.listen_port}")
    if args.ca_file is not None and not args.ca_file.is_file():
        return _fail(EXIT_CONFIG, f"--ca-file: no such file: {args.ca_file}")
    password = os.environ.get(PASSWORD_ENV) or None
    if password is not None and args.username is None:
        return _fail(EXIT_CONFIG, f"${PASSWORD_ENV} is set but --username is not")
    try:
        board = HallBoard(args.broker, port, args.hall, username=args.username, password=password, tls=tls,
                          ca_file=args.ca_file)
    except (ssl.SSLError, OSError, ValueError) as exc:
        return _fail(EXIT_CONFIG, f"--ca-file {args.ca_file}: not a usable CA certificate file (PEM): {exc}")
    return serve_hall(board, args.listen_host, args.listen_port)


def serve_hall(board: HallBoard, listen_host: str, listen_port: int, *, max_streams: int = 32) -> int:
    from companion.web import serving

    try:
        server = serving.create(create_hall_app(board, max_streams=max_streams), host=listen_host,
                                port=listen_port, ident="companion-hall", threads=max_streams + 4)
    except OSError as exc:
        reason = "is already in use" if exc.errno in (98, 48) else f"cannot be opened ({exc.strerror or exc})"
        return _fail(EXIT_START, f"{listen_host}:{listen_port} {reason}; choose another with --listen-port")
    shown = "127.0.0.1" if listen_host in ("0.0.0.0", "::", "") else listen_host
    print(f"Hall scoreboard for {board.hall} (broker {board.broker}:{board.port}): "
          f"open http://{shown}:{server.effective_port}", flush=True)

    def stop(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    board.start()
    try:
        server.run()
    except KeyboardInterrupt:
        log.info("hall: stopping")
    finally:
        server.close()
        board.stop()
    return 0
