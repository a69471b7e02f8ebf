"""The layers in pyproject.toml's import-linter contracts hold, and a contract breaks when one is crossed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINT = Path(sys.executable).with_name("lint-imports")
# packages that companion/'s top may hold besides them: the entry points and the configuration
TOP_MODULES = {"__init__.py", "__main__.py", "cli.py"}


def _lint(tree: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run([str(LINT), "--no-cache", "--config", str(tree / "pyproject.toml")], cwd=tree, env=env,
                          capture_output=True, text=True, timeout=120)


def _copy(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    shutil.copytree(ROOT / "companion", tree / "companion", ignore=shutil.ignore_patterns("__pycache__", "static"))
    shutil.copy(ROOT / "pyproject.toml", tree / "pyproject.toml")
    return tree


def test_every_contract_is_kept():
    result = _lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_an_upward_import_breaks_the_layers(tmp_path):
    tree = _copy(tmp_path)
    dice = tree / "companion" / "games" / "dice.py"
    dice.write_text(dice.read_text() + "\nfrom companion.table.host import GameHost  # noqa\n")
    result = _lint(tree)
    assert result.returncode != 0
    assert "companion.games.dice -> companion.table.host" in result.stdout, result.stdout


def test_a_rules_engine_that_reads_the_clock_breaks_purity(tmp_path):
    tree = _copy(tmp_path)
    risk = tree / "companion" / "games" / "risk.py"
    risk.write_text(risk.read_text() + "\nimport time  # noqa\n")
    result = _lint(tree)
    assert result.returncode != 0
    assert "pure" in result.stdout and "companion.games.risk -> time" in result.stdout, result.stdout


def test_the_simulator_is_not_imported_by_the_running_table_unasked(tmp_path):
    tree = _copy(tmp_path)
    host = tree / "companion" / "table" / "host.py"
    host.write_text(host.read_text() + "\nfrom companion.simulation.table import SimulatedTable  # noqa\n")
    result = _lint(tree)
    assert result.returncode != 0
    assert "companion.table.host -> companion.simulation.table" in result.stdout, result.stdout


def test_companion_top_holds_only_entry_points_and_configuration():
    top = {p.name for p in (ROOT / "companion").iterdir() if p.suffix == ".py"}
    assert top == TOP_MODULES
    for package in (ROOT / "companion").iterdir():
        if package.is_dir() and (package / "__init__.py").exists():
            doc = (package / "__init__.py").read_text().lstrip()
            assert doc.startswith('"""'), f"{package.name}/__init__.py opens without a docstring"
            assert "Imports:" in doc, f"{package.name}/__init__.py does not say what it may import"
