"""Trace files: read in order, every bad row named by file and line."""

import pytest

from companion.sensing.trace import TraceError, read_trace

GOOD = """t,sensor,value
0.000000,tilt,0
0.010000,load0,120345
0.010000,ax,0.012000
0.010000,ay,-0.001000
0.010000,az,0.999000
0.020000,load1,-4567
"""


def write(tmp_path, text, name="t.csv"):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_a_good_trace_reads_in_order(tmp_path):
    rows = list(read_trace(write(tmp_path, GOOD), load_cells=["load0", "load1"]))
    assert rows[0] == (0.0, "tilt", 0)
    assert rows[1] == (0.01, "load0", 120345) and isinstance(rows[1][2], int)
    assert rows[-1] == (0.02, "load1", -4567)
    assert len(rows) == 6


@pytest.mark.parametrize("body,line,needle", [
    ("t,sensor,value\n0.1,load0,12\n0.05,load0,13\n", 3, "time goes backwards: 0.05 after 0.1"),
    ("t,sensor,value\n0.1,load0,12\nabc,load0,13\n", 3, "time 'abc' is not a number"),
    ("t,sensor,value\n0.1,load0,12\n0.2,load0,1.5\n", 3, "load0: '1.5' is not a whole number"),
    ("t,sensor,value\n0.1,load0,99999999\n", 2, "outside an HX711's 24-bit range"),
    ("t,sensor,value\n0.1,load7,12\n", 2, "unknown sensor 'load7': the config names load0, load1"),
    ("t,sensor,value\n0.1,gyro,12\n", 2, "unknown sensor 'gyro' (known: load0, load1, ax, ay, az, tilt)"),
    ("t,sensor,value\n0.1,tilt,2\n", 2, "tilt: '2' must be 1 (closed) or 0 (open)"),
    ("t,sensor,value\n0.1,ax,nan\n", 2, "ax: 'nan' is not a reading in g"),
    ("t,sensor,value\n0.1,ax,x\n", 2, "ax: 'x' is not a number"),
    ("t,sensor,value\n0.1,ax\n", 2, "expected 3 fields t,sensor,value, found 2"),
    ("time,name,v\n", 1, "the first line must be 't,sensor,value'"),
    ("", 1, "empty file"),
    ("t,sensor,value\n0.1,load0,1\ninf,load0,2\n", 3, "not a finite number"),
])
def test_bad_rows_are_named_by_file_and_line(tmp_path, body, line, needle):
    p = write(tmp_path, body)
    with pytest.raises(TraceError) as err:
        list(read_trace(p, load_cells=["load0", "load1"]))
    assert err.value.line == line
    assert str(err.value).startswith(f"{p}:{line}: ")
    assert needle in str(err.value)


def test_a_missing_file(tmp_path):
    with pytest.raises(TraceError, match="no such trace file"):
        list(read_trace(tmp_path / "nope.csv", load_cells=[]))


def test_blank_lines_and_windows_line_ends_are_fine(tmp_path):
    p = tmp_path / "w.csv"
    p.write_bytes(b"t,sensor,value\r\n0.1,load0,5\r\n\r\n0.2,tilt,1\r\n")
    assert list(read_trace(p, load_cells=["load0"])) == [(0.1, "load0", 5), (0.2, "tilt", 1)]
