"""Re-running a game at the table off-line: the inputs file, the flight recorder, its bundle, and the replay.

- `inputs`: what the players did besides moving pawns (rolls, page actions, answers, undo), as JSON lines.
- `recorder`: the daemon's flight recorder, the last minutes of samples and inputs in RAM.
- `bundle`: the `.tar.gz` a "Report a misread" downloads.
- `session`: `companion replay`, the daemon's Balance Duels path on a recorded session.
"""
