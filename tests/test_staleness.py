"""Exactly the stale jobs rerun: each row of the table in docs/staleness.md against a built lineage.

The embedded lineage is built once (`soupF2_eval`, in the session's scratch copy); then every
test makes one edit, reads the plan (`snakemake -n` and `--dag`), and undoes the edit, file
contents and modification times alike. The expected plan is derived independently of the
workflow's rules: the jobs the edit touches (by the scripts whose imports reach the edited
module, or by the run whose setting changed) and every job downstream of them in the DAG.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from workflow_helpers import job_graph, parse_dot, plan, planned_jobs, snakemake

from lineage.workflow.codedeps import import_closure

pytestmark = pytest.mark.slow

TARGET = "soupF2_eval"
# Targets and pointers without an output file of their own: Snakemake "runs" them whenever asked.
AGGREGATES = {"all", "audit", "data", "eval_table", "ablations", "report_parts", "stage1"}
SCRIPT_OF_RULE = {
    "read_battles": "read_battles.py",
    "clean_battles": "clean_battles.py",
    "dedup_battles": "dedup_battles.py",
    "split_holdout": "split_holdout.py",
    "winner_rows": "winner_rows.py",
    "battle_pairs": "battle_pairs.py",
    "general_mix": "sample_general_mix.py",
    "data_audit": "data_audit.py",
    "build_tokenizer": "build_tokenizer.py",
    "verifier_pairs": "verifier_pairs.py",
    "verifier_audit": "verifier_audit.py",
    "evaluate": "eval_model.py",
    "make_eval_table": "make_eval_table.py",
    "eval_column": "make_eval_table.py",
    "publish": "publish.py",
    "plot_loss_curves": "plot_loss_curves.py",
}
REFERENCES = {f"dpo{n}_reference" for n in range(1, 5)}  # the chain's reference log-probs, one job per run
SCRIPT_OF_KIND = {"base": "init_model.py", "sft": "train_sft.py", "dpo": "train_dpo.py", "soup": "soup.py"}
# Every model the table shows or compares (base, sftw4: parents of its columns), one evaluation job each (embedded).
EVALUATIONS = {
    f"evaluate:{run}"
    for run in ("base", "stage1_sft", "dpo1", "dpo2", "dpo3", "stage1", "sftw2", "sftw4", "sftwF", "soup24", "soupF2")
}


@pytest.fixture(scope="module")
def built(embedded_workflow) -> Path:
    snakemake("--cores", "2", TARGET, cwd=embedded_workflow, timeout=2400)
    assert planned_jobs(TARGET, cwd=embedded_workflow) == {}
    return embedded_workflow


@pytest.fixture(scope="module")
def dag(built) -> set[tuple[str, str]]:
    """The built lineage's job graph: (producer, consumer) for every job of TARGET."""
    return job_graph(TARGET, cwd=built)


def aggregate(job: str) -> bool:
    rule = job.split(":")[0]
    return rule in AGGREGATES or rule.endswith("_eval")


def stale(*args: str, cwd: Path) -> set[str]:
    """The jobs `snakemake -n` plans, by rule and wildcards (targets without outputs left out)."""
    return {job for job in plan(*args, cwd=cwd) if not aggregate(job)}


def downstream(seeds: set[str], edges: set[tuple[str, str]]) -> set[str]:
    found, frontier = set(seeds), list(seeds)
    while frontier:
        node = frontier.pop()
        for parent, child in edges:
            if parent == node and child not in found:
                found.add(child)
                frontier.append(child)
    return {job for job in found if not aggregate(job)}


def script_of(job: str, runs: dict) -> str:
    rule = job.split(":")[0]
    if rule.endswith("_reference") and runs.get(rule.removesuffix("_reference"), {}).get("kind") == "dpo":
        return "reference_logprobs.py"
    return SCRIPT_OF_RULE.get(rule) or SCRIPT_OF_KIND[runs[rule]["kind"]]


