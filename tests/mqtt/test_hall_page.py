"""The hall page in a real browser (Playwright driving Debian's Chromium): three tables, live, one going offline."""

import threading

import pytest

from companion.mqtt.hall import HallBoard, create_hall_app
from tests.mqtt.conftest import HALL, RISK_PAIR, wait_until, win_risk
from tests.browser.waiting import wait_for_js
from tests.browser.chromium import CHROMIUM

pytestmark = pytest.mark.slow   # a long file: handed out to a worker first (tests/conftest.py)

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")


@pytest.fixture
def hall_url(broker):
    from waitress.server import create_server

    board = HallBoard("127.0.0.1", broker.port, HALL, reconnect_min_s=0.1, reconnect_max_s=0.5)
    board.start()
    server = create_server(create_hall_app(board, refresh_s=0.5), host="127.0.0.1", port=0, threads=6)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.effective_port}/", board
    server.close()
    board.stop()


def test_the_page_lists_every_table_live(broker, tables, hall_url):
    if CHROMIUM is None:
        pytest.skip("Debian's chromium is not installed")
    url, board = hall_url
    ts = [tables(broker.port, "t1", name="Window"), tables(broker.port, "t2"), tables(broker.port, "t3")]
    ts[1].host.new_game("risk", RISK_PAIR)
    wait_until(lambda: len(board.snapshot()["tables"]) == 3, what="three tables on the board")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page()
            errors = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.goto(url)
            wait_for_js(page, "document.querySelectorAll('.hall-card').length === 3")
            assert page.locator("#title").inner_text() == f"Hall {HALL}"
            window = page.locator('.hall-card[data-table="t1"]')
            assert "Window" in window.inner_text() and "Balance Duels" in window.inner_text()
            risk = page.locator('.hall-card[data-table="t2"]')
            assert "Risk" in risk.inner_text()
            assert page.locator(".hall-card.hall-over, .hall-result, .won").count() == 0   # no game is over yet
            # live: a roll shows up without a reload, and a table that stops turns offline
            ts[0].host.act({"type": "roll", "value": 4})
            wait_for_js(page,
                "document.querySelector('.hall-card[data-table=\"t1\"]').innerText.includes('rolled 4')")
            # a finished game: its card says who won and marks the winner's score, in the accent colour
            winner, loser = win_risk(ts[1].host)
            page.wait_for_selector('.hall-card.hall-over[data-table="t2"] .hall-result')
            assert risk.locator(".hall-result").inner_text() == f"{winner} wins"
            assert "won" in risk.locator("tr", has_text=winner).inner_text()
            assert "won" not in risk.locator("tr", has_text=loser).inner_text()
            accent, result, border = risk.evaluate("""(card) => {
                const probe = document.createElement("span");
                probe.style.color = "var(--accent)";
                card.append(probe);
                const accent = getComputedStyle(probe).color;
                probe.remove();
                return [accent, getComputedStyle(card.querySelector(".hall-result")).color,
                        getComputedStyle(card).borderTopColor];
            }""")
            assert result == border == accent, (result, border, accent)
            ts[2].publisher.stop()
            page.wait_for_selector('.hall-card.hall-offline[data-table="t3"]')
            # in the card's own style, not the table page's offline banner (black words) nor its turn pill (a row
            # drawn as a rounded box): the offline card's words in the ink of an online card's, the player to move
            # a table row
            looks = page.evaluate("""() => {
                const look = (sel) => getComputedStyle(document.querySelector(sel));
                const online = '.hall-card[data-table="t2"]', offline = '.hall-card[data-table="t3"]';
                return {name: [look(online + " h2").color, look(offline + " h2").color],
                        game: [look(online + " .hall-game").color, look(offline + " .hall-game").color],
                        turn: look('.hall-card[data-table="t1"] tr.hall-turn').display};
            }""")
            assert looks["name"][0] == looks["name"][1] and looks["game"][0] == looks["game"][1], looks
            assert looks["turn"] == "table-row", looks
            wait_for_js(page, "document.getElementById('summary').innerText === '3 tables, 2 online'")
            assert errors == []
        finally:
            browser.close()
