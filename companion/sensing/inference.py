"""Which physical change explains a measured (ΔW, Δτ): candidates, likelihoods, ambiguity.

Pure functions of the arm's geometry, the pawns believed to be on it, and one
measurement. No game rules: a candidate is anything a hand can do to the arm in
one go — put a pawn of size S in holder h, take the pawn out of h, move it from
j to k, move it into k and take another pawn out (a beat), or clear the arm.

Pawns of one size look alike to the sensors, so candidates are compared by
their *net* effect on the occupancy: an L pawn beating an L pawn leaves the
same pawns in the same holders as the mover's own removal, and is reported as
such (the game layer matches it back to the beat; see `match_moves`).

Each pawn on the arm carries its own mass estimate: a pawn placed under the
sensors is weighed as it lands (to a few hundredths of a gram), a pawn the game
declared is assumed nominal with the configured spread. Predictions then carry
the spread of the masses involved, so two moves that differ by less than the
pawns' own variation are called indistinguishable instead of guessed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Mapping, Sequence

from companion.games.balance_model import Model
from companion.sensing.swing import G_MM_S2
from companion.sensing.fit import FitCheck, NOISE_DOF, chi2_sf, f_sf, judged, mixed

SQRT2 = math.sqrt(2.0)
LOG_TINY = -1e6
# how often each kind of change happens when a hand touches the arm, shared among that kind's
# candidates: when the sensors cannot tell candidates apart (the arm resting on the board), "nothing
# changed" — one candidate — is not outvoted by two hundred equally silent moves
KIND_SHARE = {"none": 0.15, "place": 0.3, "move": 0.3, "remove": 0.1, "beat": 0.1, "clear": 0.05}
KIND_ORDER = {"none": 0, "place": 1, "remove": 2, "move": 3, "beat": 4, "clear": 5}


def _log_phi(z: float) -> float:
    """log of the standard normal CDF, finite far into the lower tail."""
    if z > -30:
        return math.log(max(1e-300, 0.5 * math.erfc(-z / SQRT2)))
    return -0.5 * z * z - math.log(-z) - 0.5 * math.log(2 * math.pi)


@dataclass(frozen=True)
class Geometry:
    """What sensing knows of the arm: holder positions and sizes, pawn masses, the tipping torque."""

    x: Mapping[str, float]
    capacity: Mapping[str, int]
    beats: Mapping[str, tuple[str, ...]]
    mass: Mapping[str, float]
    mass_sigma: Mapping[str, float]
    tip_torque: float
    tip_sigma: float
    order: tuple[str, ...]
    # where the holders nobody measured may sit about `x`: their covariance (mm², holder -> holder -> value), each
    # holder's own error and the spacing's (from_model), narrowed as confirmed changes show them (place_fit.py)
    x_cov: Mapping[str, Mapping[str, float]] = field(default_factory=dict)

    @classmethod
    def from_model(cls, model: Model, *, holder_x: Mapping[str, float] | None = None,
                   tip_torque: float | None = None, unmeasured: Iterable[str] = ()) -> "Geometry":
        """The model's arm, its holders where `holder_x` measured them; those named `unmeasured` carry the
        uncertainty of a home-made arm's holders (`holder_sigma_mm` each, UNMEASURED_SPACING all together)."""
        holder_x = holder_x or {}
        phys = model.physics
        loose = set(unmeasured)
        return cls(
            x={h.id: float(holder_x.get(h.id, h.x_mm)) for h in model.holders},
            capacity={h.id: h.capacity for h in model.holders},
            beats={h.id: tuple(h.beats) for h in model.holders},
            mass=dict(phys.pawn_mass_g),
            mass_sigma=dict(phys.mass_sigma_g),
            tip_torque=model.tip_torque if tip_torque is None else tip_torque,
            tip_sigma=phys.tip_sigma_gmm,
            order=tuple(h.id for h in model.holders),
            x_cov={a: {b: (holder_sigma_mm(model, a) ** 2 if a == b else 0.0)
                          + (UNMEASURED_SPACING ** 2) * model.by_id[a].x_mm * model.by_id[b].x_mm for b in sorted(loose)}
                   for a in sorted(loose)},
        )


# A holder nobody measured sits where the arm's maker put it, not where the model draws it. The calibration takes a
# holder a third of the way to its neighbour's place as the most a believable arm is off (`holders_problem` refuses
# beyond half of it): that as 2σ of each holder's own error, and a spacing off by a few per cent as a whole (one saw
# cut, one ruler) as 2σ of 4 %. What this leaves in a candidate's torque is `Candidate.c_place`.
UNMEASURED_SPACING = 0.02


def holder_sigma_mm(model: Model, holder: str) -> float:
    """1σ of where an unmeasured holder sits about its place in the model: a sixth of the gap to its nearest
    neighbour (a third of the way there is 2σ off)."""
    x = model.by_id[holder].x_mm
    gap = min((abs(o.x_mm - x) for o in model.holders if o.id != holder and o.x_mm != x), default=abs(x))
    return gap / 6.0


def place_variance(geo: Geometry, moved: Mapping[str, float]) -> float:
    """The variance the holders' unmeasured places leave in a torque Σ a_j·x_j (`moved`: holder -> a_j, grams)."""
    cov = geo.x_cov
    if not cov:
        return 0.0
    loose = [(h, a) for h, a in moved.items() if a and h in cov]
    return sum(a * b * cov[h][k] for h, a in loose for k, b in loose)


@dataclass(frozen=True)
class TrackedPawn:
    holder: str
    size: str
    mass_g: float
    sigma_g: float
    # the mass of a like pawn this one may really be, and how likely: after look-alike changes the follower could
    # not keep every account of which pawn went where, a pawn's mass is only as sure as its identity (identity.py)
    alt_g: float = 0.0
    doubt: float = 0.0


def inertia_of(geo: Geometry, pawns: Iterable[TrackedPawn]) -> float:
    """Σ m·x² of the pawns: what they add to the arm's moment of inertia (g·mm²)."""
    x = geo.x
    return sum(p.mass_g * x[p.holder] ** 2 for p in pawns)


def nominal_pawns(geo: Geometry, pawns: Iterable[tuple[str, str]]) -> list[TrackedPawn]:
    """Pawns declared from outside (the game): nominal mass, configured spread."""
    out = []
    for holder, size in pawns:
        if holder not in geo.x:
            raise ValueError(f"no holder {holder!r} on this arm (holders: {', '.join(geo.order)})")
        if size not in geo.mass:
            raise ValueError(f"no pawn size {size!r} (sizes: {', '.join(sorted(geo.mass))})")
        out.append(TrackedPawn(holder, size, geo.mass[size], geo.mass_sigma[size]))
    return out


def model_torque(geo: Geometry, pawns: Sequence[TrackedPawn]) -> tuple[float, float]:
    """(Σ x·m, its variance: the pawns' masses and the holders' unmeasured places) of the pawns."""
    x = geo.x
    tau = sum(x[p.holder] * p.mass_g for p in pawns)
    var = sum((x[p.holder] * p.sigma_g) ** 2 for p in pawns)
    if geo.x_cov:
        held: dict[str, float] = {}
        for p in pawns:
            held[p.holder] = held.get(p.holder, 0.0) + p.mass_g
        var += place_variance(geo, held)
    return tau, var


