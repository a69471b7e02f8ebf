"""write_atomic: temp file in the same directory, fsync, rename, fsync the directory; never a half file."""

import json
import os
import random
import signal
import stat
import subprocess
import sys
import time

import pytest

from companion.foundation import atomic
from companion.foundation.atomic import write_atomic, write_atomic_bytes


def leftovers(directory):
    return [p.name for p in directory.iterdir() if p.name.startswith(".")]


def test_writes_the_text_and_leaves_no_temp_file(tmp_path):
    target = tmp_path / "calibration.toml"
    assert write_atomic(target, "a = 1\n") == target
    assert target.read_text() == "a = 1\n"
    write_atomic(target, "a = 2\nb = 'é'\n")
    assert target.read_text(encoding="utf-8") == "a = 2\nb = 'é'\n"
    assert leftovers(tmp_path) == []


def test_keeps_the_mode_of_the_file_it_replaces(tmp_path):
    target = tmp_path / "companion.toml"
    target.write_text("old")
    target.chmod(0o600)
    write_atomic(target, "new")
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    fresh = tmp_path / "fresh.toml"
    write_atomic(fresh, "x")
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o644
    write_atomic(fresh, "y", mode=0o640)
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o640


def test_syncs_the_file_before_the_rename_and_the_directory_after(tmp_path, mocker):
    target = tmp_path / "cal.json"
    calls = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        kind = "dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file"
        calls.append(("fsync", kind))
        return real_fsync(fd)

    def replace(src, dst):
        calls.append(("rename", os.path.dirname(src) == str(tmp_path)))
        return real_replace(src, dst)

    mocker.patch.object(atomic.os, "fsync", side_effect=fsync)
    mocker.patch.object(atomic.os, "replace", side_effect=replace)
    write_atomic(target, "{}")
    # the temp file lives in the target's directory (a rename across file systems would not be atomic)
    assert calls == [("fsync", "file"), ("rename", True), ("fsync", "dir")]


@pytest.mark.parametrize("failing", ["write", "fsync", "replace"])
def test_a_failure_leaves_the_old_file_whole_and_no_temp_file(tmp_path, mocker, failing):
    target = tmp_path / "companion.toml"
    target.write_text("old = true\n")
    error = OSError(28, "No space left on device")
    if failing == "write":
        real_fdopen = os.fdopen

        class DiskFull:
            """The temp file's handle, on a disk that fills up at the first write."""

            def __init__(self, fd, mode):
                self.f = real_fdopen(fd, mode)

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                self.f.close()

            def write(self, data):
                raise error

        mocker.patch.object(atomic.os, "fdopen", side_effect=DiskFull)
    else:
        mocker.patch.object(atomic.os, failing, side_effect=error)
    with pytest.raises(OSError, match="No space left"):
        write_atomic(target, "new = true\n" * 1000)
    assert target.read_text() == "old = true\n"
    assert leftovers(tmp_path) == []


def test_a_reader_never_sees_a_half_written_file_even_when_the_writer_is_killed(tmp_path):
    """A writer rewrites a large JSON file in a loop and is kill -9'ed at random moments; the file always parses."""
    target = tmp_path / "state.json"
    write_atomic(target, json.dumps({"n": -1, "pad": "x" * 200_000}))
    code = ("import json, sys; from companion.foundation.atomic import write_atomic\n"
            "n = 0\n"
            "while True:\n"
            "    write_atomic(sys.argv[1], json.dumps({'round': int(sys.argv[2]), 'n': n,\n"
            "                                          'pad': 'x' * (200_000 + n % 977)}))\n"
            "    n += 1\n")
    rng = random.Random(4)
    seen = set()
    for r in range(6):
        writer = subprocess.Popen([sys.executable, "-c", code, str(target), str(r)])
        # the kill comes at a random moment of the writing, which starts once the writer's Python is up: on a busy
        # machine that alone can take longer than the whole window did
        started = time.monotonic() + 30
        while json.loads(target.read_text()).get("round") != r and time.monotonic() < started:
            time.sleep(0.005)
        deadline = time.monotonic() + rng.uniform(0.2, 0.5)
        while time.monotonic() < deadline:
            data = json.loads(target.read_text())               # readers during the writes
            seen.add((data.get("round"), data["n"]))
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=10)
        data = json.loads(target.read_text())                  # and after the kill
        assert data.get("round") == r, "the writer never got to write before it was killed"
        assert len(data["pad"]) == 200_000 + max(data["n"], 0) % 977
    assert len(seen) > 3
    # a kill between mkstemp and rename may leave a temp file, never a damaged target
    assert all(p.name.startswith(".state.json.") and p.name.endswith(".tmp") for p in tmp_path.iterdir()
               if p != target)


def test_bytes_and_relative_paths(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_atomic_bytes("blob.bin", b"\x00\x01\x02")
    assert (tmp_path / "blob.bin").read_bytes() == b"\x00\x01\x02"
    assert leftovers(tmp_path) == []
