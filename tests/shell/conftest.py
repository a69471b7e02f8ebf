"""A Companion on the simulated table without the demo, for the shell tests."""

import dataclasses

import pytest

from companion.config import parse
from companion.table.daemon import Companion


@pytest.fixture
def make_companion(tmp_path):
    """make_companion(**sections) -> a Companion with those config sections added; stopped after the test."""
    made = []

    def make(**sections):
        data = {"simulate": {"enabled": True, "demo": False, "seed": 7}, **sections}
        c = Companion(dataclasses.replace(parse(data), store_path=tmp_path / f"db{len(made)}.sqlite3"))
        made.append(c)
        return c

    yield make
    for c in made:
        c.stop()


@pytest.fixture
def companion(make_companion):
    return make_companion()
