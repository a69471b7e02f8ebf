"""The Flask app (app factory): the live page, a JSON API and a Server-Sent Events stream.

Served by waitress, never by Flask's development server. Every asset comes from
the daemon itself: the table may have no internet. The app is handed the running table
(create_app(companion)) and never imports it. Imports: history, store, games, config, foundation.
"""

from __future__ import annotations

import functools
import hmac
import logging
import re
import threading
import time
from pathlib import Path
from typing import Any

from flask import Flask, Response, jsonify, request, send_from_directory

from companion.foundation import strict_json
from companion.games.base import RuleError
from companion.games.mapdata import MapFileError, MapWriteError
from companion.games.refusals import in_words
from companion.store import StoreError
from companion.web.auth import COOKIE, DEVICE_COOKIE, DEVICE_S, SESSION_S, Locked, PinGuard, device_secret
from companion.web.errors import install_json_errors, strict_json_app
from companion.web import assets, hardening, history_api, join
from companion.web.feed import StreamFeed
from companion.web.serving import MAX_BODY_BYTES

log = logging.getLogger(__name__)
STATIC = Path(__file__).parent / "static"
LIVE_PERIOD_S = 0.5        # live sensor readings on the stream
IDLE_LIVE_PERIOD_S = 2.0   # without sensors: still a visible sign of life for the page's stale-stream check
MAX_SEQ = 2**63 - 1        # SQLite's largest integer: a sequence number beyond it cannot even be compared
RETRY_AFTER_S = 5          # what a 503 asks a client to wait


class ApiError(Exception):
    def __init__(self, status: int, message: str, **extra: Any):
        super().__init__(message)
        self.status = status
        self.message = message
        self.extra = extra


class _Slot:
    """One live page's place among the streams: given back once, however its response ends."""

    def __init__(self, streams: threading.BoundedSemaphore):
        self._streams = streams
        self._lock = threading.Lock()
        self._held = True

    def release(self) -> None:
        with self._lock:
            if not self._held:
                return
            self._held = False
        self._streams.release()


def _body() -> dict:
    if not request.data:
        return {}
    data = None
    if request.is_json:
        try:
            data = strict_json.loads(request.get_data())
        except RecursionError:
            raise ApiError(400, "the request body is nested too deeply") from None
        except strict_json.NonFinite as exc:
            raise ApiError(400, str(exc)) from None
        except ValueError:      # not JSON, or not UTF-8 (UnicodeDecodeError is one)
            pass
    if not isinstance(data, dict):
        raise ApiError(400, "the request body must be a JSON object")
    return data


def _sequence_number(name: str, raw: str | None) -> int | None:
    """A sequence number from a query or header: None if absent, 400 naming it and its bounds if not one."""
    if raw in (None, ""):
        return None
    value = None
    # ASCII digits only (int() takes other scripts' too), and few: thousands of them cost int() time for nothing
    if re.fullmatch(r"\s*[+-]?[0-9]{1,20}\s*", raw):
        value = int(raw)
    if value is None or not 0 <= value <= MAX_SEQ:
        raise ApiError(400, f"{name} must be a whole number from 0 to {MAX_SEQ}, not {raw[:40]!r}")
    return value


