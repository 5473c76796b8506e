"""The lineage as one typed object, built once from the validated config and read by every rule file.

`build_lineage(config)` resolves, for the chosen scale, each run's checkpoint directory, data
files, training recipe or soup weights, and the job resources; which runs the lineage holds here
(the Stage-1 chain only when it is built), which columns the table has, which verifier rounds run.
Building it is the config's validation: every problem that can be known before a job starts
raises a ConfigError naming the config key. Nothing here touches the filesystem except the
existence checks of given inputs, and nothing imports torch, so Snakemake parses in a second.
"""

from __future__ import annotations

import json

import dataclasses
import math
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from lineage.workflow.cluster import Resources, checkpoint_params, host_memory_mb
from lineage.evaluation.benchmark import Benchmark
from lineage.evaluation.benchmarks import BENCHMARKS
from lineage.shards import CheckpointError
from lineage.soup import methods as soup_methods
from lineage.training.recipe import RECIPES, RecipeError, TrainRecipe

TRAINED = ("sft", "dpo")
# Which data set kinds each trainable run kind reads.
DATA_KINDS = {"sft": ("winners", "general_mix", "sft_mixture"), "dpo": ("pairs", "preference_mix", "verifier_pairs")}
# The keys of a run's `overrides.<scale>` that replace the run's own values; the others replace
# `scales.<scale>.train` keys.
SCHEDULE_KEYS = ("steps", "warmup_steps")


class ConfigError(ValueError):
    """config.yaml describes a lineage that cannot be built; the message names the key."""


def flags(name: str, values: Iterable[Any]) -> str:
    """`--name v1 --name v2 ...`, each value shell-quoted, in the given order: how the rules put
    lists on a script's command line (here, where no script imports it, so its edits rerun nothing)."""
    return " ".join(f"--{name} {shlex.quote(str(v))}" for v in values)


@dataclass(frozen=True)
class Paths:
    """Where one scale's files go. Resumable state lives outside `out`: Snakemake deletes outputs before a rerun."""

    scale: str
    out = property(lambda self: f"results/{self.scale}")
    data = property(lambda self: f"{self.out}/data")
    models = property(lambda self: f"{self.out}/models")
    eval = property(lambda self: f"{self.out}/eval")
    audit = property(lambda self: f"{self.out}/audit")
    metrics = property(lambda self: f"{self.out}/metrics")
    reference = property(lambda self: f"{self.out}/reference_logprobs")
    bench = property(lambda self: f"{self.out}/benchmarks")
    logs = property(lambda self: f"logs/{self.scale}")
    state = property(lambda self: f"state/{self.scale}")


@dataclass(frozen=True)
class Dataset:
    name: str
    kind: str
    files: tuple[str, ...]  # where its rows are: written by a data stage, or given sources
    repeat: int = 1
    ties: bool = False
    sampler: str | None = None  # verifier_pairs: the run whose samples make the pairs
    trains: str | None = None  # verifier_pairs: the run that trains on them (recorded in every row)


@dataclass(frozen=True)
class SoupRecipe:
    """A soup: the averaging method of lineage/soup/methods.py and one weight per parent, in order."""

    method: str
    weights: tuple[float, ...]


@dataclass(frozen=True)
class Run:
    name: str
    kind: str  # base | external | sft | dpo | soup
    directory: str  # its checkpoint: written by this workflow, or given by path
    built: bool  # a job of this workflow writes `directory`
    parents: tuple[str, ...] = ()
    data: tuple[str, ...] = ()
    rejected: bool = False
    recipe: TrainRecipe | SoupRecipe | None = None
    nodes: int = 1  # Slurm nodes of its training job
    processes_per_node: int = 1  # training processes (FSDP ranks) on each node
    sharding: str = "full"  # full: shard over every rank | hybrid: shard within a node, replicate across nodes
    accumulate: str = "sharded"  # sharded: reduce every micro-batch | unsharded: once a step (memory for speed)
    expert_parallel: int = 1  # routed experts split over this many ranks of a node (lineage/training/expert_parallel.py)
    device: str = "cpu"  # training device: cpu (gloo) | cuda (nccl)
    save_every: int = 0  # resumable state every k steps (never changes the weights)
    lineage_extra: Mapping[str, Any] = field(default_factory=dict)  # recorded in lineage.json beside the recipe
    card: Mapping[str, Any] = field(default_factory=dict)

    @property
    def world_size(self) -> int:
        return self.nodes * self.processes_per_node

    @property
    def effective_sharding(self) -> str:
        """On one node hybrid sharding is full sharding (nothing to replicate across)."""
        return self.sharding if self.nodes > 1 else "full"


