"""The flight recorder keeps the last minutes in RAM, bounded by time and by size."""

from companion.recorder.inputs import Input
from companion.recorder.flight import ROW_BYTES, Checkpoint, FlightRecorder


def fill(rec, seconds, hz=100.0, start=0.0):
    n = int(seconds * hz)
    for i in range(n):
        t = round(start + i / hz, 6)
        rec.row(t, "load0", 8000 + i % 7)
        rec.row(t, "ax", 0.001 * (i % 5))


def restarts(rec, seconds, every, hz=100.0):
    """Rows for `seconds`, and a follower restart every `every` seconds."""
    n = int(seconds * hz)
    for i in range(n):
        t = round(i / hz, 6)
        if i and i % int(every * hz) == 0:
            rec.restart(Input(t, "follower", {"at": t}))
        rec.row(t, "load0", 8000 + i % 7)
        rec.row(t, "ax", 0.001 * (i % 5))


def test_it_keeps_the_newest_window_from_a_follower_restart():
    rec = FlightRecorder(lambda: Checkpoint(1, 5), window_s=30.0, chunk_s=5.0)
    restarts(rec, 100.0, every=7.5)
    snap = rec.snapshot()
    assert snap.trimmed and snap.exact
    assert 30.0 / 2 <= snap.end - snap.start <= 30.0 + 5.0   # at least half the window; the chunk being written
    assert snap.inputs[0].kind == "follower" and snap.inputs[0].t == snap.start
    rows = list(snap.iter_rows())
    assert rows[0][0] >= snap.start and rows[-1][0] == snap.end
    assert {s for _, s, _ in rows} == {"load0", "ax"}
    assert len(rows) == snap.rows == sum(len(t) for t, _, _ in snap.chunks)


def test_when_restarts_are_rare_the_window_grows_rather_than_shrink_to_the_last_one():
    rec = FlightRecorder(lambda: Checkpoint(1, 5), window_s=30.0, chunk_s=5.0)
    restarts(rec, 200.0, every=40.0)
    snap = rec.snapshot()
    assert snap.exact and snap.inputs[0].kind == "follower"
    assert 30.0 / 2 <= snap.end - snap.start <= 2 * 30.0 + 5.0


def test_without_a_restart_in_reach_the_window_grows_until_the_size_bound_cuts_it():
    rec = FlightRecorder(lambda: Checkpoint(1, 5), window_s=30.0, max_bytes=400_000, chunk_s=5.0)
    fill(rec, 100.0)
    snap = rec.snapshot()
    assert snap.end - snap.start > 30.0 or not snap.exact
    fill(rec, 200.0, start=100.0)
    snap = rec.snapshot()
    assert rec.bytes <= 400_000 and snap.trimmed and not snap.exact


def test_it_stays_within_its_size_whatever_the_rate():
    rec = FlightRecorder(lambda: Checkpoint(1, 5), window_s=3600.0, max_bytes=200_000, chunk_s=1.0)
    restarts(rec, 200.0, every=3.0, hz=500.0)
    assert rec.bytes <= 200_000
    snap = rec.snapshot()
    assert snap.rows * ROW_BYTES <= 200_000 and snap.exact
    assert snap.end == round(199.998, 6)


def test_inputs_and_the_daemons_lines_are_kept_with_their_chunk_and_go_with_it():
    rec = FlightRecorder(lambda: Checkpoint(1, 5), window_s=20.0, chunk_s=5.0)
    for i in range(60):
        rec.row(float(i), "load0", 8000)
        rec.input(Input(float(i) + 0.5, "action", {"type": "roll", "value": 1 + i % 6}))
        rec.output(float(i) + 0.5, {"t": float(i) + 0.5, "seq": i, "kind": "action", "body": {}, "source": "input"})
    snap = rec.snapshot()
    assert snap.inputs[0].t >= snap.start and len(snap.inputs) == len(snap.outputs)
    assert [i.t for i in snap.inputs] == sorted(i.t for i in snap.inputs)
    assert snap.inputs[-1].t == 59.5


def test_an_empty_recorder_gives_an_empty_window():
    snap = FlightRecorder(lambda: Checkpoint(1, 1)).snapshot()
    assert snap.rows == 0 and snap.checkpoint is None and snap.inputs == []


def test_a_sample_is_given_to_the_follower_as_a_trace_file_carries_it():
    from companion.foundation.table_time import COUNTS_MAX, COUNTS_MIN, sample_value

    # a load cell's whole count within an HX711's range passes as it is; outside it, or not whole, it is made so
    assert sample_value("load0", 8_388_000) == 8_388_000
    assert sample_value("load0", COUNTS_MAX + 5) == COUNTS_MAX and sample_value("load0", COUNTS_MIN - 1) == COUNTS_MIN
    assert sample_value("load1", 12.9) == 12 and type(sample_value("load1", 12.9)) is int
    # an accelerometer's reading to the micro-g, within its widest range, as a float however it came
    assert sample_value("ax", 1) == 1.0 and type(sample_value("ax", 1)) is float
    assert sample_value("az", 0.12345678) == 0.123457 and sample_value("ay", -40.0) == -16.0
    # the tilt switch closed or open
    assert sample_value("tilt", 1) == 1 and sample_value("tilt", 0.2) == 0 and sample_value("tilt", 7) == 1
