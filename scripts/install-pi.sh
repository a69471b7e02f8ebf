#!/usr/bin/env bash
# Install Table Companion as a service on a Raspberry Pi (3, 4, Zero 2 W or 5, Raspberry Pi OS
# Bookworm or later): a system user in the gpio and i2c groups, a venv under /opt/companion with
# the package, the systemd unit, and /etc/companion/companion.toml if there is none yet.
#
#   sudo scripts/install-pi.sh              (what `make install-pi` runs)
#   scripts/install-pi.sh --dry-run         print every step, change nothing (no root needed)
#   sudo scripts/install-pi.sh --no-start   install and enable, but do not (re)start the service
#
# Run it again after `git pull` to update: the config in /etc/companion is never overwritten.
set -euo pipefail

SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PREFIX="${PREFIX:-/opt/companion}"
VENV="$PREFIX/venv"
CONF_DIR=/etc/companion
CONF="$CONF_DIR/companion.toml"
UNIT=/etc/systemd/system/companion.service
UDEV_RULES=/etc/udev/rules.d/99-companion.rules
SERVICE_USER=companion
PYTHON="${PYTHON:-python3}"
DRY=0
START=1

usage() { sed -n '2,11s/^# \{0,1\}//p' "$0"; }

while [ $# -gt 0 ]; do
    case "$1" in
        --dry-run) DRY=1 ;;
        --no-start) START=0 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "install-pi.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done

say() { printf '==> %s\n' "$*"; }
# every change goes through run, so --dry-run shows exactly what would be done
run() {
    if [ "$DRY" = 1 ]; then
        printf '+'; printf ' %q' "$@"; printf '\n'
    else
        "$@"
    fi
}

if [ "$DRY" = 0 ] && [ "$(id -u)" -ne 0 ]; then
    echo "install-pi.sh: run it as root: sudo make install-pi (or --dry-run to see the steps)" >&2
    exit 1
fi
if ! "$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)'; then
    echo "install-pi.sh: needs Python 3.11 or newer ($PYTHON is older): use Raspberry Pi OS Bookworm or later" >&2
    exit 1
fi

MODEL="$(tr -d '\0' 2>/dev/null </proc/device-tree/model || echo "an unknown board")"
# The hx711 package needs a module named RPi.GPIO. The original RPi.GPIO cannot drive a Pi 5's
# RP1 chip; rpi-lgpio provides the same module on top of lgpio there.
case "$MODEL" in
    *"Raspberry Pi 5"*|*"Compute Module 5"*) PIP_TARGETS=("$SRC" "rpi-lgpio") ;;
    *) PIP_TARGETS=("${SRC}[pi]") ;;
esac
say "installing Table Companion from $SRC on $MODEL"

if command -v apt-get >/dev/null 2>&1; then
    say "system packages: venv, a compiler for RPi.GPIO, lgpio for gpiozero, i2c-tools for i2cdetect"
    run apt-get install -y --no-install-recommends python3-venv python3-dev gcc python3-lgpio i2c-tools
else
    say "no apt-get: install python3-venv, python3-dev, gcc, python3-lgpio and i2c-tools yourself"
fi

for group in gpio i2c; do
    if ! getent group "$group" >/dev/null; then
        say "creating the $group group"
        run groupadd --system "$group"
    fi
done
if ! id -u "$SERVICE_USER" >/dev/null 2>&1; then
    say "creating the system user $SERVICE_USER"
    run useradd --system --user-group --home-dir /var/lib/companion --no-create-home \
        --shell /usr/sbin/nologin "$SERVICE_USER"
fi
say "adding $SERVICE_USER to the gpio and i2c groups"
run usermod -aG gpio,i2c "$SERVICE_USER"

if [ ! -e /usr/lib/udev/rules.d/99-com.rules ] && [ ! -e /lib/udev/rules.d/99-com.rules ] \
        && [ ! -e /etc/udev/rules.d/99-com.rules ]; then
    say "no Raspberry Pi OS udev rules here: installing $UDEV_RULES (see firmware_config/groups.md)"
    run install -m 0644 "$SRC/firmware_config/99-companion.rules" "$UDEV_RULES"
    run udevadm control --reload-rules
    run udevadm trigger
fi

say "venv in $VENV"
run install -d -m 0755 "$PREFIX"
# system site packages: gpiozero finds the distribution's lgpio there (python3-lgpio)
run "$PYTHON" -m venv --system-site-packages "$VENV"
run "$VENV/bin/python" -m pip install --quiet --upgrade pip
run "$VENV/bin/python" -m pip install --quiet --upgrade "${PIP_TARGETS[@]}"
run install -m 0644 "$SRC/README.md" "$PREFIX/README.md"

run install -d -m 0755 "$CONF_DIR"
if [ -e "$CONF" ]; then
    say "keeping your $CONF (the default is $SRC/firmware_config/companion.toml)"
else
    say "default config in $CONF: edit the pins and the calibration there"
    run install -m 0644 "$SRC/firmware_config/companion.toml" "$CONF"
fi

say "systemd unit $UNIT"
run install -m 0644 "$SRC/systemd/companion.service" "$UNIT"
run systemctl daemon-reload
run systemctl enable companion.service
if [ "$START" = 1 ]; then
    run systemctl restart companion.service
fi

if [ ! -e /dev/i2c-1 ]; then
    say "warning: /dev/i2c-1 does not exist, so I2C is off. Add the lines of"
    say "  $SRC/firmware_config/config.txt.fragment to /boot/firmware/config.txt"
    say "  (or run: sudo raspi-config nonint do_i2c 0) and reboot."
fi
say "done. Check the wiring with:"
say "  sudo systemctl stop companion"
say "  sudo -u $SERVICE_USER $VENV/bin/companion doctor --config $CONF"
say "  sudo systemctl start companion; journalctl -u companion -f"
