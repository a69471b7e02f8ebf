"""The acknowledgement record: the last acknowledged event, kept outside SQLite (`<database>.acked`).

Evidence outside SQLite: SQLite silently drops WAL frames whose checksums fail
(a failing SD card), a WAL cut short, or a WAL deleted, and with them acknowledged
events. So after every commit the store also records the last acknowledged event
and the newest games' ids in `<name>.acked` (two checksummed 512-byte slots,
overwritten in turn and fdatasync'ed). At start-up every acknowledged event the
store no longer holds is named in the notice (game, events), and seq numbers
are never handed out twice.

Here: the record itself, what opening knows beyond it (AckCheck), and the missing events grouped into
runs per game for the notice. The log writes the record and compares itself with it (EventStore).
"""

from __future__ import annotations

import errno
import json
import os
import zlib
from dataclasses import dataclass
from pathlib import Path

from companion.foundation.atomic import fsync_dir

ACK_SUFFIX = ".acked"                          # beside the database: the last acknowledged event, outside SQLite
ACK_SLOT = 512
ACK_GAMES = 16                                 # game ids kept in the record: enough to name the games of a lost WAL


class AckRecordError(ValueError):
    """The acknowledgement record exists but neither of its slots can be read."""


@dataclass(frozen=True)
class AckState:
    seq: int                 # the last acknowledged event
    games: list[int]         # the newest games' ids (their first events), oldest first
    n: int                   # how many times the record was written: the newer slot wins


def ack_path(db: str | Path) -> Path:
    p = Path(db)
    return p.with_name(p.name + ACK_SUFFIX)


class AckRecord:
    """`<db>.acked`: two fixed slots, each a line `TCACK <n> <crc32> <json>` padded to 512 bytes.

    A write overwrites the older slot in place and fdatasyncs it: one small write of a block the file
    already has, no rename, no directory sync. A write cut short by a power cut spoils only that slot;
    the other still holds the previous event, which is all a client had been told about at that moment.
    """

    def __init__(self, path: Path):
        self.path = path
        self._fd: int | None = None
        self._n = 0
        self._seq = 0
        self._games: list[int] = []

    def load(self) -> AckState | None:
        """What the record says; None when there is none; AckRecordError when both slots are unreadable.

        Later writes number themselves on from it."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return None
        if not data:
            return None        # created but never written: a crash right after the file was made
        states = [st for st in (_parse_slot(data[i * ACK_SLOT:(i + 1) * ACK_SLOT]) for i in range(2)) if st]
        if not states:
            raise AckRecordError(f"{len(data)} bytes, neither slot valid")
        newest = max(states, key=lambda st: st.n)
        self._n = max(self._n, newest.n)
        return newest

    def reset(self, seq: int, games: list[int]) -> None:
        """Start the record over from what the store holds (both slots, synced, with the directory)."""
        created = not self.path.exists()
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        self._seq, self._games = seq, list(games)[-ACK_GAMES:]
        for _ in range(2):
            self._put()
        if created:
            fsync_dir(self.path.parent)

    def write(self, seq: int, new_games: list[int]) -> None:
        if self._fd is None:
            raise OSError(errno.EBADF, "the record is not open")
        self._seq = seq
        if new_games:
            self._games = (self._games + new_games)[-ACK_GAMES:]
        self._put()

    def _put(self) -> None:
        self._n += 1
        body = json.dumps({"seq": self._seq, "games": self._games}, separators=(",", ":"))
        text = f"{self._n} {body}"
        line = f"TCACK {zlib.crc32(text.encode()):08x} {text}".encode()
        if len(line) >= ACK_SLOT:
            raise OSError(errno.EOVERFLOW, "the acknowledgement record outgrew its slot")
        os.pwrite(self._fd, line.ljust(ACK_SLOT - 1) + b"\n", (self._n % 2) * ACK_SLOT)
        os.fdatasync(self._fd)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _parse_slot(raw: bytes) -> AckState | None:
    try:
        magic, crc, text = raw.rstrip(b" \n").decode("ascii").split(" ", 2)
        if magic != "TCACK" or int(crc, 16) != zlib.crc32(text.encode()):
            return None
        n, body = text.split(" ", 1)
        data = json.loads(body)
        seq, games = data["seq"], data["games"]
        if not isinstance(seq, int) or not all(isinstance(g, int) for g in games):
            return None
        return AckState(seq, [int(g) for g in games], int(n))
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        return None


@dataclass(frozen=True)
class LostRun:
    """Consecutive missing events of one game (game None: which game is not known)."""
    game: int | None
    first: int
    last: int
    why: str | None = None


@dataclass
class AckCheck:
    """What open_store knows beyond the record when it opens a rebuilt store.

    floor: events up to it are known to be complete (a restored backup); None: the store's last event.
    ceiling: the highest event the damaged file claimed; hints: seq -> game read from its index;
    reasons: seq -> why the event could not be salvaged; games: game ids seen in the damaged file."""
    floor: int | None = None
    ceiling: int = 0
    hints: dict[int, int] = None  # type: ignore[assignment]
    reasons: dict[int, str] = None  # type: ignore[assignment]
    games: list[int] = None  # type: ignore[assignment]

    def __post_init__(self):
        self.hints = dict(self.hints or {})
        self.reasons = dict(self.reasons or {})
        self.games = list(self.games or [])


def lost_runs(missing: list[int], games: list[int], reliable_from: int | None, hints: dict[int, int],
              reasons: dict[int, str]) -> list[LostRun]:
    """Group missing seqs into runs per game: an event belongs to the newest game started at or before it.

    That is certain from the oldest game the record lists on (it lists every game since); before it only
    the damaged file's index (hints) can tell."""
    import bisect

    def game_of(q: int) -> int | None:
        if q in hints:
            return hints[q]
        i = bisect.bisect_right(games, q)
        g = games[i - 1] if i else None
        if g is None or reliable_from is None or g < reliable_from:
            return None
        return g

    runs: list[LostRun] = []
    for q in missing:
        g, why = game_of(q), reasons.get(q)
        if runs and runs[-1].last == q - 1 and runs[-1].game == g and runs[-1].why == why:
            runs[-1] = LostRun(g, runs[-1].first, q, why)
        else:
            runs.append(LostRun(g, q, q, why))
    return runs


def describe_runs(runs: list[LostRun], limit: int = 12) -> str:
    """`game 398: events 412–437; game ?: event 3 (its body is not valid JSON)` (stable: tests and benches parse it)."""
    parts = []
    for r in runs[:limit]:
        span = f"event {r.first}" if r.first == r.last else f"events {r.first}–{r.last}"
        whole = " (from the game's first event)" if r.game == r.first else ""
        why = f" ({r.why})" if r.why else ""
        parts.append(f"game {r.game if r.game is not None else '?'}: {span}{whole}{why}")
    if len(runs) > limit:
        parts.append(f"and {len(runs) - limit} more run(s)")
    return "; ".join(parts)
