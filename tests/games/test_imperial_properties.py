"""Imperial 2030: properties that hold through any sequence of table actions."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from companion.games.base import RuleError
from companion.games.imperial import act, new, rondel_cost, scores, tax, view
from companion.games.imperial_rules import NATIONS, RONDEL, passes_investor, power_factor, tax_chart

pytestmark = pytest.mark.slow   # a long file: handed out to a worker first (tests/conftest.py)

NAMES = ["Ann", "Bob", "Cy", "Dee", "Eve", "Fay"]
CITIES = ["brown1", "brown2", "blue1", "blue2"]
UNITS = ["army", "fleet"]


def money(state):
    return state.bank + sum(n.treasury for n in state.nations) + sum(p.cash for p in state.players)


def play_action(state, draw):
    """A plausible action for the current phase: mostly legal, sometimes not."""
    data = view(state)
    phase = state.phase
    players = [p.name for p in state.players]
    if draw(st.integers(0, 14)) == 0:
        return {
            "type": "donate",
            "player": draw(st.sampled_from(players)),
            "nation": draw(st.sampled_from(NATIONS)),
            "amount": draw(st.integers(1, 4)),
        }
    if draw(st.integers(0, 14)) == 0:
        name = draw(st.sampled_from(players))
        # mostly a real toggle, sometimes a repeat (refused)
        hidden = (name not in state.hidden_cash) if draw(st.integers(0, 5)) else draw(st.booleans())
        return {"type": "hide_cash", "player": name, "hidden": hidden}
    if draw(st.integers(0, 19)) == 0:
        value = draw(st.integers(0, 30))
        if draw(st.booleans()):
            return {"type": "correct", "what": "treasury", "nation": draw(st.sampled_from(NATIONS)), "value": value}
        return {"type": "correct", "what": "cash", "player": draw(st.sampled_from(players)), "value": value}
    if phase in ("investor", "draft"):
        decision = data["decision"]
        player = decision["player"] if draw(st.integers(0, 9)) else draw(st.sampled_from(players))
        # None: the decider's cash is hidden, so the page cannot say
        affordable = [c for c in decision["choices"] if c["affordable"] is not False]
        if affordable and draw(st.integers(0, 2)):
            choice = draw(st.sampled_from(affordable))
            action = {"type": "invest", "player": player, "nation": choice["nation"], "value": choice["value"]}
            if choice["trade_in"] is not None:
                action["trade_in"] = choice["trade_in"]
            return action
        return {"type": "pass", "player": player}
    mover = data["to_move"]
    if phase == "rondel":
        legal = [o["target"] for o in data["rondel"]["options"] if not o["shortfall"] and not o["blocked"]]
        target = draw(st.sampled_from(legal)) if legal and draw(st.integers(0, 5)) else draw(st.sampled_from(RONDEL))
        return {"type": "rondel", "nation": mover, "target": target}
    if phase == "pass_check":
        if draw(st.booleans()):
            return {"type": "allow_pass"}
        return {"type": "block_pass", "player": draw(st.sampled_from(players))}
    if draw(st.integers(0, 5)) == 0:
        return {"type": "skip"}
    if phase == "factory":
        return {"type": "build_factory", "city": draw(st.sampled_from(CITIES))}
    if phase == "production":
        return {"type": "produce"}
    if phase == "import":
        return {"type": "import", "units": draw(st.lists(st.sampled_from(UNITS), max_size=4))}
    return maneuver_action(state, mover, draw)


def maneuver_action(state, mover, draw):
    """Counters drawn mostly from what is on the board, so that many of them apply."""
    nations = {n.id: n for n in state.nations}
    others = [n for n in NATIONS if n != mover]
    action = {"type": "maneuver", "done": draw(st.booleans())}
    unit = draw(st.sampled_from(UNITS))
    attr = "armies" if unit == "army" else "fleets"
    enemies = [n for n in others if getattr(nations[n], attr) > 0]
    if getattr(nations[mover], attr) > 0 and enemies and draw(st.booleans()):
        action["battles"] = [{"against": draw(st.sampled_from(enemies)), "unit": unit}]
    if draw(st.booleans()):
        action["occupy"] = [{"owner": draw(st.sampled_from(others)), "city": draw(st.sampled_from(CITIES))}]
    held = [(n, c.id) for n in others for c in nations[n].cities if mover in c.occupiers]
    if held and draw(st.booleans()):
        owner, city = draw(st.sampled_from(held))
        action["vacate"] = [{"owner": owner, "city": city}]
    if draw(st.integers(0, 4)) == 0:
        action["destroy_factories"] = [{"owner": draw(st.sampled_from(others)), "city": draw(st.sampled_from(CITIES))}]
    flags = nations[mover].flags
    action["flags"] = {mover: draw(st.integers(-min(flags, 2), min(15 - flags, 5)))}
    return action


def check_invariants(state, before):
    assert money(state) == 0
    assert all(n.treasury >= 0 for n in state.nations)
    assert all(p.cash >= 0 for p in state.players)
    for old, now in zip(before.nations, state.nations):
        assert now.power_points >= old.power_points
        assert now.power_points <= 25
    if state.phase in ("rondel", "over"):
        for nation in state.nations:
            totals = {p.name: p.bond_total(nation.id) for p in state.players}
            if nation.government is None:
                assert max(totals.values()) == 0
            else:
                assert totals[nation.government] == max(totals.values())
        if before.phase == "investor":
            seats = [p.name for p in state.players]
            first = seats.index(before.investor_card)
            order = seats[first:] + seats[:first]
            for old, now in zip(before.nations, state.nations):
                if now.government != old.government:
                    # a change needs a strictly larger total, and ties go round from the card
                    totals = {p.name: p.bond_total(now.id) for p in state.players}
                    best = max(totals.values())
                    assert old.government is None or totals[old.government] < best
                    assert now.government == next(p for p in order if totals[p] == best)
    # every bond card is held at most once
    held = [b for p in state.players for b in p.bonds]
    assert len(held) == len(set(held))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    count=st.integers(2, 6),
    variant=st.sampled_from(["standard", "experienced"]),
    data=st.data(),
)
def test_random_play_keeps_money_power_and_governments_consistent(count, variant, data):
    state = new({"players": NAMES[:count], "variant": variant})
    check_invariants(state, state)
    for _ in range(data.draw(st.integers(30, 120), label="steps")):
        if state.phase == "over":
            break
        action = play_action(state, data.draw)
        try:
            following = act(state, action)
        except RuleError:
            continue
        check_invariants(following, state)
        state = following
    shown = view(state)
    assert json.loads(json.dumps(shown)) == shown


def other_cash(state, name, delta):
    """The same table but for `name`'s cash, the bank on the other side as always."""
    players = tuple(replace(p, cash=p.cash + delta) if p.name == name else p for p in state.players)
    return replace(state, players=players, bank=state.bank - delta)


