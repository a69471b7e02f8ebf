"""What a follower has learned, as plain data: to start a fresh follower where an old one left off.

A follower learns as a game goes on: each load cell's and the accelerometer's noise, how the
swing's frequency and damping differ from what the physics predicts, the zero's drift, the mass
of every pawn it weighed, how far from a holder's centre the hands touch, and which accounts of
the pawns are still open. `memory_of` writes that down as JSON-safe data;
`resume` builds a new follower that starts with it (its buffers empty, as at start-up).

The daemon does this now and then, at a quiet moment, with the flight recorder on: the
recorder writes the memory into its inputs (`{"t": …, "follower": {...}}`), and
`companion replay` restarts its follower at the same instant from the same data — so a
window that begins long after the daemon started still replays exactly. What is given up
is little: a change just decided is no longer re-weighed over the settled spell after it,
and the first touch after the restart is judged from a shorter quiet spell.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from companion.games.balance_model import Model
from companion.sensing.calibration import ArmCalibration
from companion.sensing.drift import ZeroDrift
from companion.sensing.follower import MAX_BELIEFS_ON_BOARD, ArmFollower, Belief, FollowerSettings
from companion.sensing.height_fit import HeightFit
from companion.sensing.place_fit import PlaceFit
from companion.sensing.inference import TrackedPawn, enumerate_candidates
from companion.sensing.settling import FAMILY, Settling
from companion.sensing.pause_swing import PauseScale
from companion.sensing.touches import HandSpread, TouchCounts

VERSION = 1
MAX_WEIGHED = 50


def memory_of(f: ArmFollower) -> dict:
    pending = f._weigh_pending
    return {
        "version": VERSION,
        "swing_scale": f.swing_scale,
        "swing_scale_var": f.swing_scale_var,
        "zeta_scale_var": f.zeta_scale_var,
        "zeta_scale": f.zeta_scale,
        "cells": {c.name: {"noise_mad": c.noise._mad, "dt": c.dt} for c in f._cell_list},
        "accel_noise_mad": f.accel_noise._mad,
        "zero_w": f.zero_w,
        "zero_t": f.zero_t,
        "weighed": {size: list(masses[-MAX_WEIGHED:]) for size, masses in f.weighed.items()},
        "beliefs": [{"log_weight": b.log_weight,
                     "pawns": [_pawn(p) for p in b.pawns]} for b in f.beliefs],
        # (when it was weighed is left out: a restarted follower's clock is another)
        "weigh_pending": None if pending is None else [*pending[0][:2], *pending[1:]],
        "hand_touches": [list(m) for m in f.hands.touches],
        "pause_misses": list(f.pause_scale.misses),
        "touch_counts": list(f.touch_counts.extra),
        "settling": [[x, [None if e is None else list(e) for e in per]] for x, per in f.settling.rows],
        "settling_fits": [list(fit) for fit in f.settling.fits],
        "drift_looks": [list(look) for look in f.drift.looks],
        "drift_misses": [list(miss) for miss in f.drift.misses],
        # (an arm whose loaded stiffness nobody measured: what the confirmed changes said of its pawns' height)
        "height_looks": None if f.height_fit is None else [list(look) for look in f.height_fit.looks],
        # (an arm whose holders nobody measured: what the confirmed changes said of their places, and of the height)
        "place_looks": None if f.place_fit is None else [[b, [[h, a] for h, a in moved], y, v]
                                                         for b, moved, y, v in f.place_fit.looks],
    }


def _pawn(p: TrackedPawn) -> list:
    """A tracked pawn as the memory holds it: [holder, size, mass, σ], and when it may be another like pawn, that
    pawn's mass and how likely (identity.py)."""
    row = [p.holder, p.size, p.mass_g, p.sigma_g]
    return row + [p.alt_g, p.doubt] if p.doubt > 0.0 else row


def _number(data: Mapping[str, Any], key: str, where: str, *, low: float = -math.inf, high: float = math.inf) -> float:
    v = data.get(key) if isinstance(data, Mapping) else None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not low <= v <= high:
        raise ValueError(f"follower memory: {where}{key} must be a number from {low:g} to {high:g}, not {v!r}")
    return float(v)


