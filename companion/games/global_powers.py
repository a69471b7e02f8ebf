"""Global Powers -- politicians, resources, evaluations, wars and votes, counted for the table.

The tracker keeps where every party's politicians are (home base, regions, UN,
Mauritius, out of the game), the chips in each region, the markers, the cards in
each hand, and whose turn it is. It works out governments, strength of
government, live victory points with their breakdown, the dominance victory,
and the evaluation with the UN step. Dice come inside the actions.

The pure rules live in global_powers_rules.py and the region actions and cards
in global_powers_actions.py; this module is the engine the daemon loads.
"""

from __future__ import annotations

import copy
from typing import Any, Mapping

from companion.games.base import Engine, field, require
from companion.games.names import player_name
from companion.games.global_powers_actions import CARD_EFFECTS, REGION_ACTIONS
from companion.games.global_powers_rules import (
    CHIP_CAP,
    CHIPS,
    COLOURS,
    DECK,
    HAND,
    HOME_POLITICIANS,
    MARKERS,
    POLITICIANS,
    SANCTION_HALVING,
    REGIONS,
    START_CHIPS,
    SUPPLY,
    base,
    counts_map,
    errors_as_rules,
    evaluate,
    evaluation_breakdown,
    governed,
    governors,
    in_regions,
    live_vp,
    mauritius_counts,
    move_politicians,
    party,
    pool,
    putsch,
    region,
    region_snapshot,
    roll,
    strength,
    take_chips,
    need_marker,
    state_breakdown,
    un_counts,
    vp_to_win,
    war,
    war_odds,
    whole,
)

__all__ = ["ENGINE", "evaluate", "evaluation_breakdown", "putsch", "vp_to_win", "war", "war_odds"]

UN_TROOPS = 3
OPTION_KEYS = ("players", "first", "extended", "sanction_halving")


# ---------------------------------------------------------------- new


def _option_players(options: Mapping[str, Any]) -> tuple[list[str], dict[str, str]]:
    players = options.get("players", 3)
    if type(players) is int:
        # A bare count names the parties after their colours.
        require(2 <= players <= 5, f"'players': Global Powers takes 2 to 5 players, not {players}")
        players = [c.capitalize() for c in COLOURS[:players]]
    require(isinstance(players, (list, tuple)), "'players' must list 2 to 5 players")
    require(2 <= len(players) <= 5, f"'players': Global Powers takes 2 to 5 players, not {len(players)}")
    names: list[str] = []
    colours: dict[str, str] = {}
    for entry in players:
        if isinstance(entry, str):
            entry = {"name": entry}
        require(isinstance(entry, Mapping), "'players': each player is a name or {name, colour}")
        for key in entry:
            require(key in ("name", "colour"), f"'players': unknown key {key!r}")
        name = entry.get("name")
        require(isinstance(name, str) and name.strip(), "'players': every player needs a name")
        name = player_name(name.strip(), "'players': a player's name")
        require(name not in names, f"'players': {name!r} appears twice")
        colour = entry.get("colour")
        if colour is None:
            # A party named after a colour gets it; the rest take the first colour still free.
            free = [c for c in COLOURS if c not in colours.values()]
            named = name.lower()
            colour = named if named in free else free[0]
        require(colour in COLOURS, f"'players': {name}'s colour must be one of {', '.join(COLOURS)}")
        require(colour not in colours.values(), f"'players': colour {colour} is taken twice")
        names.append(name)
        colours[name] = colour
    return names, colours


