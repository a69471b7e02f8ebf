"""The page at the sizes tables use: a 1024×768 tablet, a portrait tablet and a phone, for every game.

Each game is opened at each size in its first playing state; the page must not scroll sideways, the current
player's next action must be on screen without scrolling, no text may be under 12 px, and axe-core must find no
serious or critical accessibility violation. Screenshots land in test-artifacts/ (README's come from here)."""

import pytest

from tests.browser.test_page import ARTIFACTS, browser, open_page, table  # noqa: F401 (its fixtures; skips without chromium)
from tests.browser.waiting import wait_for_js

Axe = pytest.importorskip("axe_playwright_python.sync_playwright").Axe

SIZES = [{"width": 1024, "height": 768}, {"width": 768, "height": 1024}, {"width": 390, "height": 844}]

# each game in its first playing state, what its current player taps next, and whether one player is to act
# (Global Powers opens with an auction that everyone bids in)
GAMES = {
    "balance_duels": ({"players": 2}, ".bd-move", True),
    "imperial": ({"players": ["Ann", "Bob", "Cy"]}, ".imp-reachable", True),
    "risk": ({"players": ["Ann", "Bob"]}, ".rk-primary", True),
    "balance_of_power": ({"players": 3}, ".bp-btn", True),
    "global_powers": ({"players": ["Ann", "Bob", "Cy"]}, ".gp-primary", False),
}

SMALL_TEXT = """() => {
  const small = [];
  for (const e of document.querySelectorAll('body *')) {
    const r = e.getBoundingClientRect(), cs = getComputedStyle(e);
    if (!r.width || cs.visibility === 'hidden' || e.closest('[hidden], dialog:not([open])')) continue;
    for (const n of e.childNodes) {
      if (n.nodeType !== 3 || !n.textContent.trim()) continue;
      let px = parseFloat(cs.fontSize);
      if (e instanceof SVGElement && e.ownerSVGElement) { const m = e.getScreenCTM(); px *= m ? Math.hypot(m.a, m.b) : 1; }
      if (px < 12) small.push(`${px.toFixed(1)} px: ${n.textContent.trim().slice(0, 30)}`);
    }
  }
  return small;
}"""


def game_page(browser, table, game, size):
    options = GAMES[game][0]
    table.new_game(game, options)
    if game == "balance_duels":
        table.roll(4)
    context = browser.new_context(viewport=size)
    page = context.new_page()
    open_page(page, table)
    # the game's own view, not the line that stands in for it while its script loads (a game's view is fetched the
    # first time it is shown: a box counted then was not there yet)
    page.wait_for_selector("#game > :not(.view-loading)", timeout=5000)
    return context, page


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s['width']}x{s['height']}")
@pytest.mark.parametrize("game", list(GAMES))
def test_every_game_fits_the_screen_with_its_next_action_in_view(browser, table, game, size):
    context, page = game_page(browser, table, game, size)
    try:
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= size["width"], f"the page is {width} px wide on a {size['width']} px screen"
        action = page.locator(GAMES[game][1]).first
        box = action.bounding_box()
        assert box is not None, "the next action is not shown"
        assert box["y"] >= 0 and box["y"] + box["height"] <= size["height"], \
            f"the next action ({action.inner_text()[:30]!r}) is at y = {box['y']:.0f}, below the fold"
        assert page.evaluate(SMALL_TEXT) == []
        # whose turn it is (or, with nobody's in particular, what the table does now) in the sticky header
        header = page.locator("#turn" if GAMES[game][2] else "#message")
        assert header.is_visible() and header.inner_text().strip()
        if GAMES[game][2]:
            assert header.inner_text().endswith("'s turn")
        page.mouse.wheel(0, 3000)
        wait_for_js(page, "window.scrollY > 0")
        assert 0 <= header.bounding_box()["y"] < 150, "the header with the turn scrolled away"
        ARTIFACTS.mkdir(exist_ok=True)
        page.evaluate("window.scrollTo(0, 0)")
        page.screenshot(path=str(ARTIFACTS / f"{game.replace('_', '-')}-{size['width']}x{size['height']}.png"))
    finally:
        context.close()


@pytest.mark.parametrize("size", [SIZES[0], SIZES[2]], ids=["tablet", "phone"])
@pytest.mark.parametrize("game", list(GAMES))
def test_no_serious_accessibility_violations(browser, table, game, size):
    context, page = game_page(browser, table, game, size)
    try:
        result = Axe().run(page)
        bad = [f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes'][:3]]}"
               for v in result.response["violations"] if v["impact"] in ("serious", "critical")]
        assert bad == []
    finally:
        context.close()


