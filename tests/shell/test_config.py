"""Config: defaults, and every problem named by file, key and what is wrong."""

import pytest

from companion.config import ConfigError, load, parse


def write(tmp_path, text):
    p = tmp_path / "companion.toml"
    p.write_text(text)
    return p


def test_defaults():
    cfg = load(None)
    assert cfg.game == "balance_duels" and cfg.players == 2 and cfg.model_ref == "A"
    assert cfg.port == 8080 and cfg.host == "127.0.0.1"
    assert cfg.model().tip_torque > 0


def test_a_full_config(tmp_path):
    p = write(tmp_path, """
[game]
name = "balance_duels"
players = 3
[balance]
model = "A"
kappa_gmm = 18000
theta_max_deg = 9.5
pawn_mass_g = { L = 11.0, M = 6.5 }
[store]
path = "state/events.sqlite3"
[web]
port = 9001
[[load_cells]]
name = "load0"
offset_counts = 12000
counts_per_gram = 2150.0
dout_pin = 5
sck_pin = 6
[accelerometer]
chip = "adxl345"
axis = "ay"
[tilt_switch]
pin = 17
[buttons]
roll = 22
undo = 23
""")
    cfg = load(p)
    assert cfg.players == 3 and cfg.port == 9001
    assert cfg.store_path == tmp_path / "state/events.sqlite3"
    assert cfg.model().physics.pawn_mass_g == {"L": 11.0, "M": 6.5}
    assert cfg.load_cells[0].dout_pin == 5 and cfg.accelerometer["axis"] == "ay"
    assert cfg.buttons == {"roll": 22, "undo": 23}


@pytest.mark.parametrize("text,needle", [
    ("[web]\nport = 70000", "[web] port: must be a port number"),
    ("[web]\nport = \"80\"", "[web] port: must be a whole number"),
    ("[webb]\nport = 80", "webb: unknown section"),
    ("[web]\nprot = 80", "[web] prot: unknown key"),
    ("[game]\nname = \"chess\"", "[game] name: must be one of"),
    ("[balance]\nkappa_gmm = -5", "kappa_gmm must be greater than 0"),
    ("[balance]\nmodel = \"nope.toml\"", "no such model file"),
    ("[buttons]\nroll = 2", "[buttons] roll: GPIO 2 and 3 carry I2C"),
    ("[buttons]\nroll = 5\nundo = 5", "GPIO 5 is already used"),
    ("[[load_cells]]\nname = \"x\"", "must be load0, load1"),
    ("[accelerometer]\nchip = \"bmp280\"", "[accelerometer] chip"),
    ("this is = = not toml", "not valid TOML"),
    ("[[load_cells]]\nname = \"load0\"", "needs dout_pin and sck_pin"),
    ("[[load_cells]]\nname = \"load0\"\ndout_pin = 5\nsck_pin = 6\n[buttons]\nroll = 6", "GPIO 6 is already used by [load_cells #1] sck_pin"),
    ("[[load_cells]]\nname = \"load0\"\nadc = \"nau7802\"\n[[load_cells]]\nname = \"load1\"\nadc = \"nau7802\"",
     "already used by load0"),
])
def test_problems_name_the_file_and_key(tmp_path, text, needle):
    p = write(tmp_path, text)
    with pytest.raises(ConfigError) as err:
        load(p)
    assert str(p) in str(err.value) and needle in str(err.value)


def test_a_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="no such config file"):
        load(tmp_path / "absent.toml")


def test_a_bad_model_file_is_named(tmp_path):
    (tmp_path / "m.toml").write_text('name = "X"\n[[holders]]\nid = "a"\nx_mm = 10\ncapacity = 3\n')
    with pytest.raises(ConfigError, match="capacity must be 1"):
        parse({"balance": {"model": "m.toml"}}, "c.toml", tmp_path)


# --- what must not start: each a one-line ConfigError naming its key (exit 2 from `companion run`, below)

