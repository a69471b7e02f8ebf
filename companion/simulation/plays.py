"""Game nights made up for the history's tests and benchmark: plays of all five games, written into a store.

Each play is a list of real engine actions (every one applied through the engine as it is made, so the store
holds only what the table could have recorded), with undos now and then, about one in eight left unfinished.
Each comes with its truth, worked out here from the engine's own final state: the winners, whether it ended
and how. `write_store` puts the nights into an event store in one transaction per batch, each event with a
wall-clock label and a clock stamp as the daemon writes them: one boot per night, the monotonic clock running
on through it, the wall clock synced on most nights, never on some (a Pi without a time server, its clock
years behind), and synced only part-way through on others.
"""

from __future__ import annotations

import json
import random
import sqlite3
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable

from companion.games import balance_duels as bd
from companion.games import balance_of_power as bop
from companion.games import global_powers as gp
from companion.games import imperial as im
from companion.games import risk
from companion.games.balance_model import Model
from companion.games.base import Engine, RuleError
from companion.games.global_powers_rules import REGIONS
from companion.store import EventStore

GAMES = ("balance_duels", "imperial", "risk", "balance_of_power", "global_powers")
NAMES = ("Ann", "Bob", "Cy", "Dee", "Eve", "Fay", "Gus", "Hal", "Ivy", "Zoë", "Jo", "Kit")


@dataclass
class SimPlay:
    game: str
    options: dict
    steps: list[tuple[str, dict]]          # (kind, body): "action" {"action": …} or "undo" {"undoes": …}
    names: list[str]
    over: bool
    winners: list[str]
    ended: str | None                       # the truth's own word for how it ended
    tips: list[int] = field(default_factory=list)   # Balance Duels: the seats that tipped the arm, in order
    seconds: list[float] = field(default_factory=list)   # seconds after the previous step, per step


def model_a() -> Model:
    return bd.load_model("A", kappa_gmm=17000.0, theta_max_deg=10.0, pawn_mass_g={"L": 10.0, "M": 6.0})


class _Player:
    """Applies actions through the engine as a table would: each checked, now and then taken back and redone."""

    def __init__(self, engine: Engine, options: dict, rng: random.Random, undo_rate: float = 0.03):
        self.engine = engine
        self.state = engine.new(options)
        self.rng = rng
        self.undo_rate = undo_rate
        self.steps: list[tuple[str, dict]] = []
        self.stack: list[Any] = []

    def act(self, action: dict) -> bool:
        try:
            after = self.engine.act(self.state, action)
        except RuleError:
            return False
        if self.rng.random() < self.undo_rate:
            # played, then taken back (a slip), then played again
            self.steps.append(("action", {"action": action}))
            self.steps.append(("undo", {"undoes": str(action.get("type"))}))
        self.steps.append(("action", {"action": action}))
        self.stack.append(self.state)
        self.state = after
        return True


def _names(rng: random.Random, n: int, guests: float = 0.1) -> list[str]:
    chosen = rng.sample(NAMES, n)
    # some typed in another case, or without the accent; now and then a guest left at the seat's own name
    out = []
    for i, name in enumerate(chosen):
        r = rng.random()
        if r < 0.05:
            name = name.lower()
        elif r < 0.08 and name == "Zoë":
            name = "zoe"
        out.append(name)
    return out


def balance_duels(rng: random.Random, model: Model, unfinished: bool) -> SimPlay:
    players = rng.choice((2, 2, 2, 3, 4))
    teams = players == 4 and rng.random() < 0.3
    names = _names(rng, players)
    if rng.random() < 0.1:
        names[-1] = bd.COLOURS[players - 1]        # a guest: the seat's own name
    options = {"players": players, "names": names, "teams": teams}
    if players == 2:
        options["pawns"] = rng.choice((4, 5, 6))
    p = _Player(bd.engine(model), options, rng)
    cut = rng.randint(4, 40) if unfinished else 10_000
    tips = []
    for _ in range(600):
        if p.state.over or len(p.steps) >= cut:
            break
        p.act({"type": "roll", "value": rng.randint(1, 6)})
        moves = bd.legal_moves(model, p.state, p.state.roll)
        if not moves:
            break
        # mostly safe moves, a risky one now and then, so the arm tips in some games
        safe = [m for m in moves if bd.assess(model, p.state, m).verdict == "safe"]
        move = rng.choice(safe) if safe and rng.random() < 0.93 else rng.choice(moves)
        before = p.state
        p.act({"type": "move", "move": move.to_dict()})
        if (len(p.state.out) > len(before.out)) or (p.state.result == "tip" and before.result != "tip"):
            tips.append(p.state.tipped_by)
    s = p.state
    winners = [names[w - 1] for w in s.winners] if s.over else []
    return SimPlay("balance_duels", options, p.steps, names, s.over, winners, s.result, tips)


