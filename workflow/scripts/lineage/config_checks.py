"""Checks of config.yaml that a JSON schema cannot express, run before any job starts.

The schema (workflow/schemas/config.schema.yaml) checks types, ranges and names; this module
checks the lineage as a whole: parents exist, no cycles, soups mix runs of one initialisation,
batch sizes divide over the processes, paths exist. Every message names the config key.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any


RESERVED_NAMES = {"all", "data", "eval_table", "ablations", "audit"}


class ConfigError(ValueError):
    """config.yaml describes a lineage that cannot be built; the message names the key."""


def check_config(config: dict[str, Any], *, base_dir: str | Path = ".") -> None:
    """Raise ConfigError for the first problem found in the lineage described by `config`."""
    runs, datasets = config["runs"], config["datasets"]
    _check_verifier_models(datasets, runs)
    for name, run in runs.items():
        _check_parents(name, run, runs)
        _check_data(name, run, datasets)
        _check_soup_weights(name, run)
    for name in runs:
        _check_acyclic(name, runs, datasets)
    for name, run in runs.items():
        if run["kind"] == "soup":
            _check_common_root(name, run, runs)
    scale = config["scale"]
    for name, run in runs.items():
        if run["kind"] in ("sft", "dpo"):
            _check_batch(name, run, config["scales"][scale]["train"], scale)
    _check_stage1_source(config, runs)
    for key in ("chain", "columns"):
        for column in config["eval_table"].get(key, []):
            if column not in runs:
                raise ConfigError(f"eval_table.{key}: {column!r} is not a run in `runs`")
    published = config["eval_table"]["published"]
    if published not in config["eval_table"]["columns"]:
        raise ConfigError(f"eval_table.published: {published!r} must be one of eval_table.columns")
    for name in runs:
        if name in RESERVED_NAMES or name.endswith("_eval"):
            raise ConfigError(f"runs.{name}: the name is taken by a workflow target; choose another run name")
    _check_paths(config, Path(base_dir))


# Which data set kinds each trainable run kind reads.
DATA_KINDS = {
    "sft": ("winners", "general_mix", "sft_mixture"),
    "dpo": ("pairs", "preference_mix", "verifier_pairs"),
}


def _check_verifier_models(datasets: dict, runs: dict) -> None:
    for name, dataset in datasets.items():
        model = dataset.get("model")
        if dataset["kind"] == "verifier_pairs" and model not in runs:
            raise ConfigError(f"datasets.{name}.model: {model!r} is not a run in `runs`")


def _check_stage1_source(config: dict, runs: dict) -> None:
    """`scales.<scale>.stage1.from` is external or a trained run that does not itself start from stage1."""
    for scale, cfg in config["scales"].items():
        source = cfg["stage1"]["from"]
        if source == "external":
            continue
        key = f"scales.{scale}.stage1.from"
        if source not in runs or runs[source]["kind"] not in ("sft", "dpo"):
            trained = ", ".join(n for n, r in runs.items() if r["kind"] in ("sft", "dpo"))
            raise ConfigError(f"{key}: {source!r} must be 'external' or a trained run of the chain ({trained})")
        if any(runs[r]["kind"] == "external" for r in roots_of(source, runs)):
            raise ConfigError(f"{key}: {source!r} descends from the Stage-1 checkpoint itself; "
                              "name the last run of the chain that starts from the base model")


def _check_parents(name: str, run: dict, runs: dict) -> None:
    parents = run.get("parents", [])
    kind = run["kind"]
    if kind in ("external", "base") and parents:
        raise ConfigError(f"runs.{name}.parents: a {kind} run is given by path or built from scratch; "
                          "it has no parents")
    if kind in ("sft", "dpo") and len(parents) != 1:
        raise ConfigError(f"runs.{name}.parents: a {kind} run starts from exactly one parent, got {len(parents)}")
    for parent in parents:
        if parent not in runs:
            known = ", ".join(sorted(runs))
            raise ConfigError(f"runs.{name}.parents: {parent!r} is not a run in `runs` (known runs: {known})")
        if parent == name:
            raise ConfigError(f"runs.{name}.parents: a run cannot be its own parent")


def _check_data(name: str, run: dict, datasets: dict) -> None:
    for dataset in run.get("data", []):
        if dataset not in datasets:
            known = ", ".join(sorted(datasets))
            raise ConfigError(f"runs.{name}.data: {dataset!r} is not a data set in `datasets` (known: {known})")
        kind = datasets[dataset]["kind"]
        allowed = DATA_KINDS.get(run["kind"], ())
        if kind not in allowed:
            what = "preference pairs" if run["kind"] == "dpo" else "chat rows"
            raise ConfigError(f"runs.{name}.data: an {run['kind']} run needs {what} (a data set of kind "
                              f"{' | '.join(allowed)}), {dataset!r} is {kind}")


def _check_soup_weights(name: str, run: dict) -> None:
    if run["kind"] != "soup" or "weights" not in run:
        return
    weights, parents = run["weights"], run["parents"]
    if len(weights) != len(parents):
        raise ConfigError(f"runs.{name}.weights: {len(weights)} weights for {len(parents)} parents")
    if not math.isclose(sum(weights), 1.0, abs_tol=1e-6):
        raise ConfigError(f"runs.{name}.weights: weights sum to {sum(weights):g}; they must sum to 1")


def _check_acyclic(start: str, runs: dict, datasets: dict) -> None:
    """Depth-first walk from `start` over parents and the models that sample a run's verifier
    pairs; meeting a run already on the path is a cycle."""
    path: list[str] = []

    def visit(name: str) -> None:
        if name in path:
            cycle = " -> ".join([*path[path.index(name):], name])
            raise ConfigError(f"runs.{start}.parents: the lineage has a cycle: {cycle}")
        path.append(name)
        samplers = [datasets[d]["model"] for d in runs[name].get("data", []) if d in datasets and "model" in datasets[d]]
        for parent in [*runs[name].get("parents", []), *samplers]:
            visit(parent)
        path.pop()

    visit(start)


def roots_of(name: str, runs: dict) -> set[str]:
    """The runs without parents (initialisations) that `name` descends from."""
    parents = runs[name].get("parents", [])
    if not parents:
        return {name}
    return set().union(*(roots_of(parent, runs) for parent in parents))


def _check_common_root(name: str, run: dict, runs: dict) -> None:
    roots = {parent: roots_of(parent, runs) for parent in run["parents"]}
    if len(set().union(*roots.values())) != 1:
        detail = "; ".join(f"{parent} from {', '.join(sorted(r))}" for parent, r in roots.items())
        raise ConfigError(
            f"runs.{name}.parents: a soup averages runs of one initialisation, but these descend from "
            f"different roots ({detail}); linear interpolation between them is not meaningful"
        )


def _check_batch(name: str, run: dict, scale_train: dict, scale: str) -> None:
    train = {**scale_train, **run.get("overrides", {}).get(scale, {})}
    global_rows, micro, procs = train["global_batch_rows"], train["micro_batch_rows"], train["processes"]
    if global_rows % (micro * procs):
        fits = [m for m in range(1, global_rows + 1) if global_rows % (m * procs) == 0][:6]
        raise ConfigError(
            f"runs.{name}: global batch {global_rows} rows cannot be split into micro-batches of {micro} rows "
            f"over {procs} processes (scales.{scale}.train / runs.{name}.overrides.{scale}); "
            f"use micro_batch_rows in {fits} or a global batch divisible by {micro * procs}"
        )


def _check_paths(config: dict, base: Path) -> None:
    scale = config["scale"]
    cfg = config["scales"][scale]
    paths = {f"scales.{scale}.export.path": cfg["export"]["path"]}
    if cfg["stage1"]["from"] == "external":
        paths[f"scales.{scale}.stage1.path"] = cfg["stage1"]["path"]
    else:  # the chain is built: its inputs must be local files
        if not cfg["base"]["build"]:
            paths[f"scales.{scale}.base.path"] = cfg["base"]["path"]
        paths[f"scales.{scale}.verifier.prompts"] = cfg["verifier"]["prompts"]
        for number, source in enumerate(cfg["preference_mix"]["sources"]):
            paths[f"scales.{scale}.preference_mix.sources[{number}]"] = source
        for number, source in enumerate(cfg["general_mix"]["sources"]):
            paths[f"scales.{scale}.general_mix.sources[{number}]"] = source
    for key, value in paths.items():
        if not (base / value).exists():
            raise ConfigError(
                f"{key}: {value!r} does not exist. Point it at your copy "
                f"(e.g. --config scale={scale} plus a --configfile overlay that sets {key})."
            )
