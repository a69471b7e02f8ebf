"""The Balance Duels game following the real arm: sensed physical events become game moves.

The sensing layer (companion/sensing/) decides *what physically changed*; this link
narrows that to the legal moves for the roll and applies the move when the choice is
clear, asks the table ("Which move was made?") when it is not, and reports a board
that matches no legal move. It knows the game; the sensing layer does not.
"""

from __future__ import annotations

import logging
import math
import threading
from collections import deque
from typing import Any

from companion.games import balance_duels as bd
from companion.games.base import RuleError
from companion.sensing.inference import chosen_move, match_moves

log = logging.getLogger(__name__)
QUESTION_OPTIONS = 4
MISMATCH_EVERY_S = 1.0
MISMATCH_LASTS_S = 3.0


class ArmLink:
    def __init__(self, companion, follower):
        self.companion = companion
        self.follower = follower
        self._lock = threading.RLock()
        self._last_t = -math.inf
        # the changes themselves, not their ids: a forgotten change's id can be reused by a new one
        self._seen: deque = deque(maxlen=8)
        self._applying = False
        self.question: dict | None = None
        self.notice: str | None = None
        self._mismatch: tuple[float, str | None] = (-math.inf, None)
        self._mismatch_since: float | None = None
        self.moves_applied = 0

    # --- samples in
    def feed(self, t: float, sensor: str, value: float) -> None:
        with self._lock:
            # readers run in their own threads: keep one time order for the follower
            t = max(t, self._last_t)
            self._last_t = t
            try:
                events = self.follower.feed(t, sensor, value)
            except ValueError as exc:
                log.warning("sensing refused a sample: %s", exc)
                return
            for ev in events:
                self._on_event(ev)

    # --- events out
    def _on_event(self, ev) -> None:
        host = self.companion.host
        if host.game != "balance_duels":
            return
        state = host.state
        model = self.companion.model
        if ev.event == "unexplained":
            self.notice = ev.message or "the arm changed in a way no single pawn explains: check the pawns"
            return
        if ev.event in ("tip", "untip"):
            if ev.event == "tip" and state.options.tip_judge == "table" and not state.over:
                self._act({"type": "tip"}, "the arm rests on the board")
            return
        change = ev.change
        if change is None or any(c is change for c in self._seen):
            return  # a beat reports a move and a remove from one change: handle it once
        self._seen.append(change)
        if sorted(self.follower.occupancy) == sorted(state.on_arm()):
            return  # the arm caught up with the game (e.g. cleared after a tip)
        if state.over:
            self.notice = "the game is over; start a new one from the page"
            return
        if state.roll is None:
            self.notice = "a pawn moved before the die was rolled: roll first (or put it back)"
            return
        legal = [m.to_dict() for m in bd.legal_moves(model, state, state.roll) if m.kind in ("place", "advance")]
        if not legal:
            self.notice = "no placement or advance is possible with this roll; put the pawn back"
            return
        matches = match_moves(change, legal)
        move = chosen_move(matches)
        if move is not None:
            self._apply(move, change)
            return
        fitting = [m for m in matches if m.fits][:QUESTION_OPTIONS]
        if fitting:
            self.question = {
                "text": "Which move was made? " + " or ".join(m.text for m in fitting) + "?",
                "options": [{"label": m.text, "move": m.move, "probability": round(m.probability, 3)}
                            for m in fitting],
                "change": change,
            }
            return
        self.notice = "what the arm shows matches no legal move for this roll: check the pawns"

    def _act(self, action: dict, what: str) -> bool:
        self._applying = True
        try:
            self.companion.host.act(action, source="sensor")
            return True
        except RuleError as exc:
            self.notice = f"{what}, but the game refuses it: {exc}"
            return False
        finally:
            self._applying = False

    def _apply(self, move: dict, change) -> None:
        if not self._act({"type": "move", "move": move}, "the sensors saw a move"):
            return
        self.moves_applied += 1
        self.question = None
        self.notice = None
        state = self.companion.host.state
        if state.round != getattr(self, "_round", state.round) or state.tipped_by is not None:
            self.follower.set_occupancy(state.on_arm())
        else:
            try:
                self.follower.confirm_move(move, change)
            except ValueError as exc:
                # the game's move cannot be made from what was sensed: take the game's word for the arm
                log.info("sensing: %s; following the game's pawns instead", exc)
                self.follower.set_occupancy(state.on_arm())
        self._round = state.round

    def answer(self, option: Any) -> None:
        """The players say which move it was (from the page or the buttons)."""
        with self._lock:
            q = self.question
            if q is None:
                raise RuleError("the companion is not asking anything now")
            if isinstance(option, bool) or not isinstance(option, int) or not 0 <= option < len(q["options"]):
                raise RuleError(f"answer with an option from 0 to {len(q['options']) - 1}")
            self._apply(q["options"][option]["move"], q["change"])

    def on_game_change(self) -> None:
        """A change made by the page or buttons: the follower takes the game's word for the arm."""
        if self._applying:
            return
        with self._lock:
            host = self.companion.host
            self.follower.set_occupancy(host.state.on_arm() if host.game == "balance_duels" else [])
            self.question = None
            self.notice = None

    # --- for the page
    def live(self) -> dict:
        with self._lock:
            out = dict(self.follower.live())
            out.pop("pawns", None)
            host = self.companion.host
            now = self._last_t
            if host.game == "balance_duels" and now - self._mismatch[0] >= MISMATCH_EVERY_S:
                found = self.follower.mismatch(host.state.on_arm())
                if found is None:
                    self._mismatch_since = None
                elif self._mismatch_since is None:
                    self._mismatch_since = now
                self._mismatch = (now, found)
            # only a disagreement that lasts is worth a banner (a swing still dying out is not); and while the
            # players are being asked, the game is behind the arm on purpose
            lasting = self._mismatch_since is not None and now - self._mismatch_since >= MISMATCH_LASTS_S
            out["mismatch"] = self._mismatch[1] if (host.game == "balance_duels" and self.question is None
                                                    and lasting) else None
            out["question"] = None if self.question is None else {
                "text": self.question["text"], "options": [o["label"] for o in self.question["options"]]}
            out["sensing_notice"] = self.notice
            return out
