"""The running table: the daemon's wiring and everything it drives while a game is played.

- `daemon`: config → drivers → sensing → game → store → page, LEDs, buzzer, the demo.
- `host`: the running game (its state is the fold of its events; undo appends).
- `arm_link`: the arm follower's events turned into Balance Duels moves, questions and tips.
- `buttons`: what each panel button does per game; `devices`: the sensor loop and device health.
- `calibration_desk`: the page's calibration steps; `maps`: the players' map completions on disk.
- `device_factory`: the real drivers built from the config; `doctor`: `companion doctor`.
- `record`, `walkthrough`, `sensing_commands`: `companion record`, `calibrate` and `analyze`.
- `systemd_notify`: readiness and the watchdog.

Imports: recorder, web, mqtt, store, sensing, config, games, hardware, foundation; the simulator
(companion.simulation) only where a person asked for it: `--simulate`, the demo, `record --simulate`,
`calibrate --simulate`. Never replay or cli.
"""