def imperial(rng: random.Random, unfinished: bool) -> SimPlay:
    n = rng.randint(2, 6)
    names = _names(rng, n)
    options = {"players": names}
    p = _Player(im.ENGINE, options, rng)
    for _ in range(rng.randint(3, 30)):
        _imperial_step(p, rng)
    if not unfinished:
        for _ in range(200):
            if im.view(p.state)["game_over"]:
                break
            v = im.view(p.state)
            if v["phase"] != "rondel":
                _imperial_step(p, rng)
                continue
            nation = v["to_move"]
            p.act({"type": "correct", "what": "power_points", "nation": nation, "value": 24,
                   "reason": "counted again at the table"})
            p.act({"type": "correct", "what": "flags", "nation": nation, "value": 8})
            if not p.act({"type": "rondel", "nation": nation, "target": "taxation"}):
                _imperial_step(p, rng)
            while not im.view(p.state)["game_over"] and im.view(p.state)["phase"] not in ("rondel",):
                _imperial_step(p, rng)
    v = im.view(p.state)
    return SimPlay("imperial", options, p.steps, names, bool(v["game_over"]), list(v["winners"]),
                   "power" if v["game_over"] else None)


def _imperial_step(p: _Player, rng: random.Random) -> None:
    v = im.view(p.state)
    phase = v["phase"]
    if phase == "rondel":
        legal = [o["target"] for o in v["rondel"]["options"] if not o["shortfall"] and not o["blocked"]]
        if legal:
            p.act({"type": "rondel", "nation": v["to_move"], "target": rng.choice(legal)})
    elif phase in ("investor", "draft"):
        decision = v["decision"]
        affordable = [c for c in decision["choices"] if c["affordable"]]
        if affordable and rng.random() < 0.4:
            c = rng.choice(affordable)
            action = {"type": "invest", "player": decision["player"], "nation": c["nation"], "value": c["value"]}
            if c["trade_in"] is not None:
                action["trade_in"] = c["trade_in"]
            if p.act(action):
                return
        p.act({"type": "pass", "player": decision["player"]})
    elif phase == "pass_check":
        p.act({"type": "allow_pass"})
    elif phase != "over":
        if not p.act({"type": "skip"}):
            p.act({"type": "produce"})


def risk_game(rng: random.Random, unfinished: bool) -> SimPlay:
    names = _names(rng, 2)
    colours = dict(zip(names, rng.sample(("red", "blue", "green", "yellow", "black", "white"), 2)))
    options = {"players": names, "colours": colours, "capitals": {names[0]: "Germany", names[1]: "Poland"}}
    p = _Player(risk.ENGINE, options, rng)
    winner = rng.randrange(2)
    for _ in range(rng.randint(0, 6)):
        p.act({"type": "end_turn"})
    who = p.state["turn"]["player"]
    loser = names[1 - names.index(who)]
    p.act({"type": "set_counts", "player": who, "territories": rng.randint(8, 20)})
    p.act({"type": "set_counts", "player": loser, "territories": rng.randint(1, 3) if unfinished else 1})
    if not unfinished:
        own, their = ("Germany", "Poland") if who == names[0] else ("Poland", "Germany")
        p.act({"type": "attack", "defender": loser, "attackers": 5, "defenders": 1, "from": own, "to": their})
        p.act({"type": "battle", "attacker_dice": [6, 3, 2], "defender_dice": [5]})
    del winner
    s = p.state
    return SimPlay("risk", options, p.steps, names, s["winner"] is not None,
                   [s["winner"]] if s["winner"] else [], "elimination" if s["winner"] else None)


def balance_of_power(rng: random.Random, unfinished: bool) -> SimPlay:
    n = rng.randint(2, 6)
    names = _names(rng, n)
    empires = rng.sample(["great_britain", "france", "prussia", "austria", "russia", "ottoman"], n)
    options = {"players": [{"name": a, "empire": e} for a, e in zip(names, empires)]}
    p = _Player(bop.ENGINE, options, rng)
    for _ in range(rng.randint(0, 2 * n)):
        p.act({"type": "end_turn"})
    for other in names:
        p.act({"type": "set_counts", "player": other, "territories": rng.randint(2, 9), "full_capitals": 0})
    if not unfinished:
        who = p.state["turn"]["player"]
        target = bop.points_to_win(n)
        for territories in range(1, 46):
            if bop.score(territories, 1) >= target:
                break
        p.act({"type": "set_counts", "player": who, "territories": territories, "full_capitals": 1})
    s = p.state
    return SimPlay("balance_of_power", options, p.steps, names, bool(s["over"]),
                   [s["winner"]] if s["winner"] else [], "points" if s["over"] else None)


