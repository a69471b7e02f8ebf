"""Issue 34 measured again: what a page on the table's Wi-Fi (or a guest typing) gets from the daemon.

Run: .venv/bin/python bench/hostile_wifi.py [--json FILE]

One `companion run` on loopback, without a PIN (the issue's table: nothing but the request guard stands
between another page and the game), is sent each attack of the issue once, as the attacking page or
tablet would send it, and answers with a status:

- the no-cors POSTs a page elsewhere sent (Origin: http://evil.example, Sec-Fetch-Site: cross-site,
  text/plain or form bodies) to /api/roll, /api/undo, /api/buttons/roll and /api/new_game; the same as JSON
  (the Origin alone must refuse them) and as forms with no Origin at all (the content type alone must);
- DNS rebinding: the daemon named by a foreign Host, with a matching Origin, for a New game, a read and
  the double-slash path that once redirected to that Host;
- the framing headers on the page, the API and a script;
- a colour that is style text, for Risk's `colours` and 1815's `colour`, in a New game and a record;
- in every game a New game with every player named by 10,000 characters (as many players as the game takes:
  six in Imperial, as the issue sent), and a name holding a newline or a right-to-left override.

Then the size of /api/state, which must be what it was before the attacks (the issue measured 468 kB after
six accepted Imperial names), and the game unchanged; last, the page's own JSON roll, which must still pass.

Items 6-12 follow, each measured as the issue's attacker did: bench/hostile_table.py (hidden cash read without the
PIN, an oversized map completion and the next start, a map write on a read-only or full folder, a plain PIN's
device cookie across restarts) and bench/hostile_broker.py (a Mosquitto broker with passwords: the MQTT event
topic, an `online` flood, connections under a table's client id, a hall flooded with large retained tables;
--flood and --flood-kb make that flood smaller). --only-1-5 stops after items 1-5.
Exit code 1 if any answer is not the one expected.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from _common import Figures  # first: it also puts the repository on sys.path

import hostile_broker
import hostile_table

from tests.reliability.harness import DaemonProcess, write_config
from tests.reliability.httpfuzz import CSS_COLOUR, EVIL_ORIGIN, Request, send_over_http

LONG = 10_000
NO_CORS = {"Origin": EVIL_ORIGIN, "Sec-Fetch-Site": "cross-site"}
# the most players each game seats, so that as many long names as it would take are tried
MOST_PLAYERS = {"balance_duels": 4, "imperial": 6, "risk": 2, "balance_of_power": 6, "global_powers": 5}
EMPIRES = ("great_britain", "france", "prussia", "austria", "russia", "ottoman")


def all_named(game: str, names: list[str]) -> dict:
    """`game`'s New game options with these players' names."""
    if game == "balance_duels":
        return {"players": len(names), "names": names}
    if game == "balance_of_power":
        return {"players": [{"name": n, "empire": e} for n, e in zip(names, EMPIRES)]}
    return {"players": names}


def json_post(path: str, body, headers: dict[str, str] | None = None, ctype: str = "application/json") -> Request:
    raw = body if isinstance(body, bytes) else json.dumps(body, ensure_ascii=False).encode()
    return Request("POST", path, {"Content-Type": ctype, **(headers or {})}, raw)


def attacks(port: int) -> list[tuple[str, str, Request, int]]:
    """(class, what, request, the status it must get)."""
    out = []
    changes = (("/api/roll", {"value": 3}), ("/api/undo", {}), ("/api/buttons/roll", {}),
               ("/api/new_game", {"game": "risk"}))
    for path, body in changes:
        # a no-cors fetch may send a body only as text/plain, a form or multipart
        ctype = "application/x-www-form-urlencoded" if path == "/api/undo" else "text/plain"
        raw = b"" if path == "/api/undo" else json.dumps(body).encode()
        out.append(("no-cors POST from another origin", f"POST {path} ({ctype}, {len(raw)} bytes)",
                    json_post(path, raw, NO_CORS, ctype), 403))
    for path, body in changes:
        out.append(("JSON POST from another origin", f"POST {path} (application/json, Origin only)",
                    json_post(path, body, {"Origin": EVIL_ORIGIN}), 403))
    for path, body in changes:
        out.append(("form POST, no Origin", f"POST {path} (application/x-www-form-urlencoded)",
                    json_post(path, b"value=3", ctype="application/x-www-form-urlencoded"), 415))
    out.append(("form POST, no Origin", "POST /api/undo (no Content-Type, empty body)",
                Request("POST", "/api/undo", {}, None), 415))
    rebound = f"evil.example:{port}"
    out += [("DNS rebinding", f"POST /api/new_game {{game: risk}}, Host {rebound}, Origin http://{rebound}",
             json_post("/api/new_game", {"game": "risk"}, {"Host": rebound, "Origin": f"http://{rebound}"}), 421),
            ("DNS rebinding", f"GET /api/state, Host {rebound}",
             Request("GET", "/api/state", {"Host": rebound}, None), 421),
            ("DNS rebinding", f"GET /api//state, Host {rebound}",
             Request("GET", "/api//state", {"Host": rebound}, None), 421),
            ("DNS rebinding", "GET /api//state, the daemon's own Host (no redirect)",
             Request("GET", "/api//state", {}, None), 404)]
    for game, options in (
            ("risk", {"players": ["Ann", "Bob"], "colours": {"Ann": CSS_COLOUR, "Bob": "blue"}}),
            ("balance_of_power", {"players": [{"name": "Ann", "empire": "france", "colour": CSS_COLOUR},
                                              {"name": "Bob", "empire": "prussia"}]})):
        body = {"game": game, "options": options}
        out.append(("CSS colour", f"{game} New game", json_post("/api/new_game", body), 409))
        record = json.dumps({"kind": "new_game", "body": body}).encode() + b"\n"
        out.append(("CSS colour", f"{game} record upload", json_post("/api/record", record,
                                                                    ctype="application/x-ndjson"), 409))
    for game, most in MOST_PLAYERS.items():
        names = [chr(ord("a") + i) * LONG for i in range(most)]
        req = json_post("/api/new_game", {"game": game, "options": all_named(game, names)})
        out.append(("10,000-character names", f"{game}: {most} names, a {len(req.body):,}-byte body", req, 409))
    for game in MOST_PLAYERS:
        for name, shown in (("Ann\nBob", "a newline"), ("\u202eAnn", "U+202E")):
            req = json_post("/api/new_game", {"game": game, "options": all_named(game, [name, "Cy"])})
            out.append(("hidden characters in a name", f"{game}: {shown}", req, 409))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", help="also write the figures to this file")
    p.add_argument("--only-1-5", action="store_true", help="items 1-5 only (no broker needed)")
    p.add_argument("--flood", type=int, default=400, help="item 12: retained states in the flood (default 400)")
    p.add_argument("--flood-kb", type=int, default=40, help="item 12: kB of each (default 40)")
    args = p.parse_args(argv)
    fig = Figures("hostile_wifi", args.json)
    ok = True
    rows = []
    with tempfile.TemporaryDirectory(prefix="companion-hostile-wifi-") as tmp:
        daemon = DaemonProcess(write_config(Path(tmp), demo=False), Path(tmp) / "events.sqlite3")
        try:
            port = daemon.port

            def state() -> tuple[int, dict]:
                """/api/state's size in bytes, and the state without its live sensor readings (which move by
                themselves, a few bytes either way, while the game stays as it was)."""
                status, _, _, payload = send_over_http(port, Request("GET", "/api/state", {}, None))
                assert status == 200, status
                return len(payload), {k: v for k, v in json.loads(payload).items() if k != "live"}

            size_before, before = state()
            fig.say(f"/api/state before: {size_before:,} bytes (game {before['game']}, seq {before['seq']})")
            for cls, what, req, expected in attacks(port):
                status, headers, _, payload = send_over_http(port, req)
                good = status == expected and "Location" not in headers
                ok &= good
                error = json.loads(payload).get("error", "") if payload.startswith(b"{") else ""
                rows.append({"class": cls, "request": what, "status": status, "expected": expected, "ok": good,
                             "error": error[:100]})
                fig.say(f"{'ok ' if good else 'BAD'} {status} (expected {expected})  {cls}: {what}  {error[:70]!r}")
            framing = {}
            for path in ("/", "/api/state", "/static/app.js"):
                _, headers, _, _ = send_over_http(port, Request("GET", path, {}, None))
                csp = headers.get("Content-Security-Policy", "")
                framing[path] = {"frame-ancestors 'none'": "frame-ancestors 'none'" in csp,
                                 "X-Frame-Options": headers.get("X-Frame-Options"),
                                 "script-src 'self'": "script-src 'self'" in csp}
                good = framing[path]["frame-ancestors 'none'"] and framing[path]["X-Frame-Options"] == "DENY"
                ok &= good
                fig.say(f"{'ok ' if good else 'BAD'} GET {path}: Content-Security-Policy {csp!r}, "
                        f"X-Frame-Options {headers.get('X-Frame-Options')!r}")
            size_after, after = state()
            # the whole state but the live readings, compared as it is sent: names, options, view, scores, seq
            unchanged = json.dumps(after, sort_keys=True) == json.dumps(before, sort_keys=True)
            ok &= unchanged and abs(size_after - size_before) < 100
            fig.say(f"/api/state after every attack: {size_after:,} bytes (before {size_before:,}); "
                    f"everything but the live readings {'unchanged' if unchanged else 'CHANGED'}")
            own = f"http://127.0.0.1:{port}"
            status, _, _, _ = send_over_http(port, json_post("/api/roll", {"value": 3},
                                                             {"Origin": own, "Sec-Fetch-Site": "same-origin"}))
            ok &= status == 200
            fig.say(f"{'ok ' if status == 200 else 'BAD'} {status} the page's own POST /api/roll (Origin {own}, JSON)")
        finally:
            code = daemon.stop()
    refused = sum(1 for r in rows if r["ok"])
    fig.put("answers", rows)
    fig.put("framing", framing)
    fig.put("state_bytes_before", size_before)
    fig.put("state_bytes_after", size_after)
    fig.put("state_unchanged", unchanged)
    fig.put("own_page_roll", status)
    fig.put("clean_stop_exit_code", code)
    fig.put("figure", f"{refused} of {len(rows)} attacks answered as expected; /api/state {size_after:,} bytes "
                      f"after them ({size_before:,} before)")
    ok = ok and code == 0
    if not args.only_1_5:
        fig.say("items 6-9: bench/hostile_table.py")
        ok &= hostile_table.run(fig)
        fig.say("items 6 (MQTT), 10-12: bench/hostile_broker.py")
        ok &= hostile_broker.run(fig, args.flood, args.flood_kb)
    return fig.finish(ok)


if __name__ == "__main__":
    sys.exit(main())
