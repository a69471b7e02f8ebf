"""A game's events folded into its states, and each game's summary of a play: pure functions of plain data.

`fold` is the one fold of a game's events (the running table's host uses it too): actions applied in order,
an undo taking back the last action still standing, an action that no longer applies skipped and named. What
it leaves (the states and the actions that stand) is what every summary here is made from, so a play's
summary says what the game's own state says, never anything kept beside it.

`summarize(game, engine, options, folded)` gives, for every game: the players with their seats, colours,
final scores, ranks and whether they won; the winners; how the game ended (a code and the engine's words);
the turns played; the variant (the options less the names) and whether the game is over. Each game adds
what its stats need: Balance Duels every tip (who, and the holder the tipping pawn went to), Imperial the
nations' final power points. `score_series` and `torque_series` draw a play over time.

Hidden cash (Imperial) stays hidden: the scores are the engine's `scores` and `view`, which leave out a
hidden player's figures until the game is over.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

from companion.games.base import Engine, RuleError

SUMMARY_VERSION = 3          # raised whenever a summary's content changes: cached summaries are rebuilt


@dataclass
class Folded:
    """A game's events folded: `states[0]` is the new game, `states[i + 1]` follows `actions[i]`."""

    states: list[Any]
    actions: list[dict]
    labels: list[str]
    problems: list[str] = field(default_factory=list)
    seqs: list[int] = field(default_factory=list)     # the seq of the event behind each state (the new game's first)


def label(action: Mapping[str, Any]) -> str:
    kind = action.get("type", "action")
    detail = action.get("move", {}).get("kind") if isinstance(action.get("move"), Mapping) else None
    return f"{kind}:{detail}" if detail else str(kind)


def fold(engine: Engine, options: Mapping[str, Any], events: Iterable[Any]) -> Folded:
    """Fold a game's later events (objects with .kind, .body, .seq; the new game's own event left out)."""
    states = [engine.new(dict(options))]
    out = Folded(states, [], ["new game"], [], [0])
    for ev in events:
        if ev.kind == "action":
            try:
                action = ev.body["action"]
                states.append(engine.act(states[-1], action))
            except (RuleError, KeyError, TypeError) as exc:
                # an event that no longer applies (e.g. the rules engine changed): named, the rest kept
                out.problems.append(f"event {ev.seq} could not be replayed and was skipped: {exc}")
                continue
            out.actions.append(dict(action))
            out.labels.append(label(action))
            out.seqs.append(ev.seq)
        elif ev.kind == "undo" and len(states) > 1:
            states.pop()
            out.actions.pop()
            out.labels.pop()
            out.seqs.pop()
    return out


# --------------------------------------------------------------------------- standings

def ranks(order: Sequence[str], scores: Mapping[str, float | None], winners: Sequence[str],
          below: Sequence[str] = ()) -> dict[str, int]:
    """Competition ranks (1, 2, 2, 4): the winners first, then the rest by score (highest first, unknown
    scores last, equal scores sharing a rank), then `below` (the players knocked out, the last out first)."""
    result: dict[str, int] = {}
    for name in winners:
        result[name] = 1
    rest = [n for n in order if n not in result and n not in below]
    known = sorted((n for n in rest if isinstance(scores.get(n), (int, float))), key=lambda n: -scores[n])
    place = len(result) + 1
    previous = None
    for i, name in enumerate(known):
        if previous is None or scores[name] != previous:
            place = len(result) + 1
        result[name] = place
        previous = scores[name]
    unknown = [n for n in rest if n not in result]
    if unknown:
        place = len(result) + 1
        for name in unknown:
            result[name] = place
    for name in below:
        if name not in result:
            result[name] = len(result) + 1
    return result


