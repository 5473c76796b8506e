"""docs/add-a-benchmark.md done as it says, on a copy of the workflow: one module and its item file
make a benchmark that the plan evaluates, the item loader checks, the table shows and the import
closure of the evaluation holds."""

import json
import re
from pathlib import Path

import pytest
from _eval_fixtures import make_checkpoint
from workflow_helpers import REPO, copy_workflow, python_in, snakemake

DOC = (REPO / "docs" / "add-a-benchmark.md").read_text()
MODULE, ITEMS = re.findall(r"```python\n(.*?)```", DOC, re.S)[0], re.findall(r"```json\n(.*?)```", DOC, re.S)[0]


@pytest.fixture(scope="module")
def workflow(tmp_path_factory) -> Path:
    root = copy_workflow(tmp_path_factory.mktemp("add-a-benchmark") / "workflow")
    (root / "workflow/scripts/lineage/evaluation/benchmarks/yesno.py").write_text(MODULE)
    (root / "resources/sample/eval/yesno.jsonl").write_text(ITEMS)
    return root


def test_the_module_joins_the_registry_the_table_and_the_model_index(workflow):
    code = """
import json
from lineage.evaluation.benchmarks import BENCHMARKS, PART_NAMES
from lineage.evaluation.card import eval_results
from lineage.evaluation.table import ROWS
entry = eval_results([{"benchmark": "yesno", "part": "A", "n": 4, "score": 0.5}])[0]
print(json.dumps({"benchmarks": list(BENCHMARKS), "parts": PART_NAMES, "rows": [r.label for r in ROWS],
                  "index": [entry.dataset_name, entry.metric_type]}))
"""
    seen = json.loads(python_in(workflow, "-c", code).stdout)
    assert seen["benchmarks"] == ["mmlu", "gsm8k", "ifeval", "degen", "margin", "yesno"]
    assert seen["parts"][-1] == "yesno_A" and seen["rows"][-1] == "Yes/no A"
    assert seen["index"] == ["Yes/no (sample items)", "accuracy"]  # no item file given: the module's own sample


def test_the_plan_evaluates_it_from_its_sample_and_its_module_is_in_the_evaluations_code(workflow):
    shell = snakemake("-n", "-p", "soupF2_eval", cwd=workflow).stdout
    evaluations = [line for line in shell.splitlines() if "eval_model.py" in line]
    assert evaluations and all("yesno=resources/sample/eval/yesno.jsonl" in line for line in evaluations)
    assert all(re.search(r"--sizes \S*yesno=4", line) for line in evaluations)
    closure = python_in(
        workflow,
        "-c",
        "from lineage.workflow.codedeps import import_closure; "
        "print(import_closure('workflow/scripts/eval_model.py', 'workflow/scripts'))",
    ).stdout
    assert "workflow/scripts/lineage/evaluation/benchmarks/yesno.py" in closure


def test_eval_model_scores_it_and_checks_its_items(workflow, tmp_path):
    checkpoint = make_checkpoint(tmp_path / "ckpt", run="pico")
    items = workflow / "resources/sample/eval/yesno.jsonl"
    args = [
        "workflow/scripts/eval_model.py",
        "--model",
        str(checkpoint),
        "--items",
        f"yesno={items}",
        "--sizes",
        "yesno=4",
        "--out-dir",
        str(tmp_path / "out"),
    ]
    python_in(workflow, *args)
    result = json.loads((tmp_path / "out" / "yesno_A.json").read_text())
    records = [json.loads(line) for line in (tmp_path / "out" / "yesno_A.records.jsonl").read_text().splitlines()]
    assert result["n"] == len(records) == 4 and sorted(result["item_ids"]) == ["y1", "y2", "y3", "y4"]
    assert result["score"] == sum(r["correct"] for r in records) / 4
    assert result["tokens_counted"].startswith("scored tokens")

    items.write_text(ITEMS.replace('"answer": "no"}', '"answer": "maybe"}', 1))
    refused = python_in(workflow, *args, check=False)
    assert refused.returncode != 0
    assert f"{items}:2: item 'y2' field 'answer' must be yes or no, got 'maybe'" in refused.stderr