@contextlib.contextmanager
def edited(path: Path, change):
    """`path` changed by `change(text)` inside the block; its text and mtime restored after it."""
    text, stat = path.read_text(), path.stat()
    try:
        path.write_text(change(text))
        yield path
    finally:
        path.write_text(text)
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def why_rerun(built: Path, *args: str, check: bool = True) -> str:
    """workflow/scripts/why_rerun.py's account of the stale jobs."""
    env = {**os.environ, "PYTHONPATH": str(built / "workflow/scripts")}
    proc = subprocess.run(
        [sys.executable, "workflow/scripts/why_rerun.py", *args], cwd=built, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0 or not check, proc.stdout + proc.stderr
    return proc.stdout if check else f"exit {proc.returncode}\n{proc.stdout}"


def overlay(tmp_path: Path, text: str) -> str:
    path = tmp_path / "overlay.yaml"
    path.write_text(text)
    return str(path)


# --------------------------------------------------------------------------------------------
# Meaning, not spelling


def reordered(value):
    """Every mapping's keys in reverse order, recursively."""
    if isinstance(value, dict):
        return {key: reordered(value[key]) for key in reversed(list(value))}
    if isinstance(value, list):
        return [reordered(v) for v in value]
    return value


RESPELLED = {  # the same numbers, spelled otherwise
    "lr: 5.0e-6": "lr: 5e-6",
    "lr: 1.0e-5": "lr: 0.00001",
    "betas: [0.9, 0.95]": "betas: [9.0e-1, 0.950]",
    "grad_clip: 1.0": "grad_clip: 1",
    "lr_scale: 100": "lr_scale: 1.0e+2",
    "eps: 1.0e-8": "eps: 1e-8",
}


@pytest.mark.parametrize("edit", ["key order everywhere", "comments", "number spelling", "blank lines doubled"])
def test_edits_that_keep_the_meaning_plan_nothing(built, edit):
    def change(text: str) -> str:
        if edit == "key order everywhere":  # also drops every comment
            return yaml.safe_dump(reordered(yaml.safe_load(text)), sort_keys=False)
        if edit == "blank lines doubled":
            assert "\n\n" in text
            return text.replace("\n\n", "\n\n\n")
        if edit == "comments":
            return "# reviewed\n" + text.replace("\n  sftwF:\n", "\n  sftwF: # the card's second pass\n")
        for old, new in RESPELLED.items():
            assert old in text, old
            text = text.replace(old, new)
        return text

    with edited(built / "config.yaml", change):
        assert planned_jobs(TARGET, cwd=built) == {}


def test_the_verifier_keys_swapped_plan_nothing(built):
    """The case that once replanned 21 jobs: two keys under scales.embedded.verifier swapped."""

    def swap(text: str) -> str:
        first, second = "      samples: 8 # not given by the card\n", "      temperature: 1.0 # not given by the card\n"
        assert first + second in text
        return text.replace(first + second, second + first, 1)

    with edited(built / "config.yaml", swap):
        assert planned_jobs(TARGET, cwd=built) == {}


# --------------------------------------------------------------------------------------------
# Code by import


@pytest.mark.parametrize(
    "module, must_run, must_not_run",
    [
        ("lineage/evaluation/table.py", {"make_eval_table:eval_table", "eval_column:soupF2"}, {"evaluate:soupF2"}),
        (
            "lineage/data/citations.py",
            {"clean_battles", "dedup_battles", "sftwF", "soupF2", "evaluate:soupF2"},
            {"read_battles", "build_tokenizer", "base", "stage1_sft", "dpo4", "verifier_pairs:verifier_dpo2"},
        ),
        (
            "lineage/soup/methods.py",
            {"soup24", "soupF2", "evaluate:soup24", "make_eval_table:eval_table"},
            {"sftwF", "sftw2", "evaluate:sftwF", "general_mix"},
        ),
        (
            "lineage/training/loop.py",
            {"stage1_sft", "dpo1", "dpo4", "sftwF", "soupF2", "verifier_pairs:verifier_dpo3"},
            {"base", "build_tokenizer", "clean_battles", "winner_rows:winners", "general_mix"},
        ),
        (  # loaded by the registry, not by an import statement: tracked through its folder's listing
            "lineage/families/nemotron_h.py",
            {"base", "stage1_sft", "sftw2", "soupF2", "evaluate:soupF2"},
            {"read_battles", "build_tokenizer", "clean_battles", "general_mix"},
        ),
    ],
)
def test_a_module_edit_reruns_exactly_its_importers_and_their_descendants(built, dag, module, must_run, must_not_run):
    runs = yaml.safe_load((built / "config.yaml").read_text())["runs"]
    scripts = built / "workflow/scripts"
    jobs = {job for edge in dag for job in edge if not aggregate(job)}
    seeds = {job for job in jobs if str(scripts / module) in import_closure(scripts / script_of(job, runs), scripts)}
    assert seeds, f"no job imports {module}"
    with edited(scripts / module, lambda text: text + "\n_EDITED = True\n"):  # a statement: new behaviour
        planned = stale(TARGET, cwd=built)
    assert planned == downstream(seeds, dag)
    assert must_run <= planned and not must_not_run & planned, planned


def test_a_function_body_changed_in_io_reruns_every_job_that_imports_it(built, dag):
    """lineage/io.py is in every script's import closure: a changed body is new behaviour for all."""
    runs = yaml.safe_load((built / "config.yaml").read_text())["runs"]
    scripts = built / "workflow/scripts"
    jobs = {job for edge in dag for job in edge if not aggregate(job)}
    seeds = {
        job for job in jobs if str(scripts / "lineage/io.py") in import_closure(scripts / script_of(job, runs), scripts)
    }
    assert len(seeds) == len(jobs), sorted(jobs - seeds)

    def new_body(text: str) -> str:
        old = "    return [obj for _, obj in read_jsonl(path)]\n"  # load_jsonl's body
        assert old in text
        return text.replace(old, "    rows = [obj for _, obj in read_jsonl(path)]\n    return rows\n")

    with edited(scripts / "lineage/io.py", new_body):
        assert stale(TARGET, cwd=built) == downstream(seeds, dag)
        why = why_rerun(built)
    assert why.count("code: the syntax of lineage/io.py changed") == len(seeds), why  # each job, by name


def test_a_refactor_proven_identical_is_taken_by_touch_without_rebuilding(built, dag):
    """docs/staleness.md "Taking a refactor": a change to every job's code (a body in lineage/io.py, as a moved
    module is) plans the whole lineage; where the outputs are proven byte-identical, why_rerun.py --code-only
    passes and `snakemake --touch` records the built outputs as this code's, none rewritten."""
    scripts, results = built / "workflow/scripts", built / "results/embedded"
    companions = {p: p.read_bytes() for p in results.rglob("*.sha256")}

    def moved(text: str) -> str:
        old = "    return [obj for _, obj in read_jsonl(path)]\n"
        return text.replace(old, "    rows = [obj for _, obj in read_jsonl(path)]\n    return rows\n")

    jobs = {job for edge in dag for job in edge if not aggregate(job)}
    try:
        with edited(scripts / "lineage/io.py", moved):
            assert stale(TARGET, cwd=built) == jobs
            why = why_rerun(built, "--code-only")  # exit 0: every stale job is stale by its code alone
            stale_count, total = map(int, re.search(r"(\d+) of (\d+) built jobs are stale", why).groups())
            assert stale_count == total and "data:" not in why, why
            snakemake("--touch", "--cores", "1", TARGET, cwd=built)
            assert planned_jobs(TARGET, cwd=built) == {}
            assert {p: p.read_bytes() for p in results.rglob("*.sha256")} == companions  # no artifact rewritten
    finally:  # the edit undone is a code change too: taken back the same way
        snakemake("--touch", "--cores", "1", TARGET, cwd=built)
    assert planned_jobs(TARGET, cwd=built) == {}


def test_editing_a_script_that_no_job_runs_plans_nothing(built):
    with edited(built / "workflow/scripts/why_rerun.py", lambda text: text + "\n_EDITED = True\n"):
        assert planned_jobs(TARGET, cwd=built) == {}


def _new_docstring(text: str) -> str:
    first = text.index('"""') + 3
    return text[:first] + "Reworded: " + text[first:]


@pytest.mark.parametrize(
    "module, change",
    [
        ("lineage/io.py", lambda text: text + "\n# a comment at the end\n"),  # imported by every job
        ("lineage/training/loop.py", _new_docstring),  # imported by every training
        (
            "lineage/training/loop.py",
            lambda text: text.replace("def check_finite(", "\n\n# spaced out\ndef check_finite("),
        ),
    ],
)
def test_code_edits_that_keep_its_meaning_plan_nothing(built, module, change):
    with edited(built / "workflow/scripts" / module, change):
        assert planned_jobs(TARGET, cwd=built) == {}


def test_touching_every_script_and_module_plans_nothing(built):
    files = list((built / "workflow/scripts").rglob("*.py"))
    stats = {path: path.stat() for path in files}
    try:
        for path in files:
            os.utime(path)
        assert planned_jobs(TARGET, cwd=built) == {}
    finally:
        for path, stat in stats.items():
            os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


# --------------------------------------------------------------------------------------------
# Data and checkpoints by content, not by time (lineage/workflow/digests.py)


def test_a_copy_of_the_built_lineage_plans_nothing(built, tmp_path):
    """`cp -r` gives every file a new time (scratch to project space, a restored backup)."""
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-r", str(built), str(copy)], check=True)
    assert planned_jobs(TARGET, cwd=copy) == {}


def test_a_comment_in_the_slurm_profile_plans_nothing(built):
    profile = built / "profiles/slurm/config.yaml"
    args = ("--profile", "profiles/slurm", "--config", "scale=embedded", "--executor", "local", "--cores", "2")
    with edited(profile, lambda text: text + "\n# reviewed for the cluster move\n"):
        assert planned_jobs(TARGET, *args, cwd=built) == {}


def test_a_changed_byte_in_the_battle_export_reruns_the_data_stages_and_all_after(built, dag):
    export = built / yaml.safe_load((built / "config.yaml").read_text())["scales"]["embedded"]["export"]["path"]
    readers = {job for edge in dag for job in edge if job.split(":")[0] in ("read_battles", "data_audit")}

    data, stat = export.read_bytes(), export.stat()  # bytes: the sample holds a line of invalid UTF-8 on purpose
    at = data.index(b'"content": "') + len(b'"content": "')
    try:
        export.write_bytes(data[:at] + (b"Y" if data[at : at + 1] == b"X" else b"X") + data[at + 1 :])
        planned = stale(TARGET, cwd=built)
        why = why_rerun(built)
        code_only = why_rerun(built, "--code-only", check=False)
    finally:
        export.write_bytes(data)
        os.utime(export, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert "read_battles" in planned and planned == downstream(readers, dag)
    # the jobs that read the export name it (the ones after them are stale because they rerun)
    assert (
        "read_battles (" in why and "data: results/embedded/inputs/resources/sample/battles.jsonl.sha256 changed" in why
    )
    assert code_only.startswith("exit 1") and "stale by data, not code alone: read_battles" in code_only
    assert planned_jobs(TARGET, cwd=built) == {}  # the export's bytes back: nothing (its companion follows them)


@contextlib.contextmanager
def shard_rewritten(built: Path, run: str, change):
    """A shard of `run` rewritten by `change(bytes)` inside the block; bytes, times and the run's
    companion restored after it (the check at start-up may have set the checkpoint aside)."""
    model = built / "results/embedded/models" / run
    shard = sorted(model.glob("*.safetensors"))[0]
    companion, aside = model.with_name(f"{run}.sha256"), model.with_name(f"{run}.damaged")
    data, stat, digests = shard.read_bytes(), shard.stat(), companion.read_text()
    try:
        shard.write_bytes(change(data))
        yield shard
    finally:
        if aside.exists():
            aside.rename(model)
        shard.write_bytes(data)
        os.utime(shard, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        companion.write_text(digests)


def test_a_shard_rewritten_with_the_same_bytes_plans_nothing(built):
    with shard_rewritten(built, "sftw2", lambda data: data):
        assert planned_jobs(TARGET, cwd=built) == {}


def test_a_shard_with_other_bytes_is_named_damaged_and_its_run_planned_again(built, dag):
    def flipped(data: bytes) -> bytes:
        middle = len(data) // 2  # inside the tensors, past the header
        return data[:middle] + bytes([data[middle] ^ 0xFF]) + data[middle + 1 :]

    with shard_rewritten(built, "sftw2", flipped) as shard:
        first = snakemake("-n", TARGET, cwd=built)
        assert "models/sftw2 is damaged" in first.stderr and shard.name in first.stderr
        assert not shard.parent.exists()  # set aside: no job and no user reads it as sftw2 any more
        planned = stale(TARGET, cwd=built)  # the next start-up plans the same
        # sftw2 itself and what descends from it, each of which waits on it in the DAG
        assert planned == downstream({"sftw2"}, dag)
    assert planned_jobs(TARGET, cwd=built) == {}


# --------------------------------------------------------------------------------------------
# Every value that changes an output is tracked


@pytest.mark.parametrize(
    "kind, change, seeds",
    [
        (
            "eval sizes",
            "scales:\n  embedded:\n    eval:\n      sizes:\n        ifeval: [16, 24, 30]\n",
            EVALUATIONS,
        ),  # base, sftw4: parents the table compares
        (
            "the packed scoring budget",
            "scales:\n  embedded:\n    eval:\n      pack_tokens: 4096\n",
            EVALUATIONS,
        ),  # one job per run scores and generates
        ("a dataset option", "datasets:\n  winners: {repeat: 2}\n", {"winner_rows:winners"}),
        ("a training recipe value", "runs:\n  sftw2:\n    lr: 6.0e-6\n", {"sftw2"}),
        (
            "a shared recipe value",
            "recipe:\n  optimizer:\n    eps: 1.0e-7\n",
            {"stage1_sft", "dpo1", "dpo2", "dpo3", "dpo4", "sftw2", "sftw4", "sftwF"},
        ),
        ("a soup weight", "runs:\n  soup24:\n    weights: [0.6, 0.4]\n", {"soup24"}),
        ("the holdout rule", "recipe:\n  holdout_modulus: 4\n", {"split_holdout"}),
        (
            "the world size",
            "scales:\n  embedded:\n    train:\n      processes: 1\n",
            {"stage1_sft", "dpo1", "dpo2", "dpo3", "dpo4", "sftw2", "sftw4", "sftwF"} | REFERENCES,
        ),  # each rank scores its own share of the pairs: float rounding may differ
        # DPO: what only the training reads reruns the training, not the reference log-probs
        ("a DPO temperature", "runs:\n  dpo2:\n    beta: 0.2\n", {"dpo2"}),
        ("a DPO learning rate", "runs:\n  dpo1:\n    lr: 6.0e-7\n", {"dpo1"}),
        ("a DPO step count", "runs:\n  dpo3:\n    overrides:\n      embedded: {steps: 9}\n", {"dpo3"}),
        # what the scores depend on reruns both
        (
            "the maximum length",
            "scales:\n  embedded:\n    train:\n      max_length: 900\n",
            {"stage1_sft", "dpo1", "dpo2", "dpo3", "dpo4", "sftw2", "sftw4", "sftwF"} | REFERENCES,
        ),
        # the experts split over the 2 ranks: their gradients are summed in other groups (not the references)
        (
            "expert parallelism",
            "scales:\n  embedded:\n    train:\n      expert_parallel: 2\n",
            {"stage1_sft", "dpo1", "dpo2", "dpo3", "dpo4", "sftw2", "sftw4", "sftwF"},
        ),
        # two ranks: reducing each micro-batch or the step's sum adds the same gradients in another order
        (
            "the gradient accumulation",
            "scales:\n  embedded:\n    train:\n      accumulate: unsharded\n",
            {"stage1_sft", "dpo1", "dpo2", "dpo3", "dpo4", "sftw2", "sftw4", "sftwF"},
        ),
    ],
)
def test_a_changed_value_reruns_its_jobs_and_their_descendants(built, dag, tmp_path, kind, change, seeds):
    planned = stale(TARGET, "--configfile", overlay(tmp_path, change), cwd=built)
    assert planned == downstream(seeds, dag), kind


def test_a_benchmark_pointed_at_another_item_file_reruns_its_evaluations_and_the_tables(built, dag, tmp_path):
    """GSM8K's items as published (no ids: others derived, so other parts) in another file, as a --configfile
    overlay points at them: no verifier round reads the item files (the overlap with its prompts is refused at
    start-up), so no round and no training reruns."""
    shipped = (built / "resources/sample/eval/gsm8k.jsonl").read_text().splitlines()
    published = tmp_path / "gsm8k.jsonl"
    published.write_text(
        "".join(json.dumps({k: v for k, v in json.loads(r).items() if k != "id"}) + "\n" for r in shipped)
    )
    change = overlay(tmp_path, f"scales:\n  embedded:\n    eval:\n      items:\n        gsm8k: {published}\n")
    planned = stale(TARGET, "--configfile", change, cwd=built)
    assert planned == downstream(EVALUATIONS, dag)
    assert {job.split(":")[0] for job in planned} <= {"evaluate", "eval_column", "make_eval_table", "publish"}, planned


@pytest.mark.parametrize(
    "change",
    [
        "scales:\n  embedded:\n    train:\n      save_every: 3\n",  # resumable state only
        "scales:\n  embedded:\n    train:\n      save_every_minutes: 15\n",  # ... and by time
        # what a run reports: its trackers and how often it scores the holdout (tests/test_tracking.py: same weights)
        "scales:\n  embedded:\n    train:\n      report_to: [tensorboard, wandb]\n      validate_every: 3\n",
        "recipe:\n  soup_verify: content\n",  # how parents are checked, not what a soup writes
        # where the ranks run: the same world of 2 as 2 nodes of 1 (tests/test_slurm_nodes.py trains both)
        "scales:\n  embedded:\n    train:\n      nodes: 2\n      processes: 1\n",
        "scales:\n  embedded:\n    train:\n      sharding: hybrid\n",  # one node: nothing to replicate across
        "scales:\n  embedded:\n    resources:\n      train: {cpus: 1, gpus: 1, mem_mb: 5000, runtime: 40}\n",
    ],
)
def test_settings_that_never_change_an_output_plan_nothing(built, tmp_path, change):
    assert planned_jobs(TARGET, "--configfile", overlay(tmp_path, change), cwd=built) == {}


# --------------------------------------------------------------------------------------------
# Audit pictures and the README's commands


def test_the_audit_dag_marks_exactly_the_jobs_a_run_would_execute(built, tmp_path):
    """Drawn by the audit with the run's config: its solid boxes are the jobs `snakemake -n` plans
    (counted per rule: Snakemake's labels leave out wildcards a job shares with its inputs)."""
    change = overlay(tmp_path, "runs:\n  sftw2:\n    lr: 6.0e-6\n")
    audit_rules = ("resolved_config", "draw_graph", "html_report")  # they run to draw it

    def per_rule(labels):
        return collections.Counter(
            rule
            for rule in (label.split(":")[0] for label in labels)
            if rule not in audit_rules and not aggregate(rule)
        )

    planned = stale("all", "--configfile", change, cwd=built)
    assert "sftw2" in planned and "sftwF" not in planned
    snakemake("--cores", "1", "results/embedded/audit/dag.svg", "--configfile", change, cwd=built)
    drawn, _ = parse_dot((built / "results/embedded/audit/dag.dot").read_text())
    assert per_rule(label for label, solid in drawn if solid) == per_rule(planned)
    up_to_date = per_rule(label for label, solid in drawn if not solid)
    assert up_to_date["sftwF"] == 1 and up_to_date["sftw2"] == 0
    assert (built / "results/embedded/audit/dag.svg").read_text().lstrip().startswith(("<?xml", "<svg"))


def test_the_readme_graph_commands_draw_the_lineage(built, tmp_path):
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    lines = [
        line.split("#")[0].strip()
        for line in readme.splitlines()
        if line.startswith("snakemake") and ("--rulegraph" in line or "--dag" in line)
    ]
    assert len(lines) == 2, lines
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])}
    for line in lines:
        subprocess.run(["bash", "-o", "pipefail", "-c", line], cwd=built, env=env, check=True, timeout=300)
        svg = (built / line.rsplit(">", 1)[1].strip()).read_text()
        assert svg.lstrip().startswith(("<?xml", "<svg")) and "soupF2" in svg and "sftwF" in svg, line


# --------------------------------------------------------------------------------------------
# Targets that do what they say (last: it leaves the lineage rebuilt)


def test_forcerun_of_a_run_retrains_it_and_its_descendants_follow(built, dag):
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    (line,) = [line for line in readme.splitlines() if line.startswith("snakemake") and "--forcerun sftwF" in line]
    assert stale(*shlex.split(line.split("#")[0])[1:], cwd=built) == downstream({"sftwF"}, dag)  # as the README says
    model = built / "results/embedded/models/sftwF"
    before = json.loads((model / "lineage.json").read_text())
    shards = {p.name: p.read_bytes() for p in model.glob("*.safetensors")}
    snakemake("--cores", "2", "sftwF", "--forcerun", "sftwF", cwd=built, timeout=900)
    after = json.loads((model / "lineage.json").read_text())
    assert after["created_at"] >= before["created_at"] and after["files"] != {} and after != before
    assert {p.name: p.read_bytes() for p in model.glob("*.safetensors")} == shards  # a retrain reproduces
    assert stale(TARGET, cwd=built) == downstream({"sftwF"}, dag) - {"sftwF"}
    snakemake("--cores", "2", TARGET, cwd=built, timeout=900)
    assert planned_jobs(TARGET, cwd=built) == {}
