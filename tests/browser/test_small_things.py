"""Issue 36, item 6: the smaller things seen on the page, each checked where the table sees it.

One daemon and one browser for the module (the fixtures of test_page), and one logged-in page per screen size
(tablet 1024×768, portrait 768×1024, phone 390×844) that the tests share: each test opens the page afresh, so a
check costs a page load, not a new browser context.
"""

import json
import re
import urllib.request

import pytest

from tests.browser.test_page import browser, open_page, table  # noqa: F401 (its fixtures; skips without chromium)
from tests.browser.test_explains import (GREYED, PHONE, PORTRAIT, TABLET, imperial_factory_short, in_view,
                                         refusal_beside, screen, stream_of, unlocked)
from tests.browser.test_layout import SMALL_TEXT
from tests.browser.waiting import wait_for_js

# characters outside the Basic Multilingual Plane: the emoji a Chromium without an emoji font draws as empty boxes
ASTRAL = re.compile("[\U00010000-\U0010FFFF]")


def _screen(browser, table, size):
    context, page = unlocked(browser, table, size)
    yield page
    context.close()


@pytest.fixture(scope="module")
def tablet(browser, table):
    yield from _screen(browser, table, TABLET)


@pytest.fixture(scope="module")
def portrait(browser, table):
    yield from _screen(browser, table, PORTRAIT)


@pytest.fixture(scope="module")
def phone(browser, table):
    yield from _screen(browser, table, PHONE)


def at(request, size):
    """The shared page of that size, its error list emptied for the test that takes it."""
    page = request.getfixturevalue(size)
    page.errors.clear()
    return page


def api(table, path):
    with urllib.request.urlopen(table.url + path, timeout=10) as r:
        return json.loads(r.read())


def on_screen(page, locator):
    """Wholly inside the window (a dialog sits above the sticky header, so only the window's edges count)."""
    box = locator.bounding_box()
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= page.viewport_size["height"]


def shot(page, name):
    """The moment as the table sees it, checked as every game's first screen is (test_layout): nothing scrolls
    sideways, no text under 12 px; then its screenshot (README's come from here)."""
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= page.viewport_size["width"], f"{name}: the page is {width} px wide"
    assert page.evaluate(SMALL_TEXT) == [], name
    screen(page, name)


def risk_attack_pending(table):
    table.new_game("risk", {"players": ["Anna", "Bob"]})
    for action in ({"type": "set_counts", "player": "Anna", "territories": 10, "cities": 2}, {"type": "reinforce"},
                   {"type": "attack", "attackers": 3, "defenders": 1, "defender": "Bob", "to": "Italy"}):
        state = table.act(action)
    return state


def test_risk_region_bonus_the_map_lacks_is_said_in_words(tablet, table):
    page = tablet
    table.new_game("risk", {"players": ["Anna", "Bob"]})
    open_page(page, table)
    page.locator(".rk-counts summary").click()
    regions = page.locator(".rk-counts .rk-regions").first
    regions.wait_for(timeout=5000)
    text = regions.inner_text()
    assert "+?" not in text
    assert "yellow (+3)" in text                      # a bonus the map data has is shown as it is
    assert re.search(r"green \(bonus unknown", text), text
    assert page.errors == []


def test_risk_dice_buttons_draw_without_an_emoji_font(tablet, table):
    page = tablet
    risk_attack_pending(table)
    open_page(page, table)
    roll = page.get_by_role("button", name=re.compile("Roll for me"))
    roll.wait_for(timeout=5000)
    labels = page.evaluate("() => [...document.querySelectorAll('#game button')].map((b) => b.textContent)")
    assert not [t for t in labels if ASTRAL.search(t)], labels
    # the die is still there to see, drawn by the page's own style
    width = page.evaluate("(b) => parseFloat(getComputedStyle(b, '::before').width) || 0", roll.element_handle())
    assert width > 0
    assert page.errors == []


def test_balance_duels_score_panel_marks_the_winner(tablet, table):
    page = tablet
    table.new_game("balance_duels", {"players": 2, "names": ["Dora", "Emil"], "tip_judge": "table"})
    table.roll(1)
    open_page(page, table)
    page.locator(".bd-move").first.click()
    # Dora's placement, then the table reports the tip: Emil wins with no pawn home, Dora has one on the arm
    page.get_by_role("button", name="The arm tipped").click(timeout=5000)
    wait_for_js(page, "document.querySelector('#scores') && document.querySelector('#scores').textContent.includes('won')", timeout=5000)
    row = page.locator("#scores tr", has_text="Emil")
    assert "won" in row.inner_text() and "won" not in page.locator("#scores tr", has_text="Dora").inner_text()
    assert page.errors == []


