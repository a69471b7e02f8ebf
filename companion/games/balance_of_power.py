"""Balance of Power (1815) -- score, the action budget and the elimination chart.

Two ways to track a game:

* "board": the tracker keeps every pawn's territory, so it works out who holds
  what alone, the capital bonuses, the pool and which classes are gone.
* "counts": the players enter territories held and full capitals; the tracker
  still keeps the pawns per class from the actions (duplicates and eliminations)
  and runs the turn helper.

The map in data/balance_of_power_map.toml is incomplete: board mode knows the
territories it lists, those the players completed once for the table (maps/ beside the
config, reaching the state as "map"), the capitals given as options and those the table adds
for one game (`add_territory`), refuses any other name (offering the nearest known ones), and
checks borders only where the map lists all of them.
"""

from __future__ import annotations

import copy
import difflib
import tomllib
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from companion.games.base import Engine, RuleError, field, require
from companion.games.names import PLACE_MOST, place_name, player_name, colour as pick_colour
from companion.games.mapdata import MapForm, cached_atlas, symmetric_links, with_map

MAP: dict[str, Any] = tomllib.loads(
    (Path(__file__).parent / "data" / "balance_of_power_map.toml").read_text(encoding="utf-8")
)

CLASSES = ("king", "general", "banker")
CLASS_LABELS = {"king": "King", "general": "General", "banker": "Banker"}
# Each class eliminates exactly one other: the rock-paper-scissors of the reference card.
PREY = {"general": "king", "king": "banker", "banker": "general"}
PAWNS_PER_CLASS = 15
TERRITORY_LIMIT = 3
CAPITAL_BONUS = 3
POINTS_TO_WIN = {2: 30, 3: 27, 4: 24, 5: 21, 6: 18}
EMPIRES: dict[str, dict[str, Any]] = MAP["empires"]
# the colours offered at New game; a player who names none takes the first still free, so no two look alike
COLOURS = ("blue", "red", "green", "yellow", "black", "white")
TRACKING = ("board", "counts")
VARIANT_KEYS = ("tougher_neutral", "respawn", "total_domination")
# Achieving Empire, judged from the board at the start of each turn: "no_enemy" reads the
# rulebook's parenthesis (no enemy pawn in any territory of the empire; an empty one is
# fine), "held" asks for one of the player's own pawns in every territory as well.
EMPIRE_RULES = ("no_enemy", "held")


def _key(name: str) -> str:
    words = name.strip().lower().split()
    if words and words[0] == "the":
        words = words[1:]
    return " ".join(words)


def _known_territories() -> dict[str, str]:
    names: list[str] = []
    for empire in EMPIRES.values():
        names += empire["territories"]
        if empire["capital"]:
            names.append(empire["capital"])
    names += MAP.get("other", {}).get("territories", [])
    for a, others in MAP.get("adjacent", {}).items():
        names += [a, *others]
    return {_key(n): n for n in names}


KNOWN = _known_territories()


@dataclass(frozen=True)
class Atlas:
    """The map as far as the tracker knows it: the shipped data plus what the players completed."""

    known: Mapping[str, str]                     # key -> territory name
    adjacent: Mapping[str, frozenset[str]]
    borders_complete: frozenset[str]
    empires: Mapping[str, Mapping[str, Any]]     # {id: {"capital": name or "", "territories": [...], "complete": bool}}


def _build_atlas(extra: Mapping[str, Any]) -> Atlas:
    known = dict(KNOWN)
    for name in extra.get("territories", []):
        known.setdefault(_key(name), name)
    table = {a: list(b) for a, b in MAP.get("adjacent", {}).items()}
    for a, b in extra.get("borders", []):
        table.setdefault(a, []).append(b)
    empires = {}
    for e, spec in EMPIRES.items():
        more = extra.get("empires", {}).get(e, {})
        empires[e] = {
            "capital": spec["capital"] or more.get("capital", ""),
            "territories": [known[_key(t)] for t in spec["territories"]] + list(more.get("territories", [])),
            "complete": bool(spec["complete"] or more.get("complete")),
        }
    return Atlas(
        known=known,
        adjacent=symmetric_links((), table, lambda name: known[_key(name)]),
        borders_complete=frozenset(known[_key(t)] for t in [*MAP.get("borders_complete", []), *extra.get("borders_complete", [])]),
        empires=empires,
    )


_atlas_of = cached_atlas(_build_atlas)


def _atlas(state: Mapping[str, Any]) -> Atlas:
    # the completion rides in the state as plain data, so the rules stay functions of the state
    return _atlas_of(state.get("map"))


SHIPPED = _atlas_of({})
# kept for callers that read the shipped map directly
ADJACENT = SHIPPED.adjacent
BORDERS_COMPLETE = SHIPPED.borders_complete

MAP_FORM = MapForm(
    game="balance_of_power",
    names=tuple(KNOWN.values()),
    key=_key,
    open_names=True,
    group="empires",
    group_ids=tuple(EMPIRES),
    group_fields=frozenset({"capital", "territories", "complete"}),
    shipped_groups={e: {"capital": spec["capital"], "territories": SHIPPED.empires[e]["territories"]} for e, spec in EMPIRES.items()},
    shipped_borders=frozenset(frozenset((a, b)) for a, bs in SHIPPED.adjacent.items() for b in bs),
    borders_known=SHIPPED.borders_complete,
)


