"""Who did what: each game's actions told in the players' words, for the page's log and its Undo button.

`describe(game, before, action, after)` is one line about an action the rules took: who acted (a player, a
nation and its government, a region's government, or the table correcting a count) and what changed, in
the words the page uses. It reads the states on both sides, so the result of a roll (a battle, a war, an
evaluation) is told too. Pure: the states are plain data and nothing is changed; an action the words do not
know yet is still told by its kind, never by its key.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from companion.games.refusals import glossary

Describe = Callable[[Any, Mapping[str, Any], Any], str]


def _list(items) -> str:
    items = [str(i) for i in items]
    if not items:
        return "nothing"
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _kind(kind: Any, game: str) -> str:
    """An action's kind in words, for an action the descriptions below do not know."""
    return glossary(game).get(str(kind), str(kind).replace("_", " "))


def _plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


# ---------------------------------------------------------------- Balance Duels


def _balance_duels(before, action, after) -> str:
    names = before.options.names

    def who(seat):
        return names[seat - 1] if seat and 0 < seat <= len(names) else f"seat {seat}"

    kind = action.get("type")
    if kind == "roll":
        return f"{who(before.to_move)} rolled {action.get('value')}"
    if kind == "tip":
        return f"{who(after.tipped_by or before.last_mover)}'s move tipped the arm (as the table saw it)"
    move = action.get("move") if isinstance(action.get("move"), Mapping) else {}
    mover, size = who(move.get("seat")), move.get("size")
    text = {
        "place": f"{mover} placed {size} on {move.get('to_holder')}",
        "advance": f"{mover} moved {size} from {move.get('from_holder')} to {move.get('to_holder')}",
        "rearrange": f"{mover} rearranged {size} from {move.get('from_holder')} to {move.get('to_holder')}",
        "pass": f"{mover} passed",
        "cant_play": f"{mover} could not play the {move.get('roll')}",
    }.get(move.get("kind"), f"{mover} moved")
    if move.get("beats"):
        text += f", beating {who(move.get('beaten_seat'))}'s {move.get('beaten_size')} on {move.get('beats')}"
    if after.tipped_by is not None and after.tipped_by == move.get("seat") and before.tipped_by is None:
        text += ": the arm tipped"
    elif after.result == "home" and before.result is None:
        text += ": every pawn home"
    return text


# ---------------------------------------------------------------- Imperial 2030


def _imperial(before, action, after) -> str:
    notes = list(after.last)
    kind = action.get("type")
    mover = before.nations[before.turn] if before.phase not in ("draft", "over") and before.nations else None
    # who acted: the player named, else whoever governs the nation that moves
    actor = action.get("player") if isinstance(action.get("player"), str) else None
    if actor is None and kind in ("rondel", "build_factory", "produce", "import", "maneuver", "skip") and mover is not None:
        actor = mover.government
    if kind == "allow_pass":
        actor = None
    if not notes:
        notes = [_kind(kind, "imperial")]
    text = "; ".join(notes)
    if kind == "correct":
        return text if text.startswith("Correction") else f"Correction: {text}"
    if actor and not text.startswith(actor):
        text = f"{actor}: {text}"
    return text


# ---------------------------------------------------------------- Risk: Balance of Power


