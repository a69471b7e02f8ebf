"""Config and balance-model files fuzzed with truncations, garbage and wrong types: always a clear message
naming the file (ConfigError / ModelError), and through `companion run`, exit code 2 and no traceback.
bench/file_fuzz.py runs every truncation and every wrong value."""

import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.reliability.filefuzz import (FULL_CONFIG, MODEL_A, WRONG_VALUES, Loader, model_via_config, parses,
                                        replace_value, truncations, value_lines)

pytestmark = pytest.mark.slow   # a long file: handed out to a worker first (tests/conftest.py)

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture
def config_loader():
    loader = Loader("config")
    yield loader
    loader.close()


@pytest.fixture
def model_loader():
    loader = Loader("model")
    yield loader
    loader.close()


def test_the_base_files_are_valid(config_loader, model_loader):
    config_loader(FULL_CONFIG)
    model_loader(MODEL_A)
    assert config_loader.result.loaded == 1 and model_loader.result.loaded == 1


def test_config_truncated_anywhere(config_loader):
    for text in truncations(FULL_CONFIG, step=7):
        config_loader(text)
    r = config_loader.result
    assert r.failures == []
    assert r.refused > 20 and r.loaded > 5      # a cut at a line end is often still a valid, shorter config


def test_model_truncated_anywhere(model_loader):
    for text in truncations(MODEL_A, step=11):
        model_loader(text)
    r = model_loader.result
    assert r.failures == [] and r.refused > 50


def test_config_values_of_the_wrong_type(config_loader):
    @FUZZ
    @given(line=st.sampled_from(value_lines(FULL_CONFIG)), value=st.sampled_from(WRONG_VALUES))
    def run(line, value):
        config_loader(replace_value(FULL_CONFIG, line, value))

    run()
    r = config_loader.result
    assert r.failures == [] and r.refused > 50
    # the messages name the key: "[web] port: …", "[[load_cells]] …", "[balance]: …"
    assert sum(1 for m in r.messages if m.startswith("[")) >= len(r.messages) * 0.9


def test_model_values_of_the_wrong_type(model_loader):
    @FUZZ
    @given(line=st.sampled_from(value_lines(MODEL_A)), value=st.sampled_from(WRONG_VALUES))
    def run(line, value):
        model_loader(replace_value(MODEL_A, line, value))

    run()
    assert model_loader.result.failures == [] and model_loader.result.refused > 50


@FUZZ
@given(data=st.one_of(st.binary(max_size=400), st.text(max_size=400)))
def test_garbage_files(data):
    for kind in ("config", "model"):
        loader = Loader(kind)
        try:
            loader(data)
            assert loader.result.failures == []
        finally:
            loader.close()


BAD_CONFIGS = {
    "truncated table header": FULL_CONFIG[:FULL_CONFIG.index("[web]") + 3],
    "port of the wrong type": FULL_CONFIG.replace("port = 8080", 'port = "eighty"'),
    "not UTF-8": b"[web]\nport = \xff\xfe\n",
    "unknown section": "[wobble]\nx = 1\n",
    "players the game does not allow": "[game]\nplayers = 6\n[simulate]\nenabled = true\n",
    "game options the game refuses": "[game]\noptions = { pawns = 99 }\n[simulate]\nenabled = true\n",
    "another game's players of the wrong type": '[game]\nname = "imperial"\noptions = { players = "x" }\n'
                                                "[simulate]\nenabled = true\n",
}


@pytest.mark.parametrize("name", sorted(BAD_CONFIGS) + ["broken model file"])
def test_companion_run_with_a_bad_file_exits_2_with_one_line(tmp_path, name):
    cfg = tmp_path / "companion.toml"
    if name == "broken model file":
        cfg.write_text(model_via_config(MODEL_A[:len(MODEL_A) // 2] + "capacity = 'two'\n", tmp_path))
    else:
        data = BAD_CONFIGS[name]
        cfg.write_bytes(data if isinstance(data, bytes) else data.encode())
    proc = subprocess.run([sys.executable, "-m", "companion", "run", "--config", str(cfg), "--port", "0",
                           "--db", str(tmp_path / "events.sqlite3")], capture_output=True, text=True, timeout=60,
                          cwd=tmp_path)
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("companion: ") and str(cfg) in lines[0]
    assert proc.stdout == "" and not (tmp_path / "events.sqlite3").exists()   # nothing was started


def test_truncations_really_break_the_toml_sometimes():
    assert not parses(FULL_CONFIG[:FULL_CONFIG.index("[web]") + 3]) and parses(FULL_CONFIG)
