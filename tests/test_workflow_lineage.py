"""The embedded lineage end to end on CPU: `snakemake --cores 2 sftwF`, then `soupF2`, then all.

These share one scratch copy of the workflow with test_workflow_data.py and test_staleness.py
(session fixture), so each stage is built once.
"""

import json
import shutil
import subprocess
import sys
import zipfile

import pytest
import torch
import yaml
from transformers import AutoModelForCausalLM, AutoTokenizer
from workflow_helpers import REPO, planned_jobs, snakemake

from lineage.canonical import canonical, numbers_by_schema
from lineage.workflow.runs import build_lineage

pytestmark = pytest.mark.slow
SCHEMA = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())


def test_the_chain_builds_stage1_and_sftwF_trains_from_it(embedded_workflow):
    snakemake("--cores", "2", "sftwF", cwd=embedded_workflow, timeout=1500)
    results = embedded_workflow / "results/embedded"
    lineage = json.loads((results / "models/sftwF/lineage.json").read_text())
    assert lineage["kind"] == "sft" and lineage["parents"][0]["path"].endswith("models/dpo4")
    assert lineage["card_lr"] == 5e-6 and lineage["recipe"]["steps"] == 30
    config = numbers_by_schema(yaml.safe_load((embedded_workflow / "config.yaml").read_text()), SCHEMA)
    resolved = build_lineage(config, base_dir=embedded_workflow).runs["sftwF"].recipe
    assert lineage["recipe"] == json.loads(canonical(resolved))  # the resolved recipe, verbatim
    assert lineage["recipe"]["lr"] == 5e-6 * lineage["lr_scale"]
    assert lineage["world_size"] == 2  # FSDP over 2 processes on gloo
    assert lineage["root"]["run"] == "base"  # the whole lineage descends from the tiny Base
    chain = [json.loads((results / f"models/{run}/lineage.json").read_text()) for run in ("dpo2", "dpo3", "dpo4")]
    assert [c["parents"][0]["path"].rsplit("/", 1)[-1] for c in chain] == ["dpo1", "dpo2", "dpo3"]
    sft = [json.loads(line) for line in (results / "metrics/stage1_sft.jsonl").open()]
    assert sft[-1]["loss"] < sft[0]["loss"] - 1.0  # the Stage-1 SFT has learned something
    for round_name in ("verifier_dpo2", "verifier_dpo3", "verifier_dpo4"):
        stats = json.loads((results / f"data/verifier/{round_name}.json").read_text())
        assert stats["total"]["pairs"] > 0 and set(stats["by_type"]) == {"math", "if"}
    assert planned_jobs("sftwF", cwd=embedded_workflow) == {}


def test_switching_stage1_to_an_external_copy_reruns_only_what_depends_on_it(embedded_workflow, tmp_path):
    external = tmp_path / "stage1_copy"
    shutil.copytree(embedded_workflow / "results/embedded/models/dpo4", external)
    overlay = tmp_path / "external.yaml"
    overlay.write_text(f"scales:\n  embedded:\n    stage1:\n      from: external\n      path: {external}\n")
    assert planned_jobs("sftwF", "--configfile", str(overlay), cwd=embedded_workflow) == {"sftwF": 1}
    assert planned_jobs("sftwF", cwd=embedded_workflow) == {}  # back to the chain: nothing to redo


def test_soupF2_builds_loads_and_generates(embedded_workflow):
    snakemake("--cores", "2", "soupF2", cwd=embedded_workflow, timeout=1500)
    soup = embedded_workflow / "results/embedded/models/soupF2"
    lineage = json.loads((soup / "lineage.json").read_text())
    assert [p["run"] for p in lineage["parents"]] == ["sftwF", "soup24"]
    for name in ("chat_template.jinja", "system_prompt.txt", "generation_config.json", "serving_config.json"):
        assert (soup / name).is_file(), name
    tok = AutoTokenizer.from_pretrained(soup)
    model = AutoModelForCausalLM.from_pretrained(soup)
    msgs = [
        {"role": "system", "content": (soup / "system_prompt.txt").read_text()},
        {"role": "user", "content": "Hello!"},
    ]
    inputs = tok.apply_chat_template(msgs, add_generation_prompt=True, return_tensors="pt", return_dict=True)
    with torch.no_grad():
        out = model.generate(**inputs, max_new_tokens=8, do_sample=False)
    assert out.shape[1] > inputs["input_ids"].shape[1]


def _mean(values):
    return sum(values) / len(values)


def test_the_readme_s_report_command_passes_after_the_quickstart(embedded_workflow, tmp_path):
    """README: `snakemake --report report.zip soupF2_eval` once the quickstart built soupF2_eval (the ablations and
    the audit, which the default target's report holds, are not built yet)."""
    snakemake("--report", str(tmp_path / "report.zip"), "soupF2_eval", cwd=embedded_workflow, timeout=600)
    with zipfile.ZipFile(tmp_path / "report.zip") as report:
        assert any(name.endswith("eval_table.md") for name in report.namelist())


def test_training_loss_falls_for_the_sft_runs_and_a_dpo_ablation(embedded_workflow):
    """sftw2, sftw4, sftwF (built above) and the battle-pair DPO ablation all lower their loss."""
    snakemake("--cores", "2", "dpo_lr1em6", cwd=embedded_workflow, timeout=1500)
    metrics = embedded_workflow / "results/embedded/metrics"
    for run in ("sftw2", "sftw4", "sftwF", "dpo_lr1em6"):
        losses = [json.loads(line)["loss"] for line in (metrics / f"{run}.jsonl").open()]
        assert _mean(losses[-5:]) < _mean(losses[:5]), (run, losses)
    dpo = json.loads((embedded_workflow / "results/embedded/models/dpo_lr1em6/lineage.json").read_text())
    assert dpo["kind"] == "dpo" and dpo["recipe"]["beta"] == 0.1
    assert dpo["parents"][0]["path"].endswith("models/dpo4")  # stage1 is the chain's dpo4 at embedded scale


