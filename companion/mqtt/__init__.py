"""Many tables: each companion reports to an MQTT broker; a hall scoreboard reads them all.

- `settings`: the `[mqtt]` config section (`MqttConfig`, `parse_mqtt`); no paho import.
- `payloads`: topics and JSON payloads (state, event, availability, Home Assistant discovery).
- `publisher`: `TablePublisher`, the table's side (paho-mqtt 2.x, callback API version 2).
- `hall`: `HallBoard`, `create_hall_app` and the `companion hall` command.

Topics and payloads are documented in docs/mqtt.md.
"""

from companion.mqtt.settings import MqttConfig, parse_mqtt

__all__ = ["MqttConfig", "parse_mqtt"]
