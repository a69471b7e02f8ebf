"""Every HTTP endpoint fuzzed with random methods, paths, headers and JSON bodies (bench/http_fuzz.py sends
10,000+): never a 500, every error a JSON body naming the problem, no change from a refused request."""

import collections
import json

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from companion.web.serving import MAX_BODY_BYTES
from tests.reliability.httpfuzz import (GAMES, LONG_NAME, NON_FINITE, Request, Result, Target, _not_strict, check,
                                       hostile_requests, requests)

pytestmark = pytest.mark.slow   # a long file: handed out to a worker first (tests/conftest.py)

FUZZ = settings(max_examples=120, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate],
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])


@pytest.fixture(params=["open table", "table with a PIN"])
def target(request, tmp_path):
    t = Target(tmp_path / "events.sqlite3", pin=request.param != "open table")
    yield t
    t.close()


def test_random_requests_keep_every_promise(target):
    strategy = requests(target.action_maker)

    @FUZZ
    @given(data=st.data())
    def run(data):
        for _ in range(4):
            req = data.draw(strategy)
            result = target.send(req)
            assert result.problems == [], req.describe()

    run()
    assert target.requests >= 200
    assert len(target.statuses) >= 4            # the fuzz reached more than one kind of answer


@pytest.mark.parametrize("body", [b"[" * 30000 + b"]" * 30000, b'{"a":' * 10000 + b"1" + b"}" * 10000])
def test_deeply_nested_json_is_a_400_not_a_500(target, body):
    for path in ("/api/action", "/api/roll", "/api/new_game", "/api/dice", "/api/login", "/api/buttons/roll"):
        result = target.send(Request("POST", path, {"Content-Type": "application/json"}, body, session=True))
        assert result.status < 500 and result.problems == [], (path, result.status, result.problems)


def test_a_balance_duels_tip_reported_twice_is_refused(target):
    """Found by the rules fuzzer: a second tip in a 3-player game raised ValueError (a 500)."""
    steps = [("/api/new_game", {"game": "balance_duels", "options": {"players": 3}}),
             ("/api/roll", {"value": 2}),
             ("/api/action", {"action": {"type": "move", "move": {"kind": "place", "seat": 1, "roll": 2, "size": "L",
                                                                  "to_holder": "E2"}}}),
             ("/api/action", {"action": {"type": "tip"}})]
    for path, body in steps:
        r = target.send(Request("POST", path, {"Content-Type": "application/json"}, json.dumps(body).encode(),
                                session=True))
        assert r.status == 200, (path, r.status)
    again = target.send(Request("POST", "/api/action", {"Content-Type": "application/json"},
                                b'{"action": {"type": "tip"}}', session=True))
    assert again.status == 409 and again.problems == []


def test_the_hostile_requests_keep_every_promise(target):
    """NaN and huge numbers in queries, options and actions, every option of every game mistyped, bodies over the
    limit: each answered 4xx in JSON naming the problem, nothing changed, nothing sent that JSON.parse refuses.
    Issue 34's (another origin, a form body, a foreign Host, long and hidden names, style text for a colour): each
    the very status it promises (`expect`, checked with the other promises), PIN or no PIN."""
    reqs = hostile_requests()
    assert len(reqs) > 500
    statuses = set()
    for req in reqs:
        result = target.send(req)
        assert result.problems == [] and result.status < 500, (req.describe()[:300], result.status, result.problems)
        if req.expect is not None or req.secret is not None or req.path.startswith("/api/map/"):
            continue            # its status and secret are checked with the promises, and are not the classes below
        if req.body and len(req.body) > MAX_BODY_BYTES:
            assert result.status == 413
        elif req.body and any(word.encode() in req.body for word in NON_FINITE) or "=" in req.path \
                or "Last-Event-ID" in req.headers and req.headers["Last-Event-ID"] != "9223372036854775807":
            assert result.status == 400 or req.path.endswith("=9223372036854775807"), (req.describe()[:300], result.status)
        statuses.add(result.status)
    assert statuses >= {200, 400, 409, 413}
    # every class of issue 34 is tried on every run, in every game
    expected = collections.Counter(r.expect for r in reqs if r.expect is not None)
    assert min(expected[status] for status in (403, 415, 421, 409)) >= 20, expected
    long_names = {json.loads(r.body)["game"] for r in reqs if r.path == "/api/new_game" and r.expect == 409
                  and LONG_NAME.encode() in r.body}
    assert long_names == set(GAMES)
    # issue 34 items 6 and 7: map completions past every bound and past what the start loads, and every read of a
    # game whose hidden cash was corrected; whatever was saved, the next start loads
    assert sum(r.path.startswith("/api/map/") for r in reqs) >= 15
    assert sum(r.secret is not None for r in reqs) >= 8
    assert target.maps_load() == []
    saved = target.companion.maps.get("balance_of_power")
    assert 0 < len(saved["territories"]) and target.companion.host.cash_hidden()


def test_a_promised_status_is_checked():
    # the hostile set's statuses are promises only if the check sees one broken: a cross-origin roll that landed
    req = Request("POST", "/api/roll", {"Origin": "http://evil.example"}, b"{}", expect=403)
    landed = Result(req, 200)
    check(landed, {}, "application/json", b'{"ok": true}', (1, 1, "{}"), (2, 2, "{}"))
    assert "answered 200, not 403" in landed.problems
    refused = Result(req, 403)
    check(refused, {}, "application/json", b'{"error": "refused: another origin"}', (1, 1, "{}"), (1, 1, "{}"))
    assert refused.problems == []


def test_the_fuzzers_own_checks_see_non_finite_json():
    assert _not_strict("application/json", b'{"x": NaN}') and _not_strict("application/json", b"[1e999]")
    assert _not_strict("application/x-ndjson", b'{"a": 1}\n{"b": -Infinity}\n')
    assert _not_strict("text/event-stream", b"event: state\ndata: {\"x\":NaN}\n\n")
    assert not _not_strict("application/json", b'{"x": 1.5e300}') and not _not_strict("text/plain", b"NaN")