def _players(entries: Sequence[Mapping[str, Any]], scores: Mapping[str, Any], winners: Sequence[str],
             rank: Mapping[str, int], over: bool) -> list[dict]:
    players = []
    for seat, p in enumerate(entries, start=1):
        name = p["name"]
        score = scores.get(name)
        players.append({
            "seat": p.get("seat", seat), "name": name, "colour": p.get("colour"), "team": p.get("team"),
            "score": score if isinstance(score, (int, float)) and not isinstance(score, bool) else None,
            "rank": rank.get(name) if over else None, "winner": name in winners,
            **({"role": p["role"]} if p.get("role") else {}),
        })
    return players


def _variant(options: Mapping[str, Any], drop: Iterable[str] = ("players", "names", "deal", "colours", "capitals")) -> dict:
    return {k: v for k, v in sorted(options.items()) if k not in set(drop)}


# --------------------------------------------------------------------------- per game

def _balance_duels(engine: Engine, options: Mapping[str, Any], folded: Folded) -> dict:
    state = folded.states[-1]
    view = engine.view(state)
    names = list(state.options.names)
    scores = engine.scores(state)
    winners = [names[s - 1] for s in state.winners]
    # knocked out, the last out first: the side that tipped the arm at the end, then those out before, latest first
    below = []
    if state.result == "tip" and state.tipped_by is not None and state.tipped_by not in state.out:
        below = [n for s, n in enumerate(names, start=1) if state.team_of(s) == state.team_of(state.tipped_by)]
    below += [names[s - 1] for s in reversed(state.out) if names[s - 1] not in below]
    rank = ranks(names, scores, winners, below=below)
    tips = []
    last_holder = None
    for i, action in enumerate(folded.actions):
        before, after = folded.states[i], folded.states[i + 1]
        move = action.get("move") if isinstance(action.get("move"), Mapping) else None
        if action.get("type") == "move" and move is not None and move.get("to_holder"):
            last_holder = move["to_holder"]
        tipped = (len(after.out) > len(before.out)) or (after.result == "tip" and before.result != "tip")
        if tipped and after.tipped_by is not None:
            tips.append({"seat": after.tipped_by, "name": names[after.tipped_by - 1], "holder": last_holder,
                         "turn": i + 1})
    moves = sum(1 for a in folded.actions if a.get("type") == "move"
                and isinstance(a.get("move"), Mapping) and a["move"].get("kind") != "rearrange")
    entries = [{"seat": p["seat"], "name": p["name"], "colour": p["colour"], "team": p.get("team")}
               for p in view["players"]]
    over = state.over
    ended = None
    if over:
        ended = {"code": state.result, "text": view["message"]}
    return {
        "players": _players(entries, scores, winners, rank, over),
        "winners": winners if over else [],
        "ended": ended,
        "turns": moves,
        "over": over,
        "teams": bool(state.options.teams),
        "extra": {"tips": tips, "rounds": state.round},
    }


def _imperial(engine: Engine, options: Mapping[str, Any], folded: Folded) -> dict:
    state = folded.states[-1]
    view = engine.view(state)
    over = bool(view["game_over"])
    scores = engine.scores(state)
    winners = list(view["winners"]) if over else []
    order = [p["name"] for p in view["players"]]
    ranking = list(view.get("ranking") or [])
    rank = ranks(ranking + [n for n in order if n not in ranking], scores, winners)
    entries = [{"name": p["name"], "role": ", ".join(p.get("governs") or []) or None} for p in view["players"]]
    power = {n["id"]: n["power_points"] for n in view["nations"]}
    ended = None
    if over:
        top = max(power, key=lambda k: power[k]) if power else None
        ended = {"code": "power", "text": view["message"] + (f" ({top} reached {power[top]} power points: final "
                                                           f"scoring)" if top else "")}
    return {
        "players": _players(entries, scores, winners, rank, over),
        "winners": winners, "ended": ended, "turns": int(view.get("turns_taken") or 0), "over": over,
        "teams": False, "extra": {"power": power},
    }


