"""Every game in the store as a play: summaries folded from the events, kept in a cache, and the views over them.

`PlayIndex` folds each game's events with the same fold the running table uses (companion/games/plays.py) and
keeps the summaries in memory and in a cache file (cache.py), each checked against the game's events (its last
seq and count) before it is used. It has a lock of its own and never takes the table's: folding the 5,000
plays of a big store happens in `warm()` (a thread at start), while the page is told the history is being
built; afterwards each look brings in only the games with events newer than the last look.

A play resumed from the history (companion/table/host.py, `resume`) is written as a new game whose new_game
names the game it resumes; the two are one play here (its parts), shown under the newest part's id, from the
first part's start, with the parts' played times added up. Players are resolved to people (people.py).
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Mapping

from companion.games import plays as game_plays
from companion.games.base import Engine, RuleError
from companion.history import ratings, stats, times
from companion.history.people import PeopleError, Roster, check_body
from companion.history.cache import SummaryCache
from companion.store import EventStore

log = logging.getLogger("companion.history")
MAX_LIMIT = 200             # plays per page, at most
MAX_OFFSET = 1_000_000
MAX_EXPORT = 10_000         # plays per export (CSV, JSON, BG Stats), at most; `offset` gives the next ones
SERIES_POINTS = 240         # points of a play's score and torque over time
PACKAGE_VERSION = "0.1.0"


def model_fingerprint(model) -> str:
    """What of the balance model a Balance Duels summary depends on, for the cache's fingerprint."""
    return hashlib.sha256(json.dumps(model.to_dict(), sort_keys=True).encode()).hexdigest()[:16]


class NotReady(Exception):
    """The history is still being built; `done` of `total` games summarised so far."""

    def __init__(self, done: int, total: int):
        super().__init__(f"the history is being built: {done} of {total} games read so far; try again shortly")
        self.done, self.total = done, total


class UnknownPlay(LookupError):
    pass


@dataclass
class Play:
    """One play as the history shows it: its parts' summaries joined."""

    id: int                       # the newest part's game id (the one a resume continues)
    parts: list[int]              # game ids, oldest first
    summary: dict                 # the newest part's summary (its fold holds every action of the play)
    first: dict | None            # the first part's first event's time facts
    last: dict | None
    played_s: float | None
    breaks: int
    last_seq: int
    people: list[str | None] = field(default_factory=list)    # per seat: the person id, None for a guest


@dataclass
class Derived:
    plays: list[Play]                       # newest first (by their newest event)
    by_id: dict[int, Play]
    part_of: dict[int, int]                 # any part's game id -> its play's id
    roster: Roster
    anchors: dict[str, list]
    version: int


