"""Balance Duels: the rules engine (pure) and the physics-backed move warning.

Vocabulary used throughout:
- a *seat* is a player (a colour); seats are numbered 1..n in turn order;
- a seat walks the 14 holders of a *path* from the balance model: start 1-7 then
  finish 1-7. In later rounds of a 3-4 player game the remaining players are given
  the model's paths 1..k afresh, so `path_of` maps seat -> path number;
- a pawn in its own finish area is *attacking*: it beats, and cannot be beaten.

The state is immutable plain data; `apply` returns a new one or raises RuleError.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping

from companion.games import balance_physics as bp
from companion.games.balance_model import Model, ModelError, load_model  # noqa: F401  (public API)
from companion.games.base import RuleError
from companion.games.names import player_name
from companion.games.narration import _list as _listed

KINDS = ("place", "advance", "pass", "cant_play")
COLOURS = ("black", "yellow", "red", "blue")
CANT_PLAY_READINGS = ("no_move", "no_place")
TIP_JUDGES = ("model", "table")


@dataclass(frozen=True)
class Pawn:
    seat: int
    size: str
    holder: str | None = None  # None: on the table beside the board


@dataclass(frozen=True)
class Options:
    pawns: int = 6                 # 2 players: 4, 5 or 6 L pawns each
    teams: bool = False            # 2x2 teams (players must be 4)
    first: int = 1                 # the seat that opens
    tip_judge: str = "model"       # "model": the engine judges a tip from the torque; "table": only reported tips count
    cant_play: str = "no_move"     # when "I can't play" may be announced (see README)
    pass_needs_roll: bool = True   # the die is cast before every kind of turn
    optional_beat: bool = False    # house rule: an attacking pawn may arrive beside an opponent without beating
    names: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return {
            "pawns": self.pawns, "teams": self.teams, "first": self.first, "tip_judge": self.tip_judge,
            "cant_play": self.cant_play, "pass_needs_roll": self.pass_needs_roll,
            "optional_beat": self.optional_beat, "names": list(self.names),
        }


@dataclass(frozen=True)
class State:
    players: int
    options: Options
    pawns: tuple[Pawn, ...]
    active: tuple[int, ...]             # seats still playing, in turn order
    path_of: Mapping[int, int]          # seat -> model path number for this round
    to_move: int | None                 # None once the game is over
    opening: frozenset[int]             # seats yet to make this round's opening placement
    passed: frozenset[int]              # seats whose last turn was a pass
    roll: int | None = None             # the die shown for the turn in progress
    last_mover: int | None = None
    turn: int = 1
    round: int = 1
    out: tuple[int, ...] = ()           # seats eliminated by tipping, in order
    tipped_by: int | None = None        # who tipped the arm last (the arm is then cleared or the game ends)
    winners: tuple[int, ...] = ()       # seats that won (a team has two)
    result: str | None = None           # "home" | "tip" once over
    # the last move brought its player home with the table judging tips: a tip reported before anything else is
    # done still belongs to that move (home means home without tipping the arm), and takes the win away
    home_unjudged: bool = False
    history: tuple[str, ...] = field(default=(), compare=False)

    @property
    def over(self) -> bool:
        return self.result is not None

    def team_of(self, seat: int) -> int:
        # teams sit alternately: seats 1 and 3 against 2 and 4
        return (seat - 1) % 2 if self.options.teams else seat

    def on_arm(self) -> list[tuple[str, str]]:
        return [(p.holder, p.size) for p in self.pawns if p.holder is not None]


@dataclass(frozen=True)
class Move:
    kind: str
    seat: int
    roll: int | None = None
    size: str | None = None
    from_holder: str | None = None
    to_holder: str | None = None
    beats: str | None = None          # holder whose opponent pawn is beaten
    beaten_seat: int | None = None
    beaten_size: str | None = None

    def to_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if v is not None}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Move":
        if not isinstance(data, Mapping):
            raise RuleError("a move must be an object")
        allowed = set(cls.__dataclass_fields__)
        unknown = set(data) - allowed - {"type"}
        if unknown:
            raise RuleError(f"unknown move field(s) {sorted(unknown)}")
        kind = data.get("kind")
        if kind not in KINDS + ("rearrange",):
            raise RuleError(f"move kind must be one of {', '.join(KINDS + ('rearrange',))}, not {kind!r}")
        values: dict[str, Any] = {"kind": kind}
        for key, typ in (("seat", int), ("roll", int), ("beaten_seat", int)):
            v = data.get(key)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
                raise RuleError(f"'{key}' must be a whole number, not {v!r}")
            values[key] = v
        for key in ("size", "from_holder", "to_holder", "beats", "beaten_size"):
            v = data.get(key)
            if v is not None and not isinstance(v, str):
                raise RuleError(f"'{key}' must be a string, not {v!r}")
            values[key] = v
        if values["seat"] is None:
            raise RuleError("a move names its 'seat'")
        return cls(**values)

    def describe(self, state: State | None = None) -> str:
        who = f"seat {self.seat}"
        if state is not None and state.options.names:
            who = state.options.names[self.seat - 1]
        if self.kind == "place":
            text = f"{who} places {self.size} on {self.to_holder}"
        elif self.kind == "advance":
            text = f"{who} moves {self.size} {self.from_holder} → {self.to_holder}"
        elif self.kind == "rearrange":
            text = f"{who} rearranges {self.size} {self.from_holder} → {self.to_holder}"
        elif self.kind == "pass":
            text = f"{who} passes"
        else:
            text = f"{who}: I can't play"
        if self.beats:
            text += f", beating {self.beaten_size} on {self.beats}"
        return text


# ----------------------------------------------------------------------------- set-up

def _options(players: int, raw: Mapping[str, Any]) -> Options:
    known = set(Options.__dataclass_fields__)
    unknown = set(raw) - known
    if unknown:
        raise RuleError(f"unknown Balance Duels option(s) {sorted(unknown)}; known: {sorted(known)}")
    opts = dict(raw)
    if "names" in opts:
        names = opts["names"]
        if not isinstance(names, (list, tuple)) or len(names) != players or not all(isinstance(n, str) and n.strip() for n in names):
            raise RuleError(f"'names' must list {players} non-empty names")
        # refused past the shared bound rather than cut, as every engine does (the page's field holds 24 anyway)
        opts["names"] = tuple(player_name(n.strip()) for n in names)
    else:
        opts["names"] = tuple(COLOURS[:players])
    for key, typ in (("pawns", int), ("first", int)):
        if key in opts and (isinstance(opts[key], bool) or not isinstance(opts[key], typ)):
            raise RuleError(f"'{key}' must be a whole number")
    for key in ("teams", "pass_needs_roll", "optional_beat"):
        if key in opts and not isinstance(opts[key], bool):
            raise RuleError(f"'{key}' must be true or false")
    o = Options(**opts)
    if o.tip_judge not in TIP_JUDGES:
        raise RuleError(f"'tip_judge' must be one of {TIP_JUDGES}")
    if o.cant_play not in CANT_PLAY_READINGS:
        raise RuleError(f"'cant_play' must be one of {CANT_PLAY_READINGS}")
    if o.teams and players != 4:
        raise RuleError("the team game is for 4 players (2x2)")
    if players == 2 and o.pawns not in (4, 5, 6):
        raise RuleError("with 2 players each plays 4, 5 or 6 pawns")
    if players > 2 and "pawns" in raw and o.pawns != 6:
        raise RuleError("with 3 or 4 players each plays 2 L and 2 M pawns; 'pawns' is for 2 players")
    if not 1 <= o.first <= players:
        raise RuleError(f"'first' must be a seat from 1 to {players}")
    return o


def _pawns_for(players: int, options: Options) -> tuple[Pawn, ...]:
    if players == 2 and not options.teams:
        return tuple(Pawn(seat, "L") for seat in (1, 2) for _ in range(options.pawns))
    return tuple(Pawn(seat, size) for seat in range(1, players + 1) for size in ("L", "L", "M", "M"))


def _paths_for(seats: Iterable[int], options: Options) -> dict[int, int]:
    seats = list(seats)
    if options.teams:
        # a team plays from one side: seats 1 and 3 walk path 1, seats 2 and 4 path 2
        return {s: 1 if s % 2 else 2 for s in seats}
    return {s: i for i, s in enumerate(seats, start=1)}


def new_game(model: Model, players: int = 2, **options: Any) -> State:
    """A fresh game: empty arm, every pawn on the table, the opening placements to come."""
    if isinstance(players, bool) or not isinstance(players, int) or not 2 <= players <= 4:
        raise RuleError("Balance Duels is for 2, 3 or 4 players")
    opts = _options(players, options)
    needed = 2 if opts.teams else players
    if len(model.seats) < needed:
        raise RuleError(f"balance model {model.name} describes {len(model.seats)} seats; {needed} are needed")
    seats = tuple(range(1, players + 1))
    order = seats[opts.first - 1:] + seats[:opts.first - 1]
    return State(
        players=players,
        options=opts,
        pawns=_pawns_for(players, opts),
        active=order,
        path_of=_paths_for(seats, opts),
        to_move=opts.first,
        opening=frozenset(seats),
        passed=frozenset(),
    )


# ----------------------------------------------------------------------------- positions

def _walk(model: Model, state: State, seat: int) -> tuple[str, ...]:
    return model.seats[state.path_of[seat]].walk


def _position(model: Model, state: State, pawn: Pawn) -> int | None:
    """Index 0-13 of the pawn on its seat's walk (0-6 start, 7-13 finish), None on the table."""
    if pawn.holder is None:
        return None
    walk = _walk(model, state, pawn.seat)
    return walk.index(pawn.holder) if pawn.holder in walk else None


