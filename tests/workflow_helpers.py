"""Run the workflow's Snakemake CLI from tests, in scratch copies, and read its plans and DAGs."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COPIED = ("Snakefile", "config.yaml", "rules", "workflow", "resources", "profiles", "envs")


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
    """Edges of `snakemake --dag` as ('rule[:wildcards]', 'rule[:wildcards]') pairs (parent, child)."""
    return dag_jobs(*args, cwd=cwd)[1]


def dag_jobs(*args: str, cwd: Path = REPO) -> tuple[dict[str, bool], set[tuple[str, str]]]:
    """Jobs of `snakemake --dag` as {'rule[:wildcards]': will it run} (solid nodes run, dashed
    ones are up to date), and its edges (parent, child)."""
    dot = snakemake(*args, "--dag", "dot", cwd=cwd).stdout
    return parse_dot(dot)


def parse_dot(dot: str) -> tuple[dict[str, bool], set[tuple[str, str]]]:
    labels, runs = {}, {}
    for node, label, style in re.findall(r'^\s*(\d+)\[label = "([^"]*)".*?style="([^"]*)"', dot, flags=re.M):
        rule, *wildcards = label.split("\\n")
        values = [w.split(": ", 1)[1] for w in wildcards if ": " in w]
        labels[node] = ":".join([rule, *values])
        runs[labels[node]] = "dashed" not in style
    edges = {(labels[a], labels[b]) for a, b in re.findall(r"^\s*(\d+) -> (\d+)", dot, flags=re.M)}
    return runs, edges