def global_powers(rng: random.Random, unfinished: bool) -> SimPlay:
    n = rng.randint(2, 5)
    names = _names(rng, n)
    colours = rng.sample(("red", "yellow", "green", "blue", "black"), n)
    options = {"players": [{"name": a, "colour": c} for a, c in zip(names, colours)]}
    p = _Player(gp.ENGINE, options, rng, undo_rate=0.0)
    winner = rng.choice(names)
    others = [x for x in names if x != winner]
    for region in REGIONS[:9]:
        p.act({"type": "set_region", "region": region, "politicians": {winner: 2}})
    p.act({"type": "set_region", "region": "Africa", "politicians": {others[0]: 2}})
    p.act({"type": "start", "first": winner})
    if not unfinished:
        p.act({"type": "activate", "region": "Europe"})
        p.act({"type": "migration", "to": "Southeast-Asia"})
    s = p.state
    return SimPlay("global_powers", options, p.steps, names, s["phase"] == "over",
                   [s["winner"]] if s["winner"] else [], "dominance" if s["phase"] == "over" else None)


def make_plays(n: int, seed: int = 1, model: Model | None = None, unfinished_rate: float = 0.125,
               games: tuple[str, ...] = GAMES) -> list[SimPlay]:
    rng = random.Random(seed)
    model = model or model_a()
    makers: dict[str, Callable[[bool], SimPlay]] = {
        "balance_duels": lambda u: balance_duels(rng, model, u),
        "imperial": lambda u: imperial(rng, u),
        "risk": lambda u: risk_game(rng, u),
        "balance_of_power": lambda u: balance_of_power(rng, u),
        "global_powers": lambda u: global_powers(rng, u),
    }
    out = []
    for _ in range(n):
        play = makers[rng.choice(games)](rng.random() < unfinished_rate)
        play.seconds = [rng.uniform(3, 60) for _ in play.steps]
        out.append(play)
    return out


def write_store(path: str | Path, plays: list[SimPlay], seed: int = 1, plays_per_night: int = 4,
                start: datetime = datetime(2025, 1, 3, 18, 30, tzinfo=timezone.utc)) -> dict[int, SimPlay]:
    """Write the plays as nights into the event store at `path` (created if need be); {game id: play}."""
    rng = random.Random(seed)
    EventStore(path, record_acks=False).close()       # the schema, as the daemon makes it
    db = sqlite3.connect(str(path), isolation_level=None)
    ids: dict[int, SimPlay] = {}
    try:
        seq = int(db.execute("SELECT COALESCE(MAX(seq), 0) FROM events").fetchone()[0])
        db.execute("BEGIN IMMEDIATE")
        night = start
        for i in range(0, len(plays), plays_per_night):
            boot = f"boot-{seed}-{i}"
            mono = rng.uniform(40, 120)
            kind = rng.random()
            # synced all night; never (a Pi without a time server: its clock years behind); or from part-way
            sync_at = 0.0 if kind < 0.7 else (float("inf") if kind < 0.85 else rng.uniform(200, 3000))
            skew = timedelta(0) if kind < 0.7 else -timedelta(days=rng.randint(300, 2000))
            t = night
            for play in plays[i:i + plays_per_night]:
                rows = [("new_game", {"game": play.game, "options": play.options}, 0.0)]
                rows += [(k, b, s) for (k, b), s in zip(play.steps, play.seconds)]
                game_id = None
                for kind_, body, gap in rows:
                    mono += gap
                    t += timedelta(seconds=gap)
                    synced = mono >= sync_at
                    shown = t if synced else t + skew
                    seq += 1
                    if game_id is None:
                        game_id = seq
                    clock = {"boot": boot, "mono": round(mono, 3), "synced": synced}
                    db.execute("INSERT INTO events (seq, game_id, kind, body, source, at, clock) VALUES "
                               "(?, ?, ?, ?, ?, ?, ?)",
                               (seq, game_id, kind_, json.dumps(body, separators=(",", ":"), sort_keys=True),
                                "page", shown.isoformat(timespec="seconds"),
                                json.dumps(clock, separators=(",", ":"), sort_keys=True)))
                ids[game_id] = play
                gap = rng.uniform(120, 900)
                mono += gap
                t += timedelta(seconds=gap)
            night += timedelta(days=7)
        db.execute("COMMIT")
    finally:
        db.close()
    return ids
