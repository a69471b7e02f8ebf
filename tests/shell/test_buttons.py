"""The button panel per game: next walks the choices, confirm plays one, a long press undoes."""

import dataclasses

import pytest

from companion.config import parse
from companion.table.daemon import Companion


@pytest.fixture
def comp(tmp_path):
    cfg = dataclasses.replace(parse({"simulate": {"enabled": True, "demo": False, "seed": 2}}),
                              store_path=tmp_path / "db.sqlite3")
    c = Companion(cfg)
    yield c
    c.stop()


def test_balance_duels_roll_next_confirm_undo(comp):
    assert comp.press("confirm") == "roll the die first"
    assert comp.indicators.buzzes == 1
    assert comp.press("roll") is None and comp.host.state.roll is not None
    status = comp.live()
    assert status["choices"] >= 1 and status["selection_label"]
    seq = comp.host.seq
    assert comp.press("confirm") is None and comp.host.seq == seq + 1
    assert comp.hold("roll") is None and comp.host.seq == seq + 2   # a long press undoes
    assert comp.host.state.roll is not None


def test_imperial_steps_the_rondel_target_and_confirms(comp):
    comp.host.new_game("imperial", {"players": ["Ann", "Bob"]})
    assert comp.press("roll") == "Imperial 2030 rolls its dice on the page"
    first = comp.live()["selection_label"]
    comp.press("next")
    second = comp.live()["selection_label"]
    assert first != second and second.startswith("Production")
    seq = comp.host.seq
    assert comp.press("confirm") is None and comp.host.seq == seq + 1
    assert comp.host.snapshot()["view"]["rondel"]["positions"]["russia"] == "production1"


def test_risk_roll_button_fights_the_declared_attack(comp):
    comp.host.new_game("risk", {"players": ["Ann", "Bob"]})
    assert "declare an attack" in comp.press("roll")
    for action in ({"type": "set_counts", "player": "Ann", "territories": 12, "cities": 3, "troops": 30},
                   {"type": "reinforce"},
                   {"type": "attack", "defender": "Bob", "attackers": 3, "defenders": 2}):
        comp.host.act(action)
    seq = comp.host.seq
    assert comp.press("roll") is None and comp.host.seq == seq + 1
    battle = comp.host.store.game_events(comp.host.game_id)[-1].body["action"]
    assert len(battle["attacker_dice"]) == 3 and len(battle["defender_dice"]) == 2
    assert all(1 <= d <= 6 for d in battle["attacker_dice"] + battle["defender_dice"])


def test_risk_roll_button_rerolls_recon_dice_showing_one(comp):
    # Recon bought twice and an attack on Denmark's naval base: two of the attacker's dice
    # cannot show 1, so the button throws them again instead of having the press refused.
    missions = ["six_cities", "two_regions", "swiss_safe", "danish_naval_base", "sea_line",
                "rough_terrain", "green_region", "eliminate_neutral"]
    comp.host.new_game("risk", {"players": ["Ann", "Bob"], "variant": "command_post", "missions": missions})
    for action in ({"type": "set_counts", "player": "Ann", "territories": 12, "lost": 4},
                   {"type": "buy", "item": "recon"}, {"type": "buy", "item": "recon"},
                   {"type": "attack", "attackers": 3, "defenders": 2, "to": "Denmark"}):
        comp.host.act(action)
    throws = iter([[1, 1, 1], [1], [1], [3], [4], [2, 6]])
    comp.controller.dice = lambda n: next(throws)
    assert comp.press("roll") is None
    battle = comp.host.store.game_events(comp.host.game_id)[-1].body["action"]
    assert battle["attacker_dice"] == [3, 4, 1]   # the third die is not protected: its 1 stands
    assert battle["defender_dice"] == [2, 6]
    # A die source stuck on 1 is refused with the reason rather than spinning for ever.
    comp.controller.dice = lambda n: [1] * n
    seq = comp.host.seq
    assert "kept showing 1" in comp.press("roll") and comp.host.seq == seq


def test_configured_button_actions_per_game(tmp_path):
    cfg = dataclasses.replace(parse({"simulate": {"enabled": True, "demo": False},
                                     "button_actions": {"global_powers": {"vote": {"type": "end_turn"}}}}),
                              store_path=tmp_path / "db.sqlite3")
    c = Companion(cfg)
    try:
        c.host.new_game("balance_of_power", {"players": 2})
        seq = c.host.seq
        # the default: 'end' ends the turn in the three trackers (refused with the rule named when it can't)
        refusal = c.press("end")
        assert (refusal is None and c.host.seq == seq + 1) or (refusal and c.host.seq == seq)
        assert "vote" in c.buttons.names
    finally:
        c.stop()


@pytest.mark.parametrize("table,needle", [
    ({"chess": {"x": {"type": "end_turn"}}}, "unknown game"),
    ({"risk": {"end": "end_turn"}}, "must be an action table"),
    ({"risk": {"confirm": {"type": "end_turn"}}}, "built-in button"),
])
def test_bad_button_actions(table, needle):
    from companion.config import ConfigError

    with pytest.raises(ConfigError, match=needle):
        parse({"button_actions": table}, "c.toml")