def _attacking(model: Model, state: State, pawn: Pawn) -> bool:
    pos = _position(model, state, pawn)
    return pos is not None and pos >= 7


def _occupancy(state: State) -> dict[str, list[int]]:
    occ: dict[str, list[int]] = {}
    for i, p in enumerate(state.pawns):
        if p.holder is not None:
            occ.setdefault(p.holder, []).append(i)
    return occ


def _opponents(state: State, a: int, b: int) -> bool:
    return state.team_of(a) != state.team_of(b)


def _beat_options(model: Model, state: State, occ: dict[str, list[int]], seat: int, arrive: str) -> list[int]:
    """Indices of opponent pawns an attacking pawn arriving at `arrive` may beat."""
    victims: list[int] = []
    for target in model.by_id[arrive].beats:
        for i in occ.get(target, ()):
            p = state.pawns[i]
            if _opponents(state, seat, p.seat) and not _attacking(model, state, p):
                victims.append(i)
    return victims


def _arrivals(model: Model, state: State, occ: dict[str, list[int]], seat: int, arrive: str, attacking: bool,
              base: Move) -> list[Move]:
    if len(occ.get(arrive, ())) >= model.by_id[arrive].capacity:
        return []
    if not attacking:
        return [base]
    seen: set[tuple] = set()
    moves: list[Move] = []
    for i in _beat_options(model, state, occ, seat, arrive):
        v = state.pawns[i]
        key = (v.holder, v.seat, v.size)
        if key not in seen:
            seen.add(key)
            moves.append(replace(base, beats=v.holder, beaten_seat=v.seat, beaten_size=v.size))
    if not moves or state.options.optional_beat:
        moves.insert(0, base)
    return moves