@dataclass(frozen=True)
class EvalPart:
    """One benchmark part of a run's evaluation: what changes its result, and nothing else."""

    benchmark: str
    part: str
    items: str
    sizes: tuple[int, ...] | None  # items per part of this benchmark; None: the whole set is part A

    @property
    def name(self) -> str:
        return f"{self.benchmark}_{self.part}"


@dataclass(frozen=True)
class EvalSettings:
    group_by: str  # run: one job evaluates every part of a run; part: one job per part
    device: str
    dtype: str
    batch_size: int
    max_batch_tokens: int
    pack_tokens: int
    max_new_tokens: int
    cache: str
    bucket: int
    seed: int
    parts: tuple[EvalPart, ...]

    def options(self, benchmark: Benchmark) -> dict[str, Any]:
        """The settings that change a result of `benchmark` (generation length only where it generates)."""
        options = {"device": self.device, "dtype": self.dtype, "batch_size": self.batch_size,
                   "max_batch_tokens": self.max_batch_tokens, "seed": self.seed}
        generation = {"max_new_tokens": self.max_new_tokens, "cache": self.cache, "bucket": self.bucket}
        return options | (generation if benchmark.generates else {"pack_tokens": self.pack_tokens})

    def job_parts(self, part: str | None = None) -> list[EvalPart]:
        """The parts one evaluation job runs: all of a run's (group_by run), or the one named."""
        return list(self.parts) if self.group_by == "run" else [p for p in self.parts if p.name == part]

    def flags(self, parts: list[EvalPart]) -> str:
        """eval_model.py's flags for these parts: their items and sizes, and the settings that change
        their results, in a fixed order (so the text changes only when a result would)."""
        benchmarks = {p.benchmark: p for p in parts}
        options: dict[str, Any] = {}
        for name in benchmarks:
            options |= self.options(BENCHMARKS[name])
        words = [flags("items", [f"{name}={p.items}" for name, p in benchmarks.items()]),
                 flags("sizes", [f"{name}={','.join(map(str, p.sizes))}" for name, p in benchmarks.items() if p.sizes]),
                 flags("parts", [",".join(p.name for p in parts)])]
        words += [flags(key.replace("_", "-"), [value]) for key, value in sorted(options.items())]
        return " ".join(w for w in words if w)