@pytest.mark.parametrize("size", ["tablet", "phone"])
def test_new_game_keeps_start_in_view_follows_the_count_and_starts_at_the_top(request, table, size):
    page = at(request, size)
    table.new_game("balance_duels", {"players": 2})
    open_page(page, table)
    page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
    wait_for_js(page, "window.scrollY > 100")
    page.click("#btn-new")
    start, cancel = page.locator("#setup-go"), page.locator("#setup").get_by_role("button", name="Cancel")
    games = api(table, "/api/games")
    for g in games:
        page.select_option("#setup-game", g["name"])
        for n in range(g["seats"]["min"], g["seats"]["max"] + 1):
            if page.locator("#setup-players").is_enabled():
                page.select_option("#setup-players", str(n))
            # however long the form (names, empires, house rules), Start and Cancel are in view, the dialog unscrolled
            assert on_screen(page, start) and on_screen(page, cancel), f"{g['name']}, {n} players: Start is off screen"
            # every box ticks from a finger-sized target: its label, 44 px each way at least
            small = page.evaluate("""() => [...document.querySelectorAll('#setup input[type=checkbox]')]
              .filter((c) => c.getClientRects().length).map((c) => [c.closest('label'), c])
              .map(([l, c]) => { const r = (l || c).getBoundingClientRect(); return [(l || c).textContent.trim().slice(0, 30), r.width, r.height]; })
              .filter(([, w, h]) => w < 44 || h < 44)""")
            assert small == [], f"{g['name']}: boxes under 44 px: {small}"
            greyed = page.evaluate(GREYED)
            assert all(x["why"] for x in greyed), greyed
    # Balance Duels: the pawns and the teams follow the count chosen
    page.select_option("#setup-game", "balance_duels")
    for n, pawns, teams in ((3, False, False), (4, False, True), (2, True, False)):
        page.select_option("#setup-players", str(n))
        assert page.locator("#setup-pawns-for").inner_text() == f"{n} players"
        assert page.locator("#setup-pawns").is_enabled() is pawns and page.locator("#setup-teams").is_enabled() is teams
    # a tap on the far end of a box's words ticks it
    beat = page.locator("#setup label", has_text="Beating is optional")
    beat.evaluate("(label) => label.scrollIntoView({ block: 'center' })")
    box = beat.bounding_box()
    page.mouse.click(box["x"] + box["width"] - 10, box["y"] + box["height"] / 2)
    assert beat.locator("input").is_checked()
    shot(page, "small-new-game")
    # started with the page scrolled down: the new game's first step is in view
    page.select_option("#setup-game", "risk")
    start.click()
    first = page.get_by_role("button", name=re.compile(r"^Enter .+'s counts$"))
    first.wait_for(timeout=5000)
    assert in_view(page, first), "the new game's first step is off screen"
    assert page.errors == []


def test_balance_of_power_gives_the_next_player_a_fresh_choice_and_counts_rounds(tablet, table):
    """1815 with its New game names (the empires' long titles): the header badge shows them whole."""
    page = tablet
    table.new_game("balance_of_power", {"players": 3})
    first = api(table, "/api/state")["view"]["turn"]["player"]
    open_page(page, table)
    page.locator(".bp-turn").wait_for(timeout=5000)
    cut = page.evaluate("() => { const s = document.querySelector('#turn > span:last-child'); return s.scrollWidth > s.clientWidth + 1; }")
    assert page.locator("#turn").is_visible() and not cut, "whose turn is cut short in the header"
    page.get_by_role("button", name="¤ Banker").click()
    page.get_by_role("button", name="duplicate").click()
    pressed = "() => [...document.querySelectorAll('.bp-toggle[aria-pressed=true]')].map((b) => b.textContent.replace('✔', '').trim())"
    assert page.evaluate(pressed) == ["¤ Banker", "duplicate"]
    page.get_by_role("button", name="End turn").click()
    wait_for_js(page, f"!document.querySelector('.bp-turn').textContent.includes({json.dumps(first)})", timeout=5000)
    # the next player starts from the page's own first choice, not from what the last one picked
    assert page.evaluate(pressed) == ["⚔ General", "move"]
    for _ in range(2):
        seq = api(table, "/api/state")["seq"]
        page.get_by_role("button", name="End turn").click()
        wait_for_js(page, f"document.getElementById('log').textContent.includes('#{seq + 1}')", timeout=5000)
    # once round the table: the header counts the round, not every player's turn
    assert page.locator(".bp-turn").inner_text() == f"Round 2 · {first}'s turn"
    shot(page, "small-1815-round")
    # the game over line draws without an emoji font
    target = api(table, "/api/state")["view"]["points_to_win"]
    table.act({"type": "set_counts", "player": first, "territories": target, "full_capitals": 0})
    page.locator(".bp-winner").wait_for(timeout=5000)
    assert page.locator(".bp-winner").inner_text() == f"★ {first} wins"
    assert not ASTRAL.search(page.locator("#game").inner_text())
    assert page.errors == []


