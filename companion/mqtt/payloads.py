"""Topics and JSON payloads a table publishes (documented in docs/mqtt.md).

Pure functions of a config and a host snapshot, so they are tested without a broker.
"""

from __future__ import annotations

from typing import Any, Mapping

from companion import __version__

from companion.foundation import strict_json
from companion.config.mqtt import TOPIC_ROOT, MqttConfig

ONLINE = "online"
OFFLINE = "offline"
SCORE_SEATS = 6   # Home Assistant gets one score sensor per seat, unavailable when the game has fewer


def dumps(payload: Any) -> str:
    # strict: a hall's scoreboard and Home Assistant parse these as JSON, which has no NaN
    return strict_json.dumps(payload, separators=(",", ":"), ensure_ascii=False)


def state_topic(cfg: MqttConfig) -> str:
    return f"{cfg.base_topic}/state"


def event_topic(cfg: MqttConfig) -> str:
    return f"{cfg.base_topic}/event"


def availability_topic(cfg: MqttConfig) -> str:
    return f"{cfg.base_topic}/availability"


def plays_topic(cfg: MqttConfig) -> str:
    return f"{cfg.base_topic}/plays"


def hall_topics(hall: str) -> tuple[str, str]:
    """What a hall scoreboard subscribes to: every table's state and availability."""
    return f"{TOPIC_ROOT}/{hall}/+/state", f"{TOPIC_ROOT}/{hall}/+/availability"


def ha_status_topic(cfg: MqttConfig) -> str:
    return f"{cfg.discovery_prefix}/status"


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _seat_name(view: Mapping[str, Any], seat: Any) -> str | None:
    """Balance Duels: the name of the player in `seat`."""
    for player in view.get("players") or []:
        if isinstance(player, Mapping) and player.get("seat") == seat:
            return _text(player.get("name"))
    return None


def _over(view: Mapping[str, Any]) -> bool:
    # Imperial calls it game_over, every other game over
    return bool(view.get("over") or view.get("game_over"))


def _winners(game: str, view: Mapping[str, Any]) -> list[str]:
    """Who won, by name, once the game is over (a draw: nobody). Each game says it its own way: Balance Duels by
    seats, Imperial by names, Risk, Balance of Power and Global Powers by one name or none."""
    if not _over(view):
        return []
    if game == "balance_duels":
        names = [_seat_name(view, seat) for seat in view.get("winners") or []]
    elif isinstance(view.get("winners"), list):
        names = list(view["winners"])
    else:
        names = [view.get("winner")]
    return [n for n in names if isinstance(n, str) and n]


def _to_move(game: str, view: Mapping[str, Any]) -> str | None:
    """The player (or nation) whose turn it is, by name, when the game's view says so."""
    if _over(view):
        return None
    if game == "balance_duels":
        return _seat_name(view, view.get("to_move"))
    for key in ("acting_player", "to_move"):
        name = _text(view.get(key))
        if name:
            return name
    turn = view.get("turn")
    if isinstance(turn, Mapping):
        return _text(turn.get("player"))
    return None


def _number(value: Any) -> float | int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value


def state_payload(snapshot: Mapping[str, Any], cfg: MqttConfig) -> dict:
    """The retained state: small enough for a scoreboard, Home Assistant and a log line."""
    view = snapshot.get("view") or {}
    game = snapshot.get("game")
    scores = [{"name": str(name), "score": _number(score)} for name, score in (snapshot.get("scores") or {}).items()]
    balance = None
    if game == "balance_duels":
        tipped_by = view.get("tipped_by")
        tipper = _seat_name(view, tipped_by) if tipped_by is not None else None
        balance = {
            "net_torque": _number(view.get("net_torque")),
            "tip_torque": _number(view.get("tip_torque")),
            "margin": _number(view.get("margin")),
            "tipped": tipped_by is not None,
            "tipped_by": tipper,
            "roll": view.get("roll"),
            "indicator": view.get("indicator"),
        }
    return {
        "hall": cfg.hall,
        "table": cfg.table,
        "name": cfg.display_name,
        "seq": snapshot.get("seq"),
        "game_id": snapshot.get("game_id"),
        "game": game,
        "title": snapshot.get("title"),
        "message": _text(view.get("message")),
        "to_move": _to_move(str(game), view),
        "over": _over(view),
        "winners": _winners(str(game), view),
        "scores": scores,
        "last_action": snapshot.get("last_action"),
        "balance": balance,
    }


def plays_payload(summary: Mapping[str, Any], cfg: MqttConfig) -> dict:
    """The retained summary of the table's nights (the history's `summary`): how many plays, how many this month
    (null when the Pi does not know today's date), and the newest finished play with its winners."""
    return {"hall": cfg.hall, "table": cfg.table, "name": cfg.display_name, **summary}


def event_payload(event_dict: Mapping[str, Any], cfg: MqttConfig, cash_hidden: bool = False) -> dict:
    """One game event as the store keeps it (seq, game_id, kind, body, source, at), with the table it is from.

    While some cash is hidden (Imperial's Separate Funds) the event carries only its kind and seq (and the
    table it is from): the broker has no PIN, and a body such as a cash correction holds the hidden amount."""
    if cash_hidden:
        return {"hall": cfg.hall, "table": cfg.table, "seq": event_dict.get("seq"), "kind": event_dict.get("kind")}
    return {"hall": cfg.hall, "table": cfg.table, **event_dict}


# --- Home Assistant MQTT discovery

def _node_id(cfg: MqttConfig) -> str:
    return f"companion_{cfg.hall}_{cfg.table}"


