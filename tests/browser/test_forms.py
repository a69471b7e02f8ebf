"""Every field the Global Powers and Balance of Power engines ask for, reached from the page (issue 17, item 9).

Each test sets the table up through the API (as the button panel or another tablet would), then fills the new form in
the browser and checks the game changed as the form said. Errors that belong to an older state must not outlive it."""

import json
import urllib.request

import pytest

from tests.browser.test_page import PIN, browser, open_page, table  # noqa: F401 (its fixtures; skips without chromium)
from tests.browser.test_layout import SMALL_TEXT
from tests.browser.waiting import wait_for_js

Axe = pytest.importorskip("axe_playwright_python.sync_playwright").Axe

TABLET = {"width": 1024, "height": 768}
PHONE = {"width": 390, "height": 844}


def unlocked(browser, table, viewport):
    """A page whose browser context has entered the table's PIN."""
    context = browser.new_context(viewport=viewport)
    answer = context.request.post(table.url + "/api/login", data={"pin": PIN})
    assert answer.ok, answer.text()
    page = context.new_page()
    open_page(page, table)
    return context, page


def current(table):
    with urllib.request.urlopen(table.url + "/api/state", timeout=10) as r:
        return json.loads(r.read())


def wait_seq(page, table, seq):
    """Until the daemon has taken the action (the page's request has come back)."""
    for _ in range(50):
        state = current(table)
        if state["seq"] > seq:
            return state
        page.wait_for_timeout(100)
    shown = page.locator(".tap-error, #banner").all_inner_texts()
    raise AssertionError(f"the page's action never reached the daemon; the page says {shown}")


def tidy(page, width):
    """What every form must keep to: nothing sideways, no tiny text, nothing axe calls serious."""
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert page.evaluate(SMALL_TEXT) == []
    bad = [f"{v['id']}: {[n['target'] for n in v['nodes'][:3]]}" for v in Axe().run(page).response["violations"]
           if v["impact"] in ("serious", "critical")]
    assert bad == []


# ---------------------------------------------------------------- Global Powers


def gp_game(table, regions, parties=("Ann", "Bob", "Cy"), **party_counts):
    """A started game: {region: {party: n, chip: n}}, then {party: {un: n, ...}} corrections."""
    table.new_game("global_powers", {"players": list(parties)})
    for name, spec in regions.items():
        politicians = {k: v for k, v in spec.items() if k in parties}
        chips = {k: v for k, v in spec.items() if k not in parties}
        table.act({"type": "set_region", "region": name, "politicians": politicians, **chips})
    for who, counts in party_counts.items():
        table.act({"type": "set_party", "party": who, **counts})
    return table.act({"type": "start", "first": parties[0]})


def gp_to_evaluation(table, regions):
    for name in regions:
        table.act({"type": "activate", "region": name})
        state = table.act({"type": "end_turn"})
    assert state["view"]["phase"] == "evaluation"
    return state


def test_a_coalition_shares_its_war_gains_on_the_page(browser, table):
    gp_game(table, {"Europe": {"Ann": 2, "Bob": 2, "military": 5}, "Russia": {"Cy": 2}})
    table.act({"type": "activate", "region": "Europe"})
    context, page = unlocked(browser, table, TABLET)
    try:
        page.wait_for_selector("select[name=target]")
        page.select_option("select[name=target]", "Russia")
        page.fill("input[name=attacker_roll]", "3")
        page.fill("input[name=defender_roll]", "1")
        seq = current(table)["seq"]
        page.click("text=Wage war")
        # 8 against 1: Europe's shared government places up to 2 (all Cy had there); nothing is sent before it says how
        gains = page.locator(".gp-gains")
        gains.wait_for(timeout=3000)
        assert "up to 2 new politicians in Russia" in gains.inner_text()
        assert current(table)["seq"] == seq
        assert page.input_value("input[name=added_Ann]") == "1" and page.input_value("input[name=added_Bob]") == "1"
        tidy(page, TABLET["width"])
        page.fill("input[name=added_Ann]", "2")
        page.fill("input[name=added_Bob]", "1")
        page.click("text=Place them and record the war")
        page.wait_for_selector(".gp-gains + .tap-error, .gp-gains .tap-error", timeout=3000)
        assert "At most 2" in page.locator(".tap-error").inner_text()
        assert current(table)["seq"] == seq
        page.fill("input[name=added_Bob]", "0")
        page.click("text=Place them and record the war")
        state = wait_seq(page, table, seq)
        russia = next(r for r in state["view"]["regions"] if r["name"] == "Russia")
        assert russia["politicians"] == {"Ann": 2}
        assert state["view"]["last_war"]["added"] == {"Ann": 2}
        page.wait_for_selector(".gp-gains", state="detached", timeout=3000)
    finally:
        context.close()