@dataclass(frozen=True)
class Candidate:
    """One physical change and what it predicts for (ΔW, Δτ), with the covariance of pawn masses."""

    kind: str                                   # none | place | remove | move | beat | clear
    size: str | None = None
    holder: str | None = None                   # place / remove
    from_holder: str | None = None              # move / beat
    to_holder: str | None = None
    victim: tuple[str, str] | None = None       # beat: (holder, size) taken out
    removed: tuple[tuple[str, str], ...] = ()   # net effect, (holder, size) sorted
    added: tuple[tuple[str, str], ...] = ()
    mean_w: float = 0.0
    mean_t: float = 0.0
    c_ww: float = 0.0
    c_wt: float = 0.0
    c_tt: float = 0.0
    d_inertia: float = 0.0                      # what it adds to the arm's moment of inertia, Σ m·x² (g·mm²)
    # the torque's variance from holders nobody measured (place_variance): apart from c_tt, since it blurs what the
    # readings say of each candidate, not what a long look could tell apart on the arm as it is
    c_place: float = 0.0
    touch_x: tuple[float, ...] = field(default=(), compare=False)   # where the hands would touch, in order (mm)
    # a move's or beat's mover as its first touch lifts it: (mass, 1σ) in g, as the pawns are tracked
    lifts: tuple[float, float] | None = field(default=None, compare=False)
    # how to apply it to the tracked pawns: indices removed, index moved and where, sizes placed
    take: tuple[int, ...] = field(default=(), compare=False)
    relocate: tuple[int, str] | None = field(default=None, compare=False)
    put: tuple[tuple[str, str], ...] = field(default=(), compare=False)
    # when a pawn it takes or moves may be another like pawn (TrackedPawn.doubt): how likely, and the change as it
    # then predicts the weight and torque
    alt: tuple[float, "Candidate"] | None = field(default=None, compare=False)
    # "nothing changed" after hands that moved weight is a pawn lifted and put back where it was: each pawn that may
    # have been, (x, mass, 1σ, size), as the pawns are tracked
    put_backs: tuple[tuple[float, float, float, str], ...] = field(default=(), compare=False)

    @property
    def key(self) -> tuple:
        return (self.removed, self.added)

    def describe(self) -> str:
        if self.kind == "none":
            return "no change"
        if self.kind == "place":
            return f"place {self.size} in {self.holder}"
        if self.kind == "remove":
            return f"remove {self.size} from {self.holder}"
        if self.kind == "move":
            return f"move {self.size} {self.from_holder} → {self.to_holder}"
        if self.kind == "beat":
            return (f"move {self.size} {self.from_holder} → {self.to_holder} "
                    f"and remove {self.victim[1]} from {self.victim[0]}")
        return "clear the arm (" + ", ".join(f"{s} from {h}" for h, s in self.removed) + ")"

    def to_dict(self) -> dict:
        d: dict[str, Any] = {"kind": self.kind, "text": self.describe()}
        for k in ("size", "holder", "from_holder", "to_holder"):
            v = getattr(self, k)
            if v is not None:
                d[k] = v
        if self.victim:
            d["victim"] = {"holder": self.victim[0], "size": self.victim[1]}
        if self.kind == "clear":
            d["removed"] = [{"holder": h, "size": s} for h, s in self.removed]
        d["predicted"] = {"weight_g": round(self.mean_w, 2), "torque_gmm": round(self.mean_t, 1)}
        return d


def _net(removed: list[tuple[str, str]], added: list[tuple[str, str]]) -> tuple[tuple, tuple]:
    rem = list(removed)
    add = []
    for a in added:
        if a in rem:
            rem.remove(a)
        else:
            add.append(a)
    return tuple(sorted(rem)), tuple(sorted(add))


def build_candidate(geo: Geometry, kind: str, pawns: Sequence[TrackedPawn], *, take: Sequence[int] = (),
           relocate: tuple[int, str] | None = None, put: Sequence[tuple[str, str]] = (),
           **desc: Any) -> Candidate:
    """Prediction for taking pawns `take`, moving pawn `relocate`, placing new pawns `put`."""
    x = geo.x
    (mw, mt, cww, cwt, ctt), di, moved = _predicted(geo, pawns, take, relocate, put)
    removed = [(pawns[i].holder, pawns[i].size) for i in take]
    added = [(holder, size) for holder, size in put]
    if relocate is not None:
        removed.append((pawns[relocate[0]].holder, pawns[relocate[0]].size))
        added.insert(0, (relocate[1], pawns[relocate[0]].size))
    rem, add = _net(removed, added)
    alt = None
    involved = list(take) + ([relocate[0]] if relocate is not None else [])
    doubted = [i for i in involved if pawns[i].doubt > 0.0]
    if doubted:
        # the pawns it takes or moves as the like pawns they may be (each doubt taken together: one swap at a time
        # is what the follower could not keep apart)
        others = list(pawns)
        sure = 1.0
        for i in doubted:
            p = pawns[i]
            others[i] = TrackedPawn(p.holder, p.size, p.alt_g, p.sigma_g)
            sure *= 1.0 - p.doubt
        alt = (1.0 - sure, _predicted(geo, others, take, relocate, put)[0])
    lifts = None
    if kind == "place":
        touched: tuple[float, ...] = (x[put[0][0]],)
    elif kind == "remove":
        touched = (x[pawns[take[0]].holder],)
    elif kind in ("move", "beat") and relocate is not None:
        # lifted at the source, set down at the target (which takes the beaten pawn away too)
        touched = (x[pawns[relocate[0]].holder], x[relocate[1]])
        mover = pawns[relocate[0]]
        lifts = (mover.mass_g, mover.sigma_g)
    else:
        touched = ()
    put_backs = tuple(sorted({(x[p.holder], p.mass_g, p.sigma_g, p.size) for p in pawns})) if kind == "none" else ()
    c_place, take, put = place_variance(geo, moved), tuple(take), tuple(put)
    if alt is not None:
        q, (aw, at, aww, awt, att) = alt
        alt = (q, Candidate(kind=kind, removed=rem, added=add, mean_w=aw, mean_t=at, c_ww=aww, c_wt=awt, c_tt=att,
                            d_inertia=di, c_place=c_place, touch_x=touched, lifts=lifts, take=take,
                            relocate=relocate, put=put, **desc))
    return Candidate(kind=kind, removed=rem, added=add, mean_w=mw, mean_t=mt, c_ww=cww, c_wt=cwt, c_tt=ctt,
                     d_inertia=di, c_place=c_place, touch_x=touched, lifts=lifts, take=take, relocate=relocate,
                     put=put, alt=alt, put_backs=put_backs, **desc)


def _predicted(geo: Geometry, pawns: Sequence[TrackedPawn], take: Sequence[int], relocate: tuple[int, str] | None,
               put: Sequence[tuple[str, str]]) -> tuple[tuple[float, float, float, float, float], float, dict]:
    """((ΔW, Δτ, their covariance ww, wt, tt), Δ Σ m·x², each holder's net change of mass) of a change."""
    x = geo.x
    mw = mt = cww = cwt = ctt = di = 0.0
    moved: dict[str, float] = {}     # each holder's net change of mass (g)
    for i in take:
        p = pawns[i]
        moved[p.holder] = moved.get(p.holder, 0.0) - p.mass_g
        gx = x[p.holder]
        v = p.sigma_g * p.sigma_g
        mw -= p.mass_g
        mt -= gx * p.mass_g
        di -= p.mass_g * gx * gx
        cww += v
        cwt += gx * v
        ctt += gx * gx * v
    if relocate is not None:
        i, dest = relocate
        p = pawns[i]
        moved[p.holder] = moved.get(p.holder, 0.0) - p.mass_g
        moved[dest] = moved.get(dest, 0.0) + p.mass_g
        dx = x[dest] - x[p.holder]
        mt += dx * p.mass_g
        di += p.mass_g * (x[dest] ** 2 - x[p.holder] ** 2)
        ctt += dx * dx * p.sigma_g * p.sigma_g
    for holder, size in put:
        gx = x[holder]
        m = geo.mass[size]
        moved[holder] = moved.get(holder, 0.0) + m
        v = geo.mass_sigma[size] ** 2
        mw += m
        mt += gx * m
        di += m * gx * gx
        cww += v
        cwt += gx * v
        ctt += gx * gx * v
    return (mw, mt, cww, cwt, ctt), di, moved


def enumerate_candidates(geo: Geometry, pawns: Sequence[TrackedPawn], memo: dict | None = None) -> list[Candidate]:
    """Every change one hand can make in one go, given the pawns on the arm.

    `memo` (kept by the caller for one `geo`) holds candidates built before: a move's depends only on its pawn, that
    pawn's place in the list and where it goes, a placement on nothing on the arm — the accounts of one table share
    most of theirs, change after change."""
    if memo is None:
        memo = {}

    def made(key: tuple, kind: str, **how: Any) -> Candidate:
        c = memo.get(key)
        if c is None:
            c = memo[key] = build_candidate(geo, kind, pawns, **how)
        return c

    count: dict[str, int] = {}
    for p in pawns:
        count[p.holder] = count.get(p.holder, 0) + 1
    cap = geo.capacity
    out = [made(("none",) + tuple((p.holder, p.size, p.mass_g, p.sigma_g) for p in pawns), "none")]
    for h in geo.order:
        if count.get(h, 0) < cap[h]:
            for size in geo.mass:
                out.append(made(("place", h, size), "place", put=[(h, size)], size=size, holder=h))
    seen_variant: set[tuple] = set()
    for i, p in enumerate(pawns):
        variant = (p.holder, p.size, p.mass_g)
        if variant in seen_variant:
            continue  # a second pawn of the same size and weight in the same holder changes nothing
        seen_variant.add(variant)
        out.append(made(("remove", i, p), "remove", take=[i], size=p.size, holder=p.holder))
        for k in geo.order:
            if k == p.holder:
                continue
            if count.get(k, 0) < cap[k]:
                out.append(made(("move", i, p, k), "move", relocate=(i, k), size=p.size, from_holder=p.holder,
                                to_holder=k))
            for j, v in enumerate(pawns):
                if j == i or v.holder not in geo.beats[k]:
                    continue
                room = count.get(k, 0) - (1 if v.holder == k else 0)
                if room < cap[k]:
                    out.append(made(("beat", i, p, k, j, v), "beat", take=[j], relocate=(i, k), size=p.size,
                                    from_holder=p.holder, to_holder=k, victim=(v.holder, v.size)))
    if len(pawns) >= 2:
        out.append(build_candidate(geo, "clear", pawns, take=list(range(len(pawns)))))
    return out


