"""HTTP fuzzing: random methods, paths, headers and bodies against the daemon's API.

The promises checked for every request:
  * never a 5xx (503 only where the API documents it: the stream cap, a store that cannot save),
  * every error (4xx) is a JSON object whose "error" names the problem,
  * every JSON answer strict: no NaN or Infinity, which a browser's JSON.parse refuses,
  * a refused request, and any read, changes nothing (the log's last seq and the game's view),
  * no CORS header, whatever the Origin,
  * a request whose answer is known (`Request.expect`, the hostile set's) gets exactly that status,
  * an answer holds no secret the request names (`Request.secret`: the hidden cash, read without the PIN).
`Target` runs the Flask app in-process (Flask's test client); `send_over_http` the same requests to a
daemon process on loopback. `hostile_requests()` are sent on every run besides the random ones: the inputs
that once answered 500 or stored what no page could read (NaN and huge numbers in queries, options and
actions, mistyped options for every option of every game, bodies over the limit), and what another page on
the table's Wi-Fi can send (issue 34: cross-origin changes, form and text bodies, a foreign Host, names of
10,000 characters or with control characters in every game, a colour that is style text, map completions past
what the next start loads, every read of a game whose hidden cash was corrected).
"""

from __future__ import annotations

import dataclasses
import functools
import http.client
import json
import random
import re
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from companion.foundation.clock import FakeClock
from companion.config import parse
from companion.table.daemon import Companion
from companion.web import create_app
from companion.games import balance_duels as bd
from companion.games.registry import engines
from companion.web.auth import COOKIE
from companion.web.serving import MAX_BODY_BYTES
from tests.reliability.fuzzing import ActionMaker, engine_vocabulary, json_scalars, json_values

PIN = "2468"
METHODS = ("GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS")
READS = ("/", "/api/state", "/api/games", "/api/events", "/api/record", "/api/health", "/api/stream",
         "/api/session", "/static/app.js", "/static/style.css", "/api/plays", "/api/plays/1", "/api/stats", "/api/people",
         "/api/ratings?game=risk")
CHANGES = ("/api/action", "/api/roll", "/api/dice", "/api/undo", "/api/new_game", "/api/login", "/api/logout",
           "/api/buttons/roll", "/api/buttons/next", "/api/buttons/confirm", "/api/buttons/undo", "/api/people",
           "/api/people/undo", "/api/plays/1/resume")
ODD_PATHS = ("/api", "/api/", "/api/state/", "/API/STATE", "/api/buttons/", "/api/buttons/launch",
             "/static/../companion/store.py", "/static/%2e%2e/%2e%2e/etc/passwd", "/static/", "/api/events/1",
             "//api/state", "/api/stream/x", "/index.html", "/favicon.ico", "/api/state;x", "/%00", "/api/%ff")
CONTENT_TYPES = ("application/json", "application/json; charset=utf-8", "text/plain", "",
                 "application/x-www-form-urlencoded", "multipart/form-data; boundary=xyz", "application/json; charset=latin-1",
                 "text/event-stream", "application/xml")
GAMES = ("balance_duels", "imperial", "risk", "balance_of_power", "global_powers")
OPTION_KEYS = {name: e.option_keys for name, e in engines(bd.load_model("A")).items()}
# as they are written in a body: Python's json reads all four (1e999 as inf), JSON.parse none of them
NON_FINITE = ("NaN", "Infinity", "-Infinity", "1e999")
# numbers for a query: past SQLite's integers, negative, long enough to cost int() time, not numbers at all
HUGE_QUERY_NUMBERS = ("9223372036854775808", "9223372036854775807", "-1", "-9223372036854775809", "1" + "0" * 40,
                      "9" * 5000, "NaN", "Infinity", "1e999", "1.5", "0x10", "%D9%A1")
