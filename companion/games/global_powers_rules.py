"""Global Powers: the pure arithmetic (governments, evaluation, war, putsch, votes) and state helpers.

The engine in global_powers.py and the region actions and cards in
global_powers_actions.py are built on these.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Mapping

from companion.games.mapdata import symmetric_links
from companion.games.base import RuleError, field, require

MAP: dict[str, Any] = tomllib.loads((Path(__file__).parent / "data" / "global_powers_map.toml").read_text(encoding="utf-8"))

REGIONS: tuple[str, ...] = tuple(r["name"] for r in MAP["regions"])
HOME_POLITICIANS = {r["name"]: r["home"] for r in MAP["regions"]}
POLITICIANS = 20
HAND = 5
DECK = 16
CHIPS = ("raw", "economy", "military", "diplomacy")
SUPPLY = {"raw": 20, "economy": 40, "military": 30, "diplomacy": 30}
CHIP_CAP = 5
VP_TO_WIN = {2: 40, 3: 30, 4: 25, 5: 22}
COLOURS = ("red", "yellow", "green", "blue", "black")
POSITION_VP = {"only": 4, "strongest": 3, "shared": 2, "opposition": 1}
ECONOMY_VP = {3: 1, 4: 2, 5: 3}
UN_VP = 2
MAURITIUS_VP = -1
UN_PARTY = "UN"  # stands in for the UN emissaries in a protectorate
# The box holds two markers of each kind (sanctions, disarmament, protectorate).
MARKERS = {"sanctioned": 2, "disarmed": 2, "protectorate": 2}
MARKER_NAMES = {"sanctioned": "sanction", "disarmed": "disarmament", "protectorate": "protectorate"}
# How a sanctioned region's VP are halved: "region" halves what the region gives a party in
# all (its position plus the economy bonus), "each_line" halves each of the two on its own.
SANCTION_HALVING = ("region", "each_line")
DIE = (1, 2, 3)


def _key(name: str) -> str:
    return " ".join(name.lower().replace("-", " ").replace("_", " ").split())


_BY_KEY = {_key(r): r for r in REGIONS}


NEIGHBOURS = symmetric_links(REGIONS, MAP.get("neighbours", {}), lambda name: _BY_KEY[_key(name)])
BORDERS_COMPLETE = frozenset(_BY_KEY[_key(r)] for r in MAP.get("checks", {}).get("borders_complete", []))
START_CHIPS: dict[str, dict[str, int]] = {
    _BY_KEY[_key(r)]: {c: int(chips.get(c, 0)) for c in CHIPS} for r, chips in MAP.get("start", {}).items()
}


# ---------------------------------------------------------------- pure rules


def _whole(name: str, value: Any, low: int = 0, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be a whole number, not {value!r}")
    if value < low or (high is not None and value > high):
        bound = f"from {low} to {high}" if high is not None else f"at least {low}"
        raise ValueError(f"{name} must be {bound}, not {value}")
    return value


def vp_to_win(players: int) -> int:
    """Victory points needed to win an evaluation, by number of players."""
    if isinstance(players, bool) or not isinstance(players, int) or players not in VP_TO_WIN:
        raise ValueError(f"Global Powers is played by 2 to 5 players, not {players!r}")
    return VP_TO_WIN[players]


def strength_order(politicians: Mapping[str, int], un: Mapping[str, int], mauritius: Mapping[str, int]) -> list[str]:
    """Parties present, strongest first: most politicians, then most in the UN, then fewest in Mauritius."""
    present = [p for p, n in politicians.items() if n > 0]
    return sorted(present, key=lambda p: (-politicians[p], -un.get(p, 0), mauritius.get(p, 0), p))


def government(politicians: Mapping[str, int], un: Mapping[str, int], mauritius: Mapping[str, int]) -> list[str]:
    """The governing party or parties: the strongest, sharing only on a full tie."""
    order = strength_order(politicians, un, mauritius)
    if not order:
        return []

    def rank(p: str) -> tuple[int, int, int]:
        return (politicians[p], un.get(p, 0), -mauritius.get(p, 0))

    return [p for p in order if rank(p) == rank(order[0])]


def economy_vp(chips: int) -> int:
    """VP a region's economy gives each governing party."""
    return ECONOMY_VP.get(min(chips, CHIP_CAP), 0)


