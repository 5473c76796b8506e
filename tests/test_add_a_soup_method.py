"""docs/add-a-soup-method.md done as it says, on a copy of the workflow: a function registered in
METHODS is a method the config accepts and soup.py streams, and an unknown one is refused by name."""

import json
import re
from pathlib import Path

import pytest
import torch
from test_soup import build, companions, stage1, tensors  # noqa: F401 (fixtures)
from workflow_helpers import REPO, copy_workflow, python_in

DOC = (REPO / "docs" / "add-a-soup-method.md").read_text()
METHOD = re.findall(r"```python\n(.*?)```", DOC, re.S)[0]
RUN = re.findall(r"```yaml\n(.*?)```", DOC, re.S)[0]


@pytest.fixture(scope="module")
def workflow(tmp_path_factory) -> Path:
    root = copy_workflow(tmp_path_factory.mktemp("add-a-soup-method") / "workflow")
    methods = root / "workflow/scripts/lineage/soup/methods.py"
    methods.write_text(methods.read_text() + "\n\n" + METHOD)
    return root


CHECK_CONFIG = """
import sys, yaml
from lineage.canonical import numbers_by_schema
from lineage.workflow.runs import ConfigError, build_lineage
config = yaml.safe_load(open("config.yaml"))
config["runs"] |= yaml.safe_load(sys.argv[1])
schema = yaml.safe_load(open("workflow/schemas/config.schema.yaml"))
try:
    print(build_lineage(numbers_by_schema(config, schema), base_dir=".").runs["soup24m"].recipe.method)
except ConfigError as err:
    print(f"refused: {err}")
"""


def test_the_config_accepts_the_registered_method_and_names_the_known_ones_otherwise(workflow):
    assert python_in(workflow, "-c", CHECK_CONFIG, RUN).stdout.strip() == "median"
    refused = python_in(workflow, "-c", CHECK_CONFIG, RUN.replace("method: median", "method: mode")).stdout
    assert refused.strip() == (
        "refused: runs.soup24m.method: 'mode' is not a soup method; known "
        "(lineage/soup/methods.py METHODS): linear, median"
    )


def test_soup_py_streams_the_method_over_the_parents(workflow, tmp_path, stage1, companions):  # noqa: F811
    parents = [build(tmp_path / f"p{seed}", seed=seed, companions=companions, parent=stage1) for seed in (1, 2, 3)]
    out = tmp_path / "soup"
    python_in(
        workflow,
        "workflow/scripts/soup.py",
        "--run",
        "soup_median",
        "--method",
        "median",
        "--out",
        str(out),
        "--no-progress",
        *[arg for p in parents for arg in ("--parent", f"{p.name}={p}")],
    )
    got, inputs = tensors(out), [tensors(p) for p in parents]
    for name, tensor in got.items():
        expected = torch.stack([t[name].float() for t in inputs]).median(dim=0).values.to(tensor.dtype)
        assert torch.equal(tensor, expected), name
    assert json.loads((out / "lineage.json").read_text())["recipe"]["method"] == "median"
