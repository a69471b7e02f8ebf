"""The page explains itself (issue 36): a refusal in view of the control tapped, a reason beside every greyed
control, a header prompt that names the next step, players' words, a toolbar that stays put, who did what.

One daemon and one browser for the module; each test opens its own page (and PIN session) at the sizes it needs.
"""

import json
import urllib.request

import pytest

from tests.browser.test_page import ARTIFACTS, PIN, browser, open_page, table  # noqa: F401 (its fixtures; skips without chromium)
from tests.browser.waiting import wait_for_js

TABLET, PORTRAIT, PHONE = {"width": 1024, "height": 768}, {"width": 768, "height": 1024}, {"width": 390, "height": 844}

# every greyed control on screen and what it says about itself: the text of the elements it is described by
GREYED = """() => [...document.querySelectorAll('button:disabled, select:disabled, input:disabled')]
  .filter((c) => c.getClientRects().length && !c.closest('dialog:not([open]), [hidden]') && c.getAttribute('aria-busy') !== 'true')
  .map((c) => {
    const notes = (c.getAttribute('aria-describedby') || '').split(/\\s+/).filter(Boolean).map((id) => document.getElementById(id));
    const shown = notes.filter((n) => n && n.getClientRects().length && n.textContent.trim());
    return { control: (c.textContent || c.getAttribute('aria-label') || c.name || '').trim().slice(0, 40),
             why: shown.map((n) => n.textContent.trim()).join(' | ') };
  })"""


def unlocked(browser, table, size):
    context = browser.new_context(viewport=size)
    assert context.request.post(table.url + "/api/login", data={"pin": PIN}).ok
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.errors = errors
    return context, page


def screen(page, name):
    """The screen as the table sees it (README's screenshots of these moments come from here)."""
    ARTIFACTS.mkdir(exist_ok=True)
    size = page.viewport_size
    page.screenshot(path=str(ARTIFACTS / f"{name}-{size['width']}x{size['height']}.png"))


def in_view(page, locator):
    box = locator.bounding_box()
    header = page.locator("header.top").bounding_box()
    return box is not None and box["y"] >= header["y"] + header["height"] - 1 and box["y"] + box["height"] <= page.viewport_size["height"]


def refusal_beside(page, control, text):
    """The refusal is shown, in view, close under (or beside) the control that was tapped."""
    note = page.locator(".tap-error:not(#refusal)").filter(has_text=text)
    note.wait_for(timeout=5000)
    assert in_view(page, note), f"the refusal {text!r} is off screen"
    assert in_view(page, control), "the control tapped is off screen"
    gap = note.bounding_box()["y"] - (control.bounding_box()["y"] + control.bounding_box()["height"])
    assert -5 <= gap <= 160, f"the refusal is {gap:.0f} px from the control tapped"
    return note


def imperial_factory_short(table):
    """Russia (Ann) on Factory with 2 M in its treasury: the builds are greyed."""
    table.new_game("imperial", {"players": ["Ann", "Ben", "Cy"]})
    for n in ("russia", "china", "india", "brazil", "united_states", "europe"):
        table.act({"type": "rondel", "nation": n, "target": "taxation"})
    table.act({"type": "rondel", "nation": "russia", "target": "factory"})
    table.act({"type": "correct", "what": "cash", "player": "Ben", "value": 9})
    return table.act({"type": "correct", "what": "treasury", "nation": "russia", "value": 2})


def risk_after_a_conquest(table):
    table.new_game("risk", {"players": ["Anna", "Bob"]})
    for action in ({"type": "set_counts", "player": "Anna", "territories": 10, "cities": 2}, {"type": "reinforce"},
                   {"type": "attack", "attackers": 3, "defenders": 1, "defender": "Bob", "to": "Italy"},
                   {"type": "battle", "attacker_dice": [6, 5, 1], "defender_dice": [2]}):
        state = table.act(action)
    return state


