"""The append-only event log (SQLite), its rolling backups, and recovery from a damaged file.

- `log`: EventStore and Event, the log itself (one transaction per append, WAL, synchronous=FULL).
- `acked`: the record of the last acknowledged event outside SQLite (`<database>.acked`), and what is lost.
- `backups`: the online backup before each new game, the newest few kept, listed for a restore.
- `inspection`: whether a database file is a good event store, and what it holds.
- `salvage`: the events still readable in a damaged database, put into the restored store.
- `opening`: open_store, its start-up checks and recovery (stale WAL, damaged file moved aside), the notice.
- `errors`: StoreError, below every module that raises it.
- `files`: how the store names and syncs its files (shared by the other modules).

Imports: foundation only.
"""

from companion.store.acked import ACK_SLOT, AckRecord, AckRecordError, AckState, LostRun, ack_path
from companion.store.backups import Backup, list_backups
from companion.store.errors import StoreError
from companion.store.inspection import Inspection, inspect_database
from companion.store.log import Event, EventStore
from companion.store.opening import open_store
from companion.store.salvage import Salvage, salvage_events

__all__ = [
    "ACK_SLOT", "AckRecord", "AckRecordError", "AckState", "Backup", "Event", "EventStore", "Inspection", "LostRun",
    "Salvage", "StoreError", "ack_path", "inspect_database", "list_backups", "open_store", "salvage_events",
]
