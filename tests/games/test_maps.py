"""The map data: every shipped fact with its rulebook source, names that agree, and the players'
completion of the rest (issue 18) -- its file, its checks, and the engines using it."""

from __future__ import annotations

import copy
import os
import re
import tomllib
from pathlib import Path

import pytest

from companion.games import balance_of_power as bop
from companion.games import risk
from companion.games.base import RuleError
from companion.games.mapdata import MAX_BORDERS, MapFileError
from companion.table.maps import load_completion, save_completion

DATA = Path(risk.__file__).parent / "data"
RULES = Path(os.environ.get("COMPANION_RULES_DIR", Path(__file__).resolve().parents[3] / "shared" / "rules"))
RULEBOOKS = {"risk-balance-of-power.txt", "balance-of-power-1815.txt", "global-powers.txt"}
SOURCE = re.compile(r"^(?P<book>[a-z0-9-]+\.txt):(?P<lines>\d+(?:-\d+)?(?:,\d+(?:-\d+)?)*) \S")


def load(name):
    return tomllib.loads((DATA / name).read_text(encoding="utf-8"))


def facts(name):
    """Every fact key a map file ships, as its [sources] table must name it."""
    m = load(name)
    keys = []
    if name == "risk_map.toml":
        keys += ["territories", "rough_count", "regions"]
        keys += [f"borders_complete.{t}" for t in m["borders_complete"]]
        keys += [f"objects.{t}" for t in m["objects"]] + [f"adjacent.{t}" for t in m["adjacent"]]
        for r, spec in m["regions"].items():
            keys += [f"regions.{r}.{k}" for k in ("bonus", "whole") if k in spec]
            keys += [f"regions.{r}.territories"] if spec["territories"] else []
        keys += [f"setups.{n}" for n in m["setups"]] + [f"missions.{k}" for k in m["missions"]]
        assert not m["rough"], "a rough territory needs its source too"
    elif name == "balance_of_power_map.toml":
        keys += ["empires", "other.territories"] + [f"borders_complete.{t}" for t in m["borders_complete"]]
        keys += [f"adjacent.{t}" for t in m["adjacent"]]
        for e, spec in m["empires"].items():
            keys += [f"empires.{e}.capital"] if spec["capital"] else []
            keys += [f"empires.{e}.territories"] if spec["territories"] else []
            assert not spec["complete"], "a whole empire needs its source too"
    elif name == "global_powers_map.toml":
        keys += ["regions", "regions.home"] + [f"neighbours.{r}" for r in m["neighbours"]]
        assert not m["checks"]["borders_complete"] and not m["start"], "these need sources too"
    else:
        keys += [n for n in m if n != "sources"]
    return keys


@pytest.mark.parametrize("name", ["risk_map.toml", "balance_of_power_map.toml", "global_powers_map.toml", "imperial_board.toml"])
def test_every_shipped_fact_names_its_source(name):
    sources = load(name)["sources"]
    missing = [k for k in facts(name) if k not in sources]
    assert not missing, f"{name}: facts without a source: {missing}"
    stale = sorted(set(sources) - set(facts(name)))
    assert not stale, f"{name}: sources for facts it does not ship: {stale}"
    for key, text in sources.items():
        if name == "imperial_board.toml":
            assert text.startswith("Thrillberg/imperial app/javascript/Domain/"), key
            continue
        m = SOURCE.match(text)
        assert m and m["book"] in RULEBOOKS, f"{name} {key}: {text!r} is not 'rulebook.txt:LINES section'"


def _cited(text):
    m = SOURCE.match(text)
    lines = (RULES / m["book"]).read_text(encoding="utf-8").splitlines()
    numbers = []
    for part in m["lines"].split(","):
        a, _, b = part.partition("-")
        numbers += list(range(int(a), int(b or a) + 1))
    assert all(1 <= n <= len(lines) for n in numbers), text
    return " ".join(lines[n - 1] for n in numbers).lower()


def _named(name, cited):
    bare = name.lower().removeprefix("the ").replace("-", " ")
    return bare in cited.replace("-", " ")


@pytest.mark.skipif(not RULES.is_dir(), reason="the rulebook texts (shared/rules) are not beside this checkout")
def test_the_cited_lines_name_what_they_source():
    for name, table in (("risk_map.toml", "adjacent"), ("balance_of_power_map.toml", "adjacent"), ("global_powers_map.toml", "neighbours")):
        m = load(name)
        for a, others in m[table].items():
            cited = _cited(m["sources"][f"{table}.{a}"])
            for b in [a, *others]:
                assert _named(b, cited), f"{name}: {m['sources'][f'{table}.{a}']} does not name {b}"
    m = load("risk_map.toml")
    cited = _cited(m["sources"]["territories"])
    assert [t for t in m["territories"] if not _named(t, cited)] == []
    for r, spec in m["regions"].items():
        if "bonus" in spec:
            cited = _cited(m["sources"][f"regions.{r}.bonus"])
            assert r in cited and str(spec["bonus"]) in cited, r
    assert "eleven" in _cited(m["sources"]["rough_count"]) and m["rough_count"] == 11
    for t in m["objects"]:
        assert _named(t, _cited(m["sources"][f"objects.{t}"]))
    m = load("balance_of_power_map.toml")
    for e, spec in m["empires"].items():
        for t in spec["territories"]:
            assert _named(t, _cited(m["sources"][f"empires.{e}.territories"])), (e, t)