def _placements(model: Model, state: State, occ, seat: int, roll: int) -> list[Move]:
    holder = _walk(model, state, seat)[roll - 1]
    sizes = sorted({p.size for p in state.pawns if p.seat == seat and p.holder is None})
    moves: list[Move] = []
    for size in sizes:
        moves += _arrivals(model, state, occ, seat, holder, False,
                           Move("place", seat, roll, size=size, to_holder=holder))
    return moves


def _advances(model: Model, state: State, occ, seat: int, roll: int) -> list[Move]:
    walk = _walk(model, state, seat)
    moves: list[Move] = []
    seen: set[tuple[str, str]] = set()
    for p in state.pawns:
        if p.seat != seat or p.holder is None or (p.holder, p.size) in seen:
            continue
        seen.add((p.holder, p.size))
        pos = walk.index(p.holder)
        dest = pos + roll
        if dest > 13:  # never beyond finish 7
            continue
        moves += _arrivals(model, state, occ, seat, walk[dest], dest >= 7,
                           Move("advance", seat, roll, size=p.size, from_holder=p.holder, to_holder=walk[dest]))
    return moves


def _rearrangements(model: Model, state: State, occ) -> list[Move]:
    moves = []
    for seat in state.winners:
        finish = model.seats[state.path_of[seat]].finish
        for p in {(p.holder, p.size) for p in state.pawns if p.seat == seat and p.holder in finish}:
            for dest in finish:
                if dest != p[0] and len(occ.get(dest, ())) < model.by_id[dest].capacity:
                    moves.append(Move("rearrange", seat, size=p[1], from_holder=p[0], to_holder=dest))
    return moves