HASH = "pbkdf2_sha256$120000$" + "ab" * 16 + "$" + "cd" * 32


@pytest.mark.parametrize("pin,needle", [
    ("pbkdf2_sha256$0$00$00", "iterations"),                              # every PIN would be wrong for ever
    ("pbkdf2_sha256$9999999999999$" + "ab" * 16 + "$" + "cd" * 32, "10,000 to 1,000,000"),  # every login a 500
    ("pbkdf2_sha256$120000$" + "ab" * 16 + "$" + "cd" * 31, "digest"),      # no SHA-256 digest: never matches
    ("pbkdf2_sha256$120000$" + "ab" * 16 + "$" + "CD" * 32, "lower-case hex"),   # never equals .hex()
    ("pbkdf2_sha256$120000$ab$" + "cd" * 32, "salt"),
    ("pbkdf2_sha256$１２０000$" + "ab" * 16 + "$" + "cd" * 32, "damaged"),
])
def test_a_pin_hash_that_could_never_match_is_refused(pin, needle):
    with pytest.raises(ConfigError) as err:
        parse({"web": {"pin": pin}}, "c.toml")
    assert str(err.value).startswith("c.toml: [web] pin: ") and needle in str(err.value)
    assert "\n" not in str(err.value)


def test_a_good_pin_hash_is_taken_and_checks_pins():
    from companion.foundation.pin import hash_pin, verify_pin

    made = hash_pin("246810")
    assert parse({"web": {"pin": made}}).pin_hash == made and verify_pin("246810", made)
    assert parse({"web": {"pin": HASH}}).pin_hash == HASH


@pytest.mark.parametrize("options,needle", [
    ({"setup": []}, "'setup'"),
    ({"setup": {}}, "'setup'"),
    ({"variant": "command_post", "missions": [[]] * 8}, "'missions'"),
    ({"first": []}, "'first'"),
])
def test_risk_with_mistyped_default_options_is_refused_naming_the_option(options, needle):
    with pytest.raises(ConfigError) as err:
        parse({"game": {"name": "risk", "options": options}}, "c.toml")
    assert str(err.value).startswith("c.toml: [game] options: ") and needle in str(err.value)


@pytest.mark.parametrize("data,needle", [
    ({"game": {"name": "balance_duels", "options": {"pawns": float("nan")}}}, "[game] options.pawns: must be a finite number"),
    ({"button_actions": {"risk": {"go": {"type": "end_turn", "x": [float("inf")]}}}},
     "[button_actions] risk.go.x[0]: must be a finite number"),
])
def test_non_finite_numbers_anywhere_are_refused_by_name(data, needle):
    with pytest.raises(ConfigError) as err:
        parse(data, "c.toml")
    assert needle in str(err.value)


def test_toml_nested_3000_deep_is_one_line(tmp_path):
    for text in ("x = " + "[" * 3000 + "]" * 3000, "[game]\noptions = " + "{a = " * 3000 + "1" + "}" * 3000):
        p = write(tmp_path, text)
        with pytest.raises(ConfigError) as err:
            load(p)
        assert str(err.value).startswith(f"{p}: ") and "nested too deeply" in str(err.value)


def test_config_values_nested_too_deeply_are_refused_by_name():
    deep = 1
    for _ in range(200):
        deep = [deep]
    with pytest.raises(ConfigError, match=r"\[game\] options\.players: nested too deeply"):
        parse({"game": {"options": {"players": deep}}}, "c.toml")


@pytest.mark.parametrize("text,key", [
    ('[store]\npath = ""', "[store] path"),
    ('[store]\npath = "  "', "[store] path"),
    ('[balance]\nmodel = ""', "[balance] model"),
    ('[web]\nhost = ""', "[web] host"),
])
def test_empty_paths_are_refused_by_name(tmp_path, text, key):
    p = write(tmp_path, text)
    with pytest.raises(ConfigError) as err:
        load(p)
    assert f"{p}: {key}: must not be empty" in str(err.value)
