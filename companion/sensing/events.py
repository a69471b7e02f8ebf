"""What the follower reports: physical events, and the change each came from."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from companion.sensing.fit import FitCheck
from companion.sensing.inference import Candidate, Geometry, Measurement, Scored, TrackedPawn

EVENT_KINDS = ("place", "remove", "move", "tip", "untip")   # what `companion analyze` prints
TOP_CANDIDATES = 6
MAX_ALTERNATIVES = 8     # an arm resting on the board can leave dozens open; the likeliest say enough
DESCRIBED_SURE = 0.99    # a description the other ways to the same pawns hold more than 1 % against is flagged


@dataclass(frozen=True)
class Change:
    """One settled-to-settled change of the arm and how it was explained."""

    t: float
    best: Candidate | None               # None: nothing one hand can do explains it
    ranked: tuple[Scored, ...]           # best first (the top few)
    alternatives: tuple[Scored, ...]     # those the sensors cannot tell from the best
    confidence: float
    ambiguous: bool
    measurement: Measurement
    before: tuple[TrackedPawn, ...]
    after: tuple[TrackedPawn, ...]
    geometry: Geometry = field(repr=False, compare=False)
    hands_off_t: float = 0.0             # when the cells saw the hands go
    # when the arm began to swing free, as the accelerometer showed it (slow cells see the hands go later)
    swing_from: float = 0.0
    # every account of the pawns the follower held just before (log weight, pawns), best first
    beliefs_before: tuple[tuple[float, tuple[TrackedPawn, ...]], ...] = field(default=(), repr=False, compare=False)
    # how sure the description of `best` is among those that leave the same pawns (a beat of like pawns and the
    # mover's removal; only the hands tell them apart), and the others with their probabilities
    described: float = 1.0
    retold: tuple[tuple[Candidate, float], ...] = field(default=(), repr=False, compare=False)
    fit: FitCheck | None = field(default=None, repr=False, compare=False)   # how well `best` explains the readings
    # decided with the verdict the longest wait gives: at it, or once a longer look could no longer change it
    last_look: bool = field(default=False, compare=False)

    @property
    def flagged(self) -> bool:
        """Whether what is reported may not be what happened: the pawns now on the arm (`ambiguous`), or only the
        way they got there (another description holds more than 1 - DESCRIBED_SURE of the change)."""
        return self.ambiguous or self.described < DESCRIBED_SURE

    def candidates(self) -> list[dict]:
        return [s.to_dict() for s in self.ranked]

    def alternative_texts(self) -> list[dict]:
        """What else the sensors say could have happened: those they cannot tell from the best, or (when it was
        judged ambiguous by what remained) the others still over 1 %, each with its probability."""
        others = [s for s in self.alternatives if s.candidate != self.best]
        if not others and self.ambiguous:
            others = [s for s in self.ranked if s.candidate != self.best and s.probability >= 0.01]
        texts = [(s.candidate.describe(), s.probability) for s in others]
        if self.described < DESCRIBED_SURE:
            # the same pawns reached another way: first what else the hands may have done, then the rest
            texts = [(c.describe(), q) for c, q in self.retold if q >= 0.01] + texts
        return [{"text": text, "probability": round(p, 4)} for text, p in texts[:MAX_ALTERNATIVES]]

    def events(self) -> list["ArmEvent"]:
        b = self.best
        if b is None or b.kind == "none":
            return []
        common = {"t": self.t, "confidence": self.confidence, "ambiguous": self.flagged, "change": self}
        if b.kind == "place":
            return [ArmEvent(event="place", size=b.size, holder=b.holder, **common)]
        if b.kind == "remove":
            return [ArmEvent(event="remove", size=b.size, holder=b.holder, **common)]
        if b.kind == "move":
            return [ArmEvent(event="move", size=b.size, from_holder=b.from_holder, to_holder=b.to_holder, **common)]
        if b.kind == "beat":
            return [ArmEvent(event="move", size=b.size, from_holder=b.from_holder, to_holder=b.to_holder, **common),
                    ArmEvent(event="remove", size=b.victim[1], holder=b.victim[0], **common)]
        return [ArmEvent(event="remove", size=s, holder=h, **common) for h, s in b.removed]


@dataclass(frozen=True)
class ArmEvent:
    """One line of `companion analyze`: a physical event, decided at trace time `t`.

    `event` is place / remove / move / tip / untip, or, which only the daemon sees, "unexplained" (the arm settled
    in a state no single hand action explains; `message` says where to look, `details` the figures) or "unsure"
    (nothing changed was the likeliest account, not surely, after hands that took or left weight). `change` links
    back to the measurement and the ranked candidates, which is what `match_moves` needs.
    """

    t: float
    event: str
    size: str | None = None
    holder: str | None = None
    from_holder: str | None = None
    to_holder: str | None = None
    confidence: float = 1.0
    ambiguous: bool = False
    change: Change | None = field(default=None, repr=False, compare=False)
    message: str | None = None
    details: str | None = None        # the sensors' figures behind `message`

    @property
    def candidates(self) -> list[dict]:
        return self.change.candidates() if self.change is not None else []

    def to_json(self, *, candidates: bool = False, digits: int = 3) -> dict[str, Any]:
        d: dict[str, Any] = {"t": round(self.t, digits), "event": self.event}
        if self.size is not None:
            d["size"] = self.size
        if self.holder is not None:
            d["holder"] = self.holder
        if self.from_holder is not None:
            d["from"] = self.from_holder
        if self.to_holder is not None:
            d["to"] = self.to_holder
        d["confidence"] = round(self.confidence, 4)
        d["ambiguous"] = self.ambiguous
        if self.message is not None:
            d["message"] = self.message
        if self.details is not None:
            d["details"] = self.details
        if self.ambiguous and self.change is not None:
            d["alternatives"] = self.change.alternative_texts()
        if candidates and self.change is not None:
            d["candidates"] = self.change.candidates()
            d["measured"] = self.change.measurement.to_dict()
            if self.change.fit is not None:
                d["fit"] = self.change.fit.to_dict()
        return d
