"""`companion replay`: the daemon's Balance Duels path on a recorded session, off-line and exact."""

import io
import json
import tarfile

import pytest

from companion.cli import main
from companion.recorder.inputs import Input, parse_lines, write_inputs
from companion.replay.session import Replay, replay


def run_cli(capsys, *args):
    code = main(["replay", *map(str, args)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def lines(text):
    return [json.loads(ln) for ln in text.splitlines()]


def test_a_replay_plays_the_game_the_table_played(files, capsys):
    trace, config, inputs = files
    code, out, err = run_cli(capsys, trace, "--config", config, "--inputs", inputs)
    assert code == 0, err
    got = lines(out)
    summary = got[-1]["summary"]
    events = [ln for ln in got if "seq" in ln]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert all(set(e) - {"confidence"} == {"t", "seq", "kind", "body", "source"} for e in events)
    # a move the sensors applied unasked says how sure they were, at or above the bar it was applied at
    sensed = [e for e in events if e["source"] == "sensor" and e["body"].get("action", {}).get("type") == "move"]
    assert sensed and all(0.99 <= e["confidence"] <= 1.0 for e in sensed)
    assert [e["t"] for e in got[:-1]] == sorted(e["t"] for e in got[:-1])
    moves = [e for e in events if e["body"].get("action", {}).get("type") == "move"]
    # every placement and plain advance came from the sensors; the look-alike advance was asked and answered
    assert [e["source"] for e in moves[:4]] == ["sensor"] * 4
    asked = next(ln for ln in got if "question" in ln)
    assert "E2 → E4" in asked["question"] and "E5 → E7" in asked["question"]
    assert {(o["from_holder"], o["to_holder"]) for o in asked["options"]} == {("E2", "E4"), ("E5", "E7")}
    answered = moves[4]
    assert answered["source"] == "answer" and answered["body"]["action"]["move"]["from_holder"] == "E5"
    assert answered["t"] > asked["t"]
    assert summary["questions"] == 1 and summary["answered"] == 1
    assert summary["moves_from_sensors"] == sum(1 for e in moves if e["source"] == "sensor")
    assert summary["events"] == len(events)
    assert summary["ignored_answers"] == sum(1 for ln in got if "ignored_answer" in ln) > 0
    assert summary["state"]["holders"], "the final view is the page's whole Balance Duels view"
    on_arm = sorted((h["id"], p["size"]) for h in summary["state"]["holders"] for p in h["pawns"])
    assert on_arm == sorted([("E2", "L"), ("E4", "L"), ("E7", "L"), ("W2", "L"), ("W2", "L"), ("W6", "L"),
                             ("W6", "L")])
    assert "× real time" in err


def test_two_runs_print_the_same_bytes(files, capsys):
    trace, config, inputs = files
    first = run_cli(capsys, trace, "--config", config, "--inputs", inputs)
    second = run_cli(capsys, trace, "--config", config, "--inputs", inputs)
    assert first[0] == second[0] == 0
    assert first[1] == second[1] and first[1]


def test_the_files_replay_what_the_players_watched_while_playing(session, files, capsys):
    """The session was replayed in memory as it was made (rows fed as they came); the files say the same."""
    trace, config, inputs = files
    code, out, _ = run_cli(capsys, trace, "--config", config, "--inputs", inputs)
    assert code == 0 and out == session.replayed.text()


def test_an_answer_nobody_was_asked_for_or_naming_no_option_is_reported_and_ignored(session):
    items = list(session.inputs)
    asked_at = next(ln["t"] for ln in session.replayed.lines if "question" in ln)
    i = next(k for k, it in enumerate(items) if it.kind == "answer" and it.t > asked_at)
    wrong = {"kind": "advance", "seat": 1, "from_holder": "E2", "to_holder": "E6"}
    items[i] = Input(items[i].t, "answer", wrong, 99)
    early = {"kind": "place", "to_holder": "E1"}
    items.insert(1, Input(1.0, "answer", early))
    got = replay(session.setup(), session.rows, items)
    ignored = [ln for ln in got.lines if "ignored_answer" in ln]
    named = next(ln for ln in ignored if ln["ignored_answer"] == wrong)
    assert "no option of the open question is that move" in named["why"] and "E5 → E7" in named["why"]
    assert ignored[0] == {"t": 1.0, "ignored_answer": early, "why": "the companion was not asking which move was made"}
    assert got.summary["answered"] == 0
    # unanswered, the question blocks the game: the next roll is refused, and said so
    assert any("refused" in ln.get("notice", "") for ln in got.lines)


def test_inputs_are_applied_between_the_rows_at_their_times(session):
    """An input at t comes after every row of t or earlier and before every later row."""
    rows = session.rows[:50]
    t_mid = round(rows[20][0], 6)
    r = Replay(session.setup(), [Input(t_mid, "action", {"type": "roll", "value": 3})])
    seen = []
    r.feed(rows[:1])
    r.arm.on_row(lambda t, sensor, value: seen.append((t, r.host.state.roll)))
    r.feed(rows[1:])
    res = r.finish()
    assert all(roll is None for t, roll in seen if t <= t_mid) and all(roll == 3 for t, roll in seen if t > t_mid)
    roll = next(e for e in res.events() if e["body"].get("action", {}).get("type") == "roll")
    assert roll["t"] == t_mid and roll["source"] == "input"


def test_without_inputs_the_configs_game_starts_at_zero_and_rolls_are_missing(files, capsys):
    trace, config, _ = files
    code, out, _ = run_cli(capsys, trace, "--config", config)
    got = lines(out)
    assert code == 0
    assert got[0]["kind"] == "new_game" and got[0]["t"] == 0.0 and got[0]["source"] == "input"
    assert got[0]["body"]["options"] == {"players": 2}
    assert any(ln.get("notice", "").startswith("a pawn moved before the die was rolled") for ln in got)
    assert got[-1]["summary"]["moves_from_sensors"] == 0


def test_refused_inputs_are_notices_and_change_nothing(session):
    items = [Input(0.0, "new_game", {"game": "balance_duels", "options": {"players": 2}}),
             Input(1.0, "action", {"type": "roll", "value": 9}, 2),
             Input(1.0, "undo", True, 3),
             Input(1.0, "new_game", {"game": "balance_duels", "options": {"players": 9}}, 4)]
    got = replay(session.setup(), session.rows[:200], items)
    notes = [ln["notice"] for ln in got.lines if "notice" in ln]
    assert notes[:3] == ["the game refused the action roll of line 2: a die shows 1 to 6, not 9",
                         "the game refused the undo of line 3: nothing to undo in this game",
                         notes[2]]
    assert notes[2].startswith("the game refused the new game of line 4:")
    assert got.summary["events"] == 1


# --- what is refused before anything is printed

def test_a_bad_inputs_line_stops_the_replay_before_any_output(files, tmp_path, capsys):
    trace, config, inputs = files
    text = inputs.read_text().splitlines()
    text[3] = '{"t": 5, "action": {"type": "roll"}, "undo": true}'
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(text) + "\n")
    code, out, err = run_cli(capsys, trace, "--config", config, "--inputs", bad)
    assert code == 2 and out == ""
    assert f"{bad}:4: a line has exactly one of" in err


@pytest.mark.parametrize("row, reason", [
    ("12.5,load7,8000", "unknown sensor 'load7'"),
    ("12.5,gyro,0.1", "unknown sensor 'gyro'"),
    ("12.5,load0,lots", "is not a whole number of counts"),
    ("1.0,load0,8000", "time goes backwards"),
])
def test_a_trace_that_does_not_fit_the_config_is_refused_with_its_line(files, tmp_path, capsys, row, reason):
    trace, config, inputs = files
    text = trace.read_text().splitlines()
    at = len(text) // 2
    t_there = float(text[at].split(",")[0])
    row = row.replace("12.5", f"{t_there:.6f}")
    text.insert(at, row)
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join(text) + "\n")
    code, out, err = run_cli(capsys, bad, "--config", config, "--inputs", inputs)
    assert code == 2 and out == "", err
    assert f"{bad}:{at + 1}:" in err and reason in err