def evaluation_breakdown(
    regions: Mapping[str, Mapping[str, Any]],
    un: Mapping[str, int],
    mauritius: Mapping[str, int],
    sanction_halving: str = "region",
) -> dict[str, list[dict[str, Any]]]:
    """Each party's VP line by line: {party: [{"source", "region", "why", "vp"}, ...]}."""
    if sanction_halving not in SANCTION_HALVING:
        raise ValueError(f"sanction_halving must be one of {', '.join(SANCTION_HALVING)}, not {sanction_halving!r}")
    if not isinstance(regions, Mapping):
        raise ValueError("regions must map a region to its politicians and economy")
    for name, table in (("un", un), ("mauritius", mauritius)):
        if not isinstance(table, Mapping):
            raise ValueError(f"{name} must map a party to a number of politicians")
        for party, n in table.items():
            _whole(f"{name}[{party!r}]", n)
    parties: set[str] = set(un) | set(mauritius)
    lines: dict[str, list[dict[str, Any]]] = {}

    def add(party: str, line: dict[str, Any]) -> None:
        lines.setdefault(party, []).append(line)

    for region, data in regions.items():
        if not isinstance(data, Mapping) or not isinstance(data.get("politicians"), Mapping):
            raise ValueError(f"region {region!r} needs a 'politicians' mapping")
        politicians = {}
        for party, n in data["politicians"].items():
            politicians[party] = _whole(f"politicians[{party!r}] in {region}", n)
            parties.add(party)
        economy = _whole(f"economy in {region}", data.get("economy", 0), 0, CHIP_CAP)
        sanctioned = bool(data.get("sanctioned", False))
        local_un, local_mauritius = dict(un), dict(mauritius)
        if data.get("protectorate", False):
            emissaries = sum(un.values())
            if emissaries:
                politicians[UN_PARTY] = emissaries
                local_un[UN_PARTY] = emissaries
        present = [p for p, n in politicians.items() if n > 0]
        if not present:
            continue
        governing = government(politicians, local_un, local_mauritius)
        for party in present:
            if party == UN_PARTY:
                continue
            if len(present) == 1:
                why = "only"
            elif party in governing:
                why = "strongest" if len(governing) == 1 else "shared"
            else:
                why = "opposition"
            vp = POSITION_VP[why]
            bonus = economy_vp(economy) if party in governing else 0
            if sanctioned and sanction_halving == "region":
                # Half of what the region gives in all, in whole points: strongest 3 + economy 1 = 4 -> 2.
                full = vp + bonus
                vp, bonus = full // 2, 0
                if full != POSITION_VP[why]:
                    why = f"{why} + {economy} economy chips, halved"
            elif sanctioned:
                vp, bonus = vp // 2, bonus // 2
            add(party, {"source": "region", "region": region, "why": why, "vp": vp, "sanctioned": sanctioned})
            if bonus:
                add(party, {"source": "economy", "region": region, "why": f"{economy} economy chips", "vp": bonus, "sanctioned": sanctioned})
    for party in sorted(parties):
        if un.get(party, 0):
            add(party, {"source": "un", "region": None, "why": f"{un[party]} in the UN", "vp": UN_VP * un[party], "sanctioned": False})
        if mauritius.get(party, 0):
            add(party, {"source": "mauritius", "region": None, "why": f"{mauritius[party]} in Mauritius", "vp": MAURITIUS_VP * mauritius[party], "sanctioned": False})
        lines.setdefault(party, [])
    return lines


def evaluate(
    regions: Mapping[str, Mapping[str, Any]],
    un: Mapping[str, int] | None = None,
    mauritius: Mapping[str, int] | None = None,
    sanction_halving: str = "region",
) -> dict[str, int]:
    """VP per party for one evaluation (see evaluation_breakdown for the lines)."""
    lines = evaluation_breakdown(regions, un or {}, mauritius or {}, sanction_halving)
    return {party: sum(line["vp"] for line in party_lines) for party, party_lines in lines.items()}


def _die(name: str, value: Any) -> int:
    if isinstance(value, bool) or value not in DIE:
        raise ValueError(f"{name} must be a die value 1-3, not {value!r}")
    return value


