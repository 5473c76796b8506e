"""IFEval verdicts through our wrapper: every instruction type passes and fails where it should."""

import json
from pathlib import Path

import pytest

from _ifeval_cases import CASES, LOOSE_ONLY, item
from lineage.evaluation import ifeval

SAMPLE = Path(__file__).resolve().parents[1] / "resources" / "sample" / "eval" / "ifeval.jsonl"


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_pass_and_fail(case):
    instruction_id, kwargs, prompt, good, bad = case
    it = item(instruction_id, kwargs, prompt)
    assert ifeval.check_response(it, good) == {"strict": [True], "loose": [True]}
    assert ifeval.check_response(it, bad) == {"strict": [False], "loose": [False]}


@pytest.mark.parametrize("case", LOOSE_ONLY, ids=[c[0] for c in LOOSE_ONLY])
def test_loose_only(case):
    instruction_id, kwargs, prompt, response = case
    assert ifeval.check_response(item(instruction_id, kwargs, prompt), response) == {"strict": [False], "loose": [True]}


def test_empty_response_fails_everything():
    it = item("punctuation:no_comma", {}, "Do not use commas.")
    assert ifeval.check_response(it, "   ") == {"strict": [False], "loose": [False]}


def test_every_registered_instruction_has_a_case():
    assert {c[0] for c in CASES} == set(ifeval.registry())


def test_sample_file_instructions_are_covered():
    if not SAMPLE.is_file():
        pytest.skip(f"{SAMPLE} not written yet")
    used = {
        i for line in SAMPLE.read_text().splitlines() if line.strip() for i in json.loads(line)["instruction_id_list"]
    }
    assert used <= {c[0] for c in CASES}, used - {c[0] for c in CASES}
    for line in SAMPLE.read_text().splitlines():
        row = json.loads(line)
        for instruction_id, kwargs in zip(row["instruction_id_list"], row["kwargs"]):
            ifeval.build_instruction(instruction_id, kwargs, row["prompt"])  # kwargs accepted by lm-eval's checker


def test_aggregate_prompt_and_instruction_level():
    verdicts = [{"strict": [True, False], "loose": [True, True]}, {"strict": [True], "loose": [True]}]
    assert ifeval.aggregate(verdicts) == {
        "prompt_level_strict_acc": 0.5,
        "inst_level_strict_acc": 2 / 3,
        "prompt_level_loose_acc": 1.0,
        "inst_level_loose_acc": 1.0,
    }


def test_unknown_instruction_is_named():
    with pytest.raises(KeyError, match="no_such:thing"):
        ifeval.check_response(item("no_such:thing", {}, "x"), "y")