def legal_moves(model: Model, state: State, roll: int | None) -> list[Move]:
    """Every move the seat to move may make with this roll (roll None: only a pass, if the house rule allows)."""
    occ = _occupancy(state)
    if state.over:
        return _rearrangements(model, state, occ)
    seat = state.to_move
    assert seat is not None
    if roll is None:
        if state.options.pass_needs_roll or seat in state.opening or seat in state.passed:
            return []
        return [Move("pass", seat)]
    if isinstance(roll, bool) or not isinstance(roll, int) or not 1 <= roll <= 6:
        raise RuleError(f"a die shows 1 to 6, not {roll!r}")
    places = _placements(model, state, occ, seat, roll)
    if seat in state.opening:
        # the opening turn is a placement on the rolled start holder; if even that is blocked, the turn is lost
        return places or [Move("cant_play", seat, roll)]
    advances = _advances(model, state, occ, seat, roll)
    moves = places + advances
    if seat not in state.passed:
        moves.append(Move("pass", seat, roll))
    if state.options.cant_play == "no_move":
        allowed = not places and not advances
    else:
        allowed = not places
    if allowed:
        moves.append(Move("cant_play", seat, roll))
    return moves


# ----------------------------------------------------------------------------- applying moves

def _moved(model: Model, state: State, move: Move) -> tuple[Pawn, ...]:
    pawns = list(state.pawns)
    if move.beats is not None:
        for i, p in enumerate(pawns):
            if p.holder == move.beats and p.seat == move.beaten_seat and p.size == move.beaten_size:
                pawns[i] = Pawn(p.seat, p.size, None)
                break
    if move.kind == "place":
        source = None
    elif move.kind in ("advance", "rearrange"):
        source = move.from_holder
    else:
        return tuple(pawns)
    for i, p in enumerate(pawns):
        if p.seat == move.seat and p.size == move.size and p.holder == source:
            pawns[i] = Pawn(p.seat, p.size, move.to_holder)
            break
    return tuple(pawns)


def _next_seat(active: tuple[int, ...], seat: int) -> int:
    i = active.index(seat)
    return active[(i + 1) % len(active)]


def _all_home(model: Model, state: State, pawns: tuple[Pawn, ...], seat: int) -> bool:
    finish = set(model.seats[state.path_of[seat]].finish)
    return all(p.holder in finish for p in pawns if p.seat == seat)


def _after_tip(state: State, tipper: int) -> State:
    """The arm tipped at the end of `tipper`'s turn."""
    base = replace(state, tipped_by=tipper, roll=None, last_mover=tipper)
    if state.players == 2 or state.options.teams:
        winners = tuple(s for s in state.active if state.team_of(s) != state.team_of(tipper))
        return replace(base, to_move=None, winners=winners, result="tip")
    remaining = tuple(s for s in state.active if s != tipper)
    out = state.out + (tipper,)
    if len(remaining) == 1:
        return replace(base, active=remaining, out=out, to_move=None, winners=remaining, result="tip")
    # the tipper is out, the arm is cleared and the others open a new round
    nxt = _next_seat(state.active, tipper)
    order = remaining[remaining.index(nxt):] + remaining[:remaining.index(nxt)]
    return replace(
        base,
        active=order,
        out=out,
        path_of=_paths_for(sorted(remaining), state.options),
        pawns=tuple(Pawn(p.seat, p.size, None) for p in state.pawns if p.seat in remaining),
        to_move=nxt,
        opening=frozenset(remaining),
        passed=frozenset(),
        round=state.round + 1,
        last_mover=None,  # no turn of the new round has ended yet
    )


def _execute(model: Model, state: State, move: Move) -> State:
    """The position after a move, before the tip is judged."""
    if move.kind == "rearrange":
        return replace(state, pawns=_moved(model, state, move))
    seat = move.seat
    pawns = _moved(model, state, move)
    passed = state.passed | {seat} if move.kind == "pass" else state.passed - {seat}
    return replace(
        state,
        pawns=pawns,
        passed=passed,
        opening=state.opening - {seat},
        roll=None,
        last_mover=seat,
        tipped_by=None,
        turn=state.turn + 1,
        to_move=_next_seat(state.active, seat),
        history=state.history + (move.describe(state),),
    )