@dataclass(frozen=True)
class Lineage:
    scale: str
    paths: Paths
    settings: Mapping[str, Any]  # config["scales"][scale] (sources, sizes, lengths), validated
    recipe: Mapping[str, Any]  # config["recipe"], validated
    runs: Mapping[str, Run]  # every run of the config; `in_lineage` says which this scale builds
    datasets: Mapping[str, Dataset]
    in_lineage: tuple[str, ...]  # runs this scale holds (the chain only up to Stage 1, and only if built)
    stage1: str  # the run whose checkpoint is Stage 1: the chain's last run, or the external run
    table_runs: tuple[str, ...]  # the card's table columns (the chain's first, when built)
    published: str
    verifier_rounds: tuple[str, ...]  # verifier data sets the built chain trains on
    eval: EvalSettings
    resources: Mapping[str, Resources]  # per job class: data, train, soup, eval (train's mem_mb planned when auto)

    def model_dir(self, run: str) -> str:
        return self.runs[run].directory

    def runs_of(self, *kinds: str, built: bool = True) -> list[str]:
        """Runs of these kinds in this scale's lineage (with `built`, only those a job writes)."""
        return [n for n in self.in_lineage if self.runs[n].kind in kinds and (self.runs[n].built or not built)]

    @property
    def rejected_runs(self) -> tuple[str, ...]:
        return tuple(n for n in self.in_lineage if self.runs[n].rejected)

    @property
    def published_runs(self) -> tuple[str, ...]:
        return tuple(n for n in self.in_lineage if not self.runs[n].rejected)

    def reference_of(self, run: str) -> str:
        """The DPO run whose `<run>_reference` job scores this run's pairs: the first in lineage order of
        those that share the parent, the pairs and every setting that changes the scores."""
        def key(name: str) -> tuple:
            spec = self.runs[name]
            return (spec.parents[0], spec.data, spec.recipe.max_length, spec.recipe.truncation,
                    spec.recipe.precision, spec.device)

        return next(name for name in self.runs_of("dpo") if key(name) == key(run))

    def reference_file(self, run: str) -> str:
        """The reference log-probs a DPO run trains against (written by `<reference_of(run)>_reference`)."""
        return f"{self.paths.reference}/{self.reference_of(run)}.jsonl"

    def data_files(self, run: str) -> list[str]:
        return [path for name in self.runs[run].data for path in self.datasets[name].files]

    @property
    def card_winner_set(self) -> Dataset:
        """The winner data set the card counts (decisive battles only, the largest repetition)."""
        sets = [d for d in self.datasets.values() if d.kind == "winners" and not d.ties]
        return max(sets, key=lambda d: (d.repeat, d.name))

    @property
    def stage1_tokenizer(self) -> str:
        """The tokenizer of the model Stage 2 trains (length filters count its tokens): the one built
        here for the embedded Base, else the given Base's or Stage-1 checkpoint's own."""
        if self.runs[self.stage1].kind == "external":
            return self.model_dir(self.stage1)
        if self.settings["base"]["build"]:
            return f"{self.paths.out}/stage1/tokenizer"
        return self.settings["base"]["path"]

    def eval_parts(self, run: str) -> list[str]:
        """The result files of every benchmark part of `run`."""
        return [f"{self.paths.eval}/{run}/{p.name}.json" for p in self.eval.parts]

    @property
    def tables(self) -> dict[str, tuple[str, ...]]:
        """The eval tables and their columns: the card's, and the card's plus the rejected runs."""
        return {"eval_table": self.table_runs, "eval_table_ablations": (*self.table_runs, *self.rejected_runs)}

    def references(self, run: str) -> tuple[str, ...]:
        """The runs a table column is compared with item by item: its parents in this lineage, then
        the published model."""
        parents = [p for p in self.runs[run].parents if p in self.in_lineage]
        return tuple(dict.fromkeys(r for r in (*parents, self.published) if r != run))

    def table_runs_evaluated(self, table: str) -> tuple[str, ...]:
        """A table's columns and every run they are compared with."""
        columns = self.tables[table]
        return tuple(dict.fromkeys([*columns, *(r for c in columns for r in self.references(c))]))

    def ancestry(self, run: str) -> list[str]:
        """`run` and every run it was built from in this lineage, in lineage order."""
        found, frontier = {run}, [run]
        while frontier:
            for parent in self.runs[frontier.pop()].parents:
                if parent in self.in_lineage and parent not in found:
                    found.add(parent)
                    frontier.append(parent)
        if self.runs[self.stage1].kind != "external":  # the Stage-1 copy stands for the chain's last run
            for name in list(found):
                if self.runs[name].kind == "external":
                    found |= set(self.ancestry(self.stage1))
        return [name for name in self.in_lineage if name in found]

    def card_meta(self, publish: Mapping[str, Any]) -> dict[str, Any]:
        """What the published model's card says that the lineage knows (lineage/evaluation/card.py)."""
        runs = self.ancestry(self.published)
        base = next((self.runs[n] for n in self.runs if self.runs[n].kind == "base"), None)
        sources = [*self.settings["general_mix"]["sources"], *self.settings["preference_mix"]["sources"]]
        hub_ids = [s for s in sources if s.count("/") == 1 and not s.endswith((".jsonl", ".json"))]
        lineage = []
        for name in runs:
            run = self.runs[name]
            recipe = dataclasses.asdict(run.recipe) if run.recipe is not None else None
            note = {"external": f"the Stage-1 checkpoint ({run.directory})", "base": "the Base model"}.get(run.kind, "")
            lineage.append({"run": name, "kind": run.kind, "parents": list(run.parents), "data": list(run.data),
                            "recipe": recipe, "note": note})
        items = {p.benchmark: p.items for p in self.eval.parts}
        return {**publish, "scale": self.scale, "lineage": lineage, "items": items,
                "base_model": base.card.get("name") if base and not self.settings["base"]["build"] else None,
                "datasets": hub_ids}

    @property
    def published_dir(self) -> str:
        return f"{self.paths.out}/published/{self.published}"

    @property
    def published_files(self) -> list[str]:
        """The published repository's files that every model has (the weights' shard names depend on
        its size): the publish rule's outputs. Not the directory itself: Snakemake writes a
        `.snakemake_timestamp` into a directory output, which an upload of the folder would ship."""
        return [f"{self.published_dir}/{name}" for name in ("README.md", "config.json", "system_prompt.txt",
                                                             "lineage.json")]

    def table_files(self, table: str) -> list[str]:
        return [f"{self.paths.out}/{table}.{ext}" for ext in ("tsv", "md", "png", "paired.tsv")]

    @property
    def data_targets(self) -> list[str]:
        """Every data-stage output and the data audit (a verifier round needs a model: the chain's)."""
        built = sorted({f for d in self.datasets.values() if d.kind in ("winners", "pairs", "general_mix")
                        for f in d.files})
        audit = [f"{self.paths.data}/audit.{ext}" for ext in ("json", "md", "html")]
        return [*built, f"{self.paths.data}/holdout_pairs.jsonl", *audit]