SAFE_TEXT = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=30)
ALLOWED_5XX = {503}


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes | None
    session: bool = False          # send the valid PIN session (cookie + CSRF token)
    # the status it must be answered, where the hostile set knows it (None: any that keeps the other promises);
    # a refusal that moved to another status would be a guard that moved, or one that went
    expect: int | None = None
    # what the answer must not hold (hidden cash, read without the PIN's session)
    secret: bytes | None = None

    def at_seq(self, seq: int) -> "Request":
        """The request with `{seq-N}` in its path and headers filled in from the table's seq now (a stream resumed
        N events back)."""
        def fill(text: str) -> str:
            return re.sub(r"\{seq-(\d+)\}", lambda m: str(max(0, seq - int(m.group(1)))), text)
        if "{seq-" not in self.path + "".join(self.headers.values()):
            return self
        return dataclasses.replace(self, path=fill(self.path), headers={k: fill(v) for k, v in self.headers.items()})

    def describe(self) -> str:
        body = self.body if self.body is None or len(self.body) < 120 else self.body[:120] + b"..."
        return (f"{self.method} {self.path} headers={self.headers} session={self.session} body={body!r}"
                + (f" expect={self.expect}" if self.expect is not None else "")
                + (f" secret={self.secret!r}" if self.secret is not None else ""))


@dataclass
class Result:
    request: Request
    status: int
    problems: list[str] = field(default_factory=list)


# --- strategies

def _json_bytes(value: Any) -> bytes:
    return json.dumps(value).encode()


def _non_finite_in(value: Any, word: str, rng: random.Random) -> bytes:
    """value as JSON with one number (or, where there is none, a new key) swapped for a non-finite one."""
    text = json.dumps({"fuzz": 0} if not isinstance(value, (dict, list)) else value)
    spots = [i for i in range(len(text)) if text[i].isdigit() and (i == 0 or text[i - 1] in ":[, ")]
    if not spots:
        return text.replace("{", '{"extra": ' + word + ", ", 1).replace(", }", "}").encode() if text.startswith("{") \
            else f"[{word}]".encode()
    at = rng.choice(spots)
    end = at
    while end < len(text) and (text[end].isdigit() or text[end] in ".eE+-"):
        end += 1
    return (text[:at] + word + text[end:]).encode()


def _nested(depth: int, opener: str) -> bytes:
    closer = {"[": "]", "{\"a\":": "}"}[opener]
    return (opener * depth + "1" + closer * depth).encode()


def bodies(rng_actions: st.SearchStrategy) -> st.SearchStrategy:
    """Request bodies: nothing, noise, any JSON, or the shapes the API expects with random insides."""
    shaped = st.one_of(
        st.builds(lambda a: {"action": a}, rng_actions),
        st.builds(lambda v: {"action": v}, json_values()),
        st.builds(lambda v: {"value": v}, st.one_of(st.integers(0, 7), json_scalars())),
        st.builds(lambda v: {"n": v}, st.one_of(st.integers(-1, 12), json_scalars())),
        st.builds(lambda g, o: {"game": g, "options": o}, st.one_of(st.sampled_from(GAMES), json_scalars()),
                  st.one_of(st.dictionaries(st.sampled_from(("players", "pawns", "teams", "variant", "x")),
                                            st.one_of(st.integers(-1, 7), json_scalars()), max_size=3),
                            json_values())),
        st.builds(lambda v: {"hold": v}, json_scalars()),
        st.builds(lambda v: {"pin": v}, st.one_of(st.sampled_from(("0000", "1234", "99999999")), json_scalars())),
    )
    # every option a game takes, with any JSON value, huge numbers among them
    options = st.sampled_from(GAMES).flatmap(lambda g: st.builds(
        lambda o: {"game": g, "options": o},
        st.dictionaries(st.sampled_from(OPTION_KEYS[g]), st.one_of(json_values(), st.integers(2**53, 2**70)),
                        max_size=3)))
    return st.one_of(
        st.builds(_json_bytes, options),
        st.builds(_non_finite_in, st.one_of(shaped, options), st.sampled_from(NON_FINITE),
                  st.integers(0, 2**32 - 1).map(random.Random)),
        st.none(),
        st.builds(_json_bytes, shaped),
        st.builds(_json_bytes, shaped),
        st.builds(_json_bytes, json_values()),
        st.binary(max_size=300),
        st.text(max_size=100).map(lambda t: t.encode("utf-8", "surrogatepass")),
        st.builds(_nested, st.integers(10, 40_000), st.sampled_from(("[", "{\"a\":"))),
        st.sampled_from((b"", b"null", b"{}", b"[]", b"\"text\"", b"NaN", b"{\"action\": NaN}", b"\xff\xfe{",
                         b"{\"value\": 1e999}", b"{\"n\": 10000000000000000000000}", b" " * 70_000,
                         b" " * (MAX_BODY_BYTES + 1))),
    )


