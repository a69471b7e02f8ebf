"""Which like pawn is which, when the follower could not keep every account of it.

Like pawns differ by a tenth of a gram or two, and the cells weigh that well: a removal's weight says which of two
like pawns left. That holds only as long as the follower knows which pawn is where. After look-alike changes (a
beat of like pawns or the mover's removal, two advances one holder apart) it keeps each assignment of masses as an
account of its own, and those accounts compete for the few places it keeps with accounts of where the pawns are;
the assignments it drops were not ruled out. Dropped, a swap's probability stays with the pawns of the account kept
for the same holders: each pawn then carries the mass of the like pawn it may be, and how likely (`doubt`), which
the likelihood reads as a mixture of the two (foreign quiet 27500 at 332.9 s: a removal at W2 of a 5.99 g M was
taken at 1.0 as a beat W2 → E4 — the follower's 5.80 g for W2 and 6.01 g for E4 swapped since 150 s, where the
other assignment, at 5 %, was dropped among the accounts of a tipped arm).

Pure functions of plain pawns; the follower calls `fold` as it carries its accounts forward."""

from __future__ import annotations

from dataclasses import replace
from typing import Sequence

from companion.sensing.inference import TrackedPawn

# a doubt below this is no doubt (an assignment this unlikely is not kept as an account either)
LEAST_DOUBT = 1e-3


def occupancy(pawns: Sequence[TrackedPawn]) -> tuple:
    """Which holders hold pawns of which size, masses aside."""
    return tuple(sorted((p.holder, p.size) for p in pawns))


def kept_accounts(accounts: Sequence[list], cap: int) -> tuple[list[list], list[list]]:
    """Which of `accounts` ([weight, pawns, ...], heaviest first) the follower keeps, at most `cap`, and the rest:
    the heaviest of each arrangement of the pawns (holders and sizes) first, then the heaviest of the others. Kept by
    weight alone, accounts that only give like pawns other masses crowd out an arrangement the sensors could not rule
    out — like pawns one holder in and one out leave the torque as it was — and a later change it alone explains is
    then explained by none (ours, 10 SPS, seed 30700007: 24 accounts of two arrangements after a beat at 213 s, the
    true one dropped; a place at W6 at 274 s read as unexplained). A dropped mass variant is not lost: `fold` keeps
    it as its pawns' doubt. Both lists heaviest first."""
    firsts, seconds, seen = [], [], set()
    for entry in accounts:
        key = occupancy(entry[1])
        (seconds if key in seen else firsts).append(entry)
        seen.add(key)
    kept = firsts[:cap] + seconds[:max(0, cap - len(firsts))]
    chosen = {id(e) for e in kept}
    kept.sort(key=lambda e: -e[0])
    return kept, [e for e in accounts if id(e) not in chosen]


def fold(kept: list[list], dropped: Sequence[Sequence]) -> None:
    """Fold each dropped account ([weight, pawns, ...]) into the heaviest kept one ([weight, pawns, ...], heaviest
    first) with the same occupancy: its weight joins that account's, and the masses it gave the pawns become their
    doubt. `kept` is changed in place; accounts of other occupancies are left out, as before."""
    by_occupancy: dict[tuple, int] = {}
    for i, entry in enumerate(kept):
        by_occupancy.setdefault(occupancy(entry[1]), i)
    folded: dict[int, list[tuple[float, Sequence[TrackedPawn]]]] = {}
    for entry in dropped:
        i = by_occupancy.get(occupancy(entry[1]))
        if i is not None:
            folded.setdefault(i, []).append((entry[0], entry[1]))
    for i, variants in folded.items():
        kept[i][1] = doubted(kept[i][1], kept[i][0], variants)
        kept[i][0] += sum(w for w, _ in variants)


def doubted(pawns: Sequence[TrackedPawn], weight: float,
            variants: Sequence[tuple[float, Sequence[TrackedPawn]]]) -> list[TrackedPawn]:
    """`pawns` (an account of `weight`) with the doubt that `variants` (the same holders and sizes, other masses,
    each with its weight) leave on each: like pawns in a holder are paired lightest to lightest, and a pawn's doubt
    is the share of the accounts, each with its own doubts, in which it weighs otherwise (its alternative: the
    likeliest other mass)."""
    total = weight + sum(w for w, _ in variants)
    out = list(pawns)
    slots: dict[tuple[str, str], list[int]] = {}
    for i, p in enumerate(pawns):
        slots.setdefault((p.holder, p.size), []).append(i)
    for slot, idx in slots.items():
        idx.sort(key=lambda i: pawns[i].mass_g)
        theirs = [sorted((p for p in v if (p.holder, p.size) == slot), key=lambda p: p.mass_g) for _, v in variants]
        for k, i in enumerate(idx):
            mine = pawns[i]
            masses: dict[float, list[float]] = {}      # mass (to the hundredth of a gram) -> [probability, mass]

            def add(mass: float, share: float) -> None:
                entry = masses.setdefault(round(mass, 2), [0.0, mass])
                entry[0] += share

            for w, p in [(weight, mine)] + [(w, t[k]) for (w, _), t in zip(variants, theirs)]:
                add(p.mass_g, w * (1.0 - p.doubt))
                if p.doubt > 0.0:
                    add(p.alt_g, w * p.doubt)
            same = masses.pop(round(mine.mass_g, 2))[0] / total
            if not masses or 1.0 - same < LEAST_DOUBT:
                continue
            share, alt = max(masses.values(), key=lambda e: e[0])
            if share / total > same:
                # the other mass is the likelier: the pawn weighs that, and may be this one
                out[i] = replace(mine, mass_g=alt, alt_g=mine.mass_g, doubt=1.0 - share / total)
            else:
                out[i] = replace(mine, alt_g=alt, doubt=1.0 - same)
    return out