# --------------------------------------------------------------------------------------------
# Building it


def build_lineage(config: Mapping[str, Any], *, base_dir: str | Path = ".") -> Lineage:
    """The typed lineage of `config` (already checked against the JSON schema) at its scale."""
    scale = config["scale"]
    settings, recipe = config["scales"][scale], config["recipe"]
    specs, data_specs = config["runs"], config["datasets"]
    _check_graph(specs, data_specs)
    paths = Paths(scale)

    stage1_from = settings["stage1"]["from"]
    _check_stage1_source(config, specs)
    externals = [n for n, s in specs.items() if s["kind"] == "external"]
    if len(externals) != 1:
        raise ConfigError(f"runs: {len(externals)} runs of kind external ({', '.join(externals) or 'none'}); the "
                          "lineage has one, the Stage-1 checkpoint Stage 2 starts from")
    (external,) = externals
    chain_built = stage1_from != "external"
    chain = _ancestry(stage1_from, specs) if chain_built else set()
    in_lineage = tuple(n for n in _lineage_order(specs, data_specs, stage1_from)
                       if not _descends_from_base(n, specs) or n in chain)
    stage1 = stage1_from if chain_built else external

    directories = {name: _directory(name, specs, settings, paths, stage1) for name in specs}
    datasets = {name: _dataset(name, spec, specs, settings, paths) for name, spec in data_specs.items()}
    runs = {name: _run(name, spec, settings, recipe, scale, directories, name in in_lineage)
            for name, spec in specs.items()}

    table = config["eval_table"]
    table_runs = tuple([n for n in table.get("chain", []) if n in chain] + list(table["columns"]))
    rounds = [n for n, d in datasets.items() if d.kind == "verifier_pairs" and d.trains in chain]
    verifier_rounds = tuple(sorted(rounds, key=lambda n: in_lineage.index(datasets[n].trains)))
    lineage = Lineage(
        scale=scale, paths=paths, settings=settings, recipe=recipe, runs=runs, datasets=datasets,
        in_lineage=in_lineage, stage1=stage1, table_runs=table_runs, published=table["published"],
        verifier_rounds=verifier_rounds, eval=_eval_settings(settings["eval"], recipe["seed"], paths),
        resources=_resources(settings, scale, runs, base_dir),
    )
    _check_lineage(lineage, config)
    _check_paths(lineage, Path(base_dir))
    _check_expert_parallel(lineage, Path(base_dir))
    return lineage


def _routed_experts_of_base(lineage: Lineage, base: Path) -> int | None:
    """Routed experts per layer of the models this scale trains: the built Base's shape, or the
    config.json of the checkpoint given by path (None when neither says; 0 for a dense model)."""
    from types import SimpleNamespace

    # imports transformers: read only when a run asks for expert parallelism
    from lineage.modeling import SHAPES, routed_experts

    settings = lineage.settings
    if settings["stage1"]["from"] != "external" and settings["base"]["build"]:
        values = SHAPES.get((settings["base"]["family"], settings["base"]["model_size"]), {})
    else:
        source = settings["stage1"]["path"] if settings["stage1"]["from"] == "external" else settings["base"]["path"]
        config = base / source / "config.json"
        if not config.is_file():
            return None
        values = json.loads(config.read_text())
    return routed_experts(SimpleNamespace(**values)) or 0


def _check_expert_parallel(lineage: Lineage, base: Path) -> None:
    """An expert-parallel degree must divide a node's processes and each MoE layer's experts."""
    degrees = {name: run.expert_parallel for name, run in lineage.runs.items()
               if run.kind in ("sft", "dpo") and run.built and run.expert_parallel > 1}
    if not degrees:
        return
    experts = _routed_experts_of_base(lineage, base)
    for name, degree in degrees.items():
        run = lineage.runs[name]
        where = f"runs.{name} (scales.{lineage.scale}.train.expert_parallel: {degree})"
        if run.processes_per_node % degree:
            raise ConfigError(f"{where} does not divide the {run.processes_per_node} processes of a node; experts "
                              "are split within a node")
        if experts == 0:
            raise ConfigError(f"{where}: the model has no routed experts; set expert_parallel: 1")
        if experts and experts % degree:
            raise ConfigError(f"{where} does not divide the {experts} routed experts of a layer")