def paths() -> st.SearchStrategy:
    query = st.one_of(st.just(""), st.builds(lambda k, v: f"?{k}={v}", st.sampled_from(
        ("after", "last_event_id", "x", "after[]")), st.one_of(st.integers(-5, 10**20).map(str), SAFE_TEXT.map(
            lambda t: t.replace("#", "").replace(" ", "%20")), st.sampled_from(HUGE_QUERY_NUMBERS))))
    base = st.one_of(st.sampled_from(READS), st.sampled_from(CHANGES), st.sampled_from(CHANGES),
                     st.sampled_from(CHANGES), st.sampled_from(CHANGES), st.sampled_from(ODD_PATHS),
                     st.builds(lambda p, s: p + "/" + s, st.sampled_from(READS + CHANGES),
                               SAFE_TEXT.map(lambda t: t.replace("#", "").replace("?", "").replace(" ", "%20"))))
    return st.builds(lambda b, q: b + q, base, query)


def _with_content_type(hdrs: dict[str, str], ctype: str | None) -> dict[str, str]:
    if ctype is not None:
        hdrs["Content-Type"] = ctype
    return hdrs


def headers() -> st.SearchStrategy:
    values = st.one_of(SAFE_TEXT, st.integers(-3, 10**12).map(str))
    # mostly JSON, as a page sends, so bodies get past the content type to the parser and the rules
    ctype = st.sampled_from(("application/json",) * 6 + CONTENT_TYPES + (None, None))
    return st.builds(_with_content_type, st.fixed_dictionaries({}, optional={
        "Last-Event-ID": values,
        "X-CSRF-Token": values,
        "Cookie": st.one_of(st.builds(lambda v: f"{COOKIE}={v}", values), values),
        "Origin": st.sampled_from(("http://evil.example", "null", "http://127.0.0.1")),
        "Accept": st.sampled_from(("*/*", "text/event-stream", "application/json", "text/html")),
        "X-Requested-With": values,
    }), ctype)


def requests(game_vocab_maker) -> st.SearchStrategy:
    """Random requests; actions come from `game_vocab_maker(rng)` (random actions for the current game).

    The action's randomness is one drawn seed: the game (and so how much randomness an action takes) lives
    outside Hypothesis and changes between examples, and Hypothesis needs every draw to be reproducible."""
    actions = st.builds(game_vocab_maker, st.integers(0, 2**32 - 1).map(random.Random))
    return st.builds(Request, st.sampled_from(METHODS + ("GET",) * 3 + ("POST",) * 8), paths(), headers(),
                     bodies(actions), st.booleans())


# --- the in-process target

