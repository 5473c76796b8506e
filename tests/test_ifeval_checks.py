"""IFEval verdicts through our wrapper: every instruction type passes and fails where it should."""

import json
from pathlib import Path

import pytest
from _ifeval_cases import CASES, LOOSE_ONLY, item

from lineage.evaluation import ifeval

SAMPLE = Path(__file__).resolve().parents[1] / "resources" / "sample" / "eval" / "ifeval.jsonl"


def verdicts(item, response):
    """Strict and loose verdicts (without the record of lm-eval's chance-dependent instructions)."""
    out = ifeval.check_response(item, response)
    return {"strict": out["strict"], "loose": out["loose"]}


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_pass_and_fail(case):
    instruction_id, kwargs, prompt, good, bad = case
    it = item(instruction_id, kwargs, prompt)
    assert verdicts(it, good) == {"strict": [True], "loose": [True]}
    assert verdicts(it, bad) == {"strict": [False], "loose": [False]}


@pytest.mark.parametrize("case", LOOSE_ONLY, ids=[c[0] for c in LOOSE_ONLY])
def test_loose_only(case):
    instruction_id, kwargs, prompt, response = case
    assert verdicts(item(instruction_id, kwargs, prompt), response) == {"strict": [False], "loose": [True]}


def test_empty_response_fails_everything():
    it = item("punctuation:no_comma", {}, "Do not use commas.")
    assert verdicts(it, "   ") == {"strict": [False], "loose": [False]}


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
        verdicts(item("no_such:thing", {}, "x"), "y")


# An instruction lm-eval builds from chance: a non-letter to count, and a left-out sentence count.
PLANTED = {
    "key": 9001,
    "prompt": "Write a short note that uses the character # at least 3 times.",
    "instruction_id_list": ["keywords:letter_frequency", "length_constraints:number_sentences"],
    "kwargs": [{"letter": "#", "let_frequency": 3, "let_relation": "at least"}, {}],
}
PROBE = """
import json, random, sys
sys.path.insert(0, "workflow/scripts")
random.seed(int(sys.argv[1]))  # the global generator lm-eval draws from, in another state each process
from lineage.evaluation import ifeval
item, response = json.loads(sys.argv[2]), sys.argv[3]
print(json.dumps(ifeval.check_response(item, response)))
"""


def test_a_planted_chance_item_gets_the_same_verdict_in_every_process():
    import os
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[1]
    response = "Notes: # one. # two. # three. Done now."
    outputs = set()
    for seed in range(4):
        env = {**os.environ, "PYTHONHASHSEED": str(seed)}
        proc = subprocess.run(
            [sys.executable, "-c", PROBE, str(seed), json.dumps(PLANTED), response],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        outputs.add(proc.stdout.strip().splitlines()[-1])
    assert len(outputs) == 1, outputs
    result = json.loads(outputs.pop())
    assert result["strict"][0] is True  # the three "#" the prompt asks for are counted
    chance = {c["id"]: c for c in result["lm_eval_chance"]}
    assert set(chance) == set(PLANTED["instruction_id_list"])  # both are draws in lm-eval
    assert 0 < chance["keywords:letter_frequency"]["lm_eval_pass_rate"] < 1  # lm-eval counts a random letter


def test_the_character_asked_for_is_counted_not_a_random_letter():
    it = dict(PLANTED, instruction_id_list=PLANTED["instruction_id_list"][:1], kwargs=PLANTED["kwargs"][:1])
    assert verdicts(it, "## only two") == {"strict": [False], "loose": [False]}
    assert verdicts(it, "### three") == {"strict": [True], "loose": [True]}
    assert ifeval.check_response(item("punctuation:no_comma", {}, "No commas."), "fine")["lm_eval_chance"] == []


def test_no_shipped_item_depends_on_chance_so_its_verdicts_are_lm_evals():
    items = [json.loads(line) for line in SAMPLE.read_text().splitlines() if line.strip()]
    chance = [(it["key"], c["id"]) for it in items for c in ifeval.check_response(it, "A reply.")["lm_eval_chance"]]
    assert chance == []
