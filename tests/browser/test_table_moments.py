"""The moments a table notices: the tip, a double tap, a lost connection, New game, joining from a tablet."""

import json
import signal
import urllib.request

from tests.browser.test_page import PIN, Table, browser, open_page, table  # noqa: F401 (its fixtures; skips without chromium)
from tests.browser.waiting import wait_for_js


def unlocked(browser, table, **kwargs):
    """A page whose browser has entered the table's PIN (the session cookie is the context's)."""
    context = browser.new_context(**kwargs)
    answer = context.request.post(table.url + "/api/login", data={"pin": PIN})
    assert answer.ok, answer.text()
    return context, context.new_page()

# the contrast of the alarm's text on its background, as WCAG computes it, from the computed colours
CONTRAST = """() => {
  const cs = getComputedStyle(document.getElementById('alarm'));
  const lum = (c) => { const [r, g, b] = c.match(/[\\d.]+/g).slice(0, 3).map((x) => { const v = x / 255;
    return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; }); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  const a = lum(cs.color), b = lum(cs.backgroundColor);
  return { text: document.getElementById('alarm').innerText, ratio: (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05) };
}"""


def tip(table):
    """Seat 1 loads the right-hand end until its next placement tips the arm, and makes it."""
    table.new_game("balance_duels", {"players": 2})
    for roll in (1, 6, 2, 6):
        table.play_first(roll, kind="place")
    view = table.roll(1)["view"]
    return table.act({"type": "move", "move": next(m["move"] for m in view["moves"] if m["move"]["kind"] == "place")})


def test_the_tip_alarm_reads_in_every_frame_and_ends_with_the_game(browser, table):
    tip(table)
    context = browser.new_context(viewport={"width": 1024, "height": 768})
    page = context.new_page()
    try:
        open_page(page, table)
        page.wait_for_selector("#alarm:not([hidden])", timeout=3000)
        frames = []
        for _ in range(40):          # a second and a half of the flashing, sampled
            frames.append(page.evaluate(CONTRAST))
            page.wait_for_timeout(37)
        assert all("tipped the arm" in f["text"] for f in frames)
        assert min(f["ratio"] for f in frames) >= 4.5, frames
        assert len({round(f["ratio"], 1) for f in frames}) >= 2, "the alarm does not flash"
        # the end of the game is said as such, naming who tipped it
        over = page.locator(".over-card")
        assert over.is_visible() and "tipped the arm" in over.inner_text()
        # the next game starts without it, whichever game it is
        table.new_game("risk", {"players": ["Ann", "Bob"]})
        page.wait_for_selector("#alarm", state="hidden", timeout=3000)
        assert page.locator(".over-card").count() == 0
    finally:
        context.close()


def test_reduced_motion_keeps_the_alarm_still(browser, table):
    tip(table)
    context = browser.new_context(viewport={"width": 390, "height": 844}, reduced_motion="reduce")
    page = context.new_page()
    try:
        open_page(page, table)
        page.wait_for_selector("#alarm:not([hidden])", timeout=3000)
        frames = set()
        for _ in range(12):
            frames.add(round(page.evaluate(CONTRAST)["ratio"], 2))
            page.wait_for_timeout(90)
        assert len(frames) == 1 and min(frames) >= 4.5
        assert page.locator("#alarm").bounding_box()["y"] < 844
    finally:
        context.close()


def test_a_double_tap_does_one_thing(browser, table):
    table.new_game("balance_duels", {"players": 2})
    context, page = unlocked(browser, table, viewport={"width": 1024, "height": 768})
    try:
        open_page(page, table)
        seq = json.loads(urllib.request.urlopen(table.url + "/api/state").read())["seq"]
        page.wait_for_selector("#bd-roll")
        # two taps within a few milliseconds: the second finds the button busy (or the request already sent)
        page.evaluate("() => { const b = document.getElementById('bd-roll'); b.click(); b.click(); }")
        page.wait_for_selector(".bd-die:not(.empty)", timeout=3000)
        page.wait_for_timeout(300)
        after = json.loads(urllib.request.urlopen(table.url + "/api/state").read())["seq"]
        assert after == seq + 1
    finally:
        context.close()