def test_names_agree_and_borders_are_symmetric():
    for module in (risk, bop):
        for a, others in module.ADJACENT.items():
            assert a not in others
            assert all(a in module.ADJACENT[b] for b in others), (module.__name__, a)
    known = set(risk.TERRITORIES)
    assert len(known) == risk.TERRITORY_COUNT == 30 and len(risk.REGIONS) == 6
    assert set(risk.ADJACENT) <= known and set(risk.BORDERS_COMPLETE) <= known and set(risk.OBJECTS) <= known
    members = [t for r in risk.SHIPPED.regions.values() for t in r["territories"]]
    assert set(members) <= known and len(members) == len(set(members))
    for spec in risk.MISSIONS.values():
        assert set(spec.get("territories", [])) <= known and spec.get("region", "green") in risk.REGIONS
    for setup in risk.SETUPS.values():
        assert {risk.territory(c) for c in setup["cities"]} <= known and set(setup["missions"]) <= set(risk.MISSIONS)
    owned = [t for e in bop.SHIPPED.empires.values() for t in e["territories"]]
    assert len(owned) == len(set(owned)) and set(owned) <= set(bop.KNOWN.values())
    assert all(e["capital"] in e["territories"] for e in bop.SHIPPED.empires.values() if e["capital"])


# ---------------------------------------------------------------- the completion file


def completed(form, **addition):
    return form.add(form.empty(), addition)


def test_a_completion_round_trips_through_its_file(tmp_path):
    path = tmp_path / "maps" / "risk.toml"
    data = completed(risk.MAP_FORM, borders=[["germany", "the Netherlands"], ["Denmark", "Germany"]],
                     rough=["Switzerland"], borders_complete=["Denmark"],
                     regions={"purple": {"bonus": 3, "territories": ["Norway", "Sweden"]}, "green": {}})
    # names come back as the board spells them, each border once; the shipped one (none here) is left out
    assert data["borders"] == [["Denmark", "Germany"], ["Germany", "Netherlands"]]
    assert data["regions"] == {"purple": {"bonus": 3, "territories": ["Norway", "Sweden"]}}
    save_completion(risk.MAP_FORM, path, data)
    assert load_completion(risk.MAP_FORM, path) == data
    assert load_completion(risk.MAP_FORM, tmp_path / "absent.toml") == risk.MAP_FORM.empty()
    again = risk.MAP_FORM.add(data, {"borders": [["Germany", "Denmark"]]})
    assert again == data


def test_bop_completion_adds_printed_territories_and_empires(tmp_path):
    data = completed(bop.MAP_FORM, territories=["Burgundy", "Scotland"], borders=[["Paris", "Burgundy"], ["Scotland", "Midlands"]],
                     empires={"france": {"capital": "Paris", "territories": ["Burgundy"]}, "great_britain": {"territories": ["Scotland"]}})
    path = tmp_path / "balance_of_power.toml"
    save_completion(bop.MAP_FORM, path, data)
    assert load_completion(bop.MAP_FORM, path) == data
    assert data["empires"]["france"] == {"capital": "Paris", "territories": ["Burgundy"]}


