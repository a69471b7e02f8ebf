"""The players' map completion through the daemon: loaded at start, added to from the page, saved beside the config."""

import dataclasses
import errno
import os

import pytest

from companion.config import parse
from companion.table.daemon import Companion
from companion.games.mapdata import MAX_BORDERS, MAX_FILE_BYTES, MAX_NAME, MAX_NEW_TERRITORIES, MapFileError
from companion.table import maps as maps_module
from companion.table.maps import load_completion
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


def _long_name(i: int) -> str:
    # as long as a name may be (MAX_NAME), so the file grows fastest within every count the form allows
    return f"Isle {i:03d} " + "q" * (MAX_NAME - 9)


def test_a_completion_too_big_to_load_is_refused_and_the_saved_file_still_loads(make_companion, tmp_path):
    # Each POST is within the form's counts, yet together they render a file over the loader's 64 KiB: saving
    # it would stop the next start ("this is not a map completion"), so the writer refuses what would not load.
    maps = tmp_path / "maps"
    companion = make_companion(maps={"dir": str(maps)})
    client = create_app(companion).test_client()
    names = [_long_name(i) for i in range(MAX_NEW_TERRITORIES)]
    pairs = [[names[i], names[(i + d) % len(names)]] for d in (1, 2, 3, 4) for i in range(len(names))][:MAX_BORDERS]
    posts = [{"territories": names}] + [{"borders": pairs[k:k + 100]} for k in range(0, len(pairs), 100)] + \
        [{"borders_complete": names}]
    path = maps / "balance_of_power.toml"
    refused = None
    for addition in posts:
        before = path.read_bytes() if path.exists() else None
        r = client.post("/api/map/balance_of_power", json={"add": addition})
        if r.status_code != 200:
            refused = r
            break
        assert path.stat().st_size <= MAX_FILE_BYTES  # every file written is one the start reads
    assert refused is not None, "the additions never reached the file's limit; the test no longer tests it"
    assert refused.status_code == 400 and "nothing was saved" in refused.get_json()["error"], refused.get_json()
    assert "would not load" in refused.get_json()["error"]
    assert path.read_bytes() == before  # the old file stays
    loaded = load_completion(companion.maps.forms["balance_of_power"], path)
    assert loaded == client.get("/api/map/balance_of_power").get_json()["completed"]
    # and a restart starts with it
    again = make_companion(maps={"dir": str(maps)}, store={"path": str(companion.config.database())})
    assert again.maps.get("balance_of_power") == loaded


@pytest.mark.parametrize("code, cause", [(errno.ENOSPC, "the disk is full"), (errno.EROFS, "read-only")])
def test_a_map_write_the_disk_refuses_answers_503_with_retry_after_and_keeps_the_old_file(make_companion, tmp_path,
                                                                                         monkeypatch, code, cause):
    # A full disk or a read-only folder may be mended while the page waits: 503 + Retry-After, as the store
    # answers its own disk errors, instead of a bare 500; the file and the map in use stay as they were.
    maps = tmp_path / "maps"
    companion = make_companion(maps={"dir": str(maps)})
    client = create_app(companion).test_client()
    assert client.post("/api/map/risk", json={"add": {"borders": [["Germany", "Denmark"]]}}).status_code == 200
    path = maps / "risk.toml"
    old = path.read_bytes()

    def refuse(target, text, **kw):
        raise OSError(code, os.strerror(code), str(target))

    monkeypatch.setattr(maps_module, "write_atomic", refuse)
    r = client.post("/api/map/risk", json={"add": {"regions": {"purple": {"bonus": 3}}}})
    assert r.status_code == 503, r.get_json()
    assert r.headers.get("Retry-After", "").isdigit()
    assert "nothing was saved" in r.get_json()["error"] and cause in r.get_json()["error"]
    assert path.read_bytes() == old and sorted(p.name for p in maps.iterdir()) == ["risk.toml"]
    assert client.get("/api/map/risk").get_json()["completed"].get("regions") == {}
