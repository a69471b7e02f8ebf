"""Simulated sessions for the replay tests, made once per test session (each takes a second or two)."""

import pytest

from companion.games.balance_model import load_model
from companion.recorder.inputs import write_inputs
from companion.simulation.games import play_session
from companion.simulation.traces import HandStyle
from companion.sensing.calibration import render
from companion.simulation.traces import config_toml, write_trace

# seat 1 gets like pawns on E2 and E5, then moves E5 → E7: weight and torque say exactly what E2 → E4 would
PLAN = [("place", "E2"), ("place", "W2"), ("place", "E5"), ("place", "W2"), ("advance", "E5", "E7")]
ROLLS = [2, 6, 5, 6, 2]


def planned(state, moves):
    step = PLAN[min(len(planned.done), len(PLAN) - 1)] if len(planned.done) < len(PLAN) else None
    planned.done.append(1)
    if step is not None:
        for m in moves:
            if m.kind == step[0] and m.to_holder == step[-1] and (step[0] == "place" or m.from_holder == step[1]):
                return m
    safe = [m for m in moves if m.kind in ("place", "advance")]
    return safe[0] if safe else moves[0]


def ambiguous_session(turns=8):
    """Like pawns alike in mass, a move of one of them made in one gesture (its two touches overlap, so where
    each was cannot be told): the companion cannot tell it from the other's, and asks."""
    planned.done = []
    return play_session(load_model("A"), profile="quiet-10sps", seed=21, players=2, turns=turns, rolls=ROLLS,
                        choose=planned, mass_spread=False, hands=HandStyle())


@pytest.fixture(scope="session")
def session():
    """A short 2-player game in which the companion must ask once (its answer comes from the players)."""
    return ambiguous_session()


@pytest.fixture
def files(session, tmp_path):
    """(trace, config, inputs) files of that session."""
    trace = write_trace(tmp_path / "trace.csv", session.rows)
    config = tmp_path / "config.toml"
    config.write_text(config_toml(session.model, session.calibration), encoding="utf-8")
    # and the calibration beside it, as `companion calibrate` leaves it (the swing measured)
    (tmp_path / "calibration.toml").write_text(render(session.calibration, model_name=session.model.name, exact=True),
                                               encoding="utf-8")
    inputs = tmp_path / "inputs.jsonl"
    inputs.write_text(write_inputs(session.inputs), encoding="utf-8")
    return trace, config, inputs