def apply(model: Model, state: State, move: Move | Mapping[str, Any]) -> State:
    """The state after `move`; RuleError (naming the rule) if it is not legal. `state` is never changed."""
    if not isinstance(move, Move):
        move = Move.from_dict(move)
    if state.over and move.kind != "rearrange":
        raise RuleError("the game is over; start a new one")
    if not state.over and move.seat != state.to_move:
        names = state.options.names
        who = lambda seat: names[seat - 1] if 0 < seat <= len(names) else f"seat {seat}"  # noqa: E731
        raise RuleError(f"it is {who(state.to_move)}'s turn, not {who(move.seat)}'s")
    if move.kind == "rearrange" and not state.over:
        raise RuleError("pawns are rearranged freely only once the game is over")
    legal = legal_moves(model, state, move.roll)
    if move not in legal:
        raise RuleError(_why_illegal(model, state, move, legal))
    after = _execute(model, state, move)
    if move.kind == "rearrange":
        return replace(after, home_unjudged=False)
    if state.options.tip_judge == "model" and bp.tips(model, bp.net_torque(model, after.on_arm())):
        return _after_tip(after, move.seat)
    if move.kind in ("place", "advance") and _all_home(model, after, after.pawns, move.seat):
        winners = tuple(s for s in after.active if after.team_of(s) == after.team_of(move.seat))
        return replace(after, to_move=None, winners=winners, result="home",
                       home_unjudged=state.options.tip_judge == "table")
    return after


def can_report_tip(state: State) -> bool:
    """Whether the table may say now that the arm tipped (report_tip would take it): only judged by the table,
    and only once a turn has ended (or the homecoming move is still to be judged)."""
    if state.options.tip_judge != "table":
        return False
    if state.over:
        return state.home_unjudged
    return state.last_mover is not None and state.roll is None and state.last_mover in state.active


def report_tip(model: Model, state: State) -> State:
    """The table says the arm rests on the board now the last mover's hands are off it."""
    if state.over and state.home_unjudged:
        # the move that brought them home tipped the arm: no win, the tip is judged as any other
        return _after_tip(replace(state, result=None, winners=(), home_unjudged=False), state.last_mover)
    if state.over:
        raise RuleError("the game is over")
    if state.last_mover is None or state.roll is not None or state.last_mover not in state.active:
        raise RuleError("a tip is judged at the end of a turn; no turn has just ended")
    return _after_tip(state, state.last_mover)


def _why_illegal(model: Model, state: State, move: Move, legal: list[Move]) -> str:
    if move.kind not in ("pass",) and move.roll is None:
        return "roll the die first: every move follows the roll"
    if move.kind == "pass" and move.roll is None and state.options.pass_needs_roll:
        return "roll the die first: a pass also follows the roll (house rule pass_needs_roll)"
    if move.kind == "pass":
        if move.seat in state.opening:
            return "the opening turn is a placement; no pass"
        if move.seat in state.passed:
            return "no passing twice in a row"
    if move.kind == "cant_play":
        return "\"I can't play\" only when no placement or advance is possible" if state.options.cant_play == "no_move" \
            else "\"I can't play\" only when the rolled start holder has no room"
    if move.seat in state.opening and move.kind != "place":
        return "the opening turn is a placement on the start holder the die shows"
    if move.kind == "place":
        walk = _walk(model, state, move.seat)
        if move.to_holder != walk[move.roll - 1]:
            return f"a pawn is placed on start holder {move.roll} ({walk[move.roll - 1]}), the number rolled"
        if not any(p.seat == move.seat and p.holder is None and p.size == move.size for p in state.pawns):
            return f"no {move.size} pawn of seat {move.seat} is left on the table"
        return f"holder {move.to_holder} is full"
    if move.kind == "advance":
        if move.from_holder is None or move.from_holder not in model.by_id:
            return f"an advance names the holder its pawn starts from ('from_holder'), not {move.from_holder!r}"
        if not any(p.seat == move.seat and p.holder == move.from_holder and p.size == move.size for p in state.pawns):
            return f"seat {move.seat} has no {move.size} pawn on {move.from_holder}"
        walk = _walk(model, state, move.seat)
        if move.from_holder not in walk:
            return f"{move.from_holder} is not on seat {move.seat}'s path"
        dest = walk.index(move.from_holder) + move.roll
        if dest > 13:
            return "a pawn goes at most to finish holder 7"
        if move.to_holder != walk[dest]:
            return f"a roll of {move.roll} takes that pawn to {walk[dest]}, counting every holder"
        same = [m for m in legal if m.kind == "advance" and m.from_holder == move.from_holder and m.size == move.size]
        if same and move.beats is None:
            return "an attacking pawn arriving beside an opponent's pawn beats it; say which"
        if same:
            return f"that pawn cannot beat {move.beaten_size} of seat {move.beaten_seat} on {move.beats}"
        return f"holder {move.to_holder} is full"
    return "that move is not allowed now"


