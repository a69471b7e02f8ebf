"""The page's own files, sent gzip-compressed to browsers that take it (every tablet's does).

The page is every game's view and form in one load, about 200 KB of script and style; compressed it is about a
quarter of that on the table's Wi-Fi. Each file is compressed once per version of it on disk and kept in memory.
"""

from __future__ import annotations

import gzip
import os
from functools import lru_cache
from pathlib import Path

from flask import Response, request, send_from_directory
from werkzeug.security import safe_join

SMALLEST = 1024        # below this, compressing saves less than it costs


@lru_cache(maxsize=64)
def _packed(path: str, mtime_ns: int, size: int) -> bytes:
    # mtime=0: the same file gives the same bytes (and so the same ETag) after a restart
    return gzip.compress(Path(path).read_bytes(), compresslevel=9, mtime=0)


def send(directory: Path, name: str) -> Response:
    """`name` from `directory` as send_from_directory sends it (404, conditional requests, caching headers), the
    body compressed when the browser accepts gzip."""
    resp = send_from_directory(directory, name)
    if resp.status_code != 200 or "gzip" not in request.accept_encodings:
        return resp
    path = safe_join(str(directory), name)
    if path is None:
        return resp
    st = os.stat(path)
    if st.st_size < SMALLEST:
        return resp
    resp.close()
    tag, _ = resp.get_etag()
    tag = f"{tag}-gzip" if tag else None
    if tag and request.if_none_match.contains(tag):
        # the browser has this very version, compressed: the plain file's tag (which werkzeug compares) is not it
        unchanged = Response(status=304)
        unchanged.set_etag(tag)
        unchanged.headers["Vary"] = "Accept-Encoding"
        return unchanged
    body = _packed(path, st.st_mtime_ns, st.st_size)
    packed = Response(body, status=200, mimetype=resp.mimetype)
    for header in ("Cache-Control", "Last-Modified", "Expires"):
        if header in resp.headers:
            packed.headers[header] = resp.headers[header]
    if tag:
        packed.set_etag(tag)
    packed.headers["Content-Encoding"] = "gzip"
    packed.headers["Vary"] = "Accept-Encoding"
    return packed