def new(options: Mapping[str, Any]) -> dict[str, Any]:
    """A game at the auction of the regions."""
    require(isinstance(options, Mapping), "options must be a mapping")
    for key in options:
        require(key in OPTION_KEYS, f"unknown option '{key}' (known: {', '.join(OPTION_KEYS)})")
    names, colours = _option_players(options)
    first = options.get("first")
    require(first is None or first in names, f"'first' must be one of the players, not {first!r}")
    extended = options.get("extended", False)
    require(isinstance(extended, bool), "'extended' must be true or false")
    halving = options.get("sanction_halving", "region")
    require(halving in SANCTION_HALVING, f"'sanction_halving' must be one of {', '.join(SANCTION_HALVING)}, not {halving!r}")
    return {
        "game": "global_powers",
        "parties": names,
        "colours": colours,
        "extended": extended,
        "sanction_halving": halving,
        "first": first,
        "regions": {
            name: {
                "politicians": {},
                **{c: START_CHIPS.get(name, {}).get(c, 0) for c in CHIPS},
                "done": False,
                "sanctioned": False,
                "disarmed": False,
                "protectorate": False,
            }
            for name in REGIONS
        },
        "party": {
            p: {"un": 0, "mauritius": 0, "removed": 0, "hand": HAND, "deck": DECK - HAND, "played": 0, "warmonger": 0}
            for p in names
        },
        "dominance": len(REGIONS) - len(names),
        "phase": "setup",
        "auctioned": 0,
        "turn": None,
        "next_player": None,
        "evaluations": 0,
        "peace": False,
        "pacts": [],
        "un_intervention_open": False,
        "last_auction": None,
        "last_evaluation": None,
        "last_war": None,
        "last_vote": None,
        "last_card": None,
        "last_intervention": None,
        "winner": None,
        "end_reason": None,
    }


# ---------------------------------------------------------------- helpers


def _begin_turn(state: dict[str, Any], player: str, number: int, round_: int) -> None:
    state["turn"] = {
        "number": number,      # turns played in all, this one included (each party's turn counts one)
        # The game goes in rounds of the regions: each ends in an evaluation once every region has acted
        # (cards, markers and the dominance marker go by it), so that is the count the table keeps.
        "round": round_,
        "player": player,
        "started": False,
        "region": None,
        "actions_left": 0,
        "card": None,
        "log": [],
    }


def _weakest(state: Mapping[str, Any]) -> str | None:
    """The weakest party overall (fewest politicians in regions, then fewest in the UN, then most in Mauritius)."""
    tied = _weakest_tied(state)
    return tied[0] if len(tied) == 1 else None


def _weakest_tied(state: Mapping[str, Any]) -> list[str]:
    """Every party that ranks weakest (more than one: a tie, which the dice settle), in seating order."""
    def rank(p: str) -> tuple[int, int, int]:
        return (in_regions(state, p), state["party"][p]["un"], -state["party"][p]["mauritius"])

    low = min(rank(p) for p in state["parties"])
    return [p for p in state["parties"] if rank(p) == low]


def _next_party(state: Mapping[str, Any], player: str) -> str:
    order = state["parties"]
    return order[(order.index(player) + 1) % len(order)]


def _check_dominance(state: dict[str, Any]) -> None:
    if state["winner"] is not None or state["phase"] in ("setup", "over"):
        return
    counts = {p: len(governed(state, p)) for p in state["parties"]}
    reached = [p for p, n in counts.items() if n >= state["dominance"]]
    if not reached:
        return
    best = max(counts[p] for p in reached)
    reached = [p for p in reached if counts[p] == best]
    active = state["turn"]["player"] if state["turn"] else None
    winner = active if active in reached else reached[0]
    state["winner"] = winner
    state["phase"] = "over"
    state["end_reason"] = f"{winner} governs {counts[winner]} regions (dominance marker at {state['dominance']})"


def _pending_regions(state: Mapping[str, Any]) -> list[str]:
    return [n for n in REGIONS if not state["regions"][n]["done"] and state["regions"][n]["politicians"]]


def _draw_cards(p: dict[str, Any]) -> None:
    while p["hand"] < HAND:
        if p["deck"] == 0:
            if p["played"] == 0:
                return
            p["deck"], p["played"] = p["played"], 0
        p["deck"] -= 1
        p["hand"] += 1


# ---------------------------------------------------------------- set-up and corrections