def _risk(before, action, after) -> str:
    from companion.games.risk_board import MISSIONS, NEUTRAL, PURCHASES

    kind = action.get("type")
    player = before["turn"]["player"]
    if kind == "set_counts":
        side = action.get("player")
        who = "the neutral army" if str(side).lower() == NEUTRAL else side
        parts = []
        for key, one, many in (("territories", "territory", "territories"), ("cities", "city", "cities"),
                               ("troops", "troop", "troops"), ("lost", "lost troop", "lost troops")):
            if key in action:
                parts.append(_plural(action[key], one, many) if isinstance(action[key], int) else f"{many}: not known")
        if "regions" in action:
            parts.append("regions " + (_list(action["regions"]) if action["regions"] else "none"))
        if "region_bonus" in action:
            parts.append(f"region bonus {action['region_bonus'] if action['region_bonus'] is not None else 'from the map'}")
        if "capitals" in action:
            parts.append("capitals of " + _list(action["capitals"]))
        return f"The table entered {who}'s counts: {', '.join(parts) or 'no change'}"
    if kind == "set_owner":
        owner = action.get("owner")
        return f"The table noted {action.get('territory')} as {'held by ' + str(owner) if owner else 'of unknown owner'}"
    if kind == "remove_airfield":
        return f"The table took {action.get('player')}'s airfield off the board"
    if kind == "neutral_resistance":
        last = after.get("last_resistance") or {}
        if action.get("decline"):
            return f"{player} skipped the neutral resistance"
        return f"{player} rolled {last.get('roll')} for neutral resistance: {_plural(last.get('returned', 0), 'troop')} back to the neutral army"
    if kind == "buy":
        cost, label = PURCHASES.get(action.get("item"), (None, str(action.get("item"))))
        where = f" in {action['territory']}" if action.get("territory") else ""
        return f"{player} bought {label}{where} for {cost} lost troops"
    if kind == "turn_in":
        stars = action.get("stars") or []
        return f"{player} turned in {_plural(len(stars), 'card')} ({sum(stars)} stars)"
    if kind == "reinforce":
        got = (after["turn"].get("reinforcements") or {}).get("total")
        return f"{player} took {got} new troops" if got is not None else f"{player} took the new troops"
    if kind == "attack":
        a = after["attack"] or after["last_battle"] or {}
        attacker = "the neutral uprising" if action.get("uprising") else player
        where = f" in {a.get('to')}" if a.get("to") else ""
        source = f" from {a.get('from')}" if a.get("from") else ""
        return f"{attacker} attacked {a.get('defender')}{where}{source}: {a.get('attackers')} against {a.get('defenders')}"
    if kind == "battle":
        a = before["attack"] or {}
        rolls = (after["attack"] or after["last_battle"] or {}).get("rolls") or [{}]
        last = rolls[-1]
        attacker = "The neutral uprising" if a.get("uprising") else player
        text = (f"{attacker} rolled {'-'.join(map(str, last.get('attacker_dice', [])))} against "
                f"{a.get('defender')}'s {'-'.join(map(str, last.get('defender_dice', [])))}: "
                f"{_plural(last.get('attacker_losses', 0), 'loss', 'losses')} against {last.get('defender_losses', 0)}")
        if after["attack"] is None and after["last_battle"]:
            outcome = after["last_battle"]["outcome"]
            text += f" — {a.get('to') or 'the territory'} conquered" if outcome == "conquered" else f" — {outcome}"
        return text
    if kind == "stop_attack":
        return f"{player} called off the attack"
    if kind == "take_mission":
        mission = MISSIONS.get(action.get("mission"), {}).get("title", action.get("mission"))
        return f"{player} took the mission {mission}"
    if kind == "maneuver":
        return f"{player} moved troops (the turn's one movement)"
    if kind == "draw_card":
        stars = action.get("stars")
        return f"{player} drew a card" + (f" ({_plural(stars, 'star')})" if isinstance(stars, int) else "")
    if kind == "end_turn":
        if after["winner"] is not None:
            return f"{player} ended the turn and won: {after['win_reason']}"
        following = after["turn"]
        if following["round"] != before["turn"]["round"]:
            return f"{player} ended the turn; {following['player']} opens round {following['round']}"
        return f"{player} ended the turn; {following['player']} is next"
    return f"{player}: {_kind(kind, 'risk')}"


# ---------------------------------------------------------------- Balance of Power (1815)


