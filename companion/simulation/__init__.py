"""Every simulated world in one place: the table behind `make run`, sensor traces, whole games.

- `table`: a simulated balance arm (its physics, hands on it) and simulated drivers reading it.
- `traces`: scripted or random sessions on the simulated arm as sensor traces, arms and hands drawn at random.
- `games`: whole simulated games of Balance Duels played through the replay.
- `evaluation`: the follower's events scored against a simulated session's ground truth.

Used by the benchmarks and the tests; production code imports it only where a person asked for the
simulated table (see companion.table). Imports: anything below cli.
"""
