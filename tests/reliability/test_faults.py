"""Faulty hardware on the simulated table: the daemon keeps serving, shows the device as unavailable with the
reason, the game goes on by the page and the buttons, and the device comes back by itself (bench/faults.py
injects many more)."""

import pytest

from tests.reliability.faultlab import FAULTS, Table, inject


@pytest.fixture
def table(tmp_path):
    t = Table(tmp_path / "events.sqlite3")
    yield t
    t.close()


@pytest.mark.parametrize("kind", list(FAULTS))
def test_each_fault_is_shown_survived_and_recovered(table, kind):
    outcome = inject(table, FAULTS[kind])
    assert outcome.problems == []
    assert outcome.served and outcome.shown and outcome.played and outcome.others_ok
    assert outcome.recovered_after_s is not None


def test_a_dead_load_cell_hides_the_weight_and_keeps_the_angle(table):
    table.run(0.5)
    assert table.state()["live"]["weight_g"] is not None
    table.sensors.cells[1].fault = "no answer from the HX711"
    table.run(1.0)
    live = table.state()["live"]
    assert live["weight_g"] is None                  # a sum over half the cells would be a wrong number
    assert live["angle_deg"] is not None
    assert table.client.get("/api/health").get_json()["ok"] is False


def test_a_dead_accelerometer_hides_the_angle_and_torque_and_keeps_the_weight(table):
    table.run(0.5)
    table.sensors.accel.fault = "nothing answers at 0x68 on I2C bus 1"
    table.run(1.0)
    live = table.state()["live"]
    assert live["angle_deg"] is None and live["torque_gmm"] is None     # not the last value, frozen
    assert live["weight_g"] is not None


def test_glitches_never_reach_the_shown_weight(table):
    table.run(1.0)
    true_weight = table.state()["live"]["weight_g"]
    cell = table.sensors.cells[0]
    cell.glitch_rate = 0.3
    shown = []
    for _ in range(100):
        table.run(0.05)
        shown.append(table.companion.live()["weight_g"])
    assert all(w is None or abs(w - true_weight) < 5 for w in shown)


def test_a_stuck_button_undoes_once_is_shown_unavailable_and_comes_back_on_release(table):
    """A box leaning on `confirm`: its one long press undoes the last action (a stuck button cannot be told from a
    deliberate long press until stuck_s has passed); after that it is shown unavailable, fires nothing, and the
    game goes on by the page and the page's buttons, `confirm` included. Let go, it is back with no press."""
    c, host = table.client, table.companion.host
    c.post("/api/roll", json={"value": 3})
    seq = host.seq
    table.companion.buttons.stick("confirm")
    assert host.seq == seq + 1 and table.state()["view"]["roll"] is None          # the one undo
    table.run(9.0)
    assert "button confirm" not in {d["name"] for d in table.companion.live()["devices"]}
    table.run(3.0)
    dev = table.device("button confirm")
    assert dev["ok"] is False and dev["kind"] == "button"
    assert dev["reason"].startswith("stuck pressed for 12 s, after one long press (undo) — check the switch")
    health = c.get("/api/health").get_json()
    assert health["ok"] is False and "button confirm" in {d["name"] for d in health["devices"] if not d["ok"]}
    for button in ("roll", "next", "confirm"):
        assert c.post(f"/api/buttons/{button}", json={}).status_code == 200
    assert host.seq == seq + 3
    table.companion.buttons.release("confirm")
    assert host.seq == seq + 3                                                      # the release is no press
    assert table.ok("button confirm") and c.get("/api/health").get_json()["ok"] is True


def test_a_quick_game_on_the_arm_is_not_taken_for_a_fault(table):
    """Pawns placed every second (hand presses included) are steps, not drift, glitches or chatter."""
    host = table.companion.host
    table.run(1.0)
    for turn in range(16):
        view = host.snapshot()["view"]
        if view["over"]:
            break
        host.act({"type": "roll", "value": turn % 6 + 1})
        host.act({"type": "move", "move": host.snapshot()["view"]["moves"][0]["move"]})
        table.run(1.0)
        unavailable = [(d["name"], d["reason"]) for d in table.state()["live"]["devices"] if not d["ok"]]
        assert unavailable == [], f"after turn {turn}: {unavailable}"
    assert table.loop_errors == []


def test_with_the_real_sensor_thread_a_fault_comes_and_goes(tmp_path):
    """The same checks in real time, with the daemon's own sensor thread reading the faulty driver."""
    live = Table(tmp_path / "live.sqlite3", live=True)
    try:
        outcome = inject(live, FAULTS["accelerometer raises OSError"], duration_s=1.5)
        assert outcome.problems == [] and outcome.recovered_after_s is not None
        assert live.sensors.alive() and live.loop_errors == []
    finally:
        live.close()