class Target:
    """A Companion on the simulated table, its app, and a cookie-less test client (each request says its own)."""

    def __init__(self, db: Path, *, pin: bool = False, seed: int = 7):
        # the players' map completions beside the store, never in the working directory
        data: dict[str, Any] = {"simulate": {"enabled": True, "demo": False, "seed": seed},
                                "maps": {"dir": str(db.parent / "maps")}}
        if pin:
            data["web"] = {"pin": PIN}
        cfg = dataclasses.replace(parse(data), store_path=db)
        self.clock = FakeClock()
        self.companion = Companion(cfg, clock=self.clock)
        self.app = create_app(self.companion)
        self.client = self.app.test_client(use_cookies=False)
        self.session: tuple[str, str] | None = None
        if pin:
            r = self.client.post("/api/login", json={"pin": PIN})
            cookie = r.headers["Set-Cookie"].split(";")[0].split("=", 1)[1]
            self.session = (cookie, r.get_json()["csrf"])
        self.requests = 0
        self.statuses: dict[int, int] = {}

    def close(self) -> None:
        self.companion.stop()

    def action_maker(self, rng: random.Random) -> dict:
        host = self.companion.host
        return ActionMaker(engine_vocabulary(host.engine), rng).make(host.snapshot()["view"])

    def fingerprint(self) -> tuple[int, int, str]:
        host = self.companion.host
        # the maps the players completed too: a refused completion must save nothing
        return host.seq, host.store.last_seq(), json.dumps([host.snapshot()["view"], self.companion.maps.all()],
                                                           sort_keys=True)

    def maps_load(self) -> list[str]:
        """Each map file the table has saved, as the next start reads it: the problems (none, or the start fails)."""
        return maps_problems(self.companion.maps.directory)

    def send(self, req: Request) -> Result:
        req = req.at_seq(self.companion.host.seq)
        hdrs = dict(req.headers)
        if req.session and self.session and req.path.split("?")[0] != "/api/logout":
            hdrs["Cookie"] = f"{COOKIE}={self.session[0]}"
            hdrs["X-CSRF-Token"] = self.session[1]
        before = self.fingerprint()
        path, _, query = req.path.partition("?")
        # the test client would read "//host/..." as a URL with a host; the server sees it as a path
        resp = self.client.open("/", method=req.method, headers=hdrs, data=req.body, buffered=False,
                                environ_overrides={"PATH_INFO": _unquote_path(path), "QUERY_STRING": query})
        try:
            if resp.mimetype == "text/event-stream" and resp.status_code == 200:
                # an endless stream: its first two chunks (the retry line and the state), then hang up
                parts = []
                for chunk in resp.response:
                    parts.append(chunk if isinstance(chunk, bytes) else chunk.encode())
                    if len(parts) == 2:
                        break
                payload = b"".join(parts)
            else:
                payload = resp.get_data()
        finally:
            resp.close()
        self.requests += 1
        self.statuses[resp.status_code] = self.statuses.get(resp.status_code, 0) + 1
        result = Result(req, resp.status_code)
        check(result, dict(resp.headers), resp.mimetype, payload, before, self.fingerprint())
        return result


def _unquote_path(path: str) -> str:
    """PATH_INFO as a WSGI server hands it over: percent-decoded, as latin-1 text."""
    return urllib.parse.unquote_to_bytes(path).decode("latin-1")


def check(result: Result, headers: dict[str, str], mimetype: str, payload: bytes, before: tuple,
          after: tuple) -> None:
    """The promises for one answer."""
    req, status = result.request, result.status
    p = result.problems
    if status >= 500 and status not in ALLOWED_5XX:
        p.append(f"answered {status}")
    if req.expect is not None and status != req.expect:
        p.append(f"answered {status}, not {req.expect}")
    if any(k.lower().startswith("access-control-") for k in headers):
        p.append("sent a CORS header")
    if req.secret is not None and req.secret in payload:
        p.append(f"the answer holds {req.secret!r}, the hidden cash")
    for problem in _not_strict(mimetype, payload):
        p.append(problem)
    if status >= 400 and req.method != "HEAD":
        try:
            data = json.loads(payload)
        except ValueError:
            data = None
        if mimetype != "application/json" or not isinstance(data, dict) or not isinstance(data.get("error"), str) \
                or len(data["error"].strip()) < 5:
            p.append(f"error {status} without a JSON body naming the problem: {payload[:120]!r}")
    if (status >= 400 or req.method in ("GET", "HEAD", "OPTIONS")) and after != before:
        p.append(f"{'refused' if status >= 400 else 'read-only'} request ({status}) changed the game "
                 f"(seq {before[0]} -> {after[0]}, log {before[1]} -> {after[1]})")


class NotStrict(ValueError):
    pass