def test_an_error_shows_beside_the_button_tapped_and_clears_on_success(browser, table):
    table.new_game("balance_duels", {"players": 2})
    context, page = unlocked(browser, table, viewport={"width": 1024, "height": 768})
    try:
        open_page(page, table)
        # the daemon refuses the first roll (as when another tablet got there first); the page cannot know beforehand
        refused = {"n": 0}

        def once(route):
            if refused["n"]:
                return route.continue_()
            refused["n"] += 1
            route.fulfill(status=409, content_type="application/json",
                          body=json.dumps({"error": "another tablet rolled first"}))
        page.route("**/api/roll", once)
        page.click("#bd-roll")
        note = page.locator(".tap-error")
        note.wait_for(timeout=3000)
        assert "another tablet rolled first" in note.inner_text()
        box, button = note.bounding_box(), page.locator("#bd-roll").bounding_box()
        assert 0 <= box["y"] - button["y"] < 150, f"the error is not beside the button tapped: {box} {button}"
        assert page.locator("#banner").is_hidden()                 # said once, where the finger is
        page.click("#bd-roll")
        page.wait_for_selector(".bd-die:not(.empty)", timeout=3000)
        assert page.locator(".tap-error").count() == 0
    finally:
        context.close()


def test_a_lost_connection_is_a_banner_devices_unknown_and_changes_held(browser, tmp_path):
    own = Table(tmp_path)
    context = browser.new_context(viewport={"width": 1024, "height": 768})
    page = context.new_page()
    try:
        open_page(page, own)
        own.proc.send_signal(signal.SIGSTOP)
        page.wait_for_selector("#offline:not([hidden])", timeout=10000)
        assert "No connection" in page.locator("#offline").inner_text()
        assert page.locator("#offline").bounding_box()["y"] < 200          # in the sticky header, in view
        assert "unknown" in page.locator("#devices").inner_text()
        assert "ok" not in page.locator("#devices").inner_text()
        assert page.locator("#bd-roll").evaluate("b => getComputedStyle(b).pointerEvents") == "none"
        own.proc.send_signal(signal.SIGCONT)
        page.wait_for_selector("#offline", state="hidden", timeout=15000)
    finally:
        own.proc.send_signal(signal.SIGCONT)
        context.close()
        own.stop()


def test_new_game_offers_what_each_game_takes(browser, table):
    table.new_game("balance_duels", {"players": 2})
    context, page = unlocked(browser, table, viewport={"width": 390, "height": 844})
    try:
        open_page(page, table)
        page.click("#btn-new")
        page.wait_for_selector("#setup[open]")
        assert page.locator("#setup-json").count() == 0                 # no raw options box for players
        page.select_option("#setup-game", "risk")
        assert page.locator("#setup-players option").all_inner_texts() == ["2 (usual)"]
        page.select_option("#setup-game", "balance_of_power")
        page.select_option("#setup-players", "3")
        assert page.locator(".seat").count() == 3
        names = page.locator(".seat-name")
        names.nth(0).fill("Ann")
        names.nth(1).fill("Bob")
        names.nth(2).fill("Cy")
        page.locator(".seat-choice").nth(2).select_option(index=4)
        # one colour per player, chosen here and used everywhere; two alike are refused before anything is sent
        colours = page.locator(".seat-colour")
        colours.nth(1).select_option("blue")
        page.click("#setup-go")
        assert "same colour" in page.locator("#setup-error").inner_text()
        colours.nth(1).select_option("black")
        page.click("#setup-go")
        page.wait_for_selector("#setup", state="hidden", timeout=3000)
        state = json.loads(urllib.request.urlopen(table.url + "/api/state").read())
        assert state["game"] == "balance_of_power"
        players = state["view"]["players"]
        assert [p["name"] for p in players] == ["Ann", "Bob", "Cy"]
        assert [p["colour"] for p in players] == ["blue", "black", "green"]
        page.wait_for_selector("#turn:not([hidden])")
        assert page.locator("#turn").inner_text().strip().endswith("Ann's turn")
        assert "rgb(47, 125, 225)" in page.locator("#turn").evaluate("t => getComputedStyle(t).borderColor")
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
    finally:
        context.close()


def test_joining_names_this_machine_only_when_it_listens_on_loopback(browser, table):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    try:
        open_page(page, table)
        page.wait_for_selector("#join-card:not([hidden])")
        assert "--host 0.0.0.0" in page.locator("#join-card").inner_text()
    finally:
        context.close()


def test_new_game_offers_each_variant_with_what_it_does(browser, table):
    context, page = unlocked(browser, table, viewport={"width": 1024, "height": 768})
    try:
        open_page(page, table)
        page.click("#btn-new")
        page.select_option("#setup-game", "global_powers")
        extended = page.locator("label.option", has_text="Extended game")
        assert "UN troops" in extended.inner_text()                # a line on what it does
        extended.locator("input").check()
        page.locator("label.option", has_text="A sanctioned region gives").locator("select").select_option(label="half of each line, each rounded down")
        page.click("#setup-go")
        page.wait_for_selector("#setup", state="hidden", timeout=3000)
        state = json.loads(urllib.request.urlopen(table.url + "/api/state").read())
        assert state["game"] == "global_powers"
        assert state["options"]["extended"] is True and state["options"]["sanction_halving"] == "each_line"
        page.click("#btn-new")
        page.select_option("#setup-game", "risk")
        page.locator("label.option", has_text="Set-up").locator("select").select_option(label="Basic Training 3")
        page.click("#setup-go")
        page.wait_for_selector("#setup", state="hidden", timeout=3000)
        state = json.loads(urllib.request.urlopen(table.url + "/api/state").read())
        assert state["game"] == "risk" and state["view"]["setup"] == 3
    finally:
        context.close()