@pytest.mark.parametrize("size", ["tablet", "phone"])
def test_global_powers_set_up_and_evaluation_are_everyones_turn_and_rounds_go_by_the_regions(request, table, size):
    page = at(request, size)
    table.new_game("global_powers", {"players": ["Ann", "Ben", "Cy"]})
    open_page(page, table)
    page.get_by_role("button", name="Reveal offers").wait_for(timeout=5000)
    turn, header = page.locator("#turn"), page.locator(".gp-turn")
    assert turn.is_visible() and turn.inner_text().endswith("Everyone's turn")
    assert page.locator("#turn .swatch").all_inner_texts() == ["A", "B", "C"]   # each player's mark
    assert header.inner_text().startswith("Set-up · ")
    if size == "phone":
        shot(page, "small-global-powers-set-up")
    # two regions held, the rest empty (skipped): the round ends once both have acted
    table.act({"type": "set_region", "region": "Europe", "politicians": {"Ann": 2}})
    table.act({"type": "set_region", "region": "Russia", "politicians": {"Ben": 2}})
    table.act({"type": "start", "first": "Ann"})
    wait_for_js(page, "document.querySelector('.gp-turn') && document.querySelector('.gp-turn').textContent"
                      ".startsWith(\"Round 1 · Ann's turn · 2 regions still to act\")", timeout=5000)
    for region in ("Europe", "Russia"):
        table.act({"type": "activate", "region": region})
        table.act({"type": "end_turn"})
    # the evaluation closes round 1, and the whole table does it
    wait_for_js(page, "document.querySelector('.gp-turn').textContent.startsWith('Round 1 · evaluation 1 · ')", timeout=5000)
    assert turn.inner_text().endswith("Everyone's turn"), turn.inner_text()
    table.act({"type": "evaluate", "un_order": ["Cy", "Ann", "Ben"]})
    # round 2, with the player who came next before the evaluation
    wait_for_js(page, "document.querySelector('.gp-turn').textContent.startsWith(\"Round 2 · Cy's turn · \")", timeout=5000)
    assert turn.inner_text().endswith("Cy's turn")
    shot(page, "small-global-powers-round")
    assert page.errors == []


@pytest.mark.parametrize("size", ["tablet", "phone"])
def test_risk_counts_are_entered_where_the_player_taps(request, table, size):
    page = at(request, size)
    table.new_game("risk", {"players": ["Anna", "Bob"]})
    open_page(page, table)
    enter = page.get_by_role("button", name="Enter Anna's counts")
    enter.wait_for(timeout=5000)
    assert page.locator(".rk-turn").inner_text() == "Round 1 · Anna's turn · raising troops"
    enter.scroll_into_view_if_needed()
    before = page.evaluate("window.scrollY")
    enter.click()
    territories = page.locator(".rk-counts-here [name=territories]")
    territories.wait_for(timeout=5000)
    assert abs(page.evaluate("window.scrollY") - before) < 100, "the page jumped away from the tap"
    assert in_view(page, territories)
    assert page.evaluate("document.activeElement.name") == "territories"
    shot(page, "small-risk-counts")
    page.keyboard.type("10")
    page.locator(".rk-counts-here [name=cities]").fill("2")
    save = page.locator(".rk-counts-here").get_by_role("button", name="Save Anna")
    save.scroll_into_view_if_needed()
    save.click()
    take = page.get_by_role("button", name=re.compile(r"Take \d+ troops"))
    take.wait_for(timeout=5000)
    take.scroll_into_view_if_needed()
    # a turn each, and the header counts one round, not two turns
    table.act({"type": "end_turn"})
    table.act({"type": "end_turn"})
    wait_for_js(page, "document.querySelector('.rk-turn').textContent === \"Round 2 · Anna's turn · raising troops\"",
                timeout=5000)
    page.evaluate("window.scrollTo(0, 0)")
    shot(page, "small-risk-round")
    assert page.errors == []