def _refuse_constant(word: str) -> Any:
    raise NotStrict(f"{word} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise NotStrict(f"{text} is past a double's range")
    return value


def strict_loads(text: str | bytes) -> Any:
    """json.loads as a browser's JSON.parse: NaN, Infinity and numbers past a double's range refused (NotStrict)."""
    return json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)


def _not_strict(mimetype: str, payload: bytes) -> list[str]:
    """Why an answer's JSON (a body, a record's lines, a stream's data lines) is not strict, if it is not."""
    if mimetype == "application/json":
        texts = [payload]
    elif mimetype == "application/x-ndjson":
        texts = [line for line in payload.splitlines() if line.strip()]
    elif mimetype == "text/event-stream":
        texts = [line[5:] for line in payload.splitlines() if line.startswith(b"data:")]
    else:
        return []
    for text in texts:
        try:
            strict_loads(text)
        except NotStrict as exc:
            return [f"sent JSON that JSON.parse refuses ({exc}): {text[:120]!r}"]
        except ValueError:
            pass            # not JSON at all: the other promises say whether that is wrong here
    return []


def hostile_requests() -> list[Request]:
    """Sent on every run: what answered 500, or was stored where no page could read it, before issue 19."""
    post = functools.partial(Request, "POST", headers={"Content-Type": "application/json"}, session=True)
    reqs = []
    for word in NON_FINITE:
        reqs += [post("/api/action", body=f'{{"action": {{"type": "roll", "value": 3, "extra": {word}}}}}'.encode()),
                 post("/api/action", body=f'{{"action": {{"type": "roll", "value": {word}}}}}'.encode()),
                 post("/api/roll", body=f'{{"value": {word}}}'.encode()),
                 post("/api/dice", body=f'{{"n": {word}}}'.encode()),
                 post("/api/login", body=f'{{"pin": {word}}}'.encode()),
                 post("/api/buttons/roll", body=f'{{"hold": {word}}}'.encode()),
                 post("/api/record", body=(f'{{"kind": "new_game", "body": {{"game": "risk", "options": '
                                           f'{{"setup": {word}}}}}}}\n').encode()),
                 Request("POST", "/api/record", {"Content-Type": "application/x-ndjson"}, (
                     '{"kind": "new_game", "body": {"game": "balance_duels", "options": {}}}\n'
                     f'{{"kind": "action", "body": {{"action": {{"type": "roll", "value": 2, "x": [{word}]}}}}}}\n'
                 ).encode(), session=True)]
    for game in GAMES:
        for key in OPTION_KEYS[game]:
            for value in ("[]", "{}", '[[]]', '{"a": []}', "true", "-1", str(2**64), "NaN", "1e999", '"x"', "null"):
                body = f'{{"game": "{game}", "options": {{"{key}": {value}}}}}'
                reqs.append(post("/api/new_game", body=body.encode()))
                reqs.append(Request("POST", "/api/record", {"Content-Type": "application/x-ndjson"},
                                    f'{{"kind": "new_game", "body": {body}}}\n'.encode(), session=True))
    for name in ("after", "last_event_id"):
        for number in HUGE_QUERY_NUMBERS:
            path = "/api/events" if name == "after" else "/api/stream"
            reqs.append(Request("GET", f"{path}?{name}={number}", {}, None))
    for number in HUGE_QUERY_NUMBERS[:8]:
        reqs.append(Request("GET", "/api/stream", {"Last-Event-ID": number}, None))
    for path in ("/api/action", "/api/record", "/api/new_game", "/api/login"):
        reqs.append(post(path, body=b'{"action": "' + b"x" * MAX_BODY_BYTES + b'"}'))
    return reqs + hostile_wifi_requests() + map_requests() + hidden_cash_requests()


# --- issue 34: what a page on the table's Wi-Fi, or a guest typing, can send