def _lineage_order(specs: Mapping[str, Any], data_specs: Mapping[str, Any], stage1_from: str) -> list[str]:
    """Every run after what it is built from (parents, verifier samplers; Stage 1 after the chain's
    last run), then by name: an order of the lineage itself, so that tables and audits never follow
    the order of keys in config.yaml."""
    depth: dict[str, int] = {}

    def depth_of(name: str) -> int:
        if name not in depth:
            spec = specs[name]
            before = [*spec.get("parents", []), *(data_specs[d]["model"] for d in spec.get("data", [])
                                                   if "model" in data_specs[d])]
            if spec["kind"] == "external" and stage1_from != "external":
                before.append(stage1_from)
            depth[name] = 1 + max((depth_of(b) for b in before), default=-1)
        return depth[name]

    return sorted(specs, key=lambda name: (depth_of(name), name))


def _ancestry(name: str, specs: Mapping[str, Any]) -> set[str]:
    return {name}.union(*(_ancestry(p, specs) for p in specs[name].get("parents", [])))


def _descends_from_base(name: str, specs: Mapping[str, Any]) -> bool:
    """Part of the Stage-1 chain: the run is the Base or starts from it."""
    return any(specs[root]["kind"] == "base" for root in _roots(name, specs))


def _directory(name: str, specs, settings, paths: Paths, stage1: str) -> str:
    kind = specs[name]["kind"]
    if kind == "external":
        return settings["stage1"]["path"] if stage1 == name else f"{paths.models}/{stage1}"
    if kind == "base" and not settings["base"]["build"]:
        return settings["base"]["path"]
    return f"{paths.models}/{name}"


def _dataset(name: str, spec: Mapping[str, Any], specs, settings, paths: Paths) -> Dataset:
    kind = spec["kind"]
    files = {
        "winners": (f"{paths.data}/sets/{name}.jsonl",),
        "verifier_pairs": (f"{paths.data}/sets/{name}.jsonl",),
        "pairs": (f"{paths.data}/pairs.jsonl",),
        "general_mix": (f"{paths.data}/general_mix.jsonl",),
        "sft_mixture": tuple(settings["general_mix"]["sources"]),
        "preference_mix": tuple(settings["preference_mix"]["sources"]),
    }[kind]
    trains = min((run for run, s in specs.items() if name in s.get("data", [])), default=None)
    return Dataset(name, kind, files, repeat=spec.get("repeat", 1), ties=spec.get("ties", False),
                   sampler=spec.get("model"), trains=trains)


def _run(name: str, spec: Mapping[str, Any], settings, recipe, scale: str, directories, in_lineage: bool) -> Run:
    kind = spec["kind"]
    built = in_lineage and (kind in (*TRAINED, "soup") or (kind == "base" and settings["base"]["build"]))
    common = dict(name=name, kind=kind, directory=directories[name], built=built,
                  parents=tuple(spec.get("parents", ())), data=tuple(spec.get("data", ())),
                  rejected=spec.get("rejected", False), card=spec.get("card", {}))
    if kind == "soup":
        count = len(common["parents"])
        weights = tuple(float(w) for w in spec.get("weights", [1 / count] * count))
        method = spec.get("method", soup_methods.DEFAULT)
        if method not in soup_methods.METHODS:
            raise ConfigError(f"runs.{name}.method: {method!r} is not a soup method; known (lineage/soup/methods.py "
                              f"METHODS): {', '.join(soup_methods.METHODS)}")
        return Run(**common, recipe=SoupRecipe(method=method, weights=weights))
    if kind not in TRAINED:
        return Run(**common)
    overrides = spec.get("overrides", {}).get(scale, {})
    train = {**settings["train"], **{k: v for k, v in overrides.items() if k not in SCHEDULE_KEYS}}
    schedule = {**spec, **{k: v for k, v in overrides.items() if k in SCHEDULE_KEYS}}
    values = {
        "lr": spec["lr"] * train["lr_scale"],
        "schedule": spec["schedule"],
        "steps": schedule["steps"],
        "warmup_steps": schedule.get("warmup_steps", recipe["warmup_steps"]),
        "min_lr_ratio": recipe["min_lr_ratio"],
        "seed": recipe["seed"],
        "weight_decay": recipe["optimizer"]["weight_decay"],
        "adam_betas": recipe["optimizer"]["betas"],
        "adam_eps": recipe["optimizer"]["eps"],
        "grad_clip": recipe["optimizer"]["grad_clip"],
        "truncation": recipe["truncation"],
        **{k: train[k] for k in ("global_batch_rows", "micro_batch_rows", "max_length", "precision",
                                 "activation_checkpointing")},
    }
    values |= {k: train["speed"][k] for k in ("packing", "pack_tokens", "packed_attention", "ce_chunk_tokens",
                                               "fused_loss", "experts", "compile")}
    if kind == "dpo":
        values["beta"] = spec.get("beta", recipe["dpo_beta"])
    try:
        resolved = RECIPES[kind].from_mapping(values, complete=True)
    except RecipeError as err:
        raise ConfigError(f"runs.{name} at scale {scale} (with scales.{scale}.train and recipe): {err}") from None
    return Run(**common, recipe=resolved, nodes=train["nodes"], processes_per_node=train["processes"],
               sharding=train["sharding"], accumulate=train["accumulate"],
               expert_parallel=train.get("expert_parallel", 1), device=train["device"],
               save_every=train["save_every"],
               lineage_extra={"card_lr": float(spec["lr"]), "lr_scale": float(train["lr_scale"])})


