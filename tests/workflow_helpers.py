"""Run the workflow's Snakemake CLI from tests, in scratch copies, and read its plans and DAGs."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COPIED = ("Snakefile", "config.yaml", "rules", "workflow", "resources", "profiles", "envs")

# The card's data counts (the audit's reference, resources/card_counts.json) that the shipped sample export
# reproduces (its general mix is a sample, its preferred answers split differently by side), and how ours move:
# bt-001489, an own win, differs from its loser only by a citation marker and is quarantined after cleaning,
# so one battle and its 40 winner rows fewer than the card.
CARD_COUNTS = json.loads((REPO / "resources" / "card_counts.json").read_text())
SAMPLE_REPRODUCES = (
    "battles",
    "own_better",
    "other_better",
    "tie",
    "both_bad",
    "preferred",
    "holdout_pairs",
    "recovered_pairs",
    "winner_rows",
)
CARD = {key: CARD_COUNTS[key] for key in SAMPLE_REPRODUCES}
MOVED_BY_BT_001489 = {"battles": 1, "own_better": 1, "preferred": 1, "recovered_pairs": 1, "winner_rows": 40}


def copy_workflow(target: Path) -> Path:
    """Copy what a workflow run needs (no results, state or venv) into `target`."""
    target.mkdir(parents=True, exist_ok=True)
    for name in COPIED:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, target / name)
    return target


def python_in(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """This interpreter on a copy's scripts (its lineage package, not the repository's), in the copy."""
    env = {**os.environ, "PYTHONPATH": str(root / "workflow" / "scripts")}
    proc = subprocess.run([sys.executable, *args], cwd=root, env=env, capture_output=True, text=True, timeout=600)
    assert not check or proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def snakemake(*args: str, cwd: Path = REPO, check: bool = True, timeout: int = 600) -> subprocess.CompletedProcess:
    """Run `python -m snakemake ARGS` in `cwd` with this interpreter; fail with its output."""
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def planned_jobs(*args: str, cwd: Path = REPO) -> dict[str, int]:
    """Rule name -> job count from the 'Job stats' table of a dry run."""
    out = snakemake("-n", *args, cwd=cwd).stdout
    if "Nothing to be done" in out:
        return {}
    table = out.split("Job stats:", 1)[1]
    counts = {}
    for line in table.splitlines()[3:]:
        parts = line.split()
        if len(parts) != 2 or parts[0] == "total":
            break
        counts[parts[0]] = int(parts[1])
    return counts


def dag_edges(*args: str, cwd: Path = REPO) -> set[tuple[str, str]]:
    """Edges of `snakemake --dag` as ('rule[:wildcards]', 'rule[:wildcards]') pairs (parent, child).

    Snakemake's labels show only the wildcards a job adds to its inputs' jobs; for exact job
    identities use `plan` and `job_graph`."""
    _, edges = parse_dot(snakemake(*args, "--dag", "dot", cwd=cwd).stdout)
    return edges


def parse_dot(dot: str) -> tuple[list[tuple[str, bool]], set[tuple[str, str]]]:
    """(label, drawn solid: the job would run) per node of a `--dag dot` graph, and its edges."""
    labels, nodes = {}, []
    for node, label, style in re.findall(r'^\s*(\d+)\[label = "([^"]*)".*?style="([^"]*)"', dot, flags=re.M):
        rule, *wildcards = label.split("\\n")
        values = [w.split(": ", 1)[1] for w in wildcards if ": " in w]
        labels[node] = ":".join([rule, *values])
        nodes.append((labels[node], "dashed" not in style))
    edges = {(labels[a], labels[b]) for a, b in re.findall(r"^\s*(\d+) -> (\d+)", dot, flags=re.M)}
    return nodes, edges


@dataclass(frozen=True)
class Job:
    rule: str
    wildcards: tuple[tuple[str, str], ...]
    inputs: frozenset[str]
    outputs: frozenset[str]

    @property
    def label(self) -> str:
        """'rule' or 'rule:value[:value...]' (wildcard values in name order): unique in a plan."""
        return ":".join([self.rule, *(value for _, value in self.wildcards)])


def plan(*args: str, cwd: Path = REPO) -> dict[str, Job]:
    """The jobs `snakemake -n ARGS` would run, by label, with their inputs and outputs."""
    out = snakemake("-n", *args, cwd=cwd).stdout
    jobs = {}
    for block in re.split(r"^(?=(?:local)?rule \S+:$)", out, flags=re.M)[1:]:
        header, *lines = block.splitlines()
        fields = {}
        for line in lines:
            key, sep, value = line.strip().partition(": ")
            if sep and line.startswith("    ") and key in ("input", "output", "wildcards"):
                fields[key] = [v.strip() for v in value.split(", ")]
        wildcards = tuple(sorted(tuple(w.split("=", 1)) for w in fields.get("wildcards", [])))
        job = Job(
            header.split()[-1].rstrip(":"),
            wildcards,
            frozenset(fields.get("input", [])),
            frozenset(fields.get("output", [])),
        )
        jobs[job.label] = job
    return jobs


def job_graph(*args: str, cwd: Path = REPO) -> set[tuple[str, str]]:
    """Every job of the targets' DAG (up to date or not) as edges (producer, consumer), by label."""
    jobs = plan("--forceall", *args, cwd=cwd)
    producer = {path: job.label for job in jobs.values() for path in job.outputs}
    return {(producer[path], job.label) for job in jobs.values() for path in job.inputs if path in producer}


def write_checkpoint(directory: Path, shapes: dict[str, tuple[int, ...]]) -> Path:
    """A safetensors file with these tensors' headers and zero bytes (bf16): what a planner can count."""
    directory.mkdir(parents=True, exist_ok=True)
    header, offset = {}, 0
    for name, shape in shapes.items():
        size = 2 * math.prod(shape)
        header[name] = {"dtype": "BF16", "shape": list(shape), "data_offsets": [offset, offset + size]}
        offset += size
    blob = json.dumps(header).encode()
    (directory / "model.safetensors").write_bytes(struct.pack("<Q", len(blob)) + blob + bytes(offset))
    return directory
