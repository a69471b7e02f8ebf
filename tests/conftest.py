"""For every test: daemons and scripts started as subprocesses import this checkout's `companion`.

pytest puts the checkout first on its own sys.path, but a subprocess (`python -m companion run`, started from
a temporary directory) would import whichever copy the virtualenv was installed from, e.g. another git
worktree's, and so test other code than this one.
"""

import os
from collections import Counter
from pathlib import Path

ROOT = str(Path(__file__).resolve().parents[1])
_paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p != ROOT]
os.environ["PYTHONPATH"] = os.pathsep.join([ROOT, *_paths])


def pytest_collection_modifyitems(config, items):
    """The heaviest test files first: `make test` hands files to its workers in this order (pytest-xdist's
    loadfile with --no-loadscope-reorder), and a long file handed out last would hold up the end of the run
    while the other workers sit idle. Browser tests are the long ones, the more tests the longer; then the
    files marked slow."""
    per_file = Counter(item.path for item in items)

    def weight(item):
        if "browser" in item.path.parts:
            return (0, -per_file[item.path], str(item.path))
        return (1 if item.get_closest_marker("slow") else 2, 0, "")

    items.sort(key=weight)   # stable: the rest, and the tests within each file, keep the order they were collected in
