"""Build the typed lineage once (workflow/scripts/lineage/workflow/runs.py); what every rule file reads.

What reruns a job, and why (README "What reruns"): its params are the canonical form of what
changes its output (lineage/canonical.py), so reordered keys, comments and number spellings
rerun nothing; its code input is the import closure of the script it runs
(lineage/workflow/codedeps.py), so an edit reruns exactly the jobs whose code imports the edited file;
its large inputs count by content (`by_content`, lineage/workflow/digests.py), so a copy reruns nothing.
"""

import atexit
import os
import re
import shlex
import sys
from pathlib import Path

import yaml
from snakemake.utils import min_version

min_version("9.19")

SCRIPTS = os.path.relpath(Path(workflow.basedir) / "workflow" / "scripts")
sys.path.insert(0, SCRIPTS)

from lineage.canonical import canonical, numbers_by_schema  # noqa: E402
from lineage.workflow.cluster import (  # noqa: E402
    STOP_GRACE_S,
    TRAIN_STOP_SIGNAL,
    launch_command,
)
from lineage.workflow.codedeps import code_digest, keep_facts  # noqa: E402
from lineage.workflow.digests import (  # noqa: E402
    DigestCache,
    check_companions,
    companion_of,
    companions_under,
    external_companion,
    record_external,
)
from lineage.evaluation.benchmarks import PART_NAMES  # noqa: E402
from lineage.errors import EXIT_CODES  # noqa: E402
from lineage.workflow.checks import ConfigError, flags  # noqa: E402
from lineage.workflow.local_gpus import check_local_gpus, local_gpus  # noqa: E402
from lineage.workflow.runs import build_lineage  # noqa: E402
from lineage.workflow.schema import load_schema, validate_config  # noqa: E402
from lineage.screening import control_tokens  # noqa: E402


configfile: "config.yaml"


def refuse(reason) -> None:
    """Stop before any job with the reason alone (not Snakemake's stack of the workflow's files) and the
    config error's exit code."""
    print(f"config error: {reason}", file=sys.stderr)
    sys.exit(EXIT_CODES["ConfigError"])


SCHEMA = load_schema(
    Path(workflow.basedir) / "workflow" / "schemas" / "config.schema.yaml"
)
try:
    config.update(numbers_by_schema(config, SCHEMA))
    validate_config(config, SCHEMA)
    L = build_lineage(config)
except ConfigError as err:
    refuse(err)
P = L.paths


onstart:
    # jobs about to run on this machine (not a dry run, --touch or a cluster's executor): its GPUs must do
    if workflow.executor_plugin.name == "local":
        try:
            check_local_gpus(
                L, config["scales"][config["scale"]], config["scale"], local_gpus()
            )
        except ConfigError as err:
            refuse(err)


# Scripts run as `python ...`: this interpreter's bin/ goes first on PATH so that they run in the
# environment that runs Snakemake (a rule's conda env, when deploying with conda, comes first).
os.environ.update(
    PATH=os.pathsep.join([str(Path(sys.executable).parent), os.getenv("PATH", "")])
)
# Triton keeps what its autotuners measure on disk beside its compiled kernels (unless set otherwise), so only the
# first GPU job of a machine times the Mamba-2 kernels' configurations; the others reuse its choice. Read when a
# kernel's module is imported, so set for every job here. (On the H100 an evaluation's first part of 40 items took
# 12.5 s and its second 0.4 s: the first calls of the kernels pay such costs in every job.)
os.environ.setdefault("TRITON_CACHE_AUTOTUNING", "1")


wildcard_constraints:
    run="[A-Za-z][A-Za-z0-9_]*",
    dataset="[A-Za-z][A-Za-z0-9_]*",


def code(script):
    """The code a job of `script` runs, by meaning: a tracked param that names each file of the
    script's import closure with a digest of its syntax (lineage/workflow/codedeps.py). This is the one
    place code staleness is decided: comments, docstrings, formatting, a touch or a copy of the
    files change no digest and rerun nothing; a changed statement changes its file's digest and
    reruns exactly the jobs whose scripts import it (and what descends from them). The files are
    not inputs, so their modification times are never compared."""
    return code_digest(f"{SCRIPTS}/{script}", SCRIPTS)