EVIL_ORIGIN = "http://evil.example"
# the DNS-rebinding page's own name, which it has made point at the Pi (any port: the name is what is refused)
FOREIGN_HOSTS = ("evil.example", "evil.example:8080", "localhost.evil.example", "192.168.1.20.evil.example")
# what a no-cors fetch or a plain <form> can send: no JSON content type is among them
SIMPLE_TYPES = ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=xyz", None)
LONG_NAME = "x" * 10_000
# a newline, a NUL, an escape, right-to-left and left-to-right overrides, a zero-width space, a line separator;
# each inside the name: at either end, what str.strip() takes as a space (a newline, U+2028) is stripped, not refused
HIDDEN_NAMES = ("Ann\nBob", "An\x00n", "Ann\x1b[2J", "\u202eAnn", "Ann\u202d", "An\u200bn", "Ann\u2028Bob")
# a Risk colour that once covered the page and fetched an outside image (issue 34, item 4)
CSS_COLOUR = ("red;position:fixed;top:0;left:0;width:100vw;height:100vh;z-index:2147483647;"
              "background:url(http://evil.example/beacon.png)")


def name_options(game: str, name: str) -> dict:
    """`game`'s New game options with `name` as the first player's, the other plainly named."""
    return {
        "balance_duels": {"players": 2, "names": [name, "Bob"]},
        "imperial": {"players": [name, "Bob"]},
        "risk": {"players": [name, "Bob"]},
        "balance_of_power": {"players": [{"name": name, "empire": "france"}, {"name": "Bob", "empire": "prussia"}]},
        "global_powers": {"players": [name, "Bob"]},
    }[game]


# the colour options that must be one of the game's own: Risk's colours by player, 1815's colour in a player
CSS_COLOUR_OPTIONS = (
    ("risk", {"players": ["Ann", "Bob"], "colours": {"Ann": CSS_COLOUR, "Bob": "blue"}}),
    ("risk", {"players": ["Ann", "Bob"], "colours": {"Ann": "red", "Bob": "blue;background:url(//evil.example/b)"}}),
    ("balance_of_power", {"players": [{"name": "Ann", "empire": "france", "colour": CSS_COLOUR},
                                      {"name": "Bob", "empire": "prussia"}]}),
    ("balance_of_power", {"players": [{"name": "Ann", "empire": "france", "colour": "blue"},
                                      {"name": "Bob", "empire": "prussia", "colour": "red}body{display:none"}]}),
)


def hostile_wifi_requests() -> list[Request]:
    """Issue 34's attacks, each with the status it must get (and, as every refusal, no change to the game).

    403: a change from another origin (a page elsewhere, or the browser saying cross-site), whatever it sends;
    415: a POST that is not JSON, even empty: a form or a no-cors fetch, the only bodies such a page can send
         without asking first, from the page's own origin too (a missing Origin proves nothing);
    421: any request naming the daemon by a name not its own (DNS rebinding), reads and changes alike;
    409: a name past 24 characters or with control or format characters in every game, a colour that is not
         one of the game's own, in a New game and in an uploaded record (the table with a PIN sends its session,
         so that the rules are what refuses)."""
    reqs = []
    changes = (("/api/roll", b'{"value": 3}'), ("/api/undo", b"{}"), ("/api/buttons/roll", b"{}"),
               ("/api/action", b'{"action": {"type": "roll", "value": 3}}'),
               ("/api/new_game", b'{"game": "risk", "options": {}}'))
    for path, body in changes:
        # the no-cors fetch the issue sent; then JSON, as if the page could: the Origin alone must refuse it
        for ctype, hdrs in (("text/plain", {"Origin": EVIL_ORIGIN, "Sec-Fetch-Site": "cross-site"}),
                            ("application/json", {"Origin": EVIL_ORIGIN}), ("application/json", {"Origin": "null"}),
                            ("application/json", {"Sec-Fetch-Site": "cross-site"})):
            reqs.append(Request("POST", path, {**hdrs, "Content-Type": ctype}, body, session=True, expect=403))
        # from no stated origin: a JSON body as text, a form, an empty multipart, nothing at all
        for ctype, sent in zip(SIMPLE_TYPES, (body, b"value=3", b"", None)):
            hdrs = {} if ctype is None else {"Content-Type": ctype}
            reqs.append(Request("POST", path, hdrs, sent, session=True, expect=415))
    for path in ("/api/login", "/api/logout", "/api/dice"):
        reqs.append(Request("POST", path, {"Content-Type": "application/x-www-form-urlencoded"}, b"pin=2468",
                            session=True, expect=415))
    for host in FOREIGN_HOSTS:
        rebound = {"Host": host, "Origin": f"http://{host}", "Content-Type": "application/json"}
        reqs += [Request("GET", "/api/state", {"Host": host}, None, expect=421),
                 Request("GET", "/api//state", {"Host": host}, None, expect=421),
                 Request("GET", "/", {"Host": host}, None, expect=421),
                 Request("POST", "/api/new_game", rebound, b'{"game": "risk"}', session=True, expect=421),
                 Request("POST", "/api/undo", rebound, b"{}", session=True, expect=421)]
    for game in GAMES:
        for name in (LONG_NAME,) + HIDDEN_NAMES:
            # through a record too for the long name and a bidi override: a record's game is checked as a New game
            reqs += _new_game_everywhere(game, name_options(game, name), record=name in (LONG_NAME, "\u202eAnn"))
    for game, options in CSS_COLOUR_OPTIONS:
        reqs += _new_game_everywhere(game, options, record=True)
    return reqs