@pytest.mark.parametrize("size", [TABLET, PHONE], ids=["tablet", "phone"])
def test_imperial_greyed_builds_say_why_and_the_way_out_is_beside_them(browser, table, size):
    imperial_factory_short(table)
    context, page = unlocked(browser, table, size)
    try:
        open_page(page, table)
        build = page.get_by_role("button", name="Build armament facility in Novosibirsk (5 M)")
        build.wait_for(timeout=5000)
        assert build.is_disabled()
        greyed = page.evaluate(GREYED)
        assert greyed and all(g["why"] for g in greyed), greyed
        assert "Russia's treasury has 2 M" in next(g["why"] for g in greyed if g["control"].startswith("Build armament"))
        # the prompt says what the table can do, and the way out (a gift to the treasury) is right there, among the
        # controls of the turn, offered by the player who can pay it
        assert "give it the 3 missing" in page.locator("#message").inner_text()
        give = page.locator(".imp-controls").get_by_role("button", name="Give to Russia")
        assert give.bounding_box()["y"] - build.bounding_box()["y"] < 400
        assert page.locator(".imp-gift select").input_value() == "Ben"
        screen(page, "explains-imperial-factory")
        give.scroll_into_view_if_needed()
        give.click()
        wait_for_js(page, "!document.querySelector('.imp-gift')", timeout=5000)
        page.get_by_role("button", name="Build armament facility in Novosibirsk (5 M)").wait_for(timeout=5000)
        assert page.get_by_role("button", name="Build armament facility in Novosibirsk (5 M)").is_enabled()
        assert page.errors == []
    finally:
        context.close()


@pytest.mark.parametrize("size", [TABLET, PHONE], ids=["tablet", "phone"])
def test_imperial_table_tools_refusal_shows_beside_give(browser, table, size):
    table.new_game("imperial", {"players": ["Ann", "Ben", "Cy"]})
    context, page = unlocked(browser, table, size)
    try:
        open_page(page, table)
        page.locator("summary", has_text="Give personal cash to a treasury").click()
        form = page.locator(".imp-extras .imp-form").first
        form.locator("input").fill("99")
        give = form.get_by_role("button", name="Give")
        give.click()
        refusal_beside(page, give, "Ann has 2 million")
        screen(page, "explains-imperial-refusal")
        assert page.errors == []
    finally:
        context.close()


def test_risk_after_a_conquest_the_header_names_the_card_and_end_turn_says_why(browser, table):
    risk_after_a_conquest(table)
    context, page = unlocked(browser, table, TABLET)
    try:
        open_page(page, table)
        page.get_by_role("button", name="End turn").wait_for(timeout=5000)
        # End turn waits for the card: the header's prompt says so, not only the greyed button below the fold
        assert "say which card was drawn" in page.locator("#message").inner_text()
        table.act({"type": "attack", "attackers": 3, "defenders": 2, "defender": "Bob"})
        page.locator(".rk-manual").wait_for(timeout=5000)
        # the table dice left empty: the refusal beside "Enter roll", in the page's words
        enter = page.get_by_role("button", name="Enter roll")
        enter.scroll_into_view_if_needed()
        enter.click()
        note = refusal_beside(page, enter, "Attacker's dice: roll 1 to 3 dice, not 0")
        assert "attacker_dice" not in note.inner_text()
        screen(page, "explains-risk-refusal")
        table.act({"type": "stop_attack"})
        # the attack's own panel goes with the state after the stop: End turn was on the page before it, so waiting
        # for the button alone read the old page, which the new state then redrew under the test's hands
        page.locator(".rk-manual").wait_for(state="detached", timeout=5000)
        end = page.get_by_role("button", name="End turn")
        end.wait_for(timeout=5000)
        assert end.is_disabled()
        greyed = page.evaluate(GREYED)
        assert all(g["why"] for g in greyed), greyed
        assert "which card Anna drew" in next(g["why"] for g in greyed if g["control"] == "End turn")
        end.scroll_into_view_if_needed()
        screen(page, "explains-risk-end-turn")
        assert page.errors == []
    finally:
        context.close()