def test_a_war_won_by_one_party_needs_no_split(browser, table):
    gp_game(table, {"Europe": {"Ann": 3, "Bob": 1, "military": 5}, "Russia": {"Cy": 2}})
    table.act({"type": "activate", "region": "Europe"})
    context, page = unlocked(browser, table, TABLET)
    try:
        page.wait_for_selector("select[name=target]")
        page.select_option("select[name=target]", "Russia")
        page.fill("input[name=attacker_roll]", "3")
        page.fill("input[name=defender_roll]", "1")
        seq = current(table)["seq"]
        page.click("text=Wage war")
        state = wait_seq(page, table, seq)
        assert state["view"]["last_war"]["added"] == {"Ann": 2}
        assert page.locator(".gp-gains").count() == 0
    finally:
        context.close()


def test_a_tie_for_the_win_is_settled_on_the_page(browser, table):
    regions = {"Europe": {"Ann": 1}, "Russia": {"Bob": 1}}
    gp_game(table, regions, parties=("Ann", "Bob"), Ann={"un": 18}, Bob={"un": 18})
    gp_to_evaluation(table, regions)
    context, page = unlocked(browser, table, PHONE)
    try:
        pick = page.locator("select[name=winner]")
        pick.wait_for(timeout=3000)
        assert "level on 40 VP" in page.locator(".gp-evaluation").inner_text()
        assert page.locator(".gp-evaluation").get_by_text("UN step").count() == 0    # the count ends the game
        tidy(page, PHONE["width"])
        pick.select_option("Bob")
        seq = current(table)["seq"]
        page.get_by_role("button", name="Run the evaluation").click()
        state = wait_seq(page, table, seq)
        assert state["view"]["over"] and state["view"]["winner"] == "Bob"
    finally:
        context.close()


def test_a_party_short_at_home_sends_from_its_regions(browser, table):
    regions = {"Europe": {"Ann": 3}, "Russia": {"Bob": 3}}
    # Bob has everybody in Russia; both parties are level on 4 VP, so the dice order them
    gp_game(table, regions, parties=("Ann", "Bob"), Bob={"removed": 17})
    gp_to_evaluation(table, regions)
    context, page = unlocked(browser, table, PHONE)
    try:
        page.wait_for_selector("select[name=un_order_0]", timeout=3000)
        assert page.locator("select[name=winner]").count() == 0
        page.select_option("select[name=un_order_0]", "Bob")          # Bob rolled lower: 1 to the UN, 1 out
        page.wait_for_selector("details.gp-sources[open] >> text=Bob: say which regions", timeout=3000)
        seq = current(table)["seq"]
        page.get_by_role("button", name="Run the evaluation").click()
        page.wait_for_selector(".gp-evaluation .tap-error", timeout=3000)
        assert "Bob has 0 at home" in page.locator(".tap-error").inner_text()
        assert current(table)["seq"] == seq
        page.fill("input[name='u|Bob|Russia']", "1")
        page.fill("input[name='x|Bob|Russia']", "1")
        tidy(page, PHONE["width"])
        page.get_by_role("button", name="Run the evaluation").click()
        state = wait_seq(page, table, seq)
        evaluation = state["view"]["last_evaluation"]
        assert evaluation["un_sent"] == {"Bob": 1, "Ann": 2} and evaluation["removed"] == {"Bob": 1, "Ann": 0}
        bob = next(p for p in state["view"]["players"] if p["name"] == "Bob")
        assert bob["un"] == 1 and bob["removed"] == 18 and bob["in_regions"] == 1
    finally:
        context.close()