def create_app(companion) -> Flask:
    """The web app for one running Companion."""
    app = Flask(__name__, static_folder=None)
    app.config["MAX_CONTENT_LENGTH"] = MAX_BODY_BYTES
    strict_json_app(app)
    host = companion.host
    cfg = companion.config
    # other pages on the Wi-Fi: refused by Host (DNS rebinding), Origin and Content-Type (see hardening.py);
    # a game record is JSON lines, sent as application/x-ndjson (which a no-cors request cannot send either)
    hardening.install(app, hardening.own_names(cfg.web_hosts), json_posts=True,
                      also_types={"api_load_record": ("application/x-ndjson",)})
    streams = threading.BoundedSemaphore(cfg.max_streams)
    feed = StreamFeed(host, companion.live)
    app.extensions["stream_feed"] = feed
    app.extensions["companion"] = companion
    # the device key's secret lives beside the event store (the state directory) so cookies survive restarts
    guard = PinGuard(cfg.pin_hash, companion.clock,
                     device_secret(cfg.database().parent, cfg.pin_hash, cfg.pin_plain))
    app.extensions["pin_guard"] = guard

    def change(view):
        """Every change needs the table PIN's session and its CSRF token (when a PIN is set)."""
        @functools.wraps(view)
        def checked(*args, **kwargs):
            if guard.required:
                session = guard.session(request.cookies.get(COOKIE))
                if session is None:
                    raise ApiError(401, "enter the table PIN to change the game", pin_required=True)
                sent = request.headers.get("X-CSRF-Token", "")
                if not hmac.compare_digest(sent.encode(), session.csrf.encode()):
                    raise ApiError(403, "missing or wrong X-CSRF-Token header; reload the page")
            return view(*args, **kwargs)
        return checked

    def state_payload() -> dict:
        return {**host.snapshot(), "live": companion.live()}

    @app.errorhandler(ApiError)
    def api_error(exc: ApiError):
        resp = jsonify({"error": exc.message, **exc.extra})
        resp.status_code = exc.status
        if exc.status == 503:
            resp.headers["Retry-After"] = str(RETRY_AFTER_S)
        return resp

    @app.errorhandler(RuleError)
    def rule_error(exc: RuleError):
        return jsonify({"error": str(exc)}), 409

    @app.errorhandler(StoreError)
    def store_error(exc: StoreError):
        log.error("store: %s", exc)
        # a full disk or a locked file passes: the page's retry should come, not at once and not never
        return jsonify({"error": f"the game could not be saved, so nothing changed: {exc}"}), 503, \
            {"Retry-After": str(RETRY_AFTER_S)}

    install_json_errors(app, internal="internal error; the game is unchanged and the fault is in the daemon's log")

    # --- the page and its assets
    @app.get("/")
    def index():
        return assets.send(STATIC, "index.html")

    @app.get("/static/<path:name>")
    def static_file(name: str):
        return assets.send(STATIC, name)

    # --- reading
    @app.get("/api/state")
    def api_state():
        return jsonify(state_payload())

    @app.get("/api/games")
    def api_games():
        return jsonify([{"name": e.name, "title": e.title, "seats": {"min": e.seats[0], "max": e.seats[1], "usual": e.seats[2]},
                         "default_names": list(e.default_names) or None, "seat_choice": e.seat_choice,
                         "colours": list(e.colours), "setup_options": list(e.setup_options)}
                        for e in host.engines.values()])

    def join_urls() -> list[str]:
        # the port the tablet reached us on: behind --port 0 only the request knows it
        _, _, port = request.host.rpartition(":")
        return join.urls(cfg.host, int(port) if port.isdigit() else 80)

    @app.get("/api/join")
    def api_join():
        """Where a tablet opens the page, and whether the table is open to the Wi-Fi without a PIN."""
        wifi = join.reachable_from_wifi(cfg.host)
        return jsonify({"urls": join_urls() if wifi else [], "wifi": wifi, "pin": guard.required})

    @app.get("/api/join.svg")
    def api_join_qr():
        if not join.reachable_from_wifi(cfg.host):
            raise ApiError(404, "the companion listens on this machine only; start it with --host 0.0.0.0 for tablets")
        return Response(join.qr_svg(join_urls()[0]), mimetype="image/svg+xml", headers={"Cache-Control": "no-cache"})

    def may_see_hidden_cash() -> bool:
        """True unless some cash is hidden and the reader has no PIN session.

        Hidden cash is kept out of /api/state by the engine's view; the events keep every body as it was
        sent (a cash correction holds the new amount), so while any cash is hidden the log is for the PIN's
        session only."""
        if not host.cash_hidden():
            return True
        return guard.required and guard.session(request.cookies.get(COOKIE)) is not None

    def refuse_while_cash_hidden(what: str) -> None:
        """The whole record (a download, the flight recorder's game) while cash is hidden: the PIN's session only.

        A table without a PIN has no session to give it to, and the page there promises the hidden player the
        same as with one. So it stays closed until the cash is shown or the game ends: whoever wants it then
        presses Show my cash, where the table sees it and the log says so, rather than reading it unseen."""
        if may_see_hidden_cash():
            return
        if guard.required:
            raise ApiError(401, f"some cash is hidden: enter the table PIN to download {what}", pin_required=True)
        raise ApiError(403, f"some cash is hidden, and without a table PIN {what} is for nobody until the cash is "
                            "shown again or the game is over", cash_hidden=True)

    @app.get("/api/events")
    def api_events():
        after = _sequence_number("'after'", request.args.get("after")) or 0
        events = host.store.game_events(host.game_id, after=after)
        if not may_see_hidden_cash():
            # what happened and when, never what was sent: a body (or its source) could give the amount away
            return jsonify([e.outline() for e in events])
        return jsonify([e.to_dict() for e in events])

    @app.get("/api/record")
    def api_record():
        """The current game as a game record: one JSON object per line, one line per event."""
        # a record without its bodies could not be loaded again, so it is refused rather than cut down
        refuse_while_cash_hidden("the game record")
        lines = "".join(strict_json.dumps(e.to_dict(), separators=(",", ":")) + "\n"
                        for e in host.store.game_events(host.game_id))
        return Response(lines, mimetype="application/x-ndjson",
                        headers={"Content-Disposition": f'attachment; filename="game-{host.game_id}.jsonl"'})

    @app.post("/api/record")
    @change
    def api_load_record():
        """Load a game record (JSON lines, as downloaded) as a new game, to replay or continue it."""
        text = request.get_data(as_text=True)
        events = []
        for n, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                events.append(strict_json.loads(line))
            except RecursionError:
                raise ApiError(400, f"line {n} of the game record is nested too deeply") from None
            except strict_json.NonFinite as exc:
                raise ApiError(400, f"line {n} of the game record: {exc}") from None
            except ValueError:
                raise ApiError(400, f"line {n} of the game record is not JSON") from None
        ev = host.load_record(events, source="page")
        return jsonify({"ok": True, "seq": host.seq, "game_id": ev.game_id, "state": state_payload()})

    bundling = threading.Lock()

    @app.get("/api/flight-recorder")
    def api_flight_recorder():
        """The misread report: the flight recorder's window as one .tar.gz that `companion replay` plays back."""
        if guard.required and guard.session(request.cookies.get(COOKIE)) is None:
            raise ApiError(401, "enter the table PIN to download the flight recorder", pin_required=True)
        refuse_while_cash_hidden("the flight recorder")     # it holds the game's events whole
        if companion.recorder is None:
            raise ApiError(404, "this table has no sensors, so the flight recorder has nothing to give")
        if not bundling.acquire(blocking=False):
            raise ApiError(503, "a report is being made already; try again in a moment")
        try:
            name, data = companion.flight_bundle()
        finally:
            bundling.release()
        return Response(data, mimetype="application/gzip",
                        headers={"Content-Disposition": f'attachment; filename="{name}"', "Cache-Control": "no-store"})

    @app.get("/api/health")
    def api_health():
        live = companion.live()
        bad = [d for d in live.get("devices", []) if not d["ok"]]
        return jsonify({"ok": not bad, "devices": live.get("devices", []), "seq": host.seq})

    @app.get("/api/stream")
    def api_stream():
        last = _sequence_number("Last-Event-ID", request.headers.get("Last-Event-ID") or request.args.get("last_event_id"))
        if not streams.acquire(blocking=False):
            raise ApiError(503, f"too many live pages are open ({cfg.max_streams}); try again shortly")
        slot = _Slot(streams)
        response = Response(_stream(last, slot), mimetype="text/event-stream",
                            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})
        # the server closes every response it was given, read or not: a HEAD request, a stream never started or
        # one that failed before its first byte gives its slot back there (a generator never started never
        # reaches its own finally)
        response.call_on_close(slot.release)
        return response

    def _stream(last: int | None, slot: "_Slot"):
        try:
            yield b"retry: 2000\n\n"
            sent = last     # None: a new page, which starts from the whole state
            last_beat = time.monotonic()
            next_live = 0.0
            live_period = LIVE_PERIOD_S if companion.sensors is not None else IDLE_LIVE_PERIOD_S
            while True:
                caught_up = None if sent is None else feed.after(sent)
                if caught_up is None:
                    sent, message = feed.state()
                    yield message
                else:
                    sent, messages = caught_up
                    yield from messages
                now = time.monotonic()
                if now >= next_live:
                    # sensor readings, and proof of life the page can see (comments are invisible to EventSource)
                    yield feed.live()
                    next_live = now + live_period
                # a comment on a fixed beat, whatever else flows, so proxies and tablets see a live connection
                if now - last_beat >= cfg.heartbeat_s:
                    yield b": heartbeat\n\n"
                    last_beat = now
                host.wait_for_change(sent, timeout=max(0.01, min(next_live, last_beat + cfg.heartbeat_s) - now))
        finally:
            slot.release()

    # --- the PIN
    @app.get("/api/session")
    def api_session():
        session = guard.session(request.cookies.get(COOKIE))
        return jsonify({"pin_required": guard.required, "unlocked": session is not None or not guard.required,
                        "csrf": session.csrf if session else None})

    @app.post("/api/login")
    def api_login():
        pin = _body().get("pin")
        if not guard.required:
            raise ApiError(400, "this table has no PIN; changes are open")
        try:
            # waitress gives the peer's own address (no proxy is trusted), so X-Forwarded-For cannot pose as another
            done = guard.login(pin, client=request.remote_addr or "", device=request.cookies.get(DEVICE_COOKIE))
        except Locked as exc:
            resp = jsonify({"error": str(exc)})
            resp.status_code = 429
            resp.headers["Retry-After"] = str(int(exc.retry_after) + 1)
            return resp
        except ValueError:
            raise ApiError(403, "wrong PIN") from None
        resp = jsonify({"ok": True, "csrf": done.csrf})
        resp.set_cookie(COOKIE, done.token, max_age=int(SESSION_S), httponly=True, samesite="Strict", path="/")
        resp.set_cookie(DEVICE_COOKIE, done.device, max_age=int(DEVICE_S), httponly=True, samesite="Strict", path="/")
        return resp

    @app.post("/api/logout")
    def api_logout():
        guard.logout(request.cookies.get(COOKIE))
        resp = jsonify({"ok": True})
        resp.delete_cookie(COOKIE, path="/")
        return resp

    # --- changes
    @app.post("/api/action")
    @change
    def api_action():
        body = _body()
        action = body.get("action")
        if not isinstance(action, dict):
            raise ApiError(400, "send {\"action\": {…}} with the action as an object")
        if action.get("type") == "roll" and host.game == "balance_duels" and companion.arm is not None:
            return _rolled(companion.arm.roll(action.get("value"), source="page", action=action))
        ev = host.act(action, source="page")
        return jsonify({"ok": True, "seq": ev.seq, "state": state_payload()})

    def _rolled(ev):
        """A roll's answer: kept (held) when it came while the arm's last move was still being settled."""
        if ev is None:
            return jsonify({"ok": True, "held": True, "seq": host.seq, "state": state_payload()})
        return jsonify({"ok": True, "seq": ev.seq, "state": state_payload()})

    @app.post("/api/roll")
    @change
    def api_roll():
        body = _body()
        value = body.get("value")
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise ApiError(400, "'value' must be a whole number from 1 to 6, or left out for the companion to roll")
        if host.game != "balance_duels":
            raise RuleError("this game rolls dice with /api/dice")
        return _rolled(companion.roll_die(value, source="page"))

    @app.post("/api/dice")
    def api_dice():
        n = _body().get("n", 1)
        return jsonify({"values": companion.dice(n)})

    @app.post("/api/undo")
    @change
    def api_undo():
        _body()
        ev = host.undo(source="page")
        return jsonify({"ok": True, "seq": ev.seq, "state": state_payload()})

    @app.post("/api/new_game")
    @change
    def api_new_game():
        body = _body()
        game = body.get("game")
        options = body.get("options", {})
        if not isinstance(game, str):
            raise ApiError(400, "'game' must name a game: " + ", ".join(sorted(host.engines)))
        if not isinstance(options, dict):
            raise ApiError(400, "'options' must be an object")
        if game == "imperial" and options.get("deal") == "random":
            from companion.games.imperial import random_deal

            players = options.get("players")
            if not isinstance(players, list) or not all(isinstance(p, str) for p in players):
                raise ApiError(400, "a random deal needs 'players' as a list of names")
            options = {**options, "deal": random_deal(players, companion.rng)}
        ev = host.new_game(game, options, source="page")
        return jsonify({"ok": True, "seq": ev.seq, "state": state_payload()})

    @app.post("/api/sensing/answer")
    @change
    def api_sensing_answer():
        """The players say which move the companion saw (it asked because the sensors could not tell)."""
        if companion.arm is None:
            raise ApiError(404, "this table does not follow the arm with sensors")
        body = _body()
        if "move" in body:
            companion.arm.answer_move(body["move"])     # the players name the move, asked or not yet
        else:
            companion.arm.answer(body.get("option"))
        return jsonify({"ok": True, "state": state_payload()})

    def desk():
        if companion.calibration is None:
            raise ApiError(404, "this table has no load cells to calibrate")
        return companion.calibration

    @app.get("/api/calibration")
    def api_calibration():
        return jsonify(desk().status())

    @app.post("/api/calibration/<step>")
    @change
    def api_calibration_step(step: str):
        body = _body()
        d = desk()
        if step == "start":
            return jsonify(d.start(body.get("known_mass_g")))
        if step == "begin":
            return jsonify(d.begin(body.get("step"), body.get("mass_g"), body.get("holder")))
        if step == "finish":
            return jsonify(d.finish())
        if step == "cancel":
            return jsonify(d.cancel())
        if step == "save":
            return jsonify(d.save())
        raise ApiError(404, f"no calibration action {step!r}: start, begin, finish, cancel or save")

    @app.get("/api/map/<game>")
    def api_map(game: str):
        try:
            return jsonify({"game": game, "completed": companion.maps.get(game)})
        except MapFileError as exc:
            raise ApiError(404, str(exc)) from None

    @app.post("/api/map/<game>")
    @change
    def api_map_add(game: str):
        """The players add what the printed board shows and the shipped map lacks (saved beside the config)."""
        try:
            completed = companion.complete_map(game, _body().get("add"))
        except MapFileError as exc:
            raise ApiError(400, f"nothing was saved: {in_words(str(exc), 'map')}") from None
        except MapWriteError as exc:
            # as the store's own disk errors: a full disk or a read-only folder may be mended, so the page's retry
            # should come later (api_error adds Retry-After to every 503); the old file is kept
            log.error("maps: %s", exc)
            raise ApiError(503, f"nothing was saved, the old map file is kept: {exc}") from None
        return jsonify({"ok": True, "game": game, "completed": completed, "state": state_payload()})

    history_api.install(app, companion, change, ApiError, _body)      # the plays, people and ratings (game nights)

    @app.post("/api/buttons/<name>")
    @change
    def api_button(name: str):
        hold = _body().get("hold", False)
        if not isinstance(hold, bool):
            raise ApiError(400, "'hold' must be true or false")
        if name not in companion.buttons.names:
            raise ApiError(404, f"no button named {name!r}; buttons: {', '.join(companion.buttons.names)}")
        refusal = companion.hold(name) if hold else companion.press(name)
        if refusal:
            raise RuleError(refusal)
        return jsonify({"ok": True, "state": state_payload()})

    return app
