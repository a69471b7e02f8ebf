"""The one error the store raises; it sits below every module of the store that raises it.

The log, its backups, salvage and opening all raise StoreError, and the log itself uses the backups: with
the error in a module of its own, every import inside the package goes one way.
"""


class StoreError(RuntimeError):
    """The database cannot be opened or written; the message says which file and why."""