def _place_looks(looks: Any, geo) -> list:
    """The place fit's looks as memory_of wrote them; ValueError names what does not fit."""
    shape = (f"follower memory: place_looks must be a list of at most {PlaceFit.KEEP} [sin·mass change, "
             "[[holder, grams], ...], torque g·mm, variance]")
    if not isinstance(looks, list) or len(looks) > PlaceFit.KEEP:
        raise ValueError(shape)
    out = []
    for k in looks:
        if not (isinstance(k, list) and len(k) == 4 and isinstance(k[1], list) and all(
                isinstance(e, list) and len(e) == 2 and e[0] in geo.x for e in k[1])):
            raise ValueError(shape)
        out.append((_number({"b": k[0]}, "b", "place_looks.", low=-1e4, high=1e4),
                    tuple((h, _number({"a": a}, "a", "place_looks.", low=-1e4, high=1e4)) for h, a in k[1]),
                    _number({"y": k[2]}, "y", "place_looks.", low=-1e7, high=1e7),
                    _number({"v": k[3]}, "v", "place_looks.", low=1e-6, high=1e12)))
    return out


def resume(model: Model, calibration: ArmCalibration, memory: Any, *,
           settings: FollowerSettings | None = None) -> ArmFollower:
    """A fresh follower with `memory` (as memory_of wrote it); ValueError names what does not fit."""
    if not isinstance(memory, Mapping):
        raise ValueError("follower memory must be an object")
    if memory.get("version") != VERSION:
        raise ValueError(f"follower memory: version must be {VERSION}, not {memory.get('version')!r}")
    unknown = sorted(set(memory) - {"version", "swing_scale", "swing_scale_var", "zeta_scale", "zeta_scale_var",
                                    "cells", "accel_noise_mad", "zero_w", "zero_t", "weighed", "beliefs", "weigh_pending", "hand_touches",
                                    "pause_misses", "touch_counts", "settling", "settling_fits", "drift_looks",
                                    "drift_misses", "height_looks", "place_looks"})
    if unknown:
        raise ValueError(f"follower memory: unknown key {unknown[0]!r}")
    f = ArmFollower(model, calibration, settings=settings)
    geo = f.geo
    f.swing_scale = _number(memory, "swing_scale", "", low=0.1, high=10.0)
    f.zeta_scale = _number(memory, "zeta_scale", "", low=0.01, high=100.0)
    # how sure an unmeasured arm's swing scale is (absent from older memories, null on a calibrated arm:
    # then the follower's own start stands)
    if memory.get("swing_scale_var") is not None and f.swing_scale_var is not None:
        f.swing_scale_var = _number(memory, "swing_scale_var", "", low=0.0, high=1.0)
    if memory.get("zeta_scale_var") is not None and f.zeta_scale_var is not None:
        f.zeta_scale_var = _number(memory, "zeta_scale_var", "", low=0.0, high=4.0)
    cells = memory.get("cells")
    if not isinstance(cells, Mapping) or sorted(cells) != sorted(f.cells):
        raise ValueError(f"follower memory: cells must be the calibration's load cells ({', '.join(sorted(f.cells))})")
    for name, c in f.cells.items():
        c.noise._mad = _number(cells[name], "noise_mad", f"cells.{name}.", low=0.0, high=1e7)
        c.noise.sigma = max(c.noise.floor, c.noise._mad * c.noise._scale)
        c.dt = _number(cells[name], "dt", f"cells.{name}.", low=1e-4, high=10.0)
    f.accel_noise._mad = _number(memory, "accel_noise_mad", "", low=0.0, high=10.0)
    f.accel_noise.sigma = max(f.accel_noise.floor, f.accel_noise._mad * f.accel_noise._scale)
    f.zero_w = _number(memory, "zero_w", "", low=-1e6, high=1e6)
    f.zero_t = _number(memory, "zero_t", "", low=-1e9, high=1e9)
    weighed = memory.get("weighed")
    if not isinstance(weighed, Mapping):
        raise ValueError("follower memory: weighed must map pawn sizes to masses")
    f.weighed = {}
    for size, masses in weighed.items():
        if size not in geo.mass or not isinstance(masses, list) or len(masses) > MAX_WEIGHED:
            raise ValueError(f"follower memory: weighed.{size} must be a list of at most {MAX_WEIGHED} masses of a "
                             "known size")
        f.weighed[size] = [_number({"m": m}, "m", f"weighed.{size}.", low=0.0, high=1e4) for m in masses]
    beliefs = memory.get("beliefs")
    if not isinstance(beliefs, list) or not 1 <= len(beliefs) <= MAX_BELIEFS_ON_BOARD:
        raise ValueError(f"follower memory: beliefs must be a list of 1 to {MAX_BELIEFS_ON_BOARD}")
    capacity = sum(geo.capacity.values())
    f.beliefs = []
    for i, b in enumerate(beliefs):
        where = f"beliefs.{i}."
        pawns = b.get("pawns") if isinstance(b, Mapping) else None
        if not isinstance(pawns, list) or len(pawns) > capacity:
            raise ValueError(f"follower memory: {where}pawns must be a list of at most {capacity} pawns")
        tracked = []
        for p in pawns:
            if (not isinstance(p, list) or len(p) not in (4, 6) or p[0] not in geo.x or p[1] not in geo.mass):
                raise ValueError(f"follower memory: {where}pawns: {p!r} is not [holder, size, mass, sigma] (and "
                                 "[..., the like pawn's mass it may be, how likely]) of this arm")
            doubt = () if len(p) == 4 else (_number({"alt_g": p[4]}, "alt_g", where, low=0.0, high=1e4),
                                             _number({"doubt": p[5]}, "doubt", where, low=0.0, high=1.0))
            tracked.append(TrackedPawn(p[0], p[1], _number({"m": p[2]}, "m", where, low=0.0, high=1e4),
                                       _number({"s": p[3]}, "s", where, low=0.0, high=1e4), *doubt))
        log_weight = _number(b, "log_weight", where, low=-1e4, high=0.0)
        f.beliefs.append(Belief(log_weight, tracked, enumerate_candidates(geo, tracked)))
    touches = memory.get("hand_touches")     # (a memory written before the hands were learned has none: the prior)
    if touches is not None:
        if not isinstance(touches, list) or len(touches) > HandSpread.KEEP or not all(
                isinstance(m, list) and len(m) in (3, 4) for m in touches):
            raise ValueError(f"follower memory: hand_touches must be a list of at most {HandSpread.KEEP} "
                             "[holder x, located x, σ², share of its span held at the board] rows")
        # (rows written before the held share was kept have three: not held)
        f.hands = HandSpread([(_number({"x": m[0]}, "x", "hand_touches.", low=-1e4, high=1e4),
                               _number({"x": m[1]}, "x", "hand_touches.", low=-1e4, high=1e4),
                               _number({"s": m[2]}, "s", "hand_touches.", low=0.0, high=1e6),
                               _number({"held": m[3] if len(m) == 4 else 0.0}, "held", "hand_touches.",
                                       low=0.0, high=1.0)) for m in touches])
    misses = memory.get("pause_misses")     # (none in a memory written before the pauses were read: the prior)
    if misses is not None:
        if not isinstance(misses, list) or len(misses) > PauseScale.KEEP:
            raise ValueError(f"follower memory: pause_misses must be a list of at most {PauseScale.KEEP} numbers "
                             "(a pause's miss, squared, in its own σ)")
        f.pause_scale = PauseScale([_number({"z2": z}, "z2", "pause_misses.", low=0.0, high=1e6) for z in misses])
    counts = memory.get("touch_counts")     # (none in a memory written before gestures were counted: the prior)
    if counts is not None:
        if not isinstance(counts, list) or len(counts) > TouchCounts.KEEP or not all(
                isinstance(e, int) and not isinstance(e, bool) and abs(e) <= TouchCounts.LIMIT for e in counts):
            raise ValueError(f"follower memory: touch_counts must be a list of at most {TouchCounts.KEEP} whole "
                             f"numbers from -{TouchCounts.LIMIT} to {TouchCounts.LIMIT} "
                             "(touches found less touches made)")
        f.touch_counts = TouchCounts(counts)
    rows = memory.get("settling")     # (none in a memory written before the settling was learned: the nominal)
    fits = memory.get("settling_fits")     # (nor in one written before the fits were kept)
    if rows is not None or fits is not None:
        f.settling = Settling(_settling_rows(rows or []), _settling_fits(fits or []))
    # (none in a memory written before the drift was learned: the prior)
    looks, misses = memory.get("drift_looks", []), memory.get("drift_misses", [])
    if not isinstance(looks, list) or len(looks) > ZeroDrift.KEEP or not all(
            isinstance(k, list) and len(k) == 2 for k in looks):
        raise ValueError(f"follower memory: drift_looks must be a list of at most {ZeroDrift.KEEP} "
                         "[slope g/s, variance] pairs")
    if not isinstance(misses, list) or len(misses) > ZeroDrift.KEEP_MISSES or not all(
            isinstance(k, list) and len(k) == 3 for k in misses):
        raise ValueError(f"follower memory: drift_misses must be a list of at most {ZeroDrift.KEEP_MISSES} "
                         "[weighed g, variance, span s] triples")
    f.drift = ZeroDrift([(_number({"s": a}, "s", "drift_looks.", low=-1e3, high=1e3),
                          _number({"v": b}, "v", "drift_looks.", low=1e-12, high=1e6)) for a, b in looks],
                        [(_number({"w": a}, "w", "drift_misses.", low=-1e4, high=1e4),
                          _number({"v": b}, "v", "drift_misses.", low=1e-12, high=1e6),
                          _number({"t": c}, "t", "drift_misses.", low=1e-3, high=1e4)) for a, b, c in misses])
    looks = memory.get("height_looks")     # (none in an older memory, or on an arm whose loaded stiffness was measured)
    if looks is not None and f.height_fit is not None:
        if not isinstance(looks, list) or len(looks) > HeightFit.KEEP or not all(
                isinstance(k, list) and len(k) == 3 for k in looks):
            raise ValueError(f"follower memory: height_looks must be a list of at most {HeightFit.KEEP} "
                             "[sin·mass change, torque g·mm, variance] triples")
        fit = HeightFit(f.height_fit.prior, [(_number({"b": b}, "b", "height_looks.", low=-1e4, high=1e4),
                                              _number({"r": r}, "r", "height_looks.", low=-1e7, high=1e7),
                                              _number({"v": v}, "v", "height_looks.", low=1e-6, high=1e12))
                                             for b, r, v in looks])
        f.height_fit = fit
        f.set_height(fit.height)
    looks = memory.get("place_looks")      # (none in an older memory, or on an arm whose holders were measured)
    if looks is not None and f.place_fit is not None:
        f.place_fit = PlaceFit(f.geo.x, f.geo.x_cov, f.place_fit.prior[0][0] if f.place_fit.learns_height else None,
                               _place_looks(looks, geo))
        f.use_places()
    pending = memory.get("weigh_pending")
    if pending is not None:
        if not (isinstance(pending, list) and len(pending) == 5 and pending[2] in geo.x and pending[3] in geo.mass):
            raise ValueError("follower memory: weigh_pending must be [w0, var, holder, size, mass] or null")
        nums = [_number({"v": pending[k]}, "v", "weigh_pending.", low=-1e7, high=1e7) for k in (0, 1, 4)]
        f._weigh_pending = ((nums[0], nums[1], math.nan), pending[2], pending[3], nums[2])
    return f


