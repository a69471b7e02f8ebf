"""What the page reads from the API is in the players' words: refusals (issue 36, item 2)."""

import pytest

from companion.web import create_app


@pytest.fixture
def client(companion):
    return create_app(companion).test_client()


def act(client, action):
    return client.post("/api/action", json={"action": action})


def test_a_refusal_names_the_field_as_the_page_shows_it(client):
    # Risk, rolling with the table dice left empty (the example)
    client.post("/api/new_game", json={"game": "risk", "options": {"players": ["Anna", "Bob"]}})
    assert act(client, {"type": "set_counts", "player": "Anna", "territories": 10, "cities": 2}).status_code == 200
    assert act(client, {"type": "reinforce"}).status_code == 200
    assert act(client, {"type": "attack", "attackers": 3, "defenders": 2, "defender": "Bob"}).status_code == 200
    r = act(client, {"type": "battle", "attacker_dice": [], "defender_dice": [3]})
    assert r.status_code == 409 and r.get_json()["error"] == "Attacker's dice: roll 1 to 3 dice, not 0"
    # Global Powers, starting with the default first player: no more a field name, and it says what to do
    client.post("/api/new_game", json={"game": "global_powers", "options": {"players": ["Anna", "Bob", "Cleo"]}})
    r = act(client, {"type": "start"})
    assert r.status_code == 409 and "'" not in r.get_json()["error"]
    assert r.get_json()["error"].startswith("Anna, Bob and Cleo are tied as the weakest party: roll a die each")
    # a mistyped option of New game, in the words of the form
    r = client.post("/api/new_game", json={"game": "balance_duels", "options": {"players": 2, "tip_judge": "dice"}})
    assert r.status_code == 409 and r.get_json()["error"].startswith("Who judges a tip must be one of")


def test_nothing_the_page_shows_needs_an_emoji_font():
    """A Chromium without an emoji font (a Pi's may have none) draws a character beyond the Basic Multilingual Plane
    as an empty box: none in the page's files, written or escaped, nor in what the engines say."""
    import re
    from pathlib import Path

    import companion

    root = Path(companion.__file__).parent
    astral = re.compile(r"[\U00010000-\U0010FFFF]|\\u[dD][89abAB][0-9a-fA-F]{2}|\\u\{[0-9a-fA-F]{5,6}\}|\\U000[1-9a-fA-F]")
    files = [*(root / "web" / "static").iterdir(), *(root / "games").glob("*.py")]
    found = [f"{f.name}:{n}" for f in files if f.suffix in (".js", ".css", ".html", ".py")
             for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1) if astral.search(line)]
    assert len(files) > 10 and found == []
