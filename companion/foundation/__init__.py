"""What every layer stands on: the clocks, atomic file writes, strict JSON, the PIN hash, TOML line locating.

- `clock`: the monotonic clock (and a fake one for tests); never the wall clock for timing.
- `table_time`: the table clock the follower, the flight recorder and a replay share.
- `atomic`: files written whole or not at all.
- `strict_json`: JSON that refuses NaN, Infinity and numbers too large for a double, both ways.
- `pin`: the table PIN's salted hash.
- `toml_lines`: the line of a TOML file a key sits on (for FILE:LINE messages), and TOML values written back.
- `wall_clock`: the stamp each event is written with (boot id, monotonic time, whether the wall clock is synced).

Imports: the standard library only, never another `companion` package.
"""
