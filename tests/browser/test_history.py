"""The history view in a real browser, on a store of made-up game nights: at the three sizes the table uses, the
plays, a play opened (its standing, score and torque over time), the players, games and ratings; New game's
earlier names; resuming an unfinished play with the PIN. Nothing is asked of anyone but the daemon."""

import json
import urllib.request

import pytest

from tests.browser.test_layout import SMALL_TEXT, SIZES
from tests.browser.test_page import ARTIFACTS, PIN, Table, browser  # noqa: F401 (its fixture; skips without chromium)
from tests.browser.waiting import wait_for_js

from companion.simulation import plays as sim

Axe = pytest.importorskip("axe_playwright_python.sync_playwright").Axe


@pytest.fixture(scope="module")
def nights(tmp_path_factory):
    d = tmp_path_factory.mktemp("nights")
    truth = sim.write_store(d / "db.sqlite3", sim.make_plays(40, seed=8, unfinished_rate=0.2), seed=8)
    t = Table(d)
    t.truth = truth
    yield t
    t.stop()


def open_history(browser, nights, size):
    context = browser.new_context(viewport=size)
    page = context.new_page()
    page.requests = []
    page.on("request", lambda r: page.requests.append(r.url))
    page.goto(nights.url + "/")
    page.wait_for_selector("#conn.ok", timeout=10000)
    page.click("#btn-history")
    page.wait_for_selector(".hist-play", timeout=20000)
    return context, page


def fits(page, size, name):
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= size["width"], f"{name}: the page is {width} px wide on a {size['width']} px screen"
    assert page.evaluate(SMALL_TEXT) == [], name
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"history-{name}-{size['width']}x{size['height']}.png"))


def only_the_daemon(page, nights):
    outside = [u for u in page.requests if not (u.startswith(nights.url) or u.startswith("data:"))]
    assert not outside, f"the page asked outside the daemon: {outside}"


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s['width']}x{s['height']}")
def test_the_history_reads_at_every_size(browser, nights, size):
    context, page = open_history(browser, nights, size)
    try:
        assert page.is_hidden("main") and page.is_visible("#history")
        assert page.locator(".hist-play").count() == min(50, len(nights.truth))
        # newest first, as the store has them
        first = int(page.locator(".hist-play").first.get_attribute("data-play"))
        assert first == max(nights.truth)
        fits(page, size, "plays")
        # a finished Balance Duels play: its standing, its score and the arm's torque over the game
        gid = max(g for g, t in nights.truth.items() if t.game == "balance_duels" and t.over)
        page.click(f".hist-play[data-play='{gid}']")
        page.wait_for_selector("#hist-standing")
        assert page.locator(".hist-chart").count() == 2
        winners = nights.truth[gid].winners
        assert all(w in page.inner_text("#hist-standing") for w in winners)
        fits(page, size, "play")
        for view in ("players", "games", "ratings"):
            page.click(f".hist-tab[data-tab='{view}']")
            page.wait_for_selector({"players": "#hist-players", "games": ".hist-game", "ratings": "#hist-ratings, #hist-body p"}[view])
            fits(page, size, view)
        page.click("#btn-history")      # now "Back to the game"
        assert page.is_visible("main") and page.is_hidden("#history")
        only_the_daemon(page, nights)
    finally:
        context.close()


@pytest.mark.parametrize("size", [SIZES[0], SIZES[2]], ids=["tablet", "phone"])
def test_no_serious_accessibility_violations_in_the_history(browser, nights, size):
    context, page = open_history(browser, nights, size)
    try:
        for step in ("list", "play", "players"):
            if step == "play":
                page.locator(".hist-play").first.click()
                page.wait_for_selector("#hist-standing")
            if step == "players":
                page.click(".hist-tab[data-tab='players']")
                page.wait_for_selector("#hist-players")
            result = Axe().run(page)
            bad = [f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes'][:3]]}"
                   for v in result.response["violations"] if v["impact"] in ("serious", "critical")]
            assert bad == [], step
    finally:
        context.close()


