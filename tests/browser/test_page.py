"""The table page in a real browser: Playwright driving Debian's Chromium against the daemon on the simulated table."""

import http.cookiejar
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from tests.browser.waiting import wait_for_js
from tests.browser.chromium import CHROMIUM

playwright_api = pytest.importorskip("playwright.sync_api")

PIN = "2468"
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
if CHROMIUM is None:
    if os.environ.get("CI"):
        raise RuntimeError("Chromium is missing on CI: `make test` installs Debian's chromium-headless-shell package")
    pytest.skip("Debian's chromium-headless-shell is not installed (make test installs it when run as root)", allow_module_level=True)


class Table:
    """The daemon as a process, and an API client holding the PIN session."""

    def __init__(self, tmp_path):
        cfg = tmp_path / "companion.toml"
        cfg.write_text(f'[simulate]\nenabled = true\ndemo = false\nseed = 5\n[web]\nhost = "127.0.0.1"\npin = "{PIN}"\n')
        self.proc = subprocess.Popen([sys.executable, "-m", "companion", "run", "--config", str(cfg), "--port", "0",
                                      "--db", str(tmp_path / "db.sqlite3"), "--log-level", "WARNING"],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        m = re.search(r"(http://127\.0\.0\.1:\d+)", line)
        assert m, f"daemon did not start: {line!r}"
        self.url = m.group(1)
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        self.csrf = self._post("/api/login", {"pin": PIN})["csrf"]

    def _post(self, path, body):
        req = urllib.request.Request(self.url + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json",
                                              "X-CSRF-Token": getattr(self, "csrf", "") or ""})
        with self.opener.open(req, timeout=10) as r:
            return json.loads(r.read())

    def act(self, action):
        return self._post("/api/action", {"action": action})["state"]

    def roll(self, value):
        return self._post("/api/roll", {"value": value})["state"]

    def new_game(self, game, options=None):
        return self._post("/api/new_game", {"game": game, "options": options or {}})["state"]

    def play_first(self, roll, **want):
        """Roll, then play the first legal move matching `want`."""
        view = self.roll(roll)["view"]
        move = next(m["move"] for m in view["moves"] if all(m["move"].get(k) == v for k, v in want.items()))
        return self.act({"type": "move", "move": move})

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=10)
        self.proc.stdout.close()
        self.proc.stderr.close()


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    t = Table(tmp_path_factory.mktemp("browser"))
    yield t
    t.stop()


@pytest.fixture(scope="module")
def browser():
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture
def page(browser, table):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    pg = context.new_page()
    pg.requests = []
    pg.on("request", lambda r: pg.requests.append(r.url))
    yield pg
    outside = [u for u in pg.requests if not (u.startswith(table.url) or u.startswith("data:"))]
    assert not outside, f"the page asked outside the daemon: {outside}"
    context.close()


def shot(page, name):
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def open_page(page, table):
    page.goto(table.url + "/")
    page.wait_for_selector("#conn.ok", timeout=10000)


def test_balance_duels_arm_bars_and_moves(page, table):
    table.new_game("balance_duels", {"players": 2})
    open_page(page, table)
    assert page.locator(".bd-arm svg").count() >= 1
    assert page.locator(".bd-bar").count() == 14  # one bar per holder of model A
    table.roll(4)
    page.wait_for_selector(".bd-move", timeout=2000)
    assert "places L on E4" in page.locator(".bd-moves").inner_text()
    assert page.locator(".verdict.safe").count() >= 1
    shot(page, "balance-duels")


def test_a_placement_shows_up_live_without_reload(page, table):
    table.new_game("balance_duels", {"players": 2})
    open_page(page, table)
    pawns = page.locator(".bd-beam circle").count()
    t0 = time.monotonic()
    table.play_first(3, kind="place")
    wait_for_js(page, f"document.querySelectorAll('.bd-beam circle').length > {pawns}", timeout=2000)
    assert time.monotonic() - t0 < 2.0
    assert page.evaluate("performance.getEntriesByType('navigation').length") == 1  # no reload


