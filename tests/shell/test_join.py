"""How a tablet joins: the addresses named, the QR code, the warning when the Wi-Fi can change the game unasked."""

import re
import subprocess
import sys

import pytest

from companion.web import create_app, join


def test_listening_everywhere_names_the_lan_address_and_the_local_name(monkeypatch):
    monkeypatch.setattr(join, "lan_address", lambda: "192.168.1.20")
    monkeypatch.setattr(join.socket, "gethostname", lambda: "tablepi")
    assert join.urls("0.0.0.0", 8080) == ["http://192.168.1.20:8080", "http://tablepi.local:8080"]
    assert join.reachable_from_wifi("0.0.0.0") and join.reachable_from_wifi("192.168.1.20")


def test_no_network_still_names_something_that_works_here(monkeypatch):
    monkeypatch.setattr(join, "lan_address", lambda: None)
    monkeypatch.setattr(join.socket, "gethostname", lambda: "localhost")
    assert join.urls("0.0.0.0", 8080) == ["http://127.0.0.1:8080"]


def test_a_loopback_daemon_is_not_reachable_and_says_so(make_companion):
    assert not join.reachable_from_wifi("127.0.0.1") and not join.reachable_from_wifi("localhost")
    client = create_app(make_companion()).test_client()
    body = client.get("/api/join").get_json()
    assert body == {"urls": [], "wifi": False, "pin": False}
    qr = client.get("/api/join.svg")
    assert qr.status_code == 404 and "--host 0.0.0.0" in qr.get_json()["error"]


def test_the_qr_code_is_of_the_address_a_tablet_opens(make_companion, monkeypatch):
    monkeypatch.setattr(join, "lan_address", lambda: "10.0.0.5")
    client = create_app(make_companion(web={"host": "0.0.0.0"})).test_client()
    body = client.get("/api/join", headers={"Host": "10.0.0.5:8123"}).get_json()
    assert body["wifi"] is True and body["pin"] is False and body["urls"][0] == "http://10.0.0.5:8123"
    qr = client.get("/api/join.svg", headers={"Host": "10.0.0.5:8123"})
    assert qr.status_code == 200 and qr.mimetype == "image/svg+xml"
    svg = qr.data.decode()
    assert svg.startswith("<svg") and "<title>QR code of http://10.0.0.5:8123</title>" in svg
    segno = pytest.importorskip("segno")
    # what the code holds: the same URL made again gives the same drawing
    assert segno.make("http://10.0.0.5:8123", error="m").symbol_size(scale=8, border=4)[0] == \
        int(re.search(r'width="(\d+)"', svg).group(1))


def test_new_game_form_facts_for_every_game(make_companion):
    games = {g["name"]: g for g in create_app(make_companion()).test_client().get("/api/games").get_json()}
    assert set(games) == {"balance_duels", "imperial", "risk", "balance_of_power", "global_powers"}
    assert games["risk"]["seats"] == {"min": 2, "max": 2, "usual": 2}
    assert games["balance_duels"]["seats"]["max"] == 4 and games["global_powers"]["seats"]["max"] == 5
    for g in games.values():
        assert g["seats"]["min"] <= g["seats"]["usual"] <= g["seats"]["max"]
        if g["default_names"]:
            assert len(g["default_names"]) >= g["seats"]["max"]     # every seat the form offers has a name
    empires = games["balance_of_power"]["seat_choice"]
    assert empires["key"] == "empire" and len(empires["options"]) >= games["balance_of_power"]["seats"]["max"]


def test_a_wifi_daemon_without_a_pin_prints_where_to_join_and_a_warning(tmp_path):
    cfg = tmp_path / "companion.toml"
    cfg.write_text('[simulate]\nenabled = true\ndemo = false\n[web]\nhost = "0.0.0.0"\n')
    proc = subprocess.Popen([sys.executable, "-m", "companion", "run", "--config", str(cfg), "--port", "0",
                             "--db", str(tmp_path / "db.sqlite3"), "--log-level", "WARNING"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines = [proc.stdout.readline() for _ in range(3)]
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        proc.stdout.close()
        proc.stderr.close()
    assert "open http://127.0.0.1:" in lines[0]
    assert "on a tablet on this Wi-Fi: http://" in lines[1]
    assert "WARNING: no PIN is set" in lines[2]


def test_every_variant_new_game_offers_starts_a_game(make_companion):
    """Each control of the New game form, at each of its settings, gives options the game takes."""
    companion = make_companion()
    for engine in companion.host.engines.values():
        players = engine.seats[2]
        base = {"players": players} if engine.name != "imperial" else {"players": [f"P{i}" for i in range(players)]}
        for option in engine.setup_options:
            assert option["label"] and option["help"] and option["kind"] in ("bool", "choice", "pick")
            if option["kind"] == "bool":
                settings = [{option["key"]: True}, {option["key"]: False}]
            elif option["kind"] == "choice":
                settings = [c["options"] for c in option["choices"]]
            else:       # exactly `count` of its choices, with the options that make it apply
                values = [c["value"] for c in option["choices"]]
                settings = [{**option.get("when", {}), option["key"]: values[k:k + option["count"]]}
                            for k in range(len(values) - option["count"] + 1)]
            for extra in settings:
                # with what the form then asks for too (a control whose `when` this setting matches)
                for other in engine.setup_options:
                    if other["kind"] == "pick" and other.get("when") and all(extra.get(k) == v for k, v in other["when"].items()):
                        extra = {other["key"]: [c["value"] for c in other["choices"]][:other["count"]], **extra}
                engine.new({**base, **extra})     # raises RuleError if the form offered something the game refuses
