"""The plays exported: a CSV of one row per player per play, and a JSON file in BG Stats' own format.

Both are made from the plays as the API describes them (`PlayIndex.describe`, through `PlayIndex.export`), so an
export says exactly what the history page says: the same people, winners, ranks, times and their quality.

**CSV** (`csv_rows`, `csv_text`): one row per seat of every play (a play nobody could be read from still gets a
row, with the seat's cells empty), UTF-8, RFC 4180 quoting. It is made to be opened in a spreadsheet, so a text
cell that a spreadsheet would take for a formula (starting with = + - @, a tab or a carriage return, or their
full-width forms) is written with a leading apostrophe; numbers are written as numbers.

**BG Stats** (`bgstats`): the JSON that BG Stats itself exports and imports (its .bgsplay files): `games`,
`players`, `locations` and `plays`, each play naming its game, location and players by their `id`
(`gameRefId`, `locationRefId`, `playerScores[].playerRefId`). BG Stats publishes no schema; the field names
follow its own exports as the public tools that read and write them use them. Every `uuid` is derived from the
store and the play, person or game (uuid5), so exporting again gives the same ones and an app that matches by
uuid does not count a play twice. What is filled, and how a play whose time the Pi did not know is written, is
in docs/game-nights.md ("Exports").

Pure: no clock is read (the export's time zone is given; None is the machine's own zone, from its settings).
"""

from __future__ import annotations

import csv
import io
import json
import uuid
from datetime import datetime, tzinfo
from typing import Any, Iterable, Iterator, Mapping, Sequence

from companion.history import times

CSV_COLUMNS = ("play_id", "game", "title", "variant", "start", "start_quality", "end", "end_quality",
               "duration_min", "breaks", "finished", "ended", "turns", "seat", "player", "typed_name", "guest",
               "colour", "team", "role", "score", "rank", "winner")
# what a spreadsheet may read as the start of a formula (the full-width forms too: some spreadsheets fold them)
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\uff1d", "\uff0b", "\uff0d", "\uff20")
CSV_BOM = "\ufeff"           # lets Excel open the file as UTF-8 (LibreOffice and Numbers read it either way)

# the namespace of every uuid this companion writes into a BG Stats file (a fixed, random one)
NAMESPACE = uuid.UUID("4f0f3c52-8a38-4bb6-9c61-0e4d3b6f2a17")
BGSTATS_DATE = "%Y-%m-%d %H:%M:%S"
UNKNOWN_DATE = "1970-01-01 00:00:00"     # a play with no readable time at all (no label): said in its comments
KNOWN = ("synced", "worked_back")        # times that can be vouched for (companion/history/times.py)


# --------------------------------------------------------------------------- times

def local(at: str | None, tz: tzinfo | None) -> datetime | None:
    """An ISO time from a play (UTC) in the export's zone: `tz`, or the machine's own zone when None."""
    t = times.parse_at(at)
    if t is None:
        return None
    return t.astimezone(tz) if tz is not None else t.astimezone()


def _iso(at: str | None, tz: tzinfo | None) -> str | None:
    t = local(at, tz)
    return t.isoformat(timespec="seconds") if t is not None else None


# --------------------------------------------------------------------------- CSV

