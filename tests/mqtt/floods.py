"""What a stranger with the hall's broker password can send, shared by tests/mqtt/test_floods.py (small floods, every
run) and bench/hostile_broker.py (issue 34's sizes): retained states under other tables' ids, Home Assistant
`online` announces, connections that take a table's client id.

Everything here talks to a broker on 127.0.0.1 and waits with deadlines.
"""

from __future__ import annotations

import json
import random
import threading
import time

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from companion.mqtt.hall import MAX_PAYLOAD

# the kinds of retained state a hostile client publishes for a made-up table, most of them large: the hall must keep
# each bounded (texts cut, scores capped, tables capped) or ignore it (not JSON, not an object, too big, NaN)
KINDS = ("large", "large", "large", "many_scores", "wrong_types", "not_json", "not_object", "nan", "nested",
         "over_the_limit", "cleared")


def hostile_state(kind: str, rng: random.Random, size: int) -> bytes:
    """One retained state payload of `kind`, about `size` bytes where its kind has a size."""
    # markup and a right-to-left override among plain letters, so that about `size` bytes of JSON hold it
    text = "\u202e<b>" + "".join(rng.choice("abcdefghij <>&'") for _ in range(max(1, size // 3 - 120)))
    if kind == "large":        # the issue's: long name, title and message, 40 players
        return json.dumps({"name": text, "title": text, "message": text, "to_move": text[:200], "seq": rng.randrange(9),
                           "scores": [{"name": f"p{n}", "score": n} for n in range(40)]}).encode()
    if kind == "many_scores":
        return json.dumps({"name": "x", "scores": [{"name": text[:30], "score": n} for n in range(size // 40 or 1)],
                           "balance": {f"k{n}": text[:50] for n in range(200)}}).encode()
    if kind == "wrong_types":
        return json.dumps({"name": [text[:100]], "title": {"a": 1}, "scores": "all", "seq": "1", "over": "yes",
                           "balance": [1, 2]}).encode()
    if kind == "not_json":
        return b"{" + text.encode()[:size]
    if kind == "not_object":
        return json.dumps([text[:size]]).encode()
    if kind == "nan":
        return b'{"name": "x", "scores": [{"name": "a", "score": NaN}]}'
    if kind == "nested":
        return b'{"a":' * 5000 + b"1" + b"}" * 5000
    if kind == "over_the_limit":
        return json.dumps({"name": "x" * (MAX_PAYLOAD + 10)}).encode()
    if kind == "cleared":
        return b""
    raise ValueError(f"no such kind {kind!r}")


class Stranger:
    """A plain paho client of someone who has the broker's password (or an anonymous broker): publishes, waits."""

    def __init__(self, port: int, *, client_id: str = "", username: str | None = None, password: str | None = None,
                 on_disconnect=None):
        self.connected = threading.Event()
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id, clean_session=True,
                                  protocol=mqtt.MQTTv311)
        if username is not None:
            self.client.username_pw_set(username, password)
        self.client.max_inflight_messages_set(100)
        self.client.max_queued_messages_set(0)
        self.client.on_connect = lambda c, u, f, rc, p: self.connected.set() if not rc.is_failure else None
        if on_disconnect is not None:
            self.client.on_disconnect = on_disconnect
        self.client.connect_async("127.0.0.1", port, keepalive=30)
        self.client.loop_start()
        if not self.connected.wait(10):
            self.close()
            raise AssertionError(f"the stranger's client {client_id!r} did not connect to 127.0.0.1:{port}")

    def publish_all(self, messages: list[tuple[str, bytes]], *, retain: bool, pace_s: float = 0.0,
                    timeout: float = 60.0) -> float:
        """Publish each (topic, payload) at QoS 1 and wait until the broker has taken every one; seconds it took."""
        started = time.monotonic()
        infos = []
        for n, (topic, payload) in enumerate(messages):
            infos.append(self.client.publish(topic, payload, qos=1, retain=retain))
            if pace_s:
                time.sleep(max(0.0, started + (n + 1) * pace_s - time.monotonic()))
        deadline = started + timeout
        for info in infos:
            info.wait_for_publish(max(0.1, deadline - time.monotonic()))
            if not info.is_published():
                raise AssertionError(f"the broker did not take the flood within {timeout} s")
        return time.monotonic() - started

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def retained_flood(hall: str, count: int, size: int, rng: random.Random, kinds: tuple[str, ...] = KINDS,
                   prefix: str = "flood") -> list[tuple[str, bytes]]:
    """`count` retained states for made-up tables of `hall`, of the given kinds in turn."""
    return [(f"companion/{hall}/{prefix}{i:03d}/state", hostile_state(kinds[i % len(kinds)], rng, size))
            for i in range(count)]


def announce_flood(prefix: str, count: int) -> list[tuple[str, bytes]]:
    """Home Assistant's birth message, `count` times, with junk on the same topic among them."""
    junk = (b"", b"offline", b"ONLINE", b"online\n", b"\xff\xfe", b"x" * 5000)
    return [(f"{prefix}/status", b"online" if n % 4 else junk[(n // 4) % len(junk)]) for n in range(count)]


def take_client_id(port: int, client_id: str, count: int, *, hold_s: float = 0.3, username: str | None = None,
                   password: str | None = None) -> int:
    """Connect `count` times under `client_id`, one after another, each held `hold_s`; how many connected."""
    done = 0
    for _ in range(count):
        try:
            s = Stranger(port, client_id=client_id, username=username, password=password)
        except AssertionError:
            continue
        done += 1
        time.sleep(hold_s)
        s.close()
    return done
