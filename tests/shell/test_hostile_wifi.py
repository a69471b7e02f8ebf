"""Issue 34: other pages on the Wi-Fi. Cross-origin changes, non-JSON POSTs, foreign Host names, framing."""

import socket

import pytest

from companion.mqtt.hall import HallBoard, create_hall_app
from companion.web import create_app
from companion.web.hardening import CSP


@pytest.fixture
def client(companion):
    return create_app(companion).test_client()


def seq(client):
    return client.get("/api/state").get_json()["seq"]


@pytest.mark.parametrize("path,body", [("/api/roll", {"value": 3}), ("/api/undo", {}), ("/api/buttons/roll", {})])
@pytest.mark.parametrize("headers", [{"Origin": "http://evil.example"}, {"Origin": "null"},
                                     {"Origin": "http://localhost:9999"}, {"Origin": "https://localhost"},
                                     {"Sec-Fetch-Site": "cross-site"}])
def test_a_change_from_another_origin_is_refused_without_a_pin(client, path, body, headers):
    before = seq(client)
    r = client.post(path, json=body, headers=headers)
    assert r.status_code == 403 and "another" in r.get_json()["error"]
    assert seq(client) == before


def test_the_pages_own_origin_passes(client):
    r = client.post("/api/roll", json={"value": 3}, headers={"Origin": "http://localhost", "Sec-Fetch-Site": "same-origin"})
    assert r.status_code == 200
    assert client.post("/api/undo", json={}, headers={"Origin": "http://localhost:80"}).status_code == 200


@pytest.mark.parametrize("kwargs", [{}, {"data": "value=3", "content_type": "application/x-www-form-urlencoded"},
                                    {"data": '{"value": 3}', "content_type": "text/plain"},
                                    {"data": "", "content_type": "multipart/form-data; boundary=x"}])
@pytest.mark.parametrize("path", ["/api/roll", "/api/undo", "/api/buttons/roll", "/api/logout"])
def test_a_post_must_say_json_even_without_a_body(client, path, kwargs):
    before = seq(client)
    r = client.post(path, **kwargs)
    assert r.status_code == 415 and "application/json" in r.get_json()["error"]
    assert seq(client) == before


def test_a_game_record_may_also_come_as_json_lines(client):
    record = client.get("/api/record").get_data(as_text=True)
    assert client.post("/api/record", data=record, content_type="text/plain").status_code == 415
    assert client.post("/api/record", data=record, content_type="application/x-ndjson").status_code == 200


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8080", "localhost.evil.example"])
def test_a_foreign_host_name_is_refused(client, host):
    r = client.get("/api/state", headers={"Host": host})
    assert r.status_code == 421 and "name" in r.get_json()["error"]
    before = seq(client)
    assert client.post("/api/roll", json={"value": 3}, headers={"Host": host}).status_code == 421
    assert seq(client) == before


@pytest.mark.parametrize("host", ["localhost", "localhost:8080", "127.0.0.1:8080", "192.168.1.20", "[::1]:8080",
                                  "[fe80::1]", socket.gethostname(), socket.gethostname().split(".")[0] + ".local:80",
                                  "LOCALHOST."])
def test_the_daemons_own_names_pass(client, host):
    assert client.get("/api/state", headers={"Host": host}).status_code == 200


def test_config_hosts_are_own_names(make_companion):
    c = create_app(make_companion(web={"hosts": ["table.lan"]})).test_client()
    assert c.get("/api/state", headers={"Host": "Table.LAN:8080"}).status_code == 200
    assert c.get("/api/state", headers={"Host": "other.lan"}).status_code == 421


def test_a_double_slash_does_not_redirect_to_what_host_said(client):
    r = client.get("/api//state", headers={"Host": "localhost"})
    assert r.status_code == 404 and "Location" not in r.headers


def test_the_page_and_api_forbid_framing_and_foreign_scripts(client):
    for r in (client.get("/"), client.get("/api/state"), client.get("/static/app.js"), client.get("/nope")):
        assert r.headers["Content-Security-Policy"] == CSP
        assert "frame-ancestors 'none'" in CSP and "'unsafe-inline'" not in CSP
        assert r.headers["X-Frame-Options"] == "DENY" and r.headers["X-Content-Type-Options"] == "nosniff"


def test_the_page_has_no_inline_script_or_style():
    import re
    from pathlib import Path

    import companion.web as web

    for html in (Path(web.__file__).parent / "static" / "index.html", Path(web.__file__).parent / "hall" / "index.html"):
        text = html.read_text()
        assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", text), html
        assert not re.search(r"<style|\sstyle=|\son[a-z]+=", text), html


@pytest.fixture
def hall():
    board = HallBoard("127.0.0.1", 1, "main")
    return create_hall_app(board).test_client()


def test_the_hall_answers_only_to_its_own_names_and_forbids_framing(hall):
    assert hall.get("/api/tables", headers={"Host": "evil.example"}).status_code == 421
    r = hall.get("/api/tables", headers={"Host": "127.0.0.1:8090"})
    assert r.status_code == 200
    assert r.headers["Content-Security-Policy"] == CSP and r.headers["X-Frame-Options"] == "DENY"
    assert hall.get("/", headers={"Host": "localhost"}).headers["Content-Security-Policy"] == CSP


@pytest.mark.parametrize("hosts,needle", [("table.lan", "must be a list"), ([3], "strings"), (["a b"], "not a host name"),
                                          (["x" * 300], "not a host name"), (["a"] * 40, "at most 32")])
def test_config_hosts_are_checked(hosts, needle):
    from companion.config import ConfigError, parse

    with pytest.raises(ConfigError) as err:
        parse({"web": {"hosts": hosts}}, source="c.toml")
    assert str(err.value).startswith("c.toml: [web] hosts: ") and needle in str(err.value)