def apply_candidate(geo: Geometry, pawns: Sequence[TrackedPawn], cand: Candidate, *,
                    placed_mass: tuple[float, float] | None = None) -> list[TrackedPawn]:
    """The tracked pawns after `cand`; a placed pawn gets `placed_mass` (value, σ) when it was weighed."""
    out = list(pawns)
    if cand.relocate is not None:
        i, dest = cand.relocate
        out[i] = replace(out[i], holder=dest)
    for i in sorted(cand.take, reverse=True):
        del out[i]
    for holder, size in cand.put:
        if placed_mass is not None:
            m, s = placed_mass
            out.append(TrackedPawn(holder, size, m, s))
        else:
            out.append(TrackedPawn(holder, size, geo.mass[size], geo.mass_sigma[size]))
    return out


@dataclass(frozen=True)
class Measurement:
    """One settled-to-settled change as the sensors saw it.

    Torques are absolute (g·mm, tared): `tau0` is the rest torque before (measured,
    or — when the arm rested on the board and the angle said nothing — the model's
    torque of the pawns then on it), `tau1` after. `censored1` is +1/-1 when the arm
    rests on the board on that side afterwards (only |τ| ≥ τ_tip is then known).
    A missing accelerometer gives infinite torque variances: weight alone decides.

    `fan` (with `swing`, which predicts the arm's ω from its Σ m·x²) holds the swing after the
    change fitted at a range of frequencies: a candidate is then judged by the rest torque at the
    frequency it would leave the arm swinging at, and by how well that frequency fits the swing
    itself. `tau1` is then the rest at the frequency that fits best.
    """

    dw: float
    var_dw: float
    tau0: float
    var_tau0: float
    tau1: float
    var_tau1: float
    censored1: int = 0
    tip_torque: float = 0.0
    tip_var: float = 0.0
    rel_w: float = 0.005
    rel_t: float = 0.01
    fan: Any = field(default=None, compare=False, repr=False)
    swing: Any = field(default=None, compare=False, repr=False)
    touches: tuple = field(default=(), compare=False, repr=False)     # the hands' touches (touches.Touch)
    # the same gesture's touches fitted for a move of each pawn size (the pause between its touches is then
    # known to carry that pawn less): size -> touches
    touches_by_size: Any = field(default=None, compare=False, repr=False)
    finger_mm: float = field(default=12.0, compare=False, repr=False)    # the hands' spread about a holder (1σ)
    touch_gain: float = field(default=1.0, compare=False, repr=False)    # a touch at x is located at about gain · x
    # what the touches were located from (settling.Gesture), to learn the cells' settling once the game confirms
    gesture: Any = field(default=None, compare=False, repr=False)
    # a touch's located σ is about scale · σ (a number, or touches.TouchScale: its own for each σ)
    touch_scale: Any = field(default=1.0, compare=False, repr=False)
    touch_astray: float = field(default=0.0, compare=False, repr=False)  # the share of gestures located astray
    # the share of gestures that held the arm at the board placed toward the pivot (touches.HandSpread.clipped)
    touch_clipped: float = field(default=0.0, compare=False, repr=False)
    # log of the share of gestures found in more touches than made (touches.TouchCounts; None: IN_PIECES's)
    touch_pieces: float | None = field(default=None, compare=False, repr=False)
    # the touches as other shapes of the cells' settling, nearly as likely, place them: (log of how much likelier
    # than the shape `touches` came through, touches, touches_by_size)
    other_touches: tuple = field(default=(), compare=False, repr=False)
    # which way the first touch pushed an arm resting free onto the board, if it did (touches.Push)
    push: Any = field(default=None, compare=False, repr=False)
    # what a two-touch gesture's pause showed its first touch lifted off, when the cells settled in it
    # (touches.pause_lift: g, 1σ), and how far apart a lift read astray may fall (g)
    lift: tuple = field(default=(), compare=False, repr=False)
    # what the arm's free swing in that pause showed the first touch took off, for a mover of each size
    # (pause_swing.lifted_torque: size -> (g·mm, 1σ)), when it left the board from rest there
    lift_torque: Any = field(default=None, compare=False, repr=False)
    # that swing ended at the board it had left: pressed back there by a second touch (pause_swing.PauseStretch)
    pause_back: bool = field(default=False, compare=False, repr=False)
    # the zero's drift taken off dw (g), the variance that added, the time between the windows weighed (s), and the
    # part of that variance that is the zero's wander (g²)
    drift: tuple = field(default=(), compare=False, repr=False)
    # how far along the arm a hand may touch (mm): where a touch no holder explains may have fallen
    span_mm: float = field(default=300.0, compare=False, repr=False)
    # the arm's own ω over the settled spell before the change (rad/s) and the variance of its log, or (): each
    # candidate's ω after is that one as its inertia changes it (`swing_after`)
    swing_before: tuple = field(default=(), compare=False, repr=False)
    # the swing the rest was read from, for checking the fit (fit.py): its samples, the single best fit's residual
    # sum of squares (the fan holds one per frequency), and the accelerometer's per-sample variance as assumed
    swing_n: int = field(default=0, compare=False, repr=False)
    swing_rss: float = field(default=math.nan, compare=False, repr=False)
    accel_noise2: float = field(default=0.0, compare=False, repr=False)
    # the tip torque of the arm as it was before the change, when it was seen resting free then at tau0 (0: it was
    # not): its tip torque then lay beyond tau0, which bounds the one after (`_log_tip`)
    tip_before: float = field(default=0.0, compare=False, repr=False)
    # what the touches said of each (touch_x, size) asked about, and with the pause's word on each mover's (mass, σ)
    # (_hands): every belief holds its own copy of most candidates
    _hands_said: dict = field(default_factory=dict, init=False, compare=False, repr=False)
    # ... and what the swing before says for each Σ m·x² of a belief (_swing_before)
    _swing_said: dict = field(default_factory=dict, init=False, compare=False, repr=False)

    def combine(self, later: "Measurement") -> "Measurement":
        """This change followed by `later`, seen as one (for a pawn lifted off and put back elsewhere)."""
        return Measurement(self.dw + later.dw, self.var_dw + later.var_dw, self.tau0, self.var_tau0,
                           later.tau1, later.var_tau1, later.censored1, later.tip_torque, later.tip_var,
                           max(self.rel_w, later.rel_w), max(self.rel_t, later.rel_t), later.fan, later.swing,
                           tuple(self.touches) + tuple(later.touches),   # (two changes: no per-size fit)
                           None, later.finger_mm, later.touch_gain, touch_scale=later.touch_scale,
                           touch_astray=later.touch_astray, touch_clipped=later.touch_clipped,
                           touch_pieces=later.touch_pieces, span_mm=later.span_mm, swing_before=self.swing_before,
                           swing_n=later.swing_n, swing_rss=later.swing_rss, accel_noise2=later.accel_noise2,
                           tip_before=self.tip_before)

    def to_dict(self) -> dict:
        return {
            "weight_change_g": round(self.dw, 3), "weight_sigma_g": round(math.sqrt(self.var_dw), 3),
            "torque_before_gmm": round(self.tau0, 1), "torque_after_gmm": round(self.tau1, 1),
            "torque_sigma_gmm": round(math.sqrt(self.var_tau0 + self.var_tau1), 1)
            if math.isfinite(self.var_tau0 + self.var_tau1) else None,
            "on_board_after": self.censored1 != 0,
        }


