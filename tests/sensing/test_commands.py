"""`companion record`, `companion analyze` and `companion calibrate` as a person runs them."""

import importlib.machinery
import json
import math
import sys
import time
import types

import pytest

from companion.cli import main
from companion.foundation.clock import Clock
from companion.games.balance_model import load_model
from companion.simulation.table import SimAccelerometer, SimLoadCell, SimTiltSwitch, SimulatedTable
from companion.table import record as record_module


@pytest.fixture
def sim_trace(tmp_path):
    trace, config, truth = tmp_path / "t.csv", tmp_path / "sim.toml", tmp_path / "truth.jsonl"
    assert main(["record", "--simulate", "--out", str(trace), "--seconds", "45", "--seed", "21",
                 "--write-config", str(config), "--truth", str(truth)]) == 0
    return trace, config, truth


def test_a_simulated_recording_analyzes_back_to_what_the_hands_did(sim_trace, capsys):
    trace, config, truth = sim_trace
    capsys.readouterr()
    assert main(["analyze", str(trace), "--config", str(config)]) == 0
    out, err = capsys.readouterr()
    got = [json.loads(line) for line in out.splitlines()]
    expected = [e for line in truth.read_text().splitlines() for e in json.loads(line)["expected"]]
    assert [g["event"] for g in got] == [e["event"] for e in expected]
    for g, e in zip(got, expected):
        if not g["ambiguous"]:
            assert all(g.get(k) == e.get(k) for k in ("size", "holder", "from", "to"))
            assert set(g) <= {"t", "event", "size", "holder", "from", "to", "confidence", "ambiguous"}
        else:
            # an ambiguous event names what else could have happened, each with its probability
            assert g["alternatives"] and all(0.0 < a["probability"] <= 1.0 and a["text"] for a in g["alternatives"])
            assert set(g) <= {"t", "event", "size", "holder", "from", "to", "confidence", "ambiguous", "alternatives"}
        assert 0.0 <= g["confidence"] <= 1.0
    assert "rows" in err and "real time" in err


def test_candidates_on_request(sim_trace, capsys):
    trace, config, _ = sim_trace
    capsys.readouterr()
    assert main(["analyze", str(trace), "--config", str(config), "--candidates"]) == 0
    first = json.loads(capsys.readouterr().out.splitlines()[0])
    assert first["candidates"][0]["probability"] > 0.9 and "weight_change_g" in first["measured"]


