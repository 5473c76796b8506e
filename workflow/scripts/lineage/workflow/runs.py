"""The lineage as one typed object, built once from the validated config and read by every rule file.

`build_lineage(config)` resolves, for the chosen scale, each run's checkpoint directory, data
files, training recipe or soup weights, and the job resources; which runs the lineage holds here
(the Stage-1 chain only when it is built), which columns the table has, which verifier rounds run.
Building it is the config's validation: every problem that can be known before a job starts
raises a ConfigError naming the config key. Nothing here touches the filesystem except the
existence checks of given inputs, and nothing imports torch, so Snakemake parses in a second.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from lineage.checkpoints.format import CheckpointError
from lineage.checkpoints.read import checkpoint_params
from lineage.parallel_dims import Keys, MeshError, ParallelDims
from lineage.parallel_dims import check as check_mesh
from lineage.soup import methods as soup_methods
from lineage.training.recipe import RECIPES, RecipeError, TrainRecipe
from lineage.workflow.checks import (
    TRAINED,
    ConfigError,
    check_graph,
    check_lineage,
    check_paths,
    check_stage1_source,
    roots,
)
from lineage.workflow.cluster import Resources, host_memory_mb
from lineage.workflow.evaluation import EvalSettings, eval_settings
from lineage.workflow.fit import check_fit
from lineage.workflow.sections import Base, Export, GeneralMix, Shared, Verifier, sections
from lineage.workflow.trained_model import trained_model

# The keys of a run's `overrides.<scale>` that replace the run's own values; the others replace
# `scales.<scale>.train` keys.
SCHEDULE_KEYS = ("steps", "warmup_steps")


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
    # its training job's Slurm nodes, processes (FSDP ranks) a node, sharding and expert-parallel degree
    dims: ParallelDims = ParallelDims()
    accumulate: str = "sharded"  # sharded: reduce every micro-batch | unsharded: once a step (memory for speed)
    device: str = "cpu"  # training device: cpu (gloo) | cuda (nccl)
    save_every: int = 0  # resumable state every k steps (never changes the weights)
    save_every_minutes: float = 0  # ... and when this many minutes passed since the last (0: by steps only)
    validate_every: int = 0  # validation loss every k steps (never changes the weights; SFT on winner rows)
    report_to: tuple[str, ...] = ("tensorboard",)  # experiment trackers (never change an output)
    lineage_extra: Mapping[str, Any] = field(default_factory=dict)  # recorded in lineage.json beside the recipe
    card: Mapping[str, Any] = field(default_factory=dict)

    # the degrees the rules and tools read, as dims holds them
    nodes = property(lambda self: self.dims.nodes)
    processes_per_node = property(lambda self: self.dims.processes_per_node)
    expert_parallel = property(lambda self: self.dims.expert)
    world_size = property(lambda self: self.dims.world_size)
    effective_sharding = property(lambda self: self.dims.effective_sharding)


@dataclass(frozen=True)
class Lineage:
    scale: str
    paths: Paths
    export: Export
    general_mix: GeneralMix
    base: Base
    verifier: Verifier
    preference_sources: tuple[str, ...]  # scales.<scale>.preference_mix.sources
    shared: Shared  # the recipe values outside a training recipe
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
            return (
                spec.parents[0],
                spec.data,
                spec.recipe.max_length,
                spec.recipe.truncation,
                spec.recipe.precision,
                spec.device,
            )

        return next(name for name in self.runs_of("dpo") if key(name) == key(run))

    def reference_file(self, run: str) -> str:
        """The reference log-probs a DPO run trains against (written by `<reference_of(run)>_reference`)."""
        return f"{self.paths.reference}/{self.reference_of(run)}.jsonl"

    def data_files(self, run: str) -> list[str]:
        return [path for name in self.runs[run].data for path in self.datasets[name].files]

    def validation_files(self, run: str) -> list[str]:
        """What a run validates on, from the holdout split: an SFT run on winner rows the held-out battles (their
        preferred answers), a DPO run on battle pairs the held-out prompts' pairs; [] for other runs. Only runs
        that already descend from the split get it: as an input of a run trained on other data (stage1_sft), a
        new split would retrain the whole chain for a number in a log."""
        spec = self.runs[run]
        kinds = {self.datasets[d].kind for d in spec.data}
        if spec.kind == "sft" and "winners" in kinds:
            return [f"{self.paths.data}/holdout.jsonl"]
        if spec.kind == "dpo" and "pairs" in kinds:
            return [f"{self.paths.data}/holdout_pairs.jsonl"]
        return []

    def reference_data_files(self, run: str) -> list[str]:
        """The pairs a DPO run's reference job scores: its training pairs, then its validation pairs."""
        return [*self.data_files(run), *self.validation_files(run)]

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
        if self.base.build:
            return f"{self.paths.out}/stage1/tokenizer"
        return self.base.path

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
        sources = [*self.general_mix.sources, *self.preference_sources]
        hub_ids = [s for s in sources if s.count("/") == 1 and not s.endswith((".jsonl", ".json"))]
        lineage = []
        for name in runs:
            run = self.runs[name]
            recipe = dataclasses.asdict(run.recipe) if run.recipe is not None else None
            note = {"external": f"the Stage-1 checkpoint ({run.directory})", "base": "the Base model"}.get(run.kind, "")
            lineage.append(
                {
                    "run": name,
                    "kind": run.kind,
                    "parents": list(run.parents),
                    "data": list(run.data),
                    "recipe": recipe,
                    "note": note,
                }
            )
        items = {p.benchmark: p.items for p in self.eval.parts}
        return {
            **publish,
            "scale": self.scale,
            "lineage": lineage,
            "items": items,
            "base_model": base.card.get("name") if base and not self.base.build else None,
            "datasets": hub_ids,
        }

    @property
    def published_dir(self) -> str:
        return f"{self.paths.out}/published/{self.published}"

    @property
    def published_files(self) -> list[str]:
        """The published repository's files that every model has (the weights' shard names depend on
        its size): the publish rule's outputs. Not the directory itself: Snakemake writes a
        `.snakemake_timestamp` into a directory output, which an upload of the folder would ship."""
        return [
            f"{self.published_dir}/{name}" for name in ("README.md", "config.json", "system_prompt.txt", "lineage.json")
        ]

    def table_files(self, table: str) -> list[str]:
        return [f"{self.paths.out}/{table}.{ext}" for ext in ("tsv", "md", "png", "paired.tsv")]

    @property
    def data_targets(self) -> list[str]:
        """Every data-stage output and the data audit (a verifier round needs a model: the chain's)."""
        built = sorted(
            {f for d in self.datasets.values() if d.kind in ("winners", "pairs", "general_mix") for f in d.files}
        )
        audit = [f"{self.paths.data}/audit.{ext}" for ext in ("json", "md", "html")]
        return [*built, f"{self.paths.data}/holdout_pairs.jsonl", *audit]