# a candidate's ω from the swing measured before it (swing_after): how well κ·g / ω² gives the inertia that swings
# (relative, on the change the candidate predicts), and a floor for the rest that ratio leaves out
RATIO_INERTIA_REL = 0.2
RATIO_FLOOR = 0.002
# ... but a rest read at a candidate's ω is no surer than an ω known to 1 %: at 0.4 % a placement judged 0.35 s into
# a 1.5 Hz swing was read a holder off at 0.9999, and read at the ratio's 0.25 % a beat's rest drifted 3-4σ off
# over a 10 SPS look (our seed 43004), the swing's best ω 0.13 % above the arm's
REST_REL = 0.01
FREQ_TEMPER = 2.0    # the swing's residuals are not white noise (hand tails, a model a little off): trust them less
WIDE_REL = 0.03      # a predicted ω known worse than this (an arm whose swing is not measured yet): see follower.py


def swing_after(c: Candidate, m: Measurement, load: float) -> tuple[float, float]:
    """(ω, its relative σ) the arm would swing at after `c`, from pawns of Σ m·x² `load` before it.

    The follower's prediction (`m.swing`: the arm's physics times what it has learned) knows ω only to its
    rel_sigma — a per cent or more, as much as like pawns' moves differ by. The swing just before the change was
    measured, often to a tenth of that (`m.swing_before`), and a change alters ω only through the inertia it adds:
    ω² = κ·g / I, so ω after = ω before · √(I / (I + ΔI)) with I = κ·g / ω² itself — the ratio needs neither the
    empty arm's inertia nor the learned scale. What it leaves out is put in its σ: how far κ·g / ω² stands for the
    swinging inertia (a loaded arm's pawns above the pivot make it less stiff), and the rest (the rest angle's pull
    on the stiffness, a big swing's nonlinearity). A measurement the prediction disowns (beyond 3σ of both) is
    not used: a swing fitted in the wrong minimum must not make every candidate sure of a wrong ω."""
    omega, rel = m.swing.at(load + c.d_inertia)[0], m.swing.rel_sigma
    base = m._swing_said.get(load)
    if base is None:
        base = m._swing_said[load] = _swing_before(m, load)
    if not base:
        return omega, rel
    before, var_before, inertia = base
    change = -0.5 * math.log(max(0.05, 1.0 + m.swing.swing.growth * c.d_inertia / inertia))
    rel_after = math.sqrt(var_before + (RATIO_INERTIA_REL * change) ** 2 + RATIO_FLOOR ** 2)
    if rel_after >= rel:
        return omega, rel
    return before * math.exp(change), rel_after


def _swing_before(m: Measurement, load: float) -> tuple:
    """(ω before, the variance of its log, the inertia κ·g / ω² it gives) when the swing measured before the change
    fits what the pawns of Σ m·x² `load` predict (within 3σ), else (): the same for every candidate of a belief."""
    if not m.swing_before:
        return ()
    before, var_before = m.swing_before
    rel = m.swing.rel_sigma
    ln_off = math.log(before / m.swing.at(load)[0])
    if ln_off * ln_off > 9.0 * (var_before + rel * rel):
        return ()
    # (a loaded arm's stiffness, and how much of m·x² a pawn adds, as calibrated or learned)
    return before, var_before, m.swing.swing.inertia_at(before, m.swing.mass_g)


def log_likelihood(c: Candidate, m: Measurement, shift: float = 0.0,
                   load: float | None = None) -> tuple[float, float]:
    """(log-likelihood, squared Mahalanobis distance) of `m` if `c` happened.

    `shift` moves the torque before: when the arm rested on the board beforehand, that
    torque comes from the pawns believed on it, and each belief has its own. `load` is the Σ m·x²
    of those pawns: with it (and a swing fan in `m`), the candidate is judged at its own swing.
    """
    return _likelihood_at(c, m, shift, *_rest_of(c, m, load))


EVIDENCE_SOURCES = ("weight and torque", "swing frequency", "touches", "pause")


def evidence_of(c: Candidate, m: Measurement, shift: float = 0.0, load: float | None = None) -> dict[str, float]:
    """`log_likelihood(c, m, shift, load)` split by what said it (EVIDENCE_SOURCES), the parts summing to it: the
    swing's own frequency, where the hands touched, what a move's pause said its mover was, and the rest — the
    weight and the rest torque (with a pawn that may be another like pawn, their mixture). Between two accounts the
    differences of each part say which readings told them apart, and how surely (bench/look_alikes.py)."""
    total = log_likelihood(c, m, shift, load)[0]
    touches = pause = 0.0
    if m.touches and c.touch_x:
        touches = _hands_of(c, m)
        pause = _with_pause(touches, c, m) - touches
    elif m.touches and c.put_backs:
        touches = _hands(c, m)      # (a put-back's touches and pause, mixed over the pawns it may have been)
    frequency = 0.0 if m.fan is None or m.censored1 else _rest_of(c, m, load)[2]
    return {"weight and torque": total - touches - pause - frequency, "swing frequency": frequency,
            "touches": touches, "pause": pause}


def _rest_of(c: Candidate, m: Measurement, load: float | None) -> tuple[float, float, float]:
    """(rest torque, its variance, the log-likelihood of the swing's own ω) that `c` is judged at."""
    tau1, var1, freq_ll = m.tau1, m.var_tau1, 0.0
    if m.fan is not None and load is not None and not m.censored1:
        omega, rel = swing_after(c, m, load)
        if rel > WIDE_REL:
            return _wide_rest(m, omega, rel)
        tau1, var1, _ = m.fan.at(omega)
        # the candidate's ω is a prediction, known to rel: where the rest depends on ω strongly (a short
        # look at a slow swing) that is the torque's uncertainty too — never less than REST_REL, however well the
        # swing before says ω, since the fit's own best ω sits a little off the arm's (a hand's tail, a damping a
        # little off) — and against the ω the swing itself shows it counts only beyond it (a big swing reads a
        # little fast through sin θ; a real pendulum slows)
        var_pred = (omega * rel) ** 2
        var1 += (m.fan.slope(omega) * max(rel, REST_REL)) ** 2
        seen, var_seen = m.fan.frequency(FREQ_TEMPER)
        if math.isfinite(var_seen):
            freq_ll = -0.5 * (omega - seen) ** 2 / (var_seen + var_pred)
    return tau1, var1, freq_ll


def _likelihood_at(c: Candidate, m: Measurement, shift: float, tau1: float, var1: float,
                   freq_ll: float) -> tuple[float, float]:
    """(log-likelihood, squared Mahalanobis distance) of `m` under `c`, its rest torque read as tau1 ± √var1; with
    a pawn it takes or moves perhaps another like pawn (`c.alt`), the mixture of the two, at the likelier one's
    distance."""
    ll, d2 = _gaussian_at(c, m, shift, tau1, var1, freq_ll)
    if c.alt is None:
        return ll, d2
    q, other = c.alt
    ll2, d2b = _gaussian_at(other, m, shift, tau1, var1, freq_ll)
    a, b = math.log1p(-q) + ll, math.log(q) + ll2
    top = max(a, b)
    return top + math.log1p(math.exp(min(a, b) - top)), d2 if a >= b else d2b


def _gaussian_at(c: Candidate, m: Measurement, shift: float, tau1: float, var1: float,
                 freq_ll: float) -> tuple[float, float]:
    rw = m.dw - c.mean_w
    sww = c.c_ww + m.var_dw + (m.rel_w * c.mean_w) ** 2
    if m.censored1:
        pred = m.tau0 + shift + c.mean_t
        var = m.var_tau0 + c.c_tt + c.c_place + m.tip_var + (m.rel_t * c.mean_t) ** 2
        z = (m.censored1 * pred - m.tip_torque) / math.sqrt(var) if math.isfinite(var) else 0.0
        lt = _log_tip(c, m, shift, c.c_tt + c.c_place + (m.rel_t * c.mean_t) ** 2)
        d2w = rw * rw / sww
        return -0.5 * d2w - 0.5 * math.log(sww) + lt + _hands(c, m), d2w + (z * z if z < 0 else 0.0)
    stt = c.c_tt + c.c_place + m.var_tau0 + var1 + (m.rel_t * c.mean_t) ** 2
    if not math.isfinite(stt):
        d2 = rw * rw / sww
        return -0.5 * d2 - 0.5 * math.log(sww) + _hands(c, m), d2
    rt = (tau1 - m.tau0 - shift) - c.mean_t
    swt = c.c_wt
    det = sww * stt - swt * swt
    if det <= 0:
        det = sww * stt
        swt = 0.0
    d2 = (rw * rw * stt - 2 * rw * rt * swt + rt * rt * sww) / det
    return -0.5 * d2 - 0.5 * math.log(det) + freq_ll + _hands(c, m), d2


