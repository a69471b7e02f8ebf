"""Imperial 2030 -- the running scores, the ranking and the winners, as far as the table may see them
(a player keeping their cash secret is left out until the game is over).
"""

from __future__ import annotations

from companion.games.imperial_rules import final_score, tie_break
from companion.games.imperial_state import State, _player, _secret


def _running_scores(state: State) -> dict[str, int]:
    points = {n.id: n.power_points for n in state.nations}
    return {p.name: final_score(p.bonds, p.cash, points) for p in state.players}


def _shown_scores(state: State) -> dict[str, int]:
    """The running scores the table may see: a hidden player's score less their public bonds is their cash."""
    secret = _secret(state)
    return {name: score for name, score in _running_scores(state).items() if name not in secret}


def _ranking(state: State) -> list[str]:
    points = {n.id: n.power_points for n in state.nations}
    totals = _running_scores(state)
    secret = _secret(state)
    # a hidden player's place among the others would bound their cash
    return sorted(
        (p.name for p in state.players if p.name not in secret),
        key=lambda name: (totals[name], tie_break(_player(state, name).bonds, points)),
        reverse=True,
    )


def _winners(state: State) -> list[str]:
    points = {n.id: n.power_points for n in state.nations}
    totals = _running_scores(state)

    def key(name: str) -> tuple[int, tuple[int, ...]]:
        return totals[name], tie_break(_player(state, name).bonds, points)

    ranking = _ranking(state)
    return [name for name in ranking if key(name) == key(ranking[0])]


def scores(state: State) -> dict[str, int]:
    """The running score: bonds' interest times power factor, plus cash; players hiding their cash are left out."""
    return _shown_scores(state)