@pytest.mark.parametrize("size", ["tablet", "portrait", "phone"])
def test_imperial_end_the_maneuver_is_on_the_first_screen(request, table, size):
    page = at(request, size)
    table.new_game("imperial", {"players": ["Ann", "Ben", "Cy"]})
    table.act({"type": "rondel", "nation": "russia", "target": "maneuver1"})
    open_page(page, table)
    end = page.get_by_role("button", name="End the maneuver")
    end.wait_for(timeout=5000)
    assert in_view(page, end), f"End the maneuver is at y = {end.bounding_box()['y']:.0f}, below the fold"
    shot(page, "small-imperial-maneuver")
    # the factory of a city to occupy is marked by its kind, not by an emoji
    page.locator(".imp-maneuver button", has_text=re.compile("^CN$")).click()
    labels = page.locator(".imp-maneuver").get_by_role("button").all_inner_texts()
    assert "Beijing ▲" in labels and not [t for t in labels if ASTRAL.search(t)], labels
    assert page.errors == []


def test_imperial_the_nation_picked_for_a_bond_survives_a_reload(tablet, table):
    page = tablet
    table.new_game("imperial", {"players": ["Ann", "Ben", "Cy"]})
    for nation in ("russia", "china", "india", "brazil", "united_states", "europe"):
        table.act({"type": "rondel", "nation": nation, "target": "taxation"})
    table.act({"type": "rondel", "nation": "russia", "target": "investor"})
    open_page(page, table)
    china = page.locator(".imp-invest").get_by_role("button", name="CN China")
    china.wait_for(timeout=5000)
    # the pick is kept as the tap lands, in the same task: a reload right after the tap finds it (kept a moment
    # later, on a timer, it was lost now and then when the suite ran across the cores)
    kept = page.evaluate("""() => {
      const tab = [...document.querySelectorAll('.imp-invest button')].find((b) => b.textContent.includes('China'));
      tab.click();
      return (window.companionApi.kept('imperial-picks') || {}).investNation;
    }""")
    assert kept == "china"
    assert china.get_attribute("aria-pressed") == "true"
    page.reload()
    page.wait_for_selector("#conn.ok", timeout=10000)
    china = page.locator(".imp-invest").get_by_role("button", name="CN China")
    china.wait_for(timeout=5000)
    assert china.get_attribute("aria-pressed") == "true"
    assert page.locator(".imp-invest").get_by_role("button", name=re.compile(r"^Buy \d+")).count() > 0
    assert page.errors == []


def balance_duels_tip_in_a_three_player_game(table):
    """Ann, Bob and Cleo load the arm until a move tips it, and that move is made: Ann, Bob or Cleo is out."""
    table.new_game("balance_duels", {"players": 3, "names": ["Ann", "Bob", "Cleo"]})
    for n in range(60):
        view = table.roll(1 + n % 2)["view"]
        tipping = [m for m in view["moves"] if m["verdict"] == "tips"]
        if tipping:
            return table.act({"type": "move", "move": tipping[0]["move"]})
        # the move that loads the arm most, so that one soon tips it
        heaviest = max((m for m in view["moves"] if m["verdict"]), key=lambda m: abs(m["torque_after"]))
        table.act({"type": "move", "move": heaviest["move"]})
    raise AssertionError("no move came to tip the arm")


@pytest.mark.parametrize("size", ["tablet", "phone"])
def test_balance_duels_tip_banner_says_clear_the_arm_and_goes_with_the_next_round(request, table, size):
    page = at(request, size)
    state = balance_duels_tip_in_a_three_player_game(table)
    view = state["view"]
    tipper = next(p["name"] for p in view["players"] if p["seat"] == view["tipped_by"])
    first = next(p["name"] for p in view["players"] if p["seat"] == view["to_move"])
    open_page(page, table)
    alarm = page.locator("#alarm")
    alarm.wait_for(timeout=5000)
    assert f"{tipper} tipped the arm and is out" in alarm.inner_text()
    assert "Take every pawn off the arm" in alarm.inner_text() and f"{first} first" in alarm.inner_text()
    assert page.locator("#message").inner_text() == f"Clear the arm, then {first} rolls to open round 2"
    shot(page, "small-tip-clear-the-arm")
    # (the banner's going moves the whole page up: the row's place is taken in its card)
    status = """() => { const r = document.querySelector('.bd-status').getBoundingClientRect();
      const card = document.querySelector('.bd-play').getBoundingClientRect(); return [r.x, r.y - card.y, r.width, r.height]; }"""
    before = page.evaluate(status)
    # the next round begins with its first roll: the banner goes, and the status row keeps its place and size
    page.get_by_role("button", name="we rolled 6").click()
    page.locator(".bd-move").first.wait_for(timeout=5000)
    wait_for_js(page, "document.getElementById('alarm').hidden", timeout=5000)
    assert page.evaluate(status) == before
    assert page.errors == []


