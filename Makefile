# Two entry points for a fresh machine: `make run` and `make test`.
PYTHON ?= python3
PORT ?= 8080
# make test runs the suite across the cores (pytest-xdist): 3 workers on a 2-core machine keep both cores busy
# while some tests wait on daemons, browsers and sockets; --dist loadfile keeps each test file on one worker,
# so a module's browser, daemon and broker fixtures start once, as they do in a serial run; the files go out in the
# order tests/conftest.py gives them, the long ones first, so that none starts last and holds up the end
TEST_WORKERS ?= 3
TEST_DIST ?= loadfile
HOST ?= 127.0.0.1
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test bench venv clean browser mosquitto install-pi

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11 or newer is needed (found %d.%d)" % sys.version_info[:2])'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	@touch $(STAMP)

venv: $(STAMP)

run: $(STAMP)
	$(BIN)/companion run --simulate --host $(HOST) --port $(PORT)

# The package is compiled once first: the suite starts the daemon as a process about a hundred times, and an
# environment with PYTHONDONTWRITEBYTECODE would otherwise compile it afresh each time (cached bytecode is still read)
test: $(STAMP) browser mosquitto
	$(BIN)/python -m compileall -q -j 0 companion
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist $(TEST_DIST) --no-loadscope-reorder --durations=25

# The MQTT tests (tests/mqtt) run a real Mosquitto broker from Debian's packages: installed when missing.
mosquitto:
	@if ! command -v mosquitto >/dev/null 2>&1 && [ ! -x /usr/sbin/mosquitto ]; then \
	  echo "installing Debian's mosquitto for the MQTT tests"; \
	  SUDO=$$( [ "$$(id -u)" -eq 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mosquitto >/dev/null; \
	fi

# The browser tests use Debian's chromium-headless-shell (never a downloaded browser build): the same Blink as the
# chromium a tablet runs, at a third of its CPU (tests/browser/chromium.py). Installed when missing and root;
# otherwise Debian's chromium is used if it is there, and the tests are skipped without either (failing under CI=true).
browser:
	@command -v chromium-headless-shell >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing Debian's chromium-headless-shell for the browser tests"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium-headless-shell >/dev/null; \
	  elif command -v chromium >/dev/null 2>&1; then echo "chromium-headless-shell is not installed: the browser tests use chromium (slower)"; \
	  else echo "no chromium is installed: the browser tests will be skipped (apt-get install chromium-headless-shell)"; fi; }

# The long runs behind README's figures (about 30 minutes in all); each script takes --help for smaller sizes.
bench: $(STAMP) browser mosquitto
	$(BIN)/python bench/balance_duels_bench.py
	$(BIN)/python bench/sensing_accuracy.py
	$(BIN)/python bench/game_following.py
	$(BIN)/python bench/history.py
	$(BIN)/python bench/crash.py
	$(BIN)/python bench/http_fuzz.py
	$(BIN)/python bench/hostile_wifi.py
	$(BIN)/python bench/rules_fuzz.py
	$(BIN)/python bench/file_fuzz.py
	$(BIN)/python bench/faults.py
	$(BIN)/python bench/load.py
	$(BIN)/python bench/pin_guess.py
	$(BIN)/python bench/slow_clients.py

clean:
	rm -rf $(VENV) var .pytest_cache

# On a Raspberry Pi: a service user in the gpio and i2c groups, a venv in /opt/companion, the systemd unit
# and /etc/companion/companion.toml (kept if present). See scripts/install-pi.sh and hardware/wiring.md.
install-pi:
	$(if $(filter 0,$(shell id -u)),,sudo) bash scripts/install-pi.sh
