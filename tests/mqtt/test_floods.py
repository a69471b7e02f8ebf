"""Issue 34 items 11 and 12 tried again on every run, small: what a stranger with the broker's password can flood a
hall with (retained states under made-up tables; connections under a table's client id). The `online` flood (item 10)
is in test_tables.py, with the announce clock. bench/hostile_broker.py sends the issue's own sizes."""

import random

from companion.mqtt import hall as H
from companion.mqtt.hall import create_hall_app
from tests.mqtt.conftest import HALL, board_for, rows, wait_until
from tests.mqtt.floods import KINDS, Stranger, retained_flood, take_client_id




def test_a_retained_flood_leaves_the_hall_bounded_and_a_live_tables_card_live(broker, tables):
    """Three times as many made-up tables as the hall keeps, every kind of hostile state among them: the hall holds at most
    its bound, counts what it dropped, and the live table keeps its card, live; so does a hall that starts into it."""
    t = tables(broker.port, "t1")
    board = board_for(broker)
    stranger = Stranger(broker.port)
    try:
        # its state too, not only its availability: they are two messages, and a CI run once found the card online
        # with no state yet (seq None) — a state still on its way when the flood went out comes after all of it
        wait_until(lambda: rows(board).get("t1", {}).get("online") is True
                   and rows(board)["t1"].get("seq") == t.host.seq, what="the live table on the hall")
        flood = retained_flood(HALL, 3 * H.MAX_TABLES, 6000, random.Random(34))
        bad = sum(1 for i in range(len(flood)) if KINDS[i % len(KINDS)] in
                  ("not_json", "not_object", "nan", "nested", "over_the_limit"))
        stranger.publish_all(flood + [(f"companion/{HALL}/zz-last/state", b'{"name": "last"}')], retain=True)
        # messages reach the hall in the order they were published: the last one there means all are
        wait_until(lambda: "zz-last" in rows(board), what="the whole flood at the hall")

        for b in (board, board_for(broker)):        # the hall that saw it come, and one that starts into it
            if b is not board:
                # a new hall gets the table's retained availability and state as two messages, the state perhaps
                # after the flood's last: wait for the card the assertions read
                wait_until(lambda: "zz-last" in rows(b) and rows(b).get("t1", {}).get("seq") == t.host.seq,
                           what="a new hall reading the flood")
            body = create_hall_app(b).test_client().get("/api/tables")
            snap = body.get_json()
            assert len(snap["tables"]) <= H.MAX_TABLES and len(body.data) < 200_000, len(body.data)
            assert rows(b)["t1"]["online"] is True and rows(b)["t1"]["seq"] == t.host.seq
            assert snap["dropped"]["tables"] > 0 and snap["dropped"]["cut_texts"] > 0
            assert snap["broker"]["bad_payloads"] >= bad
            if b is board:
                t.host.act({"type": "roll", "value": 3})
            else:
                t.host.undo()
            wait_until(lambda: rows(b)["t1"]["seq"] == t.host.seq, timeout=5, what="the live table's change on the hall")
            if b is not board:
                b.stop()
    finally:
        stranger.close()
        board.stop()


def test_a_hall_that_starts_into_a_retained_flood_has_the_live_tables_state_at_once(broker, tables):
    """The broker sends a new hall its retained messages subscription by subscription: were the states first, the
    live table's state would come before its `online`, and the flood would push it out as one of its own kind; its
    card would then stay without a state until the table next changed. Nothing is published here after the flood."""
    t = tables(broker.port, "t1")
    board = board_for(broker)
    stranger = Stranger(broker.port)
    try:
        wait_until(lambda: rows(board).get("t1", {}).get("seq") == t.host.seq, what="the live table on the hall")
        flood = retained_flood(HALL, 3 * H.MAX_TABLES, 6000, random.Random(35))
        stranger.publish_all(flood + [(f"companion/{HALL}/zz-last/state", b'{"name": "last"}')], retain=True)
        wait_until(lambda: "zz-last" in rows(board), what="the whole flood at the hall")
        late = board_for(broker)
        try:
            wait_until(lambda: "zz-last" in rows(late), what="the flood at a hall that starts into it")
            wait_until(lambda: rows(late).get("t1", {}).get("seq") == t.host.seq, timeout=5,
                       what="the live table's retained state", detail=lambda: rows(late).get("t1"))
            assert rows(late)["t1"]["online"] is True and len(rows(late)) <= H.MAX_TABLES
        finally:
            late.stop()
    finally:
        stranger.close()
        board.stop()


def test_connections_under_the_tables_documented_id_knock_nothing_off(broker, tables, watchers):
    """The fixed id a table once had (`companion-<hall>-<table>`, in the docs): connecting under it takes over
    nobody now, so the broker publishes no last will and the table's link never drops."""
    t = tables(broker.port, "t1")
    wait_until(t.settled, what="connected")
    w = watchers(broker.port, [f"companion/{HALL}/t1/availability"])
    w.sync()
    assert take_client_id(broker.port, f"companion-{HALL}-t1", 4, hold_s=0.1) == 4
    w.sync()
    assert w.on(f"companion/{HALL}/t1/availability") == [b"online"]     # the retained one: no will, no flap
    assert t.publisher.status()["state"] == "connected" and t.publisher._connection == 1
