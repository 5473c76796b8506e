"""The DAG of the card: every stage of the lineage is planned, wired to its parents, and evaluated.

python -m pytest tests/test_dag.py -q
"""

import json

import pytest
from workflow_helpers import copy_workflow, dag_edges, plan, planned_jobs, write_checkpoint


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    """A copy of the workflow with nothing built, so plans do not depend on the checkout's results."""
    return copy_workflow(tmp_path_factory.mktemp("dag"))


def test_soupF2_eval_plans_the_whole_published_lineage(fresh):
    jobs = planned_jobs("soupF2_eval", cwd=fresh)
    # Every run is a rule of its own: the tiny Base, the chain, the card's Stage-2 runs.
    for run in ("base", "stage1_sft", "dpo1", "dpo2", "dpo3", "dpo4", "sftw2", "sftw4", "sftwF", "soup24", "soupF2"):
        assert jobs[run] == 1, run
    assert jobs["verifier_pairs"] == 3
    for rule in ("read_battles", "clean_battles", "dedup_battles", "split_holdout", "battle_pairs", "general_mix"):
        assert jobs[rule] == 1, rule
    models = 4 + 5  # the chain's stage1_sft, dpo1-3; the card's stage1 (= dpo4), sftw2, sftwF, soup24, soupF2
    references = 2  # base (stage1_sft's parent) and sftw4 (soup24's): the table compares columns with them
    assert jobs["evaluate"] == models + references  # embedded: all nine benchmark parts of a model in one job
    assert jobs["make_eval_table"] == 1
    assert not {"sftwT", "soupG", "dpo_lr1em6"} & set(jobs)  # ablations are not part of the published table


@pytest.mark.parametrize("group_by", ["run", "part"])
def test_full_scale_evaluates_each_model_in_one_job_or_each_part_in_its_own(fresh, tmp_path, group_by):
    """Shipped: one GPU job per model loads it once for all its parts; `group_by: part` runs the parts
    as parallel jobs instead."""
    stage1 = write_checkpoint(tmp_path / "stage1", {"w": (8, 8)})  # mem_mb: auto counts its parameters
    (stage1 / "config.json").write_text("{}")
    overlay = tmp_path / "full.yaml"
    sample = fresh / "resources/sample"
    items = {"mmlu": "mmlu", "gsm8k": "gsm8k", "ifeval": "ifeval", "degen": "gen_prompts"}
    overlay.write_text(
        f"scale: full\nscales:\n  full:\n    stage1:\n      path: {stage1}\n"
        "    train:\n      expert_parallel: 1\n"  # this stand-in Stage-1 has no experts to split
        f"    export:\n      path: {sample / 'battles.jsonl'}\n    eval:\n      items:\n"
        + "".join(f"        {bench}: {sample / 'eval' / name}.jsonl\n" for bench, name in items.items())
        + "      sizes: {mmlu: [8, 8], gsm8k: [4, 4], ifeval: [4, 4, 4], degen: [4]}\n"  # what the samples hold
        + f"      group_by: {group_by}\n"
        + "runs:\n  sftwFr6:\n    overrides:\n      full:\n        expert_parallel: 1\n"
    )
    jobs = planned_jobs("soupF2_eval", "--configfile", str(overlay), cwd=fresh)
    models, parts = (
        5 + 1,
        2 + 2 + 3 + 1 + 1,
    )  # the card's columns and sftw4; MMLU A/B, GSM8K A/B, IF A/B/C, degen, margin
    assert jobs["evaluate"] == (models if group_by == "run" else parts * models)


def test_dag_edges_follow_the_card(fresh):
    edges = dag_edges("soupF2_eval", cwd=fresh)
    lineage = {
        ("base", "stage1_sft"),
        ("stage1_sft", "dpo1"),
        ("dpo1", "verifier_pairs:verifier_dpo2"),
        ("dpo1", "dpo2"),
        ("verifier_pairs:verifier_dpo2", "dpo2"),
        ("dpo2", "verifier_pairs:verifier_dpo3"),
        ("verifier_pairs:verifier_dpo3", "dpo3"),
        ("dpo3", "verifier_pairs:verifier_dpo4"),
        ("verifier_pairs:verifier_dpo4", "dpo4"),
        ("dpo4", "sftw2"),
        ("dpo4", "sftw4"),
        ("dpo4", "sftwF"),
        ("sftw2", "soup24"),
        ("sftw4", "soup24"),
        ("sftwF", "soupF2"),
        ("soup24", "soupF2"),
        ("winner_rows:winners_x40", "sftw2"),
        ("general_mix", "sftw4"),
        ("winner_rows:winners", "sftwF"),
    }
    assert lineage <= edges, lineage - edges
    for model in ("stage1_sft", "dpo1", "dpo2", "dpo3", "dpo4", "sftw2", "sftwF", "soup24", "soupF2"):
        evals = {child for parent, child in edges if parent == model and child.startswith("evaluate")}
        assert len(evals) == 1, (model, evals)  # one job: MMLU A/B, GSM8K A/B, IF A/B/C, degen, margin
        assert all((e, "make_eval_table:eval_table") in edges for e in evals)


