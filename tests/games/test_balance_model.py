"""Balance model files: a bad one is refused with a message naming the problem."""

import pytest

from companion.games.balance_model import ModelError, load_model

SEATS = '''
[seats.1]
start = ["a1", "a2", "a3", "a4", "a5", "a6", "a7"]
finish = ["b1", "b2", "b3", "b4", "b5", "b6", "b7"]
[seats.2]
start = ["b7", "b6", "b5", "b4", "b3", "b2", "b1"]
finish = ["a7", "a6", "a5", "a4", "a3", "a2", "a1"]
'''


def holders(changes=None):
    rows = []
    for side, sign in (("a", 1), ("b", -1)):
        for k in range(1, 8):
            hid = f"{side}{k}"
            x = sign * (150 - 20 * k) if side == "a" else -(10 + 20 * k)
            cap = 2
            if changes and hid in changes:
                x, cap = changes[hid]
            rows.append(f'[[holders]]\nid = "{hid}"\nx_mm = {x}\ncapacity = {cap}\n')
    return "".join(rows)


def write(tmp_path, text):
    p = tmp_path / "model.toml"
    p.write_text(text)
    return p


def test_a_custom_model_loads(tmp_path):
    m = load_model(write(tmp_path, 'name = "mine"\n' + holders() + SEATS))
    assert m.name == "mine" and len(m.holders) == 14 and m.seats[2].walk[0] == "b7"


@pytest.mark.parametrize("text,needle", [
    ('name = "x"\n' + holders() + holders() + SEATS, "duplicate holder id 'a1'"),
    ('name = "x"\n' + holders({"a2": (130, 2)}) + SEATS, "'a1' and 'a2' are both at x_mm = 130"),
    ('name = "x"\n' + holders({"a3": (90, 3)}) + SEATS, "capacity must be 1 (single) or 2 (double)"),
    ('name = "x"\n' + holders({"a3": (0, 2)}) + SEATS, "pivot"),
    ('name = "x"\n' + holders() + SEATS.replace('"a7"]', '"zz"]', 1), "names unknown holder 'zz'"),
    ('name = "x"\n' + holders() + SEATS.replace('"a6", "a7"]', '"a6"]', 1), "must list 7 holder ids"),
    ('name = "x"\n' + holders(), "[seats.1] and [seats.2]"),
    (holders() + SEATS, "'name'"),
    ('name = "x"\ncolour = 1\n' + holders() + SEATS, "unknown key"),
    ('name = "x"\n[[holders]]\nid = "a"\nx_mm = "far"\ncapacity = 1\n', "x_mm must be a number"),
    ("name = [", "not valid TOML"),
])
def test_bad_models_are_refused(tmp_path, text, needle):
    p = write(tmp_path, text)
    with pytest.raises(ModelError) as err:
        load_model(p)
    assert needle in str(err.value) and str(p) in str(err.value)


def test_unknown_builtin_name():
    with pytest.raises(ModelError, match="built-in models: A"):
        load_model("Z")


@pytest.mark.parametrize("kw,needle", [
    ({"kappa_gmm": 0}, "kappa_gmm"), ({"theta_max_deg": 95}, "below 90"),
    ({"pawn_mass_g": {"XL": 3}}, "unknown pawn size"), ({"risky_probability": 1.5}, "between 0 and 1"),
])
def test_bad_physics(kw, needle):
    with pytest.raises(ModelError, match=needle):
        load_model("A", **kw)
