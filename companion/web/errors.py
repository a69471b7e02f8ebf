"""What every web app of the companion answers on errors: JSON naming the problem, never a stack trace."""

from __future__ import annotations

import logging

from typing import Any

from flask import Flask, Response, jsonify, request
from flask.json.provider import DefaultJSONProvider
from werkzeug.exceptions import HTTPException

from companion.foundation import strict_json

log = logging.getLogger(__name__)


class StrictJSONProvider(DefaultJSONProvider):
    """Flask's JSON, strict both ways (companion/foundation/strict_json.py): what jsonify would write as NaN fails instead."""

    sort_keys = False

    def dumps(self, obj: Any, **kwargs: Any) -> str:
        kwargs.setdefault("allow_nan", False)
        return super().dumps(obj, **kwargs)

    def loads(self, s: str | bytes, **kwargs: Any) -> Any:
        return strict_json.check(super().loads(s, **kwargs))


def strict_json_app(app: Flask) -> None:
    app.json = StrictJSONProvider(app)


def install_json_errors(app: Flask, *, internal: str) -> None:
    """HTTP errors as {"error": …}; anything unexpected logged with its traceback and answered 500 with `internal`."""

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException):
        names = {404: f"no such page or API endpoint: {request.path}",
                 405: f"{request.method} is not allowed on {request.path}",
                 413: f"the request body is too large ({(app.config.get('MAX_CONTENT_LENGTH') or 0) // 1024} KB "
                      "at most)"}
        return jsonify({"error": names.get(exc.code, exc.description or exc.name)}), exc.code

    @app.errorhandler(Exception)
    def unexpected(exc: Exception):
        log.exception("unexpected error on %s %s", request.method, request.path)
        return jsonify({"error": internal}), 500

    @app.after_request
    def headers(resp: Response):
        resp.headers.setdefault("X-Content-Type-Options", "nosniff")
        resp.headers.setdefault("Cache-Control", "no-store")
        return resp