def test_ablations_plan_every_rejected_run(fresh):
    jobs = planned_jobs("ablations", cwd=fresh)
    rejected = (
        "dpo_lr5em7",
        "dpo_lr1em6",
        "dpo_lr2em6",
        "dpo_sftw2",
        "sftw_lr2em6",
        "sftw_lr1em5",
        "sftw4_lr2em6",
        "sftwT",
        "soupT",
        "soupFT3",
        "sftwFr6",
        "soupFr",
        "soupG",
        "soup4",
        "sftwS",
    )
    published = ("stage1_sft", "dpo1", "dpo2", "dpo3", "dpo4", "sftw2", "sftw4", "sftwF", "soup24", "soupF2")
    assert all(jobs.get(run) == 1 for run in rejected + published), jobs
    # the card's nine columns, every rejected run, and base and sftw4 (parents the columns are compared with)
    assert jobs["evaluate"] == 9 + len(rejected) + 2


def test_one_run_target_plans_only_its_ancestors(fresh):
    jobs = planned_jobs("sftwF", cwd=fresh)
    assert {"stage1_sft", "dpo4", "sftwF"} <= set(jobs)  # the chain, then sftwF
    assert not {"sftw2", "sftw4", "soup24", "soupF2", "evaluate"} & set(jobs), jobs


def test_an_external_stage1_plans_no_chain_run(fresh, tmp_path):
    """`stage1.from: external` takes the Stage-1 checkpoint as given: nothing of the chain is built."""
    stage1 = tmp_path / "stage1"
    stage1.mkdir()
    overlay = tmp_path / "external.yaml"
    overlay.write_text(f"scales:\n  embedded:\n    stage1:\n      from: external\n      path: {stage1}\n")
    jobs = planned_jobs("soupF2_eval", "--configfile", str(overlay), cwd=fresh)
    assert all(jobs.get(run) == 1 for run in ("sftw2", "sftw4", "sftwF", "soup24", "soupF2")), jobs
    assert not {"base", "stage1_sft", "dpo1", "dpo4", "verifier_pairs", "build_tokenizer"} & set(jobs), jobs
    assert jobs["evaluate"] == 5 + 1  # the card's columns, and sftw4 (soup24's parent, compared with it)


def test_a_chain_cut_short_plans_only_the_runs_up_to_stage1(fresh, tmp_path):
    """`stage1.from: dpo1` builds base -> stage1_sft -> dpo1 and nothing of the later rounds, audit included."""
    overlay = tmp_path / "dpo1.yaml"
    overlay.write_text("scales:\n  embedded:\n    stage1:\n      from: dpo1\n")
    audit = planned_jobs("audit", "--configfile", str(overlay), cwd=fresh)
    assert {"base", "stage1_sft", "dpo1", "sftw2", "sftw4", "sftwF"} <= set(audit), audit
    everything = planned_jobs("all", "--configfile", str(overlay), cwd=fresh)
    for jobs in (audit, everything):
        assert not {"verifier_pairs", "verifier_audit", "dpo2", "dpo3", "dpo4"} & set(jobs), jobs


def test_an_eval_item_file_is_read_by_the_evaluations_alone(fresh, tmp_path):
    """GSM8K's items as published (no ids) in another file: only evaluation jobs take it as an input. The verifier
    rounds take no item file (their prompts' overlap with the items is refused at start-up, tests/reliability/
    test_config_validation.py), so pointing a benchmark at another file reruns no verifier round and no training."""
    shipped = fresh / "resources/sample/eval/gsm8k.jsonl"
    published = tmp_path / "gsm8k_published.jsonl"
    rows = [json.loads(line) for line in shipped.read_text().splitlines()]
    published.write_text("".join(json.dumps({k: v for k, v in row.items() if k != "id"}) + "\n" for row in rows))
    overlay = tmp_path / "published.yaml"
    overlay.write_text(f"scales:\n  embedded:\n    eval:\n      items:\n        gsm8k: {published}\n")
    jobs = plan("soupF2_eval", "--configfile", str(overlay), cwd=fresh)
    readers = {label for label, job in jobs.items() if any(published.name in path for path in job.inputs)}
    assert readers and {label.split(":")[0] for label in readers} == {"evaluate"}, readers
    rounds = [job for job in jobs.values() if job.rule == "verifier_pairs"]
    assert len(rounds) == 3
    assert not [path for job in rounds for path in job.inputs if "/eval/" in path or published.name in path]


def test_the_default_target_is_all(fresh):
    """Snakemake takes a default target only from the main Snakefile: `all` is defined there."""
    assert planned_jobs(cwd=fresh) == planned_jobs("all", cwd=fresh)
    assert planned_jobs(cwd=fresh)["all"] == 1
