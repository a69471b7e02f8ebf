"""Device faults that say what is wrong and how to fix it, in words a person at the table can act on.

A `DeviceFault` is a SensorFault (so the daemon treats it like any other) that also
carries the fix on its own. Its `reason` is "problem — fix", which is what the page
shows; `companion doctor` prints the two apart.
"""

from __future__ import annotations

import errno
import os
import pwd

from companion.hardware.interfaces import SensorFault

# errno values the Linux I2C drivers use when nothing acknowledges an address or the bus hangs
_NO_ANSWER = {errno.EREMOTEIO, errno.ENXIO, errno.EIO, errno.ETIMEDOUT, errno.EAGAIN}

# physical header pins for the I2C lines, named in fixes so nobody has to look them up
I2C_PINS = {1: "SDA on GPIO 2 (pin 3), SCL on GPIO 3 (pin 5)"}

# Nobody holds a button this long on purpose (a long press is 1 s), while a box leaning on the panel,
# a jammed cap or a wire shorted to GND holds it for as long as it lasts.
STUCK_BUTTON_S = 10.0


class DeviceFault(SensorFault):
    """A SensorFault with the fix: `problem` is what was seen, `fix` what to do (or None).

    `passing` marks a fault that ends on its own (a chip settling after power-up).
    """

    def __init__(self, device: str, problem: str, fix: str | None = None, *, passing: bool = False):
        self.problem = problem
        self.fix = fix
        self.passing = passing
        super().__init__(device, f"{problem} — {fix}" if fix else problem)


def user_name() -> str:
    """The account this process runs as, for fixes like 'add USER to the i2c group'."""
    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        # a uid without a passwd entry (some containers): the number still identifies it
        return str(os.geteuid())


def i2c_open_fault(device: str, bus: int, exc: OSError) -> DeviceFault:
    """Why /dev/i2c-N could not be opened, and the fix."""
    path = f"/dev/i2c-{bus}"
    if isinstance(exc, FileNotFoundError) or exc.errno == errno.ENOENT:
        if bus == 1:
            return DeviceFault(device, f"{path} does not exist",
                               "I2C is off: add dtparam=i2c_arm=on to config.txt (/boot/firmware/config.txt) and reboot")
        return DeviceFault(device, f"{path} does not exist",
                           f"I2C bus {bus} is not set up: add its dtoverlay (e.g. dtoverlay=i2c-gpio,bus={bus},"
                           "i2c_gpio_sda=20,i2c_gpio_scl=21) to config.txt and reboot, or set i2c_bus = 1")
    if isinstance(exc, PermissionError) or exc.errno in (errno.EACCES, errno.EPERM):
        return DeviceFault(device, f"no permission to open {path}",
                           f"add the user to the i2c group: sudo usermod -aG i2c {user_name()} (then log in again "
                           "or restart the service)")
    return DeviceFault(device, f"cannot open {path}: {exc.strerror or exc}")


def i2c_transfer_fault(device: str, bus: int, address: int, exc: OSError) -> DeviceFault:
    """Why a transfer to an address failed, and the fix."""
    if exc.errno in _NO_ANSWER:
        pins = I2C_PINS.get(bus, f"the SDA and SCL lines of bus {bus}")
        return DeviceFault(device, f"nothing answers at 0x{address:02X} on I2C bus {bus} ({exc.strerror or exc})",
                           f"check the wiring ({pins}, 3V3 and GND) and the address: sudo i2cdetect -y {bus}")
    return DeviceFault(device, f"I2C error at 0x{address:02X} on bus {bus}: {exc.strerror or exc}")


def gpio_fault(device: str, pins: str, exc: BaseException) -> DeviceFault:
    """Why GPIO lines could not be claimed or driven (gpiozero, RPi.GPIO, rpi-lgpio), and the fix."""
    text = str(exc)
    low = text.lower()
    kind = type(exc).__name__
    if kind == "BadPinFactory" or "unable to load any default pin factory" in low:
        return DeviceFault(device, f"no GPIO library for {pins}",
                           "install lgpio (sudo apt install python3-lgpio, or pip install lgpio in the venv)")
    if kind in ("GPIOPinInUse",) or "busy" in low or "already in use" in low:
        return DeviceFault(device, f"{pins} is already in use ({text})",
                           "use each GPIO once in the config and stop other programs that drive it")
    if "/dev/mem" in low or "/dev/gpiomem" in low or "permission" in low or "can not open gpiochip" in low \
            or "cannot open gpiochip" in low:
        return DeviceFault(device, f"no permission to use {pins} ({text})",
                           f"add the user to the gpio group: sudo usermod -aG gpio {user_name()} (then log in again "
                           "or restart the service)")
    if kind == "PinInvalidPin" or "not a valid pin" in low:
        return DeviceFault(device, f"{pins} is not a GPIO on this board ({text})",
                           "use BCM GPIO numbers from 4 to 27 (see hardware/wiring.md)")
    return DeviceFault(device, f"{pins}: {kind}: {text}")


def stuck_button_fault(button: str, held_s: float, *, long_press_given: bool = True) -> DeviceFault:
    """A button held down past the stuck threshold. When its one long press (an undo) went through before it
    was seen as stuck, the reason says so: the players can then play the undone move again."""
    after = ", after one long press (undo)" if long_press_given else ""
    return DeviceFault(f"button {button}", f"stuck pressed for {int(held_s)} s{after}",
                       "check the switch and its wire (the page's buttons still work)")