# ---------------------------------------------------------------- pure rules


def points_to_win(players: int) -> int:
    """Points that win at once, by number of players."""
    if isinstance(players, bool) or not isinstance(players, int) or players not in POINTS_TO_WIN:
        raise ValueError(f"Balance of Power is played by 2 to 6 players, not {players!r}")
    return POINTS_TO_WIN[players]


def score(territories: int, full_capitals: int) -> int:
    """Points: one per territory held alone, three more per capital holding King, General and Banker."""
    for name, value in (("territories", territories), ("full_capitals", full_capitals)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{name} must be a whole number of at least 0, not {value!r}")
    if full_capitals > len(EMPIRES):
        raise ValueError(f"there are only {len(EMPIRES)} capitals")
    if full_capitals > territories:
        raise ValueError("a full capital is itself a territory held alone")
    return territories + CAPITAL_BONUS * full_capitals


def _pawn_class(name: Any, key: str = "pawn") -> str:
    if not isinstance(name, str) or name.strip().lower() not in CLASSES:
        raise RuleError(f"'{key}' must be king, general or banker, not {name!r}")
    return name.strip().lower()


def beats(attacker_class: str, defender_class: str) -> bool:
    """Whether a pawn of `attacker_class` eliminates one of `defender_class`."""
    try:
        a, d = _pawn_class(attacker_class, "attacker_class"), _pawn_class(defender_class, "defender_class")
    except RuleError as error:
        raise ValueError(str(error)) from None
    return PREY[a] == d


# ---------------------------------------------------------------- state helpers


def _known(state: Mapping[str, Any]) -> dict[str, str]:
    """Every territory name this game knows: the map's, the capitals' and those the table added."""
    names = dict(_atlas(state).known)
    for where in [*state["capitals"].values(), *state["added"]]:
        if where is not None:
            names.setdefault(_key(where), where)
    return names


def _canon(state: Mapping[str, Any], name: Any, key: str) -> str:
    require(isinstance(name, str) and name.strip(), f"'{key}' must be a territory name")
    known = _known(state)
    k = _key(name)
    if k in known:
        return known[k]
    # A typo must not become a new territory: it would silently change the scores.
    near = [known[m] for m in difflib.get_close_matches(k, list(known), n=3, cutoff=0.6)]
    hint = f"; did you mean {' or '.join(near)}?" if near else ""
    raise RuleError(
        f"'{key}': {name.strip()!r} is not a territory on the map{hint} "
        "(a territory printed on the board but missing from the map data is added once: 'Add a territory' on the page, "
        "the add_territory action)"
    )


def _player(state: Mapping[str, Any], name: Any, key: str = "player") -> str:
    require(isinstance(name, str) and name in state["order"], f"'{key}': {name!r} is not a player in this game")
    return name


def _pawns(state: Mapping[str, Any], player: str) -> dict[str, int]:
    """Pawns of each class on the board."""
    if state["tracking"] == "counts":
        return dict(state["counts"][player]["pawns"])
    counts = {c: 0 for c in CLASSES}
    for pawns in state["board"].values():
        for owner, cls in pawns:
            if owner == player:
                counts[cls] += 1
    return counts


def _controller(pawns: list[list[str]]) -> str | None:
    owners = {owner for owner, _ in pawns}
    return owners.pop() if len(owners) == 1 else None


def _capital(state: Mapping[str, Any], empire: str) -> str | None:
    return state["capitals"].get(empire)


def _empire_of(state: Mapping[str, Any], player: str) -> str:
    return state["players"][player]["empire"]


def _empire_territories(state: Mapping[str, Any], empire: str) -> set[str]:
    spec = _atlas(state).empires[empire]
    members = set(spec["territories"]) | {t for t, owner in state["added"].items() if owner == empire}
    if state["capitals"].get(empire):
        members.add(state["capitals"][empire])
    return members


def _blockers(state: Mapping[str, Any], player: str, empire: str) -> list[dict[str, str]]:
    """The known territories of `empire` that stop `player` achieving it on the board, and why:
    "enemy" (another player's pawn is there) or "empty" (the "held" reading wants one of the player's own)."""
    if state["tracking"] != "board":
        return []
    found = []
    for where in sorted(_empire_territories(state, empire)):
        pawns = state["board"].get(where, [])
        if any(owner != player for owner, _ in pawns):
            found.append({"territory": where, "why": "enemy"})
        elif state["empire_rule"] == "held" and not pawns:
            found.append({"territory": where, "why": "empty"})
    return found


def _achieved(state: Mapping[str, Any], player: str, empire: str) -> bool:
    """Whether `player` controls `empire` alone, judged from the board where it can be.

    On the board every known territory of the empire is looked at; where the map data does
    not list the whole empire, the table's declaration stands for the territories it lacks.
    """
    spec = _atlas(state).empires[empire]
    if state["tracking"] == "board":
        if _blockers(state, player, empire):
            return False
        if spec["complete"]:
            return True
    return empire in state["declared"][player]


def _board_score(state: Mapping[str, Any], player: str) -> dict[str, Any]:
    held = [t for t, pawns in state["board"].items() if _controller(pawns) == player]
    active = {p["empire"] for p in state["players"].values()}
    full = []
    for empire in EMPIRES:
        capital = _capital(state, empire)
        if capital is None or capital not in held:
            continue
        classes = {cls for _, cls in state["board"][capital]}
        if classes != set(CLASSES):
            continue
        if state["variants"]["tougher_neutral"] and empire not in active and not _achieved(state, player, empire):
            continue
        full.append(capital)
    return {"territories": len(held), "held": sorted(held), "full_capitals": len(full), "capitals": full}


def _score_parts(state: Mapping[str, Any], player: str) -> dict[str, Any]:
    if state["tracking"] == "board":
        parts = _board_score(state, player)
    else:
        counts = state["counts"][player]
        parts = {
            "territories": counts["territories"],
            "held": None,
            "full_capitals": counts["full_capitals"],
            "capitals": None,
        }
    known = parts["territories"] is not None and parts["full_capitals"] is not None
    parts["score"] = score(parts["territories"], parts["full_capitals"]) if known else None
    return parts


def _score(state: Mapping[str, Any], player: str) -> int:
    value = _score_parts(state, player)["score"]
    return 0 if value is None else value


def _total_pawns(state: Mapping[str, Any], player: str) -> int:
    return sum(_pawns(state, player).values())


def _finish_by_points(state: dict[str, Any], reason: str) -> None:
    """End the game now: highest score, then most pawns on the board, else a draw."""
    ranking = sorted(state["order"], key=lambda p: (_score(state, p), _total_pawns(state, p)), reverse=True)
    best = ranking[0]
    tied = [p for p in ranking if (_score(state, p), _total_pawns(state, p)) == (_score(state, best), _total_pawns(state, best))]
    state["over"] = True
    state["winner"] = best if len(tied) == 1 else None
    state["end_reason"] = reason if len(tied) == 1 else f"{reason}; draw between {', '.join(tied)}"


def _check_win(state: dict[str, Any]) -> None:
    if state["over"] or state["phase"] != "play":
        return
    player = state["turn"]["player"]
    if state["variants"]["total_domination"]:
        alive = [p for p in state["order"] if _total_pawns(state, p) > 0]
        if alive == [player]:
            state["over"], state["winner"] = True, player
            state["end_reason"] = f"{player} has eliminated every other pawn"
        return
    target = points_to_win(len(state["order"]))
    if _score(state, player) >= target:
        state["over"], state["winner"] = True, player
        state["end_reason"] = f"{player} reached {_score(state, player)} points (needs {target})"


def _begin_turn(state: dict[str, Any], player: str, number: int, round_: int = 1) -> None:
    wiped = state["wiped"][player]
    # A class wiped out may re-spawn in this turn only, the player's next one.
    state["wiped"][player] = {cls: "now" for cls, when in wiped.items() if when == "next"}
    state["turn"] = {
        "number": number,      # turns played in all, this one included (every player's turn counts one)
        "round": round_,       # once round the table: what the table calls how far the game is
        "player": player,
        "used": {c: False for c in CLASSES},
        "bonus": _achieved(state, player, _empire_of(state, player)),
        "bonus_used": False,
        "done": [],
        "stuck": [],
    }
    _check_win(state)


def _spend(state: dict[str, Any], cls: str) -> str:
    """Use the class's own action, or the bonus fourth once the class's is gone."""
    turn = state["turn"]
    if not turn["used"][cls]:
        turn["used"][cls] = True
        return cls
    require(turn["bonus"], f"the {CLASS_LABELS[cls]} action is used up this turn")
    require(not turn["bonus_used"], f"the {CLASS_LABELS[cls]} action and the bonus action are both used up")
    turn["bonus_used"] = True
    return "bonus"


def _count_in(pawns: list[list[str]], player: str, cls: str) -> int:
    return sum(1 for owner, c in pawns if owner == player and c == cls)


def _check_border(state: Mapping[str, Any], a: str, b: str) -> None:
    atlas = _atlas(state)
    if a in atlas.borders_complete or b in atlas.borders_complete:
        require(b in atlas.adjacent.get(a, set()), f"{b} does not border {a}")


def _can_leave(state: Mapping[str, Any], player: str, cls: str, where: str) -> None:
    stuck = sum(1 for t, c in state["turn"]["stuck"] if t == where and c == cls)
    if stuck:
        present = _count_in(state["board"].get(where, []), player, cls)
        require(present > stuck, f"the {CLASS_LABELS[cls]} in {where} attacked without moving and cannot move this turn")


def _remove(board: dict[str, list[list[str]]], where: str, owner: str, cls: str) -> None:
    pawns = board[where]
    pawns.remove([owner, cls])
    if not pawns:
        del board[where]


# ---------------------------------------------------------------- new


OPTION_KEYS = ("players", "first", "tracking", "capitals", "empire_rule", *VARIANT_KEYS)


def _option_players(options: Mapping[str, Any]) -> dict[str, dict[str, str]]:
    players = options.get("players", 2)
    if type(players) is int:
        # A bare count seats that many players on the first empires, named after them.
        require(2 <= players <= 6, f"'players': Balance of Power takes 2 to 6 players, not {players}")
        players = [{"name": spec["title"], "empire": empire} for empire, spec in list(EMPIRES.items())[:players]]
    require(isinstance(players, (list, tuple)), "'players' must list 2 to 6 players, each with a name and an empire")
    require(2 <= len(players) <= 6, f"'players': Balance of Power takes 2 to 6 players, not {len(players)}")
    result: dict[str, dict[str, str]] = {}
    for entry in players:
        require(isinstance(entry, Mapping), "'players': each player is {name, empire, colour}")
        for key in entry:
            require(key in ("name", "empire", "colour"), f"'players': unknown key {key!r}")
        name = entry.get("name")
        require(isinstance(name, str) and name.strip(), "'players': every player needs a name")
        name = player_name(name.strip(), "'players': a player's name")
        require(name not in result, f"'players': {name!r} appears twice")
        empire = entry.get("empire")
        require(isinstance(empire, str) and empire in EMPIRES, f"'players': {name}'s empire must be one of {', '.join(EMPIRES)}, not {empire!r}")
        require(all(p["empire"] != empire for p in result.values()), f"'players': {EMPIRES[empire]['title']} is chosen twice")
        colour = entry.get("colour") or ""
        # only the game's own colours: the page paints them, so anything else would be style text from a stranger
        colour = colour and pick_colour(colour, COLOURS, f"'players': {name}'s colour")
        require(not colour or all(p["colour"] != colour for p in result.values()),
                f"'players': colour {colour} is chosen twice")
        result[name] = {"empire": empire, "colour": colour}
    taken = {p["colour"] for p in result.values()}
    # six colours for at most six players, all different: one is always free for a player who named none
    free = iter(c for c in COLOURS if c not in taken)
    for spec in result.values():
        if not spec["colour"]:
            spec["colour"] = next(free)
    return result


def new(options: Mapping[str, Any], map_data: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A game ready for its set-up (board tracking) or its first turn (counts)."""
    require(isinstance(options, Mapping), "options must be a mapping")
    for key in options:
        require(key in OPTION_KEYS, f"unknown option '{key}' (known: {', '.join(OPTION_KEYS)})")
    players = _option_players(options)
    order = list(players)
    first = options.get("first", order[0])
    require(first in order, f"'first' must be one of the players, not {first!r}")
    # Seating stays clockwise; the starting player just goes first.
    start = order.index(first)
    order = order[start:] + order[:start]
    tracking = options.get("tracking", "counts")
    require(tracking in TRACKING, f"'tracking' must be board or counts, not {tracking!r}")
    variants = {}
    for key in VARIANT_KEYS:
        value = options.get(key, False)
        require(isinstance(value, bool), f"'{key}' must be true or false")
        variants[key] = value
    empire_rule = options.get("empire_rule", "no_enemy")
    require(empire_rule in EMPIRE_RULES, f"'empire_rule' must be one of {', '.join(EMPIRE_RULES)}, not {empire_rule!r}")
    atlas = _atlas({"map": map_data})
    capitals = {e: spec["capital"] or None for e, spec in atlas.empires.items()}
    given = options.get("capitals", {})
    require(isinstance(given, Mapping), "'capitals' must map empires to territory names")
    for empire, where in given.items():
        require(empire in EMPIRES, f"'capitals': unknown empire {empire!r}")
        require(isinstance(where, str) and where.strip(), f"'capitals': {empire}'s capital must be a territory name")
        # a capital the map does not know is the table's own word, kept and shown: bounded as add_territory's are
        capitals[empire] = atlas.known.get(_key(where)) or place_name(" ".join(where.split()), f"'capitals': {empire}'s capital")
    placed = [where for where in capitals.values() if where is not None]
    require(len(set(placed)) == len(placed), "'capitals': two empires cannot share a capital")
    if tracking == "board":
        missing = [e for e, where in capitals.items() if where is None]
        require(not missing, f"'capitals': board tracking needs the capital of {', '.join(missing)} (the map data lacks it)")
    state: dict[str, Any] = {
        "game": "balance_of_power",
        "players": players,
        "order": order,
        "tracking": tracking,
        "variants": variants,
        "empire_rule": empire_rule,
        "capitals": capitals,
        "added": {},
        "map": dict(map_data or {}),
        # classes wiped out: {player: {class: "next" (until the player's next turn) or "now"}}
        "wiped": {p: {} for p in order},
        "board": {},
        "counts": {
            p: {"territories": None, "full_capitals": None, "pawns": {c: 2 for c in CLASSES}} for p in order
        },
        "declared": {p: [] for p in order},
        "phase": "setup" if tracking == "board" else "play",
        "setup_player": order[0],
        "turn": None,
        "over": False,
        "winner": None,
        "end_reason": None,
    }
    if tracking == "board":
        for player in order:
            capital = capitals[players[player]["empire"]]
            state["board"][capital] = [[player, c] for c in CLASSES]
    else:
        _begin_turn(state, order[0], 1)
    return state


# ---------------------------------------------------------------- actions


def _place(state: dict[str, Any], action: Mapping[str, Any]) -> None:
    require(state["phase"] == "setup", "pawns are placed by hand only during the set-up")
    player = state["setup_player"]
    if "player" in action:
        require(action["player"] == player, f"it is {player}'s turn to place pawns, not {action['player']}'s")
    cls = _pawn_class(field(action, "pawn", str))
    where = _canon(state, field(action, "territory", str), "territory")
    empire = _empire_of(state, player)
    require(where != _capital(state, empire), "the second set of pawns goes outside the capital")
    for other, spec in _atlas(state).empires.items():
        if other != empire and (where in spec["territories"] or where == _capital(state, other)):
            raise RuleError(f"{where} belongs to {EMPIRES[other]['title']}, not {player}'s empire")
    require(_pawns(state, player)[cls] < 2, f"{player} has already placed a second {CLASS_LABELS[cls]}")
    pawns = state["board"].setdefault(where, [])
    require(len(pawns) < TERRITORY_LIMIT, f"{where} already holds {TERRITORY_LIMIT} pawns")
    pawns.append([player, cls])
    if sum(_pawns(state, player).values()) == 2 * len(CLASSES):
        index = state["order"].index(player)
        if index + 1 < len(state["order"]):
            state["setup_player"] = state["order"][index + 1]
        else:
            state["phase"] = "play"
            state["setup_player"] = None
            _begin_turn(state, state["order"][0], 1)


def _target(state: Mapping[str, Any], action: Mapping[str, Any], player: str) -> tuple[str, str]:
    owner = _player(state, field(action, "target_player", str), "target_player")
    require(owner != player, "'target_player': a player cannot eliminate his own pawns")
    cls = _pawn_class(field(action, "target_pawn", str), "target_pawn")
    return owner, cls


def _move(state: dict[str, Any], action: Mapping[str, Any]) -> None:
    player = state["turn"]["player"]
    cls = _pawn_class(field(action, "pawn", str))
    require(_pawns(state, player)[cls] > 0, f"{player} has no {CLASS_LABELS[cls]} on the board")
    if state["tracking"] == "board":
        source = _canon(state, field(action, "from", str), "from")
        dest = _canon(state, field(action, "to", str), "to")
        require(source != dest, "'to' must be another territory")
        require(_count_in(state["board"].get(source, []), player, cls) > 0, f"{player} has no {CLASS_LABELS[cls]} in {source}")
        _check_border(state, source, dest)
        _can_leave(state, player, cls, source)
        require(len(state["board"].get(dest, [])) < TERRITORY_LIMIT, f"{dest} already holds {TERRITORY_LIMIT} pawns")
        slot = _spend(state, cls)
        _remove(state["board"], source, player, cls)
        state["board"].setdefault(dest, []).append([player, cls])
        state["turn"]["done"].append({"action": "move", "pawn": cls, "slot": slot, "from": source, "to": dest})
    else:
        slot = _spend(state, cls)
        state["turn"]["done"].append({"action": "move", "pawn": cls, "slot": slot})


def _attack(state: dict[str, Any], action: Mapping[str, Any]) -> None:
    player = state["turn"]["player"]
    cls = _pawn_class(field(action, "pawn", str))
    require(_pawns(state, player)[cls] > 0, f"{player} has no {CLASS_LABELS[cls]} on the board")
    owner, prey = _target(state, action, player)
    require(
        PREY[cls] == prey,
        f"a {CLASS_LABELS[cls]} eliminates only a {CLASS_LABELS[PREY[cls]]}, not a {CLASS_LABELS[prey]}",
    )
    record: dict[str, Any] = {"action": "attack", "pawn": cls, "target_player": owner, "target_pawn": prey}
    if state["tracking"] == "board":
        source = _canon(state, field(action, "from", str), "from")
        dest = _canon(state, action.get("to", source), "to")
        require(_count_in(state["board"].get(source, []), player, cls) > 0, f"{player} has no {CLASS_LABELS[cls]} in {source}")
        require(_count_in(state["board"].get(dest, []), owner, prey) > 0, f"{owner} has no {CLASS_LABELS[prey]} in {dest}")
        if dest != source:
            _check_border(state, source, dest)
            _can_leave(state, player, cls, source)
        record["slot"] = _spend(state, cls)
        _remove(state["board"], dest, owner, prey)
        if dest != source:
            _remove(state["board"], source, player, cls)
            state["board"].setdefault(dest, []).append([player, cls])
        else:
            state["turn"]["stuck"].append([source, cls])
        record.update({"from": source, "to": dest})
    else:
        require(state["counts"][owner]["pawns"][prey] > 0, f"{owner} has no {CLASS_LABELS[prey]} left on the board")
        record["slot"] = _spend(state, cls)
        state["counts"][owner]["pawns"][prey] -= 1
    if _pawns(state, owner)[prey] == 0:
        record["class_gone"] = True
        state["wiped"][owner][prey] = "next"
    state["turn"]["done"].append(record)


def _duplicate(state: dict[str, Any], action: Mapping[str, Any]) -> None:
    player = state["turn"]["player"]
    cls = _pawn_class(field(action, "pawn", str))
    pawns = _pawns(state, player)
    require(pawns[cls] > 0, f"{player} has no {CLASS_LABELS[cls]} left to duplicate")
    if state["tracking"] == "board":
        where = _canon(state, field(action, "territory", str), "territory")
        here = state["board"].get(where, [])
        require(_count_in(here, player, cls) > 0, f"{player} has no {CLASS_LABELS[cls]} in {where}")
        require(len(here) < TERRITORY_LIMIT, f"{where} already holds {TERRITORY_LIMIT} pawns")
    else:
        where = None
    turn = state["turn"]
    require(
        not turn["used"][cls] or (turn["bonus"] and not turn["bonus_used"]),
        f"the {CLASS_LABELS[cls]} action is used up this turn",
    )
    if pawns[cls] >= PAWNS_PER_CLASS:
        # Wanting a pawn the pool no longer has ends the game on the spot, but only when the
        # duplicate is an action the player may still take; a spent one is simply refused.
        _finish_by_points(state, f"{player} had no {CLASS_LABELS[cls]} left in the pool to duplicate")
        return
    slot = _spend(state, cls)
    if where is not None:
        state["board"][where].append([player, cls])
    else:
        state["counts"][player]["pawns"][cls] += 1
    state["turn"]["done"].append({"action": "duplicate", "pawn": cls, "slot": slot, "territory": where})


def _respawn(state: dict[str, Any], action: Mapping[str, Any]) -> None:
    require(state["variants"]["respawn"], "re-spawning is only played with the re-spawn variant")
    player = state["turn"]["player"]
    cls = _pawn_class(field(action, "pawn", str))
    require(_pawns(state, player)[cls] == 0, f"{player} still has a {CLASS_LABELS[cls]} on the board")
    require(
        state["wiped"][player].get(cls) == "now",
        f"a {CLASS_LABELS[cls]} re-spawns only in {player}'s next turn after the last one was eliminated",
    )
    where = None
    if state["tracking"] == "board":
        where = _canon(state, field(action, "territory", str), "territory")
        capital = _capital(state, _empire_of(state, player))
        mine = [t for t, pawns in state["board"].items() if any(o == player for o, _ in pawns)]
        if capital in mine:
            require(where == capital, f"{player} still has a pawn in {capital}: the new pawn appears there")
        else:
            require(where in mine, f"{player} has no pawn in {where} to re-spawn beside")
            steps = _distances(state, capital)
            nearer = [t for t in mine if t in steps and (where not in steps or steps[t] < steps[where])]
            # Where the map data cannot tell the distance of every candidate, the table judges "closest".
            if where in steps or all(t in steps for t in mine):
                require(not nearer, f"{', '.join(sorted(nearer))} is closer to {capital} than {where}: the new pawn appears there")
        require(len(state["board"].get(where, [])) < TERRITORY_LIMIT, f"{where} already holds {TERRITORY_LIMIT} pawns")
    slot = _spend(state, cls)
    del state["wiped"][player][cls]
    if where is not None:
        state["board"].setdefault(where, []).append([player, cls])
    else:
        state["counts"][player]["pawns"][cls] += 1
    state["turn"]["done"].append({"action": "respawn", "pawn": cls, "slot": slot, "territory": where})


def _declare_empire(state: dict[str, Any], action: Mapping[str, Any]) -> None:
    player = _player(state, field(action, "player", str))
    empire = field(action, "empire", str)
    require(empire in EMPIRES, f"'empire': unknown empire {empire!r}")
    achieved = field(action, "achieved", bool)
    if state["tracking"] == "board":
        require(not _atlas(state).empires[empire]["complete"], f"the map lists all of {EMPIRES[empire]['title']}: the tracker judges it from the board")
    declared = state["declared"][player]
    if achieved and empire not in declared:
        declared.append(empire)
    elif not achieved and empire in declared:
        declared.remove(empire)
    turn = state["turn"]
    if turn is not None and turn["player"] == player and empire == _empire_of(state, player):
        # The bonus is judged at the start of the turn; a correction is fine until an action is spent.
        require(not turn["done"], "the bonus action is decided at the start of the turn")
        turn["bonus"] = _achieved(state, player, empire)
    _check_win(state)


def _add_territory(state: dict[str, Any], action: Mapping[str, Any]) -> None:
    """A printed territory the map data lacks, added once by the table (optionally with its empire)."""
    name = field(action, "territory", str)
    require(name.strip() != "", f"'territory' must be a name of 1 to {PLACE_MOST} characters")
    name = place_name(" ".join(name.split()), "'territory'")
    known = _known(state)
    require(_key(name) not in known, f"'territory': {known.get(_key(name))} is already on the map")
    empire = field(action, "empire", (str, type(None)), default=None)
    require(empire is None or empire in EMPIRES, f"'empire' must be one of {', '.join(EMPIRES)} or null, not {empire!r}")
    state["added"][name] = empire


def _set_empire_rule(state: dict[str, Any], action: Mapping[str, Any]) -> None:
    """The table settles how it reads Achieving Empire (the `empire_rule` option), e.g. when the question first comes up."""
    require(state["tracking"] == "board", "with counts tracking the table judges its empires itself")
    rule = field(action, "empire_rule", str)
    require(rule in EMPIRE_RULES, f"'empire_rule' must be one of {', '.join(EMPIRE_RULES)}, not {rule!r}")
    state["empire_rule"] = rule
    turn = state["turn"]
    if turn is not None and not turn["done"]:
        # Judged at the start of the turn: the new reading holds from now while no action is spent, else from the next turn.
        turn["bonus"] = _achieved(state, turn["player"], _empire_of(state, turn["player"]))
    _check_win(state)


def _set_counts(state: dict[str, Any], action: Mapping[str, Any]) -> None:
    require(state["tracking"] == "counts", "with board tracking the tracker counts territories itself")
    player = _player(state, field(action, "player", str))
    counts = copy.deepcopy(state["counts"][player])
    # Each territory held alone needs a pawn of the player's, and a full capital three.
    bounds = {"territories": PAWNS_PER_CLASS * len(CLASSES), "full_capitals": len(EMPIRES)}
    for key in ("territories", "full_capitals"):
        if key in action:
            value = field(action, key, int)
            require(value >= 0, f"'{key}' cannot be negative")
            require(value <= bounds[key], f"'{key}' can be at most {bounds[key]}, not {value}")
            counts[key] = value
    if "pawns" in action:
        pawns = field(action, "pawns", Mapping)
        for cls, n in pawns.items():
            cls = _pawn_class(cls, "pawns")
            require(type(n) is int and 0 <= n <= PAWNS_PER_CLASS, f"'pawns': {CLASS_LABELS[cls]} count must be 0-{PAWNS_PER_CLASS}")
            counts["pawns"][cls] = n
    if counts["territories"] is not None and counts["full_capitals"] is not None:
        try:
            score(counts["territories"], counts["full_capitals"])
        except ValueError as error:
            raise RuleError(str(error)) from None
    state["counts"][player] = counts
    _check_win(state)


def _distances(state: Mapping[str, Any], start: str | None) -> dict[str, int]:
    """Borders crossed from `start` to every territory the map data connects it to."""
    if start is None:
        return {}
    adjacent = _atlas(state).adjacent
    steps, queue = {start: 0}, deque([start])
    while queue:
        here = queue.popleft()
        for there in adjacent.get(here, ()):
            if there not in steps:
                steps[there] = steps[here] + 1
                queue.append(there)
    return steps


def _end_turn(state: dict[str, Any], action: Mapping[str, Any]) -> None:
    player = state["turn"]["player"]
    # The re-spawn window was this turn; a class still gone now stays gone.
    state["wiped"][player] = {cls: when for cls, when in state["wiped"][player].items() if when != "now"}
    order = state["order"]
    index = order.index(player)
    for step in range(1, len(order) + 1):
        candidate = order[(index + step) % len(order)]
        # A player with no pawns left has nothing to do; the turn passes on.
        if _total_pawns(state, candidate) > 0:
            # past the last seat the turn comes round to the first player again: a new round
            _begin_turn(state, candidate, state["turn"]["number"] + 1,
                        state["turn"].get("round", 1) + (index + step >= len(order)))
            return
    _finish_by_points(state, "no pawns are left on the board")


TURN_ACTIONS = {
    "move": _move,
    "attack": _attack,
    "duplicate": _duplicate,
    "respawn": _respawn,
    "end_turn": _end_turn,
}
TABLE_ACTIONS = {
    "place": _place,
    "declare_empire": _declare_empire,
    "set_counts": _set_counts,
    "add_territory": _add_territory,
    "set_empire_rule": _set_empire_rule,
}
ACTION_TYPES = tuple(TABLE_ACTIONS) + tuple(TURN_ACTIONS)


def act(state: Mapping[str, Any], action: Mapping[str, Any]) -> dict[str, Any]:
    """Apply one action to a copy of `state`; RuleError if the rules forbid it."""
    require(isinstance(action, Mapping), "an action must be a mapping")
    kind = field(action, "type", str)
    require(kind in ACTION_TYPES, f"unknown action type {kind!r} (known: {', '.join(ACTION_TYPES)})")
    require(not state["over"], "the game is over")
    if kind in TURN_ACTIONS:
        require(state["phase"] == "play", "finish placing the set-up pawns first")
        if "player" in action:
            actor = field(action, "player", str)
            require(actor == state["turn"]["player"], f"it is {state['turn']['player']}'s turn, not {actor}'s")
    new_state = copy.deepcopy(dict(state))
    (TABLE_ACTIONS.get(kind) or TURN_ACTIONS[kind])(new_state, action)
    if kind in TURN_ACTIONS and kind != "end_turn":
        _check_win(new_state)
    return new_state


# ---------------------------------------------------------------- view


def _actions_left(state: Mapping[str, Any]) -> dict[str, Any] | None:
    turn = state["turn"]
    if turn is None:
        return None
    return {
        **{c: not turn["used"][c] for c in CLASSES},
        "bonus": turn["bonus"] and not turn["bonus_used"],
        "bonus_earned": turn["bonus"],
    }


def _message(state: Mapping[str, Any]) -> str:
    if state["over"]:
        who = state["winner"] if state["winner"] is not None else "Nobody"
        return f"Game over - {who} wins: {state['end_reason']}." if state["winner"] else f"Game over: {state['end_reason']}."
    if state["phase"] == "setup":
        player = state["setup_player"]
        left = [CLASS_LABELS[c] for c, n in _pawns(state, player).items() if n < 2]
        return f"Set-up: {player} places a {', a '.join(left)} in other territories of the empire."
    player = state["turn"]["player"]
    left = _actions_left(state) or {}
    open_ = [CLASS_LABELS[c] for c in CLASSES if left.get(c)]
    if left.get("bonus"):
        open_.append("bonus")
    if not open_:
        return f"{player}: all actions spent - end the turn."
    return f"{player}: actions left - {', '.join(open_)}."


def view(state: Mapping[str, Any]) -> dict[str, Any]:
    """Everything the page shows, as JSON-safe data."""
    target = None if state["variants"]["total_domination"] else points_to_win(len(state["order"]))
    played = {p["empire"] for p in state["players"].values()}
    neutral = [e for e in EMPIRES if e not in played]
    rows = []
    for player in state["order"]:
        parts = _score_parts(state, player)
        pawns = _pawns(state, player)
        empire = _empire_of(state, player)
        rows.append(
            {
                "name": player,
                "empire": empire,
                "empire_title": EMPIRES[empire]["title"],
                "colour": state["players"][player]["colour"],
                "score": parts["score"],
                "territories": parts["territories"],
                "held": parts["held"],
                "full_capitals": parts["full_capitals"],
                "capitals": parts["capitals"],
                "to_win": None if target is None or parts["score"] is None else max(0, target - parts["score"]),
                "pawns": pawns,
                "pawns_total": sum(pawns.values()),
                "pool": {c: PAWNS_PER_CLASS - n for c, n in pawns.items()},
                "gone": [c for c, n in pawns.items() if n == 0],
                "empire_achieved": _achieved(state, player, empire),
                "empire_blocked": _blockers(state, player, empire),
                "declared": list(state["declared"][player]),
                # Tougher Neutral Empires on the board: which neutral empires this player has achieved, or what stops it
                "neutral": [
                    {
                        "empire": e,
                        "title": EMPIRES[e]["title"],
                        "capital": state["capitals"][e],
                        "declared": e in state["declared"][player],
                        "achieved": _achieved(state, player, e),
                        "judged_by_board": bool(EMPIRES[e]["complete"]),
                        "blocked": _blockers(state, player, e),
                    }
                    for e in neutral
                ] if state["variants"]["tougher_neutral"] and state["tracking"] == "board" else [],
            }
        )
    standings = sorted(rows, key=lambda r: (r["score"] or 0, r["pawns_total"]), reverse=True)
    board = [
        {"territory": t, "pawns": [{"player": o, "pawn": c} for o, c in pawns], "controller": _controller(pawns)}
        for t, pawns in sorted(state["board"].items())
    ]
    turn = state["turn"]
    return {
        "game": "balance_of_power",
        "title": ENGINE.title,
        "tracking": state["tracking"],
        "variants": dict(state["variants"]),
        "phase": state["phase"],
        "setup_player": state["setup_player"],
        "points_to_win": target,
        "players": rows,
        "leader": standings[0]["name"] if standings else None,
        "turn": None if turn is None else {
            "number": turn["number"],
            "round": turn.get("round", 1),
            "player": turn["player"],
            "actions_left": _actions_left(state),
            "done": [dict(d) for d in turn["done"]],
        },
        "chart": [{"pawn": c, "beats": PREY[c], "label": f"{CLASS_LABELS[c]} beats {CLASS_LABELS[PREY[c]]}"} for c in CLASSES],
        "board": board,
        "capitals": {e: where for e, where in state["capitals"].items()},
        "empires": {e: {"title": EMPIRES[e]["title"], "territories": list(spec["territories"])} for e, spec in _atlas(state).empires.items()},
        "map": {"game": "balance_of_power", "borders_known": sorted(_atlas(state).borders_complete),
                "completed": dict(state.get("map") or {})},
        "known_territories": sorted(set(_known(state).values())),
        "added_territories": dict(state["added"]),
        "empire_rule": state["empire_rule"],
        "empire_rules": list(EMPIRE_RULES),
        "neutral_empires": neutral,
        "over": state["over"],
        "winner": state["winner"],
        "end_reason": state["end_reason"],
        "message": _message(state),
    }


def scores(state: Mapping[str, Any]) -> dict[str, int]:
    """Points per player right now (unknown counts score 0)."""
    return {p: _score(state, p) for p in state["order"]}


ENGINE = Engine(name="balance_of_power", title="Balance of Power (1815)", new=new, act=act, view=view, scores=scores,
                seats=(2, 6, 2), default_names=tuple(spec["title"] for spec in EMPIRES.values()),
                seat_choice={"key": "empire", "label": "empire",
                             "options": [{"value": e, "label": spec["title"]} for e, spec in EMPIRES.items()]},
                colours=COLOURS,
                setup_options=(
                    {"key": "tougher_neutral", "kind": "bool", "default": False, "label": "Tougher neutral empires",
                     "help": "a neutral capital held with all three classes gives its 3 bonus points only once that empire is achieved"},
                    {"key": "respawn", "kind": "bool", "default": False, "label": "Re-spawn",
                     "help": "a class wiped out may come back with one pawn next turn, in the capital or the nearest territory held"},
                    {"key": "total_domination", "kind": "bool", "default": False, "label": "Total domination",
                     "help": "no points target: the winner removes every other player's pawns from the board"},
                    {"key": "empire_rule", "label": "An empire is achieved", "kind": "choice",
                     "help": "what holding your own empire asks for the fourth action (with the board tracked)",
                     "choices": [{"label": "when no enemy pawn stands in it (our reading)", "options": {"empire_rule": "no_enemy"}},
                                 {"label": "when a pawn of yours stands in every territory", "options": {"empire_rule": "held"}}]},
                ),
                option_keys=OPTION_KEYS)


def engine(map_data: Mapping[str, Any] | None = None) -> Engine:
    """The engine with the players' completion of the map (MAP_FORM-checked data) in every state it sees."""
    if not map_data:
        return ENGINE
    extra = ()
    if all(spec["capital"] for spec in _atlas_of(map_data).empires.values()):
        # every capital known (the players completed the map): New game can follow the board pawn by pawn
        extra = ({"key": "tracking", "label": "Keep the score", "kind": "choice",
                  "help": "by territory counts entered at the end of each turn, or by following every pawn on the board",
                  "choices": [{"label": "from counts entered by hand", "options": {"tracking": "counts"}},
                              {"label": "by following the board, pawn by pawn", "options": {"tracking": "board"}}]},)
    return with_map(ENGINE, new, act, view, map_data, setup_options=extra + ENGINE.setup_options)
