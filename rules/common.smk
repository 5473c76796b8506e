"""Config validation, the run table and the path helpers every rule file uses."""

import json
import os
import shlex
import sys
from pathlib import Path

from snakemake.utils import min_version, validate

min_version("9.19")

sys.path.insert(0, str(Path(workflow.basedir) / "workflow" / "scripts"))

from lineage.config_checks import check_config  # noqa: E402


configfile: "config.yaml"


validate(config, "../workflow/schemas/config.schema.yaml")
check_config(config)

SCALE = config["scale"]
SCALE_CFG = config["scales"][SCALE]
RECIPE = config["recipe"]
RUNS = config["runs"]
DATASETS = config["datasets"]

OUT = f"results/{SCALE}"
DATA = f"{OUT}/data"
MODELS = f"{OUT}/models"
EVAL = f"{OUT}/eval"
LOGS = f"logs/{SCALE}"
BENCH = f"{OUT}/benchmarks"
STATE = f"state/{SCALE}"  # resumable training state: outside every declared output


# Scripts run as `python ...`: put this interpreter's bin/ first on PATH so that they run in the
# environment that runs Snakemake (a rule's conda env, when deploying with conda, comes first).
BIN_FIRST = os.pathsep.join([str(Path(sys.executable).parent), os.getenv("PATH", "")])
os.environ.update(PATH=BIN_FIRST)


def runs_of(kind):
    """Run names of one kind, in config order."""
    return [name for name, run in RUNS.items() if run["kind"] == kind]


def one_of(names):
    """A wildcard regex matching exactly these names (or nothing when the list is empty)."""
    return "|".join(names) if names else "(?!x)x"


def ancestry(name):
    """The run and every run it descends from."""
    return {name}.union(*(ancestry(p) for p in RUNS[name].get("parents", [])))


STAGE1_FROM = SCALE_CFG["stage1"]["from"]
STAGE1_BUILT = (
    STAGE1_FROM != "external"
)  # by the chain base -> stage1_sft -> dpo1 -> ... -> STAGE1_FROM
# The chain's runs up to STAGE1_FROM: the part of the chain that is in the lineage.
STAGE1_CHAIN = ancestry(STAGE1_FROM) if STAGE1_BUILT else set()
BASE_BUILT = SCALE_CFG["base"]["build"]
TABLE_RUNS = [
    name for name in config["eval_table"].get("chain", []) if name in STAGE1_CHAIN
] + config["eval_table"]["columns"]
# Verifier rounds that a run of the built chain trains on (none when the chain stops before them).
VERIFIER_ROUNDS = [
    name
    for name, spec in DATASETS.items()
    if spec["kind"] == "verifier_pairs"
    and any(name in RUNS[run].get("data", []) for run in STAGE1_CHAIN)
]

SFT_RUNS = runs_of("sft")
DPO_RUNS = runs_of("dpo")
SOUP_RUNS = runs_of("soup")
PUBLISHED_RUNS = [name for name, run in RUNS.items() if not run.get("rejected", False)]


def descends_from_base(name):
    """Is this run part of the Stage-1 chain (it descends from a run of kind base)?"""
    run = RUNS[name]
    return run["kind"] == "base" or any(
        descends_from_base(p) for p in run.get("parents", [])
    )


# The chain's runs are built only up to Stage 1, and only when Stage 1 comes from the chain.
CHAIN_RUNS = [name for name in RUNS if descends_from_base(name)]
LINEAGE_RUNS = [
    name for name in PUBLISHED_RUNS if name not in CHAIN_RUNS or name in STAGE1_CHAIN
]
REJECTED_RUNS = [name for name, run in RUNS.items() if run.get("rejected", False)]


wildcard_constraints:
    run="[A-Za-z][A-Za-z0-9_]*",
    dataset="[A-Za-z][A-Za-z0-9_]*",
    part="[ABC]",


# --- paths --------------------------------------------------------------------------------------


