"""The running game: its state is the fold of its events in the store.

Every change is checked by the game's engine first and written to the store
second; only an event that is both legal and durable changes what the page
shows. Undo appends an event that takes back the last action.

A `gate` (the daemon's table lock) is held around every change and its in-order
listeners (`on_commit`): the arm's follower handles its samples under the same lock,
so the follower, the flight recorder and the game agree on what came first.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from contextlib import contextmanager, nullcontext
from typing import Any, Callable, Iterator, Mapping

from companion.foundation import strict_json
from companion.foundation.clock import Clock
from companion.games import plays
from companion.games.base import Engine, RuleError, hides_cash
from companion.games.narration import describe
from companion.games.refusals import in_words
from companion.store import Event, EventStore

log = logging.getLogger(__name__)
RECENT_EVENTS = 500      # kept in memory for resuming event streams
SCORE_POINTS = 400       # points kept for the score history chart
LOG_SHOWN = 40           # the newest entries of the game's log in every snapshot (who did what, in words)
HUMAN_SOURCES = ("page", "button")  # changes that pause the simulated demo game


class GameHost:
    def __init__(self, store: EventStore, engines: Mapping[str, Engine], default_game: str,
                 default_options: Mapping[str, Any], clock: Clock | None = None, gate=None):
        self.store = store
        self.engines = dict(engines)
        self.clock = clock or Clock()
        self._lock = threading.RLock()
        self._gate = gate if gate is not None else nullcontext()
        self._changed = threading.Condition(self._lock)
        self._listeners: list[Callable[[], None]] = []
        self._commit_listeners: list[Callable[[Event], None]] = []
        self._recent: deque[Event] = deque(maxlen=RECENT_EVENTS)
        self._snapshot: dict | None = None
        self.problems: list[str] = []     # replay problems shown on the page
        self.last_human_action = -1e9     # monotonic time of the last change not made by the demo
        self.seq = store.last_seq()
        game_id = store.latest_game()
        if game_id is None:
            self.new_game(default_game, default_options, source="startup")
            return
        try:
            self._replay(game_id)
        except _StoredGameRefused as refused:
            # Today's rules refuse how the stored game began (say a name past the bound that came in before there
            # was one): the table must still start. Its events stay in the log; a fresh game is begun, and the
            # page says why.
            log.warning("%s", refused)
            self.new_game(default_game, default_options, source="startup")
            self.problems.append(str(refused))

    # --- folding the log
    def _replay(self, game_id: int) -> None:
        events = self.store.game_events(game_id)
        first = events[0]
        game = first.body.get("game")
        if game not in self.engines:
            raise RuleError(f"the stored game {game_id} is of an unknown kind {game!r}")
        engine = self.engines[game]
        try:
            states = [engine.new(first.body.get("options", {}))]
        except RuleError as exc:
            raise _StoredGameRefused(f"the stored game {game_id} could not be replayed, so a new game was started "
                                     f"(the old one is still in the log): {exc}") from None
        labels: list[str] = ["new game"]
        texts: list[str | None] = [None]
        entries = [_entry(first, _new_game_text(engine, first.body.get("options", {})))]
        for ev in events[1:]:
            if ev.kind == "action":
                try:
                    states.append(engine.act(states[-1], ev.body["action"]))
                    labels.append(_label(ev.body["action"]))
                    texts.append(describe(game, states[-2], ev.body["action"], states[-1]))
                    entries.append(_entry(ev, texts[-1]))
                except (RuleError, KeyError, TypeError) as exc:
                    # an event that no longer applies (e.g. the rules engine changed): show it, keep the rest
                    msg = f"event {ev.seq} could not be replayed and was skipped: {exc}"
                    log.warning(msg)
                    self.problems.append(msg)
                    entries.append(_entry(ev, "skipped: it no longer applies"))
            elif ev.kind == "undo" and len(states) > 1:
                states.pop()
                labels.pop()
                entries.append(_entry(ev, _undo_text(texts.pop())))
        self.game_id = game_id
        self.game = game
        self.options = dict(first.body.get("options", {}))
        self.engine = engine
        self._states = states
        self._labels = labels
        self._texts = texts
        self._log = entries
        self._scores = self._score_history()
        self._recent.extend(events[-RECENT_EVENTS:])
        self._snapshot = None

    def _score_history(self) -> list[dict]:
        return [self.engine.scores(s) for s in self._states[-SCORE_POINTS:]]

    # --- changes
    def _commit(self, game_id: int | None, kind: str, body: dict, source: str) -> Event:
        ev = self.store.append(game_id, kind, body, source)
        self.seq = ev.seq
        self._recent.append(ev)
        self._snapshot = None
        if source in HUMAN_SOURCES:
            self.last_human_action = self.clock.now()
        self._changed.notify_all()
        return ev

    def act(self, action: Mapping[str, Any], source: str = "page") -> Event:
        """Apply one action to the current game (RuleError if not allowed; nothing changes then)."""
        if not isinstance(action, Mapping):
            raise RuleError("an action must be an object")
        _finite(action, "action")
        with self._gate:
            with self._lock:
                with _in_words(self.game):
                    new_state = self.engine.act(self._states[-1], action)
                text = describe(self.game, self._states[-1], action, new_state)
                ev = self._commit(self.game_id, "action", {"action": dict(action)}, source)
                self._states.append(new_state)
                self._labels.append(_label(action))
                self._texts.append(text)
                self._log.append(_entry(ev, text))
                self._scores.append(self.engine.scores(new_state))
                del self._scores[:-SCORE_POINTS]
            self._committed(ev)
        self._notify()
        return ev

    def undo(self, source: str = "page") -> Event:
        with self._gate:
            with self._lock:
                if len(self._states) <= 1:
                    raise RuleError("nothing to undo in this game")
                ev = self._commit(self.game_id, "undo", {"undoes": self._labels[-1]}, source)
                self._states.pop()
                self._labels.pop()
                self._log.append(_entry(ev, _undo_text(self._texts.pop())))
                self._scores = self._score_history()
            self._committed(ev)
        self._notify()
        return ev

    def new_game(self, game: str, options: Mapping[str, Any] | None = None, source: str = "page") -> Event:
        if game not in self.engines:
            raise RuleError(f"unknown game {game!r}; games: {', '.join(sorted(self.engines))}")
        options = dict(options or {})
        _finite(options, "options")
        engine = self.engines[game]
        with _in_words(game):
            state = engine.new(options)
        with self._gate:
            with self._lock:
                ev = self._commit(None, "new_game", {"game": game, "options": options}, source)
                self.game_id = ev.game_id
                self.game = game
                self.options = options
                self.engine = engine
                self._states = [state]
                self._labels = ["new game"]
                self._texts = [None]
                self._log = [_entry(ev, _new_game_text(engine, options))]
                self._scores = [engine.scores(state)]
                self.problems = []
            self._committed(ev)
        self._notify()
        return ev

    def load_record(self, events: list[Mapping[str, Any]], source: str = "page") -> Event:
        """Start a game from a game record (events as /api/record writes them), replaying every action.

        The whole record is checked with the rules engine before anything is written, outside the table lock
        (it is the slow part), so a bad record changes nothing. It is then written in one transaction under the
        table lock: any other change comes wholly before or after it, and a crash leaves either the game that
        was current or the whole record. The loaded game continues from where the record ends.
        """
        if not isinstance(events, list) or not events:
            raise RuleError("a game record is a list of events, starting with its new_game")
        for n, ev in enumerate(events, start=1):
            problem = strict_json.non_finite(ev)
            if problem is not None:
                raise RuleError(f"line {n}: {problem}")
        first = events[0]
        if not isinstance(first, Mapping) or first.get("kind") != "new_game" or not isinstance(first.get("body"), Mapping):
            raise RuleError("line 1 of the record must be its new_game event")
        game = first["body"].get("game")
        if game not in self.engines:
            raise RuleError(f"line 1: unknown game {game!r}")
        options = first["body"].get("options", {})
        if not isinstance(options, Mapping):
            raise RuleError("line 1: options must be an object")
        options = dict(options)
        engine = self.engines[game]
        try:
            states = [engine.new(options)]
        except RuleError as exc:
            raise RuleError(f"line 1: {in_words(str(exc), game)}") from None
        labels = ["new game"]
        texts: list[str | None] = [None]
        told = [_new_game_text(engine, options)]
        steps: list[tuple[str, dict]] = []
        for n, ev in enumerate(events[1:], start=2):
            if not isinstance(ev, Mapping) or ev.get("kind") not in ("action", "undo"):
                raise RuleError(f"line {n}: each later event is an action or an undo")
            if ev["kind"] == "undo":
                if len(states) <= 1:
                    raise RuleError(f"line {n}: an undo with nothing to undo")
                states.pop()
                steps.append(("undo", {"undoes": labels.pop()}))
                told.append(_undo_text(texts.pop()))
                continue
            action = ev.get("body", {}).get("action") if isinstance(ev.get("body"), Mapping) else None
            if not isinstance(action, Mapping):
                raise RuleError(f"line {n}: an action event needs body.action")
            try:
                states.append(engine.act(states[-1], action))
            except RuleError as exc:
                raise RuleError(f"line {n}: {in_words(str(exc), game)}") from None
            labels.append(_label(action))
            texts.append(describe(game, states[-2], action, states[-1]))
            told.append(texts[-1])
            steps.append(("action", {"action": dict(action)}))
        return self._start_from({"game": game, "options": options}, steps, engine, states, labels, texts, told,
                                source)

    def _start_from(self, new_game: dict, steps: list[tuple[str, dict]], engine: Engine, states: list, labels: list,
                    texts: list, told: list, source: str, check: Callable[[], None] | None = None) -> Event:
        """Write a new game and its steps in one transaction under the table lock and make it the current game
        (`check`, if given, runs under the lock first and may refuse by raising). `texts` says each state's action
        in words (None for the new game), `told` each written event's line of the log."""
        with self._gate:
            with self._lock:
                if check is not None:
                    check()
                written = self.store.append_game(new_game, steps, source)
                self.seq = written[-1].seq
                self._recent.extend(written)
                self._snapshot = None
                if source in HUMAN_SOURCES:
                    self.last_human_action = self.clock.now()
                self.game_id = written[0].game_id
                self.game = new_game["game"]
                self.options = dict(new_game.get("options", {}))
                self.engine = engine
                self._states = states
                self._labels = labels
                self._texts = texts
                self._log = [_entry(ev, text) for ev, text in zip(written, told)]
                self._scores = self._score_history()
                self.problems = []
                self._changed.notify_all()
            for ev in written:
                self._committed(ev)
        self._notify()
        return written[0]

    def resume(self, game_id: int, source: str = "page") -> Event:
        """Pick up an unfinished game from the history: it is written again as a new game (its new_game naming
        the game it resumes, `resumes`) followed by the actions that stand in it, and becomes the current game.
        The game that was current stays as it was, in the history, and can be resumed in turn.

        LookupError when there is no such game; RuleError when it is the current game, is over, or was resumed
        already (resume the game that took it up instead). The fold is done outside the table lock; under it
        only the check that nobody resumed it meanwhile and the one transaction."""
        if isinstance(game_id, bool) or not isinstance(game_id, int):
            raise RuleError("a play is named by its number")
        events = self.store.game_events(game_id)
        if not events or events[0].kind != "new_game":
            raise LookupError(f"no game {game_id} in the store")
        if game_id == self.game_id:
            raise RuleError(f"play {game_id} is the current game already")
        first = events[0]
        game = first.body.get("game")
        if game not in self.engines:
            raise RuleError(f"play {game_id} is of a game this table does not know ({game!r})")
        engine = self.engines[game]
        options = dict(first.body.get("options", {}))
        folded = plays.fold(engine, options, events[1:])
        if plays.summarize(game, engine, options, folded)["over"]:
            raise RuleError(f"play {game_id} is over: only an unfinished game can be resumed")
        steps = [("action", {"action": a}) for a in folded.actions]
        looked = self.store.last_seq()
        other = self.store.resumed_by(game_id)           # the whole log, outside the table lock

        def not_resumed_yet() -> None:
            # under the lock only what came since the look above: quick however big the store
            found = other if other is not None else self.store.resumed_by(game_id, after=looked)
            if found is not None:
                raise RuleError(f"play {game_id} was resumed already, as play {found}: resume that one instead")
            if game_id == self.game_id:
                raise RuleError(f"play {game_id} is the current game already")

        states = folded.states
        texts: list[str | None] = [None] + [describe(game, states[i], a, states[i + 1])
                                            for i, a in enumerate(folded.actions)]
        told = [_new_game_text(engine, options)] + texts[1:]
        return self._start_from({"game": game, "options": options, "resumes": game_id}, steps, engine,
                                states, folded.labels, texts, told, source, check=not_resumed_yet)

    def use_engines(self, engines: Mapping[str, Engine]) -> None:
        """Carry on with new engines (a completed map); the game's states are plain data and stay."""
        with self._gate:
            with self._lock:
                self.engines = dict(engines)
                self.engine = self.engines[self.game]
                self._snapshot = None
        self._notify()

    # --- reading
    @property
    def state(self) -> Any:
        with self._lock:
            return self._states[-1]

    def snapshot(self) -> dict:
        """What /api/state and the page show; rebuilt once per change."""
        with self._lock:
            if self._snapshot is None or self._snapshot["seq"] != self.seq:
                self._snapshot = {
                    "seq": self.seq,
                    "game_id": self.game_id,
                    "game": self.game,
                    "title": self.engine.title,
                    "options": self.options,
                    "view": self.engine.view(self._states[-1]),
                    "scores": self.engine.scores(self._states[-1]),
                    "score_history": list(self._scores),
                    "can_undo": len(self._states) > 1,
                    "last_action": self._labels[-1] if len(self._labels) > 1 else None,
                    # who did what, in words: what Undo takes back, and the game's log (newest last)
                    "undo_text": self._texts[-1] if len(self._texts) > 1 else None,
                    "log": self._log[-LOG_SHOWN:],
                    "problems": list(self.problems),
                }
            return self._snapshot

    def cash_hidden(self) -> bool:
        """Whether some player keeps their cash secret now (Imperial's Separate Funds; the view lists them).

        The view already leaves their figures out; the event log cannot (a correction's body holds the
        new amount), so whoever shows events to the table asks this first (web /api/events, /api/record,
        /api/stream, the flight recorder, the MQTT event topic)."""
        return hides_cash(self.snapshot().get("view"))

    def events_after(self, seq: int) -> list[Event] | None:
        """Events after seq from memory, or None when seq is too old to resume (send a full state instead)."""
        with self._lock:
            if seq >= self.seq:
                return []
            if self._recent and self._recent[0].seq <= seq + 1:
                return [e for e in self._recent if e.seq > seq]
            return None

    def wait_for_change(self, seq: int, timeout: float) -> bool:
        """Block until an event newer than seq exists (True) or timeout passes (False)."""
        with self._lock:
            return self._changed.wait_for(lambda: self.seq > seq, timeout=timeout)

    def on_change(self, callback: Callable[[], None]) -> None:
        """callback() after every change, outside the table lock (LEDs, backups, the simulated table)."""
        self._listeners.append(callback)

    def on_commit(self, callback: Callable[[Event], None]) -> None:
        """callback(event) right after each change, still under the table lock and before any later sample
        or change: for what must see the game's changes in their true order (the arm link, the flight recorder).
        It must be quick."""
        self._commit_listeners.append(callback)

    def _committed(self, ev: Event) -> None:
        for cb in list(self._commit_listeners):
            try:
                cb(ev)
            except Exception:  # as for on_change: a listener must not break the game
                log.exception("commit listener %r failed", cb)

    def _notify(self) -> None:
        for cb in list(self._listeners):
            try:
                cb()
            except Exception:  # a listener (LEDs, the simulated table) must not break the game
                log.exception("change listener %r failed", cb)


