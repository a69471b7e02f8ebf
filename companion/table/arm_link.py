"""The Balance Duels game following the real arm: sensed physical events become game moves.

The sensing layer (companion/sensing/) decides *what physically changed*; this link
narrows that to the legal moves for the roll and applies the move when the choice is
clear, asks the table ("Which move was made?") when it is not, and reports a board
that matches no legal move. It knows the game; the sensing layer does not.

Every sample is stamped on the table's clock (companion/foundation/table_time.py) under the table
lock, which the game host also holds while it commits a change: the follower and the game
see one order of samples and changes, which is what the flight recorder keeps and what
`companion replay` plays back.
"""

from __future__ import annotations

import json
import logging
import math
import threading
from collections import deque
from typing import Any, Callable, Mapping

from companion.games import balance_duels as bd
from companion.games.base import RuleError
from companion.sensing.inference import chosen_move, match_moves
from companion.foundation.table_time import TableTime, sample_value

log = logging.getLogger(__name__)
QUESTION_OPTIONS = 4
MISMATCH_EVERY_S = 1.0
MISMATCH_LASTS_S = 3.0
RESTART_QUIET_S = 2.5     # a follower restart waits for an arm this long at rest, with nothing asked
LOOK_AGAIN_S = 0.25       # moves the sensors cannot tell apart yet: look at the swing again this often ...
ASK_AFTER_S = 2.0         # ... for this long after the change was decided, then ask the players
# how sure the sensors must be of a move to apply it unasked: like pawns moved alike differ only by their
# masses, the swing's frequency and where the hands touched, each slight (at 10 SPS a torque 2σ off and a touch
# fit 1.5σ off made 0.96-0.975 of a wrong move); a question costs a tap, a wrong move an undo
SURE = 0.99
WELL_D2 = 9.0             # ... and, decided early, fit what was measured within 3σ (the follower's own early rule)
# a change entered on the page or the buttons before the pawns were moved: the players have this long (and
# then until the arm is still) to make the arm match it before the follower takes the game's word for it
EXPECT_S = 8.0
HOME_TIP_S = 1.5          # a tip this soon after the move that brought a player home is that move's (the follower
                          # reports a tip with its change, or on its own a second after the hands left)


