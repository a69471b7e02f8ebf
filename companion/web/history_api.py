"""The history's endpoints: plays, a play in full, people, stats, ratings, and the changes (rename, merge, resume).

Every query parameter is checked: an unknown one, a count or page out of bounds, a date that is not one, a game
this table does not know, a name too long: 400 naming what is wrong. The GETs only read. The POSTs are changes:
the table PIN's session, JSON bodies, the checks of hardening.py, all as every other change; a refused one
changes nothing. While the history is still being built (a big store's first start) the reads answer 503 with
Retry-After and how far it has got.
"""

from __future__ import annotations

import threading
from typing import Any, Callable

from flask import Flask, Response, jsonify, request

from companion.history import exports, query
from companion.history.index import MAX_EXPORT, MAX_LIMIT, MAX_OFFSET, NotReady, UnknownPlay
from companion.history.people import MAX_NAME, PeopleError

STATUSES = query.STATUSES
MAX_PLAY_ID = 2**63 - 1
EXPORTS_AT_ONCE = 2         # exports being made at one time; another is told to try again (503)
EXPORT_TYPES = {"csv": "text/csv; charset=utf-8; header=present", "json": "application/json",
                "bgstats": "application/json"}
EXPORT_NAMES = {"csv": "plays.csv", "json": "plays.json", "bgstats": "plays.bgstats.json"}
_int = query.whole_number
_when = query.moment


def _only(allowed: tuple[str, ...]) -> None:
    extra = sorted(set(request.args) - set(allowed))
    if extra:
        raise ValueError(f"unknown query parameter(s) {', '.join(repr(e[:40]) for e in extra[:5])}; "
                         f"this takes {', '.join(allowed) or 'none'}")