class _StoredGameRefused(RuleError):
    """The stored game's own new_game is refused by the engine as it is now."""


@contextmanager
def _in_words(game: str) -> Iterator[None]:
    """A refusal of the rules, re-raised in the players' words (the engines name the keys of actions and options)."""
    try:
        yield
    except RuleError as exc:
        raise RuleError(in_words(str(exc), game)) from None


def _finite(value: Any, where: str) -> None:
    # whatever the source (page, button, config, a record), a NaN stored would leave every page unable to read
    # the game's events; refused here by name, below the web's own check
    problem = strict_json.non_finite(value, where)
    if problem is not None:
        raise RuleError(str(problem))


def _entry(ev: Event, text: str | None) -> dict:
    """One line of the page's log: the event, who did what in words, and where the change came from."""
    return {"seq": ev.seq, "kind": ev.kind, "text": text or "", "source": ev.source}


def _undo_text(undone: str | None) -> str:
    return f"Undo: {undone}" if undone else "Undo"


def _new_game_text(engine: Engine, options: Mapping[str, Any]) -> str:
    players = options.get("players") if isinstance(options, Mapping) else None
    names = options.get("names") if isinstance(options, Mapping) else None
    if isinstance(names, list) and all(isinstance(n, str) for n in names):
        who = names
    elif isinstance(players, list):
        who = [p if isinstance(p, str) else p.get("name") for p in players if isinstance(p, (str, Mapping))]
    else:
        who = []
    who = [w for w in who if isinstance(w, str) and w]
    return f"New game of {engine.title}" + (f": {', '.join(who)}" if who else "")


def _label(action: Mapping[str, Any]) -> str:
    return plays.label(action)