def _auction(state: dict[str, Any], action: Mapping[str, Any]) -> None:
    require(state["phase"] == "setup", "regions are auctioned only during the set-up")
    require(state["auctioned"] < len(REGIONS), "every region has been auctioned")
    where = region(field(action, "region", str))
    expected = REGIONS[state["auctioned"]]
    require(where == expected, f"'region': the auction goes in order; next is {expected}")
    offers = counts_map(action, "offers", lambda n: party(state, n, "offers"))
    for who, n in offers.items():
        # Each bidder keeps at least one politician at home.
        require(n <= base(state, who) - 1, f"'offers': {who} can offer at most {base(state, who) - 1}")
    bids = {p: n for p, n in offers.items() if n > 0}
    placed: dict[str, int] = {}
    exiled = None
    if bids:
        top = max(bids.values())
        winners = [p for p, n in bids.items() if n == top]
        for who in winners:
            placed[who] = top
        if len(winners) == 1:
            exiled = winners[0]
            rest = [n for p, n in bids.items() if p != exiled]
            if rest:
                second = max(rest)
                for who, n in bids.items():
                    if n == second and who != exiled:
                        placed[who] = n
    for who, n in placed.items():
        move_politicians(state, who, n, "base", where)
    if exiled is not None:
        move_politicians(state, exiled, 1, "base", "mauritius")
    state["auctioned"] += 1
    state["last_auction"] = {"region": where, "offers": offers, "placed": placed, "to_mauritius": exiled}


def _set_region(state: dict[str, Any], action: Mapping[str, Any]) -> None:
    where = region(field(action, "region", str))
    r = state["regions"][where]
    if "politicians" in action:
        wanted = counts_map(action, "politicians", lambda n: party(state, n, "politicians"))
        for who in state["parties"]:
            have = r["politicians"].get(who, 0)
            extra = wanted.get(who, 0) - have
            require(extra <= base(state, who), f"'politicians': {who} has only {base(state, who)} more politicians at home")
        r["politicians"] = {p: n for p, n in wanted.items() if n > 0}
    for chip in CHIPS:
        if chip in action:
            n = whole(action, chip, 0, CHIP_CAP)
            require(n - r[chip] <= pool(state, chip), f"'{chip}': only {pool(state, chip)} more {chip} chips in the supply")
            r[chip] = n
    for flag in ("done", "sanctioned", "disarmed", "protectorate"):
        if flag in action:
            value = field(action, flag, bool)
            if value and flag in MARKERS:
                need_marker(state, flag, where)
            r[flag] = value
    _check_dominance(state)


def _set_party(state: dict[str, Any], action: Mapping[str, Any]) -> None:
    who = party(state, field(action, "party", str))
    p = state["party"][who]
    updated = dict(p)
    for key in ("un", "mauritius", "removed", "hand", "deck", "played", "warmonger"):
        if key in action:
            updated[key] = whole(action, key, 0, POLITICIANS if key in ("un", "mauritius", "removed") else DECK)
    spare = POLITICIANS - in_regions(state, who) - updated["un"] - updated["mauritius"] - updated["removed"]
    require(spare >= 0, f"{who} has only {POLITICIANS} politicians in all")
    cards = updated["hand"] + updated["deck"] + updated["played"] + updated["warmonger"]
    require(cards == DECK, f"{who}'s hand, deck, played cards and a kept warmonger must add up to {DECK}, not {cards}")
    require(updated["hand"] <= HAND, f"a hand holds at most {HAND} cards")
    state["party"][who] = updated
    _check_dominance(state)


def _start(state: dict[str, Any], action: Mapping[str, Any]) -> None:
    require(state["phase"] == "setup", "the game has already started")
    first = action.get("first", state["first"])
    if first is None:
        first = _first_by_roll(state, action) if _weakest(state) is None else _weakest(state)
    first = party(state, first, "first")
    state["phase"] = "play"
    _begin_turn(state, first, 1, 1)
    _check_dominance(state)