@pytest.mark.parametrize("form,addition,words", [
    (risk.MAP_FORM, {"borders": [["Germany", "Denmrak"]]}, ["'Denmrak' is not a territory", "did you mean Denmark"]),
    (risk.MAP_FORM, {"borders": [["Poland", "Denmark"]]}, ["every border of Poland", "Denmark is not among them"]),
    (risk.MAP_FORM, {"borders": [["Italy"]]}, ["'borders' #1 must be a pair"]),
    (risk.MAP_FORM, {"borders": [["Italy", "italy"]]}, ["cannot border itself"]),
    (risk.MAP_FORM, {"regions": {"orange": {"bonus": 4}}}, ["the rulebook gives 5"]),
    (risk.MAP_FORM, {"regions": {"green": {"territories": ["Italy"]}}}, ["whole of green"]),
    (risk.MAP_FORM, {"regions": {"purple": {"territories": ["Germany"]}}}, ["Germany is already in green"]),
    (risk.MAP_FORM, {"regions": {"pink": {"bonus": 2}}}, ["unknown region"]),
    (risk.MAP_FORM, {"regions": {"purple": {"bonus": 40}}}, ["from 1 to 10"]),
    (risk.MAP_FORM, {"rough": list(risk.TERRITORIES[:12])}, ["names 12 territories; the board has 11"]),
    (risk.MAP_FORM, {"territories": ["Atlantis"]}, ["already names every territory"]),
    (risk.MAP_FORM, {"roads": []}, ["unknown key 'roads'"]),
    (risk.MAP_FORM, {"borders": [["Italy", "Austria"]] * (MAX_BORDERS + 1)}, [f"at most {MAX_BORDERS}"]),
    (risk.MAP_FORM, {"borders": [["Italy", "x" * 80]]}, ["at most 60 printable characters"]),
    (bop.MAP_FORM, {"borders": [["Paris", "Burgundy"]]}, ["'Burgundy' is not a territory", "add a printed territory"]),
    (bop.MAP_FORM, {"territories": ["normandy"]}, ["Normandy is already on the map"]),
    (bop.MAP_FORM, {"empires": {"france": {"capital": "London"}}}, ["London is in great_britain"]),
    (bop.MAP_FORM, {"empires": {"great_britain": {"capital": "Cornwall"}}}, ["the rulebook puts it in London"]),
    (bop.MAP_FORM, {"borders": [["London", "Paris"]]}, ["every border of London"]),
])
def test_what_the_completion_refuses(form, addition, words):
    with pytest.raises(MapFileError) as error:
        completed(form, **addition)
    for word in words:
        assert word in str(error.value), str(error.value)


def test_a_bad_file_is_named_by_line(tmp_path):
    path = tmp_path / "risk.toml"
    path.write_text('version = 1\nborders = [["Italy", "Austria"]]\n\n[regions.purple]\nbonus = 3\nterritories = ["Norwya"]\n')
    with pytest.raises(MapFileError, match=rf"^{re.escape(str(path))}:6: \[regions.purple\] territories #1: 'Norwya' is not a territory.*Norway"):
        load_completion(risk.MAP_FORM, path)
    path.write_text('version = 1\nborders = [["Italy", \n')
    with pytest.raises(MapFileError, match=rf"^{re.escape(str(path))}:\d+: not valid TOML"):
        load_completion(risk.MAP_FORM, path)
    path.write_text("version = 2\n")
    with pytest.raises(MapFileError, match=r":1: version must be 1"):
        load_completion(risk.MAP_FORM, path)


def test_the_file_is_written_whole_or_not_at_all(tmp_path, monkeypatch):
    path = tmp_path / "risk.toml"
    old = completed(risk.MAP_FORM, borders=[["Italy", "Austria"]])
    save_completion(risk.MAP_FORM, path, old)
    before = path.read_bytes()

    def power_cut(*args):
        raise OSError("power cut")

    monkeypatch.setattr(os, "replace", power_cut)
    with pytest.raises(OSError):
        save_completion(risk.MAP_FORM, path, completed(risk.MAP_FORM, borders=[["Italy", "Slovenia"]]))
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["risk.toml"]


# ---------------------------------------------------------------- the engines use it


def command_post(eng):
    missions = ["six_cities", "two_regions", "swiss_safe", "danish_naval_base", "sea_line", "rough_terrain", "green_region", "eliminate_neutral"]
    state = eng.new({"players": ["Ann", "Bob"], "variant": "command_post", "missions": missions})
    for action in ({"type": "set_counts", "player": "Ann", "territories": 12, "cities": 3, "lost": 20},
                   {"type": "set_counts", "player": "Bob", "territories": 10, "cities": 2, "lost": 20},
                   {"type": "set_counts", "player": "neutral", "territories": 8},
                   {"type": "buy", "item": "airfield", "territory": "Germany"},
                   {"type": "reinforce"}):
        state = eng.act(state, action)
    return state


ATTACK = {"type": "attack", "attackers": 3, "defenders": 2, "from": "Netherlands", "to": "Denmark"}


def test_an_airfield_reaches_a_battle_across_a_border_the_players_completed():
    # TABLES side 2, Building an Airfield: +1 in battles on its territory or one adjacent to it.
    # The text never says whether Germany borders Denmark: the tracker cannot tell, and says so.
    shipped = command_post(risk.ENGINE)
    attack = risk.ENGINE.view(risk.ENGINE.act(shipped, ATTACK))["attack"]
    assert attack["attacker_airfield"] is False and attack["airfield_unsure"][0]["territory"] == "Germany"
    # The players read the border off their board once; from then on the airfield counts.
    eng = risk.engine(completed(risk.MAP_FORM, borders=[["Germany", "Denmark"]]))
    attack = eng.view(eng.act(command_post(eng), ATTACK))["attack"]
    assert attack["attacker_airfield"] is True and attack["airfield_unsure"] == []
    # A completion that lists all of Denmark's borders without Germany settles it the other way.
    eng = risk.engine(completed(risk.MAP_FORM, borders=[["Sweden", "Denmark"], ["Netherlands", "Denmark"]],
                                        borders_complete=["Denmark"]))
    attack = eng.view(eng.act(command_post(eng), ATTACK))["attack"]
    assert attack["attacker_airfield"] is False and attack["airfield_unsure"] == []