def test_a_party_is_corrected_on_the_page(browser, table):
    gp_game(table, {"Europe": {"Ann": 2}})
    context, page = unlocked(browser, table, PHONE)
    try:
        page.click("text=Correct a party")
        page.select_option("details >> select[name=party]", "Bob")
        assert page.input_value("input[name=party_hand]") == "5"
        page.fill("input[name=party_mauritius]", "2")
        page.fill("input[name=party_hand]", "4")
        page.fill("input[name=party_deck]", "12")
        tidy(page, PHONE["width"])
        seq = current(table)["seq"]
        page.click("text=Save Bob")
        state = wait_seq(page, table, seq)
        bob = next(p for p in state["view"]["players"] if p["name"] == "Bob")
        assert (bob["mauritius"], bob["hand"], bob["deck"], bob["base"]) == (2, 4, 12, 18)
    finally:
        context.close()


# ---------------------------------------------------------------- Balance of Power (1815)

CAPITALS = {"france": "Paris", "prussia": "Berlin", "austria": "Vienna", "russia": "St Petersburg", "ottoman": "Constantinople"}


def bop_board(table, play=True, **options):
    """A board-tracked game of Brian (Great Britain) and Fran (France), set up when `play`."""
    state = table.new_game("balance_of_power", {
        "players": [{"name": "Brian", "empire": "great_britain"}, {"name": "Fran", "empire": "france"}],
        "tracking": "board", "capitals": CAPITALS, **options})
    if play:
        for pawn, where in (("general", "Cornwall"), ("king", "Midlands"), ("banker", "Midlands"),
                            ("general", "Normandy"), ("king", "Normandy"), ("banker", "Normandy")):
            state = table.act({"type": "place", "pawn": pawn, "territory": where})
        assert state["view"]["phase"] == "play"
    return state


def test_a_neutral_empire_is_declared_achieved_on_the_page(browser, table):
    bop_board(table, tougher_neutral=True)
    context, page = unlocked(browser, table, PHONE)
    try:
        panel = page.locator("section.bp-panel", has=page.locator("h2", has_text="Neutral empires"))
        panel.wait_for(timeout=3000)
        assert page.locator("select[name=neutral_player]").input_value() == "Brian"     # whose turn it is
        assert "Kingdom of Prussia" in panel.inner_text() and "Kingdom of France" not in panel.inner_text()
        tidy(page, PHONE["width"])
        seq = current(table)["seq"]
        panel.locator("li", has_text="Kingdom of Prussia").get_by_role("button", name="Brian holds all of it alone").click()
        state = wait_seq(page, table, seq)
        brian = state["view"]["players"][0]
        assert brian["declared"] == ["prussia"]
        assert next(n for n in brian["neutral"] if n["empire"] == "prussia")["achieved"]
        page.wait_for_selector("li:has-text('Kingdom of Prussia') >> text=achieved: a full Berlin", timeout=3000)
        # the other player's, and taking it back
        page.select_option("select[name=neutral_player]", "Fran")
        assert panel.get_by_role("button", name="Fran holds all of it alone").count() == 4
        page.select_option("select[name=neutral_player]", "Brian")
        panel.locator("li", has_text="Kingdom of Prussia").get_by_role("button", name="Not held after all").click()
        state = wait_seq(page, table, seq + 1)
        assert state["view"]["players"][0]["declared"] == []
    finally:
        context.close()


def test_no_neutral_empires_to_declare_without_the_variant(browser, table):
    bop_board(table)
    context, page = unlocked(browser, table, TABLET)
    try:
        page.wait_for_selector(".bp-root", timeout=3000)
        assert page.get_by_role("heading", name="Neutral empires").count() == 0
    finally:
        context.close()


def test_a_territory_the_map_lacks_is_added_on_the_page(browser, table):
    bop_board(table, play=False)
    context, page = unlocked(browser, table, PHONE)
    try:
        page.click("text=Add a territory, or how empires are judged")
        page.fill("input[name=new_territory]", " the  normandy")
        seq = current(table)["seq"]
        page.get_by_role("button", name="Add it").click()
        page.wait_for_selector("details.bp-panel .tap-error", timeout=3000)
        assert "Normandy is already on the map" in page.locator(".tap-error").inner_text()
        assert current(table)["seq"] == seq
        page.fill("input[name=new_territory]", "Brittany")
        page.select_option("select[name=new_territory_empire]", "france")
        tidy(page, PHONE["width"])
        page.get_by_role("button", name="Add it").click()
        state = wait_seq(page, table, seq)
        assert state["view"]["added_territories"] == {"Brittany": "france"}
        assert "Brittany" in state["view"]["known_territories"]
        # the panel stays open on the new state, and says what was added
        page.wait_for_selector("text=Added at this table: Brittany (Kingdom of France)", timeout=3000)
        # and the set-up can now place a pawn there
        page.fill("input[name=territory]", "Brittany")
        page.get_by_role("button", name="Place \u00A4 Banker").click()
        state = wait_seq(page, table, seq + 1)
        assert any(t["territory"] == "Brittany" for t in state["view"]["board"])
    finally:
        context.close()


