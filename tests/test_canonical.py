"""Settings by meaning: canonical text that ignores key order and number spelling; numbers by schema."""

import random
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from lineage.canonical import as_number, canonical, numbers_by_schema

REPO = Path(__file__).resolve().parents[1]
SCHEMA = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())

leaves = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=5)
)
values = st.recursive(
    leaves,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=20,
)


def shuffled(value, rng):
    if isinstance(value, dict):
        keys = list(value)
        rng.shuffle(keys)
        return {k: shuffled(value[k], rng) for k in keys}
    if isinstance(value, list):
        return [shuffled(v, rng) for v in value]
    return value


@given(values, st.integers(0, 2**16))
def test_key_order_never_changes_the_text(value, seed):
    assert canonical(shuffled(value, random.Random(seed))) == canonical(value)


def test_numbers_are_spelled_one_way():
    assert canonical({"lr": 5e-6}) == canonical({"lr": 5.0e-6}) == canonical({"lr": float("0.000005")})
    assert canonical((0.9, 0.95)) == canonical([0.9, 0.95])
    assert canonical({"b": 1, "a": [1.5]}) == '{"a":[1.5],"b":1}'
    with pytest.raises(ValueError, match="finite"):
        canonical({"lr": float("nan")})


@pytest.mark.parametrize(
    "text, number", [("5e-6", 5e-6), ("1.0e5", 1e5), ("-2E+3", -2000.0), ("1_000", 1000), (".5", 0.5), ("7", 7)]
)
def test_yaml_12_numbers_are_read(text, number):
    assert as_number(text) == number and type(as_number(text)) is type(number)


@pytest.mark.parametrize("text", ["", "e5", "abc", "1e", "0x10", "5e-6x", "."])
def test_other_strings_are_not_numbers(text):
    assert as_number(text) is None


def test_numeric_strings_become_numbers_only_where_the_schema_wants_a_number():
    config = yaml.safe_load((REPO / "config.yaml").read_text())
    config["runs"]["sftwF"]["lr"] = "5e-6"  # how PyYAML reads the card's spelling
    config["recipe"]["optimizer"]["betas"] = ["9e-1", 0.95]
    config["scales"]["embedded"]["train"]["lr_scale"] = "1e2"
    config["scales"]["embedded"]["export"]["our_model"] = "1e5"  # a string field stays a string
    fixed = numbers_by_schema(config, SCHEMA)
    assert fixed["runs"]["sftwF"]["lr"] == 5e-6
    assert fixed["recipe"]["optimizer"]["betas"] == [0.9, 0.95]
    assert fixed["scales"]["embedded"]["train"]["lr_scale"] == 100.0
    assert fixed["scales"]["embedded"]["export"]["our_model"] == "1e5"