# the share of arms whose free rest before says nothing of their tip after (a sticky pivot, a pawn caught on the
# board's edge holding an arm down that its torque would lift off): a prior, not a measurement — an account that
# could tip the arm only at a tip torque the free rest before ruled out keeps this share of its old likelihood
STUCK_ON_BOARD = 0.01


def _log_tip(c: Candidate, m: Measurement, shift: float, own_var: float) -> float:
    """log P(the arm rests on the board on side `m.censored1` after `c`), `own_var` the variance of c's torque.

    The arm's tip torque is known only to `m.tip_var`; but an arm seen resting free just before the change (at
    tau0, with the same pawns) had its tip torque beyond that torque then — the same arm, loaded as the change left
    it, tips beyond tau0 scaled as its load scales the tip. An account that adds too little torque to cross that
    bound cannot have tipped it: "nothing changed" after a move near the tip (our seed 22500001, turn 34: an M
    moved four holders out, the arm 4.5 % under its tip before) would otherwise keep the likelihood that the tip
    torque was 1.5σ lower than thought, which the free arm before had already ruled out."""
    pred = m.tau0 + shift + c.mean_t
    var = m.var_tau0 + own_var + m.tip_var
    if not math.isfinite(var):
        return 0.0
    z = (m.censored1 * pred - m.tip_torque) / math.sqrt(var)
    if m.tip_before <= 0 or shift:
        return _log_phi(z)
    ratio = m.tip_torque / m.tip_before
    bound = m.censored1 * m.tau0 * ratio            # the tip torque after lies beyond this
    s_bound = math.sqrt(m.tip_var + m.var_tau0 * ratio * ratio)
    z_bound = (bound - m.tip_torque) / s_bound
    free = 0.5 * math.erfc(z_bound / SQRT2)         # P(tip torque > bound): the arm was free before
    if free < 1e-9:
        return _log_phi(z)  # the model's tip torque says the arm could not have been free: it has nothing to add
    ever = math.exp(_log_phi(z))                    # P(tip torque < c's torque after), the bound not known
    both = max(0.0, ever - 0.5 * math.erfc(-z_bound / SQRT2))   # ... and beyond the bound
    held = (1.0 - STUCK_ON_BOARD) * both / free + STUCK_ON_BOARD * ever
    return math.log(held) if held > 0 else _log_phi(z) + math.log(STUCK_ON_BOARD)


def _wide_rest(m: Measurement, omega: float, rel: float) -> tuple[float, float, float]:
    """As _rest_of, for an arm whose ω is known only roughly (no measured swing yet): the rest is read at
    the ω the prediction and the swing itself agree on, with the uncertainty that leaves — over a short look
    that is wide, and the candidates wait for more swing rather than be read at a frequency the arm lacks."""
    post, var_post, freq_ll = _posterior_omega(m, omega, rel)
    tau1, var1, _ = m.fan.at(post)
    var1 += m.fan.slope(post) ** 2 * var_post / (post * post)
    return tau1, var1, freq_ll


def _posterior_omega(m: Measurement, omega: float, rel: float) -> tuple[float, float, float]:
    """(ω, its variance, the log-likelihood of the swing's own ω) where the predicted ω, known only roughly (to
    `rel`), and the ω the swing shows agree."""
    var_pred = (omega * rel) ** 2
    seen, var_seen = m.fan.frequency(FREQ_TEMPER)
    if math.isfinite(var_seen) and var_seen > 0:
        post = (omega * var_seen + seen * var_pred) / (var_seen + var_pred)
        var_post = var_seen * var_pred / (var_seen + var_pred)
        return post, var_post, -0.5 * (omega - seen) ** 2 / (var_seen + var_pred)
    return omega, var_pred, 0.0


def fit_of(c: Candidate, m: Measurement, shift: float = 0.0, load: float | None = None,
           d2: float | None = None) -> FitCheck:
    """How well `c` explains the readings `m` came from, against the noise they were judged with (fit.py)."""
    from companion.sensing.touches import misfit

    if d2 is None:
        d2 = log_likelihood(c, m, shift, load)[1]
    dof = 2 if not m.censored1 and math.isfinite(m.var_tau0 + m.var_tau1) else 1
    parts = [("weight and torque", d2, dof, chi2_sf(d2, dof))]
    if not m.censored1 and m.swing_n > 3 and m.accel_noise2 > 0:
        rss = m.swing_rss
        if m.fan is not None and load is not None:
            # the residuals at the frequency this account's rest was read at
            omega, rel = swing_after(c, m, load)
            if rel > WIDE_REL:
                omega = _posterior_omega(m, omega, rel)[0]
            rss = m.fan.at(omega)[2]
        if math.isfinite(rss):
            n = m.swing_n - 3
            f = rss / n / m.accel_noise2
            parts.append(("swing", f, n, f_sf(f, n, NOISE_DOF)))
    if m.touches and c.touch_x:
        off = misfit(touches_for(c, m), [m.touch_gain * x for x in c.touch_x], jitter_mm=m.finger_mm,
                     scale=m.touch_scale)
        if off is not None:
            parts.append(("touches", off[0], off[1], chi2_sf(off[0], off[1])))
    return judged(parts)


def _hands(c: Candidate, m: Measurement) -> float:
    """What the touches say of the candidate: how many, and where (touches.py); and what a move's pause says its
    first touch lifted (touches.pause_lift: the touches of a move are placed knowing its mover's mass, so a mover of
    the wrong mass is placed where its torque fits — foreign noisy 26902 at 314 s read M W7 → E2 as L W2 → E2, the
    pause 6.1 g under the weight before)."""
    if not m.touches:
        return 0.0
    if not c.touch_x:
        return _put_back(c, m) if c.put_backs else 0.0
    key = (c.touch_x, c.size if len(c.touch_x) == 2 else None)
    whole = m._hands_said.get((key, c.lifts))
    if whole is not None:
        return whole
    said = m._hands_said.get(key)
    if said is None:
        said = m._hands_said[key] = _hands_of(c, m)
    m._hands_said[(key, c.lifts)] = said = _with_pause(said, c, m)
    return said


def _put_back(c: Candidate, m: Measurement) -> float:
    """What the touches say of "nothing changed" (`c`). Hands that moved weight — a touch that took or left half
    the lightest pawn on the arm or more — and changed nothing lifted a pawn and put it back where it was: a move
    from its holder to the same holder, each pawn on the arm as likely, judged as a move's touches and pause are.
    A touch that moved no weight (a hand steadying the arm) says nothing of it. (Paying nothing for its touches,
    "nothing changed" outran a move whose pinned, scattered touches cost it 8 nats: foreign seed 35200 game 0 turn
    46, L E3 → E2 tipped the arm and was read as nothing at 0.994.)"""
    light = 0.5 * min(mass for _, mass, _, _ in c.put_backs)
    if not any(abs(t.lifted) >= light for t in m.touches):
        return 0.0
    key = ("none", c.put_backs)
    said = m._hands_said.get(key)
    if said is None:
        each = [_hands(replace(c, kind="move", size=size, touch_x=(x, x), lifts=(mass, sigma), put_backs=()), m)
                for x, mass, sigma, size in c.put_backs]
        said = m._hands_said[key] = _logsumexp(each) - math.log(len(each))
    return said


def _with_pause(said: float, c: Candidate, m: Measurement) -> float:
    """`said` and what the pause between a move's touches says of `c`: its count, its lift, its swing."""
    if m.pause_back and len(m.touches) == 1:
        # the cells found one touch, the pause between two: what a count of touches that many says of it
        from companion.sensing.touches import BACK_IF_ONE, BACK_IF_TWO
        said += BACK_IF_TWO if len(c.touch_x) == 2 else BACK_IF_ONE
    if m.lift and c.lifts is not None and len(c.touch_x) == 2:
        from companion.sensing.touches import lift_loglik
        said += lift_loglik(m.lift[:2], *c.lifts, span_g=m.lift[2])
    if m.lift_torque and c.lifts is not None and len(c.touch_x) == 2 and c.size in m.lift_torque:
        from companion.sensing.pause_swing import torque_loglik
        mass, mass_sigma = c.lifts
        x = c.touch_x[0]
        said += torque_loglik(m.lift_torque[c.size], mass * x, (mass_sigma * x) ** 2,
                              span=m.span_mm * max(mass, 1e-9))
    return said