def test_the_reading_of_achieving_empire_is_chosen_on_the_page(browser, table):
    bop_board(table)
    table.act({"type": "declare_empire", "player": "Brian", "empire": "great_britain", "achieved": True})
    context, page = unlocked(browser, table, TABLET)
    try:
        page.wait_for_selector("text=Empire achieved: a fourth action", timeout=3000)
        page.click("text=Add a territory, or how empires are judged")
        seq = current(table)["seq"]
        page.get_by_role("button", name="Read it as: one of the player's own pawns in every territory of it").click()
        state = wait_seq(page, table, seq)
        assert state["view"]["empire_rule"] == "held"
        # London and Cornwall are held, but Malta is empty: no fourth action, and the page says where
        page.wait_for_selector("text=Empire not achieved: no pawn of Brian's in Malta", timeout=3000)
        assert page.get_by_role("button", name="We hold the whole empire").count() == 0
        tidy(page, TABLET["width"])
    finally:
        context.close()


def test_an_error_goes_when_another_tablet_changes_the_game(browser, table):
    gp_game(table, {"Japan": {"Ann": 1}, "Europe": {"Bob": 1}})
    table.act({"type": "activate", "region": "Japan"})
    context, page = unlocked(browser, table, TABLET)
    try:
        mine = page.get_by_role("button", name="1 raw \u2192 3 economy (roll)")
        mine.click()
        error = page.locator(".tap-error")
        error.wait_for(timeout=3000)
        assert "Japan has no raw chip" in error.inner_text()
        # beside the button tapped, not at the top of the view
        assert 0 <= error.bounding_box()["y"] - mine.bounding_box()["y"] < 150
        # a redraw of the same state keeps it
        page.click("text=Correct a party")
        page.select_option("details >> select[name=party]", "Bob")
        page.wait_for_selector("text=Save Bob")
        assert page.locator(".tap-error").count() == 1
        table.act({"type": "end_turn"})           # the next player's turn, from the button panel or another tablet
        page.wait_for_selector(".gp-turn:has-text(\"Bob's turn\")", timeout=3000)
        assert page.locator(".tap-error").count() == 0
    finally:
        context.close()


def test_a_balance_of_power_error_goes_with_its_state(browser, table):
    bop_board(table)
    context, page = unlocked(browser, table, PHONE)
    try:
        page.fill("input[name=from]", "Midlands")
        page.fill("input[name=to]", "Cornwall")
        do = page.get_by_role("button", name="Do it: General move")
        do.click()
        error = page.locator(".tap-error")
        error.wait_for(timeout=3000)
        assert "Brian has no General in Midlands" in error.inner_text()
        assert 0 <= error.bounding_box()["y"] - do.bounding_box()["y"] < 150
        # choosing another pawn redraws the same state: the error stays where it was
        page.get_by_role("button", name="\u265A King").click()
        page.wait_for_selector("text=Do it: King move")
        assert page.locator(".tap-error").count() == 1
        table.act({"type": "end_turn"})
        page.wait_for_selector(".bp-turn:has-text('Fran')", timeout=3000)
        assert page.locator(".tap-error").count() == 0
    finally:
        context.close()


def test_a_risk_error_is_beside_the_button_and_goes_with_its_state(browser, table):
    table.new_game("risk", {"players": ["Ann", "Bob"]})
    context, page = unlocked(browser, table, PHONE)
    try:
        page.fill("input[name=from]", "Itly")               # a name off the map
        declare = page.get_by_role("button", name="Declare attack and show odds")
        declare.click()
        error = page.locator(".tap-error")
        error.wait_for(timeout=3000)
        assert "Italy" in error.inner_text()                # the nearest name offered
        # beside the button tapped, not at the top of the view off screen
        assert 0 <= error.bounding_box()["y"] - declare.bounding_box()["y"] < 150
        table.act({"type": "set_counts", "player": "Ann", "territories": 9, "cities": 2, "troops": 20})
        wait_for_js(page, "!document.querySelector('.tap-error')", timeout=3000)
    finally:
        context.close()
