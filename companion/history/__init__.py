"""Game nights: every game in the store as a play, people across games, skill ratings, the history's stats.

- `index`: PlayIndex, the plays folded from the events (the running table's own fold), cached and joined
  (a resumed game and the game it resumes are one play), with the pages of plays and a play in full.
- `cache`: the summaries' cache file beside the store, checked against the events before use.
- `times`: a play's start, end and played time from its events' clock stamps, said as well as they are known.
- `people`: names to people (case- and accent-insensitive), renames and merges as events, guests.
- `ratings`: per-game skill ratings (openskill) from the finished plays.
- `stats`: per-player and per-game figures.

Imports: store, games, foundation (and openskill).
"""