def test_every_greyed_control_in_every_game_says_why(browser, table):
    """A sweep over moments with greyed controls: each says why beside itself and to assistive technology."""
    moments = [
        ("balance_duels", lambda: table.new_game("balance_duels", {"players": 2})),   # nothing to undo yet
        ("imperial", lambda: imperial_factory_short(table)),
        ("risk", lambda: risk_after_a_conquest(table)),
        ("risk command post", lambda: (table.new_game("risk", {"players": ["Anna", "Bob"], "variant": "command_post",
                                                               "missions": ["six_cities", "two_regions", "swiss_safe",
                                                                            "danish_naval_base", "sea_line", "rough_terrain",
                                                                            "green_region", "eliminate_neutral"]}),
                                       table.act({"type": "set_counts", "player": "Anna", "lost": 3}))),
        ("global_powers", lambda: table.new_game("global_powers", {"players": ["Ann", "Ben", "Cy"]})),
        ("balance_of_power", lambda: table.new_game("balance_of_power", {"players": 3})),
    ]
    context, page = unlocked(browser, table, TABLET)
    try:
        seen = 0
        for name, make in moments:
            state = make()
            seq = (state[-1] if isinstance(state, tuple) else state)["seq"]
            open_page(page, table)
            wait_for_js(page, "document.querySelector('#game > :not(.view-loading)') !== null")   # the view drawn
            wait_for_js(page, f"document.getElementById('log').textContent.includes('#{seq}')")
            greyed = page.evaluate(GREYED)
            assert all(g["why"] for g in greyed), f"{name}: greyed without a reason: {[g for g in greyed if not g['why']]}"
            seen += len(greyed)
        assert seen >= 5, "the moments show too few greyed controls to check"
        # New game: a game for one count of players greys the count, and says so
        page.click("#btn-new")
        page.select_option("#setup-game", "risk")
        count = page.locator("#setup-players")
        assert count.is_disabled()
        assert "is for 2 players" in page.evaluate(
            "document.getElementById(document.getElementById('setup-players').getAttribute('aria-describedby')).textContent")
        assert page.errors == []
    finally:
        context.close()


@pytest.mark.parametrize("size", [TABLET, PHONE], ids=["tablet", "phone"])
def test_the_toolbar_keeps_its_place_through_a_roll(browser, table, size):
    """Balance Duels: the buttons' hint and the prompt change after a roll; Undo, New game and Calibrate stay put."""
    table.new_game("balance_duels", {"players": 2, "names": ["Anna", "Emil"]})
    context, page = unlocked(browser, table, size)
    boxes = """() => ['btn-undo', 'btn-new', 'btn-cal'].map((id) => { const r = document.getElementById(id).getBoundingClientRect();
      return [id, Math.round(r.x), Math.round(r.y), Math.round(r.width), Math.round(r.height)]; })"""
    try:
        open_page(page, table)
        page.locator("#bd-roll").wait_for(timeout=5000)
        before = page.evaluate(boxes)
        # a button waiting for its answer is marked busy: the mark must not widen it (the stream's state can come
        # before the POST's answer, so the toolbar was measured mid-request now and then)
        page.evaluate("document.getElementById('btn-undo').setAttribute('aria-busy', 'true')")
        assert page.evaluate(boxes) == before
        page.evaluate("document.getElementById('btn-undo').removeAttribute('aria-busy')")
        page.click("#bd-roll")
        page.locator(".bd-move").first.wait_for(timeout=5000)
        # the button panel now offers the first move: its hint is on the page (a line of its own on a tablet)
        if size is TABLET:
            page.locator("#button-choice:not([hidden])").wait_for(timeout=5000)
        assert page.evaluate(boxes) == before
        screen(page, "explains-toolbar-after-roll")
        # undone, and the hint gone: still the same places
        page.click("#btn-undo")
        page.locator("#bd-roll").wait_for(timeout=5000)
        assert page.evaluate(boxes) == before
        assert page.errors == []
    finally:
        context.close()


def stream_of(body):
    return lambda route: route.fulfill(status=200, body=body, headers={"Content-Type": "text/event-stream"})


def test_reading_the_arm_has_a_line_of_its_own(browser, table):
    """The "Reading the arm…" hint, from the live stream, takes a line kept for it: the toolbar and the game stay put."""
    table.new_game("balance_duels", {"players": 2})
    with urllib.request.urlopen(table.url + "/api/state", timeout=10) as r:
        snap = json.loads(r.read())
    where = ("() => [document.getElementById('btn-undo').getBoundingClientRect().y, "
             "document.getElementById('game').getBoundingClientRect().y, !document.getElementById('reading').hidden]")
    seen = []
    for reading in (False, True):
        context = browser.new_context(viewport=PHONE)
        page = context.new_page()
        try:
            body = (f"retry: 60000\n\nid: {snap['seq']}\nevent: state\ndata: {json.dumps({'event': None, 'state': snap})}\n\n"
                    + f"event: live\ndata: {json.dumps({**(snap.get('live') or {}), 'reading': reading})}\n\n")
            page.route("**/api/stream*", stream_of(body))
            page.goto(table.url + "/")
            page.locator("#bd-roll").wait_for(timeout=10000)
            wait_for_js(page, f"!document.getElementById('reading').hidden === {json.dumps(reading)}")
            # (the one-message stream has ended: both pages say so, which is the same line in both)
            page.locator("#conn.bad").wait_for(timeout=10000)
            seen.append(page.evaluate(where))
        finally:
            context.close()
    assert seen[1][2] and not seen[0][2]
    assert seen[0][:2] == seen[1][:2], f"the hint moved the page: {seen}"