@pytest.mark.parametrize("size", ["tablet", "phone"])
def test_balance_duels_sensing_box_comes_and_goes_without_moving_the_game(request, table, size):
    """The sensors' "Which move was it?" comes with a placement and goes with the answer: nothing under it moves."""
    page = at(request, size)
    table.new_game("balance_duels", {"players": 2})
    table.roll(3)
    snap = api(table, "/api/state")
    live = {**(snap.get("live") or {}), "question": None, "mismatch": None, "sensing_notice": None,
            "candidates": ["black places L on E3", "black advances L E1 → E4"]}
    body = (f"retry: 60000\n\nid: {snap['seq']}\nevent: state\ndata: {json.dumps({'event': None, 'state': snap})}\n\n"
            + f"event: live\ndata: {json.dumps(live)}\n\n")
    page.route("**/api/stream*", stream_of(body))
    try:
        page.goto(table.url + "/")
        sheet = page.locator("#sensing")
        sheet.get_by_role("button", name="black places L on E3").wait_for(timeout=10000)
        for answer in sheet.get_by_role("button").all():
            assert on_screen(page, answer), "an answer is off screen"
        shot(page, "small-sensing-sheet")
        # where the game's controls are with the box shown and with it gone, read in one go (the ended stream's
        # reconnects change the header now and then: nothing may come between the two readings)
        shown, gone = page.evaluate("""() => {
          const places = () => ['game', 'btn-undo'].map((id) => document.getElementById(id).getBoundingClientRect().y)
            .concat([...document.querySelectorAll('.bd-move, #game button')].map((b) => b.getBoundingClientRect().y));
          const box = document.getElementById('sensing');
          const shown = places();
          box.hidden = true;
          const gone = places();
          box.hidden = false;
          return [shown, gone]; }""")
        assert shown == gone, "the sensing box moved the game"
    finally:
        page.unroute("**/api/stream*")
    assert page.errors == []


def test_the_page_explains_itself_on_a_portrait_tablet(portrait, table):
    """Items 1 and 4 of the issue at 768×1024: a greyed control says why, a refusal shows beside the control tapped,
    the toolbar stays put through a roll (the tablet and phone sizes are in test_explains)."""
    page = portrait
    imperial_factory_short(table)
    open_page(page, table)
    build = page.get_by_role("button", name="Build armament facility in Novosibirsk (5 M)")
    build.wait_for(timeout=5000)
    greyed = page.evaluate(GREYED)
    assert greyed and all(g["why"] for g in greyed), greyed
    assert in_view(page, build), "the greyed build is off the first screen"
    give = page.locator(".imp-controls").get_by_role("button", name="Give to Russia")
    page.locator(".imp-gift input").fill("99")
    give.click()
    refusal_beside(page, give, "Ben has 9 million")
    risk_attack_pending(table)
    enter = page.get_by_role("button", name="Enter roll")
    enter.wait_for(timeout=5000)
    enter.scroll_into_view_if_needed()
    enter.click()
    refusal_beside(page, enter, "Attacker's dice: roll 1 to 3 dice, not 0")
    table.new_game("balance_duels", {"players": 2, "names": ["Anna", "Emil"]})
    page.locator("#bd-roll").wait_for(timeout=5000)
    boxes = "() => ['btn-undo', 'btn-new', 'btn-cal'].map((id) => JSON.stringify(document.getElementById(id).getBoundingClientRect()))"
    before = page.evaluate(boxes)
    page.click("#bd-roll")
    page.locator(".bd-move").first.wait_for(timeout=5000)
    assert page.evaluate(boxes) == before
    assert page.errors == []


@pytest.mark.parametrize("width", [390, 360])
def test_the_toolbar_on_a_phone_keeps_each_label_on_one_line_and_the_page_its_width(browser, table, width):
    """Four buttons and the connection badge do not fit a phone's row: the buttons used to break their words onto
    two lines, and on a 360 px phone the row still ran 19 px past the screen."""
    table.new_game("balance_duels", {"players": 2})
    context, page = unlocked(browser, table, {"width": width, "height": 780})
    try:
        open_page(page, table)
        heights = page.evaluate("""() => ['btn-undo', 'btn-new', 'btn-history', 'btn-cal'].map((id) =>
          [id, Math.round(document.getElementById(id).getBoundingClientRect().height)])""")
        assert all(h <= 45 for _, h in heights), f"a label broke onto two lines: {heights}"
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        right = page.evaluate("Math.max(...[...document.querySelectorAll('.top-actions > *')].map((e) => e.getBoundingClientRect().right))")
        assert right <= width, f"the toolbar reaches {right:.0f} px on a {width} px screen"
    finally:
        context.close()