# ----------------------------------------------------------------------------- physics, per the public API

def torque_per_holder(model: Model, state: State) -> dict[str, float]:
    return bp.torque_per_holder(model, state.on_arm())


def net_torque(model: Model, state: State) -> float:
    return bp.net_torque(model, state.on_arm())


def assess(model: Model, state: State, move: Move | Mapping[str, Any], *, sigma: float | None = None) -> bp.Assessment:
    """Torque after `move`, the margin to τ_tip, the chance it tips, and a verdict."""
    if not isinstance(move, Move):
        move = Move.from_dict(move)
    if sigma is None:
        sigma = bp.position_sigma(model, state.on_arm())
    after = _moved(model, state, move)
    torque = bp.net_torque(model, ((p.holder, p.size) for p in after if p.holder is not None))
    return bp.judge(model, torque, sigma)


def assess_all(model: Model, state: State, roll: int) -> list[tuple[Move, bp.Assessment]]:
    sigma = bp.position_sigma(model, state.on_arm())
    return [(m, assess(model, state, m, sigma=sigma)) for m in legal_moves(model, state, roll)]


# ----------------------------------------------------------------------------- the daemon's view of the game

def indicator(model: Model, state: State) -> str:
    """green: every legal move for the roll is safe; amber: some would tip or risk it; red: the arm tipped."""
    if state.tipped_by is not None:
        return "red"
    if state.roll is None or state.over:
        return "off"
    # passes left out: standing still is never what "some moves tip" warns of
    verdicts = {a.verdict for m, a in assess_all(model, state, state.roll) if m.kind not in ("pass", "cant_play")}
    return "green" if verdicts <= {"safe"} else "amber"


