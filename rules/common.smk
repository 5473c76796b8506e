"""Build the typed lineage once (workflow/scripts/lineage/runs.py); what every rule file reads.

What reruns a job, and why (README "What reruns"): its params are the canonical form of what
changes its output (lineage/canonical.py), so reordered keys, comments and number spellings
rerun nothing; its code input is the import closure of the script it runs
(lineage/codedeps.py), so an edit reruns exactly the jobs whose code imports the edited file.
"""

import os
import re
import shlex
import sys
from pathlib import Path

import yaml
from snakemake.utils import min_version, validate

min_version("9.19")

SCRIPTS = os.path.relpath(Path(workflow.basedir) / "workflow" / "scripts")
sys.path.insert(0, SCRIPTS)

from lineage.battles import MAX_ANSWER_CHARS  # noqa: E402
from lineage.canonical import canonical, numbers_by_schema  # noqa: E402
from lineage.cluster import launch_command  # noqa: E402
from lineage.codedeps import code_digest  # noqa: E402
from lineage.evaluation.registry import PART_NAMES  # noqa: E402
from lineage.runs import ConfigError, build_lineage, flags  # noqa: E402
from lineage.screen import control_tokens  # noqa: E402


configfile: "config.yaml"


SCHEMA = Path(workflow.basedir) / "workflow" / "schemas" / "config.schema.yaml"
config.update(numbers_by_schema(config, yaml.safe_load(SCHEMA.read_text())))
validate(config, str(SCHEMA))
L = build_lineage(config)
P = L.paths

# Scripts run as `python ...`: this interpreter's bin/ goes first on PATH so that they run in the
# environment that runs Snakemake (a rule's conda env, when deploying with conda, comes first).
os.environ.update(
    PATH=os.pathsep.join([str(Path(sys.executable).parent), os.getenv("PATH", "")])
)


wildcard_constraints:
    run="[A-Za-z][A-Za-z0-9_]*",
    dataset="[A-Za-z][A-Za-z0-9_]*",


def code(script):
    """The code a job of `script` runs, by meaning: a tracked param that names each file of the
    script's import closure with a digest of its syntax (lineage/codedeps.py). This is the one
    place code staleness is decided: comments, docstrings, formatting, a touch or a copy of the
    files change no digest and rerun nothing; a changed statement changes its file's digest and
    reruns exactly the jobs whose scripts import it (and what descends from them). The files are
    not inputs, so their modification times are never compared."""
    return code_digest(f"{SCRIPTS}/{script}", SCRIPTS)


def untracked(value):
    """A param Snakemake does not record (it takes `output`), for settings that never change
    what a job writes: how often state is saved, how parents are verified."""
    return lambda wildcards, output: value


def one_of(names):
    """A wildcard regex matching exactly these names (nothing when there are none)."""
    return "|".join(names) if names else "(?!x)x"


def resources_of(kind):
    return L.resources[kind].snakemake()


def train_resources(run, slurm_extra):
    """A training job's request: its nodes, and per node the train class's CPUs, GPUs and memory."""
    resources = L.resources["train"].snakemake(nodes=run.nodes)
    extra = " ".join(filter(None, [resources.pop("slurm_extra", ""), slurm_extra]))
    return resources | {"slurm_extra": extra}


def launcher(run):
    """How a run's FSDP processes start (the scripts shard with FSDP2 themselves): `accelerate launch`
    on one node, srun with one `accelerate launch` per node on several (lineage/cluster.py).
    """
    return launch_command(run.nodes, run.processes_per_node, L.resources["train"])


def table_results(table):
    """The results of a table's columns and of the runs they are compared with."""
    return [f for run in L.table_runs_evaluated(table) for f in L.eval_parts(run)]


def reference_flags(columns):
    """make_eval_table.py's --reference flags: each column's parents and the published model."""
    return flags(
        "reference",
        [f"{c}={','.join(L.references(c))}" for c in columns if L.references(c)],
    )


def winner_inputs(wildcards):
    """The split's answers; the cleaned battles too where the set adds the tie battles."""
    inputs = {
        "train": rules.split_holdout.output.train,
        "holdout": rules.split_holdout.output.holdout,
    }
    if L.datasets[wildcards.dataset].ties:
        inputs["battles"] = rules.clean_battles.output.battles
    return inputs


# --- names --------------------------------------------------------------------------------------


def check_run_names():
    """Each run names a rule, and so do its evaluation target `<run>_eval` and a DPO run's
    `<run>_reference`. None may take the name of one of the workflow's own rules (read from the
    rule files themselves)."""
    fixed = {
        name
        for path in sorted(Path(workflow.basedir, "rules").glob("*.smk"))
        for name in re.findall(r"^rule\s+(\w+)\s*:", path.read_text(), flags=re.M)
    }
    for run in config["runs"]:
        for name in (run, f"{run}_eval", f"{run}_reference"):
            if name in fixed or (name != run and name in config["runs"]):
                raise ConfigError(
                    f"runs.{run}: the workflow already has a rule or run named {name!r} "
                    f"(taken: {', '.join(sorted(fixed))}); rename the run"
                )


check_run_names()