def test_a_bad_trace_gives_file_line_and_no_events(sim_trace, capsys):
    trace, config, _ = sim_trace
    lines = trace.read_text().splitlines()
    lines[5000] = lines[5000].split(",")[0] + ",load9,100"
    trace.write_text("\n".join(lines) + "\n")
    capsys.readouterr()
    assert main(["analyze", str(trace), "--config", str(config)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert f"{trace}:5001: unknown sensor 'load9'" in err


@pytest.mark.parametrize("edit,needle", [
    (("kappa_gmm = 17000.0\n", ""), "[balance] has no kappa_gmm"),
    (("offset_counts", "offset_countz"), "[load_cells #1] offset_countz: unknown key"),
    (("level_g = 0.0\n", ""), "[accelerometer] has no level_g"),
    (("theta_max_deg = 10.0", "theta_max_deg = \"ten\""), "[balance] theta_max_deg: must be a number"),
])
def test_a_config_missing_what_analyze_needs(sim_trace, capsys, edit, needle):
    trace, config, _ = sim_trace
    text = config.read_text().replace(*edit)
    config.write_text(text)
    capsys.readouterr()
    assert main(["analyze", str(trace), "--config", str(config)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and needle in err
    line = int(err.split(f"{config}:")[1].split(":")[0])
    assert 1 <= line <= len(text.splitlines())


def test_analyze_uses_the_calibration_beside_the_config(sim_trace, capsys):
    trace, config, _ = sim_trace
    (config.parent / "calibration.toml").write_text("version = 1\ncreated = 2025-01-01T00:00:00Z\nmodel = \"A\"\n"
                                                    "[arm]\nkappa_gmm = -1.0\n")
    capsys.readouterr()
    assert main(["analyze", str(trace), "--config", str(config)]) == 2
    assert "calibration.toml:5: [arm] kappa_gmm must be greater than 0" in capsys.readouterr().err
    assert main(["analyze", str(trace), "--config", str(config), "--no-calibration"]) == 0


def test_recording_without_real_drivers_says_so(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(record_module, "FACTORY", "companion.hardware.no_such_factory")
    cfg = tmp_path / "c.toml"
    cfg.write_text("[[load_cells]]\nname = \"load0\"\ndout_pin = 5\nsck_pin = 6\n")
    assert main(["record", "--out", str(tmp_path / "t.csv"), "--config", str(cfg), "--seconds", "1"]) == 1
    assert "real drivers are unavailable" in capsys.readouterr().err
    assert not (tmp_path / "t.csv").exists()


class Paced:
    """A simulated HX711 that, like a real one, answers at its own rate: a new reading every period by its own
    clock, whether or not the reader was late for the last one (a reader held up by a busy machine gets the
    waiting reading at once, not a further full period later)."""

    def __init__(self, cell, sps):
        self.cell, self.name, self.period = cell, cell.name, 1.0 / sps
        self.ready_at = None

    def read(self, timeout):
        now = time.monotonic()
        if self.ready_at is None:
            self.ready_at = now + self.period
        if self.ready_at > now:
            time.sleep(self.ready_at - now)
        # the chip's next reading: the first tick of its own clock after the one just read (it keeps only the
        # newest, so a reader more than a period late has missed some)
        self.ready_at += (math.floor((time.monotonic() - self.ready_at) / self.period) + 1) * self.period
        return self.cell.read(timeout)


def test_recording_real_devices_writes_an_ordered_trace(tmp_path, capsys, monkeypatch):
    model = load_model("A")
    table = SimulatedTable(model, Clock(), seed=1)
    devices = types.SimpleNamespace(
        load_cells=[Paced(SimLoadCell(table, f"load{i}", share=0.5, offset_counts=8000, counts_per_gram=2150,
                                      seed=i), 80) for i in range(2)],
        accelerometer=SimAccelerometer(table, seed=3), tilt=SimTiltSwitch(table, seed=4))
    factory = types.ModuleType("fake_factory")
    factory.__spec__ = importlib.machinery.ModuleSpec("fake_factory", None)
    factory.build_devices = lambda config: devices
    monkeypatch.setitem(sys.modules, "fake_factory", factory)
    monkeypatch.setattr(record_module, "FACTORY", "fake_factory")
    cfg = tmp_path / "c.toml"
    cfg.write_text("[[load_cells]]\nname = \"load0\"\ndout_pin = 5\nsck_pin = 6\n"
                   "[[load_cells]]\nname = \"load1\"\ndout_pin = 13\nsck_pin = 19\n[accelerometer]\n")
    out = tmp_path / "real.csv"
    assert main(["record", "--out", str(out), "--config", str(cfg), "--seconds", "0.8"]) == 0
    lines = out.read_text().splitlines()
    assert lines[0] == "t,sensor,value"
    rows = [line.split(",") for line in lines[1:]]
    times = [float(r[0]) for r in rows]
    assert times == sorted(times) and times[-1] <= 0.8
    sensors = {r[1] for r in rows}
    assert {"load0", "load1", "ax", "ay", "az", "tilt"} <= sensors
    assert 30 < sum(r[1] == "load0" for r in rows) < 80
    assert not list(tmp_path.glob("*.part"))


def test_record_refuses_nonsense(tmp_path, capsys):
    assert main(["record", "--out", str(tmp_path / "t.csv"), "--seconds", "-1", "--simulate"]) == 2
    assert main(["record", "--out", str(tmp_path / "t.csv"), "--truth", str(tmp_path / "x")]) == 2
    assert "--seconds must be more than 0" in capsys.readouterr().err


def test_calibrate_walks_through_the_simulated_table(tmp_path, capsys, monkeypatch):
    replies = iter(["", "", "", "n", "n", "y"])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(replies))
    out = tmp_path / "calibration.toml"
    assert main(["calibrate", "--simulate", "--out", str(out), "--mass", "10"]) == 0
    text = capsys.readouterr().out
    assert "Wrote" in text and out.exists()
    assert "created = " in out.read_text()


def test_calibrate_measures_the_loaded_arm_and_walks_every_holder(tmp_path, capsys, monkeypatch):
    # Enter for each step (tare, weight, θ_max, the loaded arm, with the weight, 14 holders), then write the file
    replies = iter([""] * 19 + ["y"])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(replies))
    out = tmp_path / "calibration.toml"
    assert main(["calibrate", "--simulate", "--out", str(out), "--mass", "10", "--loaded", "--holders"]) == 0
    text = capsys.readouterr().out
    assert "the pawns sit" in text and "every holder measured" in text and "Wrote" in text
    saved = out.read_text()
    assert "pawn_height_mm = " in saved and saved.count(" = ") >= 14 + 8
    from companion.sensing.calibration import load_file

    cf = load_file(out)
    # the daemon's own simulated arm: holders where model A puts them, pawns at the pivot's height
    assert cf.holder_x["E1"] == pytest.approx(133.0, abs=1.5) and cf.holder_x["W4"] == pytest.approx(-76.0, abs=1.5)
    assert cf.pawn_height_mm == pytest.approx(0.0, abs=1.5)


def test_a_simulated_trace_can_follow_an_existing_config(tmp_path, capsys):
    cfg = tmp_path / "c.toml"
    cfg.write_text("[balance]\nmodel = \"A\"\nkappa_gmm = 17000.0\ntheta_max_deg = 10.0\n"
                   "pawn_mass_g = { L = 10.0, M = 6.0 }\n"
                   "[[load_cells]]\nname = \"load0\"\noffset_counts = 12000\ncounts_per_gram = 2150.0\n"
                   "[[load_cells]]\nname = \"load3\"\noffset_counts = -500\ncounts_per_gram = 1980.0\n"
                   "[accelerometer]\naxis = \"ax\"\nlevel_g = 0.01\n")
    trace = tmp_path / "t.csv"
    assert main(["record", "--simulate", "--config", str(cfg), "--out", str(trace), "--seconds", "20",
                 "--seed", "4"]) == 0
    assert {line.split(",")[1] for line in trace.read_text().splitlines()[1:]} >= {"load0", "load3", "ax"}
    capsys.readouterr()
    assert main(["analyze", str(trace), "--config", str(cfg)]) == 0
    out = capsys.readouterr().out
    assert out and all(json.loads(line)["event"] in ("place", "move", "remove") for line in out.splitlines())


def test_calibrate_needs_load_cells_unless_simulated(tmp_path, capsys):
    cfg = tmp_path / "c.toml"
    cfg.write_text("[game]\nname = \"balance_duels\"\n")
    assert main(["calibrate", "--config", str(cfg)]) == 2
    assert "no [[load_cells]] configured" in capsys.readouterr().err
    assert main(["calibrate", "--simulate", "--mass", "-2"]) == 2