class ArmLink:
    """`host` is the GameHost, `model` the balance model its engine uses, `follower` an ArmFollower.

    `lock` is the table lock (the host's gate); `time` the table clock the samples are stamped on.
    """

    def __init__(self, host, model, follower, *, lock: threading.RLock | None = None,
                 time: TableTime | None = None, restart_every_s: float | None = None):
        self.host = host
        self.model = model
        self.follower = follower
        follower.game_takes = self._game_takes
        self._lock = lock if lock is not None else threading.RLock()
        self.time = time if time is not None else TableTime()
        # the changes themselves, not their ids: a forgotten change's id can be reused by a new one
        self._seen: deque = deque(maxlen=8)
        self._applying = False
        self.answering = False            # while a move the players named is being applied
        self.clearing = False             # the game took pawns off (a tip, a new game) that are still on the arm
        self.question: dict | None = None
        self.notice: str | None = None
        self.notice_details: str | None = None    # the sensors' figures behind the notice, for the curious
        self._mismatch: tuple[float, tuple[str, str] | None] = (-math.inf, None)
        self._mismatch_since: float | None = None
        self.moves_applied = 0
        self._rows: list[Callable[[float, str, float], None]] = []
        self._reports: list[Callable[[str, Any], None]] = []
        # with the flight recorder: restart the follower from its memory now and then (companion/sensing/memory.py)
        self.restart_every_s = restart_every_s
        self._restarted_at = 0.0
        # a change whose legal moves the sensors could not yet tell apart: (change, legal moves, when decided,
        # next look, the last matches) — looked at again as the arm keeps swinging, then asked about
        self._pending: tuple | None = None
        # the arm came to rest on the board while the turn's move was still being asked about: the tip
        # belongs after that move, so it waits for it
        self._tip_waits = False
        self._homecoming: float | None = None    # when a change brought a player home, while its tip may still come
        # (the game's pawns, until when): the game changed and the arm has yet to be made to match it
        self._expect: tuple[list, float] | None = None
        # the players' pace: a roll that came while the last move was still being judged, kept (value, source)
        # until that move is on the game; and a move they named before being asked, for the change being judged
        self._held_roll: tuple[int, str] | None = None
        self._players_move: dict | None = None
        self.releasing_roll = False        # while a kept roll is being made to count (the recorder has it already)
        self.applied_confidence: float | None = None

    @property
    def lock(self) -> threading.RLock:
        return self._lock

    @property
    def _last_t(self) -> float:
        return self.time.last

    def on_row(self, callback: Callable[[float, str, float], None]) -> None:
        """callback(t, sensor, value) for every sample the follower is given, as it is given (the flight recorder)."""
        self._rows.append(callback)

    def on_report(self, callback: Callable[[str, Any], None]) -> None:
        """callback(kind, data): "notice" (text), "question" (the question dict), "answered" (the move named),
        "restarted" ({"t", "memory"}: the follower started afresh from that memory)."""
        self._reports.append(callback)

    def _report(self, kind: str, data: Any) -> None:
        for cb in self._reports:
            try:
                cb(kind, data)
            except Exception:  # a listener's fault must not stop the following of the arm
                log.exception("arm link listener failed on %s", kind)

    def _say(self, text: str, details: str | None = None) -> None:
        self.notice = text
        self.notice_details = details
        self._report("notice", text)

    # --- samples in
    def feed(self, t: float, sensor: str, value: float) -> None:
        with self._lock:
            # readers run in their own threads: one time order for the follower, on the table's clock
            t = self.time.sample(t)
            value = sample_value(sensor, value)
            for cb in self._rows:
                cb(t, sensor, value)
            try:
                events = self.follower.feed(t, sensor, value)
            except ValueError as exc:
                log.warning("sensing refused a sample: %s", exc)
                return
            for ev in events:
                self._on_event(ev)
            if self._expect is not None and t >= self._expect[1] and self.follower.settled:
                self._take_games_word()
            if self._pending is not None and t >= self._pending[3]:
                self._look_again(t)
            if self._held_roll is not None:
                self._release_held_roll()
            if self.restart_every_s is not None and t - self._restarted_at >= self.restart_every_s:
                self._maybe_restart(t)

    # --- follower restarts
    def _maybe_restart(self, t: float) -> None:
        f = self.follower
        if (not f.settled or t - f.t_off < RESTART_QUIET_S or self.question is not None or self.clearing
                or self._pending is not None or self._expect is not None):
            return
        from companion.sensing.memory import memory_of

        # through JSON, as a replay reads it: both then build the new follower from the very same numbers
        memory = json.loads(json.dumps(memory_of(f)))
        t = self.time.mark()
        self.restart(memory)
        self._report("restarted", {"t": t, "memory": memory})

    def restart(self, memory: dict) -> None:
        """A fresh follower that knows what the old one had learned (ValueError if the memory does not fit)."""
        from companion.sensing.memory import resume

        with self._lock:
            old = self.follower
            self.follower = resume(self.model, old.cal, memory, settings=old.s)
            self.follower.game_takes = self._game_takes
            self._restarted_at = self.time.last
            self._seen.clear()
            self.question = None
            self.clearing = False
            self._pending = None
            self._expect = None
            self._players_move = None

    # --- events out
    def _on_event(self, ev) -> None:
        host = self.host
        if host.game != "balance_duels":
            return
        state = host.state
        if ev.event == "unexplained":
            if self._players_move is not None and ev.change is not None:
                self._apply_players_move(ev.change)
                return
            if self._expect is not None:
                self._caught_up()    # the players are still making the arm match the page: nothing to say yet
                return
            if not self._clearing(state, ev.change):
                self._say(ev.message or "the arm changed in a way no single pawn explains: check the pawns",
                          ev.details)
            return
        if ev.event == "unsure":
            self._unsure(ev.change, state)
            return
        if ev.event in ("tip", "untip"):
            if ev.event == "untip":
                self._tip_waits = False
            elif state.options.tip_judge == "table" and (not state.over or (
                    state.home_unjudged and self._homecoming is not None and ev.t - self._homecoming <= HOME_TIP_S)):
                # (after the move that brought a player home, only a tip that comes with that move, before the arm
                # is touched again, is its tip: the arm may well tip while the players clear it)
                if state.roll is not None and (self._pending is not None or self.question is not None
                                               or self.follower.judging):
                    # judged once the follower has named the move — or, when it could not, once the tip has settled
                    # it (`_settled_by_tip`): a tip is reported on its own a second after the hands left, and a
                    # change near the tip may take the longest look to name (our seed 22500001 turn 34: the tip
                    # went to the game before its move, was refused, and never counted)
                    self._tip_waits = True
                    if self.question is not None:
                        self._settled_by_tip(self.question["change"], self.question["options"])
                    elif self._pending is not None:
                        self._settled_by_tip(self._pending[0], _options(self._pending[4]))
                    return
                self._tip()
            return
        change = ev.change
        if change is None or any(c is change for c in self._seen):
            return  # a beat reports a move and a remove from one change: handle it once
        self._seen.append(change)
        self._homecoming = None
        if self._expect is not None:
            self._caught_up()        # as above: the change is the players making the arm match the page
            return
        if self._players_move is not None:
            self._apply_players_move(change)
            return
        if self._pending is not None:
            self._ask(self._pending)   # a new change came before the last could be told: ask about that one first
            if self.question is not None:
                return
        game = sorted(state.on_arm())
        if sorted(self.follower.occupancy) == game and (
                self.clearing or sorted((p.holder, p.size) for p in change.after) == game):
            self.clearing = False
            return  # the arm caught up with the game (e.g. cleared after a tip)
        # (a change the sensors could not tell, whose likeliest account is that nothing moved — the arm came to
        # rest on the board, which hides the torque — is still the turn's move: the game narrows it, or asks)
        if self._clearing(state, change):
            return
        if state.over:
            self._say("the game is over; start a new one from the page")
            return
        if state.roll is None:
            self._say("a pawn moved before the die was rolled: roll first (or put it back)")
            return
        legal = self._legal_on_arm(state)
        if not legal:
            self._say("no placement or advance is possible with this roll; put the pawn back")
            return
        matches = match_moves(change, legal)
        move = chosen_move(matches, threshold=SURE, well_d2=self._well(change, self._last_t))
        if move is not None:
            self._apply(move, change, confidence=_confidence(matches, move))
            return
        if any(m.fits for m in matches) or self._well(change, self._last_t) is not None:
            # several legal moves fit, or one only loosely, or none of them and the change was decided early: a
            # longer look at the swing may yet tell them apart (their moments of inertia differ) or put a disturbed
            # measurement right (foreign seed 9204 turn 34: a placement at W4 read 0.7 s after the hands left as
            # W3's torque, which no legal move fits, and the rest it came to as W4's)
            self._pending = (change, legal, self._last_t, self._last_t + LOOK_AGAIN_S, matches)
            if self._tip_waits:
                self._settled_by_tip(change, _options(matches))
            return
        self._ask((change, legal, self._last_t, self._last_t, matches))

    def _game_takes(self, change, sure: float) -> bool:
        """Whether the game would apply a move for `change` now, were it decided (the follower asks while it is still
        judging, with the bar it decides early at: `sure`): the turn's move is due, and one legal move fits the
        readings that surely, and as well as `_on_event` wants."""
        if (self.host.game != "balance_duels" or self.question is not None or self._pending is not None
                or self._expect is not None or self._players_move is not None or self.clearing):
            return False
        state = self.host.state
        if state.over or state.roll is None:
            return False
        legal = self._legal_on_arm(state)
        return bool(legal) and chosen_move(match_moves(change, legal), threshold=max(SURE, sure),
                                           well_d2=self._well(change, self._last_t)) is not None

    def _legal_on_arm(self, state) -> list[dict]:
        """The legal moves for the roll that change the arm (placements and advances)."""
        return [m.to_dict() for m in bd.legal_moves(self.model, state, state.roll) if m.kind in ("place", "advance")]

    def _unsure(self, change, state) -> None:
        """The follower's likeliest account was that nothing changed, but not surely, after hands that took or left
        weight. With the turn's move due, the legal moves that fit the readings are asked about — never applied
        unasked, since the arm itself said probably nothing; none fitting, it was nothing the game needs."""
        if change is None or state.over or state.roll is None or self._expect is not None or self.clearing:
            return
        if self._players_move is not None:
            self._apply_players_move(change)
            return
        if self._pending is not None or self.question is not None:
            return
        legal = self._legal_on_arm(state)
        matches = match_moves(change, legal) if legal else []
        if any(m.fits for m in matches):
            self._ask((change, legal, self._last_t, self._last_t, matches))

    def _well(self, change, t: float) -> float | None:
        """How well a move must fit to be applied: within 3σ while a longer look may still improve the measurement;
        once the follower's longest wait is over (or it said a longer look could not change its verdict), as well as
        it fits at all."""
        if change.last_look:
            return None
        return WELL_D2 if t - change.hands_off_t < self.follower.s.max_wait_s else None

    def _look_again(self, t: float) -> None:
        change, legal, since, _, matches = self._pending
        again = self.follower.remeasure(change)
        if again is not None:
            well = self._well(change, t)
            previous = chosen_move(matches, threshold=SURE, well_d2=well)
            matches = match_moves(again, legal)
            move = chosen_move(matches, threshold=SURE, well_d2=well)
            # the swing's evidence grows look by look, and wavers: a move is taken when two looks in a row
            # agree on it (the first look's matches are those the change was decided with)
            if move is not None and move == previous:
                self._pending = None
                self._apply(move, change, confidence=_confidence(matches, move))
                return
        if again is None or t - since >= ASK_AFTER_S:
            self._ask((change, legal, since, t, matches))
            return
        self._pending = (change, legal, since, t + LOOK_AGAIN_S, matches)

    def _ask(self, pending: tuple) -> None:
        change, _, _, _, matches = pending
        self._pending = None
        options = _options(matches)
        if self._tip_waits and self._settled_by_tip(change, options):
            return
        said = " or ".join(o["label"] for o in options)
        if any(m.fits for m in matches):
            text = "Which move was made? " + said + "?"
        else:
            # a reading no legal move fits is never the end of the turn: the sensors (or the model they are judged
            # by) may be wrong, the players know — the legal moves nearest the reading are offered, and any legal
            # move they name is taken (answer_move); if the pawns are wrong, putting them right is a change too
            text = ("What the arm shows matches no legal move for this roll: check the pawns. Which move was made? "
                    + said + " (or another legal move)?")
        self.question = {"text": text, "options": options, "change": change}
        self._report("question", self.question)

    def _settled_by_tip(self, change, options: list[dict]) -> bool:
        """The arm tipped while the turn's move was still unsure: the likeliest of `options` (the moves a question
        offers, or would) is taken, with how sure the sensors were of it, and the tip after it. Whichever move it
        was, the tip ends the mover's turn alike — the game over, or the mover out and the arm cleared — and players
        whose arm has just tipped answer no question about it (foreign seed 35200 game 0: L E3 → E2 pinned the arm
        at the board, was asked about at 0.06 with nothing at 0.92, and the tip waited for an answer for good)."""
        state = self.host.state
        if not options or state.options.tip_judge != "table" or state.over or state.roll is None:
            return False
        best = max(options, key=lambda o: o.get("probability", 0.0))
        self._pending = None
        self.question = None
        p, applied = best.get("probability"), self.moves_applied
        self._apply(best["move"], change, confidence=p)
        if self.moves_applied > applied:
            sure = "" if p is None else f", {100 * p:.0f} % likely"
            self._say(f"the arm tipped before the sensors could tell its move: taken as {best['label']}{sure} "
                      "(undo it on the page if it was another)")
        return True

    def _caught_up(self) -> bool:
        """Whether the still arm now matches the change the page made; then the follower takes the game's pawns."""
        game = self.host.state.on_arm()
        f = self.follower
        if sorted(f.occupancy) == sorted(game) or (f.settled and f.mismatch(game) is None):
            self._take_games_word()
            return True
        return False

    def _take_games_word(self) -> None:
        self._expect = None
        self.follower.set_occupancy(self.host.state.on_arm())

    def _tip(self) -> None:
        self._tip_waits = False
        if self._act({"type": "tip"}, "the arm rests on the board"):
            self._took_off(self.host.state)

    def _act(self, action: dict, what: str) -> bool:
        self._applying = True
        try:
            self.host.act(action, source="sensor")
            return True
        except RuleError as exc:
            self._say(f"{what}, but the game refuses it: {exc}")
            return False
        finally:
            self._applying = False

    def _clearing(self, state, change) -> bool:
        """Whether `change` is pawns coming off an arm that carries more than the game has on it — the arm being
        cleared after a tip, for a new game, or once the game is over. Then there is no move to find and nothing to
        say; once the arm carries what the game says, the follower takes the game's word."""
        if not (self.clearing or state.over):
            return False
        if change is None or change.measurement.dw > -0.5 * min(self.follower.geo.mass.values()):
            return False
        game = state.on_arm()
        before = [(p.holder, p.size) for p in change.before]
        if not (state.over or (len(before) > len(game) and _contains(before, game))):
            return False
        if self.follower.settled and self.follower.mismatch(game) is None:
            self.follower.set_occupancy(game)
            self.clearing = False
        return True

    def _took_off(self, state) -> None:
        """After a change of the game: are there pawns on the arm that the game has just taken off?"""
        game = state.on_arm()
        arm = self.follower.occupancy
        self.clearing = len(arm) > len(game) and _contains(arm, game)

    def _apply(self, move: dict, change, confidence: float | None = None) -> None:
        before = self.host.state
        # how sure the sensors were of a move they applied unasked, for the record (None: the players named it)
        self.applied_confidence = confidence
        try:
            if not self._act({"type": "move", "move": move}, "the sensors saw a move"):
                return
        finally:
            self.applied_confidence = None
        self.answering = False      # what follows the move (a tip) is the sensors' own
        self.moves_applied += 1
        self.question = None
        self.notice = None
        try:
            # the pawns as the change left them, with the masses they were weighed at — even when the move tipped
            # the arm and the game has taken them off: the players clear it next, and the follower sees them go
            self.follower.confirm_move(move, change)
        except ValueError as exc:
            # the game's move cannot be made from what was sensed: take the game's word for the arm
            log.info("sensing: %s; following the game's pawns instead", exc)
            self.follower.set_occupancy(_on_arm_after(self.model, before, move))
        self._took_off(self.host.state)
        after = self.host.state
        self._homecoming = self._last_t if after.over and getattr(after, "home_unjudged", False) else None
        if self._tip_waits and after.options.tip_judge == "table" and (not after.over or self._homecoming is not None):
            self._tip()

    def answer(self, option: Any) -> None:
        """The players say which move it was (from the page or the buttons): an option of the open question, or,
        while the companion is still looking, of the candidates the page shows."""
        with self._lock:
            q = self.question
            if q is None and self._pending is not None:
                q = self._candidates_question()
            if q is None:
                raise RuleError("the companion is not asking anything now")
            if isinstance(option, bool) or not isinstance(option, int) or not 0 <= option < len(q["options"]):
                raise RuleError(f"answer with an option from 0 to {len(q['options']) - 1}")
            move = q["options"][option]["move"]
            self._pending = None
            self._report("answered", move)
            self.answering = True
            try:
                self._apply(move, q["change"])
            finally:
                self.answering = False
            self._release_held_roll()

    def _candidates_question(self) -> dict | None:
        change, _, _, _, matches = self._pending
        fitting = [m for m in matches if m.fits][:QUESTION_OPTIONS]
        if not fitting:
            return None
        return {"options": [{"label": m.text, "move": m.move} for m in fitting], "change": change}

    # --- the players' pace: they never wait for the companion to finish judging
    @property
    def judging(self) -> bool:
        """Whether the last change is still being judged: hands on the arm, a change being weighed, or moves the
        sensors could not yet tell apart being looked at again."""
        return self.host.game == "balance_duels" and (self._pending is not None or self.follower.judging)

    def _close_judgment(self) -> None:
        """Decide the change being judged now: applied if the reading already meets the bar, else asked at once."""
        for ev in self.follower.decide_now():
            self._on_event(ev)
        if self._pending is not None:
            self._ask(self._pending)

    def roll(self, value: Any, source: str = "page", action: Mapping[str, Any] | None = None):
        """The players' roll. One that comes while the last move is still being judged closes that judgment; if
        the move is not settled then (a question is open), the roll is kept and counts once it is. Returns the
        roll's event, or None when it was kept. `action` is the roll as sent, when it came as a whole action."""
        action = dict(action) if action is not None else {"type": "roll", "value": value}
        with self._lock:
            host = self.host
            state = host.state
            busy = host.game == "balance_duels" and not state.over and state.roll is not None and (
                self.judging or self.question is not None or self._players_move is not None)
            if not busy:
                return host.act(action, source=source)
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 6:
                raise RuleError("a roll is a whole number from 1 to 6")
            if self._held_roll is not None:
                raise RuleError(f"a roll of {self._held_roll[0]} is already kept for the next turn: it counts once "
                                f"the move of this turn is settled")
            self._close_judgment()
            if host.state.roll is None:
                return host.act(action, source=source)
            self._held_roll = (value, source)
            self._report("held_roll", {"value": value, "source": source})
            return None

    def _release_held_roll(self) -> None:
        """A kept roll counts as soon as the move it followed is on the game."""
        if self._held_roll is None:
            return
        state = self.host.state
        value, source = self._held_roll
        if self.host.game != "balance_duels" or state.over:
            self._held_roll = None
            self._say(f"the roll of {value} kept for the next turn was dropped: the game is over")
            return
        if state.roll is not None or self.answering:
            return
        self._held_roll = None
        self.releasing_roll = True
        try:
            self.host.act({"type": "roll", "value": value}, source=source)
        except RuleError as exc:
            self._say(f"the roll of {value} kept for the next turn could not count: {exc}")
        finally:
            self.releasing_roll = False

    def answer_move(self, move: Any) -> None:
        """The players name the move they made. With a question open it picks that option; while the companion is
        still judging (before it asks) it is taken as their word for the change being judged, when it is legal."""
        with self._lock:
            if not isinstance(move, Mapping) or not move:
                raise RuleError("name the move as an object (kind, size, holders)")
            q = self.question
            if q is not None:
                index = next((i for i, o in enumerate(q["options"])
                              if all(o["move"].get(k) == v for k, v in move.items())), None)
                if index is not None:
                    self.answer(index)
                    return
                # a legal move the question does not offer is still the players' word for the change asked about
                chosen = self._legal_named(move, "no option of the open question is that move (it offers "
                                           + "; ".join(o["label"] for o in q["options"]) + "), and ")
                self._report("answered", chosen)
                self._apply_named(chosen, q["change"])
                self._release_held_roll()
                return
            if not self.judging:
                raise RuleError("the companion is not judging a move now (if the arm missed one, play it on the page)")
            chosen = self._legal_named(move, "")
            self._report("answered", chosen)
            self._players_move = chosen
            if self._pending is not None:
                change = self._pending[0]
                self._pending = None
                self._apply_players_move(change)
            else:
                # hands off: the change is decided now and the named move applied to it; hands still on the arm:
                # it is applied to the change the follower decides once they are off
                for ev in self.follower.decide_now():
                    self._on_event(ev)
            self._release_held_roll()

    def _legal_named(self, move: Mapping, why: str) -> dict:
        """The legal move for this roll that has every field the players named (RuleError if none: `why` leads)."""
        state = self.host.state
        if state.roll is None or state.over:
            raise RuleError(why + "there is no roll to play a move for")
        legal = [m.to_dict() for m in bd.legal_moves(self.model, state, state.roll)]
        chosen = next((m for m in legal if all(m.get(k) == v for k, v in move.items())), None)
        if chosen is None:
            raise RuleError(why + "that is not a legal move for this roll")
        return chosen

    def _apply_players_move(self, change) -> None:
        move, self._players_move = self._players_move, None
        self._apply_named(move, change)

    def _apply_named(self, move: dict, change) -> None:
        self._pending = None
        self.answering = True
        try:
            self._apply(move, change)
        finally:
            self.answering = False

    def on_game_change(self, event=None) -> None:
        """A change made by the page or buttons: the follower takes the game's word for the arm — except that a
        new game, or a tip that clears the arm, leaves the pawns on it until the players take them off."""
        if self._applying:
            return
        with self._lock:
            host = self.host
            game = host.state.on_arm() if host.game == "balance_duels" else []
            arm = self.follower.occupancy
            clears = event is not None and (event.kind == "new_game" or (
                event.kind == "action" and event.body.get("action", {}).get("type") == "tip"))
            self._expect = None
            if clears and len(arm) > len(game) and _contains(arm, game):
                self.clearing = True
            else:
                self.clearing = False
                f = self.follower
                # an undo that comes while a change is still being read: that change is the players making the arm
                # match the page (a pawn the undone move had them place, landing just after), not a move of its own
                # — taken as one, the sensors applied the undone move again (tests/browser/test_explains.py, now and
                # then in a full `make test`)
                undoing = event is not None and event.kind == "undo" and f.judging
                if host.game == "balance_duels" and (undoing or (
                        sorted(arm) != sorted(game) and not (f.settled and f.mismatch(game) is None))):
                    # the pawns have yet to be moved as the page says: until they are, the follower keeps the arm
                    # it has, so that it sees that move as the change it is
                    self._expect = (game, self._last_t + EXPECT_S)
                else:
                    f.set_occupancy(game)
            self.question = None
            self._pending = None
            self._players_move = None
            self.notice = None
            if self._held_roll is not None and event is not None and event.kind in ("undo", "new_game"):
                value = self._held_roll[0]
                self._held_roll = None
                self._say(f"the roll of {value} kept for the next turn was dropped: the game was "
                          + ("undone" if event.kind == "undo" else "started afresh"))

    # --- for the page
    def live(self) -> dict:
        with self._lock:
            out = dict(self.follower.live())
            out.pop("pawns", None)
            out["mismatch"], out["mismatch_details"] = self._mismatch_shown()
            out["question"] = None if self.question is None else {
                "text": self.question["text"], "options": [o["label"] for o in self.question["options"]]}
            # the players' pace: the arm being read, the candidates once the companion is unsure, a kept roll
            out["reading"] = self.judging
            candidates = self._candidates_question() if self.question is None and self._pending is not None else None
            out["candidates"] = None if candidates is None else [o["label"] for o in candidates["options"]]
            out["held_roll"] = None if self._held_roll is None else self._held_roll[0]
            out["sensing_notice"] = self.notice
            out["sensing_details"] = self.notice_details if self.notice is not None else None
            return out

    def mismatch_shown(self) -> tuple[str | None, str | None]:
        """(message, details) of a lasting disagreement between the arm and the game, as the page shows it, or
        (None, None) — without the rest of `live` (a replay asks this twice a second, and the rest fits a swing)."""
        with self._lock:
            return self._mismatch_shown()

    def _mismatch_shown(self) -> tuple[str | None, str | None]:
        host = self.host
        now = self._last_t
        if host.game == "balance_duels" and now - self._mismatch[0] >= MISMATCH_EVERY_S:
            found = self._board_check(host.state)
            if found is None:
                self._mismatch_since = None
            elif self._mismatch_since is None:
                self._mismatch_since = now
            self._mismatch = (now, found)
        # only a disagreement that lasts is worth a banner (a swing still dying out is not); and while the players
        # are being asked, the game is behind the arm on purpose
        lasting = self._mismatch_since is not None and now - self._mismatch_since >= MISMATCH_LASTS_S
        shown = self._mismatch[1] if (host.game == "balance_duels" and self.question is None
                                      and self._expect is None and lasting) else None
        return shown if shown is not None else (None, None)

    def _board_check(self, state) -> tuple[str, str] | None:
        """What the page should say about the arm against the game, if anything: (message, details)."""
        game = state.on_arm()
        arm = self.follower.occupancy
        if self.clearing and len(arm) > len(game) and _contains(arm, game):
            extra = _minus(arm, game)
            if self.follower.mismatch(game) is None:
                return None
            where = ", ".join(sorted({h for h, _ in extra}))
            return (f"clear the arm: {len(extra)} pawn{'s' if len(extra) > 1 else ''} the game has taken off "
                    f"{'are' if len(extra) > 1 else 'is'} still on it ({where})", None)
        if state.over:
            return None   # the players clear the arm of a finished game as they like
        return self.follower.mismatch_report(game)


def _options(matches) -> list[dict]:
    """The options a question about `matches` offers (the fitting moves; none fitting, the nearest)."""
    fitting = [m for m in matches if m.fits][:QUESTION_OPTIONS] or list(matches[:QUESTION_OPTIONS])
    return [{"label": m.text, "move": m.move, "probability": round(m.probability, 3)} for m in fitting]


def _confidence(matches, move: dict) -> float | None:
    return next((m.probability for m in matches if m.move == move), None)


def _minus(pawns, taken) -> list:
    rest = list(pawns)
    for p in taken:
        if p in rest:
            rest.remove(p)
    return rest


def _contains(pawns, sub) -> bool:
    """Whether the multiset `pawns` holds every (holder, size) of `sub`."""
    rest = list(pawns)
    for p in sub:
        if p not in rest:
            return False
        rest.remove(p)
    return True


def _on_arm_after(model, state, move: dict) -> list[tuple[str, str]]:
    """The pawns on the arm once `move` is made, before any tip clears them."""
    try:
        after = bd._moved(model, state, bd.Move.from_dict(move))
    except (RuleError, KeyError, ValueError):
        return state.on_arm()
    return [(p.holder, p.size) for p in after if p.holder is not None]