def _settling_fits(fits: Any) -> list[list[float]]:
    if not isinstance(fits, list) or len(fits) > Settling.KEEP or not all(
            isinstance(fit, list) and len(fit) == len(FAMILY) for fit in fits):
        raise ValueError(f"follower memory: settling_fits must be a list of at most {Settling.KEEP} lists of one "
                         f"log-likelihood per shape ({len(FAMILY)})")
    floor = -0.5 * Settling.MISS_Z2
    return [[_number({"v": v}, "v", f"settling_fits.{i}.", low=floor, high=0.0) for v in fit]
            for i, fit in enumerate(fits)]


def _settling_rows(rows: Any) -> list[tuple[float, list]]:
    shape = (f"follower memory: settling must be a list of at most {Settling.KEEP} [holder x, [[located x, σ²] or "
             f"null, … one per shape ({len(FAMILY)})]] rows")
    if not isinstance(rows, list) or len(rows) > Settling.KEEP:
        raise ValueError(shape)
    out = []
    for i, row in enumerate(rows):
        if not (isinstance(row, list) and len(row) == 2 and isinstance(row[1], list) and len(row[1]) == len(FAMILY)):
            raise ValueError(shape)
        where = f"settling.{i}."
        per = []
        for e in row[1]:
            if e is None:
                per.append(None)
                continue
            if not (isinstance(e, list) and len(e) == 2):
                raise ValueError(shape)
            per.append((_number({"x": e[0]}, "x", where, low=-1e4, high=1e4),
                        _number({"s": e[1]}, "s", where, low=0.0, high=1e6)))
        out.append((_number({"x": row[0]}, "x", where, low=-1e4, high=1e4), per))
    return out