def test_filters_by_game_and_player(browser, nights):
    context, page = open_history(browser, nights, SIZES[0])
    try:
        page.select_option(".hist-filters select >> nth=0", "imperial")
        want = sum(1 for t in nights.truth.values() if t.game == "imperial")
        wait_for_js(page, f"document.querySelectorAll('.hist-play').length === {want} && "
                          "[...document.querySelectorAll('.hist-play .hist-line:first-child > b')].every(b => b.textContent === 'Imperial 2030')")
        page.select_option(".hist-filters select >> nth=0", "")
        page.fill(".hist-filters input[type=search]", "ZOE")
        page.press(".hist-filters input[type=search]", "Enter")
        zoe = sum(1 for t in nights.truth.values() if any(n.casefold() in ("zoë", "zoe") for n in t.names))
        wait_for_js(page, f"document.querySelectorAll('.hist-play').length === {zoe}")
    finally:
        context.close()


def hold_plays(page, which):
    """Holds the answers to the plays' requests that `which(url)` picks (until the test lets them through), as a
    busy daemon can; the others go straight on. Returns the held routes."""
    held = []

    def hold(route):
        if which(route.request.url):
            held.append(route)
        else:
            route.continue_()

    page.route("**/api/plays?*", hold)
    return held


def test_what_is_typed_into_the_filters_survives_an_answer_that_comes_in_meanwhile(browser, nights):
    context, page = open_history(browser, nights, SIZES[0])
    holding = [True]
    try:
        held = hold_plays(page, lambda url: holding[0])
        page.select_option(".hist-filters select >> nth=0", "imperial")
        page.wait_for_timeout(300)
        assert held, "the filtered request never went out: the test did not make the race it is about"
        # someone types a name while the game's answer is still on its way; then it arrives
        page.click(".hist-filters input[type=search]")
        page.keyboard.type("ZO")
        holding[0] = False
        for route in held:
            route.continue_()
        want = sum(1 for t in nights.truth.values() if t.game == "imperial")
        wait_for_js(page, f"document.querySelectorAll('.hist-play').length === {want}")
        box = page.locator(".hist-filters input[type=search]")
        assert box.input_value() == "ZO", "the answer redrew the filters and dropped what was being typed"
        assert page.evaluate("document.activeElement && document.activeElement.type === 'search'"), "the typing lost its place"
        page.keyboard.type("E")
        page.keyboard.press("Enter")
        both = sum(1 for t in nights.truth.values() if t.game == "imperial" and any(n.casefold() in ("zoë", "zoe") for n in t.names))
        wait_for_js(page, f"document.querySelectorAll('.hist-play').length === {both} && "
                          "[...document.querySelectorAll('.hist-play .hist-line:first-child > b')].every(b => b.textContent === 'Imperial 2030')")
    finally:
        page.unroute("**/api/plays?*")
        context.close()


def test_an_older_answer_that_comes_back_last_does_not_paint_over_the_newer_filter(browser, nights):
    context, page = open_history(browser, nights, SIZES[0])
    try:
        # the answer for "every play" is held until the player's filter has drawn, then let through
        held = hold_plays(page, lambda url: "player=" not in url)
        page.select_option(".hist-filters select >> nth=0", "")
        page.fill(".hist-filters input[type=search]", "ZOE")
        page.press(".hist-filters input[type=search]", "Enter")
        zoe = sum(1 for t in nights.truth.values() if any(n.casefold() in ("zoë", "zoe") for n in t.names))
        wait_for_js(page, f"document.querySelectorAll('.hist-play').length === {zoe}")
        assert held, "the unfiltered request never went out: the test did not make the race it is about"
        for route in held:
            route.continue_()
        page.wait_for_timeout(500)      # the held answer arrives and must be dropped
        assert page.locator(".hist-play").count() == zoe
    finally:
        page.unroute("**/api/plays?*")
        context.close()


