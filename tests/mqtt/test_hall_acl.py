"""The broker of docs/mqtt.md's "A broker for the hall", taken from the page itself and run on a real Mosquitto:
its conf and ACL file as written (only the listener's port and address and the file paths changed), one user per
table plus the scoreboard's and Home Assistant's. A table configured as the docs say reaches the hall and Home
Assistant; no user writes where the ACL says it cannot.

Mosquitto drops a publish its ACL refuses without telling the client (MQTT 3.1.1 has no way to), so every
refusal here is checked against a positive control: the same connection then publishes where it may, and once a
watcher allowed to read both has that message, anything refused before it would have come first."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from companion.mqtt import payloads as P
from companion.mqtt.hall import HallBoard
from tests.mqtt.conftest import Broker, rows, wait_until
from tests.mqtt.floods import Stranger, take_client_id

DOC = Path(__file__).resolve().parents[2] / "docs" / "mqtt.md"
SECTION = "## A broker for the hall"
HALL = "club"                  # the hall the documented ACL names
USERS = ("t3", "t4", "hall", "homeassistant")


def documented_files() -> tuple[str, str]:
    """The mosquitto conf and the ACL file, as the section's fenced blocks give them."""
    text = DOC.read_text()
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    blocks = re.findall(r"^```[^\n]*\n(.*?)^```", text[start:end if end >= 0 else None], re.M | re.S)
    conf = [b for b in blocks if re.search(r"^acl_file ", b, re.M)]
    acl = [b for b in blocks if re.search(r"^pattern ", b, re.M)]
    assert len(conf) == 1 and len(acl) == 1, f"{DOC.name}: {SECTION!r} must show one mosquitto conf and one ACL"
    return conf[0], acl[0]


def password(user: str) -> str:
    return f"{user}-secret"


@pytest.fixture
def documented_broker(mosquitto_bin, tmp_path):
    passwd_bin = shutil.which("mosquitto_passwd")
    if passwd_bin is None:
        pytest.skip("mosquitto_passwd is needed to make the documented broker's users")
    conf, acl = documented_files()
    d = tmp_path / "etc"
    d.mkdir()
    (d / "hall.acl").write_text(acl)
    for n, user in enumerate(USERS):
        subprocess.run([passwd_bin, "-b", *(["-c"] if n == 0 else []), str(d / "passwd"), user, password(user)],
                       check=True, capture_output=True, timeout=30)

    def settings(port: int) -> list[str]:
        # what a test must change and nothing more: a free loopback port, and the files in its own directory
        text = re.sub(r"^listener 1883$", f"listener {port} 127.0.0.1", conf, flags=re.M)
        assert text != conf, "the documented conf has no `listener 1883` line"
        return text.replace("/etc/mosquitto/", f"{d}/").splitlines()

    b = Broker(mosquitto_bin, tmp_path / "broker", settings=settings)
    b.start()
    yield b
    b.stop()


def as_user(user: str) -> dict:
    return {"username": user, "password": password(user)}


def home_assistant(watchers, broker):
    """A client as Home Assistant's user, reading every table and the discovery topics."""
    return watchers(broker.port, ["companion/#", "homeassistant/#"], sync_prefix="homeassistant/sync",
                    **as_user("homeassistant"))


def refused(broker, watcher, user: str, attempts: list[tuple[str, bytes]], control: str) -> list[str]:
    """Publish `attempts` as `user` (retained, QoS 1), then `control` where the user may write; once the watcher
    has the control, the topics of the attempts that came through (none, when the ACL holds)."""
    marker = f"control from {user}".encode()
    client = Stranger(broker.port, **as_user(user))
    try:
        client.publish_all(attempts, retain=True, timeout=10)
        client.publish_all([(control, marker)], retain=False, timeout=10)
    finally:
        client.close()
    wait_until(lambda: marker in watcher.on(control), what=f"{user}'s control message on {control}")
    return [topic for topic, payload in attempts if payload in watcher.on(topic)]