def _first_by_roll(state: Mapping[str, Any], action: Mapping[str, Any]) -> str:
    """The weakest parties are tied (as they all are when the auction is skipped): a die each, the highest starts."""
    tied = _weakest_tied(state)
    who = ", ".join(tied[:-1]) + " and " + tied[-1]
    rolls = action.get("tie_rolls")
    require(rolls is not None, f"{who} are tied as the weakest party: roll a die each (the highest goes first), or name the first player")
    require(isinstance(rolls, Mapping) and sorted(rolls) == sorted(tied), f"'tie_rolls': one die for each of {who}")
    for p, value in rolls.items():
        require(type(value) is int and 1 <= value <= 6, f"'tie_rolls': {p}'s die shows 1 to 6, not {value!r}")
    best = max(rolls.values())
    top = [p for p in tied if rolls[p] == best]
    require(len(top) == 1, f"{' and '.join(top)} both rolled {best}: roll again")
    return top[0]


# ---------------------------------------------------------------- turns


def _recall(state: dict[str, Any], action: Mapping[str, Any]) -> None:
    who = party(state, field(action, "party", str))
    where = region(field(action, "region", str))
    n = whole(action, "n", 1, default=1)
    turn = state["turn"]
    vetoing = turn["region"] == where
    recalling = who == turn["player"] and not turn["started"]
    require(
        vetoing or recalling,
        "politicians go home only at the start of their party's turn, or in a veto or forced ballot in the active region",
    )
    move_politicians(state, who, n, where, "base")
    turn["log"].append({"action": "recall", "party": who, "region": where, "n": n})


def _activate(state: dict[str, Any], action: Mapping[str, Any]) -> None:
    turn = state["turn"]
    require(not turn["started"], f"{turn['player']} has already played a card or activated a region this turn")
    where = region(field(action, "region", str))
    r = state["regions"][where]
    require(not r["done"], f"{where} has already been activated this round")
    require(r["politicians"], f"{where} is empty: empty regions are skipped")
    r["done"] = True
    turn.update({"started": True, "region": where, "actions_left": strength(state, where)})
    state["un_intervention_open"] = False


def _play_card(state: dict[str, Any], action: Mapping[str, Any]) -> None:
    turn = state["turn"]
    player = turn["player"]
    require(not turn["started"], f"{player} has already played a card or activated a region this turn")
    card = field(action, "card", str)
    require(card in CARD_EFFECTS, f"'card' must be one of {', '.join(CARD_EFFECTS)}")
    require(state["party"][player]["hand"] > 0, f"{player} has no card in hand")
    result = CARD_EFFECTS[card](state, action, player)
    p = state["party"][player]
    p["hand"] -= 1
    # A kept warmonger lies in front of the player, not on the played pile, until it is used.
    if not (card == "warmonger" and result.get("use") == "keep"):
        p["played"] += 1
    turn.update({"started": True, "card": card})
    state["un_intervention_open"] = False
    state["last_card"] = {"card": card, "player": player, **result}
    turn["log"].append({"action": "card", "card": card})


def _end_turn(state: dict[str, Any], action: Mapping[str, Any]) -> None:
    turn = state["turn"]
    player = turn["player"]
    pending = _pending_regions(state)
    require(
        turn["started"] or (state["party"][player]["hand"] == 0 and not pending),
        f"{player} must play a card or activate a region first",
    )
    following = _next_party(state, player)
    if not pending:
        state["phase"] = "evaluation"
        state["next_player"] = following
        return
    _begin_turn(state, following, turn["number"] + 1, turn["round"])


def _sources(state: Mapping[str, Any], action: Mapping[str, Any], key: str, who: str, need: int) -> dict[str, int]:
    """Where a party's politicians come from for the UN step: home first unless the action says otherwise."""
    given = field(action, key, Mapping, default={})
    raw = given.get(who)
    available = base(state, who) + in_regions(state, who)
    need = min(need, available)
    if raw is None:
        require(
            base(state, who) >= need,
            f"'{key}': {who} must take {need} politicians partly from regions - say which ({{'base': n, region: n}})",
        )
        return {"base": need} if need else {}
    require(isinstance(raw, Mapping), f"'{key}': {who}'s sources must map 'base' or a region to a number")
    sources: dict[str, int] = {}
    for where, n in raw.items():
        name = "base" if where == "base" else region(where, key)
        require(type(n) is int and n >= 0, f"'{key}': {who} gives a bad number for {where}")
        sources[name] = n
    require(sum(sources.values()) == need, f"'{key}': {who} must give exactly {need} politicians")
    return sources