def watch(directory) -> str:
    """One report of tools/watch.py on a workflow directory, as a user runs it."""
    command = [sys.executable, "tools/watch.py", "--once", "--dir", str(directory)]
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=True).stdout


def test_the_watch_shows_a_running_job_s_step_and_the_jobs_left(embedded_workflow, tmp_path):
    """tools/watch.py on the lineage built above, and on that run's logs cut where sftw2 had trained 10 steps: the
    job's step, loss, tokens/s and ETA, the jobs done and left, without opening a log file."""
    logs = sorted((embedded_workflow / ".snakemake/log").glob("*.snakemake.log"))
    built = next(p for p in logs if "localrule sftw2:" in p.read_text())  # the first build: soupF2_eval's 42 jobs
    whole = watch(embedded_workflow)
    assert " jobs done, 0 running" in whole, whole
    text = built.read_text()
    cut = text.index("jobid:", text.index("localrule sftw2:"))
    (tmp_path / ".snakemake/log").mkdir(parents=True)
    (tmp_path / ".snakemake/log" / built.name).write_text(text[: text.index("\n", cut) + 1])
    steps = (embedded_workflow / "logs/embedded/runs/sftw2.log").read_text().split("step 0011/")[0]
    (tmp_path / "logs/embedded/runs").mkdir(parents=True)
    (tmp_path / "logs/embedded/runs/sftw2.log").write_text(steps)
    shown = watch(tmp_path)
    done = int(shown.split(" of 42 jobs done")[0].rsplit(" ", 1)[1])
    assert 0 < done < 42 and "1 running" in shown, shown
    line = next(line for line in shown.splitlines() if line.strip().startswith("sftw2"))
    assert "step 10/24  loss " in line and "tok/s " in line and "eta 0:" in line, line
    assert "left: at least ~" in shown and "rules not run here yet: " in shown, shown  # no earlier run here


def test_the_default_target_builds_everything_and_snakemake_reports_it(embedded_workflow, tmp_path):
    """`snakemake` alone builds `all` (the README's targets, audit included), then `snakemake --report
    report.zip` packs it. The rejected runs train 2 steps here (an overlay) to keep the suite short."""
    runs = yaml.safe_load((embedded_workflow / "config.yaml").read_text())["runs"]
    short = {
        name: {"overrides": {"embedded": {"steps": 2}}}
        for name, run in runs.items()
        if run.get("rejected") and run["kind"] in ("sft", "dpo")
    }
    overlay = tmp_path / "short_ablations.yaml"
    overlay.write_text(yaml.safe_dump({"runs": short}))
    snakemake("--cores", "2", "--configfile", str(overlay), cwd=embedded_workflow, timeout=2400)
    assert planned_jobs("--configfile", str(overlay), cwd=embedded_workflow) == {}
    audit = embedded_workflow / "results/embedded/audit"
    for name in ("rulegraph.svg", "dag.svg", "lineage.html", "loss_curves.png", "report.html"):
        assert (audit / name).stat().st_size > 0, name
    assert (audit / "loss_curves_ablations.png").stat().st_size > 0
    ablations = (embedded_workflow / "results/embedded/eval_table_ablations.tsv").read_text().splitlines()[0]
    assert all(run in ablations.split("\t") for run in short)
    # the built table: intervals in every evaluated cell, each column tested against its parents
    table = (embedded_workflow / "results/embedded/eval_table.md").read_text()
    assert "| MMLU A / B (n 40 / 40) |" in table and "[" in table.split("| MMLU A / B")[1].splitlines()[0]
    paired = [
        line.split("\t")
        for line in (embedded_workflow / "results/embedded/eval_table.paired.tsv").read_text().splitlines()[1:]
    ]
    assert {(row[0], row[1]) for row in paired} >= {
        ("soupF2", "sftwF"),
        ("soupF2", "soup24"),
        ("sftw2", "stage1"),
        ("soup24", "sftw4"),
    }
    assert {row[-1] for row in paired} <= {"true", "false"} and "within noise" in table
    # the published repository: a model card huggingface_hub reads, the architecture named
    published = embedded_workflow / "results/embedded/published/soupF2"
    from huggingface_hub import ModelCard

    card = ModelCard.load(published / "README.md")
    assert card.data.eval_results and card.data.license == "other"
    assert json.loads((published / "config.json").read_text())["architectures"] == ["NemotronHForCausalLM"]
    # exactly a Hub repository once Snakemake is done with the job: the files lineage.json lists, no more
    shipped = sorted(str(p.relative_to(published)) for p in published.rglob("*") if p.is_file())
    listed = json.loads((published / "lineage.json").read_text())["files"]
    assert shipped == sorted([*listed, "lineage.json"]) and not [n for n in shipped if n.startswith(".")], shipped
    snakemake("--report", "report.zip", "--configfile", str(overlay), cwd=embedded_workflow, timeout=600)
    with zipfile.ZipFile(embedded_workflow / "report.zip") as archive:
        names = archive.namelist()
    assert any(n.endswith("report.html") for n in names) and any(n.endswith("eval_table.md") for n in names), names