# --------------------------------------------------------------------------------------------
# Building it


def build_lineage(config: Mapping[str, Any], *, base_dir: str | Path = ".", check_files: bool = True) -> Lineage:
    """The typed lineage of `config` (already checked against the JSON schema) at its scale. `check_files` False
    leaves out what needs the scale's inputs on disk (their existence, memory planned from a given checkpoint):
    for a tool that plans or rehearses a run away from its data."""
    scale = config["scale"]
    settings, recipe = config["scales"][scale], config["recipe"]
    specs, data_specs = config["runs"], config["datasets"]
    check_graph(specs, data_specs)
    paths = Paths(scale)

    stage1_from = settings["stage1"]["from"]
    check_stage1_source(config, specs)
    externals = [n for n, s in specs.items() if s["kind"] == "external"]
    if len(externals) != 1:
        raise ConfigError(
            f"runs: {len(externals)} runs of kind external ({', '.join(externals) or 'none'}); the "
            "lineage has one, the Stage-1 checkpoint Stage 2 starts from"
        )
    (external,) = externals
    chain_built = stage1_from != "external"
    chain = _ancestry(stage1_from, specs) if chain_built else set()
    in_lineage = tuple(
        n for n in _lineage_order(specs, data_specs, stage1_from) if not _descends_from_base(n, specs) or n in chain
    )
    stage1 = stage1_from if chain_built else external

    directories = {name: _directory(name, specs, settings, paths, stage1) for name in specs}
    datasets = {name: _dataset(name, spec, specs, settings, paths) for name, spec in data_specs.items()}
    runs = {
        name: _run(name, spec, settings, recipe, scale, directories, name in in_lineage) for name, spec in specs.items()
    }

    table = config["eval_table"]
    table_runs = tuple([n for n in table.get("chain", []) if n in chain] + list(table["columns"]))
    rounds = [n for n, d in datasets.items() if d.kind == "verifier_pairs" and d.trains in chain]
    verifier_rounds = tuple(sorted(rounds, key=lambda n: in_lineage.index(datasets[n].trains)))
    lineage = Lineage(
        scale=scale,
        paths=paths,
        **sections(settings, recipe),
        runs=runs,
        datasets=datasets,
        in_lineage=in_lineage,
        stage1=stage1,
        table_runs=table_runs,
        published=table["published"],
        verifier_rounds=verifier_rounds,
        eval=eval_settings(settings["eval"], recipe["seed"], paths.data),
        resources=_resources(settings, scale, runs, base_dir if check_files else None),
    )
    check_lineage(lineage, config)
    if check_files:
        check_paths(lineage, settings, Path(base_dir))
    _check_mesh(lineage, settings, Path(base_dir) if check_files else None)
    if check_files:
        check_fit(lineage, settings, Path(base_dir))
    return lineage


