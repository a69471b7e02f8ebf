"""Skill ratings per game: openskill's Plackett-Luce model over the finished plays, oldest first.

Each finished play of a game is one match: every player a team of one, or the teams the game was played in
(Balance Duels' 2×2), ranked by the play's standing (equal ranks are a tie). A rating is a mean μ and an
uncertainty σ (both start at openskill's 25 and 25/3); the page shows μ ± 2σ and orders by μ − 3σ (openskill's
`ordinal`, a rating the player is very likely above). Only finished plays count: an unfinished or abandoned
game says nothing about who plays better. Guests play with a fresh rating each time and keep none, so a guest
seat neither gains nor loses anyone else more than a newcomer would.

Everything is recomputed from the plays, so from the events: a merge of two names recomputes the whole game's
ratings, and a play that was finished then undone back to unfinished leaves them as if it never finished.
The ratings of one game depend only on that game's plays in the order they finished; plays with no player in
common can come in either order (a test checks both).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Sequence

from openskill.models import PlackettLuce

MODEL = PlackettLuce()

# one play as the ratings see it: its teams (each a tuple of person ids, None for a guest) and their ranks
Match = tuple[tuple[tuple[str | None, ...], ...], tuple[int, ...]]


def match(players: Sequence[dict], people: Sequence[str | None], teams: bool) -> Match | None:
    """A finished play's match, or None when it cannot rate anyone (fewer than two sides, no person seated)."""
    sides: dict[object, list] = {}
    for i, (pl, pid) in enumerate(zip(players, people)):
        if pl.get("rank") is None:
            return None
        side = ("team", pl.get("team")) if teams and pl.get("team") is not None else ("seat", i)
        sides.setdefault(side, []).append((pid, pl["rank"]))
    if len(sides) < 2 or all(pid is None for side in sides.values() for pid, _ in side):
        return None
    groups = list(sides.values())
    return tuple(tuple(pid for pid, _ in g) for g in groups), tuple(min(r for _, r in g) for g in groups)


@dataclass
class Book:
    """One game's ratings after a list of matches; extended in place when new matches only follow the old."""

    matches: list[Match] = field(default_factory=list)
    ratings: dict[str, object] = field(default_factory=dict)
    plays: dict[str, int] = field(default_factory=dict)

    def apply(self, m: Match) -> None:
        teams, ranks = m
        rated = [[self.ratings.get(pid) or MODEL.rating() if pid else MODEL.rating() for pid in team]
                 for team in teams]
        after = MODEL.rate(rated, ranks=list(ranks))
        for team, new in zip(teams, after):
            for pid, r in zip(team, new):
                if pid is not None:
                    self.ratings[pid] = r
                    self.plays[pid] = self.plays.get(pid, 0) + 1
        self.matches.append(m)


def rate(matches: Iterable[Match], book: Book | None = None) -> Book:
    """The ratings after `matches` (oldest first); `book` is reused when its matches begin the new list."""
    matches = list(matches)
    if book is None or book.matches != matches[:len(book.matches)]:
        book = Book()
    for m in matches[len(book.matches):]:
        book.apply(m)
    return book


def table(book: Book, names: dict[str, str]) -> list[dict]:
    """The ratings for the page: best first (by μ − 3σ)."""
    rows = []
    for pid, r in book.ratings.items():
        rows.append({"person": pid, "name": names.get(pid, pid), "mu": round(r.mu, 2), "sigma": round(r.sigma, 2),
                     "ordinal": round(r.ordinal(), 2), "plays": book.plays.get(pid, 0)})
    rows.sort(key=lambda x: (-x["ordinal"], x["name"]))
    return rows