def _tracker(reason_key: str, codes: Sequence[tuple[str, str]]) -> Callable[[Engine, Mapping[str, Any], Folded], dict]:
    """Risk, Balance of Power and Global Powers: a `winner`, an end reason in the engine's words, a turn number."""

    def summarize(engine: Engine, options: Mapping[str, Any], folded: Folded) -> dict:
        state = folded.states[-1]
        view = engine.view(state)
        over = bool(view.get("over"))
        scores = engine.scores(state)
        winner = view.get("winner")
        winners = [winner] if over and winner else []
        entries = [{"name": p["name"], "colour": p.get("colour"), "role": p.get("empire_title")}
                   for p in view["players"]]
        order = [p["name"] for p in entries]
        rank = ranks(order, scores, winners)
        ended = None
        if over:
            reason = str(state.get(reason_key) or view.get("message") or "")
            code = next((c for c, words in codes if words in reason), "other")
            ended = {"code": code if winners or code != "other" else "draw", "text": view.get("message") or reason}
            if not winners and "draw" in reason:
                ended["code"] = "draw"
        turn = view.get("turn") or {}
        return {
            "players": _players(entries, scores, winners, rank, over),
            "winners": winners, "ended": ended, "turns": int(turn.get("number") or 0) if isinstance(turn, Mapping) else 0,
            "over": over, "teams": False, "extra": {},
        }

    return summarize


SUMMARIES: dict[str, Callable[[Engine, Mapping[str, Any], Folded], dict]] = {
    "balance_duels": _balance_duels,
    "imperial": _imperial,
    "risk": _tracker("win_reason", (("elimination", "no territory left"), ("missions", "missions"))),
    "balance_of_power": _tracker("end_reason", (("draw", "draw between"), ("domination", "eliminated every other"),
                                                ("points", "points (needs"), ("pool", "pool"))),
    "global_powers": _tracker("end_reason", (("dominance", "governs"), ("vp", "VP at evaluation"),
                                             ("no_politicians", "no politicians"))),
}

# what the codes of `ended` say, for the page and the docs
ENDINGS = {
    "home": "every pawn home", "tip": "the arm tipped", "power": "25 power points, final scoring",
    "elimination": "a player left with no territory", "missions": "missions completed holding the capital",
    "points": "the points to win", "pool": "a duplicate from an empty pool", "domination": "total domination",
    "draw": "a draw", "dominance": "the dominance marker", "vp": "victory points at an evaluation",
    "no_politicians": "no politicians left", "other": "as the game says",
}


def summarize(game: str, engine: Engine, options: Mapping[str, Any], folded: Folded) -> dict:
    """The summary of one play (see the module's docstring); games without a summary of their own get the
    engine's scores and no standing."""
    make = SUMMARIES.get(game)
    if make is None:
        state = folded.states[-1]
        scores = engine.scores(state)
        entries = [{"name": n} for n in scores]
        body = {"players": _players(entries, scores, [], {}, False), "winners": [], "ended": None,
                "turns": len(folded.actions), "over": False, "teams": False, "extra": {}}
    else:
        body = make(engine, options, folded)
    body["variant"] = _variant(options)
    body["actions"] = len(folded.actions)
    body["problems"] = len(folded.problems)
    return body


# --------------------------------------------------------------------------- over time

def score_series(engine: Engine, folded: Folded, limit: int) -> list[dict]:
    """The scores after each action (as the page's score history), at most `limit` points evenly spread,
    the first and the last always among them."""
    return [engine.scores(folded.states[i]) for i in spread(len(folded.states), limit)]


def spread(n: int, limit: int) -> list[int]:
    """At most `limit` (≥ 2) indexes of range(n), evenly spread, the first and last always kept."""
    if n <= limit:
        return list(range(n))
    step = (n - 1) / (limit - 1)
    return sorted({round(i * step) for i in range(limit)})


def torque_series(torque: Callable[[Any], float], folded: Folded, limit: int) -> list[float]:
    """Balance Duels: the arm's net torque (g·mm) after each action, as `score_series` spreads them."""
    return [round(torque(folded.states[i]), 1) for i in spread(len(folded.states), limit)]
