"""Wiring: config → drivers → sensing → game host → store → page, LEDs and buzzer.

`Companion` owns the long-lived parts; `build()` makes one from a config so the
CLI, tests and benchmarks start the same daemon.
"""

from __future__ import annotations

import logging
import random
import threading
from typing import TYPE_CHECKING, Any

from companion.foundation import strict_json
from companion.table.buttons import ButtonController
from companion.foundation.clock import Clock
from companion.config import Config
from companion.table.devices import Calibration, SensorMonitor
from companion.games import balance_duels as bd
from companion.games.base import RuleError
from companion.games.registry import engines
from companion.table.host import GameHost
from companion.hardware.virtual import VirtualButtonPanel, VirtualIndicators
from companion.store import Event, EventStore, StoreError, open_store
from companion.foundation.table_time import TableTime, sample_value

if TYPE_CHECKING:
    from companion.simulation.table import SimulatedTable

log = logging.getLogger(__name__)
SIM_ZERO_COUNTS = 8000.0       # a simulated HX711's reading with nothing on it
SIM_CELLS = 2
DEMO_PAUSE_AFTER_HUMAN_S = 60.0
DEMO_LINGER_STEPS = 4
DEMO_SENSE_PATIENCE = 4        # demo steps to wait for the sensors to report a physical move
SENSOR_STALL_S = 5.0           # a sensor loop silent this long counts as stalled


def history_index(store: EventStore, engines, model, *, current_game=lambda: None, read_only: bool = False):
    """The history of `store` (companion/history) with its summaries' cache beside it, as the daemon keeps it;
    `read_only` only reads that cache (`companion plays`)."""
    from companion.games import balance_duels as bd
    from companion.history.cache import beside
    from companion.history.index import PlayIndex, model_fingerprint

    return PlayIndex(store, engines, cache_path=beside(store.path), model_fingerprint=model_fingerprint(model),
                     torque=lambda state: bd.net_torque(model, state), tip_torque=model.tip_torque,
                     current_game=current_game, cache_read_only=read_only)


def arm_model(config: Config, model=None):
    """The balance model the table plays with: the config's, and on a real table that follows the arm the
    measured arm (calibration.toml beside the config), which the warnings must use too."""
    model = model if model is not None else config.model()
    if config.game_follows_arm and not config.simulate:
        from companion.sensing.calibration import calibrated_model, for_config

        model = calibrated_model(model, for_config(config)[0])
    return model