def _routed_experts_of_base(settings: Mapping[str, Any], base: Path) -> int | None:
    """Routed experts per layer of the models this scale trains (None when nothing says; 0 for a dense model)."""
    from types import SimpleNamespace

    # imports transformers: read only when a run asks for expert parallelism
    from lineage.modeling import routed_experts

    values = trained_model(settings, base).config_values()
    return None if values is None else routed_experts(SimpleNamespace(**values)) or 0


def _check_mesh(lineage: Lineage, settings: Mapping[str, Any], base: Path | None) -> None:
    """Each trained run's degrees lay out its ranks as the trainer lays them out (lineage/parallel_dims.py); the
    expert count is read from the model only for files checked (`base`) and a run that splits experts."""
    trained = {name: run for name, run in lineage.runs.items() if run.kind in TRAINED and run.built}
    experts = None
    if base is not None and any(run.expert_parallel > 1 for run in trained.values()):
        experts = _routed_experts_of_base(settings, base)
    for name, run in trained.items():
        try:
            check_mesh(run.dims, experts)
        except MeshError as err:
            raise ConfigError(f"runs.{name}: {err}") from None


def _lineage_order(specs: Mapping[str, Any], data_specs: Mapping[str, Any], stage1_from: str) -> list[str]:
    """Every run after what it is built from (parents, verifier samplers; Stage 1 after the chain's
    last run), then by name: an order of the lineage itself, so that tables and audits never follow
    the order of keys in config.yaml."""
    depth: dict[str, int] = {}

    def depth_of(name: str) -> int:
        if name not in depth:
            spec = specs[name]
            before = [
                *spec.get("parents", []),
                *(data_specs[d]["model"] for d in spec.get("data", []) if "model" in data_specs[d]),
            ]
            if spec["kind"] == "external" and stage1_from != "external":
                before.append(stage1_from)
            depth[name] = 1 + max((depth_of(b) for b in before), default=-1)
        return depth[name]

    return sorted(specs, key=lambda name: (depth_of(name), name))


def _ancestry(name: str, specs: Mapping[str, Any]) -> set[str]:
    return {name}.union(*(_ancestry(p, specs) for p in specs[name].get("parents", [])))


def _descends_from_base(name: str, specs: Mapping[str, Any]) -> bool:
    """Part of the Stage-1 chain: the run is the Base or starts from it."""
    return any(specs[root]["kind"] == "base" for root in roots(name, specs))


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
    return Dataset(
        name,
        kind,
        files,
        repeat=spec.get("repeat", 1),
        ties=spec.get("ties", False),
        sampler=spec.get("model"),
        trains=trains,
    )


def with_overrides(train: dict, spec: dict, scale: str) -> tuple[dict, dict]:
    """A run's train settings and schedule (steps, warmup_steps) at `scale`: `overrides.<scale>` replaces
    the scale's train keys and the run's own schedule keys."""
    overrides = spec.get("overrides", {}).get(scale, {})
    schedule = {**spec, **{k: v for k, v in overrides.items() if k in SCHEDULE_KEYS}}
    return {**train, **{k: v for k, v in overrides.items() if k not in SCHEDULE_KEYS}}, schedule


SPEED_KEYS = ("packing", "pack_tokens", "packed_attention", "ce_chunk_tokens", "fused_loss", "experts", "compile")