def _hands_of(c: Candidate, m: Measurement) -> float:
    from companion.sensing.touches import IN_PIECES, loglik, push_loglik

    pieces = IN_PIECES if m.touch_pieces is None else m.touch_pieces
    expected = [m.touch_gain * x for x in c.touch_x]
    # (where the first touch pushed the arm is read from the board and the forces, not through the cells' settling)
    pushed = push_loglik(m.push, c.touch_x[0], jitter_mm=m.finger_mm) if m.push is not None else 0.0
    ll = loglik(touches_for(c, m), expected, jitter_mm=m.finger_mm, scale=m.touch_scale, span_mm=m.span_mm,
                astray=m.touch_astray, pieces=pieces, clipped=m.touch_clipped)
    if not m.other_touches:
        return pushed + ll
    # each shape of settling still likely is a way the touches may have come out: their mixture
    terms, weights = [ll], [0.0]
    for lw, touches, by_size in m.other_touches:
        mine = by_size[c.size] if len(c.touch_x) == 2 and by_size and c.size in by_size else touches
        terms.append(lw + loglik(mine, expected, jitter_mm=m.finger_mm, scale=m.touch_scale, span_mm=m.span_mm,
                                 astray=m.touch_astray, pieces=pieces, clipped=m.touch_clipped))
        weights.append(lw)
    return pushed + _logsumexp(terms) - _logsumexp(weights)


def _logsumexp(values: Sequence[float]) -> float:
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values))


def touches_for(c: Candidate, m: Measurement) -> tuple:
    """The touches `c` is judged by: a two-touch move's are fitted knowing its pawn's mass, when they could be."""
    if len(c.touch_x) == 2 and m.touches_by_size and c.size in m.touches_by_size:
        return m.touches_by_size[c.size]
    return m.touches


@dataclass(frozen=True)
class Scored:
    """A net change, its best explanation, and its probability (summed over the ways it can happen)."""

    candidate: Candidate
    log_likelihood: float
    distance2: float
    probability: float
    hypothesis: int = 0      # which belief about the pawns on the arm the best explanation starts from
    shift: float = 0.0       # that belief's torque before, relative to the measurement's
    # the share of `probability` that is the description shown (a beat of like pawns and the mover's removal leave
    # the same pawns: only the hands can say which it was), and the other descriptions with their probabilities
    described: float = 1.0
    retold: tuple[tuple[Candidate, float], ...] = ()

    def to_dict(self) -> dict:
        return {**self.candidate.to_dict(), "probability": round(self.probability, 4),
                "log_likelihood": round(self.log_likelihood, 2)}


# One way the change could have happened: (its probability, the belief it starts from, the candidate). A plain tuple:
# one is made for every candidate of every belief at every look, and a named one's constructor cost 2 % of a replay
Pair = tuple[float, int, Candidate]


@dataclass(frozen=True)
class Resolution:
    """How finely the sensors tell two predictions apart: 1σ of a change measured over the longest
    wait (weight, torque), and how many of those apart two candidates must be for one to be picked
    over the other reliably (5σ: right about 99.5 % of the time). Closer ones are called ambiguous."""

    weight_g: float = 0.06
    torque_gmm: float = 6.0
    group_distance: float = 5.0


def rank(cands: Sequence[Candidate], m: Measurement) -> list[Scored]:
    """Candidates from one belief about the pawns, scored and normalised, best first."""
    return rank_beliefs([(0.0, cands, 0.0)], m)[0]


def rank_beliefs(beliefs: Sequence[tuple], m: Measurement) -> tuple[list[Scored], list[Pair]]:
    """Score every candidate of every belief (log-weight, candidates, torque shift[, Σ m·x²]) against `m`.

    Returns the net changes best first — each with the probability of all the ways it
    can happen, explained by its likeliest way — and every (belief, candidate) pair
    with its probability, from which the follower carries its beliefs forward.
    """
    scores: list[tuple[float, float, int, Candidate]] = []
    for hi, entry in enumerate(beliefs):
        logw, cands, shift = entry[0], entry[1], entry[2]
        load = entry[3] if len(entry) > 3 else None
        counts: dict[str, int] = {}
        for c in cands:
            counts[c.kind] = counts.get(c.kind, 0) + 1
        prior = {k: math.log(KIND_SHARE[k] / n) for k, n in counts.items()}
        for c in cands:
            # a wrong weight rules a candidate out before its torque is worth computing
            rw = m.dw - c.mean_w
            sww = c.c_ww + m.var_dw + (m.rel_w * c.mean_w) ** 2
            if rw * rw > 400.0 * sww and c.alt is None:
                ll, d2 = -0.5 * rw * rw / sww - 0.5 * math.log(sww), rw * rw / sww
            else:
                ll, d2 = log_likelihood(c, m, shift, load)
            scores.append((logw + ll + prior[c.kind], d2, hi, c))
    top = max(sc[0] for sc in scores)
    total = 0.0
    weighted = []
    for sc, d2, hi, c in scores:
        w = math.exp(max(-700.0, sc - top))
        total += w
        weighted.append((w, sc, d2, hi, c))
    # per net effect: its probability, best score and that score's distance; and each description of it (a beat of
    # like pawns ends as the mover's removal) with its probability and its likeliest way (score, belief, candidate)
    by_key: dict[tuple, list] = {}
    tellings: dict[tuple, dict[tuple, list]] = {}
    pairs = []
    for w, sc, d2, hi, c in weighted:
        p = w / total
        pairs.append((p, hi, c))
        key = c.key
        entry = by_key.get(key)
        if entry is None:
            by_key[key] = [p, sc, d2]
            tellings[key] = {_telling(c): [p, sc, hi, c]}
            continue
        entry[0] += p
        if sc > entry[1]:
            entry[1:3] = [sc, d2]
        told = tellings[key]
        telling = _telling(c)
        said = told.get(telling)
        if said is None:
            told[telling] = [p, sc, hi, c]
        else:
            said[0] += p
            if sc > said[1]:
                said[1:] = [sc, hi, c]
    # which description is shown: where the hands were placed, what they likeliest did (took the pawn off, or moved
    # it onto a like pawn: the kinds summed over the holders, the simpler of equals) at its likeliest holders — a
    # beat whose second touch is placed loosely spreads over many holders, each less likely than the removal, while
    # the hands together say a beat; where nothing placed them, the simplest (a beat's second touch is then a guess:
    # the weighed masses alone may favour it, but that only says which like pawn is left, not that a hand took it)
    placed = any(tc.x is not None for tc in m.touches)
    out = []
    for key, (p, sc, d2) in by_key.items():
        ways = tellings[key]
        if len(ways) == 1:      # (most changes have one description: nothing to choose)
            (shown, _, hi, c), = ways.values()
            out.append(Scored(c, sc, d2, p, hi, beliefs[hi][2], shown / p if p > 0 else 1.0, ()))
            continue
        kinds: dict[str, float] = {}
        for e in tellings[key].values():
            kinds[e[3].kind] = kinds.get(e[3].kind, 0.0) + e[0]
        told = sorted(tellings[key].values(),
                      key=lambda e: (-round(kinds[e[3].kind] / p, 9), KIND_ORDER[e[3].kind], -e[0]) if placed
                      else (KIND_ORDER[e[3].kind], -e[0]))
        shown, hi, c = told[0][0], told[0][2], told[0][3]
        out.append(Scored(c, sc, d2, p, hi, beliefs[hi][2], shown / p if p > 0 else 1.0,
                          tuple((e[3], e[0]) for e in sorted(told[1:], key=lambda e: -e[0]))))
    out.sort(key=lambda s: (-s.probability, KIND_ORDER[s.candidate.kind]))
    pairs.sort(key=lambda pr: -pr[0])
    return out, pairs


def _telling(c: Candidate) -> tuple:
    """What a description of a change says happened (two like pawns in one holder: either moving tells the same)."""
    return (c.kind, c.size, c.holder, c.from_holder, c.to_holder, c.victim)


