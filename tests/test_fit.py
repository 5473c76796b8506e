"""A GPU-trained run that does not fit its GPUs is a config error before any job (lineage/workflow/fit.py), and
the shipped full scale plans every run as fitting an H100 80GB (the reserve for the CUDA context and NCCL in)."""

from __future__ import annotations

import copy

import pytest
import yaml
from test_cluster import full_scale
from workflow_helpers import REPO, copy_workflow, snakemake, write_checkpoint

from lineage.errors import EXIT_CODES
from lineage.modeling import CONFIG_CLASSES, SHAPES
from lineage.workflow.runs import ConfigError, build_lineage


def card_stage1(tmp_path):
    """A Stage-1 directory whose config.json is the card's Base shape (the planner's), with a counted shard."""
    directory = write_checkpoint(tmp_path / "stage1", {"w": (1000, 1000)})
    CONFIG_CLASSES["nemotron_h"](**SHAPES[("nemotron_h", "30b_a3b")], vocab_size=131072).to_json_file(
        directory / "config.json"
    )
    return directory


def card_scale(tmp_path) -> dict:
    config = full_scale(tmp_path)
    config["scales"]["full"]["stage1"]["path"] = str(card_stage1(tmp_path))
    return config


def test_the_shipped_full_scale_plans_every_run_as_fitting_an_h100(tmp_path):
    lineage = build_lineage(card_scale(tmp_path), base_dir=REPO)
    assert lineage.runs["sftwFr6"].world_size == 12  # two nodes of 6: one node's 6 GPUs do not hold its state


def test_a_run_that_does_not_fit_is_refused_naming_it_and_what_would_fit(tmp_path):
    config = card_scale(tmp_path)
    config["runs"]["sftw2"]["overrides"] = {"full": {"processes": 2, "expert_parallel": 1}}
    with pytest.raises(ConfigError, match=r"runs\.sftw2: plans \d+\.\d GiB a GPU .* more nodes"):
        build_lineage(config, base_dir=REPO)
    bigger = copy.deepcopy(config)
    bigger["scales"]["full"]["train"]["gpu_gib"] = 400.0  # a GPU that holds it: no refusal
    build_lineage(bigger, base_dir=REPO)


def test_the_dry_run_refuses_it_in_one_line_before_any_job(tmp_path):
    workflow = copy_workflow(tmp_path / "workflow")
    config = card_scale(tmp_path)
    config["runs"]["sftw2"]["overrides"] = {"full": {"processes": 2, "expert_parallel": 1}}
    (workflow / "config.yaml").write_text(yaml.safe_dump(config))
    proc = snakemake("-n", "soupF2_eval", cwd=workflow, check=False)
    assert proc.returncode == EXIT_CODES["ConfigError"], proc.stdout + proc.stderr
    assert proc.stderr.strip().startswith("config error: runs.sftw2: plans "), proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "Job stats" not in proc.stdout


def test_the_trained_model_is_the_built_shape_or_the_given_checkpoint_s_config(tmp_path):
    """One answer for the fit check, the expert-parallel check and the planner (lineage/workflow/trained_model.py)."""
    from lineage.workflow.trained_model import trained_model

    shipped = yaml.safe_load((REPO / "config.yaml").read_text())["scales"]
    gpu = trained_model(shipped["gpu"], REPO)
    assert (gpu.family, gpu.size, gpu.vocab, gpu.built) == ("nemotron_h", "card_pattern_small", 131072, True)
    assert gpu.config().vocab_size == 131072 and gpu.config_values()["n_routed_experts"] == 32
    full = copy.deepcopy(card_scale(tmp_path)["scales"]["full"])
    given = trained_model(full, tmp_path)
    assert not given.built and given.config_values()["vocab_size"] == 131072
    assert given.config().hidden_size == SHAPES[("nemotron_h", "30b_a3b")]["hidden_size"]
    full["stage1"]["path"] = str(tmp_path / "absent")
    assert trained_model(full, tmp_path).config() is None  # nothing on disk: nothing to plan from