def speed_settings(train: dict, kind: str) -> dict:
    """A run's `train.speed` keys: DPO runs take `speed.dpo`'s first (a DPO loss needs each token's
    log-probability, which the fused losses that keep no logits do not give, so DPO may pack and fuse
    differently from SFT)."""
    speed = {k: train["speed"][k] for k in SPEED_KEYS}
    if kind == "dpo":
        speed |= train["speed"].get("dpo", {})
    return speed


def _run(name: str, spec: Mapping[str, Any], settings, recipe, scale: str, directories, in_lineage: bool) -> Run:
    kind = spec["kind"]
    built = in_lineage and (kind in (*TRAINED, "soup") or (kind == "base" and settings["base"]["build"]))
    common = dict(
        name=name,
        kind=kind,
        directory=directories[name],
        built=built,
        parents=tuple(spec.get("parents", ())),
        data=tuple(spec.get("data", ())),
        rejected=spec.get("rejected", False),
        card=spec.get("card", {}),
    )
    if kind == "soup":
        count = len(common["parents"])
        weights = tuple(float(w) for w in spec.get("weights", [1 / count] * count))
        method = spec.get("method", soup_methods.DEFAULT)
        if method not in soup_methods.METHODS:
            raise ConfigError(
                f"runs.{name}.method: {method!r} is not a soup method; known (lineage/soup/methods.py "
                f"METHODS): {', '.join(soup_methods.METHODS)}"
            )
        return Run(**common, recipe=SoupRecipe(method=method, weights=weights))
    if kind not in TRAINED:
        return Run(**common)
    train, schedule = with_overrides(settings["train"], spec, scale)
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
        **{
            k: train[k]
            for k in ("global_batch_rows", "micro_batch_rows", "max_length", "precision", "activation_checkpointing")
        },
    }
    values |= speed_settings(train, kind)
    if kind == "dpo":
        values["beta"] = spec.get("beta", recipe["dpo_beta"])
    try:
        resolved = RECIPES[kind].from_mapping(values, complete=True)
    except RecipeError as err:
        hint = f" (DPO runs take scales.{scale}.train.speed.dpo's keys first)" if kind == "dpo" else ""
        raise ConfigError(f"runs.{name} at scale {scale} (with scales.{scale}.train and recipe): {err}{hint}") from None
    return Run(
        **common,
        recipe=resolved,
        dims=ParallelDims.from_train(train, _keys(name, spec, scale)),
        accumulate=train["accumulate"],
        device=train["device"],
        save_every=train["save_every"],
        save_every_minutes=float(train.get("save_every_minutes", 0)),
        validate_every=int(train.get("validate_every", 0)),
        report_to=tuple(train.get("report_to", ["tensorboard"])),
        lineage_extra={"card_lr": float(spec["lr"]), "lr_scale": float(train["lr_scale"])},
    )


def _keys(name: str, spec: Mapping[str, Any], scale: str) -> Keys:
    """Where a run's degrees are set, for its errors: the scale's train keys, or the run's overrides of them."""
    overridden = spec.get("overrides", {}).get(scale, {})
    return Keys.of_config(f"scales.{scale}.train", f"runs.{name}.overrides.{scale}", overridden)


def _resources(settings: Mapping[str, Any], scale: str, runs: Mapping[str, Run], base_dir) -> dict[str, Resources]:
    """Each job class's request; training's memory per node planned from the model when `auto`."""
    out = {kind: Resources(**res) for kind, res in settings["resources"].items()}
    train = out["train"]
    if train.mem_mb == "auto" and base_dir is not None:
        source = (
            settings["stage1"]["path"]
            if settings["stage1"]["from"] == "external"
            else (settings["base"]["path"] if not settings["base"]["build"] else None)
        )
        key = f"scales.{scale}.resources.train.mem_mb"
        if source is None:
            raise ConfigError(
                f"{key}: auto plans host memory from a checkpoint given by path (the Stage-1 "
                "checkpoint or the Base), but this scale builds its Base; give a number of MB"
            )
        if not (Path(base_dir) / source).exists():
            return out  # check_paths names the missing checkpoint
        try:
            params = checkpoint_params(Path(base_dir) / source)
        except (OSError, ValueError, CheckpointError) as err:
            raise ConfigError(f"{key}: auto cannot count the parameters of {source}: {err}") from None
        per_node = max((r.processes_per_node for r in runs.values() if r.kind in TRAINED), default=1)
        out["train"] = replace(train, mem_mb=host_memory_mb(params, per_node))
    return out
