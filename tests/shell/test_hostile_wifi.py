"""Issue 34: other pages on the Wi-Fi. Cross-origin changes, non-JSON POSTs, foreign Host names, framing."""

import json
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


def test_the_scripts_set_styles_one_property_at_a_time():
    # a colour from the state once went into style text that was split on ";" and applied whole, so that a
    # colour of "red;position:fixed;…" covered the page: every style is an object of properties, set through
    # CSSOM's setProperty (one value each, which can never become more declarations), and no script writes HTML
    import re
    from pathlib import Path

    import companion.web as web

    root = Path(web.__file__).parent
    scripts = sorted((root / "static").glob("*.js")) + sorted((root / "hall").glob("*.js"))
    assert len(scripts) >= 7
    for script in scripts:
        text = script.read_text()
        assert not re.search(r"\bstyle:\s*[^{\s]", text), script
        assert not re.search(r"innerHTML|outerHTML|insertAdjacentHTML|cssText|document\.write|setAttribute\(\s*[\"']style", text), script
        assert 'split(";")' not in text, script
        # a handler set as an attribute is inline script, which the CSP blocks: Risk's forms lost their onsubmit so
        assert 'k === "on' not in text, script
        for helper in re.findall(r'k === "style"\)[^\n]*', text):
            assert "Object.keys(v)" in helper and "setProperty(prop, String(v[prop]))" in helper, script


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


# ---------------------------------------------------------------- item 4 and 5: colours and names the players type

LONG = "x" * 10_000
CSS = "red;position:fixed;top:0;left:0;width:100vw;height:100vh;z-index:2147483647;background:url(http://evil.example/b.png)"
OWN = {"Origin": "http://localhost", "Sec-Fetch-Site": "same-origin"}


def unchanged(client, before):
    after = client.get("/api/state").get_json()
    assert (after["seq"], after["game"], after["view"]) == (before["seq"], before["game"], before["view"])


@pytest.mark.parametrize("game,options", [
    ("balance_duels", {"players": 2, "names": [LONG, "Bob"]}),
    ("imperial", {"players": [LONG, "Bob"]}),
    ("risk", {"players": [LONG, "Bob"]}),
    ("balance_of_power", {"players": [{"name": LONG, "empire": "france"}, {"name": "Bob", "empire": "prussia"}]}),
    ("global_powers", {"players": [LONG, "Bob"]}),
])
def test_a_name_of_ten_thousand_characters_is_refused_by_every_game(client, game, options):
    before = client.get("/api/state").get_json()
    r = client.post("/api/new_game", json={"game": game, "options": options}, headers=OWN)
    assert r.status_code == 409
    error = r.get_json()["error"]
    assert "a player's name is at most 24 characters: 'xxxx" in error and len(error) < 200
    unchanged(client, before)


def test_a_name_with_a_newline_or_a_bidi_override_is_refused(client):
    before = client.get("/api/state").get_json()
    for name in ("Ann\nBob", "Ann\u202e"):
        r = client.post("/api/new_game", json={"game": "risk", "options": {"players": [name, "Cy"]}}, headers=OWN)
        assert r.status_code == 409 and "a player's name cannot hold control characters" in r.get_json()["error"]
    unchanged(client, before)


@pytest.mark.parametrize("game,options,needle", [
    ("risk", {"players": ["Ann", "Bob"], "colours": {"Ann": CSS, "Bob": "blue"}},
     "Ann's colour must be one of red, blue, green, yellow, black, white"),
    ("balance_of_power", {"players": [{"name": "Ann", "empire": "france", "colour": CSS}, {"name": "Bob", "empire": "prussia"}]},
     "Ann's colour must be one of blue, red, green, yellow, black, white"),
])
def test_a_colour_that_is_style_text_is_refused_in_a_new_game_and_in_a_record(client, game, options, needle):
    before = client.get("/api/state").get_json()
    r = client.post("/api/new_game", json={"game": game, "options": options}, headers=OWN)
    assert r.status_code == 409 and needle in r.get_json()["error"]
    assert "z-index" not in r.get_json()["error"]
    record = json.dumps({"kind": "new_game", "body": {"game": game, "options": options}}) + "\n"
    r = client.post("/api/record", data=record, content_type="application/x-ndjson", headers=OWN)
    assert r.status_code == 409 and r.get_json()["error"].startswith("line 1: ") and needle in r.get_json()["error"]
    unchanged(client, before)


def test_the_games_own_colours_still_start_a_game(client):
    r = client.post("/api/new_game", json={"game": "risk", "options": {"players": ["Ann", "Bob"],
                                                                       "colours": {"Ann": "green", "Bob": "black"}}}, headers=OWN)
    assert r.status_code == 200
    assert [p["colour"] for p in r.get_json()["state"]["view"]["players"]] == ["green", "black"]


@pytest.mark.parametrize("game,options,needle", [
    ("risk", {"colours": {"Red": CSS, "Blue": "blue"}}, "Red's colour must be one of"),
    ("imperial", {"players": ["Ann", LONG]}, "a player's name is at most 24 characters"),
])
def test_the_config_refuses_them_too(game, options, needle):
    from companion.config import ConfigError, parse

    with pytest.raises(ConfigError) as err:
        parse({"game": {"name": game, "options": options}}, source="c.toml")
    assert str(err.value).startswith("c.toml: [game] options") and needle in str(err.value)


def test_a_stored_game_todays_rules_refuse_still_lets_the_table_start(tmp_path):
    # a game begun before names had a bound (straight into the log, as an older daemon would have written it)
    from companion.games import balance_duels as bd
    from companion.games.registry import engines
    from companion.store import EventStore
    from companion.table.host import GameHost

    store = EventStore(tmp_path / "events.sqlite3")
    old = store.append(None, "new_game", {"game": "imperial", "options": {"players": ["x" * 30, "Bob"]}}, "page")
    host = GameHost(store, engines(bd.load_model("A")), "balance_duels", {"players": 2})
    assert host.game == "balance_duels" and host.game_id != old.game_id
    assert any(f"the stored game {old.game_id} could not be replayed" in p and "at most 24" in p for p in host.problems)
    assert store.game_events(old.game_id)[0].body["options"]["players"][0] == "x" * 30     # the old game is still there