def indistinguishable(a: Candidate, b: Candidate, m: Measurement, res: Resolution, *,
                      shift_a: float = 0.0, shift_b: float = 0.0) -> bool:
    """Whether even a long, quiet measurement could not tell `a` from `b` reliably.

    Mahalanobis distance between the two predictions under their average covariance (pawn masses —
    which move weight and torque together, so a placement's holder stays plain however heavy the
    pawn — plus the sensors' resolution), against `res.group_distance`.
    """
    dw = a.mean_w - b.mean_w
    if m.censored1:
        # resting on the board, the angle only says 'at least τ_tip': both fit if both predict it
        for c, shift in ((a, shift_a), (b, shift_b)):
            if _log_tip(c, m, shift, c.c_tt) < math.log(0.02):
                return False
        vw = res.weight_g ** 2 + 0.5 * (a.c_ww + b.c_ww)
        return dw * dw / vw < res.group_distance ** 2
    vw = res.weight_g ** 2 + 0.5 * (a.c_ww + b.c_ww)
    if not math.isfinite(m.var_tau1 + m.var_tau0):
        return dw * dw / vw < res.group_distance ** 2
    dt = (a.mean_t + shift_a) - (b.mean_t + shift_b)
    # a scale error (κ, counts per gram) stretches both predictions alike: only their difference blurs
    vt = res.torque_gmm ** 2 + 0.5 * (a.c_tt + b.c_tt) + (m.rel_t * dt) ** 2
    cwt = 0.5 * (a.c_wt + b.c_wt)
    det = vw * vt - cwt * cwt
    if det <= 0:
        det, cwt = vw * vt, 0.0
    d2 = (dw * dw * vt - 2 * dw * dt * cwt + dt * dt * vw) / det
    return d2 < res.group_distance ** 2


# what a longer look could still add to how far apart two accounts are (squared Mahalanobis distance: about twice the
# log-likelihood ratio it may still move); accounts already this far apart only grow surer (SURE_APART)
LOOK_GAIN = 1.0
SURE_APART = 50.0
WEIGHTY = 1e-4          # accounts that hold less than this of the probability cannot move the verdict


def looked_enough(ranked: Sequence[Scored], m: Measurement, res: Resolution,
                  loads: Sequence[float | None]) -> bool:
    """Whether a longer look could no longer tell the accounts that weigh apart any better than this one.

    Each account's prediction carries its own uncertainty (pawn masses, the scale of the calibration, and on an arm
    nobody measured the holders' places, `c_place`), which no look reduces; the measurement's (the weight windows,
    the rest read from the swing) shrinks as the look grows, to the sensors' resolution over the longest wait. Once
    it is small against the accounts' own, their separation now is what the longest look would give: waiting only
    delays the same verdict. `loads[i]` is the Σ m·x² of the belief the i-th account starts from."""
    if m.censored1 or not math.isfinite(m.var_tau0 + m.var_tau1):
        return False
    weighty = [s for s in ranked if s.probability >= WEIGHTY]

    def spread(s: Scored) -> tuple[tuple[float, float, float], float, tuple[float, float, float] | None]:
        c = s.candidate
        # (the torque before was read before the hands came: no longer look after them reads it better)
        own = (c.c_ww + (m.rel_w * c.mean_w) ** 2, c.c_wt,
               c.c_tt + c.c_place + (m.rel_t * c.mean_t) ** 2 + m.var_tau0)
        load = loads[s.hypothesis]
        var1 = _rest_of(c, m, load)[1]
        omega = None
        if m.fan is not None and load is not None:
            w, rel = swing_after(c, m, load)
            seen, var_seen = m.fan.frequency(FREQ_TEMPER)
            if rel <= WIDE_REL and math.isfinite(var_seen):
                omega = (w, (w * rel) ** 2, var_seen)
        return own, var1, omega

    def gained(d: tuple[float, float], own: tuple[float, float, float], meas: tuple[float, float]) -> bool:
        def apart(vw: float, cwt: float, vt: float) -> float:
            det = vw * vt - cwt * cwt
            if det <= 0:
                det, cwt = vw * vt, 0.0
            return (d[0] * d[0] * vt - 2 * d[0] * d[1] * cwt + d[1] * d[1] * vw) / det
        now = apart(own[0] + meas[0], own[1], own[2] + meas[1])
        longest = apart(own[0] + res.weight_g ** 2, own[1], own[2] + res.torque_gmm ** 2)
        return now < SURE_APART and longest - now > LOOK_GAIN

    best = weighty[0]
    own_b, meas_b, om_b = spread(best)
    for s in weighty[1:]:
        own_s, meas_s, om_s = spread(s)
        own = tuple(0.5 * (a + b) for a, b in zip(own_b, own_s))
        d = (best.candidate.mean_w - s.candidate.mean_w,
             best.candidate.mean_t + best.shift - s.candidate.mean_t - s.shift)
        if gained(d, own, (m.var_dw, 0.5 * (meas_b + meas_s))):
            return False
        if om_b is not None and om_s is not None:
            dw2 = (om_b[0] - om_s[0]) ** 2
            pred = 0.5 * (om_b[1] + om_s[1])
            now = dw2 / (pred + om_b[2])
            if now < SURE_APART and dw2 / pred - now > LOOK_GAIN:
                return False
    return True


@dataclass(frozen=True)
class Verdict:
    decided: bool
    ranked: list[Scored]
    group: list[Scored]          # the best and every candidate it cannot be told from
    confidence: float            # probability of the best, and that the model it was judged by holds
    ambiguous: bool
    explained: bool              # the best fits the measurement within the noise model
    fit: FitCheck = FitCheck()   # how well the best explains the readings it was judged from (fit.py)


def judge(ranked: list[Scored], m: Measurement, res: Resolution, *, final: bool,
          decide_at: float = 0.999, ambiguous_below: float = 0.99, explain_d2: float = 36.0,
          early_d2: float = 9.0, check: Callable[[Scored], FitCheck] | None = None) -> Verdict:
    """Decide now, or wait for more data.

    Decided once the best candidate together with those it can never be told from
    holds `decide_at` of the probability and fits within `early_d2`, or when `final` (the
    longest wait is over) and it fits within `explain_d2`.
    Ambiguous when that group has more than one member, or when at the final call the
    rest still holds more than 1 - `ambiguous_below`.
    With `check` (the best's fit, fit.py), the probability that the model holds scales the confidence: before the
    last call a fit that leaves it below `ambiguous_below` waits for more readings; at the last call it is flagged.
    """
    nothing = ranked[0].candidate.kind == "none" and len(ranked) > 1
    fit = check(ranked[0]) if check is not None else FitCheck()
    if nothing and (ranked[0].probability < 0.5 or (
            final and mixed(ranked[0].probability, fit.holds, KIND_SHARE["none"]) < 0.5)):
        # "nothing changed" must beat every change together, not just each one: on the board, two
        # hundred moves may each be less likely than no change while one of them surely happened. So too at the last
        # look where the model it was judged by is disowned: the readings then say nothing, and a gesture that changed
        # nothing is no likelier than it was before the hands came (a move never reported is never asked about, and
        # the game would wait on it for good)
        ranked = [ranked[1], ranked[0]] + list(ranked[2:])
        fit = check(ranked[0]) if check is not None else FitCheck()
    best = ranked[0]
    group = [s for s in ranked if s is best or indistinguishable(best.candidate, s.candidate, m, res,
                                                                   shift_a=best.shift, shift_b=s.shift)]
    mass = sum(s.probability for s in group)
    explained = best.distance2 <= explain_d2
    # before the last call, the best must also fit well: a poor fit is more often a disturbed
    # measurement than a real change no candidate quite matches
    decided = explained and (final or (mass >= decide_at and best.distance2 <= early_d2
                                       and fit.holds >= ambiguous_below))
    ambiguous = len(group) > 1 or (decided and final and mass * fit.holds < ambiguous_below)
    return Verdict(decided, list(ranked), group, mixed(best.probability, fit.holds, 0.0), ambiguous, explained, fit)


# ----------------------------------------------------------------------------- the game layer's side

@dataclass(frozen=True)
class MoveMatch:
    move: dict
    probability: float       # among the moves given (and that the model the likeliest was judged by holds)
    log_likelihood: float
    fits: bool               # the measurement is consistent with this move at all
    text: str
    distance2: float = 0.0   # how far the measurement is from what the move predicts (squared Mahalanobis)
    model_holds: float = 1.0  # how likely the model holds, given how well the likeliest move explains the readings

    def to_dict(self) -> dict:
        return {"move": self.move, "probability": round(self.probability, 4),
                "log_likelihood": round(self.log_likelihood, 2), "fits": self.fits, "text": self.text}