def test_a_table_with_its_own_user_reaches_the_hall_and_home_assistant(documented_broker, tables, watchers):
    broker = documented_broker
    ha = home_assistant(watchers, broker)
    t3 = tables(broker.port, "t3", hall=HALL, name="Table 3 (window)", **as_user("t3"))
    cfg = t3.publisher.config
    board = HallBoard("127.0.0.1", broker.port, HALL, reconnect_min_s=0.1, reconnect_max_s=0.5, **as_user("hall"))
    board.start()
    try:
        t3.host.act({"type": "roll", "value": 4})
        wait_until(t3.settled, what="t3 connected with everything acknowledged",
                   detail=lambda: (t3.publisher.status(), broker.read_log()))
        # the scoreboard, as its own user, reads the table's state and availability
        wait_until(lambda: rows(board).get("t3", {}).get("seq") == t3.host.seq and rows(board)["t3"]["online"],
                   what="t3 on the hall's board", detail=lambda: board.snapshot())
        assert rows(board)["t3"]["name"] == "Table 3 (window)"
        # Home Assistant reads the state, the availability, the plays summary and every discovery config
        state = P.state_topic(cfg)
        wait_until(lambda: ha.last(state) and json.loads(ha.last(state))["seq"] == t3.host.seq,
                   what="t3's state at Home Assistant")
        wait_until(lambda: ha.last(P.plays_topic(cfg)), what="t3's plays summary at Home Assistant")
        assert ha.last(P.availability_topic(cfg)) == b"online"
        discovery = P.discovery_topics(cfg)
        wait_until(lambda: all(ha.on(topic) for topic in discovery), what="every discovery config",
                   detail=lambda: [topic for topic in discovery if not ha.on(topic)])
        assert all(topic.startswith("homeassistant/") and "/companion_club_t3/" in topic for topic in discovery)

        # Home Assistant's birth message reaches the table, which sends its discovery again
        before = len(ha.on(discovery[0]))
        ha.publish(P.ha_status_topic(cfg), "online")
        wait_until(lambda: len(ha.on(discovery[0])) > before, what="discovery republished after HA's online")

        # the last will is the table's own write too: the broker sends it when the table's link is taken from it
        availability = P.availability_topic(cfg)
        seen = len(ha.on(availability))
        assert take_client_id(broker.port, t3.publisher.client_id, 1, hold_s=0.1, **as_user("t3")) == 1
        wait_until(lambda: b"offline" in ha.on(availability)[seen:], what="t3's last will at Home Assistant",
                   detail=lambda: ha.on(availability)[seen:])
        wait_until(lambda: ha.last(availability) == b"online" and t3.settled(), what="t3 back online by itself")
    finally:
        board.stop()


def test_no_user_writes_where_the_documented_acl_says_it_cannot(documented_broker, watchers):
    broker = documented_broker
    ha = home_assistant(watchers, broker)
    t4 = f"companion/{HALL}/t4"

    def forged(topics):
        return [(topic, f"forged {topic}".encode()) for topic in topics]

    # a table (or whoever holds its password) on another table's topics, its discovery, and HA's status
    attempts = forged([f"{t4}/state", f"{t4}/availability", f"{t4}/event", f"{t4}/plays",
                       "homeassistant/sensor/companion_club_t4/game/config",
                       "homeassistant/binary_sensor/companion_club_t4/tipped/config",
                       "homeassistant/status"])
    assert refused(broker, ha, "t3", attempts, control=f"companion/{HALL}/t3/control") == []
    # the scoreboard only reads: not a table's topics, nor discovery, nor HA's status; under its own name (which
    # the docs warn of: a table must not be named like it) the pattern lets it write, the control
    attempts = forged([f"{t4}/state", f"{t4}/availability", "homeassistant/sensor/companion_club_t4/game/config",
                       "homeassistant/status"])
    assert refused(broker, ha, "hall", attempts, control=f"companion/{HALL}/hall/control") == []