def test_the_plays_shown_download_for_a_spreadsheet_and_for_bg_stats(browser, nights):
    import csv
    import io

    context = browser.new_context(viewport=SIZES[0], timezone_id="Europe/Berlin", accept_downloads=True)
    page = context.new_page()
    page.requests = []
    page.on("request", lambda r: page.requests.append(r.url))
    try:
        page.goto(nights.url + "/")
        page.wait_for_selector("#conn.ok", timeout=10000)
        page.click("#btn-history")
        page.wait_for_selector(".hist-play", timeout=20000)
        page.select_option(".hist-filters select >> nth=0", "risk")
        want = {g for g, t in nights.truth.items() if t.game == "risk"}
        wait_for_js(page, f"document.querySelectorAll('.hist-play').length === {len(want)}")
        page.wait_for_selector("[data-export=csv][href*='game=risk']")
        with page.expect_download() as got:
            page.click("[data-export=csv]")
        assert got.value.suggested_filename == "plays.csv"
        rows = list(csv.DictReader(io.StringIO(open(got.value.path(), encoding="utf-8-sig").read(), newline="")))
        assert {int(r["play_id"]) for r in rows} == want and {r["game"] for r in rows} == {"risk"}
        # in the tablet's own zone (CET, or CEST for a night whose Pi clock was not set and said summer)
        assert all(r["start"].endswith(("+01:00", "+02:00")) for r in rows if r["start"])
        assert any(r["start"].endswith("+01:00") for r in rows if r["start_quality"] == "synced")
        with page.expect_download() as got:
            page.click("[data-export=bgstats]")
        doc = json.loads(open(got.value.path(), encoding="utf-8").read())
        assert len(doc["plays"]) == len(want) and [g["name"] for g in doc["games"]] == ["Risk: Balance of Power"]
        fits(page, SIZES[0], "plays-export")
        only_the_daemon(page, nights)
    finally:
        context.close()


def test_new_game_offers_earlier_names(browser, nights):
    context = browser.new_context(viewport=SIZES[2])
    page = context.new_page()
    try:
        page.goto(nights.url + "/")
        page.wait_for_selector("#conn.ok", timeout=10000)
        page.click("#btn-new")
        page.wait_for_selector("#setup[open] .seat-name")
        field = page.locator(".seat-name").first
        field.click()
        # the field's first focus offers the most recent names; typing narrows them
        page.wait_for_selector(".name-chip", timeout=10000)
        assert page.locator(".name-chip").count() == 6
        field.type("zo")
        # typed without the accent, in another case
        wait_for_js(page, "[...document.querySelectorAll('.name-chip')].map(b => b.textContent).join() === 'Zoë'")
        page.locator(".name-chip").first.click()
        assert field.input_value() == "Zoë"
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "history-new-game-names-390x844.png"))
    finally:
        context.close()


def test_an_unfinished_play_is_resumed_from_the_history_with_the_pin(browser, nights):
    context, page = open_history(browser, nights, SIZES[0])
    try:
        page.select_option(".hist-filters select >> nth=1", "unfinished")
        wait_for_js(page, "document.querySelectorAll('.hist-play').length > 0 && "
                          "[...document.querySelectorAll('.hist-play')].every(b => b.textContent.includes('unfinished'))")
        target = page.locator(".hist-play:not(:has(.badge.now))").first
        gid = int(target.get_attribute("data-play"))
        target.click()
        page.click("#hist-resume")
        page.wait_for_selector("#pin[open]")
        page.fill("#pin-input", PIN)
        page.click("#pin-form button[value=go]")
        page.wait_for_selector("#history", state="hidden", timeout=10000)
        with urllib.request.urlopen(nights.url + "/api/plays?limit=1") as r:
            newest = json.loads(r.read())["plays"][0]
        assert newest["parts"][-2] == gid and newest["current"]
        assert page.is_visible("main")
    finally:
        context.close()
