"""Changes made on a simulated Companion's game, for tests that need a stream of events."""


def changes(companion, n: int) -> None:
    """n changes to the Balance Duels game: a roll, its undo, a roll, ..."""
    for _ in range(n):
        if companion.host.snapshot()["view"]["roll"] is None:
            companion.roll_die(value=3)
        else:
            companion.host.undo()
