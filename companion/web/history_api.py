"""The history's endpoints: plays, a play in full, people, stats, ratings, and the changes (rename, merge, resume).

Every query parameter is checked: an unknown one, a count or page out of bounds, a date that is not one, a game
this table does not know, a name too long: 400 naming what is wrong. The GETs only read. The POSTs are changes:
the table PIN's session, JSON bodies, the checks of hardening.py, all as every other change; a refused one
changes nothing. While the history is still being built (a big store's first start) the reads answer 503 with
Retry-After and how far it has got.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timezone
from typing import Any, Callable

from flask import Flask, jsonify, request

from companion.history.index import MAX_LIMIT, MAX_OFFSET, NotReady, UnknownPlay
from companion.history.people import MAX_NAME, PeopleError

STATUSES = ("all", "finished", "unfinished")
MAX_PLAY_ID = 2**63 - 1


def _int(name: str, raw: str | None, low: int, high: int, default: int) -> int:
    if raw is None:
        return default
    if not re.fullmatch(r"[0-9]{1,19}", raw.strip()) or not low <= int(raw) <= high:
        raise ValueError(f"'{name}' must be a whole number from {low} to {high}, not {raw[:40]!r}")
    return int(raw)


def _when(name: str, raw: str | None) -> datetime | None:
    """A date (2026-03-14, taken as midnight UTC) or a date and time with its offset (2026-03-14T18:00:00+01:00)."""
    if raw is None or raw == "":
        return None
    text = raw.strip()
    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            d = date.fromisoformat(text)
            return datetime(d.year, d.month, d.day, tzinfo=timezone.utc)
        t = datetime.fromisoformat(text)
    except ValueError:
        t = None
    if t is None or len(text) > 40:
        raise ValueError(f"'{name}' must be a date (2026-03-14) or a date and time with its offset "
                         f"(2026-03-14T18:00:00+01:00), not {raw[:40]!r}")
    if t.tzinfo is None:
        raise ValueError(f"'{name}' {raw[:40]!r} has no offset: add Z or +01:00, so it is one moment")
    return t


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
        status = request.args.get("status", "all")
        if status not in STATUSES:
            raise ValueError(f"'status' must be one of {', '.join(STATUSES)}, not {status[:40]!r}")
        since, until = _when("since", request.args.get("since")), _when("until", request.args.get("until"))
        if since and until and until <= since:
            raise ValueError("'until' must come after 'since'")
        page = history.plays(game=game_arg(), player=player_arg(), since=since, until=until, status=status,
                             limit=_int("limit", request.args.get("limit"), 1, MAX_LIMIT, 50),
                             offset=_int("offset", request.args.get("offset"), 0, MAX_OFFSET, 0))
        return jsonify(page)

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