def _device(cfg: MqttConfig) -> dict:
    return {
        "identifiers": [_node_id(cfg)],
        "name": f"Table {cfg.display_name}" if cfg.display_name == cfg.table else cfg.display_name,
        "manufacturer": "Table Companion",
        "model": "Table Companion",
        "sw_version": __version__,
        "suggested_area": cfg.hall,
    }


def _entities() -> list[tuple[str, str, dict]]:
    """(component, object id, entity-specific keys) for every discovered entity."""
    has_balance = "{{ 'online' if value_json.balance else 'offline' }}"
    ents: list[tuple[str, str, dict]] = [
        ("sensor", "game", {"name": "Game", "icon": "mdi:dice-multiple",
                            "value_template": "{{ value_json.title }}"}),
        ("sensor", "turn", {"name": "Whose turn", "icon": "mdi:account-arrow-right",
                            "value_template": "{{ value_json.to_move }}"}),
        ("sensor", "message", {"name": "Message", "icon": "mdi:message-text",
                               "value_template": "{{ (value_json.message or '')[:255] }}"}),
        ("sensor", "scores", {
            "name": "Scores", "icon": "mdi:scoreboard",
            "value_template": ("{% for p in value_json.scores %}{{ p.name }} {{ p.score }}"
                               "{{ ' · ' if not loop.last }}{% endfor %}"),
            "json_attributes_topic": None,
            "json_attributes_template": ("{ {% for p in value_json.scores %}{{ p.name | tojson }}: "
                                         "{{ p.score | tojson }}{{ ',' if not loop.last }}{% endfor %} }"),
        }),
    ]
    for seat in range(1, SCORE_SEATS + 1):
        i = seat - 1
        ents.append(("sensor", f"score_{seat}", {
            "name": f"Seat {seat} score", "icon": "mdi:counter", "state_class": "measurement",
            "value_template": f"{{{{ value_json.scores[{i}].score if value_json.scores | length > {i} else None }}}}",
            "json_attributes_topic": None,
            "json_attributes_template": (f"{{{{ {{'player': value_json.scores[{i}].name}} | tojson "
                                         f"if value_json.scores | length > {i} else '{{}}' }}}}"),
            "_available": f"{{{{ 'online' if value_json.scores | length > {i} else 'offline' }}}}",
        }))
    ents += [
        ("sensor", "torque", {"name": "Arm torque", "icon": "mdi:scale-unbalanced", "unit_of_measurement": "g·mm",
                              "state_class": "measurement", "_available": has_balance,
                              "value_template": "{{ value_json.balance.net_torque if value_json.balance else None }}"}),
        ("sensor", "margin", {"name": "Tip margin", "icon": "mdi:scale-balance", "unit_of_measurement": "g·mm",
                              "state_class": "measurement", "_available": has_balance,
                              "value_template": "{{ value_json.balance.margin if value_json.balance else None }}"}),
        ("sensor", "tipped_by", {"name": "Tipped by", "icon": "mdi:alert", "_available": has_balance,
                                 "value_template": ("{{ value_json.balance.tipped_by "
                                                    "if value_json.balance and value_json.balance.tipped_by "
                                                    "else 'nobody' }}")}),
        ("binary_sensor", "tipped", {"name": "Arm tipped", "icon": "mdi:scale-unbalanced", "device_class": "problem",
                                     "_available": has_balance,
                                     "value_template": ("{{ 'ON' if value_json.balance and value_json.balance.tipped "
                                                        "else 'OFF' }}")}),
        # the history's summary, on its own retained topic (`_topic`)
        ("sensor", "last_winner", {
            "name": "Last winner", "icon": "mdi:trophy", "_topic": "plays",
            "value_template": ("{{ (value_json.last.winners | join(' & ') if value_json.last.winners else 'nobody')"
                               " if value_json.last else None }}"),
            "json_attributes_topic": None,
            "json_attributes_template": ("{{ {'game': value_json.last.title, 'ended': value_json.last.ended, "
                                         "'at': value_json.last.at, 'time_quality': value_json.last.quality} | tojson "
                                         "if value_json.last else '{}' }}"),
        }),
        ("sensor", "plays_this_month", {
            "name": "Plays this month", "icon": "mdi:calendar-month", "_topic": "plays",
            "value_template": "{{ value_json.plays_this_month }}",
            "json_attributes_topic": None,
            "json_attributes_template": ("{{ {'month': value_json.month, 'plays': value_json.plays, "
                                         "'finished': value_json.finished} | tojson }}"),
        }),
    ]
    return ents


def discovery_topic(cfg: MqttConfig, component: str, object_id: str) -> str:
    return f"{cfg.discovery_prefix}/{component}/{_node_id(cfg)}/{object_id}/config"


def discovery_messages(cfg: MqttConfig) -> list[tuple[str, str]]:
    """(config topic, JSON payload) for every entity; published retained."""
    out = []
    topics = {"state": state_topic(cfg), "plays": plays_topic(cfg)}
    for component, object_id, spec in _entities():
        spec = dict(spec)
        available = spec.pop("_available", None)
        state = topics[spec.pop("_topic", "state")]
        availability = [{"topic": availability_topic(cfg)}]
        if available:
            availability.append({"topic": state, "value_template": available})
        payload = {
            "unique_id": f"{_node_id(cfg)}_{object_id}",
            "state_topic": state,
            "availability": availability,
            "availability_mode": "all",
            "device": _device(cfg),
            "origin": {"name": "Table Companion", "sw_version": __version__},
            **spec,
        }
        if "json_attributes_topic" in payload:
            payload["json_attributes_topic"] = state
        out.append((discovery_topic(cfg, component, object_id), dumps(payload)))
    return out


def discovery_topics(cfg: MqttConfig) -> list[str]:
    """Every config topic; an empty retained message on each removes the table from Home Assistant."""
    return [discovery_topic(cfg, component, object_id) for component, object_id, _ in _entities()]