def _new_game_everywhere(game: str, options: dict, *, record: bool) -> list[Request]:
    """A New game the rules must refuse (409), as the page sends it and, with `record`, as line 1 of a record."""
    body = json.dumps({"game": game, "options": options}, ensure_ascii=False)     # as JSON.stringify writes it
    reqs = [Request("POST", "/api/new_game", {"Content-Type": "application/json"}, body.encode(), session=True,
                    expect=409)]
    if record:
        reqs.append(Request("POST", "/api/record", {"Content-Type": "application/x-ndjson"},
                            f'{{"kind": "new_game", "body": {body}}}\n'.encode(), session=True, expect=409))
    return reqs


# --- issue 34 items 6 and 7: map completions past what the next start loads, hidden cash read without the PIN

def _map_post(game: str, addition: Any, expect: int | None) -> Request:
    return Request("POST", f"/api/map/{game}", {"Content-Type": "application/json"},
                   json.dumps({"add": addition}).encode(), session=True, expect=expect)


def map_requests() -> list[Request]:
    """Completions of Balance of Power's map (the one whose territories the players name): each past a bound of the
    form refused (400, nothing saved); then issue 34's sequence, 119 territories of 60 characters, 400 borders over
    4 POSTs, borders_complete, each within the form's counts but together past what the start loads (64 KiB): those
    that fit are saved, the rest refused. Afterwards every saved file must load (`maps_problems`)."""
    from companion.games.mapdata import MAX_BORDERS, MAX_LIST, MAX_NAME, MAX_NEW_TERRITORIES

    game = "balance_of_power"
    reqs = [_map_post(game, {"territories": ["x" * (MAX_NAME + 1)]}, 400),
            _map_post(game, {"territories": [f"Isle {i}" for i in range(MAX_NEW_TERRITORIES + 1)]}, 400),
            _map_post(game, {"borders": [["Paris", "Lyon"]] * (MAX_BORDERS + 1)}, 400),
            _map_post(game, {"borders_complete": ["Paris"] * (MAX_LIST + 1)}, 400),
            _map_post(game, {"territories": ["Isle\nof\u202eMan"]}, 400),
            _map_post(game, {"territories": "Isle"}, 400),
            _map_post(game, ["territories"], 400),
            _map_post(game, {"cities": {"x": 1}}, 400),
            _map_post("chess", {"territories": ["Isle"]}, 400)]
    names = [f"Isle {i:03d} " + "q" * (MAX_NAME - 9) for i in range(MAX_NEW_TERRITORIES - 1)]
    pairs = [[names[i], names[(i + d) % len(names)]] for d in (1, 2, 3, 4) for i in range(len(names))][:MAX_BORDERS]
    reqs.append(_map_post(game, {"territories": names}, None))
    reqs += [_map_post(game, {"borders": pairs[k:k + 100]}, None) for k in range(0, len(pairs), 100)]
    reqs.append(_map_post(game, {"borders_complete": names[:MAX_LIST]}, None))
    return reqs