def test_command_post_starts_from_new_game_with_its_drawn_missions(browser, table):
    context, page = unlocked(browser, table, viewport={"width": 390, "height": 844})
    try:
        open_page(page, table)
        page.click("#btn-new")
        page.select_option("#setup-game", "risk")
        missions = page.locator("fieldset.option", has_text="missions drawn")
        assert missions.is_hidden()                                   # Basic Training brings its own
        page.locator("label.option", has_text="Set-up").locator("select").select_option(label="Command Post")
        assert missions.is_visible()
        boxes = missions.locator("input[type=checkbox]")
        for k in range(7):
            boxes.nth(k).check()
        page.click("#setup-go")
        assert "tick 8, not 7" in page.locator("#setup-error").inner_text()
        boxes.nth(7).check()
        page.click("#setup-go")
        page.wait_for_selector("#setup", state="hidden", timeout=3000)
        state = json.loads(urllib.request.urlopen(table.url + "/api/state").read())
        assert state["game"] == "risk" and state["view"]["variant"] == "command_post"
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
    finally:
        context.close()


# each game's own colours, painted property by property through CSSOM (issue 34: no style text from the state)
PAINTED = "els => els.map((e) => [getComputedStyle(e).backgroundColor, e.style.width, e.style.left])"


def shown(page, state):
    """Wait until the page shows this state: the game before (a Risk game too, say) has the same elements, and a
    reading taken while the new one replaces them finds them detached, with no style at all."""
    wait_for_js(page, f"document.getElementById('log').textContent.includes('#{state['seq']}')", timeout=5000)


def test_each_view_paints_the_players_colours_one_property_at_a_time(browser, table):
    context = browser.new_context(viewport={"width": 1024, "height": 768})
    page = context.new_page()
    errors = []
    page.on("console", lambda m: errors.append(m.text + " @ " + str(m.location)) if m.type == "error" else None)
    try:
        open_page(page, table)
        shown(page, table.new_game("risk", {"players": ["Ann", "Bob"], "colours": {"Ann": "green", "Bob": "white"}}))
        page.wait_for_selector(".rk-swatch", timeout=3000)
        assert [c for c, _, _ in page.locator(".rk-swatch").evaluate_all(PAINTED)][:2] == ["rgb(0, 128, 0)", "rgb(255, 255, 255)"]
        # the header's swatch and the turn's border: the page's own shade of the player's colour
        assert page.locator("#turn .swatch").evaluate("e => getComputedStyle(e).backgroundColor") == "rgb(31, 157, 85)"
        assert "rgb(31, 157, 85)" in page.locator("#turn").evaluate("t => getComputedStyle(t).borderColor")

        assert not errors, errors
        shown(page, table.new_game("balance_of_power", {"players": [{"name": "Ann", "empire": "france", "colour": "yellow"},
                                                                    {"name": "Bob", "empire": "prussia", "colour": "black"}]}))
        page.wait_for_selector(".bp-swatch", timeout=3000)
        assert [c for c, _, _ in page.locator(".bp-swatch").evaluate_all(PAINTED)] == ["rgb(255, 255, 0)", "rgb(0, 0, 0)"]
        fills = page.locator(".bar-fill").evaluate_all(PAINTED)
        assert [c for c, _, _ in fills] == ["rgb(255, 255, 0)", "rgb(0, 0, 0)"] and all(w.endswith("%") for _, w, _ in fills)
        assert all(left.endswith("%") for _, _, left in page.locator(".bar-goal").evaluate_all(PAINTED))

        assert not errors, errors
        shown(page, table.new_game("global_powers", {"players": ["Ann", "Bob"]}))
        page.wait_for_selector(".gp-swatch", timeout=3000)
        assert all(w.endswith("%") for _, w, _ in page.locator(".bar-fill").evaluate_all(PAINTED))
        assert all(left.endswith("%") for _, _, left in page.locator(".bar-goal").evaluate_all(PAINTED))

        assert not errors, errors
        shown(page, table.new_game("imperial", {"players": ["Ann", "Bob"]}))
        page.wait_for_selector(".imp-chip", timeout=3000)
        chips = {c for c, _, _ in page.locator(".imp-table .imp-chip").evaluate_all(PAINTED)}
        assert len(chips) == 6 and "rgba(0, 0, 0, 0)" not in chips
        assert not errors, errors
    finally:
        context.close()
