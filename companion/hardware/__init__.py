"""Drivers: one small interface per kind of device, a real implementation on its field's library.

- `interfaces`: load cell, accelerometer, tilt switch, button panel, indicators.
- `hx711_cell`, `nau7802`: load cells (hx711, smbus2); `accelerometers`, `i2c`: MPU-6050 family and ADXL345.
- `gpio_devices`: tilt switch, buttons, LEDs and buzzer (gpiozero); `debounce`: contacts believed once still.
- `virtual`: the page's button panel and indicators with no hardware behind them.
- `deadline`, `faults`: every read has a deadline; a fault is a reason, never a dead daemon.

Imports: foundation only. The simulated drivers live in companion.simulation.
"""
