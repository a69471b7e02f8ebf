"""One table's side of the hall: its state, events and availability on an MQTT broker.

`TablePublisher(companion, config)` listens to the game host and publishes
- `companion/<hall>/<table>/state`: the compact state, retained, QoS 1, after every change;
- `companion/<hall>/<table>/event`: each game event, QoS 1, in order;
- `companion/<hall>/<table>/plays`: the history's summary (plays, plays this month, the last winner), retained,
  whenever a game starts or ends, the month turns, or the link is new;
- `companion/<hall>/<table>/availability`: `online`, retained; `offline` on a clean stop and,
  as the broker's last will, when the table vanishes;
- Home Assistant discovery configs (retained), again whenever Home Assistant announces itself.

Nothing here blocks the game: the host's change callback only wakes the publisher's
own thread. paho-mqtt's network thread connects and reconnects with exponential
backoff. While the broker is away, events wait in a bounded queue (the oldest are
dropped past `queue_limit`, and counted); the state is not queued but republished
whole once the link is back. At most WINDOW messages are handed to paho unacknowledged,
so a half-dead link cannot grow paho's own queue without bound.
"""

from __future__ import annotations

import logging
import secrets
import ssl
import threading
from collections import deque
from datetime import datetime, timezone
from typing import Any, Callable

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from companion.foundation import wall_clock
from companion.foundation.clock import Clock
from companion.history.index import NotReady
from companion.mqtt import payloads as P
from companion.config.mqtt import MqttConfig

log = logging.getLogger(__name__)
WINDOW = 20               # messages handed to paho and not yet acknowledged by the broker
TICK_S = 0.5              # the publisher thread looks around at least this often
RESEND_WAIT_S = 5.0       # after a reconnect, let paho resend the last link's unacknowledged messages first
STOP_WAIT_S = 3.0
CONNECT_TIMEOUT_S = 5.0
# Home Assistant says `online` on its status topic when it starts. Anyone who may publish there can say it 300
# times in 3 s, and each one used to republish every retained discovery config: announces are honoured at most
# once per ANNOUNCE_MIN_S. Nothing is lost by ignoring the rest: the configs are retained, so a Home Assistant
# that really restarted in between got them from the broker when it subscribed.
ANNOUNCE_MIN_S = 30.0

CONNECTED, CONNECTING, DISCONNECTED = "connected", "connecting", "disconnected"


def wall_now() -> tuple[datetime, bool | None]:
    """The wall clock and whether the kernel says it is synced (None: it cannot be asked)."""
    return datetime.now(timezone.utc), wall_clock.synced()


def this_month(now: datetime, synced: bool | None) -> tuple[int, int] | None:
    """(year, month) in this machine's zone; None when the Pi's clock is known not to be set (a Pi without a
    time server believes it is whenever it booted into). Where it cannot be asked (not Linux) it is believed."""
    if synced is False:
        return None
    local = now.astimezone()
    return local.year, local.month


class _PahoNoise(logging.Filter):
    """paho 2.x logs "Client is not connected" at ERROR after every failed reconnect attempt; our
    on_connect_fail already says so once (and the status shows it), so drop the repeat."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Client is not connected")


PAHO_LOG = logging.getLogger("companion.mqtt.paho")
PAHO_LOG.addFilter(_PahoNoise())


class Client(mqtt.Client):
    """paho's client, remembering why the last connection attempt failed (on_connect_fail is told nothing)."""

    last_connect_error: OSError | None = None

    def reconnect(self) -> mqtt.MQTTErrorCode:
        try:
            rc = super().reconnect()
        except OSError as exc:
            self.last_connect_error = exc
            raise
        self.last_connect_error = None
        return rc

    def connect_failure(self) -> str:
        exc = self.last_connect_error
        return f"{type(exc).__name__}: {exc}" if exc is not None else "the connection attempt failed"


