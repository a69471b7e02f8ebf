"""Config and balance-model files, damaged on purpose: truncated, garbled, values of the wrong type.

`load_config(text)` and `load_model_text(text)` write the text to a file and load it the way the daemon
does; a problem must come back as ConfigError / ModelError whose message names the file. Anything else
raised is a failure, recorded with the text that caused it.
"""

from __future__ import annotations

import math
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from companion.config import ConfigError, load
from companion.games.balance_model import MODELS_DIR, ModelError, load_model
from companion.foundation.toml_lines import toml_value

# a config that uses every section and most keys: the base the mutations start from
FULL_CONFIG = """\
[game]
name = "balance_duels"
players = 2
options = { pawns = 6 }

[balance]
model = "A"
kappa_gmm = 17000.0
theta_max_deg = 10.0
pawn_mass_g = { L = 10.0, M = 6.0 }
mass_sigma_g = { L = 0.3, M = 0.2 }
tip_sigma_gmm = 88.6
risky_probability = 0.02

[store]
path = "state/events.sqlite3"

[web]
host = "127.0.0.1"
port = 8080
max_streams = 24
heartbeat_s = 15.0

[simulate]
enabled = true
demo = false
demo_interval_s = 2.5
seed = 3

[[load_cells]]
name = "load0"
offset_counts = 8000.0
counts_per_gram = 2150.0
dout_pin = 5
sck_pin = 6

[[load_cells]]
name = "load1"
offset_counts = 8000.0
counts_per_gram = 2150.0
dout_pin = 13
sck_pin = 19

[accelerometer]
chip = "mpu6050"
i2c_bus = 1
axis = "ax"
level_g = 0.0

[tilt_switch]
pin = 17
active_low = true
debounce_ms = 30.0

[buttons]
roll = 22
next = 23
confirm = 24

[indicators]
green = 25
amber = 12
red = 16
buzzer = 20
"""

MODEL_A = (MODELS_DIR / "A.toml").read_text(encoding="utf-8")

WRONG_VALUES: tuple[Any, ...] = ("text", "", 0, -1, 7, 10**20, 1.5, -0.0, math.inf, -math.inf, math.nan, True, False,
                                 [], [1, 2], ["a"], {}, {"x": 1}, {"L": "heavy"}, "é" * 3, "0x2A", "../../etc/passwd")


def value_lines(text: str) -> list[int]:
    """Indexes of the `key = value` lines of a TOML text."""
    return [i for i, line in enumerate(text.splitlines()) if "=" in line and not line.lstrip().startswith(("#", "["))]


def replace_value(text: str, line_index: int, value: Any) -> str:
    lines = text.splitlines()
    key = lines[line_index].split("=", 1)[0].rstrip()
    lines[line_index] = f"{key} = {toml_value(value)}"
    return "\n".join(lines) + "\n"


@dataclass
class FileFuzz:
    """Outcomes of loading many damaged files of one kind."""
    kind: str
    loaded: int = 0
    refused: int = 0
    failures: list[str] = field(default_factory=list)
    messages: set[str] = field(default_factory=set)

    @property
    def total(self) -> int:
        return self.loaded + self.refused + len(self.failures)


class Loader:
    """Writes texts to a scratch file and loads them; one per kind of file."""

    def __init__(self, kind: str, directory: Path | None = None):
        self.kind = kind
        self._tmp = tempfile.TemporaryDirectory(prefix=f"companion-{kind}-fuzz-") if directory is None else None
        self.dir = Path(self._tmp.name) if self._tmp else directory
        self.path = self.dir / ("companion.toml" if kind == "config" else "arm.toml")
        self.result = FileFuzz(kind)

    def close(self) -> None:
        if self._tmp:
            self._tmp.cleanup()

    def __call__(self, data: str | bytes) -> None:
        if isinstance(data, str):
            self.path.write_text(data, encoding="utf-8", errors="surrogatepass")
        else:
            self.path.write_bytes(data)
        expected: tuple[type, ...] = (ConfigError,) if self.kind == "config" else (ModelError,)
        load_fn: Callable[[], Any] = (lambda: load(self.path)) if self.kind == "config" else \
            (lambda: load_model(str(self.path)))
        try:
            load_fn()
        except expected as exc:
            message = str(exc)
            if not message.startswith(str(self.path)) or "\n" in message.strip() or len(message) > 600:
                self.result.failures.append(f"unclear message {message!r} for {_preview(data)}")
            else:
                self.result.refused += 1
                self.result.messages.add(message.split(":", 2)[1].strip() if ":" in message else message)
            return
        except Exception as exc:  # any other exception is the bug this fuzzing looks for: recorded
            self.result.failures.append(f"{type(exc).__name__}: {exc} for {_preview(data)}")
            return
        self.result.loaded += 1


def _preview(data: str | bytes) -> str:
    text = data if isinstance(data, str) else data.decode("utf-8", "replace")
    return repr(text[-160:]) if len(text) > 160 else repr(text)


def truncations(text: str, step: int = 1) -> list[str]:
    """Every prefix of the text (every `step` characters) and every prefix at a line end."""
    cuts = set(range(0, len(text), step)) | {i + 1 for i, ch in enumerate(text) if ch == "\n"}
    return [text[:n] for n in sorted(cuts)]


def wrong_types(text: str) -> list[str]:
    """The text with each value replaced, one at a time, by each wrong value."""
    out = []
    for i in value_lines(text):
        for v in WRONG_VALUES:
            out.append(replace_value(text, i, v))
    return out


def model_via_config(model_text: str, directory: Path) -> str:
    """A config whose [balance] model points at a model file with this text."""
    (directory / "arm.toml").write_text(model_text, encoding="utf-8")
    return '[balance]\nmodel = "arm.toml"\n[simulate]\nenabled = true\n'


def parses(text: str) -> bool:
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return False
    return True
