"""The free swing between a move's two touches tells the torque its first touch took off (pause_swing.py).

Each gesture here is simulated on its own: an arm of stiffness κ and swing (ω, ζ) resting at τ₀ is pressed onto the
board by a hand at the source, the hand lets go over `release` while the pawn comes off, the arm swings free, and a
second hand presses it onto the board again. Arms, hands and noise are drawn over the ranges real tables have.
"""

from __future__ import annotations

import math
import random

import pytest

from companion.sensing.pause_swing import PauseScale, lifted_torque, pause_stretch, torque_loglik

KAPPA = 17000.0
S_MAX = math.sin(math.radians(10.0))
G = 9806.65


def gesture(rng: random.Random, *, tau0: float, x: float, mass: float, f_hz: float, zeta: float, noise: float,
            release: float, transit: float, push_x: float, press_g: float = 80.0):
    """(angle samples at 100 Hz, the free stretches, the touches' spans as the cells would cut them, the board's
    limit)."""
    omega = 2 * math.pi * f_hz
    inertia = KAPPA * G / omega ** 2
    dt = 0.001
    s = tau0 / KAPPA
    v = 0.0
    t0, t_press_end = 1.0, 1.8
    t_lift = t_press_end + release
    t_place = t_lift + transit
    out = []
    for k in range(int((t_place + 0.8) / dt)):
        t = k * dt
        tau = tau0
        if t0 <= t < t_press_end:
            tau += press_g * x * min(1.0, (t - t0) / 0.15)
        elif t_press_end <= t < t_lift:
            tau += press_g * x * (1.0 - (t - t_press_end) / release)
        if t >= t_lift:
            tau -= mass * x
        if t >= t_place:
            tau += press_g * push_x * min(1.0, (t - t_place) / 0.12)
        inert = inertia - (mass * x * x if t >= t_lift else 0.0)
        acc = (KAPPA * G * (tau / KAPPA - s) - 2 * zeta * omega * inertia * v) / inert
        v += acc * dt
        s += v * dt
        if abs(s) >= S_MAX:
            s = math.copysign(S_MAX, s)
            if v * s > 0:
                v = 0.0
        if k % 10 == 0:
            out.append((t, s + rng.gauss(0.0, noise)))
    limit = S_MAX - max(3 * noise, 0.03 * S_MAX)
    free, run = [], None
    for t, a in out:
        if abs(a) < limit:
            run = [t, t] if run is None else [run[0], t]
        elif run is not None:
            free.append(tuple(run))
            run = None
    if run is not None:
        free.append(tuple(run))
    cut = t_lift + 0.6 * transit           # a slow cell's valley comes late
    parts = [(t0 - 0.05, cut), (cut, t_place + 0.9)]
    return out, free, parts, limit


def read(rng, *, known_zeta=None, **kw):
    angle, free, parts, limit = gesture(rng, **kw)
    stretch = pause_stretch(angle, free, parts, limit)
    if stretch is None:
        return None
    omega = 2 * math.pi * kw["f_hz"]
    return lifted_torque(angle, stretch, board=math.copysign(S_MAX, stretch.side), rest=kw["tau0"] / KAPPA,
                         kappa=KAPPA, omega=omega, zeta=kw["zeta"] if known_zeta is None else known_zeta,
                         noise=kw["noise"], rel_omega=0.01, rel_zeta=0.1, mass_g=kw["mass"])


def draw(rng: random.Random) -> dict:
    side = rng.choice((1, -1))
    x = side * rng.uniform(60.0, 133.0)
    return dict(tau0=side * rng.uniform(0.0, 1500.0), x=x, mass=rng.choice((6.0, 10.0)) * rng.uniform(0.97, 1.03),
                f_hz=rng.uniform(0.6, 1.8), zeta=rng.uniform(0.04, 0.25), noise=rng.uniform(0.001, 0.004),
                release=rng.uniform(0.0, 0.15), transit=rng.uniform(0.3, 0.6),
                push_x=side * rng.uniform(25.0, 133.0))