def _evaluate(state: dict[str, Any], action: Mapping[str, Any]) -> None:
    require(state["phase"] == "evaluation", "an evaluation comes once every region has been activated")
    parties = state["parties"]
    breakdown = state_breakdown(state)
    vp = {p: sum(line["vp"] for line in breakdown.get(p, [])) for p in parties}
    needed = vp_to_win(len(parties))
    record: dict[str, Any] = {
        "number": state["evaluations"] + 1,
        "vp": vp,
        "breakdown": {p: breakdown.get(p, []) for p in parties},
        "needed": needed,
        "winner": None,
        "un_sent": {},
        "removed": {},
    }
    state["last_evaluation"] = record
    state["evaluations"] += 1
    top = max(vp.values())
    if top >= needed:
        _declare_winner(state, action, vp, f"{top} VP at evaluation {record['number']} (needs {needed})")
        record["winner"] = state["winner"]
        return
    # Retired politicians come home once they have cost their points.
    for who in parties:
        move_politicians(state, who, state["party"][who]["mauritius"], "mauritius", "base")
    order = _un_order(state, action, vp)
    for i, who in enumerate(order):
        sent = _sources(state, action, "un_from", who, i + 1)
        for source, n in sent.items():
            move_politicians(state, who, n, source, "un")
        record["un_sent"][who] = sum(sent.values())
    for i, who in enumerate(order):
        gone = _sources(state, action, "remove_from", who, len(parties) - (i + 1))
        for source, n in gone.items():
            move_politicians(state, who, n, source, "removed")
        record["removed"][who] = sum(gone.values())
    if all(base(state, p) + in_regions(state, p) == 0 for p in parties):
        _declare_winner(state, action, vp, "no politicians are left at home or in the regions")
        record["winner"] = state["winner"]
        return
    for r in state["regions"].values():
        r.update({"done": False, "sanctioned": False, "disarmed": False, "protectorate": False})
    state["peace"] = False
    state["pacts"] = []
    discards = counts_map(action, "discard", lambda n: party(state, n, "discard"), default={})
    for who in parties:
        p = state["party"][who]
        n = discards.get(who, 0)
        require(n <= p["hand"], f"'discard': {who} holds only {p['hand']} cards")
        # A warmonger still lying in front of its player is discarded by the evaluation.
        p["played"] += n + p["warmonger"]
        p["hand"] -= n
        p["warmonger"] = 0
        _draw_cards(p)
    state["dominance"] = max(1, state["dominance"] - 1)
    state["phase"] = "play"
    state["un_intervention_open"] = state["extended"]
    # the evaluation closes the round; the seating goes on where it stopped
    _begin_turn(state, state["next_player"], state["turn"]["number"] + 1, state["turn"]["round"] + 1)
    state["next_player"] = None
    _check_dominance(state)


def _un_order(state: Mapping[str, Any], action: Mapping[str, Any], vp: Mapping[str, int]) -> list[str]:
    """Parties from lowest VP to highest; ties settled by the dice, given as 'un_order'."""
    if "un_order" in action:
        order = [party(state, p, "un_order") for p in field(action, "un_order", list)]
        require(sorted(order) == sorted(state["parties"]), "'un_order' must list every party once")
        for a, b in zip(order, order[1:]):
            require(vp[a] <= vp[b], f"'un_order': {a} has more VP than {b}")
        return order
    order = sorted(state["parties"], key=lambda p: vp[p])
    for a, b in zip(order, order[1:]):
        require(vp[a] != vp[b], f"'un_order': {a} and {b} are tied on {vp[a]} VP - roll and give the order")
    return order


