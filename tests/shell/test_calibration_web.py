"""The page's calibration steps on the simulated arm: tare, then a known weight, refusals named, then save."""

import dataclasses
import time

import pytest

from companion.config import parse
from companion.table.daemon import Companion
from companion.web import create_app

pytestmark = pytest.mark.slow   # a long file: handed out to a worker first (tests/conftest.py)


@pytest.fixture
def comp(tmp_path):
    cfg = dataclasses.replace(parse({"simulate": {"enabled": True, "demo": False, "seed": 3}}),
                              store_path=tmp_path / "db.sqlite3", base_dir=tmp_path)
    c = Companion(cfg)
    c.start()
    yield c
    c.stop()


def run_step(client, step, **params):
    r = client.post("/api/calibration/begin", json={"step": step, **params})
    assert r.status_code == 200, r.get_json()
    seconds = r.get_json()["progress"]["seconds"]
    time.sleep(seconds + 0.2)
    return client.post("/api/calibration/finish", json={}).get_json()


def test_calibrate_from_the_page(comp, tmp_path):
    client = create_app(comp).test_client()
    assert client.post("/api/calibration/begin", json={"step": "tare"}).status_code == 409  # not started
    assert client.post("/api/calibration/start", json={"known_mass_g": 10}).get_json()["active"] is True
    # the known weight cannot be measured before the tare
    r = client.post("/api/calibration/begin", json={"step": "weigh", "mass_g": 10, "holder": "E4"})
    assert r.status_code == 409 and "first" in r.get_json()["error"]
    time.sleep(3)  # let the arm settle after start-up
    tare = run_step(client, "tare")
    assert tare["result"]["ok"], tare["result"]
    comp.table.set_pawns([("E4", "L")], hand_s=0)  # the known 10 g weight on E4
    time.sleep(3)
    weigh = run_step(client, "weigh", mass_g=10, holder="E4")
    assert weigh["result"]["ok"], weigh["result"]
    assert weigh["complete"] is True
    # the walk through the holders: the page names the next holder, and refuses a weight left in the last one
    listed = {s["id"]: s for s in weigh["steps"]}
    assert "holder E1 (1 of 14)" in listed["holder"]["instructions"]
    comp.table.set_pawns([("E1", "L")], hand_s=0)
    time.sleep(3)
    walked = run_step(client, "holder", mass_g=10)
    assert walked["result"]["ok"] and walked["result"]["values"]["holder"] == "E1", walked["result"]
    assert "next E2" in walked["result"]["message"]
    left = run_step(client, "holder", mass_g=10)
    assert not left["result"]["ok"] and "E2 measured at +13" in left["result"]["message"]
    assert "nearer E1's place in the model" in left["result"]["message"]
    saved = client.post("/api/calibration/save", json={}).get_json()
    assert (tmp_path / "calibration.toml").is_file() and "saved to" in saved["message"]
    assert "E1 = 13" in (tmp_path / "calibration.toml").read_text()
    assert client.post("/api/calibration/fly", json={}).status_code == 404