def war(
    attacker_military: int,
    defender_military: int,
    attacker_roll: int,
    defender_roll: int,
    attacker_bonus: int = 0,
    defender_bonus: int = 0,
) -> dict[str, Any]:
    """Outcome of a war: winner ("attacker", "defender" or None for a draw) and how many may be replaced."""
    _whole("attacker_military", attacker_military)
    _whole("defender_military", defender_military)
    _die("attacker_roll", attacker_roll)
    _die("defender_roll", defender_roll)
    _whole("attacker_bonus", attacker_bonus)
    _whole("defender_bonus", defender_bonus)
    attack = attacker_roll + attacker_military + attacker_bonus
    defend = defender_roll + defender_military + defender_bonus
    # A much stronger attacker can still stall on the worst roll against the best one.
    stalled = attacker_military >= defender_military + 2 and attacker_roll == 1 and defender_roll == 3
    if attack == defend or stalled:
        return {"winner": None, "replaced": 0, "attack": attack, "defend": defend}
    return {
        "winner": "attacker" if attack > defend else "defender",
        "replaced": abs(attack - defend),
        "attack": attack,
        "defend": defend,
    }


def putsch(
    player_politicians: int,
    player_committed: int,
    player_roll: int,
    government_strength: int,
    government_committed: int,
    government_roll: int,
) -> dict[str, Any]:
    """Whether a putsch succeeds, with both totals."""
    for name, value in (
        ("player_politicians", player_politicians),
        ("player_committed", player_committed),
        ("government_strength", government_strength),
        ("government_committed", government_committed),
    ):
        _whole(name, value)
    _die("player_roll", player_roll)
    _die("government_roll", government_roll)
    player = player_roll + player_committed + player_politicians
    gov = government_roll + government_strength + government_committed
    success = player > gov and not (player_roll == 1 and government_roll == 3)
    return {"success": success, "player": player, "government": gov}


def war_odds(attacker_military: int, defender_military: int, attacker_bonus: int = 0, defender_bonus: int = 0) -> dict[str, float]:
    """Chance of each war outcome over the nine equally likely pairs of rolls."""
    counts = {"attacker": 0, "defender": 0, "draw": 0}
    for a in DIE:
        for d in DIE:
            winner = war(attacker_military, defender_military, a, d, attacker_bonus, defender_bonus)["winner"]
            counts[winner or "draw"] += 1
    return {k: v / 9 for k, v in counts.items()}


# ---------------------------------------------------------------- state helpers


def region(name: Any, key: str = "region") -> str:
    """The canonical region name; RuleError naming `key` otherwise."""
    require(isinstance(name, str), f"'{key}' must be a region name")
    found = _BY_KEY.get(_key(name))
    require(found is not None, f"'{key}': {name!r} is not a region ({', '.join(REGIONS)})")
    return found


def party(state: Mapping[str, Any], name: Any, key: str = "party") -> str:
    require(isinstance(name, str) and name in state["parties"], f"'{key}': {name!r} is not a party in this game")
    return name


def whole(action: Mapping[str, Any], key: str, low: int = 0, high: int | None = None, default: Any = ...) -> Any:
    """A whole-number field within bounds; `default` when absent (if given)."""
    if key not in action and default is not ...:
        return default
    value = field(action, key, int)
    require(value >= low, f"'{key}' must be at least {low}")
    require(high is None or value <= high, f"'{key}' must be at most {high}")
    return value


def roll(action: Mapping[str, Any], key: str) -> int:
    value = field(action, key, int)
    require(value in DIE, f"'{key}': the dice show 1, 2 or 3, not {value}")
    return value


def counts_map(action: Mapping[str, Any], key: str, check: Any, default: Any = ...) -> dict[str, int]:
    """A {name: whole number} field whose names pass `check` (which returns the canonical name)."""
    if key not in action and default is not ...:
        return dict(default)
    raw = field(action, key, Mapping)
    result: dict[str, int] = {}
    for name, n in raw.items():
        canonical = check(name)
        require(type(n) is int and n >= 0, f"'{key}': {name!r} must be given a whole number, not {n!r}")
        require(canonical not in result, f"'{key}' names {canonical} twice")
        result[canonical] = n
    return result


def un_counts(state: Mapping[str, Any]) -> dict[str, int]:
    return {p: state["party"][p]["un"] for p in state["parties"]}


def mauritius_counts(state: Mapping[str, Any]) -> dict[str, int]:
    return {p: state["party"][p]["mauritius"] for p in state["parties"]}