def cell(value: Any) -> Any:
    """One CSV cell: empty for None, yes/no for a truth value, a number as a number, text made formula-safe."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else value
    text = str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def team_number(team: Any) -> Any:
    """A team as the exports number it: from 1 (the engines count Balance Duels' two teams from 0)."""
    return team + 1 if isinstance(team, int) and not isinstance(team, bool) else team


def _variant(variant: Mapping[str, Any]) -> str:
    return "; ".join(f"{k}={v if isinstance(v, str) else json.dumps(v, separators=(',', ':'))}"
                     for k, v in sorted(variant.items()))


def csv_rows(plays: Iterable[Mapping[str, Any]], tz: tzinfo | None = None) -> Iterator[list[Any]]:
    """The header, then one row per player per play (cells made safe by `cell`)."""
    yield list(CSV_COLUMNS)
    for p in plays:
        start, end = p.get("start") or {}, p.get("end") or {}
        played = p.get("played_s")
        base = [p["id"], p.get("game"), p.get("title"), _variant(p.get("variant") or {}),
                _iso(start.get("at"), tz), start.get("quality", "unknown"), _iso(end.get("at"), tz),
                end.get("quality", "unknown"), round(played / 60, 1) if played is not None else None, p.get("breaks"),
                bool(p.get("over")), (p.get("ended") or {}).get("code"), p.get("turns")]
        seats = p.get("players") or [None]
        for pl in seats:
            if pl is None:
                rest = [None] * 10
            else:
                rest = [pl.get("seat"), pl.get("name"), pl.get("typed"), bool(pl.get("guest")), pl.get("colour"),
                        team_number(pl.get("team")), pl.get("role"), pl.get("score"), pl.get("rank"), bool(pl.get("winner"))]
            yield [cell(v) for v in base + rest]


def csv_chunks(plays: Iterable[Mapping[str, Any]], tz: tzinfo | None = None, *, bom: bool = False,
               rows_per_chunk: int = 500) -> Iterator[str]:
    """The CSV text in pieces (for a streamed response): CRLF line ends, every cell quoted when it must be."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    if bom:
        buffer.write(CSV_BOM)
    for n, row in enumerate(csv_rows(plays, tz), start=1):
        writer.writerow(row)
        if n % rows_per_chunk == 0:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    if buffer.tell():
        yield buffer.getvalue()


def csv_text(plays: Iterable[Mapping[str, Any]], tz: tzinfo | None = None, *, bom: bool = False) -> str:
    return "".join(csv_chunks(plays, tz, bom=bom))


# --------------------------------------------------------------------------- BG Stats

def _uuid(*parts: Any) -> str:
    return str(uuid.uuid5(NAMESPACE, "\x1f".join(str(p) for p in parts)))


def _score(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return ""
    return str(int(value)) if float(value).is_integer() else str(value)


def _date(point: Mapping[str, Any] | None, tz: tzinfo | None) -> str | None:
    t = local((point or {}).get("at"), tz)
    return t.strftime(BGSTATS_DATE) if t is not None else None


def _minutes(seconds: float | None) -> str:
    m = round(seconds / 60) if seconds is not None else 0
    return f"{m} min"


def _comments(p: Mapping[str, Any], start: Mapping[str, Any]) -> str:
    parts = [f"Table Companion play {p['id']}" + (f" (resumed: games {', '.join(map(str, p['parts']))})"
                                                  if len(p.get("parts") or []) > 1 else "") + "."]
    quality = start.get("quality", "unknown")
    if quality == "worked_back":
        parts.append("Start time worked back from a later clock sync that night.")
    elif quality == "unsynced":
        parts.append("Start time NOT KNOWN: the Pi's clock was not set that night, so the date is what it said "
                     "and may be far off.")
    elif quality == "unknown":
        parts.append("Start time NOT KNOWN: recorded before the companion kept clock stamps, so the date is what "
                     "the Pi's clock said." if start.get("at") else "Start time NOT KNOWN: no time was recorded.")
    if not p.get("over"):
        parts.append("Not finished (ignored for statistics).")
    elif p.get("ended"):
        parts.append(f"Ended: {p['ended'].get('text') or p['ended'].get('code')}.")
    if p.get("played_s") is None:
        parts.append("Length not known.")
    elif p.get("breaks"):
        parts.append(f"Played {_minutes(p['played_s'])} with {p['breaks']} break(s).")
    parts.append(f"{p.get('turns', 0)} turns.")
    if p.get("variant"):
        parts.append(f"Rules: {_variant(p['variant'])}.")
    return " ".join(parts)


def bgstats(plays: Sequence[Mapping[str, Any]], *, store: str, firsts: Mapping[tuple[str, str], int] | None = None,
            tz: tzinfo | None = None, location: str = "Table Companion", total: int | None = None,
            offset: int = 0) -> dict:
    """The plays as a BG Stats file. `store` names the store (the uuids' base), `firsts` maps (person, game) to
    the id of that person's first play of that game in the whole history (BG Stats' `newPlayer`)."""
    firsts = firsts or {}
    games: dict[str, dict] = {}
    players: dict[tuple[str, str], dict] = {}     # ("person", id) or ("guest", name key) -> the entry
    newest = None
    out_plays = []

    def touch(entry: dict, when: str) -> None:
        if when > entry["modificationDate"]:
            entry["modificationDate"] = when

    for p in plays:
        start = p.get("start") or {"at": None, "quality": "unknown"}
        t = local(start.get("at"), tz)
        play_date = t.strftime(BGSTATS_DATE) if t is not None else UNKNOWN_DATE
        changed = _date(p.get("end"), tz) or play_date
        newest = max(newest or changed, changed)
        key = str(p.get("game"))
        game = games.get(key)
        if game is None:
            game = games[key] = {
                "id": len(games) + 1, "uuid": _uuid("game", key), "name": str(p.get("title") or key),
                "modificationDate": changed, "cooperative": False, "highestWins": True, "noPoints": False,
                "usesTeams": key == "balance_duels", "bggId": 0, "bggName": "", "bggYear": 0, "designers": "",
            }
        touch(game, changed)
        uses_teams = any(pl.get("team") is not None for pl in p.get("players") or [])
        scores = []
        for pl in p.get("players") or []:
            person = pl.get("person")
            ref = ("person", person) if person else ("guest", " ".join(str(pl.get("name")).casefold().split()))
            entry = players.get(ref)
            if entry is None:
                entry = players[ref] = {
                    "id": len(players) + 1, "uuid": _uuid(store, *ref), "name": str(pl.get("name")),
                    "isAnonymous": person is None, "modificationDate": changed, "bggUsername": "",
                }
            touch(entry, changed)
            role = " / ".join(str(v) for v in (pl.get("colour"), pl.get("role")) if v)
            score = {
                "playerRefId": entry["id"], "score": _score(pl.get("score")), "winner": bool(pl.get("winner")),
                "rank": int(pl["rank"]) if isinstance(pl.get("rank"), int) else 0, "seatOrder": int(pl.get("seat") or 0),
                "startPlayer": False, "newPlayer": bool(person) and firsts.get((person, key)) == p["id"],
            }
            if role:
                score["role"] = role
            if uses_teams and pl.get("team") is not None:
                score["team"] = f"Team {team_number(pl['team'])}"
            scores.append(score)
        out_plays.append({
            # from the play's first part: a play resumed after an export keeps its uuid (its id is its newest part's)
            "uuid": _uuid(store, "play", (p.get("parts") or [p["id"]])[0]), "gameRefId": game["id"], "locationRefId": 1,
            "playDate": play_date, "playDateYmd": int(t.strftime("%Y%m%d")) if t is not None else 19700101,
            "entryDate": changed, "modificationDate": changed,
            "durationMin": round(p["played_s"] / 60) if p.get("played_s") is not None else 0,
            "ignored": not p.get("over"), "manualWinner": bool(p.get("over")), "usesTeams": uses_teams,
            "rounds": 0, "board": "", "scoringSetting": 0, "rating": 0, "expansionPlays": [], "playImages": "[]",
            "comments": _comments(p, start), "playerScores": scores,
        })
    shown = len(out_plays)
    of = f" of {total}" if total is not None and total != shown else ""
    since = f", after the {offset} newest" if offset else ""
    return {
        "about": (f"Board game plays exported by Table Companion ({shown}{of} plays{since}, newest first), in the "
                  "format of BG Stats' own exports: open or import it in BG Stats."),
        "games": list(games.values()),
        "players": list(players.values()),
        "locations": [{"id": 1, "uuid": _uuid(store, "location"), "name": location,
                       "modificationDate": newest or UNKNOWN_DATE}],
        "plays": out_plays,
    }