def fake_stream(snapshot, live):
    """One stream message of the daemon's own form (the state and a live message), for a moment the simulated
    table does not reach by itself (a question of the sensors)."""
    import json

    return ("retry: 60000\n\n" + f"id: {snapshot['seq']}\nevent: state\ndata: {json.dumps({'event': None, 'state': snapshot})}\n\n"
            + f"event: live\ndata: {json.dumps(live)}\n\n")


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s['width']}x{s['height']}")
def test_a_question_of_the_sensors_and_its_answers_are_in_view(browser, table, size):
    import json
    import urllib.request

    table.new_game("balance_duels", {"players": 2})
    table.roll(3)
    with urllib.request.urlopen(table.url + "/api/state", timeout=10) as r:
        snap = json.loads(r.read())
    live = {**(snap.get("live") or {}),
            "question": {"text": "Which move was made?", "options": ["move L E1 → E4", "move L E2 → E5", "Neither"]}}
    context = browser.new_context(viewport=size)
    page = context.new_page()
    try:
        page.route("**/api/stream*", lambda route: route.fulfill(status=200, body=fake_stream(snap, live),
                                                                  headers={"Content-Type": "text/event-stream"}))
        page.goto(table.url + "/")
        page.wait_for_selector(".sensing-q", timeout=10000)
        for answer in page.locator("#sensing button").all()[:3]:
            box = answer.bounding_box()
            assert box["y"] >= 0 and box["y"] + box["height"] <= size["height"], "an answer is below the fold"
        assert page.evaluate("document.documentElement.scrollWidth") <= size["width"]
        assert page.evaluate(SMALL_TEXT) == []
    finally:
        context.close()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s['width']}x{s['height']}")
def test_the_tip_and_the_end_of_the_game_are_in_view(browser, table, size):
    table.new_game("balance_duels", {"players": 2})
    for roll in (1, 6, 2, 6):
        table.play_first(roll, kind="place")
    view = table.roll(1)["view"]
    table.act({"type": "move", "move": next(m["move"] for m in view["moves"] if m["move"]["kind"] == "place")})
    context = browser.new_context(viewport=size)
    page = context.new_page()
    try:
        open_page(page, table)
        page.wait_for_selector("#alarm:not([hidden])", timeout=3000)
        for what in ("#alarm", ".over-card .btn"):
            box = page.locator(what).bounding_box()
            assert box["y"] >= 0 and box["y"] + box["height"] <= size["height"], f"{what} is below the fold"
        assert page.evaluate("document.documentElement.scrollWidth") <= size["width"]
        assert page.evaluate(SMALL_TEXT) == []
        result = Axe().run(page)
        assert [v["id"] for v in result.response["violations"] if v["impact"] in ("serious", "critical")] == []
        page.screenshot(path=str(ARTIFACTS / f"balance-duels-tipped-{size['width']}x{size['height']}.png"))
    finally:
        context.close()


# the boxes of entries and corrections each game folds away (each keeps itself open through redraws): all open,
# the page must still fit
FOLDING = ["risk", "balance_of_power", "global_powers"]


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s['width']}x{s['height']}")
@pytest.mark.parametrize("game", FOLDING)
def test_every_folded_box_fits_the_screen_open(browser, table, game, size):
    context, page = game_page(browser, table, game, size)
    try:
        summaries = page.locator("#game details > summary")
        n = summaries.count()
        assert n > 0, "the game has no folded box"
        for k in range(n):
            summaries.nth(k).scroll_into_view_if_needed()
            summaries.nth(k).click()
            wait_for_js(page, "k => document.querySelectorAll('#game details')[k].open", arg=k)
        assert page.evaluate("[...document.querySelectorAll('#game details')].every(d => d.open)")
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= size["width"], f"open, the boxes make the page {width} px wide on a {size['width']} px screen"
        assert page.evaluate(SMALL_TEXT) == []
        ARTIFACTS.mkdir(exist_ok=True)
        page.evaluate("k => document.querySelectorAll('#game details')[k].scrollIntoView()", n - 1)
        page.screenshot(path=str(ARTIFACTS / f"{game.replace('_', '-')}-open-{size['width']}x{size['height']}.png"))
    finally:
        context.close()