def test_the_log_says_who_did_what_and_undo_what_it_takes_back(browser, table):
    table.new_game("balance_duels", {"players": 2, "names": ["Anna", "Emil"]})
    table.play_first(6, kind="place")
    context, page = unlocked(browser, table, PHONE)
    try:
        open_page(page, table)
        log = page.locator("#log")
        wait_for_js(page, "document.getElementById('log').textContent.includes('Anna placed L on E6')")
        entries = log.locator("li").all_inner_texts()
        assert entries[0].startswith("Anna placed L on E6") and entries[1].startswith("Anna rolled 6")
        assert entries[-1].startswith("New game of Balance Duels: Anna, Emil")
        assert not any(word in " ".join(entries) for word in ("place →", "move:", "roll:", "new_game"))
        undo = page.locator("#btn-undo")
        assert undo.get_attribute("title") == "Undo: Anna placed L on E6"
        assert "takes back: Anna placed L on E6" in page.locator("#undo-what").inner_text()
        assert page.locator("#undo-what").is_visible()
        log.scroll_into_view_if_needed()
        screen(page, "explains-log")
        undo.click()
        wait_for_js(page, "document.getElementById('log').textContent.includes('Undo: Anna placed L on E6')")
        # (the race this once lost: the simulated players' hand placing the undone move's pawn, its change decided just
        # after the undo, was applied again by the sensors — mended in ArmLink.on_game_change, test
        # tests/shell/test_arm_link.py::test_a_move_undone_while_its_pawn_is_still_being_read_stays_undone; what the
        # page and the daemon hold is still printed should it come back)
        title = page.locator("#btn-undo").get_attribute("title")
        if title != "Undo: Anna rolled 6":
            with urllib.request.urlopen(table.url + "/api/state", timeout=10) as r:
                held = json.loads(r.read())
            raise AssertionError((title, log.locator("li").all_inner_texts(),
                                  {k: held.get(k) for k in ("seq", "undo_text", "can_undo", "log")}))
    finally:
        context.close()


def test_new_game_with_the_forms_defaults_starts_every_game(browser, table):
    """Through the page: New game, each game, Start with nothing changed; Global Powers' "Start the game" too."""
    context, page = unlocked(browser, table, TABLET)
    try:
        open_page(page, table)
        games = json.loads(urllib.request.urlopen(table.url + "/api/games").read())
        for g in games:
            seq = json.loads(urllib.request.urlopen(table.url + "/api/state").read())["seq"]
            page.click("#btn-new")
            page.select_option("#setup-game", g["name"])
            page.click("#setup-go")
            wait_for_js(page, "!document.getElementById('setup').open || document.getElementById('setup-error').textContent",
                        timeout=10000)
            assert page.locator("#setup-error").inner_text() == "", g["name"]
            wait_for_js(page, f"document.getElementById('title').textContent === {json.dumps(g['title'])}", timeout=5000)
            state = json.loads(urllib.request.urlopen(table.url + "/api/state").read())
            assert state["game"] == g["name"] and state["seq"] > seq
        # Global Powers, the last: its own start, with the default first player (the weakest, tied: the dice decide)
        assert state["game"] == "global_powers"
        start = page.get_by_role("button", name="Start the game")
        start.click()
        # the set-up is everyone's turn; the game begins with one player's
        wait_for_js(page, "!document.getElementById('turn').textContent.includes('Everyone')", timeout=10000)
        state = json.loads(urllib.request.urlopen(table.url + "/api/state").read())
        assert state["view"]["phase"] == "play"
        assert state["log"][-1]["text"].startswith("The game began: ")
        assert page.locator(".tap-error:visible").count() == 0 and page.errors == []
    finally:
        context.close()