class PlayIndex:
    def __init__(self, store: EventStore, engines: Callable[[], Mapping[str, Engine]], *,
                 cache_path: str | Path | None = None, model_fingerprint: str = "",
                 torque: Callable[[Any], float] | None = None, tip_torque: float | None = None,
                 current_game: Callable[[], int | None] = lambda: None, cache_read_only: bool = False):
        self.store = store
        self._engines = engines
        self._torque = torque
        self._tip_torque = tip_torque
        self._warming: threading.Thread | None = None
        self._current_game = current_game
        fingerprint = f"summary {game_plays.SUMMARY_VERSION}; package {PACKAGE_VERSION}; model {model_fingerprint}"
        self.cache = SummaryCache(Path(cache_path) if cache_path else None, fingerprint, read_only=cache_read_only)
        self._lock = threading.RLock()
        self._summaries: dict[int, dict] = {}
        self._spans: dict[int, tuple[int, int]] = {}
        self._seen = -1                  # the store's last seq at the last look
        self._ready = False
        self._progress = (0, 0)
        self._version = 0                # raised with every change to the summaries or the people events
        self._derived: Derived | None = None
        self._memo: dict[Any, Any] = {}  # views computed for one version (stats, ratings)
        self._books: dict[str, ratings.Book] = {}   # each game's ratings, extended while new plays only follow
        self.problems: list[str] = []

    # ------------------------------------------------------------------ building
    def summarize(self, game_id: int, events: list) -> dict:
        """One game's summary from its events (the fold, the game's own summary, the clock facts)."""
        first = events[0]
        game = first.body.get("game")
        options = first.body.get("options", {}) if isinstance(first.body.get("options"), Mapping) else {}
        base = {"id": game_id, "game": game, "last_seq": events[-1].seq, "events": len(events),
                "resumes": first.body.get("resumes") if isinstance(first.body.get("resumes"), int) else None,
                "clock": times.clock_facts(events)}
        engine = self._engines().get(game)
        if engine is None:
            return {**base, "title": str(game), "problem": f"the game {game!r} is not one this companion knows",
                    "players": [], "winners": [], "over": False, "ended": None, "turns": 0, "variant": {},
                    "actions": 0, "problems": 0, "teams": False, "extra": {}}
        try:
            folded = game_plays.fold(engine, options, events[1:])
            body = game_plays.summarize(game, engine, options, folded)
        except (RuleError, KeyError, TypeError, ValueError) as exc:
            return {**base, "title": engine.title, "problem": f"the game could not be read: {exc}", "players": [],
                    "winners": [], "over": False, "ended": None, "turns": 0, "variant": {}, "actions": 0,
                    "problems": 1, "teams": False, "extra": {}}
        return {**base, "title": engine.title, "defaults": list(engine.default_names), **body}

    def warm(self) -> None:
        """Read every game: summaries from the cache where they still hold, the rest folded from the events.
        Takes the index's lock only to swap the result in, so looks at the history meanwhile are told to wait."""
        seen = self.store.last_seq()
        spans = self.store.game_spans()
        cached = self.cache.load()
        self._progress = (0, len(spans))
        summaries: dict[int, dict] = {}
        fresh: dict[int, tuple[int, int, dict]] = {}
        for n, (game_id, last, count) in enumerate(spans, start=1):
            hit = cached.get(game_id)
            if hit is not None and hit[0] == last and hit[1] == count:
                summaries[game_id] = hit[2]
            else:
                summary = self.summarize(game_id, self.store.game_events_stamped(game_id))
                summaries[game_id] = summary
                fresh[game_id] = (last, count, summary)
                if len(fresh) >= 200:
                    self.cache.save(fresh)
                    fresh = {}
            self._progress = (n, len(spans))
        self.cache.save(fresh, drop=[g for g in cached if g not in summaries])
        with self._lock:
            self._summaries = summaries
            self._spans = {g: (last, count) for g, last, count in spans}
            self._seen = seen
            self._version += 1
            self._derived = None
            self._memo.clear()
            if not self._ready:
                # what the history view asks for first, made before the history says it is ready, so that the
                # first look is as quick as the next (a rebuild over a ready history keeps serving the old one)
                self._prime(self._derived_now())
            self._ready = True
        self.refresh()

    def _derived_now(self) -> Derived:
        with self._lock:
            if self._derived is None:
                self._derived = self._derive()
            return self._derived

    def _prime(self, d: Derived) -> None:
        self._memo_put(("stats", None, None), d, stats.compute(d))
        for game in sorted({s.get("game") for s in self._summaries.values() if s.get("game")}):
            self._memo_put(("ratings", game), d, _ratings_for(self, game)(d))

    def start_warming(self) -> None:
        """warm() in a thread of its own, once (the daemon's start, or the first look at the history)."""
        busy = lambda: self._ready or (self._warming is not None and self._warming.is_alive())  # noqa: E731
        if busy():               # asked while it builds: no wait for the lock the build holds to finish
            return
        with self._lock:
            if busy():
                return
            self._warming = threading.Thread(target=self._warm_logged, name="history", daemon=True)
            self._warming.start()

    def _warm_logged(self) -> None:
        try:
            self.warm()
        except Exception:      # the table plays on; the page is told the history is unavailable
            log.exception("the history could not be built")
            self.problems.append("the history could not be built; the daemon's log says why")

    def refresh(self) -> None:
        """Bring the summaries up to date with the store: only the games with events after the last look."""
        if not self._ready:
            self.start_warming()
            raise NotReady(*self._progress)
        rewarm = False
        with self._lock:
            last = self.store.last_seq()
            if last == self._seen:
                return
            if last < self._seen:            # a restored backup: every game is checked again
                rewarm = True
            else:
                self._update(last)
        if rewarm:
            self.warm()

    def _update(self, last: int) -> None:
        changed, people = self.store.changed_since(self._seen)
        fresh = {}
        for game_id, glast, count in changed:
            if self._spans.get(game_id) == (glast, count):
                continue
            summary = self.summarize(game_id, self.store.game_events_stamped(game_id))
            self._summaries[game_id] = summary
            self._spans[game_id] = (glast, count)
            fresh[game_id] = (glast, count, summary)
        self.cache.save(fresh)
        self._seen = last
        if fresh or people:
            self._version += 1
            self._derived = None
            self._memo.clear()

    @property
    def ready(self) -> bool:
        return self._ready

    @property
    def progress(self) -> tuple[int, int]:
        return self._progress

    # ------------------------------------------------------------------ the plays, joined and resolved
    def derived(self) -> Derived:
        self.refresh()
        return self._derived_now()

    def _derive(self) -> Derived:
        summaries = self._summaries
        resumed_as: dict[int, int] = {}
        for gid in sorted(summaries):
            r = summaries[gid].get("resumes")
            if r in summaries and r not in resumed_as:
                resumed_as[r] = gid
        anchors: dict[str, list] = {}
        for gid in sorted(summaries):
            for boot, anchor in (summaries[gid].get("clock", {}).get("anchors") or {}).items():
                anchors.setdefault(boot, anchor)
        plays: list[Play] = []
        part_of: dict[int, int] = {}
        for gid, s in summaries.items():
            if gid in resumed_as:
                continue                      # a part of a later play
            parts = [gid]
            seen = {gid}
            while True:
                r = summaries[parts[0]].get("resumes")
                if r not in summaries or resumed_as.get(r) != parts[0] or r in seen:
                    break
                parts.insert(0, r)
                seen.add(r)
            clocks = [summaries[p].get("clock") or {} for p in parts]
            played = [c.get("played_s") for c in clocks]
            play = Play(id=gid, parts=parts, summary=s, first=clocks[0].get("first"), last=clocks[-1].get("last"),
                        played_s=round(sum(played), 1) if all(p is not None for p in played) else None,
                        breaks=sum(c.get("breaks", 0) for c in clocks) + len(parts) - 1, last_seq=s["last_seq"])
            plays.append(play)
            for p in parts:
                part_of[p] = gid
        plays.sort(key=lambda p: -p.last_seq)
        guest_names = {n for s in summaries.values() for n in s.get("defaults", [])}
        seatings = [(p.parts[0], p.last_seq, [(pl["name"], p.summary.get("defaults", []))
                                              for pl in p.summary.get("players", [])]) for p in plays]
        roster = Roster.build(seatings, self.store.people_events(), guest_names)
        for p in plays:
            defaults = p.summary.get("defaults", [])
            p.people = []
            for pl in p.summary.get("players", []):
                person = roster.person(pl["name"], defaults)
                p.people.append(person.id if person else None)
        return Derived(plays, {p.id: p for p in plays}, part_of, roster, anchors, self._version)

    def memo(self, key: Any, make: Callable[[Derived], Any]) -> Any:
        """A view of the history computed once per version of it (stats, ratings)."""
        d = self.derived()
        with self._lock:
            hit = self._memo.get(key)
            if hit is not None and hit[0] == d.version:
                return hit[1]
        value = make(d)
        self._memo_put(key, d, value)
        return value

    def _memo_put(self, key: Any, d: Derived, value: Any) -> None:
        with self._lock:
            self._memo[key] = (d.version, value)

    # ------------------------------------------------------------------ what the API gives
    def describe(self, play: Play, d: Derived) -> dict:
        s = play.summary
        players = []
        for pl, pid in zip(s.get("players", []), play.people):
            person = d.roster.people.get(pid) if pid else None
            players.append({**pl, "typed": pl["name"], "name": person.name if person else pl["name"],
                            "person": pid, "guest": pid is None})
        return {
            "id": play.id, "parts": play.parts, "game": s.get("game"), "title": s.get("title"),
            "variant": s.get("variant", {}), "players": players,
            "winners": [p["name"] for p in players if p["winner"]],
            "over": bool(s.get("over")), "unfinished": not s.get("over"), "ended": s.get("ended"),
            "turns": s.get("turns", 0), "start": times.when(play.first, d.anchors),
            "end": times.when(play.last, d.anchors), "played_s": play.played_s, "breaks": play.breaks,
            "current": play.id == self._current_game(), "extra": s.get("extra", {}),
            **({"problem": s["problem"]} if s.get("problem") else {}),
        }

    def _select(self, d: Derived, *, game: str | None, player: str | None, since: datetime | None,
                until: datetime | None, status: str) -> list[Play]:
        """The plays that pass the filters, newest first; `player` is a name (matched as people are) or a person
        id."""
        pid = None
        if player is not None:
            person = d.roster.person(player) or d.roster.people.get(player)
            if person is None:
                return []
            pid = person.id
        out = []
        for p in d.plays:
            s = p.summary
            if game is not None and s.get("game") != game:
                continue
            if pid is not None and pid not in p.people:
                continue
            if status == "finished" and not s.get("over") or status == "unfinished" and s.get("over"):
                continue
            if since is not None or until is not None:
                t = times.parse_at(times.when(p.first, d.anchors)["at"])
                if t is None or (since is not None and t < since) or (until is not None and t >= until):
                    continue
            out.append(p)
        return out

    def plays(self, *, game: str | None = None, player: str | None = None, since: datetime | None = None,
              until: datetime | None = None, status: str = "all", limit: int = 50, offset: int = 0) -> dict:
        """A page of plays, newest first, filtered; `player` is a name (matched as people are) or a person id."""
        d = self.derived()
        out = self._select(d, game=game, player=player, since=since, until=until, status=status)
        page = out[offset:offset + limit]
        return {"total": len(out), "offset": offset, "limit": limit, "plays": [self.describe(p, d) for p in page]}

    def export(self, *, game: str | None = None, player: str | None = None, since: datetime | None = None,
               until: datetime | None = None, status: str = "all", limit: int = MAX_EXPORT, offset: int = 0) -> dict:
        """What an export needs (exports.py): a page of plays as `plays` gives them (at most MAX_EXPORT), the
        store's name for the uuids, and each person's first play of each game in the whole history (by its
        first part). Nothing here takes the table's lock; the index's own only while it brings itself up to
        date."""
        d = self.derived()
        out = self._select(d, game=game, player=player, since=since, until=until, status=status)
        limit = max(1, min(limit, MAX_EXPORT))
        page = out[offset:offset + limit]
        firsts: dict[tuple[str, str], tuple[int, int]] = {}
        for p in d.plays:
            g = p.summary.get("game")
            for person in p.people:
                if person is not None:
                    k = (person, g)
                    if k not in firsts or p.parts[0] < firsts[k][0]:
                        firsts[k] = (p.parts[0], p.id)
        return {"total": len(out), "offset": offset, "limit": limit, "plays": [self.describe(p, d) for p in page],
                "store": store_name(d), "firsts": {k: v[1] for k, v in firsts.items()}}

    def play(self, play_id: int) -> dict:
        """One play in full: its standing, its score (and, for Balance Duels, the arm's torque) over time."""
        d = self.derived()
        head = d.part_of.get(play_id)
        if head is None:
            raise UnknownPlay(f"no play {play_id} in the history")
        play = d.by_id[head]
        out = self.describe(play, d)
        events = self.store.game_events(play.id)
        first = events[0]
        engine = self._engines().get(first.body.get("game"))
        if engine is not None and not play.summary.get("problem"):
            folded = game_plays.fold(engine, first.body.get("options", {}), events[1:])
            out["score_series"] = game_plays.score_series(engine, folded, SERIES_POINTS)
            if first.body.get("game") == "balance_duels" and self._torque is not None:
                out["torque_series"] = game_plays.torque_series(self._torque, folded, SERIES_POINTS)
                out["tip_torque"] = round(self._tip_torque, 1) if self._tip_torque is not None else None
        return out

    def summary(self, month: tuple[int, int] | None) -> dict:
        """What a table says of its nights elsewhere (MQTT, Home Assistant): the plays, the plays started in
        `month` ((year, month) in this machine's zone; None when today's date is not known), and the newest
        finished play with its winners. A play whose start the Pi could not vouch for (unsynced, unknown) is
        counted in no month."""
        return self.memo(("summary", month), lambda d: _summary(d, month))

    def stats(self, *, game: str | None = None, player: str | None = None, limit: int = 50) -> dict:
        d = self.derived()
        pid = None
        if player is not None:
            person = d.roster.person(player) or d.roster.people.get(player)
            if person is None:
                return {"players": [], "games": [], "total_players": 0}
            pid = person.id
        got = self.memo(("stats", game, pid), lambda d: stats.compute(d, game=game, person=pid))
        if pid is not None:
            players = [r for r in got["players"] if r["person"] == pid]
        else:
            players = got["players"]
        return {"players": players[:limit], "games": got["games"], "total_players": len(players)}

    def ratings(self, game: str, limit: int = 50) -> dict:
        rows = self.memo(("ratings", game), _ratings_for(self, game))
        return {"game": game, "ratings": rows[:limit], "total": len(rows),
                "model": "openskill Plackett-Luce, mu 25, sigma 25/3; shown as mu ± 2 sigma, ordered by mu - 3 sigma"}

    def people(self, q: str = "", limit: int = 20) -> dict:
        d = self.derived()
        found = d.roster.suggestions(q, limit)
        return {"people": [{"person": p.id, "name": p.name, "plays": p.plays,
                            "spellings": sorted(p.spellings), "last_seq": p.last_seq} for p in found],
                "problems": d.roster.problems[:20]}

    # ------------------------------------------------------------------ people changes (events)
    def change_people(self, body: Mapping[str, Any], source: str = "page") -> dict:
        """A rename or a merge, checked against the people as they stand, then written as a `people` event.
        PeopleError (with its status) when it cannot be done; nothing is written then."""
        clean = check_body(body)
        with self._lock:                      # one change at a time: each checked against the one before
            d = self.derived()
            if clean["op"] == "rename":
                d.roster.rename(clean["name"], clean["to"], dry=True)
            else:
                d.roster.merge(clean["name"], clean["into"], dry=True)
            ev = self.store.append_people(clean, source)
            d = self.derived()
        person = d.roster.person(clean.get("to") or clean.get("into"))
        return {"seq": ev.seq, "person": person.id if person else None, "name": person.name if person else None}

    def undo_people(self, source: str = "page") -> dict:
        """Take back the latest rename or merge still standing (another `people` event)."""
        with self._lock:
            d = self.derived()
            if not d.roster.standing:
                raise PeopleError("no rename or merge to undo")
            last = d.roster.standing[-1]
            done = next((e.body for e in self.store.people_events() if e.seq == last), {})
            ev = self.store.append_people({"op": "undo", "undoes": last}, source)
        return {"seq": ev.seq, "undid": {"seq": last, **done}}

    def check_resume(self, game_id: int) -> None:
        """UnknownPlay when no game `game_id` is in the history (the host checks the rest under its lock)."""
        d = self.derived()
        if game_id not in d.part_of:
            raise UnknownPlay(f"no play {game_id} in the history")

    def fingerprint_of(self, game_id: int) -> str:
        s = self._summaries.get(game_id)
        return hashlib.sha256(json.dumps(s, sort_keys=True).encode()).hexdigest() if s else ""

    def close(self) -> None:
        self.cache.close()


