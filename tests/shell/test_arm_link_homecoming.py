"""The move that brings a player home and tips the arm is no win, when the table judges tips (the sensors)."""

from dataclasses import replace

import pytest

from companion.table.arm_link import ArmLink
from companion.games import balance_duels as bd
from companion.games.balance_duels import Pawn
from companion.games.balance_model import load_model
from companion.sensing.follower import ArmFollower
from companion.simulation.traces import TableScript
from companion.foundation.table_time import TableTime

MODEL = load_model("A")


class Host:
    """The game host as the arm link sees it: a Balance Duels state the sensors act on."""

    game = "balance_duels"

    def __init__(self, state):
        self.state = state

    def act(self, action, source="page"):
        self.state = bd.act(MODEL, self.state, action)


def one_move_from_home(*, far_out: bool):
    """Seat 1 has three pawns home and one at E6; a 5 takes it home to W4. Far out, that tips the arm; else the arm
    holds (τ −2850 g·mm of the 2952 it takes) until seat 2's pawn in E7 is taken off."""
    home = ("W5", "W6", "W7") if far_out else ("W1", "W5", "W6")
    state = bd.new_game(MODEL, 2, pawns=4, tip_judge="table")
    placed = [(1, "L", h) for h in home] + [(1, "L", "E6"), (2, "L", "E7")]
    pawns = list(state.pawns)
    for seat, size, holder in placed:
        i = next(i for i, p in enumerate(pawns) if p.seat == seat and p.size == size and p.holder is None)
        pawns[i] = Pawn(seat, size, holder)
    state = replace(state, pawns=tuple(pawns), opening=frozenset(), to_move=1)
    return bd.act(MODEL, state, {"type": "roll", "value": 5})


def play(far_out: bool, *, clear_after: bool = False):
    state = one_move_from_home(far_out=far_out)
    # (an arm whose readings name the move plainly: on seed 5's the homecoming move came out at 0.9903, its weight
    # and torque 2.3σ off, and once each decision checks its own fit that is below the arm link's bar: asked)
    script = TableScript(MODEL, "medium-80sps", seed=6, pawns=state.on_arm())
    host = Host(state)
    link = ArmLink(host, MODEL, ArmFollower(MODEL, script.calibration(), pawns=state.on_arm()), time=TableTime())
    script.move("E6", "W4", "L")
    script.wait(4.0)
    if clear_after:
        script.remove("E7", "L")     # the players clear the arm, and it tips
        script.wait(4.0)
    for t, sensor, value in script.rows:
        link.feed(t, sensor, value)
    return host.state, script


def test_the_homecoming_move_that_tips_the_arm_loses():
    state, script = play(far_out=True)
    assert script.actions[0].tipped_after
    assert state.over and state.result == "tip" and state.winners == (2,)


def test_a_homecoming_that_holds_wins_even_if_the_arm_tips_while_it_is_cleared():
    state, script = play(far_out=False, clear_after=True)
    assert not script.actions[0].tipped_after and script.actions[1].tipped_after
    assert state.over and state.result == "home" and state.winners == (1,)


class Unsure(ArmFollower):
    """A follower whose likeliest account, after the change it reports, is still the pawns before it — as when the
    arm came to rest on the board, which hides the torque, and the sensors could not tell the move from nothing."""

    held = None

    @property
    def occupancy(self):
        return list(self.held) if self.held is not None else super().occupancy

    def feed(self, t, sensor, value):
        events = super().feed(t, sensor, value)
        for ev in events:
            if ev.change is not None and ev.event == "move" and self.held is None:
                self.held = [(p.holder, p.size) for p in ev.change.before]
        return events

    def confirm_move(self, move, change=None):
        self.held = None
        super().confirm_move(move, change)


def test_a_move_the_sensors_could_not_tell_from_nothing_is_still_the_turns_move_and_its_tip_is_judged():
    # the game's pawns equal the follower's likeliest account: that must not pass for the arm catching up with
    # the game, or the move goes unapplied and its tip is refused ("no turn has just ended")
    state = one_move_from_home(far_out=True)
    script = TableScript(MODEL, "medium-80sps", seed=5, pawns=state.on_arm())
    host = Host(state)
    follower = Unsure(MODEL, script.calibration(), pawns=state.on_arm())
    link = ArmLink(host, MODEL, follower, time=TableTime())
    said = []
    link.on_report(lambda kind, data: said.append((kind, data)))
    script.move("E6", "W4", "L")
    script.wait(4.0)
    for t, sensor, value in script.rows:
        link.feed(t, sensor, value)
    assert follower.held is None, "the move was never applied"
    assert host.state.over and host.state.result == "tip" and host.state.winners == (2,)
    assert not [d for k, d in said if k == "notice" and "refuses" in d]