class Companion:
    def __init__(self, config: Config, *, clock: Clock | None = None, store: EventStore | None = None):
        self.config = config
        self.clock = clock or Clock()
        self.config_model = config.model()  # before calibration: what the config itself says of the arm
        self.model = arm_model(config, self.config_model)
        self.rng = random.Random(config.seed)
        self.notices: list[str] = []
        if store is None:
            # a damaged database is moved aside (a backup restored) rather than keeping the table from starting
            store, notice = open_store(config.database())
            if notice:
                self.notices.append(notice)
        self.store = store
        default_options = config.start_options
        # held by the game host around every change and by the arm link around every sample: one order for both
        self.table_lock = threading.RLock()
        self.table_time = TableTime(self.clock.now())
        from companion.table.maps import MapCompletions

        self.maps = MapCompletions(config.maps_dir())
        self.host = GameHost(self.store, engines(self.model, self.maps.all()), config.game, default_options, self.clock,
                             gate=self.table_lock)
        self.history = self._build_history()
        self.mqtt = None
        if config.mqtt is not None:
            from companion.mqtt.publisher import TablePublisher

            self.mqtt = TablePublisher(self, config.mqtt)
        self.table: SimulatedTable | None = None
        self.sensors: SensorMonitor | None = None
        self.indicators = VirtualIndicators(self.clock)
        mapped = sorted({b for table in config.button_actions.values() for b in table})
        self.buttons = VirtualButtonPanel(("roll", "next", "confirm", "undo", *mapped), clock=self.clock)
        self.controller = ButtonController(self.host, lambda: self.roll_die(source="button"), self.dice,
                                           {g: dict(a) for g, a in config.button_actions.items()})
        self._demo_idle = 0
        self._demo_pending = None
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self.restarts = 0
        self.devices = None
        if config.simulate:
            self._build_simulation()
        elif config.sensors or config.buttons or config.indicators:
            self._build_hardware()
        self.arm = None
        self.calibration = None
        if self.sensors is not None and config.game_follows_arm:
            self._build_arm_link()
        self.recorder = None
        if self.sensors is not None:
            self._build_recorder()
        self.buttons.on_press(self.press)
        self.buttons.on_hold(self.hold)
        self.host.on_change(self._after_change)
        self._after_change()

    # --- simulation
    def _build_simulation(self) -> None:
        # only a table asked to simulate (--simulate, the demo) loads the simulator
        from companion.simulation.table import SimAccelerometer, SimLoadCell, SimTiltSwitch, SimulatedTable

        seed = self.config.seed
        self.table = SimulatedTable(self.model, self.clock, seed=seed)
        cal = Calibration(axis="ax", level_g=0.0)
        cells = []
        for i in range(SIM_CELLS):
            name = f"load{i}"
            cpg = 2150.0
            share = 1.0 / SIM_CELLS
            offset = SIM_ZERO_COUNTS + self.table.arm_mass_g * share * cpg
            cells.append(SimLoadCell(self.table, name, share=share, offset_counts=SIM_ZERO_COUNTS,
                                     counts_per_gram=cpg, seed=None if seed is None else seed + i))
            cal.offsets[name] = offset
            cal.counts_per_gram[name] = cpg
        self.sensors = SensorMonitor(
            self.model, cal, load_cells=cells, accelerometer=SimAccelerometer(self.table, seed=seed),
            tilt=SimTiltSwitch(self.table, seed=seed), clock=self.clock)
        self._sync_table(hand=False)
        self.table.settle()

    def _build_hardware(self) -> None:
        """Real drivers from the config; a device that fails is shown unavailable and retried, never fatal."""
        from companion.table.device_factory import build_devices

        cfg = self.config
        self.devices = devs = build_devices(cfg, clock=self.clock)
        for name, reason in devs.failures:
            log.warning("%s unavailable at start: %s", name, reason)
        cal = Calibration(offsets={c.name: c.offset_counts for c in cfg.load_cells},
                          counts_per_gram={c.name: c.counts_per_gram for c in cfg.load_cells},
                          axis=(cfg.accelerometer or {}).get("axis", "ax"),
                          level_g=(cfg.accelerometer or {}).get("level_g", 0.0))
        if devs.load_cells or devs.accelerometer is not None or devs.tilt is not None:
            debounce = (cfg.tilt_switch or {}).get("debounce_ms", 30.0) / 1000.0
            self.sensors = SensorMonitor(self.model, cal, load_cells=list(devs.load_cells),
                                         accelerometer=devs.accelerometer, tilt=devs.tilt, clock=self.clock,
                                         debounce_s=debounce)
        if devs.buttons is not None:
            self.buttons = devs.buttons
        if devs.indicators is not None:
            self.indicators = devs.indicators

    def _arm_calibration(self):
        """The calibration the arm is read with: the simulated table's own, or the config and calibration.toml."""
        from companion.sensing.calibration import ArmCalibration, CellCalibration, for_config

        if self.config.simulate:
            # the simulated arm is calibrated exactly: its zero, scale and level are known
            return ArmCalibration(
                cells=tuple(CellCalibration(n, self.sensors.cal.offsets[n], self.sensors.cal.counts_per_gram[n])
                            for n in sorted(self.sensors.cal.offsets)),
                axis="ax", level_g=0.0, kappa_gmm=self.model.physics.kappa_gmm,
                theta_max_deg=self.model.physics.theta_max_deg, damping=self.table.damping,
                swing_hz=self.table.omega / (2 * 3.141592653589793), swing_measured=True,
                holder_x={h.id: h.x_mm for h in self.model.holders}, source="simulated table")
        return for_config(self.config)[0]

    def _build_arm_link(self) -> None:
        """Balance Duels follows the arm: raw samples → sensing → legal moves → the game."""
        from companion.table.arm_link import ArmLink
        from companion.sensing.follower import ArmFollower

        cal = self._arm_calibration()
        pawns = self.host.state.on_arm() if self.host.game == "balance_duels" else []
        self.arm = ArmLink(self.host, self.model, ArmFollower(self.model, cal, pawns=pawns), lock=self.table_lock,
                           time=self.table_time)
        self.controller.arm = self.arm
        self.sensors.on_sample(self.arm.feed)
        self.host.on_commit(self.arm.on_game_change)
        from companion.table.calibration_desk import CalibrationDesk

        self.calibration = CalibrationDesk(self, cal)
        self.sensors.on_sample(self.calibration.feed)

    # --- the flight recorder (companion/recorder/flight.py)
    def _build_recorder(self) -> None:
        from companion.recorder.flight import FlightRecorder

        self.recorder = FlightRecorder(self._checkpoint, window_s=self.config.recorder_minutes * 60.0,
                                       max_bytes=int(self.config.recorder_max_mb * 1024 * 1024))
        if self.arm is not None:
            self.arm.on_row(self.recorder.row)
            self.arm.on_report(self._record_report)
            # a window can start exactly only where the follower restarted from its memory
            self.arm.restart_every_s = self.recorder.window_s / 4
        else:
            self.sensors.on_sample(self._record_sample)
        self.host.on_commit(self._record_commit)

    def _checkpoint(self):
        from companion.recorder.flight import Checkpoint

        return Checkpoint(self.host.game_id, self.host.seq)

    def _record_sample(self, t: float, sensor: str, value: float) -> None:
        with self.table_lock:
            self.recorder.row(self.table_time.sample(t), sensor, sample_value(sensor, value))

    def _record_report(self, kind: str, data: Any) -> None:
        from companion.recorder.inputs import Input

        if kind == "answered":
            # before the move it leads to, and in its words: the move, not the option's number
            self.recorder.input(Input(self.table_time.input(self.clock.now()), "answer", dict(data)))
            return
        if kind == "held_roll":
            # when the players rolled, not when it counted: a replay then keeps it as the table did
            self.recorder.input(Input(self.table_time.input(self.clock.now()), "action",
                                      {"type": "roll", "value": data["value"]}))
            return
        if kind == "restarted":
            self.recorder.restart(Input(data["t"], "follower", data["memory"]))
            return
        t = round(self.table_time.last, 6)
        if kind == "question":
            self.recorder.output(t, {"t": t, "question": data["text"], "options": [o["move"] for o in data["options"]]})
        elif kind == "notice":
            self.recorder.output(t, {"t": t, "notice": data})

    def _record_commit(self, ev: Event) -> None:
        from companion.recorder.inputs import Input

        if ev.source == "sensor":
            source = "answer" if self.arm is not None and self.arm.answering else "sensor"
            t = self.table_time.last
        else:
            source = "input"
            t = self.table_time.input(self.clock.now())
            if ev.kind == "new_game":
                item = Input(t, "new_game", {"game": ev.body["game"], "options": ev.body.get("options", {})})
            elif ev.kind == "undo":
                item = Input(t, "undo", True)
            else:
                item = Input(t, "action", ev.body["action"])
            if not (self.arm is not None and self.arm.releasing_roll):   # a kept roll was recorded as it came
                self.recorder.input(item)
        t = round(t, 6)
        line = {"t": t, "seq": ev.seq, "kind": ev.kind, "body": ev.body, "source": source}
        if source == "sensor" and self.arm is not None and self.arm.applied_confidence is not None:
            line["confidence"] = round(self.arm.applied_confidence, 4)   # as a replay prints it
        self.recorder.output(t, line)

    def flight_bundle(self) -> tuple[str, bytes]:
        """The misread report: (file name, .tar.gz bytes) of the recorder's window, built outside the table lock."""
        from companion.recorder import bundle

        if self.recorder is None:
            raise RuleError("this table has no sensors, so the flight recorder has nothing")
        rec = self.recorder.snapshot()
        cp = rec.checkpoint
        game_events = self.store.game_events(self.host.game_id)
        if cp is None:
            window_events = game_events
        else:
            window_events = [e for e in self.store.game_events(cp.game_id) if e.seq <= cp.seq]
        cal = self.arm.follower.cal if self.arm is not None else self._arm_calibration()
        return bundle.build(rec, config=self.config, calibration=cal, model=self.model,
                            physics=self.config_model.physics, simulated=self.config.simulate,
                            game_events=game_events, window_events=window_events)

    def _sync_table(self, hand: bool = True) -> None:
        if self.table is None or self.host.game != "balance_duels":
            return
        want = sorted(self.host.state.on_arm())
        have = sorted(self.table.pawns_to_come())
        if want != have:
            self.table.set_pawns(want, hand_s=0.6 if hand else 0.0)

    # --- reactions to every change
    def _after_change(self) -> None:
        self._sync_table()
        snap = self.host.snapshot()
        if snap["view"].get("over") or snap["view"].get("game_over"):
            # a finished game goes into the rolling backups at once, not only when the next one starts
            self._backup()
        if snap["game"] == "balance_duels":
            view = snap["view"]
            self.indicators.show(view["indicator"])
            if view["tipped_by"] is not None and snap["last_action"] and snap["last_action"] != "undo":
                self.indicators.buzz(2.0)
        else:
            self.indicators.show("off")
        self.controller.reset()

    # --- buttons (companion/table/buttons.py says what each does per game)
    def press(self, name: str) -> str | None:
        """Handle a short press; returns the refusal message when the press was out of turn."""
        try:
            self.controller.press(name)
        except RuleError as exc:
            return self.flash(str(exc))
        return None

    def hold(self, name: str) -> str | None:
        """A long press on any button takes back the last action."""
        try:
            self.controller.hold(name)
        except RuleError as exc:
            return self.flash(str(exc))
        return None

    def _backup(self) -> None:
        try:
            self.store.backup()
        except StoreError as exc:  # shown on the page through store.backup_problem; the game goes on
            log.warning("backup of the finished game failed: %s", exc)
            self.store.backup_problem = str(exc)

    def flash(self, message: str) -> str:
        """A button pressed out of turn: tell the table on the page and with a short buzz."""
        log.info("button refused: %s", message)
        self.last_refusal = {"message": message, "at": self.clock.now()}
        self.indicators.buzz(0.2)
        return message

    last_refusal: dict | None = None

    def complete_map(self, game: str, addition: Any) -> dict:
        """Add the players' entries to `game`'s map file (MapFileError if refused) and play on with them."""
        merged = self.maps.add(game, addition)
        self.host.use_engines(engines(self.model, self.maps.all()))
        return merged

    def roll_die(self, value: int | None = None, source: str = "page"):
        """The roll's event; None when the arm's last move is still being settled and the roll is kept for it."""
        value = self.rng.randint(1, 6) if value is None else value
        if self.arm is not None and self.host.game == "balance_duels":
            return self.arm.roll(value, source=source)
        return self.host.act({"type": "roll", "value": value}, source=source)

    def dice(self, n: int) -> list[int]:
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 10:
            raise RuleError("roll 1 to 10 dice")
        return [self.rng.randint(1, 6) for _ in range(n)]

    # --- status for the page
    def live(self) -> dict:
        out: dict[str, Any] = {"simulated": self.config.simulate, "devices": []}
        if self.sensors is not None:
            out.update(self.sensors.live())
        if self.arm is not None:
            sensed = self.arm.live()
            for key in ("weight_g", "angle_deg", "torque_gmm"):
                # a dead or faulty device hides its value: the follower's last estimate must not stand in
                if out.get(key) is None:
                    sensed[key] = None
            out.update(sensed)
        # buttons and LEDs are not polled by the sensor loop: list the ones whose pins failed or that are stuck
        listed = {d["name"] for d in out["devices"]}
        failing = list(self.devices.unavailable()) if self.devices is not None else []
        # the simulated panel is in no Devices, a GPIO panel is in both: hence the check on names
        failing += self.buttons.failures()
        extra = []
        for name, reason in failing:
            if name not in listed:
                listed.add(name)
                extra.append({"name": name, "kind": "output" if name.startswith("indicator") else "button",
                              "ok": False, "reason": reason, "since": None, "for_s": None})
        out["devices"] = out["devices"] + extra
        notices = list(self.notices) + list(self.host.problems)
        if getattr(self.store, "backup_problem", None):
            notices.append(f"the last backup failed: {self.store.backup_problem}")
        if getattr(self.store, "ack_problem", None):
            notices.append(f"events are recorded, but a later loss of them could not be told: {self.store.ack_problem}")
        out["notices"] = notices
        out["recorder"] = self.recorder.status() if self.recorder is not None else None
        out["indicator"] = self.indicators.light
        out["buzzing"] = self.indicators.buzzing
        if self.last_refusal and self.clock.now() - self.last_refusal["at"] < 10:
            out["refusal"] = self.last_refusal["message"]
        out.update(self.controller.status())
        if self.mqtt is not None:
            out["mqtt"] = self.mqtt.status()
        # JSON goes out strict (companion/foundation/strict_json.py): a reading gone NaN is unknown, not a 500 for /api/state
        # and a broken stream for every page
        return strict_json.unknown_if_not_finite(out)

    # --- the demo game
    def _demo_step(self) -> None:
        host = self.host
        if host.game != "balance_duels":
            return
        if self.clock.now() - host.last_human_action < DEMO_PAUSE_AFTER_HUMAN_S:
            return
        if self._demo_pending is not None and self._demo_follow_up():
            return
        state = host.state
        if state.over:
            # leave the result (and a tip's alarm) on the page for a few turns' time before starting again
            self._demo_idle += 1
            if self._demo_idle >= DEMO_LINGER_STEPS:
                self._demo_idle = 0
                host.new_game("balance_duels", host.options, source="demo")
            return
        if state.roll is None:
            moves = bd.legal_moves(self.model, state, None)
            if not moves:
                self.roll_die(source="demo")
                return
        assessed = bd.assess_all(self.model, state, state.roll) if state.roll is not None else []
        if not assessed:
            return
        safe = [m for m, a in assessed if a.verdict == "safe" and m.kind in ("place", "advance")]
        risky = [m for m, a in assessed if a.verdict == "risky"]
        # mostly careful play, now and then a daring move so the page shows a tip too
        r = self.rng.random()
        if safe and r < 0.9:
            pool = safe
        elif risky and r < 0.97:
            pool = risky
        else:
            pool = [m for m, _ in assessed]
        move = self.rng.choice(pool)
        if self.arm is not None and self.table is not None and move.kind in ("place", "advance"):
            # play it on the arm, as a player would: the sensors have to see it and tell the game
            after = bd._moved(self.model, state, move)
            self.table.set_pawns([(p.holder, p.size) for p in after if p.holder is not None],
                                 at_holder=move.to_holder)
            self._demo_pending = (move, host.seq, 0)
            return
        host.act({"type": "move", "move": move.to_dict()}, source="demo")

    def _demo_follow_up(self) -> bool:
        """While the sensors work out the demo's last physical move: answer their question, or after a while
        fall back to telling the game directly. True while still waiting."""
        move, seq, waited = self._demo_pending
        host = self.host
        if host.seq != seq:
            self._demo_pending = None
            return False
        want = move.to_dict()
        q = self.arm.question
        if q is not None:
            for i, option in enumerate(q["options"]):
                if all(option["move"].get(k) == want.get(k) for k in ("kind", "from_holder", "to_holder", "size")):
                    self.arm.answer(i)
                    self._demo_pending = None
                    return False
        if waited >= DEMO_SENSE_PATIENCE:
            log.warning("the sensors did not report the demo's move %s; telling the game directly", move.describe())
            self._demo_pending = None
            host.act({"type": "move", "move": want}, source="demo")
            return False
        self._demo_pending = (move, seq, waited + 1)
        return True

    def _demo_loop(self) -> None:
        while not self._stop.wait(self.config.demo_interval_s):
            try:
                self._demo_step()
            except Exception:  # the demo is decoration; log and keep going
                log.exception("demo step failed")

    def _build_history(self):
        """Every game in the store as a play (companion/history): its summaries cached beside the store."""
        return history_index(self.store, lambda: self.host.engines, self.model, current_game=lambda: self.host.game_id)

    # --- lifecycle
    def start(self) -> None:
        self.history.start_warming()
        if self.sensors is not None:
            self.sensors.start()
        if self.mqtt is not None:
            self.mqtt.start()
        if self.config.simulate and self.config.demo:
            self._start_demo()

    def _start_demo(self) -> None:
        t = threading.Thread(target=self._demo_loop, name="demo", daemon=True)
        t.start()
        self._threads = [t]

    def supervise(self) -> list[str]:
        """Restart any worker thread that died; returns what was restarted (also logged)."""
        restarted = []
        if self._stop.is_set():
            return restarted
        if self.sensors is not None and not self.sensors.alive():
            log.error("the sensor thread died; restarting it")
            self.sensors.start()
            restarted.append("sensors")
        if self.config.simulate and self.config.demo and not any(t.is_alive() for t in self._threads):
            log.error("the demo thread died; restarting it")
            self._start_demo()
            restarted.append("demo")
        self.restarts += len(restarted)
        return restarted

    def liveness_checks(self, extra: dict | None = None) -> dict:
        """name -> callable, True while that part is alive: what the main loop vouches for to systemd."""
        checks = {"store": self._store_answers}
        if self.sensors is not None:
            sensors = self.sensors
            checks["sensors"] = lambda: sensors.alive() and self.clock.now() - sensors.heartbeat < SENSOR_STALL_S
        checks.update(extra or {})
        return checks

    def healthy(self, checks: dict | None = None) -> dict[str, bool]:
        return {name: bool(check()) for name, check in self.liveness_checks(checks).items()}

    def _store_answers(self) -> bool:
        try:
            self.store.last_seq()
            return True
        except Exception:  # reported as unhealthy (and logged) rather than raised into the main loop
            log.exception("the event store does not answer")
            return False

    def main_loop(self, stopping: threading.Event, checks: dict | None = None, period_s: float = 1.0) -> None:
        """The daemon's main thread: supervise workers, and feed systemd's watchdog only while all is alive.

        A stalled main loop stops the pings too, so systemd restarts the process (WatchdogSec= in the unit).
        """
        from companion.table.systemd_notify import Notifier, Watchdog

        notifier = Notifier()
        watchdog = Watchdog(self.liveness_checks(checks), notifier=notifier, clock=self.clock)
        notifier.ready(status="serving the table page")
        try:
            while not stopping.wait(period_s):
                self.supervise()
                watchdog.kick()
        finally:
            notifier.stopping()
            notifier.close()

    def stop(self) -> None:
        self._stop.set()
        if self.sensors is not None:
            self.sensors.stop()
        for t in self._threads:
            t.join(timeout=2)
        if self.mqtt is not None:
            self.mqtt.stop()
        if self.devices is not None:
            self.devices.close()
        self.history.close()
        self.store.close()