def test_the_pause_swing_reads_the_torque_lifted_to_within_its_sigma_on_random_arms():
    rng = random.Random(47)
    z, read_n, sigmas = [], 0, []
    for _ in range(60):
        kw = draw(rng)
        got = read(rng, **kw)
        if got is None:
            continue
        read_n += 1
        tau, sigma = got
        truth = kw["mass"] * kw["x"]
        z.append((tau - truth) / sigma)
        sigmas.append(sigma / kw["mass"])       # in mm of the holder's place
    assert read_n >= 40
    # honest: no farther off than it says (a few beyond 3σ at most), and about sure enough to tell holders 18 mm
    # apart (σ as the module widens it)
    assert sum(1 for v in z if abs(v) > 3.0) <= 2
    assert math.sqrt(sum(v * v for v in z) / len(z)) < 1.6
    assert sorted(sigmas)[len(sigmas) // 2] < 18.0


def test_no_stretch_when_the_arm_never_rested_on_the_board():
    rng = random.Random(3)
    # a light press near the pivot: the arm never reaches the board
    angle, free, parts, limit = gesture(rng, tau0=200.0, x=25.0, mass=10.0, f_hz=1.0, zeta=0.1, noise=0.002,
                                        release=0.05, transit=0.4, push_x=25.0, press_g=20.0)
    assert max(abs(s) for _, s in angle) < limit
    assert pause_stretch(angle, free, parts, limit) is None


def test_the_pause_is_the_stretch_between_the_touches_not_the_swing_after_them():
    rng = random.Random(5)
    kw = dict(tau0=900.0, x=97.0, mass=10.0, f_hz=1.2, zeta=0.12, noise=0.002, release=0.05, transit=0.45,
              push_x=115.0)
    angle, free, parts, limit = gesture(rng, **kw)
    stretch = pause_stretch(angle, free, parts, limit)
    assert stretch is not None and stretch.side == 1
    assert parts[0][0] < stretch.start < stretch.end < parts[1][1] - 0.5
    # the lift at E3 (97 mm) and not one a holder either side (18 mm apart: 180 g·mm)
    tau, sigma = read(random.Random(5), **kw)
    assert abs(tau - 970.0) < 30.0 and sigma < 200.0
    # most of its σ is the damping known to 10 %: over half a swing the arm's decay moves the centre read
    angle, free, parts, limit = gesture(random.Random(5), **kw)
    stretch = pause_stretch(angle, free, parts, limit)
    sure = lifted_torque(angle, stretch, board=S_MAX, rest=900.0 / KAPPA, kappa=KAPPA, omega=2 * math.pi * 1.2,
                         zeta=0.12, noise=0.002, rel_omega=0.01, rel_zeta=0.0, mass_g=10.0)
    assert sure[0] == pytest.approx(tau) and sure[1] < 0.5 * sigma


def test_the_torque_loglik_is_zero_at_best_and_costs_no_more_than_a_pause_astray():
    got = (970.0, 30.0)
    assert torque_loglik(got, 970.0, 0.0, span=3000.0) == pytest.approx(0.0)
    # a holder off (180 g·mm, 6σ) costs all a pause can; one far off no more (a finger left on the arm in the pause
    # reads as a lighter lift, which no fit of the swing can tell: that is the share of pauses astray)
    near, far = torque_loglik(got, 790.0, 0.0, span=3000.0), torque_loglik(got, -500.0, 0.0, span=3000.0)
    assert far == pytest.approx(near, abs=0.01)
    assert -8.0 < near < -5.0
    # a lift known less well (the mover's mass) costs less for the same miss
    assert torque_loglik(got, 880.0, 40.0 ** 2, span=3000.0) > torque_loglik(got, 880.0, 0.0, span=3000.0)


def test_the_scale_starts_wide_and_learns_how_far_this_tables_pauses_miss():
    scale = PauseScale()
    assert scale.scale == pytest.approx(PauseScale.PRIOR)
    rng = random.Random(9)
    # a table whose pauses miss as their fits say: the scale comes down to about 1
    for _ in range(PauseScale.KEEP):
        scale.learn((1000.0 + rng.gauss(0.0, 30.0), 30.0), 1000.0, 0.0)
    assert 0.8 <= scale.scale < 1.4
    # one pause astray among them widens it no more than a 5σ miss would
    before = scale.scale
    scale.learn((3000.0, 30.0), 1000.0, 0.0)
    assert scale.scale < before + 0.35
    # a table whose pauses miss by three times their σ
    wide, rng = PauseScale(), random.Random(10)
    for _ in range(PauseScale.KEEP):
        wide.learn((1000.0 + rng.gauss(0.0, 90.0), 30.0), 1000.0, 0.0)
    assert 2.4 < wide.scale <= PauseScale.HIGH


def test_a_gesture_the_cells_read_as_one_touch_is_read_for_its_pause_too():
    # the cells blurred the two touches into one part: the arm on the board, free, and on it again within it
    kw = dict(tau0=900.0, x=97.0, mass=10.0, f_hz=1.2, zeta=0.12, noise=0.002, release=0.05, transit=0.45,
              push_x=115.0)
    angle, free, parts, limit = gesture(random.Random(5), **kw)
    one = [(parts[0][0], parts[1][1])]
    stretch = pause_stretch(angle, free, one, limit)
    assert stretch is not None and stretch == pause_stretch(angle, free, parts, limit)
    # ... but not the swing after a single press, which no board ends within the part
    single = [(t, s) for t, s in angle if t < stretch.start] + [(t, 0.0) for t, s in angle if t >= stretch.start]
    assert pause_stretch(single, [(stretch.start, one[0][1] - 0.01)], one, limit) is None


def test_a_pause_that_ends_at_the_board_it_left_was_pressed_back_one_that_swings_across_was_not():
    kw = dict(tau0=900.0, x=97.0, mass=10.0, f_hz=1.2, zeta=0.12, noise=0.002, release=0.05, transit=0.45,
              push_x=115.0)
    angle, free, parts, limit = gesture(random.Random(5), **kw)
    back = pause_stretch(angle, free, parts, limit)
    assert (back.side, back.end_side) == (1, 1) and back.pressed_back
    # a lone removal that leaves the arm heavy on the other side: released from the E board it swings across onto
    # the W board on its own, with no second hand
    angle, free, parts, limit = gesture(random.Random(5), tau0=600.0, x=97.0, mass=30.0, f_hz=1.2, zeta=0.08,
                                        noise=0.002, release=0.05, transit=0.7, push_x=0.0)
    across = pause_stretch(angle, free, [(parts[0][0], parts[1][1])], limit)
    assert across is not None and (across.side, across.end_side) == (1, -1) and not across.pressed_back