def _balance_of_power(before, action, after) -> str:
    from companion.games.balance_of_power import CLASS_LABELS, EMPIRES

    kind = action.get("type")
    turn = before.get("turn") or {}
    player = turn.get("player") or before.get("setup_player")
    pawn = CLASS_LABELS.get(str(action.get("pawn", "")).lower(), action.get("pawn"))
    done = ((after.get("turn") or {}).get("done") or [{}])[-1] if kind in ("move", "attack", "duplicate", "respawn") else {}
    if kind == "place":
        return f"{player} placed a {pawn} in {action.get('territory')}"
    if kind == "move":
        way = f" from {done['from']} to {done['to']}" if done.get("from") else ""
        return f"{player} moved a {pawn}{way}"
    if kind == "attack":
        prey = CLASS_LABELS.get(str(action.get("target_pawn", "")).lower(), action.get("target_pawn"))
        where = f" in {done['to']}" if done.get("to") else ""
        gone = f" (the last of {action.get('target_player')}'s {prey}s)" if done.get("class_gone") else ""
        return f"{player}'s {pawn} eliminated {action.get('target_player')}'s {prey}{where}{gone}"
    if kind == "duplicate":
        where = f" in {done['territory']}" if done.get("territory") else ""
        return f"{player} duplicated a {pawn}{where}"
    if kind == "respawn":
        where = f" in {done['territory']}" if done.get("territory") else ""
        return f"{player}'s {pawn} re-spawned{where}"
    if kind == "end_turn":
        if after.get("over"):
            return f"{player} ended the turn: the game is over ({after.get('end_reason')})"
        return f"{player} ended the turn; {(after.get('turn') or {}).get('player')} is next"
    if kind == "declare_empire":
        title = EMPIRES.get(action.get("empire"), {}).get("title", action.get("empire"))
        return f"The table noted {title} as {'achieved' if action.get('achieved') else 'not achieved'} by {action.get('player')}"
    if kind == "set_counts":
        parts = []
        if "territories" in action:
            parts.append(_plural(action["territories"], "territory", "territories") + " held alone")
        if "full_capitals" in action:
            parts.append(_plural(action["full_capitals"], "full capital"))
        if isinstance(action.get("pawns"), Mapping):
            parts.append(", ".join(_plural(n, CLASS_LABELS.get(c, c)) for c, n in action["pawns"].items()))
        return f"The table entered {action.get('player')}'s counts: {', '.join(parts) or 'no change'}"
    if kind == "add_territory":
        title = EMPIRES.get(action.get("empire"), {}).get("title") if action.get("empire") else None
        return f"The table added the territory {action.get('territory')} to the map" + (f" (part of {title})" if title else "")
    if kind == "set_empire_rule":
        reading = {"no_enemy": "no enemy pawn in it", "held": "a pawn of one's own in every territory"}
        return f"The table now reads an empire as achieved with {reading.get(action.get('empire_rule'), action.get('empire_rule'))}"
    return f"{player}: {_kind(kind, 'balance_of_power')}"


# ---------------------------------------------------------------- Global Powers


CARDS = {"attentat": "Attentat", "diplomatic_initiative": "Diplomatic Initiative", "development_aid": "Development Aid",
         "expansion": "Expansion", "peace_initiative": "Peace Initiative", "warmonger": "Warmonger",
         "non_aggression_pact": "Non-Aggression Pact", "putsch": "Putsch", "recession": "Recession", "revolution": "Revolution"}
CONVERSIONS = {"mine": "mined raw chips into economy", "grow": "grew its economy", "diplomacy": "turned economy into diplomacy",
               "arm": "armed (economy into military)"}
APPLICATIONS = {"ban": "a ban", "disarmament": "disarmament", "sanction": "sanctions", "end_sanction": "an end to sanctions"}