def _declare_winner(state: dict[str, Any], action: Mapping[str, Any], vp: Mapping[str, int], reason: str) -> None:
    top = max(vp.values())
    leaders = [p for p in state["parties"] if vp[p] == top]
    if len(leaders) > 1:
        chosen = field(action, "winner", str, default=None)
        require(chosen in leaders, f"'winner': {', '.join(leaders)} are tied on {top} VP - roll and name the winner")
        leaders = [chosen]
    state["winner"] = leaders[0]
    state["phase"] = "over"
    state["end_reason"] = reason


def _un_intervention(state: dict[str, Any], action: Mapping[str, Any]) -> None:
    require(state["extended"], "UN troops belong to the extended rules")
    require(state["un_intervention_open"], "the UN sends troops only right after an evaluation, before the next turn")
    where = region(field(action, "region", str))
    r = state["regions"][where]
    require(r["politicians"], f"{where} is empty")
    # A victory makes the region a protectorate, so the UN cannot go without a marker to lay.
    need_marker(state, "protectorate", where)
    outcome = errors_as_rules(war, UN_TROOPS, r["military"], roll(action, "un_roll"), roll(action, "region_roll"))
    removed: dict[str, int] = {}
    if outcome["winner"] == "attacker":
        for who in governors(state, where):
            n = min(outcome["replaced"], r["politicians"].get(who, 0))
            move_politicians(state, who, n, where, "base")
            removed[who] = n
        r["protectorate"] = True
        take_chips(state, where, "military", 1, partial=True)
        take_chips(state, where, "economy", 1, partial=True)
    else:
        # The UN never loses politicians; the region still pays for the fighting.
        take_chips(state, where, "military", 1, partial=True)
    state["un_intervention_open"] = False
    state["last_intervention"] = {"region": where, **outcome, "removed": removed}
    _check_dominance(state)


SETUP_ACTIONS = {"auction": _auction, "start": _start}
TABLE_ACTIONS = {"set_region": _set_region, "set_party": _set_party}
PLAY_ACTIONS = {
    "recall": _recall,
    "activate": _activate,
    "play_card": _play_card,
    "end_turn": _end_turn,
    "un_intervention": _un_intervention,
    **REGION_ACTIONS,
}
EVALUATION_ACTIONS = {"evaluate": _evaluate}
ACTION_TYPES = tuple(SETUP_ACTIONS) + tuple(TABLE_ACTIONS) + tuple(PLAY_ACTIONS) + tuple(EVALUATION_ACTIONS)


def act(state: Mapping[str, Any], action: Mapping[str, Any]) -> dict[str, Any]:
    """Apply one action to a copy of `state`; RuleError if the rules forbid it."""
    require(isinstance(action, Mapping), "an action must be a mapping")
    kind = field(action, "type", str)
    require(kind in ACTION_TYPES, f"unknown action type {kind!r} (known: {', '.join(ACTION_TYPES)})")
    require(state["phase"] != "over", f"the game is over: {state['winner']} won")
    if kind in PLAY_ACTIONS:
        require(state["phase"] == "play", "finish the set-up first" if state["phase"] == "setup" else "the evaluation comes first")
        if "player" in action:
            actor = field(action, "player", str)
            require(actor == state["turn"]["player"], f"it is {state['turn']['player']}'s turn, not {actor}'s")
    if kind in EVALUATION_ACTIONS:
        require(state["phase"] == "evaluation", "an evaluation comes once every region has been activated")
    new_state = copy.deepcopy(dict(state))
    handler = SETUP_ACTIONS.get(kind) or TABLE_ACTIONS.get(kind) or PLAY_ACTIONS.get(kind) or EVALUATION_ACTIONS[kind]
    handler(new_state, action)
    if kind in PLAY_ACTIONS:
        _check_dominance(new_state)
    return new_state


# ---------------------------------------------------------------- view