def test_a_tip_raises_the_alarm(page, table):
    table.new_game("balance_duels", {"players": 2})
    open_page(page, table)
    # seat 1 loads the right-hand end faster than seat 2 can answer: E1, E2, then E1 again tips it
    table.play_first(1, kind="place")      # seat 1 → E1
    table.play_first(6, kind="place")      # seat 2 → W2
    table.play_first(2, kind="place")      # seat 1 → E2
    table.play_first(6, kind="place")      # seat 2 → W2
    view = table.roll(1)["view"]
    assert [m["verdict"] for m in view["moves"] if m["move"]["kind"] == "place"] == ["tips"]
    page.wait_for_selector(".verdict.tips", timeout=2000)
    table.act({"type": "move", "move": next(m["move"] for m in view["moves"] if m["move"]["kind"] == "place")})
    page.wait_for_selector("#alarm:not([hidden])", timeout=2000)
    assert "tipped the arm" in page.locator("#alarm").inner_text()
    assert page.locator(".bd-light.red").count() == 1
    shot(page, "balance-duels-tipped")


def test_imperial_rondel_shows_correct_costs(page, table):
    from companion.games.imperial import rondel_cost

    state = table.new_game("imperial", {"players": ["Ann", "Bob"]})
    for _ in range(6):  # every nation's free first placement, on Taxation (which needs no further choice)
        nation = state["view"]["to_move"]
        state = table.act({"type": "rondel", "nation": nation, "target": "taxation"})
    view = state["view"]
    mover = view["to_move"]
    power = next(n for n in view["nations"] if n["id"] == mover)["power_points"]
    open_page(page, table)
    page.wait_for_selector(".imp-sector", timeout=5000)
    for target, name in (("investor", "Investor"), ("import", "Import"), ("production2", "Production")):
        cost = rondel_cost("taxation", target, power)
        label = f"{name}: {cost} M" if cost else f"{name}: free"
        assert page.locator(f'[aria-label="{label}"]').count() >= 1, label
    shot(page, "imperial")


def test_changes_need_the_pin_in_the_page(page, table):
    table.new_game("balance_duels", {"players": 2})
    page.goto(table.url + "/")
    page.wait_for_selector("#bd-roll", timeout=10000)
    seq = json.loads(urllib.request.urlopen(table.url + "/api/state").read())["seq"]
    page.click("#bd-roll")
    page.wait_for_selector("#pin[open]", timeout=2000)
    page.fill("#pin-input", "0000")
    page.click("#pin-form button[value=go]")
    wait_for_js(page, "document.getElementById('pin-error').textContent.includes('wrong PIN')", timeout=2000)
    assert json.loads(urllib.request.urlopen(table.url + "/api/state").read())["seq"] == seq
    page.fill("#pin-input", PIN)
    page.click("#pin-form button[value=go]")
    page.wait_for_selector(".bd-die:not(.empty)", timeout=3000)
    assert json.loads(urllib.request.urlopen(table.url + "/api/state").read())["seq"] == seq + 1


def test_reconnecting_is_visible_and_resumes(browser, tmp_path):
    own = Table(tmp_path)  # its own daemon: this test freezes it
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    try:
        open_page(page, own)
        # the daemon stalls (as on a Wi-Fi hiccup or an overloaded Pi): the page must say so, not show stale data quietly
        own.proc.send_signal(signal.SIGSTOP)
        page.wait_for_selector("#conn.bad", timeout=10000)
        assert "reconnecting" in page.locator("#conn").inner_text()
        own.proc.send_signal(signal.SIGCONT)
        own.roll(2)
        page.wait_for_selector("#conn.ok", timeout=15000)
        page.wait_for_selector(".bd-die:not(.empty)", timeout=5000)
    finally:
        own.proc.send_signal(signal.SIGCONT)
        context.close()
        own.stop()


@pytest.mark.parametrize("game,options,marker", [
    ("risk", {"players": ["Ann", "Bob"]}, "[class^=rk-], [class*=' rk-']"),
    ("balance_of_power", {"players": 3}, "[class^=bp-], [class*=' bp-']"),
    ("global_powers", {"players": 3}, "[class^=gp-], [class*=' gp-']"),
])
def test_every_game_has_its_view(page, table, game, options, marker):
    state = table.new_game(game, options)
    open_page(page, table)
    page.wait_for_selector(marker, timeout=5000)
    assert page.locator("#title").inner_text() == state["title"]
    assert page.locator("#game .error").count() == 0  # the view drew without failing
    shot(page, game.replace("_", "-"))


