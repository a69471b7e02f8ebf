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