def outcome(state, action):
    try:
        return act(state, action), None
    except RuleError as error:
        return None, str(error)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(count=st.integers(2, 6), variant=st.sampled_from(["standard", "experienced"]), data=st.data())
def test_hidden_cash_leaves_no_trace_on_the_page_or_in_the_scores(count, variant, data):
    """Non-interference: two tables alike but for a hidden player's cash look the same, and stay alike
    through any action both accept (refusals read the same too), until the game ends or the cash is shown."""
    state = new({"players": NAMES[:count], "variant": variant})
    for _ in range(data.draw(st.integers(20, 80), label="steps")):
        if state.phase == "over":
            break
        for name in state.hidden_cash:
            mine = next(p.cash for p in state.players if p.name == name)
            delta = data.draw(st.integers(-mine, 30).filter(bool), label="other cash")
            twin = other_cash(state, name, delta)
            assert view(twin) == view(state) and scores(twin) == scores(state), name
            action = play_action(state, data.draw)
            ours, our_error = outcome(state, action)
            theirs, their_error = outcome(twin, action)
            if ours is None and theirs is None:
                assert our_error == their_error, action
            elif ours is not None and theirs is not None and ours.phase != "over" and name in ours.hidden_cash:
                assert view(theirs) == view(ours), action
                assert scores(theirs) == scores(ours), action
        action = play_action(state, data.draw)
        try:
            state = act(state, action)
        except RuleError:
            continue
        shown = view(state)
        hidden = [p.name for p in state.players if p.name in state.hidden_cash and state.phase != "over"]
        assert shown["cash_hidden"] == hidden and sorted(scores(state)) == sorted(set(NAMES[:count]) - set(hidden))
        for player in shown["players"]:
            assert (player["cash"] is None) == (player["name"] in hidden) == (player["score"] is None)
        assert (shown["bank_paid_out"] is None) == bool(hidden)


@given(
    start=st.one_of(st.none(), st.sampled_from(RONDEL)),
    target=st.sampled_from(RONDEL),
    points=st.integers(0, 25),
)
def test_rondel_costs_never_exceed_three_paid_spaces(start, target, points):
    if start == target:
        return
    steps = (RONDEL.index(target) - RONDEL.index(start)) % 8 if start else 0
    if steps > 6:
        return
    cost = rondel_cost(start, target, points)
    assert cost == max(0, steps - 3) * (1 + power_factor(points))
    assert cost <= 3 * 6
    assert not (passes_investor(start, target) and steps < 2)


@given(
    factories=st.integers(0, 4),
    flags=st.integers(0, 15),
    units=st.integers(0, 16),
    treasury=st.integers(0, 60),
    points=st.integers(0, 25),
)
def test_taxation_balances_and_never_lowers_power(factories, flags, units, treasury, points):
    result = tax(factories, flags, units, treasury, points)
    assert result.treasury == treasury + result.revenue - result.soldiers_pay - result.bonus
    assert result.treasury >= 0
    assert result.bonus <= tax_chart(result.revenue)[0]
    assert points <= result.power_points <= 25
    assert result.game_over == (result.power_points == 25)