def test_a_config_without_load_cells_or_a_trace_without_their_rows_is_refused(files, tmp_path, capsys):
    trace, config, _ = files
    text = config.read_text()
    no_cells = tmp_path / "no-cells.toml"
    no_cells.write_text("\n".join(ln for ln in text.split("\n\n") if "[[load_cells]]" not in ln))
    code, out, err = run_cli(capsys, trace, "--config", no_cells)
    assert code == 2 and out == "" and "[[load_cells]]" in err
    accel_only = tmp_path / "accel.csv"
    accel_only.write_text("t,sensor,value\n" + "".join(f"{i / 100:.6f},ax,0.0\n" for i in range(100)))
    code, out, err = run_cli(capsys, accel_only, "--config", config)
    assert code == 2 and out == "" and "no row of any load cell" in err


def test_a_config_without_an_accelerometer_replays_on_weight_alone(files, tmp_path, capsys):
    trace, config, inputs = files
    text = config.read_text()
    start = text.index("[accelerometer]")
    end = text.index("\n\n", start)
    plain = tmp_path / "weight.toml"
    plain.write_text(text[:start] + text[end:])
    code, out, err = run_cli(capsys, trace, "--config", plain, "--inputs", inputs)
    assert code == 0, err
    assert lines(out)[-1]["summary"]["events"] > 0


def test_contradicting_or_missing_options_are_refused(files, tmp_path, capsys):
    trace, config, _ = files
    code, out, err = run_cli(capsys, trace, "--config", config, "--calibration", config, "--no-calibration")
    assert code == 2 and "contradict" in err
    code, out, err = run_cli(capsys, trace)
    assert code == 2 and "--config is needed" in err
    junk = tmp_path / "report.tar.gz"
    junk.write_bytes(b"not a tarball")
    code, out, err = run_cli(capsys, junk)
    assert code == 2 and out == "" and "not a misread report" in err


def test_a_report_with_no_trace_or_odd_members_is_refused_or_ignored(files, tmp_path, capsys):
    trace, config, inputs = files
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in (("x/../../escape.txt", b"no"), ("x/config.toml", config.read_bytes())):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    bundle = tmp_path / "r.tar.gz"
    bundle.write_bytes(buf.getvalue())
    code, out, err = run_cli(capsys, bundle)
    assert code == 2 and "has no trace.csv" in err
    assert not (tmp_path.parent / "escape.txt").exists()


def test_an_inputs_file_made_in_memory_reads_back_the_same(session):
    again = parse_lines(write_inputs(session.inputs).splitlines(), "x")
    assert [(i.t, i.kind, i.body) for i in again] == [(i.t, i.kind, i.body) for i in session.inputs]
