"""Global Powers: what a government does with an activated region, and the player cards.

Each handler receives a private copy of the state and the raw action, checks
everything first and then changes the copy. Ballots, vetoes and forced actions
are played out at the table; the tracker records the outcome (and the recalls
that vetoes and forcing cost, through the 'recall' action).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from companion.games.base import RuleError, field, require
from companion.games.names import note
from companion.games.global_powers_rules import (
    BORDERS_COMPLETE,
    CHIP_CAP,
    CHIPS,
    NEIGHBOURS,
    base,
    check_neighbours,
    counts_map,
    errors_as_rules,
    governors,
    move_politicians,
    need_marker,
    party,
    pool,
    putsch,
    region,
    roll,
    strength,
    take_chips,
    war,
    whole,
)

Handler = Callable[[dict[str, Any], Mapping[str, Any]], None]

APPLICATIONS = ("ban", "disarmament", "sanction", "end_sanction")
CONVERSIONS = {
    # name: (chip given, chips gained, chip kind gained)
    "mine": ("raw", 3, "economy"),
    "grow": ("economy", 2, "economy"),
    "diplomacy": ("economy", 2, "diplomacy"),
    "arm": ("economy", 1, "military"),
}
def _current(state: dict[str, Any]) -> str:
    turn = state["turn"]
    require(turn["region"] is not None, "activate a region before its government acts")
    require(turn["actions_left"] > 0, f"{turn['region']}'s government has used all its actions")
    require(state["regions"][turn["region"]]["politicians"], f"{turn['region']} has no government left to act")
    return turn["region"]


def _acting_party(state: dict[str, Any], action: Mapping[str, Any], where: str) -> str:
    """The governing party carrying out an action (named, unless only one party governs)."""
    gov = governors(state, where)
    require(gov, f"{where} has no government")
    if "party" not in action:
        require(len(gov) == 1, f"{where} is governed by {', '.join(gov)}: say which 'party' acts")
        return gov[0]
    who = party(state, action["party"])
    require(who in gov, f"'party': {who} is not in {where}'s government")
    return who


def _spend_action(state: dict[str, Any], record: dict[str, Any]) -> None:
    state["turn"]["actions_left"] -= 1
    state["turn"]["log"].append(record)


def _no_sanction(state: Mapping[str, Any], where: str) -> None:
    require(not state["regions"][where]["sanctioned"], f"{where} is under sanctions: it can only apply to end them")


# ---------------------------------------------------------------- region actions


def budget(state: dict[str, Any], action: Mapping[str, Any]) -> None:
    where = _current(state)
    _no_sanction(state, where)
    conversion = field(action, "conversion", str)
    require(conversion in CONVERSIONS, f"'conversion' must be one of {', '.join(CONVERSIONS)}")
    give, gain, kind = CONVERSIONS[conversion]
    r = state["regions"][where]
    require(r[give] >= 1, f"{where} has no {give} chip to transform")
    after = r[kind] - (1 if give == kind else 0) + gain
    require(after <= CHIP_CAP, f"{where} would hold {after} {kind} chips; the limit is {CHIP_CAP}")
    net = gain - (1 if give == kind else 0)
    require(pool(state, kind) >= net, f"only {pool(state, kind)} {kind} chips are left in the supply")
    require(not (kind == "military" and r["disarmed"]), f"{where} is disarmed: no new military chips until the evaluation")
    die = roll(action, "roll") if give == "raw" else None
    retreat: list[str] = []
    if die == 1:
        # Environmentalists chase one politician of every governing party off to Mauritius.
        retreat = governors(state, where)
    take_chips(state, where, give, 1)
    r[kind] += gain
    for who in retreat:
        move_politicians(state, who, 1, where, "mauritius")
    _spend_action(state, {"action": "budget", "conversion": conversion, "roll": die, "retreated": retreat})


def _war_side_bonus(state: dict[str, Any], action: Mapping[str, Any], side_regions: dict[str, str]) -> dict[str, int]:
    bonus = {"attacker": 0, "defender": 0}
    for who in field(action, "warmonger", list, default=[]):
        who = party(state, who, "warmonger")
        require(state["party"][who]["warmonger"] > 0, f"'warmonger': {who} has no warmonger card in front of them")
        sides = [side for side, where in side_regions.items() if who in governors(state, where)]
        require(sides, f"'warmonger': {who} governs neither region at war")
        bonus[sides[0]] += 1
        state["party"][who]["warmonger"] -= 1
        state["party"][who]["played"] += 1
    return bonus


def fight(state: dict[str, Any], action: Mapping[str, Any], attacker: str, defender: str) -> dict[str, Any]:
    """Resolve a war between two regions (shared by the war action and nothing else that rolls)."""
    require(attacker != defender, "a region cannot make war on itself")
    require(state["regions"][defender]["politicians"], f"{defender} is empty: empty regions cannot be attacked")
    require(not state["peace"], "a peace initiative forbids war until the evaluation")
    for pact in state["pacts"]:
        require(set(pact) != {attacker, defender}, f"a non-aggression pact forbids war between {attacker} and {defender}")
    check_neighbours(attacker, defender, "'target'")
    a_roll, d_roll = roll(action, "attacker_roll"), roll(action, "defender_roll")
    bonus = _war_side_bonus(state, action, {"attacker": attacker, "defender": defender})
    ra, rd = state["regions"][attacker], state["regions"][defender]
    outcome = errors_as_rules(war, ra["military"], rd["military"], a_roll, d_roll, bonus["attacker"], bonus["defender"])
    record = {"attacker": attacker, "defender": defender, **outcome, "attacker_roll": a_roll, "defender_roll": d_roll}
    if outcome["winner"] is None:
        take_chips(state, attacker, "military", 1, partial=True)
        take_chips(state, defender, "military", 1, partial=True)
        record.update({"removed": {}, "added": {}})
        return record
    won, lost = (attacker, defender) if outcome["winner"] == "attacker" else (defender, attacker)
    winners, losers = governors(state, won), governors(state, lost)
    # Nobody can be replaced beyond what the beaten government has in the region.
    most = max(state["regions"][lost]["politicians"].get(who, 0) for who in losers)
    limit = min(outcome["replaced"], most)
    replace = whole(action, "replace", 0, limit, default=limit)
    added = counts_map(action, "added", lambda n: party(state, n, "added"), default={})
    if not added and replace:
        require(len(winners) == 1, f"{won} is governed by {', '.join(winners)}: give 'added' to split the new politicians")
        # The winner may replace fewer than the difference, e.g. when short of politicians at home.
        replace = min(replace, base(state, winners[0]))
        added = {winners[0]: replace}
    require(sum(added.values()) == replace, f"'added' must place {replace} politicians in all")
    for who, n in added.items():
        require(who in winners, f"'added': {who} is not in {won}'s government")
        require(base(state, who) >= n, f"'added': {who} has only {base(state, who)} politicians at home")
    # Every party of the beaten government loses up to the replaced number on its own.
    removed = {who: min(replace, state["regions"][lost]["politicians"].get(who, 0)) for who in losers}
    for who, n in removed.items():
        move_politicians(state, who, n, lost, "base")
    for who, n in added.items():
        move_politicians(state, who, n, "base", lost)
    take_chips(state, won, "military", 1, partial=True)
    take_chips(state, lost, "military", 1, partial=True)
    take_chips(state, lost, "economy", 1, partial=True)
    record.update({"removed": removed, "added": added})
    return record


def war_action(state: dict[str, Any], action: Mapping[str, Any]) -> None:
    where = _current(state)
    _no_sanction(state, where)
    target = region(field(action, "target", str), "target")
    record = fight(state, action, where, target)
    state["last_war"] = record
    _spend_action(state, {"action": "war", **record})


def vote(state: dict[str, Any], action: Mapping[str, Any], applicant: str | None, free_votes: int = 0) -> dict[str, Any]:
    """A diplomatic application: chips from governments, then UN votes; the effect if it passes."""
    application = field(action, "application", str)
    require(application in APPLICATIONS, f"'application' must be one of {', '.join(APPLICATIONS)}")
    target = region(field(action, "target", str), "target")
    banned = party(state, field(action, "ban", str), "ban") if application == "ban" else None
    if applicant is not None and state["regions"][applicant]["sanctioned"]:
        require(application == "end_sanction" and target == applicant, f"{applicant} is under sanctions: it can only apply to end them")
    if application == "end_sanction":
        require(state["regions"][target]["sanctioned"], f"{target} is not under sanctions")
    if application in ("sanction", "disarmament"):
        # Asked for up front: an application whose marker the box cannot supply is not made at all.
        need_marker(state, "sanctioned" if application == "sanction" else "disarmed", target)
    chips_for = counts_map(action, "for", lambda n: region(n, "for"), default={})
    chips_against = counts_map(action, "against", lambda n: region(n, "against"), default={})
    if applicant is not None:
        require(chips_for.get(applicant, 0) >= 1, f"'for': {applicant} must spend at least one diplomacy chip on its application")
    for where in set(chips_for) & set(chips_against):
        require(not (chips_for[where] and chips_against[where]), f"{where} cannot vote both for and against")
    for where in set(chips_for) | set(chips_against):
        spent = chips_for.get(where, 0) + chips_against.get(where, 0)
        require(state["regions"][where]["politicians"], f"{where} has no government to vote")
        require(state["regions"][where]["diplomacy"] >= spent, f"{where} has only {state['regions'][where]['diplomacy']} diplomacy chips")
    un_for = counts_map(action, "un_for", lambda n: party(state, n, "un_for"), default={})
    un_against = counts_map(action, "un_against", lambda n: party(state, n, "un_against"), default={})
    for who in set(un_for) | set(un_against):
        votes = un_for.get(who, 0) + un_against.get(who, 0)
        require(votes <= state["party"][who]["un"], f"{who} has only {state['party'][who]['un']} politicians in the UN")
    total_for = sum(chips_for.values()) + sum(un_for.values()) + free_votes
    total_against = sum(chips_against.values()) + sum(un_against.values())
    # Chips laid on the table go back to the supply whether or not the application passes.
    for where in set(chips_for) | set(chips_against):
        take_chips(state, where, "diplomacy", chips_for.get(where, 0) + chips_against.get(where, 0))
    margin = total_for - total_against
    passed = margin > 0
    effect: dict[str, Any] = {}
    target_region = state["regions"][target]
    if passed and application == "ban":
        n = min(margin, target_region["politicians"].get(banned, 0))
        move_politicians(state, banned, n, target, "base")
        effect = {"recalled": n}
    elif passed and application == "disarmament":
        effect = {"military_lost": take_chips(state, target, "military", margin, partial=True)}
        target_region["disarmed"] = True
    elif passed and application == "sanction":
        target_region["sanctioned"] = True
    elif passed and application == "end_sanction":
        target_region["sanctioned"] = False
    record = {
        "application": application,
        "target": target,
        "ban": banned,
        "applicant": applicant,
        "for": total_for,
        "against": total_against,
        "passed": passed,
        **effect,
    }
    state["last_vote"] = record
    return record


def diplomacy(state: dict[str, Any], action: Mapping[str, Any]) -> None:
    where = _current(state)
    record = vote(state, action, where)
    _spend_action(state, {"action": "diplomacy", **record})


def migration(state: dict[str, Any], action: Mapping[str, Any]) -> None:
    where = _current(state)
    _no_sanction(state, where)
    who = _acting_party(state, action, where)
    dest = region(field(action, "to", str), "to")
    require(dest != where, "'to' must be a neighbouring region")
    check_neighbours(where, dest, "'to'")
    move_politicians(state, who, 1, where, dest)
    _spend_action(state, {"action": "migration", "party": who, "to": dest})


def propaganda(state: dict[str, Any], action: Mapping[str, Any]) -> None:
    where = _current(state)
    _no_sanction(state, where)
    who = _acting_party(state, action, where)
    dest = region(action.get("to", where), "to")
    if dest != where:
        check_neighbours(where, dest, "'to'")
    require(base(state, who) >= 2, f"propaganda takes two of {who}'s politicians from home; {who} has {base(state, who)}")
    move_politicians(state, who, 1, "base", dest)
    move_politicians(state, who, 1, "base", "mauritius")
    _spend_action(state, {"action": "propaganda", "party": who, "to": dest})


def rehabilitate(state: dict[str, Any], action: Mapping[str, Any]) -> None:
    where = _current(state)
    _no_sanction(state, where)
    who = party(state, field(action, "party", str))
    require(state["party"][who]["mauritius"] > 0, f"{who} has nobody in Mauritius")
    take_chips(state, where, "diplomacy", 1)
    move_politicians(state, who, 1, "mauritius", "base")
    _spend_action(state, {"action": "rehabilitate", "party": who})


def _chips(action: Mapping[str, Any], key: str) -> dict[str, int]:
    def check(name: Any) -> str:
        require(name in CHIPS, f"'{key}': {name!r} is not a resource ({', '.join(CHIPS)})")
        return name

    return counts_map(action, key, check, default={})


def trade(state: dict[str, Any], action: Mapping[str, Any]) -> None:
    where = _current(state)
    _no_sanction(state, where)
    partner = region(field(action, "with", str), "with")
    require(partner != where, "'with' must be a neighbouring region")
    check_neighbours(where, partner, "'with'")
    require(state["regions"][partner]["politicians"], f"{partner} has no government to trade with")
    give, get = _chips(action, "give"), _chips(action, "get")
    require(sum(give.values()) + sum(get.values()) > 0, "a trade needs something given or taken")
    mine, theirs = state["regions"][where], state["regions"][partner]
    for chip in CHIPS:
        g, t = give.get(chip, 0), get.get(chip, 0)
        require(mine[chip] >= g, f"{where} has only {mine[chip]} {chip} chips to give")
        require(theirs[chip] >= t, f"{partner} has only {theirs[chip]} {chip} chips to give")
        require(mine[chip] - g + t <= CHIP_CAP, f"{where} would hold more than {CHIP_CAP} {chip} chips")
        require(theirs[chip] - t + g <= CHIP_CAP, f"{partner} would hold more than {CHIP_CAP} {chip} chips")
        require(not (chip == "military" and t > g and mine["disarmed"]), f"{where} is disarmed: it cannot gain military chips")
        require(not (chip == "military" and g > t and theirs["disarmed"]), f"{partner} is disarmed: it cannot gain military chips")
    for chip in CHIPS:
        mine[chip] += get.get(chip, 0) - give.get(chip, 0)
        theirs[chip] += give.get(chip, 0) - get.get(chip, 0)
    _spend_action(state, {"action": "trade", "with": partner, "give": give, "get": get})


def purge(state: dict[str, Any], action: Mapping[str, Any]) -> None:
    where = _current(state)
    _no_sanction(state, where)
    who = party(state, field(action, "party", str))
    require(who not in governors(state, where), f"{who} governs {where}: only the opposition can be purged")
    require(state["regions"][where]["politicians"].get(who, 0) > 0, f"{who} has no politician in {where}")
    take_chips(state, where, "military", 1)
    move_politicians(state, who, 1, where, "base")
    _spend_action(state, {"action": "purge", "party": who})


def failed_ballot(state: dict[str, Any], action: Mapping[str, Any]) -> None:
    """A proposal voted down and not forced: the action is spent all the same."""
    _current(state)
    # kept in the turn's log, which every tablet's /api/state carries
    proposal = note(field(action, "proposal", str, default=""), "'proposal'")
    _spend_action(state, {"action": "failed_ballot", "proposal": proposal})


REGION_ACTIONS: dict[str, Handler] = {
    "budget": budget,
    "war": war_action,
    "diplomacy": diplomacy,
    "migration": migration,
    "propaganda": propaganda,
    "rehabilitate": rehabilitate,
    "trade": trade,
    "purge": purge,
    "failed_ballot": failed_ballot,
}


# ---------------------------------------------------------------- cards


def _affected(state: Mapping[str, Any], action: Mapping[str, Any], centre: str) -> list[str]:
    """A region with its neighbours: from the map where it knows them all, else as listed in the action."""
    if "neighbours" in action:
        listed = [region(n, "neighbours") for n in field(action, "neighbours", list)]
        require(centre not in listed, "'neighbours' lists the region itself")
        for n in listed:
            check_neighbours(centre, n, "'neighbours'")
        return [centre, *dict.fromkeys(listed)]
    require(centre in BORDERS_COMPLETE, f"'neighbours': list {centre}'s neighbours (the map data does not know them all)")
    return [centre, *sorted(NEIGHBOURS[centre])]


def _attentat(state: dict[str, Any], action: Mapping[str, Any], player: str) -> dict[str, Any]:
    victim = party(state, field(action, "target_party", str), "target_party")
    where = region(field(action, "region", str))
    require(state["regions"][where]["politicians"].get(victim, 0) > 0, f"{victim} has no politician in {where}")
    die = roll(action, "roll")
    if die == 1:
        move_politicians(state, victim, 1, where, "removed")
        result = "victim removed from the game"
    elif die == 2:
        move_politicians(state, victim, 1, where, "base")
        result = "victim sent home"
    else:
        fled = min(1, base(state, player))
        move_politicians(state, player, fled, "base", "mauritius")
        result = "perpetrator fled to Mauritius" if fled else "perpetrator had nobody at home to flee"
    return {"target_party": victim, "region": where, "roll": die, "result": result}


def _development_aid(state: dict[str, Any], action: Mapping[str, Any], player: str) -> dict[str, Any]:
    dest = region(field(action, "to", str), "to")
    source = region(field(action, "from", str), "from")
    require(
        state["regions"][source]["economy"] > state["regions"][dest]["economy"],
        f"'from': {source} must be richer than {dest}",
    )
    moved = min(2, state["regions"][source]["economy"], CHIP_CAP - state["regions"][dest]["economy"])
    take_chips(state, source, "economy", moved)
    state["regions"][dest]["economy"] += moved
    return {"from": source, "to": dest, "moved": moved}


def _expansion(state: dict[str, Any], action: Mapping[str, Any], player: str) -> dict[str, Any]:
    placed = counts_map(action, "to", lambda n: region(n, "to"))
    total = sum(placed.values())
    require(1 <= total <= 2, "'to': expansion places one or two politicians")
    require(base(state, player) >= total, f"{player} has only {base(state, player)} politicians at home")
    for where, n in placed.items():
        move_politicians(state, player, n, "base", where)
    return {"to": placed}


def _peace(state: dict[str, Any], action: Mapping[str, Any], player: str) -> dict[str, Any]:
    require(not state["peace"], "a peace initiative is already in force")
    state["peace"] = True
    return {}


def _warmonger(state: dict[str, Any], action: Mapping[str, Any], player: str) -> dict[str, Any]:
    use = field(action, "use", str, default="keep")
    if use == "keep":
        state["party"][player]["warmonger"] += 1
    elif use == "cancel_peace":
        require(state["peace"], "there is no peace initiative to cancel")
        state["peace"] = False
    elif use == "cancel_pact":
        pact = {region(n, "pact") for n in field(action, "pact", list)}
        require(any(set(p) == pact for p in state["pacts"]), "'pact': there is no such non-aggression pact")
        state["pacts"] = [p for p in state["pacts"] if set(p) != pact]
    else:
        raise RuleError("'use' must be keep, cancel_peace or cancel_pact")
    return {"use": use}


def _pact(state: dict[str, Any], action: Mapping[str, Any], player: str) -> dict[str, Any]:
    a = region(field(action, "region", str))
    b = region(field(action, "neighbour", str), "neighbour")
    require(a != b, "'neighbour' must be another region")
    check_neighbours(a, b, "'neighbour'")
    require(all(set(p) != {a, b} for p in state["pacts"]), f"{a} and {b} already have a pact")
    state["pacts"].append(sorted([a, b]))
    return {"region": a, "neighbour": b}


def _putsch(state: dict[str, Any], action: Mapping[str, Any], player: str) -> dict[str, Any]:
    where = region(field(action, "region", str))
    gov = governors(state, where)
    require(gov, f"{where} has no government to overthrow")
    require(player not in gov, f"{player} already governs {where}")
    committed = whole(action, "committed", 0)
    # The putschist always stakes someone: one or more politicians from home, who end up in Mauritius.
    require(committed >= 1, f"a putsch needs at least one of {player}'s politicians from home, chosen in secret")
    require(base(state, player) >= committed, f"{player} has only {base(state, player)} politicians at home")
    defending = counts_map(action, "government_committed", lambda n: party(state, n, "government_committed"), default={})
    for who, n in defending.items():
        require(who in gov, f"'government_committed': {who} is not in {where}'s government")
        require(base(state, who) >= n, f"'government_committed': {who} has only {base(state, who)} politicians at home")
    mine = state["regions"][where]["politicians"].get(player, 0)
    outcome = errors_as_rules(
        putsch, mine, committed, roll(action, "player_roll"), strength(state, where), sum(defending.values()), roll(action, "government_roll")
    )
    # Everyone who was secretly committed ends up in Mauritius, win or lose.
    move_politicians(state, player, committed, "base", "mauritius")
    for who, n in defending.items():
        move_politicians(state, who, n, "base", "mauritius")
    replaced = 0
    if outcome["success"]:
        ousted = {who: state["regions"][where]["politicians"][who] for who in gov}
        for who, n in ousted.items():
            move_politicians(state, who, n, where, "base")
        replaced = min(sum(ousted.values()), base(state, player))
        move_politicians(state, player, replaced, "base", where)
    return {"region": where, **outcome, "replaced": replaced}


def _recession(state: dict[str, Any], action: Mapping[str, Any], player: str) -> dict[str, Any]:
    centre = region(field(action, "region", str))
    lost = {}
    for where in _affected(state, action, centre):
        excess = state["regions"][where]["economy"] - strength(state, where)
        lost[where] = take_chips(state, where, "economy", excess, partial=True) if excess > 0 else 0
    return {"region": centre, "lost": lost}


def _revolution(state: dict[str, Any], action: Mapping[str, Any], player: str) -> dict[str, Any]:
    centre = region(field(action, "region", str))
    affected = _affected(state, action, centre)
    rolls = counts_map(action, "rolls", lambda n: region(n, "rolls"))
    sent = {}
    for where in affected:
        if not state["regions"][where]["politicians"]:
            continue
        require(where in rolls, f"'rolls': roll a die for {where}")
        require(rolls[where] in (1, 2, 3), f"'rolls': {where}'s die shows 1-3, not {rolls[where]}")
        # Each governing party keeps at most the number rolled.
        for who in governors(state, where):
            excess = state["regions"][where]["politicians"][who] - rolls[where]
            if excess > 0:
                move_politicians(state, who, excess, where, "base")
                sent[f"{who} in {where}"] = excess
    return {"region": centre, "rolls": rolls, "sent_home": sent}


def _initiative(state: dict[str, Any], action: Mapping[str, Any], player: str) -> dict[str, Any]:
    return vote(state, action, None, free_votes=1)


CARD_EFFECTS: dict[str, Callable[[dict[str, Any], Mapping[str, Any], str], dict[str, Any]]] = {
    "attentat": _attentat,
    "diplomatic_initiative": _initiative,
    "development_aid": _development_aid,
    "expansion": _expansion,
    "peace_initiative": _peace,
    "warmonger": _warmonger,
    "non_aggression_pact": _pact,
    "putsch": _putsch,
    "recession": _recession,
    "revolution": _revolution,
}
