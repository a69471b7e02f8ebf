"""Sensing: calibration, signal processing and inference of physical events on the balance arm.

This layer knows the arm's geometry (holders, pawn masses, stiffness, tipping angle)
but no game rules. See docs/sensing.md. The pieces the daemon uses:

- `ArmFollower` (follower.py): fed raw samples, decides place / remove / move / tip /
  untip events, keeps live values, checks the board against the game's pawns;
- `match_moves`, `chosen_move` (inference.py): narrow a sensed change to legal moves;
- `for_config`, `calibrated_model` (calibration.py): the calibration the daemon runs
  with (config + calibration.toml beside it);
- `CalibrationSession` (calibration_steps.py): the calibration steps, for the page.

Imports: config, games (the arm's geometry and physics), foundation. Never a driver, the store or the
running table: what the devices read reaches it as plain samples.
"""

from companion.sensing.calibration import ArmCalibration, calibrated_model, for_config
from companion.sensing.calibration_steps import CalibrationSession
from companion.sensing.events import ArmEvent, Change
from companion.sensing.follower import ArmFollower, FollowerSettings
from companion.sensing.inference import MoveMatch, chosen_move, match_moves

__all__ = ["ArmCalibration", "ArmEvent", "ArmFollower", "CalibrationSession", "Change", "FollowerSettings",
           "MoveMatch", "calibrated_model", "chosen_move", "for_config", "match_moves"]
