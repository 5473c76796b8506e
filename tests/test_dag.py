"""The DAG of the card: every stage of the lineage is planned, wired to its parents, and evaluated.

python -m pytest tests/test_dag.py -q
"""

import pytest
from workflow_helpers import copy_workflow, dag_edges, planned_jobs


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    """A copy of the workflow with nothing built, so plans do not depend on the checkout's results."""
    return copy_workflow(tmp_path_factory.mktemp("dag"))


def test_soupF2_eval_plans_the_whole_published_lineage(fresh):
    jobs = planned_jobs("soupF2_eval", cwd=fresh)
    assert jobs["init_model"] == 1  # the tiny Base
    assert jobs["train_sft"] == 1 + 3  # stage1_sft; sftw2, sftw4, sftwF
    assert jobs["train_dpo"] == 4  # dpo1 on the preference mix, dpo2-4 on verifier pairs
    assert jobs["verifier_pairs"] == 3
    assert jobs["soup"] == 2  # soup24, soupF2
    for rule in ("read_battles", "clean_battles", "dedup_battles", "split_holdout", "battle_pairs", "general_mix"):
        assert jobs[rule] == 1, rule
    models = 4 + 5  # the chain's stage1_sft, dpo1-3; the card's stage1 (= dpo4), sftw2, sftwF, soup24, soupF2
    assert jobs["eval_run"] == models  # embedded: all nine benchmark parts of a model in one job
    assert jobs["make_eval_table"] == 1


def test_full_scale_evaluates_each_benchmark_part_as_its_own_job(fresh, tmp_path):
    """On a cluster every part is a GPU job of its own, so the parts run in parallel."""
    stage1 = tmp_path / "stage1"
    stage1.mkdir()
    (stage1 / "config.json").write_text("{}")
    overlay = tmp_path / "full.yaml"
    sample = fresh / "resources/sample"
    items = {"mmlu": "mmlu", "gsm8k": "gsm8k", "ifeval": "ifeval", "degen": "gen_prompts"}
    overlay.write_text(
        f"scale: full\nscales:\n  full:\n    stage1:\n      path: {stage1}\n"
        f"    export:\n      path: {sample / 'battles.jsonl'}\n    eval:\n      items:\n"
        + "".join(f"        {bench}: {sample / 'eval' / name}.jsonl\n" for bench, name in items.items())
    )
    jobs = planned_jobs("soupF2_eval", "--configfile", str(overlay), cwd=fresh)
    models = 5
    assert "eval_run" not in jobs
    assert jobs["eval_mmlu"] == 2 * models
    assert jobs["eval_gsm8k"] == 2 * models
    assert jobs["eval_ifeval"] == 3 * models
    assert jobs["eval_degen"] == models
    assert jobs["eval_margin"] == models


def test_dag_edges_follow_the_card(fresh):
    edges = dag_edges("soupF2_eval", cwd=fresh)
    lineage = {
        ("init_model", "train_sft:stage1_sft"),
        ("train_sft:stage1_sft", "train_dpo:dpo1"),
        ("train_dpo:dpo1", "verifier_pairs:verifier_dpo2"),
        ("train_dpo:dpo1", "train_dpo:dpo2"),
        ("verifier_pairs:verifier_dpo2", "train_dpo:dpo2"),
        ("train_dpo:dpo2", "verifier_pairs:verifier_dpo3"),
        ("verifier_pairs:verifier_dpo3", "train_dpo:dpo3"),
        ("train_dpo:dpo3", "verifier_pairs:verifier_dpo4"),
        ("verifier_pairs:verifier_dpo4", "train_dpo:dpo4"),
        ("train_dpo:dpo4", "train_sft:sftw2"),
        ("train_dpo:dpo4", "train_sft:sftw4"),
        ("train_dpo:dpo4", "train_sft:sftwF"),
        ("train_sft:sftw2", "soup:soup24"),
        ("train_sft:sftw4", "soup:soup24"),
        ("train_sft:sftwF", "soup:soupF2"),
        ("soup:soup24", "soup:soupF2"),
        ("winner_rows:winners_x40", "train_sft:sftw2"),
        ("general_mix", "train_sft:sftw4"),
        ("winner_rows:winners", "train_sft:sftwF"),
    }
    assert lineage <= edges, lineage - edges
    for model in ("train_sft:stage1_sft", "train_dpo:dpo1", "train_dpo:dpo2", "train_dpo:dpo3", "train_dpo:dpo4",
                  "train_sft:sftw2", "train_sft:sftwF", "soup:soup24", "soup:soupF2"):
        evals = {child for parent, child in edges if parent == model and child.startswith("eval_")}
        assert len(evals) == 1, (model, evals)  # one job: MMLU A/B, GSM8K A/B, IF A/B/C, degen, margin
        assert all((e, "make_eval_table:eval_table") in edges for e in evals)


def test_ablations_plan_every_rejected_run(fresh):
    jobs = planned_jobs("ablations", cwd=fresh)
    assert jobs["train_dpo"] == 4 + 4  # the chain's dpo1-4 + the four battle-pair DPO doses
    assert jobs["train_sft"] == 1 + 3 + 6  # stage1_sft, the published three + sftw_lr2em6, sftw_lr1em5,
    # sftw4_lr2em6, sftwT, sftwFr6, sftwS
    assert jobs["soup"] == 2 + 5  # soup24, soupF2 + soupT, soupFT3, soupFr, soupG, soup4


def test_one_run_target_plans_only_its_ancestors(fresh):
    jobs = planned_jobs("sftwF", cwd=fresh)
    assert jobs["train_sft"] == 1 + 1  # stage1_sft of the chain, then sftwF
    assert "soup" not in jobs and not any(rule.startswith("eval_") for rule in jobs)


def test_an_external_stage1_plans_no_chain_run(fresh, tmp_path):
    """`stage1.from: external` takes the Stage-1 checkpoint as given: nothing of the chain is built."""
    stage1 = tmp_path / "stage1"
    stage1.mkdir()
    overlay = tmp_path / "external.yaml"
    overlay.write_text(f"scales:\n  embedded:\n    stage1:\n      from: external\n      path: {stage1}\n")
    jobs = planned_jobs("soupF2_eval", "--configfile", str(overlay), cwd=fresh)
    assert jobs["train_sft"] == 3 and jobs["soup"] == 2
    assert not {"train_dpo", "verifier_pairs", "init_model"} & set(jobs), jobs
    assert jobs["eval_run"] == 5  # the card's columns only


def test_a_chain_cut_short_plans_only_the_runs_up_to_stage1(fresh, tmp_path):
    """`stage1.from: dpo1` builds base -> stage1_sft -> dpo1 and nothing of the later rounds, audit included."""
    overlay = tmp_path / "dpo1.yaml"
    overlay.write_text("scales:\n  embedded:\n    stage1:\n      from: dpo1\n")
    audit = planned_jobs("audit", "--configfile", str(overlay), cwd=fresh)
    assert audit["train_dpo"] == 1 and audit["train_sft"] == 4, audit  # dpo1; stage1_sft, sftw2, sftw4, sftwF
    everything = planned_jobs("all", "--configfile", str(overlay), cwd=fresh)
    for jobs in (audit, everything):
        assert not {"verifier_pairs", "verifier_audit"} & set(jobs), jobs
