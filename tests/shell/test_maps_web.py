"""The players' map completion through the daemon: loaded at start, added to from the page, saved beside the config."""

import dataclasses

import pytest

from companion.config import parse
from companion.table.daemon import Companion
from companion.games.mapdata import MapFileError
from companion.web import create_app

MISSIONS = ["six_cities", "two_regions", "swiss_safe", "danish_naval_base", "sea_line", "rough_terrain", "green_region", "eliminate_neutral"]


def test_the_maps_dir_is_beside_the_config_unless_set(tmp_path):
    assert parse({}, "x.toml", tmp_path).maps_dir() == tmp_path / "maps"
    assert parse({"maps": {"dir": "boards"}}, "x.toml", tmp_path).maps_dir() == tmp_path / "boards"
    with pytest.raises(ValueError, match=r"\[maps\]"):
        parse({"maps": {"folder": "boards"}}, "x.toml", tmp_path)


def test_a_bad_completion_stops_the_start_with_its_line(tmp_path):
    maps = tmp_path / "maps"
    maps.mkdir()
    (maps / "risk.toml").write_text('version = 1\nrough = ["Switzerland", "Atlantis"]\n')
    cfg = dataclasses.replace(parse({"simulate": {"enabled": True, "demo": False}, "maps": {"dir": str(maps)}}),
                              store_path=tmp_path / "db.sqlite3")
    with pytest.raises(MapFileError, match=r"risk.toml:2: 'rough' #2: 'Atlantis' is not a territory"):
        Companion(cfg)


def test_entries_from_the_page_are_saved_and_used_at_once_and_after_a_restart(make_companion, tmp_path):
    maps = tmp_path / "maps"
    companion = make_companion(maps={"dir": str(maps)}, game={"name": "risk", "options": {"variant": "command_post", "missions": MISSIONS}})
    client = create_app(companion).test_client()
    host = companion.host
    for action in ({"type": "set_counts", "player": "Red", "territories": 12, "lost": 20},
                   {"type": "set_counts", "player": "Blue", "territories": 10},
                   {"type": "buy", "item": "airfield", "territory": "Germany"}, {"type": "reinforce"}):
        host.act(action)
    attack = {"type": "attack", "attackers": 3, "defenders": 2, "from": "Netherlands", "to": "Denmark"}

    r = client.post("/api/map/risk", json={"add": {"borders": [["Germany", "Denmrak"]]}})
    assert r.status_code == 400 and "nothing was saved" in r.get_json()["error"] and "did you mean Denmark" in r.get_json()["error"]
    assert not (maps / "risk.toml").exists()
    assert client.post("/api/map/chess", json={"add": {"borders": []}}).status_code == 400

    r = client.post("/api/map/risk", json={"add": {"borders": [["Germany", "Denmark"]], "regions": {"purple": {"bonus": 3}}}})
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["completed"]["borders"] == [["Denmark", "Germany"]]
    assert r.get_json()["state"]["view"]["regions"]["purple"]["bonus"] == 3
    assert 'borders = [["Denmark", "Germany"]]' in (maps / "risk.toml").read_text()
    assert client.get("/api/map/risk").get_json()["completed"]["regions"] == {"purple": {"bonus": 3}}
    # the game under way uses the new border at once: the airfield in Germany reaches Denmark
    host.act(attack)
    assert host.snapshot()["view"]["attack"]["attacker_airfield"] is True

    # a restart loads the file again and replays the game with it
    again = make_companion(maps={"dir": str(maps)}, store={"path": str(companion.config.database())})
    assert again.maps.get("risk")["borders"] == [["Denmark", "Germany"]]


def test_map_entries_need_the_pin(make_companion, tmp_path):
    companion = make_companion(web={"pin": "2468"}, maps={"dir": str(tmp_path / "maps")})
    client = create_app(companion).test_client()
    r = client.post("/api/map/risk", json={"add": {"borders": [["Germany", "Denmark"]]}})
    assert r.status_code == 401 and not (tmp_path / "maps").exists()