def _message(state: Mapping[str, Any]) -> str:
    phase = state["phase"]
    if phase == "over":
        return f"{state['winner']} wins: {state['end_reason']}."
    if phase == "setup":
        if state["auctioned"] < len(REGIONS):
            return f"Set-up: auction {REGIONS[state['auctioned']]} (region {state['auctioned'] + 1} of {len(REGIONS)}), or enter the regions by hand."
        tied = _weakest_tied(state)
        if len(tied) == 1:
            return f"Set-up done: start the game ({tied[0]} goes first)."
        return f"Set-up done: start the game ({', '.join(tied[:-1])} and {tied[-1]} are tied as the weakest: the dice decide who goes first)."
    if phase == "evaluation":
        return "Every region has acted: run the evaluation."
    turn = state["turn"]
    player = turn["player"]
    if turn["region"] is not None:
        gov = governors(state, turn["region"])
        who = " and ".join(gov) if gov else "nobody"
        if turn["actions_left"]:
            return f"{turn['region']} ({who}) has {turn['actions_left']} action(s) left; {player} ends the turn when done."
        return f"{turn['region']} has used its actions: {player} ends the turn."
    if turn["card"] is not None:
        return f"{player} played {turn['card'].replace('_', ' ')}: end the turn."
    return f"{player}: recall politicians if you wish, then play a card or activate a region."


def _region_view(state: Mapping[str, Any], name: str, vp_lines: Mapping[str, list[dict[str, Any]]]) -> dict[str, Any]:
    r = state["regions"][name]
    gov = governors(state, name)
    return {
        "name": name,
        "politicians": dict(r["politicians"]),
        "chips": {c: r[c] for c in CHIPS},
        "government": gov,
        "strength": strength(state, name),
        "done": r["done"],
        "sanctioned": r["sanctioned"],
        "disarmed": r["disarmed"],
        "protectorate": r["protectorate"],
        "home": HOME_POLITICIANS[name],
        "vp": {
            p: sum(line["vp"] for line in lines if line["region"] == name)
            for p, lines in vp_lines.items()
            if any(line["region"] == name for line in lines)
        },
    }


def _evaluation_view(state: Mapping[str, Any], vp: Mapping[str, int]) -> dict[str, Any] | None:
    """What the evaluation will ask the table, so the page offers those inputs and no others.

    `ends`: "vp" when the count wins the game (no UN step), "no_politicians" when the UN step
    leaves nobody at home or in the regions, else None; `tie_for_win`: the leaders to choose from
    (`winner`) when the game ends on a tie; `order`: lowest VP first, `tied`: the groups whose
    order the dice settle (`un_order`); `home` (Mauritius back home included) and `regions` per
    party are where the UN envoys and the removed politicians can come from (`un_from`,
    `remove_from`). The party at position i (from 0) sends min(i + 1, available) to the UN and then
    removes min(parties - i - 1, what is left); `_evaluate` takes them from home unless told.
    """
    if state["phase"] != "evaluation":
        return None
    parties = state["parties"]
    n = len(parties)
    needed = vp_to_win(n)
    top = max(vp.values())
    leaders = [p for p in parties if vp[p] == top]
    home = {p: base(state, p) + state["party"][p]["mauritius"] for p in parties}
    available = {p: home[p] + in_regions(state, p) for p in parties}
    # Each party gives up min(available, parties) in all, whatever the order: nobody is left if all have at most that.
    ends = "vp" if top >= needed else "no_politicians" if all(available[p] <= n for p in parties) else None
    order = sorted(parties, key=lambda p: vp[p])
    tied = [] if ends == "vp" else [group for group in ([p for p in order if vp[p] == v] for v in sorted(set(vp.values()))) if len(group) > 1]
    return {
        "vp": dict(vp),
        "needed": needed,
        "ends": ends,
        "tie_for_win": leaders if ends and len(leaders) > 1 else [],
        "order": order,
        "tied": tied,
        "home": home,
        "available": available,
        "regions": {p: {r: state["regions"][r]["politicians"][p] for r in REGIONS if state["regions"][r]["politicians"].get(p)} for p in parties},
    }


