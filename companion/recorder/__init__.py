"""What the table saw and did, kept for a replay: the inputs file, the flight recorder and the misread report.

- `inputs`: what the players did besides moving pawns (rolls, page actions, answers, undo), as JSON lines.
- `flight`: the daemon's flight recorder, the last minutes of samples and inputs in RAM.
- `bundle`: the `.tar.gz` a "Report a misread" downloads.
- `lines`: the daemon's game events as JSON lines, the same text in a report and in a replay's output.

Imports: store, sensing, config, games, foundation. Never the running table (companion.table) or the replay.
"""
