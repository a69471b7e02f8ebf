"""The inputs file of `companion replay`: every line checked, the first bad one named with its line."""

import json

import pytest

from companion.recorder.inputs import MAX_LINE_BYTES, Input, InputError, parse_lines, read_inputs, write_inputs

GOOD = [
    {"t": 0, "new_game": {"game": "balance_duels", "options": {"players": 2}}},
    {"t": 1.5, "action": {"type": "roll", "value": 4}},
    {"t": 2.0, "action": {"type": "move", "move": {"kind": "pass", "seat": 2}}},
    {"t": 9.25, "answer": {"kind": "advance", "seat": 1, "from_holder": "E3", "to_holder": "E7"}},
    {"t": 9.25, "undo": True},
]


def lines(*items):
    return [json.dumps(i) if not isinstance(i, str) else i for i in items]


def test_every_kind_of_line_reads_back_as_written():
    items = parse_lines(lines(*GOOD), "in.jsonl")
    assert [i.kind for i in items] == ["new_game", "action", "action", "answer", "undo"]
    assert items[0].body == {"game": "balance_duels", "options": {"players": 2}}
    assert items[3].body["from_holder"] == "E3" and items[3].line == 4
    again = parse_lines(write_inputs(items).splitlines(), "again.jsonl")
    assert [(i.t, i.kind, i.body) for i in again] == [(i.t, i.kind, i.body) for i in items]


def test_blank_lines_are_skipped_and_line_numbers_still_count_them(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text("\n" + json.dumps(GOOD[1]) + "\n\n" + json.dumps({"t": 3, "undo": False}) + "\n")
    with pytest.raises(InputError) as err:
        read_inputs(path)
    assert str(err.value) == f"{path}:4: \"undo\" must be true"


@pytest.mark.parametrize("line, reason", [
    ("not json", "not JSON"),
    ("[1, 2]", "must be a JSON object"),
    ({"action": {"type": "roll", "value": 3}}, "no \"t\""),
    ({"t": "soon", "undo": True}, "\"t\" must be a number"),
    ({"t": True, "undo": True}, "\"t\" must be a number"),
    ({"t": -1, "undo": True}, "from 0 to"),
    ({"t": 1e12, "undo": True}, "from 0 to"),
    ({"t": 1}, "exactly one of new_game, action, answer, undo, follower, not 0"),
    ({"t": 1, "follower": [1]}, "\"follower\" must be the follower's memory"),
    ({"t": 1, "undo": True, "action": {"type": "roll"}}, "exactly one of"),
    ({"t": 1, "press": "roll"}, "unknown key 'press'"),
    ({"t": 1, "action": "roll"}, "\"action\" must be an action object"),
    ({"t": 1, "action": {}}, "\"action\" must be an action object"),
    ({"t": 1, "action": {"value": 3}}, "every action has a \"type\""),
    ({"t": 1, "new_game": "balance_duels"}, "\"new_game\" must be an object"),
    ({"t": 1, "new_game": {"game": "chess"}}, "game must be one of balance_duels"),
    ({"t": 1, "new_game": {"game": "risk", "options": []}}, "options must be an object"),
    ({"t": 1, "new_game": {"game": "risk", "seed": 3}}, "unknown key 'seed'"),
    ({"t": 1, "answer": 2}, "\"answer\" must be the move's fields"),
    ({"t": 1, "answer": {"kind": "advance", "option": 2}}, "'option' is not a field of a move"),
    ({"t": 1, "answer": {"kind": "pass", "seat": 1}}, "kind must be \"place\" or \"advance\""),
    ({"t": 1, "answer": {"kind": "place", "to_holder": ["E1"]}}, "to_holder must be a string"),
    ({"t": 1, "answer": {"kind": "place", "seat": True}}, "seat must be a string"),
    ("[" * 100000 + "]" * 100000, "the line is longer than"),
])
def test_a_bad_line_is_named_with_its_number_and_reason(line, reason):
    with pytest.raises(InputError) as err:
        parse_lines(lines(GOOD[1], line), "in.jsonl")
    assert err.value.line == 2 and reason in err.value.message, str(err.value)
    assert str(err.value).startswith("in.jsonl:2: ")


def test_deep_nesting_within_the_size_limit_is_refused_not_a_crash():
    deep = '{"t": 1, "action": {"type": "x", "a": ' + "[" * 20000 + "]" * 20000 + "}}"
    assert len(deep) < MAX_LINE_BYTES
    with pytest.raises(InputError) as err:
        parse_lines([deep], "in.jsonl")
    assert "nested too deeply" in str(err.value)


def test_time_must_not_go_backwards_but_may_repeat():
    parse_lines(lines({"t": 2, "undo": True}, {"t": 2, "undo": True}), "in.jsonl")
    with pytest.raises(InputError) as err:
        parse_lines(lines({"t": 2, "undo": True}, {"t": 1.5, "undo": True}), "in.jsonl")
    assert "in.jsonl:2: time goes backwards" in str(err.value)


def test_unreadable_files_are_refused_by_name(tmp_path):
    with pytest.raises(InputError) as err:
        read_inputs(tmp_path / "missing.jsonl")
    assert "no such inputs file" in str(err.value)
    binary = tmp_path / "bin.jsonl"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(InputError) as err:
        read_inputs(binary)
    assert "not a UTF-8 text file" in str(err.value)


def test_an_input_made_in_memory_has_a_plain_description():
    assert Input(1.0, "action", {"type": "roll", "value": 2}).describe() == "action roll"
    assert Input(1.0, "new_game", {"game": "risk", "options": {}}).describe() == "new game"