def test_completed_rough_terrain_and_bonus_are_used():
    eng = risk.engine(completed(risk.MAP_FORM, rough=["Switzerland"], regions={"purple": {"bonus": 4}}))
    state = eng.new({"players": ["Ann", "Bob"]})
    state = eng.act(state, {"type": "set_counts", "player": "Ann", "territories": 12, "cities": 3, "regions": ["purple"]})
    assert eng.view(state)["reinforcements"]["regions"] == 4
    state = eng.act(state, {"type": "set_counts", "player": "Bob", "territories": 10})
    state = eng.act(state, {"type": "attack", "defender": "Bob", "attackers": 3, "defenders": 1, "to": "Switzerland"})
    with pytest.raises(RuleError, match="2"):
        eng.act(state, {"type": "battle", "attacker_dice": [6, 5, 4], "defender_dice": [1]})


CAPITALS = {"france": "Paris", "prussia": "Berlin", "austria": "Vienna", "russia": "St Petersburg", "ottoman": "Constantinople"}


def respawn_board(eng, add_scotland):
    state = eng.new({"players": [{"name": "Brian", "empire": "great_britain"}, {"name": "Fran", "empire": "france"},
                                 {"name": "Gerd", "empire": "prussia"}], "tracking": "board", "capitals": CAPITALS, "respawn": True})
    for who, where in (("general", "Cornwall"), ("king", "Cornwall"), ("banker", "Cornwall")):
        state = eng.act(state, {"type": "place", "pawn": who, "territory": where})
    state = copy.deepcopy(state)
    if add_scotland:
        state["added"]["Scotland"] = "great_britain"
    state["phase"] = "play"
    state["board"] = {"Scotland": [["Brian", "banker"]], "Hesse": [["Brian", "general"]], "Hanover": [["Gerd", "general"]],
                      "Paris": [["Fran", "king"], ["Fran", "general"], ["Fran", "banker"]],
                      "Berlin": [["Gerd", "king"], ["Gerd", "general"], ["Gerd", "banker"]]}
    state["wiped"]["Brian"] = {"king": "next"}
    bop._begin_turn(state, "Brian", 2)
    return state


def test_respawn_nearest_the_capital_across_borders_the_players_completed():
    # Re-spawn, no pawn left in London: the new King goes to the held territory closest to it.
    respawn = {"type": "respawn", "pawn": "king", "territory": "Hesse"}
    # Shipped map only (Scotland added for this game): Scotland's distance is unknown, the table judges.
    state = respawn_board(bop.ENGINE, add_scotland=True)
    assert ["Brian", "king"] in bop.ENGINE.act(state, respawn)["board"]["Hesse"]
    # Completed once: Scotland borders the Midlands, two borders from London; Hesse is three away.
    eng = bop.engine(completed(bop.MAP_FORM, territories=["Scotland"], borders=[["Scotland", "Midlands"]],
                               empires={"great_britain": {"territories": ["Scotland"]}}))
    state = respawn_board(eng, add_scotland=False)
    with pytest.raises(RuleError, match="Scotland is closer to London than Hesse"):
        eng.act(state, respawn)
    assert ["Brian", "king"] in eng.act(state, dict(respawn, territory="Scotland"))["board"]["Scotland"]


def test_new_game_offers_following_the_board_once_every_capital_is_known():
    """Board tracking needs each empire's capital; the shipped map names London only, so New game offers it only once
    the players have completed the others (an option that could only fail is not offered)."""
    keys = lambda eng: [o["key"] for o in eng.setup_options]  # noqa: E731
    assert "tracking" not in keys(bop.ENGINE)
    partial = bop.engine(completed(bop.MAP_FORM, empires={"france": {"capital": "Paris"}}))
    assert "tracking" not in keys(partial)
    unknown = [c for c in CAPITALS.values() if c not in bop.SHIPPED.known.values()]
    full = bop.engine(completed(bop.MAP_FORM, territories=unknown, empires={e: {"capital": c} for e, c in CAPITALS.items()}))
    tracking = next(o for o in full.setup_options if o["key"] == "tracking")
    for choice in tracking["choices"]:
        state = full.new({"players": 3, **choice["options"]})
        assert state["tracking"] == choice["options"]["tracking"]
