"""Issue 36, item 6: the smaller things seen on the page, each checked where the table sees it.

One daemon and one browser for the module (the fixtures of test_page); each test opens its own page.
"""

import re

from tests.browser.test_page import browser, open_page, table  # noqa: F401 (its fixtures; skips without chromium)
from tests.browser.test_explains import TABLET, unlocked
from tests.browser.waiting import wait_for_js

# characters outside the Basic Multilingual Plane: the emoji a Chromium without an emoji font draws as empty boxes
ASTRAL = re.compile("[\U00010000-\U0010FFFF]")


def risk_attack_pending(table):
    table.new_game("risk", {"players": ["Anna", "Bob"]})
    for action in ({"type": "set_counts", "player": "Anna", "territories": 10, "cities": 2}, {"type": "reinforce"},
                   {"type": "attack", "attackers": 3, "defenders": 1, "defender": "Bob", "to": "Italy"}):
        state = table.act(action)
    return state


def test_risk_region_bonus_the_map_lacks_is_said_in_words(browser, table):
    table.new_game("risk", {"players": ["Anna", "Bob"]})
    context, page = unlocked(browser, table, TABLET)
    try:
        open_page(page, table)
        page.locator(".rk-counts summary").click()
        regions = page.locator(".rk-regions").first
        regions.wait_for(timeout=5000)
        text = regions.inner_text()
        assert "+?" not in text
        assert "yellow (+3)" in text                      # a bonus the map data has is shown as it is
        assert re.search(r"green \(bonus unknown", text), text
        assert page.errors == []
    finally:
        context.close()


def test_risk_dice_buttons_draw_without_an_emoji_font(browser, table):
    risk_attack_pending(table)
    context, page = unlocked(browser, table, TABLET)
    try:
        open_page(page, table)
        roll = page.get_by_role("button", name=re.compile("Roll for me"))
        roll.wait_for(timeout=5000)
        labels = page.evaluate("() => [...document.querySelectorAll('#game button')].map((b) => b.textContent)")
        assert not [t for t in labels if ASTRAL.search(t)], labels
        # the die is still there to see, drawn by the page's own style
        width = page.evaluate("(b) => parseFloat(getComputedStyle(b, '::before').width) || 0", roll.element_handle())
        assert width > 0
        assert page.errors == []
    finally:
        context.close()


def test_balance_duels_score_panel_marks_the_winner(browser, table):
    table.new_game("balance_duels", {"players": 2, "names": ["Dora", "Emil"], "tip_judge": "table"})
    table.roll(1)
    context, page = unlocked(browser, table, TABLET)
    try:
        open_page(page, table)
        page.locator(".bd-move").first.click()
        # Dora's placement, then the table reports the tip: Emil wins with no pawn home, Dora has one on the arm
        page.get_by_role("button", name="The arm tipped").click(timeout=5000)
        wait_for_js(page, "document.querySelector('#scores') && document.querySelector('#scores').textContent.includes('won')", timeout=5000)
        row = page.locator("#scores tr", has_text="Emil")
        assert "won" in row.inner_text() and "won" not in page.locator("#scores tr", has_text="Dora").inner_text()
        assert page.errors == []
    finally:
        context.close()
