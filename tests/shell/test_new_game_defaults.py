"""Every game the daemon hosts starts from its New game form left as it opens, through the HTTP API.

The options are built as the page's form builds them from /api/games (app.js, the setup form's submit): the
usual number of players, the names the form shows as placeholders, each seat's choice and colour as first
offered, every variant and house rule at its default. A game with a set-up step of its own (Global Powers'
"Start the game") is then started as the page's defaults start it.
"""

import pytest

from companion.web import create_app


@pytest.fixture
def client(companion):
    return create_app(companion).test_client()


def form_defaults(g):
    """What the New game form sends when nothing is changed (app.js: syncSetup, drawSeats and the submit)."""
    n = g["seats"]["usual"]
    names = [(g["default_names"] or [])[i] if g["default_names"] else f"Player {i + 1}" for i in range(n)]
    choice = g["seat_choice"]
    colours = [g["colours"][i % len(g["colours"])] for i in range(n)] if g["colours"] else [None] * n
    options = {}
    if g["name"] == "balance_duels":
        options = {"players": n, "names": names, "tip_judge": "model", "cant_play": "no_move", "pass_needs_roll": True,
                   "optional_beat": False, "teams": False}
        if n == 2:
            options["pawns"] = 6
    elif choice:
        options["players"] = [{"name": name, choice["key"]: choice["options"][i]["value"], **({"colour": c} if c else {})}
                              for i, (name, c) in enumerate(zip(names, colours))]
    elif g["name"] == "global_powers":
        options["players"] = [{"name": name, "colour": c} for name, c in zip(names, colours)]
    else:
        options["players"] = names
        if g["name"] == "risk":
            options["colours"] = dict(zip(names, colours))
        if g["name"] == "imperial":
            options.update(variant="standard", deal="random")
    chosen = {}
    for o in g["setup_options"]:
        if o["kind"] == "choice":
            chosen.update(o["choices"][0]["options"])
    for o in g["setup_options"]:
        if o.get("when") and any(chosen.get(k) != v for k, v in o["when"].items()):
            continue
        if o["kind"] == "bool":
            options[o["key"]] = bool(o.get("default"))
        elif o["kind"] == "pick":
            pytest.fail(f"{g['name']}: '{o['label']}' must be ticked before the defaults can start")
        else:
            options.update(o["choices"][0]["options"])
    return options


def start_setup(client, state):
    """A game that opens on a set-up step of its own, started as the page's defaults start it."""
    view = state["view"]
    if state["game"] == "global_powers" and view["phase"] == "setup":
        action = {"type": "start"}
        tied = view["weakest"]
        if len(tied) > 1:
            # the page rolls a die for each tied party (the companion's dice) until one is highest
            for _ in range(50):
                values = client.post("/api/dice", json={"n": len(tied)}).get_json()["values"]
                if values.count(max(values)) == 1:
                    break
            action["tie_rolls"] = dict(zip(tied, values))
        answer = client.post("/api/action", json={"action": action})
        assert answer.status_code == 200, answer.get_json()
        state = answer.get_json()["state"]
        assert state["view"]["phase"] == "play" and state["view"]["turn"]["player"] in tied
    return state


def test_every_game_starts_with_its_new_game_defaults(client):
    games = client.get("/api/games").get_json()
    assert {g["name"] for g in games} == {"balance_duels", "imperial", "risk", "balance_of_power", "global_powers"}
    for g in games:
        answer = client.post("/api/new_game", json={"game": g["name"], "options": form_defaults(g)})
        assert answer.status_code == 200, f"{g['name']}: {answer.get_json()}"
        state = start_setup(client, answer.get_json()["state"])
        assert state["game"] == g["name"] and not state["view"].get("over") and not state["view"].get("game_over")
        # somebody is to act, and the header says what
        assert state["view"]["message"].strip(), g["name"]


def test_global_powers_defaults_start_with_every_count_of_players(client):
    """With the auction skipped every party is as weak as the others: the default first-player rule rolls for it."""
    g = next(x for x in client.get("/api/games").get_json() if x["name"] == "global_powers")
    for n in range(g["seats"]["min"], g["seats"]["max"] + 1):
        options = form_defaults({**g, "seats": {**g["seats"], "usual": n}})
        state = client.post("/api/new_game", json={"game": "global_powers", "options": options}).get_json()["state"]
        assert state["view"]["weakest"] == [p["name"] for p in options["players"]]
        start_setup(client, state)
        # without the dice the page's default is refused in words that say what to do
        state = client.post("/api/new_game", json={"game": "global_powers", "options": options}).get_json()["state"]
        refused = client.post("/api/action", json={"action": {"type": "start"}})
        assert refused.status_code == 409 and "roll a die each" in refused.get_json()["error"]