def test_risk_owners_are_entered_and_an_airfield_without_a_territory_is_removed(browser, table):
    """Command Post: an airfield bought without naming its territory, taken off from the page; owners set there."""
    missions = ["six_cities", "two_regions", "swiss_safe", "danish_naval_base", "sea_line", "rough_terrain",
                "green_region", "eliminate_neutral"]
    table.new_game("risk", {"players": ["Ann", "Bob"], "variant": "command_post", "missions": missions})
    table.act({"type": "set_counts", "player": "Ann", "lost": 10})
    table.act({"type": "buy", "item": "airfield"})
    context = browser.new_context(viewport={"width": 1024, "height": 768})
    assert context.request.post(table.url + "/api/login", data={"pin": PIN}).ok
    page = context.new_page()
    try:
        open_page(page, table)
        page.wait_for_selector(".rk-counts", timeout=5000)
        assert page.locator("#game .error").count() == 0   # the Command Post view draws
        page.locator(".rk-counts summary").click()
        # the neutral's four object territories are known from the set-up
        assert "Denmark \u2014 neutral" in page.locator(".rk-owners-known").inner_text()
        page.click("text=Remove Ann's airfield (no territory given)")
        page.wait_for_selector(".rk-remove-airfield", state="detached", timeout=3000)
        page.fill("[name=owner_territory]", "italy")
        page.select_option("[name=owner]", "Bob")
        page.click("text=Save owner")
        wait_for_js(page, "document.querySelector('.rk-owners-known').textContent.includes('Italy')", timeout=3000)
        view = json.loads(urllib.request.urlopen(table.url + "/api/state").read())["view"]
        assert view["players"][0]["airfield"] is None
        assert view["owners"]["Italy"] == "Bob"
        # a name off the map is refused with the nearest names, beside the button
        page.fill("[name=owner_territory]", "Itly")
        page.click("text=Save owner")
        wait_for_js(page, "document.body.textContent.includes('did you mean Italy')", timeout=3000)
        shot(page, "risk-owners")
    finally:
        context.close()


def test_the_map_form_saves_a_border_beside_the_config(browser, tmp_path):
    """Risk: the players enter a border their printed board shows; it is saved in maps/risk.toml."""
    own = Table(tmp_path)
    own.new_game("risk", {"players": ["Ann", "Bob"]})
    context = browser.new_context(viewport={"width": 1024, "height": 768})
    assert context.request.post(own.url + "/api/login", data={"pin": PIN}).ok
    page = context.new_page()
    try:
        open_page(page, own)
        page.wait_for_selector(".rk-map", timeout=5000)
        page.locator(".rk-map > summary").click()
        page.fill(".rk-map [name=a]", "Italy")
        page.fill(".rk-map [name=b]", "Austrai")
        page.click("text=Add border")
        wait_for_js(page, "document.querySelector('.rk-map').textContent.includes('did you mean Austria')", timeout=3000)
        assert not (tmp_path / "maps" / "risk.toml").exists()
        page.fill(".rk-map [name=b]", "Austria")
        page.click("text=Add border")
        wait_for_js(page, "document.querySelector('.rk-map') && document.querySelector('.rk-map').textContent.includes('Saved')", timeout=3000)
        assert '["Austria", "Italy"]' in (tmp_path / "maps" / "risk.toml").read_text()
        shot(page, "risk-map")
    finally:
        context.close()
        own.stop()