def test_a_tip_reported_while_its_move_is_still_judged_waits_for_that_move():
    # the follower reports a tip on its own once it is plain, and the change that caused it may take longer to name
    # (our seed 22500001 turn 34 took the longest look): the tip went to the game before its move, was refused
    # ("no turn has just ended") and never counted. Here the tip is reported the moment the board is sure, before
    # the move is decided.
    from companion.sensing.follower.settings import FollowerSettings

    state = one_move_from_home(far_out=True)
    script = TableScript(MODEL, "medium-80sps", seed=6, pawns=state.on_arm())
    host = Host(state)
    follower = ArmFollower(MODEL, script.calibration(), pawns=state.on_arm(),
                           settings=FollowerSettings(tip_deadline_s=0.0))
    link = ArmLink(host, MODEL, follower, time=TableTime())
    said, tips = [], []
    link.on_report(lambda kind, data: said.append((kind, data)))
    heard = link._on_event

    def hear(ev):
        if ev.event == "tip":
            tips.append(follower.judging)
        heard(ev)

    link._on_event = hear
    script.move("E6", "W4", "L")
    script.wait(4.0)
    for t, sensor, value in script.rows:
        link.feed(t, sensor, value)
    assert tips == [True], "the race this is about: the tip came while the move was still being judged"
    assert host.state.over and host.state.result == "tip" and host.state.winners == (2,)
    assert not [d for k, d in said if k == "notice" and "refuses" in d]


def test_a_tip_due_at_the_very_look_that_names_its_move_reaches_the_game_after_the_move():
    # our seed 27300001 turn 13 (medium-80sps): a beat that tipped the arm was named at the look the tip fell due on
    # its own; the tip was reported first in that look, the game refused it ("no turn has just ended") and the
    # players had to say it. Here the tip falls due at the look the move is named at, whenever that is.
    from companion.sensing.follower.settings import FollowerSettings

    def run(deadline_s):
        state = one_move_from_home(far_out=True)
        script = TableScript(MODEL, "medium-80sps", seed=6, pawns=state.on_arm())
        host = Host(state)
        follower = ArmFollower(MODEL, script.calibration(), pawns=state.on_arm(),
                               settings=FollowerSettings(tip_deadline_s=deadline_s))
        link = ArmLink(host, MODEL, follower, time=TableTime())
        said, heard = [], []
        link.on_report(lambda kind, data: said.append((kind, data)))
        hear = link._on_event
        link._on_event = lambda ev: (heard.append((ev.t, ev.event)), hear(ev))
        script.move("E6", "W4", "L")
        script.wait(4.0)
        for t, sensor, value in script.rows:
            link.feed(t, sensor, value)
        return host.state, follower, said, heard

    _, follower, _, _ = run(FollowerSettings().tip_deadline_s)
    named = follower.changes[-1]
    since = named.t - named.hands_off_t
    state, follower, said, heard = run(since - 0.01)
    assert follower.changes[-1].t == named.t, "the move is named at the same look"
    assert heard == [(named.t, "move"), (named.t, "tip")]
    assert state.over and state.result == "tip" and state.winners == (2,)
    assert not [d for k, d in said if k == "notice" and "refuses" in d]


class LateTip(ArmFollower):
    """A follower whose tip reaches the link a second after it found it (the link asks in the meantime)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.held_tips = []

    def feed(self, t, sensor, value):
        events = super().feed(t, sensor, value)
        self.held_tips += [(t + 1.0, ev) for ev in events if ev.event == "tip"]
        due = [ev for when, ev in self.held_tips if when <= t]
        self.held_tips = [(when, ev) for when, ev in self.held_tips if when > t]
        return [ev for ev in events if ev.event != "tip"] + due


@pytest.mark.parametrize("ask_after_s, follower", [(2.0, ArmFollower), (0.0, LateTip)], ids=["still-looking", "asked"])
def test_a_tip_settles_a_move_the_sensors_could_not_tell_with_the_likeliest_and_says_so(monkeypatch, ask_after_s,
                                                                                         follower):
    # players whose arm has just tipped answer no question about the move that tipped it, and whichever move it was
    # the tip ends the mover's turn alike (foreign seed 35200 game 0: a tipping move asked about, never answered,
    # and its tip waited for good). Here no reading is sure enough to apply a move unasked: the tip comes while the
    # move is looked at again (or, asked at once and the tip late, while the question is open).
    from companion.table import arm_link

    monkeypatch.setattr(arm_link, "SURE", 1.01)
    monkeypatch.setattr(arm_link, "ASK_AFTER_S", ask_after_s)
    state = one_move_from_home(far_out=True)
    script = TableScript(MODEL, "medium-80sps", seed=6, pawns=state.on_arm())
    host = Host(state)
    link = ArmLink(host, MODEL, follower(MODEL, script.calibration(), pawns=state.on_arm()), time=TableTime())
    said = []
    link.on_report(lambda kind, data: said.append((kind, data)))
    applied = []
    act = host.act
    host.act = lambda action, source="page": (applied.append((action, link.applied_confidence)), act(action, source))
    script.move("E6", "W4", "L")
    script.wait(4.0)
    for t, sensor, value in script.rows:
        link.feed(t, sensor, value)
    assert [a["type"] for a, _ in applied] == ["move", "tip"]
    (move, sure), _ = applied
    assert (move["move"]["from_holder"], move["move"]["to_holder"]) == ("E6", "W4") and 0.0 < sure < 1.01
    assert host.state.over and host.state.result == "tip" and host.state.winners == (2,)
    assert link.question is None and link._pending is None
    asked = [k for k, _ in said if k == "question"]
    assert asked == ([] if ask_after_s else ["question"])
    notice = [d for k, d in said if k == "notice"]
    assert len(notice) == 1 and "tipped before the sensors could tell its move" in notice[0] and "E6" in notice[0]