def in_regions(state: Mapping[str, Any], who: str) -> int:
    return sum(r["politicians"].get(who, 0) for r in state["regions"].values())


def base(state: Mapping[str, Any], who: str) -> int:
    """Politicians at home: whatever is not in a region, the UN, Mauritius or out of the game."""
    p = state["party"][who]
    return POLITICIANS - in_regions(state, who) - p["un"] - p["mauritius"] - p["removed"]


def governors(state: Mapping[str, Any], name: str) -> list[str]:
    return government(state["regions"][name]["politicians"], un_counts(state), mauritius_counts(state))


def strength(state: Mapping[str, Any], name: str) -> int:
    """Strength of government: the strongest party's politicians (the player count in a protectorate)."""
    r = state["regions"][name]
    if r["protectorate"]:
        return len(state["parties"])
    return max(r["politicians"].values(), default=0)


def pool(state: Mapping[str, Any], chip: str) -> int:
    return SUPPLY[chip] - sum(r[chip] for r in state["regions"].values())


def take_chips(state: dict[str, Any], name: str, chip: str, n: int, partial: bool = False) -> int:
    """Take up to n chips of a kind from a region; without `partial` they must all be there."""
    r = state["regions"][name]
    if not partial:
        require(r[chip] >= n, f"{name} has only {r[chip]} {chip} chips")
    taken = min(n, r[chip])
    r[chip] -= taken
    return taken


def move_politicians(state: dict[str, Any], who: str, n: int, source: str, dest: str) -> None:
    """Move politicians between 'base', 'un', 'mauritius', 'removed' and regions, checking the source has them."""
    if n == 0:
        return
    p = state["party"][who]
    if source == "base":
        require(base(state, who) >= n, f"{who} has only {base(state, who)} politicians at home")
    elif source in ("un", "mauritius", "removed"):
        require(p[source] >= n, f"{who} has only {p[source]} politicians in {source}")
        p[source] -= n
    else:
        have = state["regions"][source]["politicians"].get(who, 0)
        require(have >= n, f"{who} has only {have} politicians in {source}")
        remaining = have - n
        if remaining:
            state["regions"][source]["politicians"][who] = remaining
        else:
            del state["regions"][source]["politicians"][who]
    if dest in ("un", "mauritius", "removed"):
        p[dest] += n
    elif dest != "base":
        politicians = state["regions"][dest]["politicians"]
        politicians[who] = politicians.get(who, 0) + n


def check_neighbours(a: str, b: str, what: str) -> None:
    if a in BORDERS_COMPLETE or b in BORDERS_COMPLETE:
        require(b in NEIGHBOURS[a], f"{what}: {b} is not a neighbour of {a}")


def region_snapshot(state: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Regions in the form evaluate() takes."""
    return {
        name: {
            "politicians": dict(r["politicians"]),
            "economy": r["economy"],
            "sanctioned": r["sanctioned"],
            "protectorate": r["protectorate"],
        }
        for name, r in state["regions"].items()
    }


def markers_in_use(state: Mapping[str, Any], flag: str) -> list[str]:
    return [name for name in REGIONS if state["regions"][name][flag]]


def need_marker(state: Mapping[str, Any], flag: str, where: str) -> None:
    """Refuse to mark `where` when the box has no marker of that kind left (one already there is reused)."""
    if state["regions"][where][flag]:
        return
    used = markers_in_use(state, flag)
    require(
        len(used) < MARKERS[flag],
        f"no {MARKER_NAMES[flag]} marker is left: the box has {MARKERS[flag]} and they lie on {', '.join(used)}",
    )


def state_breakdown(state: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    return evaluation_breakdown(region_snapshot(state), un_counts(state), mauritius_counts(state), state["sanction_halving"])


def live_vp(state: Mapping[str, Any]) -> dict[str, int]:
    vp = evaluate(region_snapshot(state), un_counts(state), mauritius_counts(state), state["sanction_halving"])
    return {p: vp.get(p, 0) for p in state["parties"]}


def governed(state: Mapping[str, Any], who: str) -> list[str]:
    return [name for name in REGIONS if who in governors(state, name)]


def errors_as_rules(fn: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        return fn(*args, **kwargs)
    except ValueError as error:
        if isinstance(error, RuleError):
            raise
        raise RuleError(str(error)) from None
