"""`companion replay`: a recorded session re-run through the daemon's own Balance Duels path, off-line.

- `session`: the replay (the arm link and game host the daemon runs, on a recorded session's clock).
- `commands`: the `companion replay` command.

The inputs file, the flight recorder and the misread report it reads live in companion.recorder.
Imports: table, recorder and everything below them.
"""