def model_dir(run):
    """Checkpoint directory of a run: built under results/, or a given path (Base, Stage 1)."""
    kind = RUNS[run]["kind"]
    if kind == "external":
        return model_dir(STAGE1_FROM) if STAGE1_BUILT else SCALE_CFG["stage1"]["path"]
    if kind == "base" and not BASE_BUILT:
        return SCALE_CFG["base"]["path"]
    return f"{MODELS}/{run}"


def dataset_paths(name):
    """The files of a named data set: written by the data stages, or given sources."""
    kind = DATASETS[name]["kind"]
    if kind in ("winners", "verifier_pairs"):
        return [f"{DATA}/sets/{name}.jsonl"]
    if kind == "pairs":
        return [f"{DATA}/pairs.jsonl"]
    if kind == "sft_mixture":
        return list(SCALE_CFG["general_mix"]["sources"])
    if kind == "preference_mix":
        return list(SCALE_CFG["preference_mix"]["sources"])
    return [f"{DATA}/general_mix.jsonl"]


def card_winner_set():
    """The winner data set the card counts (decisive battles only, the largest repetition)."""
    sets = [
        n for n, d in DATASETS.items() if d["kind"] == "winners" and not d.get("ties")
    ]
    return max(sets, key=lambda n: DATASETS[n].get("repeat", 1))


def stage1_tokenizer():
    """The Stage-1 tokenizer (the Base model's; length filters count its tokens)."""
    if BASE_BUILT:
        return f"{OUT}/stage1/tokenizer"
    return SCALE_CFG["base"]["path"] if STAGE1_BUILT else SCALE_CFG["stage1"]["path"]


# --- training arguments -------------------------------------------------------------------------


SCHEDULE_KEYS = ("steps", "warmup_steps")


def train_settings(run):
    """The scale's training settings with this run's per-scale overrides applied."""
    overrides = RUNS[run].get("overrides", {}).get(SCALE, {})
    settings = {k: v for k, v in overrides.items() if k not in SCHEDULE_KEYS}
    return {**SCALE_CFG["train"], **settings}


def schedule_overrides(run):
    """This run's steps and warmup at this scale, where they differ from the card's."""
    overrides = RUNS[run].get("overrides", {}).get(SCALE, {})
    return {k: v for k, v in overrides.items() if k in SCHEDULE_KEYS}


def recipe_of(run):
    """Every value that shapes a training run; passed through params so a change reruns it."""
    spec, train = RUNS[run], train_settings(run)
    recipe = optimizer_recipe({**spec, **schedule_overrides(run)}, train)
    recipe["lr"] = spec["lr"] * train["lr_scale"]
    recipe["lineage_extra"] = json.dumps(
        {"card_lr": spec["lr"], "lr_scale": train["lr_scale"]}
    )
    if spec["kind"] == "dpo":
        recipe["beta"] = spec.get("beta", RECIPE["dpo_beta"])
    return recipe


def optimizer_recipe(spec, train):
    """Schedule, optimizer, batch and precision of one training job, as CLI flag values."""
    return {
        "lr": spec.get("lr"),
        "schedule": spec.get("schedule"),
        "steps": spec.get("steps"),
        "warmup_steps": spec.get("warmup_steps", RECIPE["warmup_steps"]),
        "seed": RECIPE["seed"],
        "weight_decay": RECIPE["optimizer"]["weight_decay"],
        "adam_betas": ",".join(str(b) for b in RECIPE["optimizer"]["betas"]),
        "grad_clip": RECIPE["optimizer"]["grad_clip"],
        "global_batch_rows": train["global_batch_rows"],
        "micro_batch_rows": train["micro_batch_rows"],
        "max_length": train["max_length"],
        "precision": train["precision"],
        "save_every": train["save_every"],
        "activation_checkpointing": train["activation_checkpointing"],
    }


def cli_args(values):
    """Render a dict as shell-quoted `--key value` flags (keys with _ become -)."""
    parts = []
    for key, value in values.items():
        flag = f"--{key.replace('_', '-')}"
        if isinstance(value, bool):
            parts.append(flag if value else "")
        else:
            parts.append(f"{flag} {shlex.quote(str(value))}")
    return " ".join(p for p in parts if p)


