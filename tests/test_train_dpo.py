"""train_dpo.py: on a fixed set of pairs the loss falls and the margins grow, while the
reference (the parent) stays frozen: its log-probs of the same pairs never change."""

from __future__ import annotations

import pytest
from _training_fixtures import build_base, metrics, run_in_process, train_args

from lineage.checkpoint import init_root, verify_checkpoint
from lineage.io import sha256_file


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """8 pairs, global batch 8: every step sees all pairs, so step metrics are comparable."""
    paths = build_base(tmp_path_factory.mktemp("dpo"))
    out = paths["base"].parent / "dpo"
    base_lineage = sha256_file(paths["base"] / "lineage.json")
    run_in_process(
        "train_dpo",
        train_args(
            paths["base"], paths["pairs"], out, steps=6, lr=1e-2, beta=0.5, global_batch_rows=8, micro_batch_rows=4
        ),
    )
    return {**paths, "out": out, "metrics": metrics(out.parent / "dpo.metrics.jsonl"), "base_lineage": base_lineage}


def test_loss_falls_and_margins_grow(run):
    first, last = run["metrics"][0], run["metrics"][-1]
    assert first["margin"] == pytest.approx(0.0, abs=1e-6)  # policy == reference before the first update
    assert first["loss"] == pytest.approx(0.6931, abs=1e-3)  # log 2
    assert last["loss"] < first["loss"] - 0.05
    assert last["margin"] > 0.1 and last["accuracy"] >= 0.75


def test_reference_is_frozen(run):
    chosen = [m["ref_logp_chosen"] for m in run["metrics"]]
    rejected = [m["ref_logp_rejected"] for m in run["metrics"]]
    assert max(chosen) - min(chosen) < 1e-4 * abs(chosen[0])
    assert max(rejected) - min(rejected) < 1e-4 * abs(rejected[0])
    assert run["metrics"][-1]["reward_chosen"] != 0.0  # while the policy did move
    verify_checkpoint(run["base"])  # the parent's files are untouched
    assert sha256_file(run["base"] / "lineage.json") == run["base_lineage"]


def test_lineage_is_a_dpo_child_of_the_parent(run):
    record = verify_checkpoint(run["out"])
    assert record["kind"] == "dpo" and record["recipe"]["beta"] == 0.5
    assert record["root"] == init_root(verify_checkpoint(run["base"]))
    assert record["pairs_trained"] == 6 * 8 and record["data"][0]["rows"] == 8