def make_client(client_id: str, *, username: str | None = None, password: str | None = None, tls: bool = False,
                ca_file=None, cert_file=None, key_file=None, tls_insecure: bool = False,
                reconnect_min_s: float = 1.0, reconnect_max_s: float = 60.0) -> Client:
    """A paho client (callback API version 2, MQTT 3.1.1, clean session) set up the same way for tables and halls."""
    client = Client(CallbackAPIVersion.VERSION2, client_id=client_id, clean_session=True, protocol=mqtt.MQTTv311)
    client.enable_logger(PAHO_LOG)
    # an exception in a callback must never end paho's network thread (and with it every reconnect)
    client.suppress_exceptions = True
    client.connect_timeout = CONNECT_TIMEOUT_S
    client.reconnect_delay_set(reconnect_min_s, reconnect_max_s)
    if username is not None:
        client.username_pw_set(username, password)
    if tls:
        client.tls_set(ca_certs=str(ca_file) if ca_file else None, certfile=str(cert_file) if cert_file else None,
                       keyfile=str(key_file) if key_file else None, cert_reqs=ssl.CERT_REQUIRED,
                       tls_version=ssl.PROTOCOL_TLS_CLIENT)
        if tls_insecure:
            client.tls_insecure_set(True)
    return client


class TablePublisher:
    def __init__(self, companion, config: MqttConfig):
        self.companion = companion
        self.host = companion.host
        self.config = config
        self.clock = Clock()   # link timing is real time, whatever clock the game runs on
        self.state_topic = P.state_topic(config)
        self.event_topic = P.event_topic(config)
        self.availability_topic = P.availability_topic(config)
        self.plays_topic = P.plays_topic(config)
        self.wall: Callable[[], tuple[datetime, bool | None]] = wall_now   # tests set their own
        # the clock of the announce limit alone (tests set a FakeClock); self.clock also times the stop and the
        # resend wait, which a frozen clock would stall
        self.announce_clock: Clock = self.clock
        self._announced_at: float | None = None   # when an announce last made discovery go out again
        self._announces_ignored = 0
        self._plays_key: tuple | None = None  # what the published summary was made for (game, over, month)
        self._lock = threading.Lock()        # status and queue; never held while calling into paho
        self._ack_lock = threading.Lock()    # taken inside paho's on_publish, which holds paho's message lock
        self._acked: set[int] = set()
        self._unacked: dict[int, str] = {}   # mid -> what it was ("state", "event", "online", "discovery", "remove")
        self._queue: deque[str] = deque()    # event payloads waiting for the broker
        self._dropped = 0
        self._published_events = 0
        self._wake = threading.Event()
        self._halt = threading.Event()
        self._thread: threading.Thread | None = None
        self._listening = False
        self._started = False
        self._stopping = False
        self._link = DISCONNECTED
        self._down_since: float | None = self.clock.now()
        self._last_error: str | None = None
        self._connection = 0          # counts successful connects (paho thread)
        self._served = 0              # the connection for which online/discovery/state were sent (worker)
        self._connected_at = 0.0
        self._event_seq = self.host.seq
        self._state_seq: int | None = None
        self._discovery_due = False
        self._remove_requested = False
        self._remove_sent = False
        self._removed = threading.Event()
        # The documented `companion-<hall>-<table>` is only the prefix: a client connecting under a table's exact id
        # makes the broker drop the table (and publish its last will, "offline"), so any client on the broker
        # could knock it off again and again. A fresh random suffix per start leaves no id to guess; the prefix
        # keeps the broker's log readable. (Clean sessions, so no session is lost by the id changing.)
        self.client_id = f"{config.client_id}-{secrets.token_hex(4)}"
        self._client = make_client(
            self.client_id, username=config.username, password=config.password, tls=config.tls,
            ca_file=config.ca_file, cert_file=config.cert_file, key_file=config.key_file,
            tls_insecure=config.tls_insecure, reconnect_min_s=config.reconnect_min_s,
            reconnect_max_s=config.reconnect_max_s)
        self._client.will_set(self.availability_topic, P.OFFLINE, qos=1, retain=True)
        self._client.on_pre_connect = self._on_pre_connect
        self._client.on_connect = self._on_connect
        self._client.on_connect_fail = self._on_connect_fail
        self._client.on_disconnect = self._on_disconnect
        self._client.on_publish = self._on_publish
        self._client.on_message = self._on_message

    # --- lifecycle
    def start(self) -> None:
        """Start connecting in the background; returns at once whether or not the broker is there."""
        if self._started:
            return
        self._started = True
        self._stopping = False
        self._halt.clear()
        self._event_seq = self.host.seq
        if not self._listening:
            self.host.on_change(self._changed)
            self._listening = True
        self._set_link(CONNECTING)
        self._thread = threading.Thread(target=self._run, name="mqtt-publisher", daemon=True)
        self._thread.start()
        self._client.connect_async(self.config.host, self.config.port, keepalive=self.config.keepalive_s)
        self._client.loop_start()
        log.info("MQTT: publishing table %s of hall %s to %s", self.config.table, self.config.hall, self.config.broker)

    def stop(self, timeout: float = STOP_WAIT_S) -> None:
        """Say `offline` (when connected), disconnect and end both threads."""
        if not self._started:
            return
        self._started = False
        self._halt.set()
        self._wake.set()
        deadline = self.clock.now() + timeout
        if self._thread is not None:
            self._thread.join(timeout)
            if not self._thread.is_alive():
                self._flush(deadline)
        self._stopping = True
        if self._client.is_connected():
            info = self._client.publish(self.availability_topic, P.OFFLINE, qos=1, retain=True)
            if info.rc == mqtt.MQTT_ERR_SUCCESS:
                info.wait_for_publish(max(0.5, deadline - self.clock.now()))
            if not info.is_published():
                log.warning("MQTT: 'offline' was not acknowledged before the stop "
                            "(on a dead link the broker's last will says it)")
        with self._lock:
            left = len(self._queue)
        if left:
            log.warning("MQTT: %d event(s) were not published before the stop (they are in the event store)", left)
        self._client.disconnect()
        self._client.loop_stop()
        self._set_link(DISCONNECTED)

    def _flush(self, deadline: float) -> None:
        """A clean stop publishes the latest state and the waiting events first (the publisher thread has ended)."""
        while self.clock.now() < deadline:
            try:
                self._pump()
            except Exception:  # a failed last publish must not block the stop: logged below
                log.exception("MQTT: publishing before the stop failed")
                return
            with self._lock:
                pending = bool(self._queue) or bool(self._unacked)
                link = self._link
            if link != CONNECTED or (not pending and self._state_seq == self.host.seq):
                return
            self._wake.wait(0.05)
            self._wake.clear()

    def remove(self, timeout: float = 5.0) -> bool:
        """Remove this table from Home Assistant: empty retained discovery configs. True once the broker has them."""
        with self._lock:
            self._remove_requested = True
            self._remove_sent = False
        self._removed.clear()
        self._wake.set()
        return self._removed.wait(timeout)

    def status(self) -> dict[str, Any]:
        """For the page (live["mqtt"]): link state, what waits, what was lost, the last fault."""
        now = self.clock.now()
        with self._lock:
            return {
                "state": self._link,
                "broker": self.config.broker,
                "topic": self.config.base_topic,
                "queued": len(self._queue) + len(self._unacked),
                "dropped": self._dropped,
                "published_events": self._published_events,
                "announces_ignored": self._announces_ignored,
                "state_seq": self._state_seq,
                "down_for_s": None if self._down_since is None else round(now - self._down_since, 1),
                "last_error": self._last_error,
            }

    # --- the host's side: must return at once
    def _changed(self) -> None:
        if self._started:
            self._wake.set()

    # --- paho's callbacks (its network thread); each logs its own faults
    def _on_pre_connect(self, client, userdata) -> None:
        self._set_link(CONNECTING)

    def _on_connect(self, client, userdata, flags, reason_code, properties) -> None:
        try:
            if reason_code.is_failure:
                self._set_link(DISCONNECTED,
                               f"the broker at {self.config.broker} refused the connection: {reason_code}")
                return
            if self.config.discovery:
                client.subscribe(P.ha_status_topic(self.config), qos=1)
            with self._lock:
                self._connection += 1
                self._connected_at = self.clock.now()
            self._set_link(CONNECTED)
            self._wake.set()
        except Exception:  # paho would drop it silently: logged below
            log.exception("MQTT: on_connect failed")

    def _on_connect_fail(self, client, userdata) -> None:
        self._set_link(DISCONNECTED, f"cannot reach the broker at {self.config.broker} ({client.connect_failure()})")

    def _on_disconnect(self, client, userdata, flags, reason_code, properties) -> None:
        with self._lock:
            was_up = self._link == CONNECTED
        if self._stopping or not was_up:
            # a refused or failed attempt already said why
            self._set_link(DISCONNECTED)
            return
        self._set_link(DISCONNECTED, f"lost the link to the broker at {self.config.broker} ({reason_code})")

    def _on_publish(self, client, userdata, mid, reason_code, properties) -> None:
        with self._ack_lock:
            self._acked.add(mid)
        self._wake.set()

    def _on_message(self, client, userdata, message) -> None:
        try:
            # a retained "online" comes with every subscribe; discovery goes out on every connect anyway
            if message.retain:
                return
            if message.topic == P.ha_status_topic(self.config) and message.payload == b"online":
                now = self.announce_clock.now()
                with self._lock:
                    honoured = self._announced_at is None or now - self._announced_at >= ANNOUNCE_MIN_S
                    if honoured:
                        self._announced_at = now
                        self._discovery_due = True
                    else:
                        self._announces_ignored += 1
                        ignored = self._announces_ignored
                if honoured:
                    log.info("MQTT: Home Assistant announced itself; republishing discovery")
                    self._wake.set()
                elif ignored == 1 or ignored % 100 == 0:   # a flood must not flood the log either
                    log.warning("MQTT: %d Home Assistant announce(s) ignored: discovery goes out again at most "
                                "once per %.0f s", ignored, ANNOUNCE_MIN_S)
        except Exception:  # paho would drop it silently: logged below
            log.exception("MQTT: handling a message on %s failed", getattr(message, "topic", "?"))

    def _set_link(self, state: str, error: str | None = None) -> None:
        now = self.clock.now()
        with self._lock:
            before, before_error = self._link, self._last_error
            self._link = state
            if state == CONNECTED:
                self._down_since = None
            elif self._down_since is None:
                self._down_since = now
            if error is not None:
                self._last_error = error
        if state == CONNECTED and before != CONNECTED:
            log.info("MQTT: connected to %s as %s", self.config.broker, self.client_id)
        elif error is not None and (before == CONNECTED or error != before_error):
            log.warning("MQTT: %s; retrying in the background", error)

    # --- the publisher thread
    def _run(self) -> None:
        while not self._halt.is_set():
            self._wake.wait(TICK_S)
            self._wake.clear()
            if self._halt.is_set():
                break
            try:
                self._pump()
            except Exception as exc:
                log.exception("MQTT: publishing step failed")
                with self._lock:
                    self._last_error = f"publisher fault: {exc}"

    def _pump(self) -> None:
        self._collect_acks()
        self._collect_events()
        with self._lock:
            link, connection, connected_at = self._link, self._connection, self._connected_at
        if link != CONNECTED:
            return
        if connection != self._served:
            if self._unacked and self.clock.now() - connected_at < RESEND_WAIT_S:
                return  # paho resends the previous link's messages first; newer ones must not overtake them
            with self._lock:
                if self._unacked:
                    log.warning("MQTT: %d message(s) of the previous link were never acknowledged", len(self._unacked))
                    self._unacked.clear()
                self._discovery_due = True
            self._served = connection
            self._state_seq = None
            self._plays_key = None
            self._publish(self.availability_topic, P.ONLINE, "online", retain=True)
        self._publish_discovery()
        if self._state_seq != self.host.seq and self._room():
            snap = self.host.snapshot()
            if self._publish(self.state_topic, P.dumps(P.state_payload(snap, self.config)), "state", retain=True):
                self._state_seq = snap["seq"]
        if self._room():
            self._publish_plays()
        while self._room():
            with self._lock:
                if not self._queue:
                    break
                payload = self._queue.popleft()
            if not self._publish(self.event_topic, payload, "event"):
                with self._lock:
                    self._queue.appendleft(payload)
                break
            with self._lock:
                self._published_events += 1
        with self._lock:
            done = self._remove_sent and "remove" not in self._unacked.values()
        if done:
            self._removed.set()

    def _publish_plays(self) -> None:
        """The history's summary, when it may have changed: another game, a game over (or taken back), a new
        month, a new link. Made here, in the publisher's thread: the history has its own lock and never takes
        the table's. While the history is still being built it waits for the next look."""
        history = getattr(self.companion, "history", None)
        if history is None:
            return
        month = this_month(*self.wall())
        snap = self.host.snapshot()
        view = snap.get("view") or {}
        key = (snap.get("game_id"), bool(view.get("over") or view.get("game_over")), month)   # Imperial: game_over
        if key == self._plays_key:
            return
        try:
            summary = history.summary(month)
        except NotReady:
            return
        except Exception as exc:      # logged once per key; the table plays on
            log.warning("MQTT: the history's summary could not be made: %s", exc)
            self._plays_key = key
            return
        if self._publish(self.plays_topic, P.dumps(P.plays_payload(summary, self.config)), "plays", retain=True):
            self._plays_key = key

    def _publish_discovery(self) -> None:
        with self._lock:
            remove, sent, due = self._remove_requested, self._remove_sent, self._discovery_due
            self._discovery_due = False
        if remove:
            if not sent:
                for topic in P.discovery_topics(self.config):
                    self._publish(topic, b"", "remove", retain=True)
                with self._lock:
                    self._remove_sent = True
                log.info("MQTT: removed table %s from Home Assistant discovery", self.config.table)
        elif due and self.config.discovery:
            for topic, payload in P.discovery_messages(self.config):
                self._publish(topic, payload, "discovery", retain=True)
        elif due:
            # discovery is off: clear whatever an earlier run with discovery on left retained
            for topic in P.discovery_topics(self.config):
                self._publish(topic, b"", "remove", retain=True)

    def _room(self) -> bool:
        with self._lock:
            return len(self._unacked) < WINDOW

    def _publish(self, topic: str, payload: str | bytes, kind: str, *, retain: bool = False) -> bool:
        info = self._client.publish(topic, payload, qos=1, retain=retain)
        # NO_CONN still leaves a QoS 1 message in paho's queue, sent on the next connect
        if info.rc not in (mqtt.MQTT_ERR_SUCCESS, mqtt.MQTT_ERR_NO_CONN):
            with self._lock:
                self._last_error = f"could not publish on {topic}: {mqtt.error_string(info.rc)}"
            log.warning("MQTT: could not publish on %s: %s", topic, mqtt.error_string(info.rc))
            return False
        with self._lock:
            self._unacked[info.mid] = kind
        return True

    def _collect_acks(self) -> None:
        with self._ack_lock:
            acked, self._acked = self._acked, set()
        if acked:
            with self._lock:
                for mid in acked:
                    self._unacked.pop(mid, None)

    def _collect_events(self) -> None:
        if self.host.seq == self._event_seq:
            return
        events = self.host.events_after(self._event_seq)
        if events is None:
            missed = self.host.seq - self._event_seq
            log.warning("MQTT: fell %d events behind the game; the state topic still has the latest", missed)
            with self._lock:
                self._dropped += missed
            self._event_seq = self.host.seq
            return
        dropped = 0
        hidden = bool(events) and self.host.cash_hidden()   # asked once per batch, outside our lock
        with self._lock:
            for ev in events:
                if len(self._queue) >= self.config.queue_limit:
                    self._queue.popleft()
                    dropped += 1
                self._queue.append(P.dumps(P.event_payload(ev.to_dict(), self.config, cash_hidden=hidden)))
            self._dropped += dropped
        if events:
            self._event_seq = events[-1].seq
        if dropped:
            log.warning("MQTT: event queue full (%d); dropped the %d oldest", self.config.queue_limit, dropped)