def move_candidates(geo: Geometry, pawns: Sequence[TrackedPawn], move: Mapping[str, Any]
                    ) -> tuple[list[TrackedPawn], list[Candidate]]:
    """The physical change(s) a game move makes, and the pawns their indices refer to (`pawns`, plus
    any the move names that sensing did not know of, at nominal mass). Several candidates when the
    pawn the move names is not unique (two pawns of one size in a holder)."""
    kind = move.get("kind")
    size = move.get("size")
    src, dst, beats = move.get("from_holder"), move.get("to_holder"), move.get("beats")
    if kind not in ("place", "advance", "rearrange"):
        return list(pawns), [build_candidate(geo, "none", pawns)]
    for name, h in (("to_holder", dst), ("from_holder", src), ("beats", beats)):
        if h is not None and h not in geo.x:
            raise ValueError(f"move names unknown holder {h!r} in {name}")
    if size not in geo.mass:
        raise ValueError(f"move has no pawn size (size={size!r})")
    if dst is None:
        raise ValueError("move has no to_holder")
    # pawns may be missing from what sensing believes; declare them nominally so the move can be scored
    pool = list(pawns)
    movers: list[int | None] = [None]
    if kind != "place":
        if src is None:
            raise ValueError("an advance needs from_holder")
        movers = [i for i, p in enumerate(pool) if p.holder == src and p.size == size]
        if not movers:
            pool.append(TrackedPawn(src, size, geo.mass[size], geo.mass_sigma[size]))
            movers = [len(pool) - 1]
    vsize = move.get("beaten_size")
    if beats is not None and not any(p.holder == beats and (vsize is None or p.size == vsize)
                                     and i not in movers for i, p in enumerate(pool)):
        for s in ([vsize] if vsize else list(geo.mass)):
            pool.append(TrackedPawn(beats, s, geo.mass[s], geo.mass_sigma[s]))
    out = []
    for i in movers:
        victims: list[int | None] = [None]
        if beats is not None:
            victims = [j for j, p in enumerate(pool)
                       if p.holder == beats and (vsize is None or p.size == vsize) and j != i]
        for j in victims:
            take = [j] if j is not None else []
            victim = (pool[j].holder, pool[j].size) if j is not None else None
            if i is None:
                out.append(build_candidate(geo, "place", pool, take=take, put=[(dst, size)], size=size, holder=dst))
            else:
                out.append(build_candidate(geo, "beat" if j is not None else "move", pool, take=take, relocate=(i, dst),
                                  size=size, from_holder=src, to_holder=dst, victim=victim))
    return pool, out


def _move_text(move: Mapping[str, Any]) -> str:
    kind = move.get("kind")
    if kind == "place":
        text = f"place {move.get('size')} in {move.get('to_holder')}"
    elif kind in ("advance", "rearrange"):
        text = f"move {move.get('size')} {move.get('from_holder')} → {move.get('to_holder')}"
    else:
        text = str(kind)
    if move.get("beats"):
        text += f", beating the pawn in {move['beats']}"
    return text


def match_moves(change: Any, moves: Sequence[Mapping[str, Any]], *, fit_d2: float = 36.0) -> list[MoveMatch]:
    """Which of the game's legal moves the sensed change was, best first.

    `change` is a `Change` (or an `ArmEvent` from one), or a sequence of them in order
    (say a pawn was lifted, the arm settled, and it was put down elsewhere: two changes,
    one move). `moves` are plain dicts: kind ("place" | "advance"), from_holder, to_holder,
    size, beats (holder or None) and optionally beaten_size. Probabilities are normalised
    over the moves given (each legal move equally likely beforehand); `fits` says whether
    the sensors are consistent with the move at all — when none fits, the board does not
    match the game.
    """
    changes = _as_changes(change)
    first = changes[0]
    m = first.measurement
    for later in changes[1:]:
        m = m.combine(later.measurement)
    geo = first.geometry
    pawns = first.before
    scored = []
    for mv in moves:
        best = None
        pool, cands = move_candidates(geo, pawns, mv)
        load = inertia_of(geo, pool)
        for c in cands:
            ll, d2 = log_likelihood(c, m, 0.0, load)
            if best is None or ll > best[0]:
                best = (ll, d2, c, load)
        scored.append((best[0], best[1], dict(mv), best[2], best[3]))
    if not scored:
        return []
    # the likeliest move's own fit: where the model does not hold, the readings say nothing and each move given is
    # as likely as the next
    _, d2_top, _, c_top, load_top = max(scored, key=lambda e: e[0])
    fit = fit_of(c_top, m, 0.0, load_top, d2_top)
    # ... but each part tests its own readings: touches that misplace the likeliest move's hands say the hands' model
    # failed there, not the weight and torque, so they are then mixed with the moves as the rest alone ranks them
    # (foreign quiet seed 20202, turn 26: W4 → W1 the one legal move within 36 of the weight and torque, its touches
    # 2.7σ off, asked at 0.96 — every move given counted as likely as it, where the touches alone had failed)
    by_hands = judged([p for p in fit.parts if p[0] == "touches"]).holds
    holds = judged([p for p in fit.parts if p[0] != "touches"]).holds
    probs = _normalised([s[0] for s in scored])
    if by_hands < 1.0:
        without = _normalised([s[0] - _hands(s[3], m) for s in scored])
        probs = [mixed(a, by_hands, b) for a, b in zip(probs, without)]
        probs = _hands_against_rest(scored, m, probs, by_hands, fit_d2)
    n = len(scored)
    out = [MoveMatch(mv, mixed(q, holds, 1.0 / n), ll, d2 <= fit_d2, _move_text(mv), d2, holds * by_hands)
           for (ll, d2, mv, _, _), q in zip(scored, probs)]
    out.sort(key=lambda mm: -mm.probability)
    return out


def _hands_against_rest(scored: list, m: Measurement, probs: list[float], by_hands: float,
                        fit_d2: float) -> list[float]:
    """The touches disowned for the likeliest move are not disowned when another move's touches fit and its rest
    alone does not: then one of the two models failed, and the readings cannot say which. Ours, uncalibrated,
    seed 26800000 turn 24: the touches at 17 and 86 mm (σ ≤ 1) for L E7 → E3, 40 mm off E5 → E1's; E7 → E3's rest,
    read at the frequency an arm nobody measured was predicted to swing at, 4.5σ off; E5 → E1 applied at 0.9998
    on three levels. Each ranking then gets half."""
    hands = _normalised([_hands(s[3], m) for s in scored])
    h = max(range(len(scored)), key=lambda i: hands[i])
    top = max(range(len(scored)), key=lambda i: probs[i])
    if h == top or scored[h][1] > fit_d2:
        return probs
    _, d2, _, c, load = scored[h]
    fit = fit_of(c, m, 0.0, load, d2)
    own_hands = judged([p for p in fit.parts if p[0] == "touches"]).holds
    own_rest = judged([p for p in fit.parts if p[0] != "touches"]).holds
    conflict = (1.0 - by_hands) * own_hands * (1.0 - own_rest)
    return [mixed(a, 1.0 - 0.5 * conflict, b) for a, b in zip(probs, hands)]


def _normalised(log_weights: Sequence[float]) -> list[float]:
    top = max(log_weights)
    weights = [math.exp(max(-700.0, v - top)) for v in log_weights]
    total = sum(weights)
    return [w / total for w in weights]


def _as_changes(change: Any) -> list:
    if isinstance(change, (list, tuple)):
        items = list(change)
    else:
        items = [change]
    out = []
    for item in items:
        c = getattr(item, "change", item)
        if c is None or getattr(c, "measurement", None) is None:
            raise ValueError("match_moves needs the change a place/remove/move event came from (tip events have none)")
        if not out or out[-1] is not c:
            out.append(c)
    if not out:
        raise ValueError("match_moves needs at least one change")
    return out


def chosen_move(matches: Sequence[MoveMatch], *, threshold: float = 0.95,
                well_d2: float | None = None) -> dict | None:
    """The move to apply without asking, or None: ask the players (or nothing fits at all). With `well_d2`, the
    move must also fit the measurement that well: likelier than the others is not enough when it is itself far
    from what was measured (most often a measurement disturbed, which a longer look puts right)."""
    if matches and matches[0].fits and matches[0].probability >= threshold and (
            well_d2 is None or matches[0].distance2 <= well_d2):
        return matches[0].move
    return None