def _summary(d: Derived, month: tuple[int, int] | None) -> dict:
    in_month = 0
    if month is not None:
        for p in d.plays:
            start = times.when(p.first, d.anchors)
            t = times.parse_at(start["at"]) if start["quality"] in ("synced", "worked_back") else None
            if t is not None and (t.astimezone().year, t.astimezone().month) == month:
                in_month += 1
    last = next((p for p in d.plays if p.summary.get("over") and not p.summary.get("problem")), None)
    out = {"plays": len(d.plays), "finished": sum(1 for p in d.plays if p.summary.get("over")),
           "month": f"{month[0]:04d}-{month[1]:02d}" if month else None,
           "plays_this_month": in_month if month else None, "last": None}
    if last is not None:
        names = []
        for pl, pid in zip(last.summary.get("players", []), last.people):
            person = d.roster.people.get(pid) if pid else None
            if pl.get("winner"):
                names.append(person.name if person else pl["name"])
        end = times.when(last.last, d.anchors)
        out["last"] = {"play_id": last.id, "game": last.summary.get("game"), "title": last.summary.get("title"),
                       "winners": names, "ended": (last.summary.get("ended") or {}).get("code"),
                       "at": end["at"], "quality": end["quality"]}
    return out


def store_name(d: Derived) -> str:
    """A name for the store that stays the same for its whole life: from its first game's id and first event's
    time and clock stamp (the store never changes an event; a restored backup keeps its first game)."""
    if not d.part_of:
        return "empty"
    first = min(d.part_of)
    play = d.by_id[d.part_of[first]]
    point = play.first or {}
    text = json.dumps([first, point.get("at"), point.get("boot"), point.get("mono")])
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def _ratings_for(index: "PlayIndex", game: str) -> Callable[["Derived"], list[dict]]:
    def make(d: "Derived") -> list[dict]:
        matches = []
        for p in reversed(d.plays):            # oldest first, by the event that ended each
            s = p.summary
            if s.get("game") != game or not s.get("over") or s.get("problem"):
                continue
            m = ratings.match(s.get("players", []), p.people, bool(s.get("teams")))
            if m is not None:
                matches.append(m)
        with index._lock:
            book = index._books.get(game)
        book = ratings.rate(matches, book)
        with index._lock:
            index._books[game] = book
        return ratings.table(book, {pid: person.name for pid, person in d.roster.people.items()})
    return make