# What each start learns parsing the scripts' modules, kept by their bytes for the next (every Slurm job starts one)
keep_facts(Path(".snakemake") / "code_facts.json")


# --- content, not times ------------------------------------------------------------------------
# The one place data staleness is decided (lineage/workflow/digests.py says how). A large artifact's job
# also writes its companion `<artifact>.sha256` (`with_sha256` in its outputs, and
# workflow/scripts/digest_artifact.py as its shell's last step); a job reading artifacts takes them `by_content`: the artifact with its time ignored
# (`ancient`), and its companion, a small file Snakemake compares by checksum. A copy with new
# times plans nothing, other bytes plan what they feed, and a damaged artifact (checked at
# start-up, then set aside) plans the job that made it, before anything reads it.

DIGEST_CACHE = DigestCache.load(f"{P.out}/.digest_cache.json")
EXTERNAL = {}  # external input -> its companion under results/<scale>/inputs/


def with_sha256(**outputs):
    """A job's outputs plus the companion of each (`<name>_sha256`), which digest_artifact.py writes."""
    companions = {
        f"{name}_sha256": (
            [str(companion_of(p)) for p in paths]
            if isinstance(paths, list)
            else str(companion_of(paths))
        )
        for name, paths in outputs.items()
    }
    return outputs | companions


def sha256_of(path):
    """The companion of an artifact: beside it when the workflow made it, under inputs/ for an
    external one (written at start-up, rewritten only when the input's bytes change)."""
    path = str(path).rstrip("/")
    if Path(path).resolve().is_relative_to(Path(P.out).resolve()):
        return str(companion_of(path))
    if path not in EXTERNAL:
        EXTERNAL[path] = external_companion(path, P.out)
        if workflow.is_main_process:
            record_external(path, EXTERNAL[path], DIGEST_CACHE)
    return str(EXTERNAL[path])


def by_content(**inputs):
    """Inputs judged by their bytes: each artifact (time ignored) and its companion `<name>_sha256`."""
    out = {}
    for name, paths in inputs.items():
        many = isinstance(paths, (list, tuple))
        out[name] = ancient(list(paths) if many else paths)
        out[f"{name}_sha256"] = (
            [sha256_of(p) for p in paths] if many else sha256_of(paths)
        )
    return out


@atexit.register
def save_digests():
    """Keep what this start-up hashed (once, at exit), and say when it read files to digest them:
    new, copied or edited ones, never others."""
    DIGEST_CACHE.save()
    if DIGEST_CACHE.hashed_files:
        print(
            f"digests: read {DIGEST_CACHE.hashed_files} files ({DIGEST_CACHE.hashed_bytes / 2**20:.1f} MiB) whose "
            "size or mtime moved since they were last hashed",
            file=sys.stderr,
        )


def check_artifacts():
    """Start-up: set aside every artifact whose bytes changed since its job wrote it."""
    if (
        not workflow.is_main_process
    ):  # a job's own Snakemake: the main process checked already
        return
    damaged = check_companions(companions_under(P.out), DIGEST_CACHE)
    for artifact, problems in damaged.items():
        print(
            f"warning: {artifact} is damaged ({'; '.join(problems[:3])}{' ...' if len(problems) > 3 else ''}); "
            f"set aside as {artifact}.damaged; its job is planned again",
            file=sys.stderr,
        )


check_artifacts()


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
    """How a run's FSDP processes start (the scripts shard with FSDP2 themselves): launch_ranks.py
    on one node, srun with one launch_ranks.py per node on several (lineage/workflow/cluster.py).
    """
    return launch_command(
        run.nodes, run.processes_per_node, L.resources["train"], stop_grace=STOP_GRACE_S
    )


def eval_launcher():
    """How an evaluation or sampling job starts: on GPUs one process per GPU it is given, each a
    whole replica of the model running a share of the batches (lineage/evaluation/replicas.py);
    on a CPU one process."""
    resources = L.resources["eval"]
    if L.eval.device != "cuda" or resources.gpus <= 1:
        return "python"
    return launch_command(1, resources.gpus, resources)


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
    return by_content(**inputs)


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


try:
    check_run_names()
except ConfigError as err:
    refuse(err)
