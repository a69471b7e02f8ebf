"""Refusals in the players' words.

The rules engines name the field of an action or an option they refuse by its key ("'attacker_dice': roll 1
to 3 dice, not 0"): that is the word of the config file and the API, and the engines' own tests match it. The
page and the buttons show the same refusal by what the players see on the page ("Attacker's dice: roll 1 to 3
dice, not 0"): `in_words(message, game)` rewrites every key the game's glossary knows, quoted or bare, and
humanises any other quoted key. Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Mapping

# a quoted key, maybe dotted ('deal.Anna', 'battles.unit'), maybe after the word the engines put before it
_QUOTED = re.compile(r"(?P<lead>\b(?:option|action is missing) )?'(?P<key>[a-z][a-z0-9_]*)(?P<rest>(?:\.[^'\s.]+)*)'")
_SNAKE = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")

# what every game calls the same thing
COMMON: dict[str, str] = {
    "players": "the players",
    "names": "the players' names",
    "colours": "the players' colours",
    "first": "the first player",
    "variant": "the variant",
    "player": "the player",
    "type": "the kind of action",
    "value": "the value",
    "roll": "the roll",
}

GLOSSARY: dict[str, dict[str, str]] = {
    "balance_duels": {
        "pawns": "pawns each",
        "teams": "2×2 teams",
        "tip_judge": "who judges a tip",
        "cant_play": "when \"I can't play\" may be said",
        "pass_needs_roll": "roll before passing",
        "optional_beat": "optional beating",
        "move": "the move",
        "seat": "the player",
        "kind": "the kind of move",
        "size": "the pawn's size",
        "from_holder": "the holder it leaves",
        "to_holder": "the holder it goes to",
        "beats": "the pawn beaten",
        "beaten_seat": "whose pawn is beaten",
        "beaten_size": "the size of the pawn beaten",
        "value": "the die",
    },
    "imperial": {
        "deal": "the flag cards dealt",
        "deal.*": "{}'s flag cards",
        "bond_table": "the bond table",
        "start_player": "the player who drafts first",
        "city_names": "the city names",
        "city_names.*": "the city names of {}",
        "swiss_block": "a Swiss bank's block",
        "nation": "the nation",
        "target": "the rondel space",
        "amount": "the amount",
        "hidden": "hide or show the cash",
        "what": "what to correct",
        "value": "the new value",
        "reason": "the reason",
        "armies": "armies",
        "fleets": "fleets",
        "flags": "flags",
        "units": "the units",
        "battles": "the battles",
        "battles.unit": "our unit in a battle",
        "battles.their_unit": "their unit in a battle",
        "battles.count": "the units lost in a battle",
        "unit": "our unit",
        "their_unit": "their unit",
        "against": "the nation fought",
        "occupy": "the cities occupied",
        "occupy.city": "the city occupied",
        "vacate": "the cities left",
        "vacate.city": "the city left",
        "destroy_factories": "the factories destroyed",
        "destroy_factories.city": "the factory's city",
        "owner": "the city's nation",
        "occupier": "the occupying nation",
        "city": "the city",
        "trade_in": "the bond traded in",
        "done": "done",
        # the actions, as "'import' is not possible now" names them
        "rondel": "moving on the rondel",
        "allow_pass": "letting the nation pass Investor",
        "block_pass": "a Swiss bank's block",
        "build_factory": "building a factory",
        "produce": "production",
        "import": "importing",
        "maneuver": "the maneuver",
        "skip": "skipping",
        "invest": "investing",
        "pass": "not investing",
        "donate": "giving cash to a treasury",
        "hide_cash": "hiding cash",
        "correct": "a correction",
    },
    "risk": {
        "attacker_dice": "attacker's dice",
        "defender_dice": "defender's dice",
        "attackers": "armies able to attack",
        "defenders": "defending armies",
        "from": "the territory attacked from",
        "to": "the territory attacked",
        "defender": "the defender",
        "capital": "the capital attacked",
        "capitals": "capitals held",
        "cities": "cities",
        "city": "the city",
        "territories": "territories",
        "troops": "troops on the board",
        "lost": "lost troops",
        "regions": "regions held",
        "region_bonus": "the region bonus",
        "setup": "the set-up",
        "missions": "the missions on the board",
        "mission": "the mission",
        "stars": "the card's stars",
        "item": "the purchase",
        "owner": "who holds it",
        "territory": "the territory",
        "uprising": "the uprising",
        "rough": "rough terrain",
        "object": "the object",
        "attacker_airfield": "the attacker's airfield",
        "defender_airfield": "the defender's airfield",
        "lost_table_size": "the lost-troop table's size",
        "airfield_reach": "where airfields help",
        "decline": "declining",
        "roll": "the dice",
    },
    "balance_of_power": {
        "tracking": "what the companion tracks",
        "empire_rule": "how an empire is judged",
        "empire": "the empire",
        "capitals": "the capitals",
        "pawn": "the pawn",
        "pawns": "the pawns",
        "target_pawn": "the pawn attacked",
        "target_player": "the player attacked",
        "territory": "the territory",
        "from": "the territory it leaves",
        "to": "the territory it goes to",
        "achieved": "achieved",
        "respawn": "re-spawn",
        "total_domination": "total domination",
        "tougher_neutral": "tougher neutral empires",
        "territories": "territories held alone",
        "full_capitals": "full capitals",
        "kind": "the kind of action",
        "class": "the pawn",
    },
    "global_powers": {
        "extended": "the extended game",
        "sanction_halving": "what a sanctioned region gives",
        "first": "the first player",
        "tie_rolls": "the dice rolled for the first player",
        "party": "the party",
        "region": "the region",
        "politicians": "the politicians",
        "offers": "the offers",
        "n": "how many",
        "conversion": "the budget",
        "target": "the target",
        "attacker_roll": "our die",
        "defender_roll": "their die",
        "region_roll": "the region's die",
        "un_roll": "the UN's die",
        "roll": "the die",
        "rolls": "the dice",
        "warmonger": "the warmonger",
        "added": "the new politicians",
        "application": "the application",
        "against": "the votes against",
        "for": "the votes for",
        "un_for": "the UN's votes for",
        "un_against": "the UN's votes against",
        "un_order": "the order in the UN step",
        "un_from": "where the UN envoys come from",
        "remove_from": "where the politicians taken out come from",
        "discard": "the cards thrown away",
        "winner": "the winner",
        "card": "the card",
        "ban": "the party banned",
        "proposal": "the proposal",
        "get": "what is got",
        "give": "what is given",
        "with": "the region traded with",
        "to": "the region they go to",
        "from": "the region they come from",
        "replace": "the politicians replaced",
        "neighbours": "the neighbours",
        "neighbour": "the neighbour",
        "pact": "the pact",
        "use": "the use",
        "government_committed": "the government's politicians",
        "un": "in the UN",
        "mauritius": "in Mauritius",
        "removed": "out of the game",
        "hand": "cards in hand",
        "deck": "cards in the deck",
        "played": "cards played",
        "raw": "raw chips",
        "economy": "economy chips",
        "diplomacy": "diplomacy chips",
        "military": "military chips",
        "done": "done",
        "sanctioned": "sanctioned",
        "disarmed": "disarmed",
        "protectorate": "protectorate",
        "base": "home",
    },
    # the Map form of the games whose maps the players may complete
    "map": {
        "add": "what is added",
        "territories": "territories",
        "borders": "borders",
        "borders_complete": "territories whose borders are all known",
        "rough": "rough territories",
        "regions": "regions",
    },
}


def glossary(game: str) -> dict[str, str]:
    """The words a game's refusals use for its keys (the game's own first, then those every game shares)."""
    return {**COMMON, **GLOSSARY.get(game, {})}


def _human(key: str) -> str:
    return key.replace("_", " ")


def _label(key: str, rest: str, words: Mapping[str, str]) -> str:
    parts = rest.split(".")[1:] if rest else []
    if rest and f"{key}{rest}" in words:
        return words[f"{key}{rest}"]
    if parts and len(parts) == 1 and f"{key}.{parts[0]}" not in words and f"{key}.*" in words:
        return words[f"{key}.*"].format(parts[0])
    if parts and f"{key}.{parts[-1]}" in words:
        return words[f"{key}.{parts[-1]}"]
    if parts and f"{key}.*" in words:
        return words[f"{key}.*"].format(parts[0]) + "".join(f", {_human(p)}" for p in parts[1:])
    base = words.get(key, _human(key))
    return base + "".join(f" ({p})" for p in parts)


def _sentence_start(text: str, at: int) -> bool:
    before = text[:at].rstrip()
    return not before or before.endswith((":", ";", ".", "!", "?", "(", "—", "-"))


def in_words(message: str, game: str) -> str:
    """`message` with every key of `game` (and every other quoted key) named as the players see it on the page."""
    words = glossary(game)
    out: list[str] = []
    last = 0
    for m in _QUOTED.finditer(message):
        key, rest = m.group("key"), m.group("rest")
        known = key in words or f"{key}{rest}" in words
        if not known and "_" not in key and not rest:
            continue    # a quoted value ('standard', a player's name): left as it is
        label = _label(key, rest, words)
        start = m.start() if m.group("lead") is None else m.start("lead")
        if m.group("lead") and m.group("lead").startswith("action"):
            label = f"{label}: not given"
            label = label[0].upper() + label[1:] if _sentence_start(message, start) else label
        elif _sentence_start(message, start):
            label = label[0].upper() + label[1:]
        out.append(message[last:start])
        out.append(label)
        last = m.end()
    out.append(message[last:])
    text = "".join(out)
    # keys left bare in a sentence ("house rule pass_needs_roll", "known: lost_table_size, …")
    return _SNAKE.sub(lambda m: words.get(m.group(0), _human(m.group(0))), text)