def view(model: Model, state: State) -> dict:
    names = state.options.names
    per_holder = torque_per_holder(model, state)
    torque = sum(per_holder.values())
    holders = []
    for h in model.holders:
        holders.append({
            "id": h.id, "x_mm": h.x_mm, "capacity": h.capacity, "torque": round(per_holder[h.id], 1),
            "pawns": [{"seat": p.seat, "size": p.size, "colour": COLOURS[p.seat - 1]}
                      for p in state.pawns if p.holder == h.id],
        })
    moves = []
    if state.roll is not None and not state.over:
        for m, a in assess_all(model, state, state.roll):
            moves.append({"move": m.to_dict(), "text": m.describe(state), **a.to_dict()})
    elif not state.over:
        moves = [{"move": m.to_dict(), "text": m.describe(state), "verdict": "safe", "tip_probability": 0.0,
                  "torque_after": round(torque, 1), "margin": round(model.tip_torque - abs(torque), 1)}
                 for m in legal_moves(model, state, None)]
    for entry in moves:
        # A pass touches no pawn, so it cannot tip the arm: the chance computed for the arm as it stands is
        # the uncertainty of the pawns' places, not a risk of this choice, and shown as one it reads as a warning
        if entry["move"]["kind"] in ("pass", "cant_play"):
            entry.update(verdict=None, tip_probability=None)
    players = []
    for seat in range(1, state.players + 1):
        mine = [p for p in state.pawns if p.seat == seat]
        finish = set(model.seats[state.path_of[seat]].finish) if seat in state.path_of else set()
        players.append({
            "seat": seat, "name": names[seat - 1], "colour": COLOURS[seat - 1],
            "team": state.team_of(seat) if state.options.teams else None,
            "in_play": seat in state.active and seat not in state.out,
            "on_table": sorted(p.size for p in mine if p.holder is None),
            "home": sum(1 for p in mine if p.holder in finish),
            "pawns": len(mine),
            "path": state.path_of.get(seat),
        })
    if state.over:
        who = " and ".join(names[s - 1] for s in state.winners)
        verb = "win" if len(state.winners) > 1 else "wins"
        if state.result == "home":
            message = f"{who} {verb}: every pawn home"
        elif state.tipped_by is not None:
            message = f"{who} {verb}: {names[state.tipped_by - 1]} tipped the arm"
        else:
            message = f"{who} {verb}: the others tipped the arm"
    elif state.tipped_by is not None:
        # the tipper is out and the others start again on an empty arm: the table's next step is to clear it
        message = f"Clear the arm, then {names[state.to_move - 1]} rolls to open round {state.round}"
    elif state.roll is None:
        message = f"{names[state.to_move - 1]} to roll"
    else:
        message = f"{names[state.to_move - 1]} rolled {state.roll}: choose a move"
    tip_msg = tip_next = None
    if state.tipped_by is not None:
        tipper = names[state.tipped_by - 1]
        tip_msg = f"{tipper} tipped the arm" + ("" if state.over else " and is out")
        if not state.over:
            tip_next = (f"Take every pawn off the arm: {_listed(names[s - 1] for s in sorted(state.active))} start round "
                        f"{state.round} with their own pawns, {names[state.to_move - 1]} first.")
    return {
        "model": model.to_dict(),
        "holders": holders,
        "net_torque": round(torque, 1),
        "tip_torque": round(model.tip_torque, 1),
        "margin": round(model.tip_torque - abs(torque), 1),
        "players": players,
        "to_move": state.to_move,
        "roll": state.roll,
        "turn": state.turn,
        "round": state.round,
        "opening": sorted(state.opening),
        "moves": moves,
        "indicator": indicator(model, state),
        "tipped_by": state.tipped_by,
        "tip_message": tip_msg,
        "tip_next": tip_next,
        "winners": list(state.winners),
        "result": state.result,
        "over": state.over,
        "tip_can_be_reported": can_report_tip(state),
        "message": message,
        "history": list(state.history[-12:]),
        "options": state.options.to_dict(),
    }


def scores(state: State, model: Model) -> dict[str, int]:
    """Pawns brought home per player: the race the game is about."""
    out = {}
    for seat in range(1, state.players + 1):
        finish = set(model.seats[state.path_of[seat]].finish) if seat in state.path_of else set()
        out[state.options.names[seat - 1]] = sum(1 for p in state.pawns if p.seat == seat and p.holder in finish)
    return out


def act(model: Model, state: State, action: Mapping[str, Any]) -> State:
    """One table action: roll, move, tip (reported by the sensors or a player)."""
    from companion.games.base import field as get

    kind = get(action, "type", str)
    if kind == "roll":
        if state.over:
            raise RuleError("the game is over; start a new one")
        if state.roll is not None:
            raise RuleError(f"the die already shows {state.roll}; play a move (or undo the roll)")
        value = get(action, "value", int)
        if not 1 <= value <= 6:
            raise RuleError(f"a die shows 1 to 6, not {value}")
        return replace(state, roll=value, tipped_by=None)
    if kind == "move":
        move = Move.from_dict(get(action, "move", dict))
        if move.kind != "rearrange" and state.roll is not None and move.roll != state.roll:
            raise RuleError(f"the die shows {state.roll}, not {move.roll}")
        return apply(model, state, move)
    if kind == "tip":
        return report_tip(model, state)
    raise RuleError(f"unknown Balance Duels action {kind!r}; actions are roll, move and tip")


def engine(model: Model):
    from companion.games.base import Engine

    def new(options: Mapping[str, Any]) -> State:
        opts = dict(options)
        players = opts.pop("players", 2)
        return new_game(model, players, **opts)

    return Engine(
        name="balance_duels",
        title="Balance Duels",
        new=new,
        act=lambda state, action: act(model, state, action),
        view=lambda state: view(model, state),
        scores=lambda state: scores(state, model),
        seats=(2, 4, 2),
        default_names=tuple(COLOURS),
        option_keys=("players", *Options.__dataclass_fields__),
    )