def install(app: Flask, companion, change: Callable, api_error: type, body: Callable[[], dict]) -> None:
    """The routes on `app`; `change` is the app's PIN check for changes, `api_error` its ApiError, `body` its
    reader of a JSON object body."""
    _body = body
    history = companion.history
    mqtt = getattr(companion.config, "mqtt", None)
    location = (mqtt.display_name if mqtt is not None else None) or "Table Companion"

    def bad(exc: Exception):
        return api_error(400, str(exc))

    def games() -> list[str]:
        return sorted(companion.host.engines)

    def read(view):
        def wrapped(*args, **kwargs):
            try:
                return view(*args, **kwargs)
            except NotReady as exc:
                raise api_error(503, str(exc), building={"done": exc.done, "total": exc.total}) from None
            except ValueError as exc:
                raise bad(exc) from None
        wrapped.__name__ = view.__name__
        return wrapped

    def game_arg() -> str | None:
        game = request.args.get("game")
        if game in (None, ""):
            return None
        if game not in games():
            raise ValueError(f"'game' must be one of {', '.join(games())}, not {game[:40]!r}")
        return game

    def filters() -> dict:
        """The filters the plays and their exports share: game, player, since, until, status."""
        since, until = _when("since", request.args.get("since")), _when("until", request.args.get("until"))
        query.span(since, until)
        return {"game": game_arg(), "player": player_arg(), "since": since, "until": until,
                "status": query.status("status", request.args.get("status"))}

    def player_arg() -> str | None:
        player = request.args.get("player")
        if player in (None, ""):
            return None
        player = " ".join(player.split())
        if not player or len(player) > MAX_NAME:
            raise ValueError(f"'player' must be a name of 1 to {MAX_NAME} characters")
        return player

    @app.get("/api/plays")
    @read
    def api_plays():
        _only(("game", "player", "since", "until", "status", "limit", "offset"))
        page = history.plays(**filters(), limit=_int("limit", request.args.get("limit"), 1, MAX_LIMIT, 50),
                             offset=_int("offset", request.args.get("offset"), 0, MAX_OFFSET, 0))
        return jsonify(page)

    exporting = threading.BoundedSemaphore(EXPORTS_AT_ONCE)

    @app.get("/api/plays/export")
    @read
    def api_plays_export():
        """Every play that passes the filters (at most MAX_EXPORT, then `offset` for the next ones) as CSV, as the
        API's JSON, or as a BG Stats file (exports.py); a download. Reads only, outside the table's lock."""
        _only(("format", "game", "player", "since", "until", "status", "limit", "offset", "tz"))
        fmt = request.args.get("format", "")
        if not fmt:
            raise ValueError(f"'format' names the export: {', '.join(query.FORMATS)}")
        if fmt not in query.FORMATS:
            raise ValueError(f"'format' must be one of {', '.join(query.FORMATS)}, not {fmt[:40]!r}")
        chosen = filters()
        limit = _int("limit", request.args.get("limit"), 1, MAX_EXPORT, MAX_EXPORT)
        offset = _int("offset", request.args.get("offset"), 0, MAX_OFFSET, 0)
        tz = query.zone("tz", request.args.get("tz"))
        if fmt == "json" and "tz" in request.args:
            raise ValueError("'tz' is for the csv and bgstats formats; the JSON gives every time in UTC")
        if not exporting.acquire(blocking=False):
            raise api_error(503, f"{EXPORTS_AT_ONCE} exports are being made already; try again in a moment")
        try:
            got = history.export(**chosen, limit=limit, offset=offset)
        finally:
            exporting.release()
        headers = {"Content-Disposition": f'attachment; filename="{EXPORT_NAMES[fmt]}"',
                   "X-Plays-Total": str(got["total"]), "X-Plays-Offset": str(offset),
                   "X-Plays-Count": str(len(got["plays"]))}
        if offset + len(got["plays"]) < got["total"]:
            headers["X-Plays-Next-Offset"] = str(offset + len(got["plays"]))
        if fmt == "csv":
            # streamed from the plays already described: the spreadsheet's UTF-8 mark first
            body: Any = exports.csv_chunks(got["plays"], tz, bom=True)
        elif fmt == "json":
            body = app.json.dumps({k: got[k] for k in ("total", "offset", "limit", "plays")}, ensure_ascii=False)
        else:
            body = app.json.dumps(exports.bgstats(got["plays"], store=got["store"], firsts=got["firsts"], tz=tz,
                                                  location=location, total=got["total"], offset=offset),
                                  ensure_ascii=False)
        return Response(body, mimetype=None, content_type=EXPORT_TYPES[fmt], headers=headers)

    @app.get("/api/plays/<play_id>")
    @read
    def api_play(play_id: str):
        _only(())
        pid = _int("play id", play_id, 1, MAX_PLAY_ID, 0)
        try:
            return jsonify(history.play(pid))
        except UnknownPlay as exc:
            raise api_error(404, str(exc)) from None

    @app.get("/api/stats")
    @read
    def api_stats():
        _only(("game", "player", "limit"))
        return jsonify(history.stats(game=game_arg(), player=player_arg(),
                                     limit=_int("limit", request.args.get("limit"), 1, MAX_LIMIT, 50)))

    @app.get("/api/ratings")
    @read
    def api_ratings():
        _only(("game", "limit"))
        game = game_arg()
        if game is None:
            raise ValueError(f"'game' names the game to rate: {', '.join(games())}")
        return jsonify(history.ratings(game, limit=_int("limit", request.args.get("limit"), 1, MAX_LIMIT, 50)))

    @app.get("/api/people")
    @read
    def api_people():
        """The names of earlier plays for New game: the most recently seated first, `q` matched as names are."""
        _only(("q", "limit"))
        q = request.args.get("q", "")
        if len(q) > MAX_NAME:
            raise ValueError(f"'q' is at most {MAX_NAME} characters")
        return jsonify(history.people(q, limit=_int("limit", request.args.get("limit"), 1, MAX_LIMIT, 20)))

    def people_change(do):
        try:
            return do()
        except PeopleError as exc:
            raise api_error(exc.status, str(exc)) from None
        except NotReady as exc:
            raise api_error(503, str(exc), building={"done": exc.done, "total": exc.total}) from None

    @app.post("/api/people")
    @change
    def api_people_change():
        """{"op": "rename", "name", "to"} or {"op": "merge", "name", "into"}: written as a people event."""
        body = _body()
        extra = sorted(set(body) - {"op", "name", "to", "into"})
        if extra:
            raise api_error(400, f"unknown field(s) {', '.join(repr(e[:40]) for e in extra[:5])}")
        return jsonify({"ok": True, **people_change(lambda: history.change_people(body))})

    @app.post("/api/people/undo")
    @change
    def api_people_undo():
        if _body():
            raise api_error(400, "send an empty object: the undo takes back the latest rename or merge")
        return jsonify({"ok": True, **people_change(lambda: history.undo_people())})

    @app.post("/api/plays/<play_id>/resume")
    @change
    def api_resume(play_id: str):
        """Make an unfinished play the current game again (the current one stays in the history, unfinished)."""
        try:
            pid = _int("play id", play_id, 1, MAX_PLAY_ID, 0)
        except ValueError as exc:
            raise api_error(400, str(exc)) from None
        if _body():
            raise api_error(400, "send an empty object: the play is named in the path")
        try:
            history.check_resume(pid)
            ev = companion.host.resume(pid, source="page")
        except (UnknownPlay, LookupError) as exc:
            raise api_error(404, str(exc)) from None
        except NotReady as exc:
            raise api_error(503, str(exc), building={"done": exc.done, "total": exc.total}) from None
        return jsonify({"ok": True, "game_id": ev.game_id, "resumes": pid,
                        "state": {**companion.host.snapshot(), "live": companion.live()}})
