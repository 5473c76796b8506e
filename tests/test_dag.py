"""The DAG of the card: every stage of the lineage is planned, wired to its parents, and evaluated.

python -m pytest tests/test_dag.py -q
"""

import pytest
from conftest import copy_workflow
from workflow_helpers import dag_edges, planned_jobs


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    """A copy of the workflow with nothing built, so plans do not depend on the checkout's results."""
    return copy_workflow(tmp_path_factory.mktemp("dag"))


def test_soupF2_eval_plans_the_whole_published_lineage(fresh):
    jobs = planned_jobs("soupF2_eval", cwd=fresh)
    assert jobs["train_sft"] == 3  # sftw2, sftw4, sftwF
    assert jobs["soup"] == 2  # soup24, soupF2
    assert jobs["train_standin"] == 1  # the embedded Stage-1 stand-in
    for rule in ("read_battles", "clean_battles", "dedup_battles", "split_holdout", "battle_pairs", "general_mix"):
        assert jobs[rule] == 1, rule
    models = 5  # stage1, sftw2, sftwF, soup24, soupF2: the card's columns
    assert jobs["eval_mmlu"] == 2 * models
    assert jobs["eval_gsm8k"] == 2 * models
    assert jobs["eval_ifeval"] == 3 * models
    assert jobs["eval_degen"] == models
    assert jobs["eval_margin"] == models
    assert jobs["make_eval_table"] == 1


def test_dag_edges_follow_the_card(fresh):
    edges = dag_edges("soupF2_eval", cwd=fresh)
    lineage = {
        ("train_standin", "train_sft:sftw2"),
        ("train_standin", "train_sft:sftw4"),
        ("train_standin", "train_sft:sftwF"),
        ("train_sft:sftw2", "soup:soup24"),
        ("train_sft:sftw4", "soup:soup24"),
        ("train_sft:sftwF", "soup:soupF2"),
        ("soup:soup24", "soup:soupF2"),
        ("winner_rows:winners_x40", "train_sft:sftw2"),
        ("general_mix", "train_sft:sftw4"),
        ("winner_rows:winners", "train_sft:sftwF"),
    }
    assert lineage <= edges, lineage - edges
    for model in ("train_standin", "train_sft:sftw2", "train_sft:sftwF", "soup:soup24", "soup:soupF2"):
        evals = {child for parent, child in edges if parent == model and child.startswith("eval_")}
        assert len(evals) == 9, (model, evals)  # MMLU A/B, GSM8K A/B, IF A/B/C, degen, margin
        assert all((e, "make_eval_table:eval_table") in edges for e in evals)


def test_ablations_plan_every_rejected_run(fresh):
    jobs = planned_jobs("ablations", cwd=fresh)
    assert jobs["train_dpo"] == 4
    assert jobs["train_sft"] == 3 + 6  # the published three + sftw_lr2em6, sftw_lr1em5, sftw4_lr2em6, sftwT, sftwFr6, sftwS
    assert jobs["soup"] == 2 + 5  # soup24, soupF2 + soupT, soupFT3, soupFr, soupG, soup4


def test_one_run_target_plans_only_its_ancestors(fresh):
    jobs = planned_jobs("sftwF", cwd=fresh)
    assert jobs["train_sft"] == 1
    assert "soup" not in jobs and not any(rule.startswith("eval_") for rule in jobs)