@pytest.mark.parametrize("size", [{"width": 800, "height": 1280}, {"width": 390, "height": 844}])
def test_portrait_tablet_and_phone(browser, table, size):
    table.new_game("balance_duels", {"players": 2})
    context = browser.new_context(viewport=size)
    page = context.new_page()
    try:
        open_page(page, table)
        # nothing wider than the screen: the arm scales, the side panels stack
        assert page.evaluate("document.documentElement.scrollWidth") <= size["width"] + 1
        box = page.locator("#btn-undo").bounding_box()
        assert box["height"] >= 44 and box["width"] >= 44  # a finger-sized target
        # "-full-": test_layout.py saves balance-duels-390x844.png (the screen only), maybe at the same moment
        shot(page, f"balance-duels-full-{size['width']}x{size['height']}")
    finally:
        context.close()


def test_report_a_misread_downloads_the_flight_recorder_after_the_pin(page, table, tmp_path):
    import tarfile

    table.new_game("balance_duels", {"players": 2})
    table.play_first(3, kind="place")
    open_page(page, table)
    page.wait_for_selector("#report-line:not([hidden])", timeout=5000)
    page.click("#report")
    page.wait_for_selector("#pin[open]", timeout=3000)   # this browser has no session yet
    page.fill("#pin-input", PIN)
    with page.expect_download(timeout=15000) as info:
        page.click("#pin-form button[value=go]")
    download = info.value
    assert re.fullmatch(r"misread-\d{8}-\d{6}\.tar\.gz", download.suggested_filename)
    path = tmp_path / download.suggested_filename
    download.save_as(path)
    with tarfile.open(path) as tar:
        names = {m.name.split("/", 1)[1] for m in tar.getmembers()}
    assert {"trace.csv", "inputs.jsonl", "config.toml", "calibration.toml", "README.txt"} <= names
    wait_for_js(page, "document.getElementById('banner').textContent.includes('Saved misread-')", timeout=3000)


def test_a_board_that_does_not_match_names_the_holder_and_folds_the_figures_away(browser, table):
    """The players read which holder to check from across the table; the grams are there for whoever asks."""
    table.new_game("balance_duels", {"players": 2})
    with urllib.request.urlopen(table.url + "/api/state", timeout=10) as r:
        snap = json.loads(r.read())
    # only the mismatch may warn: a notice the simulated arm left from an earlier test would be a second banner
    live = {**(snap.get("live") or {}), "recorder": True, "sensing_notice": None, "sensing_details": None,
            "question": None, "candidates": [],
            "mismatch": "the arm doesn't match the game: check holder W6 (it seems to hold an extra L pawn)",
            "mismatch_details": "the arm carries 10.1 g, -836 g·mm; the game's pawns would give 0.0 g and +0 g·mm"}
    body = ("retry: 2000\n\n" + f"id: {snap['seq']}\nevent: state\ndata: {json.dumps({'event': None, 'state': snap})}\n\n"
            + f"event: live\ndata: {json.dumps(live)}\n\n")
    for width, height in ((1024, 768), (768, 1024), (390, 844)):
        context = browser.new_context(viewport={"width": width, "height": height})
        page = context.new_page()
        # one stream message of the daemon's own form, carrying the banner's figures
        page.route("**/api/stream*", lambda route: route.fulfill(status=200, body=body,
                                                                  headers={"Content-Type": "text/event-stream"}))
        page.goto(table.url + "/")
        warn = page.locator("#sensing .sensing-warn")
        # the page first draws the shared daemon's own state, which may carry a notice an earlier test's arm left
        # ("a pawn moved before the die was rolled": a make test run); the stream's message then replaces it
        page.wait_for_function("() => { const w = document.querySelectorAll('#sensing .sensing-warn');"
                               " return w.length === 1 && w[0].innerText.includes('check holder W6'); }",
                               timeout=10000)
        assert "check holder W6" in warn.inner_text() and "g·mm" not in warn.inner_text()
        figures = page.locator("#sensing details.sensing-details")
        assert not figures.locator("p").is_visible()           # folded: the players see the holder first
        figures.locator("summary").click()
        assert "10.1 g" in figures.locator("p").inner_text()
        box = warn.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= width, f"the banner runs off a {width} px screen"
        # the stream has ended, so the page says "reconnecting…": its longer badge must not push the buttons off
        assert page.evaluate("document.documentElement.scrollWidth") <= width + 1
        shot(page, f"mismatch-{width}x{height}")
        context.close()