def launcher(run):
    """`accelerate launch` of this run's FSDP processes (the scripts shard with FSDP2 themselves)."""
    processes = train_settings(run)["processes"]
    return (
        "python -m accelerate.commands.launch --config_file workflow/accelerate/fsdp2.yaml"
        f" --num_processes {processes}"
    )


# Five minutes before a training job's time limit Slurm sends SIGTERM to its processes: the
# trainer saves its state after the current step and exits 143, and the profile's `retries`
# resubmit it to resume (lineage/training/preemption.py). Ignored when run without Slurm.
TRAIN_STOP_SIGNAL = "--signal=TERM@300"


def job_resources(kind):
    """Resources of a job class at this scale, in the names the Slurm executor understands."""
    res = SCALE_CFG["resources"][kind]
    out = {
        "mem_mb": res["mem_mb"],
        "runtime": res["runtime"],
        "cpus_per_task": res["cpus"],
    }
    if res.get("gpus"):
        out["gpu"] = res["gpus"]
        out["tasks_per_gpu"] = 0
    if kind == "train":
        out["slurm_extra"] = TRAIN_STOP_SIGNAL
    return out


# --- inputs and flags of the training and eval rules ------------------------------------------

TRAIN_CODE = [
    "workflow/scripts/train_sft.py",
    "workflow/scripts/train_dpo.py",
    *sorted(str(p) for p in Path("workflow/scripts/lineage").glob("*.py")),
    *sorted(str(p) for p in Path("workflow/scripts/lineage/training").glob("*.py")),
]


def train_inputs(wc):
    run = RUNS[wc.run]
    return {
        "init": model_dir(run["parents"][0]),
        "data": [path for d in run["data"] for path in dataset_paths(d)],
        "script": f"workflow/scripts/train_{run['kind']}.py",
        "code": TRAIN_CODE,
    }


def data_flags(wc, input):
    return " ".join(f"--data {shlex.quote(d)}" for d in input.data)


EVAL_CFG = SCALE_CFG["eval"]
EVAL_CODE = sorted(
    str(p) for p in Path("workflow/scripts/lineage/evaluation").glob("*.py")
)


EVAL_SETTINGS = (
    f"--device {EVAL_CFG['device']} --dtype {EVAL_CFG['dtype']}"
    f" --batch-size {EVAL_CFG['batch_size']} --seed {RECIPE['seed']}"
)


def eval_common(wc):
    return f"--model {shlex.quote(model_dir(wc.run))} --run {wc.run} {EVAL_SETTINGS}"


def table_flags(wc, input):
    return " ".join(f"--result {r}" for r in input.results)


# --- groups of targets --------------------------------------------------------------------------

EVAL_PARTS = {
    "mmlu": ["A", "B"],
    "gsm8k": ["A", "B"],
    "ifeval": ["A", "B", "C"],
    "degen": ["A"],
    "margin": ["A"],
}


EVAL_PART_NAMES = [
    f"{bench}_{part}" for bench, parts in EVAL_PARTS.items() for part in parts
]


def eval_files(run):
    """Every benchmark result of one run."""
    return [f"{EVAL}/{run}/{name}.json" for name in EVAL_PART_NAMES]


def eval_run_flags(pairs):
    """eval_run.py's --items/--sizes flags for every benchmark (the margin reads the holdout pairs)."""
    flags = []
    for bench, path in EVAL_CFG["items"].items():
        sizes = ",".join(str(n) for n in EVAL_CFG["sizes"][bench])
        flags += [f"--items {bench}={shlex.quote(path)}", f"--sizes {bench}={sizes}"]
    return " ".join(flags + [f"--items margin={shlex.quote(pairs)}"])


def data_targets():
    """Every data stage output and the audit."""
    sets = sorted(  # verifier pairs need a trained model: they are built with the chain
        {
            p
            for n, d in DATASETS.items()
            if d["kind"] != "verifier_pairs"
            for p in dataset_paths(n)
        }
    )
    return sets + [
        f"{DATA}/holdout_pairs.jsonl",
        f"{DATA}/audit.json",
        f"{DATA}/audit.md",
        f"{DATA}/audit.html",
    ]
