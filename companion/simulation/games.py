"""Whole games of Balance Duels on the simulated table, written as a trace and the table's inputs.

The rules engine chooses each turn (mostly safe moves, now and then a risky one, so the arm
tips); simulated hands make it on the simulated arm (companion/simulation/traces.py); the
players' part goes into the inputs a replay reads: the roll before each turn, passes and
"I can't play", a new game after a game ends, and a few seconds after every physical turn
the true move as an `answer` (used only if the companion is asking then). The players watch
the page as they play: the session is replayed as it is made, and when the page does not show
the turn as it was once they have answered — missed, or another move, or a tip that was not
(or was) — they put it right from the page as people at a table do: undo what the companion
applied for that turn, tap the move they made, and "The arm tipped" if it did. After a tip
the arm is cleared pawn by pawn.

The truth of every turn is kept beside them, for scoring a replay (bench/game_following.py).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from typing import Callable, Sequence

from companion.config import parse
from companion.games import balance_duels as bd
from companion.games.balance_model import Model
from companion.recorder.inputs import Input
from companion.replay.session import Replay, ReplayResult, ReplaySetup
from companion.sensing.calibration import ArmCalibration
from companion.simulation.traces import ArmStyle, HandStyle, NoiseProfile, Row, TableScript

ANSWER_AFTER_S = 3.6        # after the hands leave: past the follower's longest wait (3 s) and its next look


@dataclass
class Turn:
    """What really happened in one turn."""

    game: int                       # which game of the session (1, 2, …)
    seat: int
    roll: int
    move: dict                      # the move the player made, as the rules engine lists it
    roll_t: float
    hands_off: float | None = None  # when the last hand left the arm (None: no pawn was touched)
    tipped: bool = False            # the arm rests on the board after it, hands off
    entered_by_hand: bool = False   # the page did not show it right after the answer: the players put it right

    @property
    def physical(self) -> bool:
        return self.move["kind"] in ("place", "advance")


@dataclass
class SimSession:
    model: Model
    calibration: ArmCalibration
    rows: list[Row]
    inputs: list[Input]
    turns: list[Turn] = field(default_factory=list)
    players: int = 2
    seconds: float = 0.0
    replayed: ReplayResult | None = None     # the replay the players watched while playing

    def setup(self) -> ReplaySetup:
        return replay_setup(self.model, self.calibration, self.players)


def replay_setup(model: Model, calibration: ArmCalibration, players: int = 2) -> ReplaySetup:
    """What a replay of a simulated session runs with (the sensors as its calibration says)."""
    return ReplaySetup(parse(session_config(players)), model, calibration, None, True)


def _t(x: float) -> float:
    return round(x, 6)


def play_session(model: Model, *, profile: NoiseProfile | str = "quiet-10sps", seed: int = 0, players: int = 2,
                 turns: int = 40, hands: HandStyle | None = None, mass_spread: bool = True,
                 answer_after_s: float = ANSWER_AFTER_S, page_fallback: bool = True,
                 options: dict | None = None, rolls: Sequence[int] | None = None,
                 choose: Callable[[bd.State, list[bd.Move]], bd.Move] | None = None,
                 arm: ArmStyle | None = None, accelerometer: bool = True,
                 calibration_of: Callable[[ArmCalibration], ArmCalibration] | None = None) -> SimSession:
    """Games of Balance Duels until `turns` turns have been played (a game cut short at the end is fine).

    `rolls` fixes the die (in order; random after them), `choose(state, legal moves)` the moves.
    `accelerometer=False`: the table is followed by its weight alone (the angle rows stay in the trace).
    `calibration_of`: what the table runs with, made from the simulation's own (perfect) calibration of its sensors
    (companion/simulation/calibrating.py: none, or the walk-through's)."""
    rolls = list(rolls or [])
    rng = random.Random(seed * 7 + 3)
    hands = hands or HandStyle(lift_gap_s=(0.05, 0.35))
    script = TableScript(model, profile, seed=seed, hands=hands, mass_spread=mass_spread, arm=arm)
    opts = {"players": players, "tip_judge": "table", **(options or {})}
    inputs: list[Input] = []
    out: list[Turn] = []
    game = 0
    calibration = script.calibration() if accelerometer else replace(script.calibration(), accelerometer=False)
    if calibration_of is not None:
        calibration = calibration_of(calibration)
    watched = Replay(replay_setup(model, calibration, players))
    fed = 0

    def say(item: Input) -> None:
        # numbered as the inputs file will number it, so that what the players watched reads as its replay will
        item = replace(item, line=len(inputs) + 1)
        inputs.append(item)
        watched.push(item)

    def watch() -> None:
        """The page, up to now."""
        nonlocal fed
        watched.feed(script.rows[fed:])
        fed = len(script.rows)
        watched.advance(_t(script.now))

    def start_game(at: float | None = None) -> bd.State:
        nonlocal game
        game += 1
        say(Input(_t(script.now if at is None else at), "new_game", {"game": "balance_duels", "options": dict(opts)}))
        engine_opts = {k: v for k, v in opts.items() if k != "players"}
        return bd.new_game(model, players, **engine_opts)

    state = start_game(at=0.0)
    script.wait(rng.uniform(1.0, 2.0))
    while len(out) < turns:
        if state.over:
            script.wait(rng.uniform(1.5, 3.0))
            if script.pawns:
                script.clear()
            state = start_game()
            script.wait(rng.uniform(1.5, 3.0))
            continue
        roll = rolls.pop(0) if rolls else rng.randint(1, 6)
        turn = Turn(game, state.to_move, roll, {}, _t(script.now))
        say(Input(turn.roll_t, "action", {"type": "roll", "value": roll}))
        state = bd.act(model, state, {"type": "roll", "value": roll})
        script.wait(rng.uniform(0.6, 1.8))       # the player looks, and reaches for a pawn
        assessed = bd.assess_all(model, state, roll)
        safe = [m for m, a in assessed if a.verdict == "safe" and m.kind in ("place", "advance")]
        risky = [m for m, a in assessed if a.verdict != "safe"]
        r = rng.random()
        pool = safe if safe and r < 0.85 else risky if risky and r < 0.95 else [m for m, _ in assessed]
        move = choose(state, [m for m, _ in assessed]) if choose is not None else rng.choice(pool)
        turn.move = move.to_dict()
        if move.kind == "place":
            act = script.place(move.to_holder, move.size)
        elif move.kind == "advance" and move.beats:
            act = script.beat(move.from_holder, move.to_holder, move.size, move.beats, move.beaten_size)
        elif move.kind == "advance":
            act = script.move(move.from_holder, move.to_holder, move.size)
        else:
            act = None
            say(Input(_t(script.now), "action", {"type": "move", "move": move.to_dict()}))
        before_round = state.round
        state = bd.apply(model, state, move)
        if act is not None:
            turn.hands_off = _t(act.hands_off)
            turn.tipped = act.tipped_after
            if act.tipped_after and not state.over:
                state = bd.report_tip(model, state)
            answer_t = act.hands_off + answer_after_s
            script.wait(max(0.0, answer_t - script.now))
            fields = {k: v for k, v in move.to_dict().items() if k != "roll"}
            say(Input(_t(script.now), "answer", fields))
            watch()
            if page_fallback and not _same(watched.host.state, state):
                script.wait(rng.uniform(1.0, 3.0))
                for item in _put_right(watched, move, act.tipped_after):
                    say(Input(_t(script.now), item[0], item[1]))
                turn.entered_by_hand = True
        out.append(turn)
        if state.tipped_by is not None and not state.over and state.round != before_round:
            # the tipper is out: the others clear the arm and open a new round
            script.wait(rng.uniform(1.5, 3.0))
            script.clear()
        script.wait(rng.uniform(1.0, 3.0))
    watched.feed(script.rows[fed:])
    return SimSession(model, calibration, script.rows, inputs, out, players, script.now, watched.finish())


def _same(shown: bd.State, truth: bd.State) -> bool:
    return (sorted(shown.on_arm()) == sorted(truth.on_arm()) and shown.to_move == truth.to_move
            and shown.roll == truth.roll and shown.result == truth.result and shown.round == truth.round)


def _put_right(watched: Replay, move: bd.Move, tipped: bool) -> list[tuple[str, object]]:
    """The page taps that make the game show the turn as it was: undo what came after its roll, then the move."""
    lines = watched.result.lines
    roll_at = max(i for i, ln in enumerate(lines) if ln.get("kind") == "action"
                  and ln["body"]["action"].get("type") == "roll")
    after = [ln for ln in lines[roll_at + 1:] if "seq" in ln]
    out: list[tuple[str, object]] = [("undo", True) for _ in after]
    out.append(("action", {"type": "move", "move": move.to_dict()}))
    if tipped:
        out.append(("action", {"type": "tip"}))
    return out


def session_config(players: int = 2) -> dict:
    """Config tables for a replay of a simulated session (the sensors come from its calibration)."""
    return {"simulate": {"enabled": True}, "game": {"players": players}}


def move_matches(applied: dict, true: dict, keys: Sequence[str] = ("kind", "seat", "size", "from_holder", "to_holder",
                                                                    "beats")) -> bool:
    return all(applied.get(k) == true.get(k) for k in keys)
