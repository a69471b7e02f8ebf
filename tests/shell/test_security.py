"""The table PIN: viewing open, changes behind a session cookie + CSRF token, lock-out, no CORS."""

import dataclasses

import pytest

from companion.clock import FakeClock
from companion.config import ConfigError, parse
from companion.daemon import Companion
from companion.pin import hash_pin, verify_pin
from companion.web import create_app
from companion.web.auth import COOKIE

PIN = "2468"


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture
def app(tmp_path, clock):
    cfg = dataclasses.replace(parse({"simulate": {"enabled": True, "demo": False}, "web": {"pin": PIN}}),
                              store_path=tmp_path / "db.sqlite3")
    c = Companion(cfg, clock=clock)
    yield create_app(c)
    c.stop()


def login(client, pin=PIN):
    return client.post("/api/login", json={"pin": pin})


def test_viewing_is_open_and_changes_need_the_pin(app):
    c = app.test_client()
    assert c.get("/api/state").status_code == 200 and c.get("/").status_code == 200
    r = c.post("/api/roll", json={"value": 3})
    assert r.status_code == 401 and "PIN" in r.get_json()["error"]
    assert c.get("/api/state").get_json()["seq"] == 1


def test_login_sets_a_strict_httponly_cookie_and_changes_need_csrf(app):
    c = app.test_client()
    r = login(c)
    assert r.status_code == 200
    cookie = r.headers["Set-Cookie"]
    assert f"{COOKIE}=" in cookie and "HttpOnly" in cookie and "SameSite=Strict" in cookie
    csrf = r.get_json()["csrf"]
    assert c.post("/api/roll", json={"value": 3}).status_code == 403          # no CSRF token
    assert c.post("/api/roll", json={"value": 3}, headers={"X-CSRF-Token": "forged"}).status_code == 403
    ok = c.post("/api/roll", json={"value": 3}, headers={"X-CSRF-Token": csrf})
    assert ok.status_code == 200 and ok.get_json()["state"]["view"]["roll"] == 3
    assert c.get("/api/session").get_json() == {"pin_required": True, "unlocked": True, "csrf": csrf}
    c.post("/api/logout", headers={"X-CSRF-Token": csrf})
    assert c.post("/api/undo", json={}, headers={"X-CSRF-Token": csrf}).status_code == 401


def test_wrong_pins_lock_out_with_a_growing_delay(app, clock):
    c = app.test_client()
    for _ in range(3):
        assert login(c, "0000").status_code == 403
    locked = login(c, PIN)  # even the right PIN waits out the lock
    assert locked.status_code == 429 and int(locked.headers["Retry-After"]) >= 2
    clock.advance(3)
    assert login(c, "1111").status_code == 403
    second = login(c, PIN)
    assert second.status_code == 429 and int(second.headers["Retry-After"]) > int(locked.headers["Retry-After"])
    clock.advance(10)
    assert login(c, PIN).status_code == 200


def test_no_cors_headers(app):
    c = app.test_client()
    for r in (c.get("/api/state", headers={"Origin": "http://evil.example"}),
              c.options("/api/action", headers={"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"})):
        assert not [h for h in r.headers.keys() if h.lower().startswith("access-control-")]


def test_pin_is_kept_only_as_a_salted_hash():
    cfg = parse({"web": {"pin": PIN}})
    assert PIN not in cfg.pin_hash and verify_pin(PIN, cfg.pin_hash)
    assert hash_pin(PIN) != hash_pin(PIN)  # salted
    stored = hash_pin(PIN)
    assert parse({"web": {"pin": stored}}).pin_hash == stored


def test_bind_address_defaults():
    assert parse({}).host == "127.0.0.1"                       # no PIN: this machine only
    assert parse({"web": {"pin": PIN}}).host == "0.0.0.0"       # PIN: the table's Wi-Fi
    assert parse({"web": {"pin": PIN, "host": "192.0.2.1"}}).host == "192.0.2.1"


@pytest.mark.parametrize("pin", ["12", "abcd", "1234567890123", "pbkdf2_sha256$x$y$z"])
def test_bad_pins_are_refused_at_load(pin):
    with pytest.raises(ConfigError, match=r"\[web\] pin"):
        parse({"web": {"pin": pin}}, "c.toml")


def test_without_a_pin_changes_are_open(tmp_path):
    cfg = dataclasses.replace(parse({"simulate": {"enabled": True, "demo": False}}), store_path=tmp_path / "d.sqlite3")
    comp = Companion(cfg)
    try:
        c = create_app(comp).test_client()
        assert c.post("/api/roll", json={"value": 2}).status_code == 200
        assert c.post("/api/login", json={"pin": "1234"}).status_code == 400
    finally:
        comp.stop()
