"""Many tables: each companion reports to an MQTT broker; a hall scoreboard reads them all.

- `payloads`: topics and JSON payloads (state, event, availability, Home Assistant discovery).
- `publisher`: `TablePublisher`, the table's side (paho-mqtt 2.x, callback API version 2).
- `hall`: `HallBoard`, `create_hall_app` and the `companion hall` command.

The `[mqtt]` config section is checked by companion.config.mqtt. Topics and payloads are documented
in docs/mqtt.md. Imports: web (the hall page's JSON errors and serving), history (the plays' summary), store, config,
foundation.
"""

from companion.config.mqtt import MqttConfig, parse_mqtt

__all__ = ["MqttConfig", "parse_mqtt"]