def _resources(settings: Mapping[str, Any], scale: str, runs: Mapping[str, Run], base_dir) -> dict[str, Resources]:
    """Each job class's request; training's memory per node planned from the model when `auto`."""
    out = {kind: Resources(**res) for kind, res in settings["resources"].items()}
    train = out["train"]
    if train.mem_mb == "auto":
        source = settings["stage1"]["path"] if settings["stage1"]["from"] == "external" else (
            settings["base"]["path"] if not settings["base"]["build"] else None)
        key = f"scales.{scale}.resources.train.mem_mb"
        if source is None:
            raise ConfigError(f"{key}: auto plans host memory from a checkpoint given by path (the Stage-1 "
                              "checkpoint or the Base), but this scale builds its Base; give a number of MB")
        if not (Path(base_dir) / source).exists():
            return out  # _check_paths names the missing checkpoint
        try:
            params = checkpoint_params(Path(base_dir) / source)
        except (OSError, ValueError, CheckpointError) as err:
            raise ConfigError(f"{key}: auto cannot count the parameters of {source}: {err}") from None
        per_node = max((r.processes_per_node for r in runs.values() if r.kind in TRAINED), default=1)
        out["train"] = replace(train, mem_mb=host_memory_mb(params, per_node))
    return out


def _eval_settings(spec: Mapping[str, Any], seed: int, paths: Paths) -> EvalSettings:
    """The parts of every benchmark, with their item files and sizes: the scale's `eval.items` and
    `eval.sizes`, else (where the scale's `eval.unlisted` is `sample`) the module's shipped sample."""
    sized = {b.name: b for b in BENCHMARKS.values() if b.sized}
    given = {key: spec.get(key) or {} for key in ("items", "sizes")}
    for key, values in given.items():
        unknown = sorted(set(values) - set(sized))
        if unknown:
            raise ConfigError(f"eval.{key}: unknown {', '.join(unknown)} (the benchmarks with item files, "
                              f"modules of lineage/evaluation/benchmarks: {', '.join(sized)})")
    parts = []
    for bench in BENCHMARKS.values():
        if not bench.sized:
            items, sizes = f"{paths.data}/{bench.items_from}", None
        elif bench.name in given["items"]:
            if bench.name not in given["sizes"] and bench.sample is None:
                raise ConfigError(f"eval.sizes: missing {bench.name} (eval.items names its file; give the items "
                                  f"of each of its parts {', '.join(bench.parts)})")
            items = given["items"][bench.name]
            sizes = tuple(given["sizes"].get(bench.name) or bench.sample.sizes)
        elif spec["unlisted"] == "sample" and bench.sample is not None:
            items = bench.sample.items
            sizes = tuple(given["sizes"].get(bench.name) or bench.sample.sizes)
        else:
            raise ConfigError(f"eval.items: missing {bench.name} (lineage/evaluation/benchmarks/{bench.name}.py); "
                              "this scale's eval.unlisted is error: name its item file and sizes")
        if sizes is not None and len(sizes) != len(bench.parts):
            raise ConfigError(f"eval.sizes.{bench.name}: {len(sizes)} sizes for the {len(bench.parts)} parts "
                              f"({', '.join(bench.parts)}) of {bench.name}")
        parts += [EvalPart(bench.name, part, items, sizes) for part in bench.parts]
    return EvalSettings(group_by=spec["group_by"], device=spec["device"], dtype=spec["dtype"],
                        batch_size=spec["batch_size"], max_batch_tokens=spec["max_batch_tokens"],
                        pack_tokens=spec["pack_tokens"], max_new_tokens=spec["max_new_tokens"], cache=spec["cache"],
                        bucket=spec["bucket"], seed=seed, parts=tuple(parts))


# --------------------------------------------------------------------------------------------
# Checks a JSON schema cannot express


