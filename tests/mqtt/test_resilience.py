"""The link under stress: a broker restart, a table killed hard, and the `companion hall` command."""

import json
import re
import subprocess
import sys
import urllib.request

from tests.mqtt.conftest import HALL, board_for, rows, wait_until




def get_json(url):
    with urllib.request.urlopen(url, timeout=5) as r:
        return json.loads(r.read())


def start_process(args, what):
    proc = subprocess.Popen([sys.executable, "-m", "companion", *args], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    m = re.search(r"http://[\d.]+:(\d+)", line)
    if not m:
        proc.kill()
        raise AssertionError(f"{what} did not start: {line!r} {proc.communicate(timeout=5)[1]}")
    return proc, f"http://127.0.0.1:{m.group(1)}"


def end_process(proc):
    if proc.poll() is None:
        proc.kill()
    proc.communicate(timeout=10)


def test_broker_restart_loses_no_retained_state_and_tables_reconnect(broker, tables, watchers):
    ts = [tables(broker.port, f"t{i}") for i in (1, 2, 3)]
    board = board_for(broker)
    # a persistent session: the broker keeps its subscription and queues events for it across the restart
    events = watchers(broker.port, [f"companion/{HALL}/+/event"], client_id="event-log", clean_session=False)
    try:
        wait_until(lambda: all(t.publisher.status()["state"] == "connected" for t in ts), what="tables connected")
        ts[0].host.act({"type": "roll", "value": 2})
        ts[2].host.act({"type": "roll", "value": 6})
        wait_until(lambda: all(t.settled() for t in ts), what="everything acknowledged")
        t3_seq = ts[2].host.seq
        ts[2].publisher.stop()   # a table that leaves cleanly: retained state stays, availability says offline
        wait_until(lambda: rows(board).get("t3", {}).get("online") is False, what="t3 offline")

        broker.stop()
        wait_until(lambda: all(t.publisher.status()["state"] != "connected" for t in ts[:2]), what="links down")
        wait_until(lambda: board.snapshot()["broker"]["state"] != "connected", what="the hall's link down")
        move = ts[0].host.snapshot()["view"]["moves"][0]["move"]
        ts[0].host.act({"type": "move", "move": move})          # played while the broker is away
        wait_until(lambda: ts[0].publisher.status()["queued"] == 1, what="the event queued")
        status = ts[0].publisher.status()
        assert status["state"] in ("connecting", "disconnected") and status["last_error"]
        assert status["down_for_s"] is not None

        broker.start()   # same port, same persistence file
        wait_until(lambda: all(t.publisher.status()["state"] == "connected" for t in ts[:2]), timeout=15,
                   what="tables reconnected by themselves")
        wait_until(lambda: ts[0].settled() and ts[1].settled(), what="the queued event published")

        fresh = watchers(broker.port, [f"companion/{HALL}/#"])

        def retained():
            states = {t.name: fresh.last(f"companion/{HALL}/{t.name}/state") for t in ts}
            seqs = {k: None if v is None else json.loads(v)["seq"] for k, v in states.items()}
            avail = {t.name: fresh.last(f"companion/{HALL}/{t.name}/availability") for t in ts}
            return seqs, avail
        expected = ({"t1": ts[0].host.seq, "t2": ts[1].host.seq, "t3": t3_seq},
                    {"t1": b"online", "t2": b"online", "t3": b"offline"})
        wait_until(lambda: retained() == expected, what=f"every table's retained state and availability {expected}",
                   detail=retained)

        def hall_ok():
            r = rows(board)
            return (board.snapshot()["broker"]["state"] == "connected" and set(r) == {"t1", "t2", "t3"}
                    and r["t1"]["seq"] == ts[0].host.seq and r["t1"]["online"] and r["t3"]["online"] is False)
        wait_until(hall_ok, timeout=15, what="the hall board back with all three tables")

        # no event was lost: the one played during the outage reached the persistent subscriber
        def t1_events():
            return [json.loads(p)["seq"] for p in events.on(f"companion/{HALL}/t1/event")]
        wait_until(lambda: ts[0].host.seq in t1_events(), timeout=15, what="the outage's event")
        assert sorted(set(t1_events())) == [e.seq for e in ts[0].host.events_after(1)]
    finally:
        board.stop()


CONFIG = """
[simulate]
enabled = true
demo = false
seed = 5
[mqtt]
host = "127.0.0.1"
port = {port}
hall = "{hall}"
table = "killed"
name = "Table by the door"
reconnect_min_s = 0.1
reconnect_max_s = 0.5
keepalive_s = 5
"""


def test_a_table_killed_hard_turns_offline_through_its_last_will(broker, tmp_path):
    cfg = tmp_path / "companion.toml"
    cfg.write_text(CONFIG.format(port=broker.port, hall=HALL))
    board = board_for(broker)
    proc, url = start_process(["run", "--config", str(cfg), "--port", "0", "--db", str(tmp_path / "ev.sqlite3"),
                               "--log-level", "WARNING"], "the table daemon")
    try:
        # online (its availability topic) and its state (another topic, which may come a moment later)
        wait_until(lambda: rows(board).get("killed", {}).get("online") is True
                   and rows(board)["killed"]["seq"] is not None, what="the table online with its state")
        row = rows(board)["killed"]
        assert row["name"] == "Table by the door" and row["game"] == "balance_duels"
        # the daemon shows the link on the page
        def page_link():
            link = get_json(url + "/api/state")["live"]["mqtt"]
            return link if link["queued"] == 0 else None
        link = wait_until(page_link, what="the page showing the link with nothing queued")
        assert link["state"] == "connected" and link["broker"] == f"127.0.0.1:{broker.port}" and link["dropped"] == 0
        proc.kill()   # SIGKILL: no goodbye; the broker sees the socket close and publishes the will
        proc.wait(timeout=10)
        wait_until(lambda: rows(board)["killed"]["online"] is False, timeout=10, what="the last will")
        assert rows(board)["killed"]["seq"] == row["seq"]   # its last state is still there
    finally:
        end_process(proc)
        board.stop()


def test_the_hall_command_serves_the_scoreboard(broker, tables):
    t = tables(broker.port, "t1")
    t.host.act({"type": "roll", "value": 3})
    proc, url = start_process(["hall", "--broker", "127.0.0.1", "--port", str(broker.port), "--hall", HALL,
                               "--listen-port", "0", "--log-level", "WARNING"], "the hall server")
    try:
        def shown():
            data = get_json(url + "/api/tables")
            rows = data["tables"]
            return data if rows and rows[0]["seq"] == t.host.seq and rows[0]["online"] is True else None
        data = wait_until(shown, what="the table on the hall server")
        assert data["hall"] == HALL and data["broker"]["state"] == "connected"
        with urllib.request.urlopen(url + "/", timeout=5) as r:
            assert b"Hall scoreboard" in r.read()
        proc.terminate()
        assert proc.wait(timeout=10) == 0
    finally:
        end_process(proc)


def test_the_hall_command_refuses_bad_arguments(tmp_path):
    (tmp_path / "ca.pem").write_text("not a certificate")
    for args, needle in [(["--broker", "127.0.0.1", "--hall", "a/b"], "--hall must be"),
                         (["--broker", "127.0.0.1", "--ca-file", str(tmp_path / "ca.pem")], "not a usable CA"),
                         (["--broker", "127.0.0.1", "--ca-file", str(tmp_path / "none.pem")], "no such file"),
                         (["--broker", "127.0.0.1", "--port", "70000"], "--port must be"),
                         (["--broker", "mqtt://x"], "--broker must be")]:
        r = subprocess.run([sys.executable, "-m", "companion", "hall", *args], capture_output=True, text=True,
                           timeout=30)
        assert r.returncode == 2 and needle in r.stderr, (args, r.stderr)
