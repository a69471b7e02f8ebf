"""The rules engines, one module per game, and the balance arm's physics: pure functions of plain data.

State in, move in, a new state or a RuleError out; no I/O, clock, threads or randomness that is not
passed in (a contract in pyproject.toml checks the imports). Shipped data (balance models, map data)
is read from the package; the players' map completions reach the engines as data.

Imports: foundation only.
"""