def _global_powers(before, action, after) -> str:
    kind = action.get("type")
    turn = before.get("turn") or {}
    player = turn.get("player")
    region = turn.get("region")
    if region:
        from companion.games.global_powers_rules import governors

        gov = f"{region}'s government ({_list(governors(before, region)) if governors(before, region) else 'nobody'})"
    else:
        gov = player
    if kind == "auction":
        last = after.get("last_auction") or {}
        placed = ", ".join(f"{p} {n}" for p, n in (last.get("placed") or {}).items()) or "nobody"
        exile = f"; {last['to_mauritius']} sent one to Mauritius" if last.get("to_mauritius") else ""
        return f"Auction of {last.get('region', action.get('region'))}: placed {placed}{exile}"
    if kind == "start":
        first = after["turn"]["player"]
        from companion.games.global_powers import _weakest_tied

        rolls = action.get("tie_rolls")
        if isinstance(rolls, Mapping) and not action.get("first") and len(_weakest_tied(before)) > 1:
            dice = ", ".join(f"{p} {n}" for p, n in rolls.items())
            return f"The game began: {first} goes first, winning the roll of the weakest parties ({dice})"
        return f"The game began: {first} goes first"
    if kind == "set_region":
        parts = []
        if isinstance(action.get("politicians"), Mapping):
            parts.append("politicians " + (", ".join(f"{p} {n}" for p, n in action["politicians"].items()) or "none"))
        parts += [f"{action[c]} {c}" for c in ("raw", "economy", "military", "diplomacy") if c in action]
        parts += [f"{flag} {'on' if action[flag] else 'off'}" for flag in ("done", "sanctioned", "disarmed", "protectorate")
                  if flag in action]
        return f"The table entered {action.get('region')}: {', '.join(parts) or 'no change'}"
    if kind == "set_party":
        fields = {"un": "in the UN", "mauritius": "in Mauritius", "removed": "out of the game", "hand": "cards in hand",
                  "deck": "cards in the deck", "played": "cards played", "warmonger": "warmonger kept"}
        parts = [f"{action[k]} {w}" for k, w in fields.items() if k in action]
        return f"The table entered {action.get('party')}'s counts: {', '.join(parts) or 'no change'}"
    if kind == "recall":
        n = action.get("n", 1)
        return f"{action.get('party')} recalled {_plural(n, 'politician')} home from {action.get('region')}"
    if kind == "activate":
        return f"{player} activated {action.get('region')} ({after['turn']['actions_left']} actions)"
    if kind == "play_card":
        card = CARDS.get(action.get("card"), str(action.get("card")).replace("_", " "))
        return f"{player} played {card}"
    if kind == "end_turn":
        if after["phase"] == "evaluation":
            return f"{player} ended the turn: every region has acted, the evaluation is next"
        return f"{player} ended the turn; {after['turn']['player']} is next"
    if kind == "un_intervention":
        last = after.get("last_intervention") or {}
        return f"UN troops went to {last.get('region', action.get('region'))}"
    if kind == "budget":
        return f"{gov} {CONVERSIONS.get(action.get('conversion'), 'spent its budget')}"
    if kind == "war":
        w = after.get("last_war") or {}
        result = "a draw" if w.get("winner") is None else f"{w['attacker'] if w['winner'] == 'attacker' else w['defender']} won"
        return f"{gov} waged war on {w.get('defender', action.get('target'))}: {result} ({w.get('attack')} against {w.get('defend')})"
    if kind == "diplomacy":
        v = after.get("last_vote") or {}
        what = APPLICATIONS.get(v.get("application"), "an application")
        return (f"{gov} applied for {what} against {v.get('target')}: "
                f"{'passed' if v.get('passed') else 'failed'}, {v.get('for')} for to {v.get('against')} against")
    done = ((after.get("turn") or {}).get("log") or [{}])[-1]
    if kind in ("migration", "propaganda"):
        verb = "moved a politician" if kind == "migration" else "spread propaganda"
        return f"{gov}: {done.get('party', action.get('party'))} {verb} to {done.get('to', action.get('to'))}"
    if kind == "rehabilitate":
        return f"{gov}: {done.get('party', action.get('party'))} rehabilitated a politician"
    if kind == "trade":
        def chips(given):
            if not isinstance(given, Mapping):
                return str(given)
            return _list(f"{n} {c}" for c, n in given.items())
        return f"{gov} traded {chips(action.get('give'))} for {chips(action.get('get'))} with {action.get('with')}"
    if kind == "purge":
        return f"{gov} purged {action.get('party')}"
    if kind == "failed_ballot":
        proposal = action.get("proposal")
        return f"{gov}: the ballot {'on ' + str(proposal) + ' ' if proposal else ''}failed"
    if kind == "evaluate":
        e = after.get("last_evaluation") or {}
        vp = ", ".join(f"{p} {n}" for p, n in (e.get("vp") or {}).items())
        won = f": {e['winner']} wins" if e.get("winner") else ""
        return f"Evaluation {e.get('number')}: {vp}{won}"
    return f"{player}: {_kind(kind, 'global_powers')}"


DESCRIBE: dict[str, Describe] = {
    "balance_duels": _balance_duels,
    "imperial": _imperial,
    "risk": _risk,
    "balance_of_power": _balance_of_power,
    "global_powers": _global_powers,
}


def describe(game: str, before: Any, action: Mapping[str, Any], after: Any) -> str:
    """One line on who did what (the action was applied to `before` and gave `after`)."""
    tell = DESCRIBE.get(game)
    if tell is not None:
        try:
            return tell(before, action, after)
        except Exception:  # words must never stand in the way of a legal action: its kind still says something
            pass
    return _kind(action.get("type", "an action"), game)
