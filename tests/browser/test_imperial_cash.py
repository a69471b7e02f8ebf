"""Imperial 2030 on the shared page: a player keeps their cash secret, and shows it again."""

import json
import urllib.request

from tests.browser.test_page import ARTIFACTS, PIN, Table, browser, open_page, table  # noqa: F401 (its fixtures; skips without chromium)


def unlocked(browser, table, **kwargs):
    context = browser.new_context(**kwargs)
    answer = context.request.post(table.url + "/api/login", data={"pin": PIN})
    assert answer.ok, answer.text()
    return context, context.new_page()


def api_state(table):
    return json.loads(urllib.request.urlopen(table.url + "/api/state").read())


def player_row(page, name):
    return page.locator(".imp-table tbody tr", has=page.locator("th", has_text=name))


def test_a_player_hides_their_cash_and_the_page_shows_hidden_not_a_number(browser, table):
    table.new_game("imperial", {"players": ["Ann", "Bob", "Cy"]})
    context, page = unlocked(browser, table, viewport={"width": 1024, "height": 768})
    try:
        open_page(page, table)
        ann = player_row(page, "Ann")
        cash, score = ann.locator("td").nth(0), ann.locator("td").nth(3)
        assert cash.inner_text().startswith("2 M")
        page.get_by_role("button", name="Hide my cash (Ann)").click()
        page.get_by_role("button", name="Show my cash (Ann)").wait_for(timeout=3000)
        assert cash.inner_text().startswith("hidden") and score.inner_text().startswith("hidden")
        assert "0 M" not in cash.inner_text()
        # the others' figures and every treasury stay on the page
        assert player_row(page, "Bob").locator("td").nth(0).inner_text().startswith("2 M")
        assert page.get_by_role("button", name="Hide my cash (Bob)").is_visible()
        # the shell's score panel and chart get no number for Ann
        state = api_state(table)
        assert "Ann" not in state["scores"] and "Ann" not in state["score_history"][-1]
        ann_score = page.locator("#scores tr", has_text="Ann")
        assert ann_score.locator("td.num").inner_text() == "hidden"    # listed, with no number
        assert state["view"]["players"][0]["cash"] is None and state["view"]["bank_paid_out"] is None
        # Ann governs Russia, to move: its free first placement stays open to her on the rondel
        assert page.locator(".imp-reachable").count() == 8
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "imperial-cash-hidden.png"), full_page=True)

        page.get_by_role("button", name="Show my cash (Ann)").click()
        page.get_by_role("button", name="Hide my cash (Ann)").wait_for(timeout=3000)
        assert cash.inner_text().startswith("2 M") and score.inner_text().startswith("2")
        assert api_state(table)["scores"]["Ann"] == 2
    finally:
        context.close()


def test_hidden_cash_fits_a_phone_and_a_paid_move_is_still_offered(browser, table):
    state = table.new_game("imperial", {"players": ["Ann", "Bob", "Cy"]})
    for _ in range(6):  # every nation's free first placement, on Taxation
        state = table.act({"type": "rondel", "nation": state["view"]["to_move"], "target": "taxation"})
    table.act({"type": "hide_cash", "player": "Ann", "hidden": True})
    context, page = unlocked(browser, table, viewport={"width": 390, "height": 844})
    try:
        open_page(page, table)
        page.get_by_role("button", name="Show my cash (Ann)").wait_for(timeout=3000)
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        # Russia (Ann's) from Taxation: the page cannot tell whether her cash covers the paid spaces, so it lets her try
        paid = [o for o in api_state(table)["view"]["rondel"]["options"] if o["cost"]]
        assert paid and all(o["shortfall"] is None for o in paid)
        assert page.locator(".imp-reachable").count() == len(api_state(table)["view"]["rondel"]["options"])
        assert not page.locator(".imp-choices button:disabled").count()
    finally:
        context.close()
