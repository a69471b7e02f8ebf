"""For every test: daemons and scripts started as subprocesses import this checkout's `companion`.

pytest puts the checkout first on its own sys.path, but a subprocess (`python -m companion run`, started from
a temporary directory) would import whichever copy the virtualenv was installed from, e.g. another git
worktree's, and so test other code than this one.
"""

import os
from pathlib import Path

ROOT = str(Path(__file__).resolve().parents[1])
_paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p != ROOT]
os.environ["PYTHONPATH"] = os.pathsep.join([ROOT, *_paths])
