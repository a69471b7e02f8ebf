"""The history's figures: per player (a person, not a seat) and per game, from the plays as the index joins them.

Per player, overall and for each game: plays, finished plays, wins, win rate (wins over finished plays), points
per game (the mean final score over the finished plays whose score is known), best score, when last played
(with how well that time is known), and the current streak (the run of wins, or of plays without a win, in
the newest finished plays: "W3", "L1"). A play shared by a team counts as a win for both team-mates.

Per game: plays (finished and not), the mean played time of the finished plays whose length is known, the mean
winning score; Balance Duels: the share of finished plays ended by a tip and the holders the tipping pawns went
to, most often first; Imperial: the mean final power points of the leading nation and of all nations.

Guests are no person: they count in a game's figures, never in anyone's.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from companion.history import times


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 2) if values else None


def _streak(results: list[bool]) -> str | None:
    """From the newest result back: "W<n>" for a run of wins, "L<n>" for a run without one."""
    if not results:
        return None
    first = results[0]
    n = 0
    for r in results:
        if r != first:
            break
        n += 1
    return f"{'W' if first else 'L'}{n}"


class _Tally:
    def __init__(self):
        self.plays = self.finished = self.wins = 0
        self.scores: list[float] = []
        self.results: list[bool] = []          # newest first, finished plays only
        self.last: dict | None = None

    def add(self, won: bool, over: bool, score: Any, when: dict) -> None:
        if self.last is None:
            self.last = when                   # plays come newest first
        self.plays += 1
        if over:
            self.finished += 1
            self.wins += int(won)
            self.results.append(won)
            if isinstance(score, (int, float)) and not isinstance(score, bool):
                self.scores.append(float(score))

    def out(self) -> dict:
        return {"plays": self.plays, "finished": self.finished, "wins": self.wins,
                "win_rate": round(self.wins / self.finished, 3) if self.finished else None,
                "points_per_game": _mean(self.scores), "best_score": max(self.scores) if self.scores else None,
                "last_played": self.last, "streak": _streak(self.results)}


def compute(d, *, game: str | None = None, person: str | None = None) -> dict:
    """{"players": [...], "games": [...]} over the plays of `d` (index.Derived), optionally of one game or of
    the plays one person sat in."""
    players: dict[str, dict[str, _Tally]] = {}
    games: dict[str, dict] = {}
    for play in d.plays:                       # newest first
        s = play.summary
        g = s.get("game")
        if s.get("problem") or (game is not None and g != game) or (person is not None and person not in play.people):
            continue
        over = bool(s.get("over"))
        when = times.when(play.last, d.anchors)
        for pl, pid in zip(s.get("players", []), play.people):
            if pid is None:
                continue
            per = players.setdefault(pid, {})
            for key in ("*", g):
                per.setdefault(key, _Tally()).add(bool(pl.get("winner")), over, pl.get("score"), when)
        row = games.setdefault(g, {"game": g, "title": s.get("title"), "plays": 0, "finished": 0, "durations": [],
                                   "winning": [], "tips": 0, "holders": Counter(), "top_power": [], "power": []})
        row["plays"] += 1
        if over:
            row["finished"] += 1
            if play.played_s is not None:
                row["durations"].append(play.played_s)
            row["winning"] += [pl["score"] for pl in s.get("players", []) if pl.get("winner")
                               and isinstance(pl.get("score"), (int, float))]
        extra = s.get("extra") or {}
        for tip in extra.get("tips", []):
            if tip.get("holder"):
                row["holders"][tip["holder"]] += 1
        if over and (s.get("ended") or {}).get("code") == "tip":
            row["tips"] += 1
        if over and extra.get("power"):
            row["top_power"].append(max(extra["power"].values()))
            row["power"] += list(extra["power"].values())
    game_rows = []
    for g, row in sorted(games.items()):
        out = {"game": g, "title": row["title"], "plays": row["plays"], "finished": row["finished"],
               "unfinished": row["plays"] - row["finished"], "average_played_s": _mean(row["durations"]),
               "timed": len(row["durations"]), "average_winning_score": _mean(row["winning"])}
        if g == "balance_duels":
            out["tip_share"] = round(row["tips"] / row["finished"], 3) if row["finished"] else None
            out["tipping_holders"] = [{"holder": h, "tips": n} for h, n in
                                      sorted(row["holders"].items(), key=lambda x: (-x[1], x[0]))[:5]]
        if g == "imperial":
            out["average_top_power"] = _mean(row["top_power"])
            out["average_power"] = _mean(row["power"])
        game_rows.append(out)
    player_rows = []
    for pid, per in players.items():
        p = d.roster.people.get(pid)
        player_rows.append({"person": pid, "name": p.name if p else pid, **per["*"].out(),
                            "games": {g: t.out() for g, t in sorted(per.items()) if g != "*"}})
    player_rows.sort(key=lambda r: (-r["plays"], r["name"]))
    return {"players": player_rows, "games": game_rows}