def view(state: Mapping[str, Any]) -> dict[str, Any]:
    """Everything the page shows, as JSON-safe data."""
    lines = state_breakdown(state)
    vp = {p: sum(line["vp"] for line in lines.get(p, [])) for p in state["parties"]}
    rows = []
    for who in state["parties"]:
        p = state["party"][who]
        rows.append(
            {
                "name": who,
                "colour": state["colours"][who],
                "vp": vp[who],
                "breakdown": [dict(line) for line in lines.get(who, [])],
                "base": base(state, who),
                "in_regions": in_regions(state, who),
                "un": p["un"],
                "mauritius": p["mauritius"],
                "removed": p["removed"],
                "hand": p["hand"],
                "deck": p["deck"],
                "played": p["played"],
                "warmonger": p["warmonger"],
                "governs": governed(state, who),
            }
        )
    turn = state["turn"]
    odds = []
    if turn is not None and turn["region"] is not None:
        mine = state["regions"][turn["region"]]
        for other in REGIONS:
            if other != turn["region"] and state["regions"][other]["politicians"]:
                chances = war_odds(mine["military"], state["regions"][other]["military"])
                odds.append({"target": other, **chances})
    return {
        "game": "global_powers",
        "title": ENGINE.title,
        "phase": state["phase"],
        "extended": state["extended"],
        "players": rows,
        "vp_to_win": vp_to_win(len(state["parties"])),
        "dominance": state["dominance"],
        "evaluations": state["evaluations"],
        "regions": [_region_view(state, n, lines) for n in REGIONS],
        "regions_done": sum(1 for n in REGIONS if state["regions"][n]["done"]),
        "regions_pending": _pending_regions(state),
        "weakest": _weakest_tied(state) if state["phase"] == "setup" else [],
        "next_auction": REGIONS[state["auctioned"]] if state["phase"] == "setup" and state["auctioned"] < len(REGIONS) else None,
        "supply": {c: pool(state, c) for c in CHIPS},
        "supply_total": dict(SUPPLY),
        "turn": None if turn is None else {
            "number": turn["number"],
            "round": turn["round"],
            "player": turn["player"],
            "started": turn["started"],
            "region": turn["region"],
            "actions_left": turn["actions_left"],
            "government": governors(state, turn["region"]) if turn["region"] else [],
            "card": turn["card"],
            "log": [dict(entry) for entry in turn["log"]],
        },
        "war_odds": odds,
        "peace": state["peace"],
        "pacts": [list(p) for p in state["pacts"]],
        "un_intervention_open": state["un_intervention_open"],
        "cards": list(CARD_EFFECTS),
        "region_actions": list(REGION_ACTIONS),
        "last_auction": copy.deepcopy(state["last_auction"]),
        "last_evaluation": copy.deepcopy(state["last_evaluation"]),
        "last_war": copy.deepcopy(state["last_war"]),
        "last_vote": copy.deepcopy(state["last_vote"]),
        "last_card": copy.deepcopy(state["last_card"]),
        "last_intervention": copy.deepcopy(state["last_intervention"]),
        "evaluation": _evaluation_view(state, vp),
        "winner": state["winner"],
        "over": state["phase"] == "over",
        "message": _message(state),
    }


def scores(state: Mapping[str, Any]) -> dict[str, int]:
    """Each party's VP if the evaluation were held now."""
    return live_vp(state)


ENGINE = Engine(name="global_powers", title="Global Powers", new=new, act=act, view=view, scores=scores, seats=(2, 5, 3),
                default_names=tuple(c.capitalize() for c in COLOURS), colours=tuple(COLOURS),
                setup_options=(
                    {"key": "extended", "kind": "bool", "default": False, "label": "Extended game",
                     "help": "the rulebook's extended rules (UN troops after each evaluation among them)"},
                    {"key": "sanction_halving", "label": "A sanctioned region gives", "kind": "choice",
                     "help": "how the half of a sanctioned region's points is counted",
                     "choices": [{"label": "half of its total, rounded down (our reading)", "options": {"sanction_halving": "region"}},
                                 {"label": "half of each line, each rounded down", "options": {"sanction_halving": "each_line"}}]},
                ),
                option_keys=OPTION_KEYS)