def maps_problems(directory: Path) -> list[str]:
    """Each completion file in `directory` read as the daemon's start reads it: the problems that would stop it."""
    from companion.games.mapdata import MapFileError
    from companion.games.registry import map_forms
    from companion.table.maps import load_completion

    problems = []
    for game, form in map_forms().items():
        try:
            load_completion(form, Path(directory) / f"{game}.toml")
        except MapFileError as exc:
            problems.append(str(exc))
    return problems


HIDDEN_CASH = 977     # Ann's cash, corrected while hidden: no other figure of a fresh game is 977


def hidden_cash_requests() -> list[Request]:
    """An Imperial game where Ann hides her cash and the table corrects it to 977, then every read that once gave
    it away to a reader without the PIN (issue 34 item 6, and the stream resumed at the correction): none may."""
    post = functools.partial(Request, "POST", headers={"Content-Type": "application/json"}, session=True, expect=200)
    action = lambda a: post("/api/action", body=json.dumps({"action": a}).encode())     # noqa: E731
    reqs = [post("/api/new_game", body=b'{"game": "imperial", "options": {"players": ["Ann", "Bob", "Cy"]}}'),
            action({"type": "hide_cash", "player": "Ann", "hidden": True}),
            action({"type": "correct", "what": "cash", "player": "Ann", "value": HIDDEN_CASH, "reason": "recount"}),
            action({"type": "donate", "player": "Bob", "nation": "china", "amount": 1})]
    secret = str(HIDDEN_CASH).encode()
    for path in ("/api/state", "/api/events", "/api/events?after=0", "/api/record", "/api/flight-recorder",
                 "/api/stream", "/api/stream?last_event_id={seq-2}"):
        reqs.append(Request("GET", path, {}, None, secret=secret))
    reqs.append(Request("GET", "/api/stream", {"Last-Event-ID": "{seq-2}"}, None, secret=secret))
    # a refusal while the cash is hidden must not state it either: a gift past what Ann has
    reqs.append(post("/api/action", body=json.dumps({"action": {"type": "donate", "player": "Ann", "nation": "china",
                                                                "amount": HIDDEN_CASH + 1}}).encode(), expect=409,
                     secret=secret))
    return reqs


# --- over real HTTP, to a daemon process

def send_over_http(port: int, req: Request, timeout: float = 10.0) -> tuple[int, dict[str, str], str, bytes]:
    """Send one fuzzed request on its own connection; (status, headers, mimetype, payload) — a stream is cut short."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        # a request that names its own Host (a rebinding page's) sends that one alone, as a browser would
        own_host = any(k.lower() == "host" for k in req.headers)
        conn.putrequest(req.method, req.path, skip_host=own_host, skip_accept_encoding=True)
        for k, v in req.headers.items():
            conn.putheader(k, v)
        conn.putheader("Content-Length", str(len(req.body or b"")))
        try:
            conn.endheaders(req.body or None)
        except (BrokenPipeError, ConnectionResetError):
            # a body past the limit: the server answers as the headers arrive and closes; the answer may be read yet
            pass
        resp = conn.getresponse()
        hdrs = {k: v for k, v in resp.getheaders()}
        mimetype = (resp.getheader("Content-Type") or "").split(";")[0].strip()
        if mimetype == "text/event-stream":
            # the retry line and the first message (the state, or a resumed page's first event)
            payload = b""
            while payload.count(b"\n\n") < 2 and len(payload) < 1_000_000:
                line = resp.readline()
                if not line:
                    break
                payload += line
        elif req.method == "HEAD":
            payload = b""
        else:
            payload = resp.read()
        return resp.status, hdrs, mimetype, payload
    finally:
        conn.close()