def _check_graph(specs: Mapping[str, Any], data_specs: Mapping[str, Any]) -> None:
    """Parents and data sets exist, kinds fit, weights fit, no cycles, soups share one root."""
    for name, spec in data_specs.items():
        if spec["kind"] == "verifier_pairs" and spec.get("model") not in specs:
            raise ConfigError(f"datasets.{name}.model: {spec.get('model')!r} is not a run in `runs`")
    for name, spec in specs.items():
        kind, parents = spec["kind"], spec.get("parents", [])
        if kind in ("external", "base") and parents:
            raise ConfigError(f"runs.{name}.parents: a {kind} run is given by path or built from scratch; "
                              "it has no parents")
        if kind in TRAINED and len(parents) != 1:
            raise ConfigError(f"runs.{name}.parents: a {kind} run starts from exactly one parent, got {len(parents)}")
        for parent in parents:
            if parent not in specs:
                raise ConfigError(f"runs.{name}.parents: {parent!r} is not a run in `runs` "
                                  f"(known runs: {', '.join(sorted(specs))})")
            if parent == name:
                raise ConfigError(f"runs.{name}.parents: a run cannot be its own parent")
        if len(set(parents)) != len(parents):
            raise ConfigError(f"runs.{name}.parents: {parents} names a parent twice; a soup weighs each parent once "
                              "(give it a larger weight instead)")
        for dataset in spec.get("data", []):
            if dataset not in data_specs:
                raise ConfigError(f"runs.{name}.data: {dataset!r} is not a data set in `datasets` "
                                  f"(known: {', '.join(sorted(data_specs))})")
            allowed = DATA_KINDS.get(kind, ())
            if data_specs[dataset]["kind"] not in allowed:
                what = "preference pairs" if kind == "dpo" else "chat rows"
                raise ConfigError(f"runs.{name}.data: an {kind} run needs {what} (a data set of kind "
                                  f"{' | '.join(allowed)}), {dataset!r} is {data_specs[dataset]['kind']}")
        if kind == "soup" and "weights" in spec:
            weights = spec["weights"]
            if len(weights) != len(parents):
                raise ConfigError(f"runs.{name}.weights: {len(weights)} weights for {len(parents)} parents")
            if not math.isclose(sum(weights), 1.0, abs_tol=1e-6):
                raise ConfigError(f"runs.{name}.weights: weights sum to {sum(weights):g}; they must sum to 1")
    for name in specs:
        _check_acyclic(name, specs, data_specs)
    for name, spec in specs.items():
        if spec["kind"] == "soup":
            roots = {parent: _roots(parent, specs) for parent in spec["parents"]}
            if len(set().union(*roots.values())) != 1:
                detail = "; ".join(f"{parent} from {', '.join(sorted(r))}" for parent, r in roots.items())
                raise ConfigError(
                    f"runs.{name}.parents: a soup averages runs of one initialisation, but these descend from "
                    f"different roots ({detail}); linear interpolation between them is not meaningful"
                )


def _check_acyclic(start: str, specs, data_specs) -> None:
    """Depth-first over parents and the models that sample a run's verifier pairs; a run met twice
    on the path is a cycle."""
    path: list[str] = []

    def visit(name: str) -> None:
        if name in path:
            raise ConfigError(f"runs.{start}.parents: the lineage has a cycle: "
                              f"{' -> '.join([*path[path.index(name):], name])}")
        path.append(name)
        samplers = [data_specs[d]["model"] for d in specs[name].get("data", []) if "model" in data_specs.get(d, {})]
        for parent in [*specs[name].get("parents", []), *samplers]:
            visit(parent)
        path.pop()

    visit(start)


def _roots(name: str, specs) -> set[str]:
    parents = specs[name].get("parents", [])
    return {name} if not parents else set().union(*(_roots(p, specs) for p in parents))


def _check_stage1_source(config: Mapping[str, Any], specs) -> None:
    """`scales.<scale>.stage1.from` is external or a trained run that does not itself start from Stage 1."""
    for scale, settings in config["scales"].items():
        source = settings["stage1"]["from"]
        if source == "external":
            continue
        key = f"scales.{scale}.stage1.from"
        if source not in specs or specs[source]["kind"] not in TRAINED:
            trained = ", ".join(n for n, s in specs.items() if s["kind"] in TRAINED)
            raise ConfigError(f"{key}: {source!r} must be 'external' or a trained run of the chain ({trained})")
        if any(specs[r]["kind"] == "external" for r in _roots(source, specs)):
            raise ConfigError(f"{key}: {source!r} descends from the Stage-1 checkpoint itself; "
                              "name the last run of the chain that starts from the base model")


