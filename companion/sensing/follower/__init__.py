"""Following the arm sample by sample: when the hands are off, what changed, and whether it tipped.

The follower is fed raw rows in time order — `feed(t, sensor, value)` with the
trace's sensor names — and decides physical events as the arm settles:

1. Load cells: known glitch values are dropped, single-sample spikes of any other
   value are dropped one sample late, counts become grams. What a cell dropped that
   the other cells show too (the top of a firm press at 10 SPS) goes back into the
   traces its gesture's touches are located from.
2. A sample far from its channel's recent mean means something touches the arm
   (a hand, a pawn): the state before is frozen as the baseline, and the follower
   waits until every channel has been steady again for `quiet_s`. That is the
   moment the hands are off: the weight is settled (HX711 settling included).
3. The angle is not settled then — the arm swings for many seconds — so its rest
   value is fitted from the swing (swing.py), as soon as a fraction of a period
   after the hands left. The swing's frequency and damping are predicted from the
   pawns on the arm (each adds m·x² to the moment of inertia of the calibrated empty
   arm) — for the change being judged, from the pawns its likeliest explanation
   leaves — and the prediction is corrected from long swings. Resting on the board,
   the angle only says |τ| ≥ τ_tip.
4. Every candidate change is scored against (ΔW, Δτ) (inference.py); the follower
   decides as soon as the best, with those it can never be told from, is sure
   enough, or after `max_wait_s` at the latest — then says whether it is ambiguous.
5. Tip and un-tip are judged at the same moment, with the hands off: the tilt
   switch (debounced) must have held for `board_dwell_s` and the angle must agree.
   A hand pressing the arm onto the board while placing is therefore not a tip.

Slow drift of the zero is tracked only while the arm is settled and unchanged, so
the live weight and the board check stay honest over a long game; its rate, learned
from the settled spells (drift.py), is taken off every weight change judged.

Parts (each a concern of its own): settings.py (settings, beliefs), weighing.py (load cells), swinging.py
(the angle and the swing's rest), touching.py (the hands' touches), judging.py (measure, rank, decide),
learning.py (the game's word and what it teaches), core.py (ArmFollower, the loop, the page's view).
"""

from companion.sensing.follower.core import ArmFollower
from companion.sensing.follower.settings import (LEARNED_REL, MAX_BELIEFS, MAX_BELIEFS_ON_BOARD, OMEGA_RANGE,
                                                 REMEMBERED_CHANGES, UNMEASURED_PERIODS, UNMEASURED_REL, WIDE_REL,
                                                 Belief, FollowerSettings)
from companion.sensing.follower.touching import _summed

__all__ = ["ArmFollower", "Belief", "FollowerSettings", "LEARNED_REL", "MAX_BELIEFS", "MAX_BELIEFS_ON_BOARD",
           "OMEGA_RANGE", "REMEMBERED_CHANGES", "UNMEASURED_PERIODS", "UNMEASURED_REL", "WIDE_REL", "_summed"]
