"""The live stream's messages are encoded once and shared by every page (companion/web/feed.py)."""

import json

from companion.table.host import RECENT_EVENTS
from companion.web import create_app
from companion.web.feed import KEPT_EVENT_MESSAGES, StreamFeed
from tests.shell.table import changes


def parse_messages(blobs):
    """[(id, event, data)] from SSE message bytes."""
    out = []
    for blob in blobs:
        fields = dict(line.split(": ", 1) for line in blob.decode().strip("\n").split("\n"))
        out.append((int(fields["id"]) if "id" in fields else None, fields["event"], json.loads(fields["data"])))
    return out


def test_every_page_gets_the_same_bytes_for_the_same_change(companion):
    feed = StreamFeed(companion.host, companion.live)
    start = companion.host.seq
    changes(companion, 3)
    pages = [feed.after(start) for _ in range(20)]
    seq, first = pages[0]
    assert seq == companion.host.seq
    # the same objects, not equal copies: twenty pages cost one encoding per message
    assert all(p[0] == seq and all(a is b for a, b in zip(p[1], first)) for p in pages)
    assert feed.encoded == 3
    msgs = parse_messages(first)
    assert [m[0] for m in msgs] == [start + 1, start + 2, start + 3]
    assert all(m[1] == "state" for m in msgs)
    # the events in between carry the event alone; the newest also the state, with live readings
    assert [m[2]["state"] is None for m in msgs] == [True, True, False]
    assert msgs[-1][2]["state"]["seq"] == seq and "live" in msgs[-1][2]["state"]
    assert [m[2]["event"]["seq"] for m in msgs] == [start + 1, start + 2, start + 3]


def test_a_page_behind_by_different_amounts_shares_the_messages_it_has_in_common(companion):
    feed = StreamFeed(companion.host, companion.live)
    start = companion.host.seq
    changes(companion, 4)
    _, far = feed.after(start)
    _, near = feed.after(start + 2)
    assert near[0] is far[2] and near[1] is far[3]


def test_state_for_a_new_page_is_encoded_once_per_change(companion):
    feed = StreamFeed(companion.host, companion.live)
    seqs = {feed.state()[0] for _ in range(10)}
    assert feed.encoded == 1 and seqs == {companion.host.seq}
    changes(companion, 1)
    seq, message = feed.state()
    [(mid, event, data)] = parse_messages([message])
    assert seq == mid == companion.host.seq and event == "state" and data["event"] is None
    assert data["state"]["seq"] == seq and feed.encoded == 2


def test_nothing_new_means_no_messages(companion):
    feed = StreamFeed(companion.host, companion.live)
    assert feed.after(companion.host.seq) == (companion.host.seq, [])


def test_a_page_ahead_of_the_daemon_gets_the_whole_state(companion):
    """Its id is from before a restore or from another database: resuming from it would skip events."""
    feed = StreamFeed(companion.host, companion.live)
    assert feed.after(companion.host.seq + 50) is None


def test_a_page_too_far_behind_gets_the_whole_state(companion):
    feed = StreamFeed(companion.host, companion.live)
    start = companion.host.seq
    changes(companion, RECENT_EVENTS + 5)     # more than the host keeps in memory for resuming
    assert feed.after(start) is None


def test_live_readings_are_shared_between_pages_within_their_age(companion):
    now = [100.0]
    feed = StreamFeed(companion.host, companion.live, clock=lambda: now[0])
    first = feed.live()
    assert all(feed.live() is first for _ in range(10))
    now[0] += 0.5
    fresh = feed.live()
    assert fresh is not first and parse_messages([fresh])[0][1] == "live"
    assert feed.encoded == 2


def test_the_cache_of_event_messages_stays_bounded(companion):
    feed = StreamFeed(companion.host, companion.live)
    seq = companion.host.seq
    for _ in range(KEPT_EVENT_MESSAGES // 50 + 12):
        changes(companion, 60)
        feed.after(seq)           # behind by up to 60: every event but the newest is kept
        seq = companion.host.seq
    assert len(feed._events) <= KEPT_EVENT_MESSAGES


def test_the_stream_sends_the_shared_messages(companion):
    app = create_app(companion)
    feed = app.extensions["stream_feed"]
    start = companion.host.seq
    changes(companion, 2)
    c = app.test_client()
    resp = c.get("/api/stream", headers={"Last-Event-ID": str(start)}, buffered=False)
    body = b""
    chunks = resp.response
    while body.count(b"event: state") < 2:
        body += next(chunks)
    resp.close()
    _, expected = feed.after(start)
    assert b"".join(expected) in body