def _check_lineage(lineage: Lineage, config: Mapping[str, Any]) -> None:
    table = config["eval_table"]
    for key in ("chain", "columns"):
        for column in table.get(key, []):
            if column not in lineage.runs:
                raise ConfigError(f"eval_table.{key}: {column!r} is not a run in `runs`")
    if table["published"] not in table["columns"]:
        raise ConfigError(f"eval_table.published: {table['published']!r} must be one of eval_table.columns")
    for name in lineage.table_runs:
        if name not in lineage.in_lineage:
            raise ConfigError(f"eval_table.columns: {name!r} is not part of the lineage at scale {lineage.scale}")
    for name in lineage.in_lineage:
        run = lineage.runs[name]
        if isinstance(run.recipe, TrainRecipe) and run.recipe.global_batch_rows % (
            run.recipe.micro_batch_rows * run.world_size
        ):
            recipe, procs = run.recipe, run.world_size
            fits = [m for m in range(1, recipe.global_batch_rows + 1) if recipe.global_batch_rows % (m * procs) == 0]
            raise ConfigError(
                f"runs.{name}: global batch {recipe.global_batch_rows} rows cannot be split into micro-batches of "
                f"{recipe.micro_batch_rows} rows over {procs} processes (scales.{lineage.scale}.train / "
                f"runs.{name}.overrides.{lineage.scale}); use micro_batch_rows in {fits[:6]} or a global batch "
                f"divisible by {recipe.micro_batch_rows * procs}"
            )


def _check_paths(lineage: Lineage, base: Path) -> None:
    """Inputs given by path exist (the chain's only when the chain is built)."""
    scale, settings = lineage.scale, lineage.settings
    paths = {f"scales.{scale}.export.path": settings["export"]["path"]}
    if settings["stage1"]["from"] == "external":
        paths[f"scales.{scale}.stage1.path"] = settings["stage1"]["path"]
    else:
        if not settings["base"]["build"]:
            paths[f"scales.{scale}.base.path"] = settings["base"]["path"]
        paths[f"scales.{scale}.verifier.prompts"] = settings["verifier"]["prompts"]
        for number, source in enumerate(settings["preference_mix"]["sources"]):
            paths[f"scales.{scale}.preference_mix.sources[{number}]"] = source
        for number, source in enumerate(settings["general_mix"]["sources"]):
            paths[f"scales.{scale}.general_mix.sources[{number}]"] = source
    listed = settings["eval"].get("items") or {}
    for part in lineage.eval.parts:
        if BENCHMARKS[part.benchmark].sized:
            key = (f"scales.{scale}.eval.items.{part.benchmark}" if part.benchmark in listed
                   else f"the sample items of lineage/evaluation/benchmarks/{part.benchmark}.py")
            paths[key] = part.items
    for key, value in paths.items():
        if not (base / value).exists():
            raise ConfigError(
                f"{key}: {value!r} does not exist. Point it at your copy "
                f"(e.g. --config scale={scale} plus a --configfile overlay that sets {key})."
            )
    _check_general_mix_supply(settings["general_mix"], base, scale)
    _check_item_counts(lineage, base)


def _check_item_counts(lineage: Lineage, base: Path) -> None:
    """A benchmark's parts are disjoint cuts of its item file: more than the file holds is refused
    before any job (counted as lines, one item each, until there are enough: Snakemake's start-up
    reads no more than the sizes ask for; the job checks the items themselves)."""
    scale = lineage.scale
    for name in dict.fromkeys(p.benchmark for p in lineage.eval.parts if p.sizes):
        part = next(p for p in lineage.eval.parts if p.benchmark == name)
        need, have = sum(part.sizes), 0
        with (base / part.items).open("rb") as handle:
            for line in handle:
                have += bool(line.strip())
                if have >= need:
                    break
        if need > have:
            sizes = " + ".join(f"{size:,}" for size in part.sizes)
            raise ConfigError(
                f"scales.{scale}.eval.sizes.{name}: its parts need {sizes} = {need:,} items, but {part.items} holds "
                f"{have:,}; lower the sizes or point scales.{scale}.eval.items.{name} at a larger item file"
            )


def _check_general_mix_supply(mix: Mapping[str, Any], base: Path, scale: str) -> None:
    """More general-mix rows than the local sources hold can never be sampled: refuse before any job.

    Counts lines (each row is one) and stops as soon as there are enough, so a large mixture costs
    Snakemake's start-up only as many lines as the rows asked for; hub sources are not counted, and
    rows over max_tokens show only when the tokenizer has measured them, inside the job.
    """
    local = [base / source for source in mix["sources"] if (base / source).is_file()]
    if len(local) != len(mix["sources"]):
        return
    available = 0
    for path in local:
        with path.open("rb") as handle:
            for line in handle:
                available += bool(line.strip())
                if available >= mix["rows"]:
                    return
    if mix["rows"] > available:
        raise ConfigError(
            f"scales.{scale}.general_mix.rows: {mix['rows']:,} rows asked for, but its sources hold {available:,} "
            f"({', '.join(str(p) for p in local)}); lower rows or add a source"
        )
