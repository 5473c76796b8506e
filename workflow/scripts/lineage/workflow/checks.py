"""What a JSON schema cannot check of config.yaml: the run graph (parents, kinds, cycles, one root
per soup), the Stage-1 source, the table's columns, given paths, item counts, the general mix's
supply and verifier prompts that repeat an eval item. Each problem is a ConfigError that names the config
key, raised before any job starts. `lineage` below is the typed lineage of lineage.workflow.runs (not
imported: runs imports this)."""

from __future__ import annotations

import math
import shlex
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from lineage.evaluation.benchmarks import BENCHMARKS
from lineage.io import count_rows
from lineage.training.recipe import TrainRecipe

TRAINED = ("sft", "dpo")
# Which data set kinds each trainable run kind reads.
DATA_KINDS = {"sft": ("winners", "general_mix", "sft_mixture"), "dpo": ("pairs", "preference_mix", "verifier_pairs")}


class ConfigError(ValueError):
    """config.yaml describes a lineage that cannot be built; the message names the key."""


def flags(name: str, values: Iterable[Any]) -> str:
    """`--name v1 --name v2 ...`, each value shell-quoted, in the given order: how the rules put
    lists on a script's command line (here, where no script imports it, so its edits rerun nothing)."""
    return " ".join(f"--{name} {shlex.quote(str(v))}" for v in values)


def check_graph(specs: Mapping[str, Any], data_specs: Mapping[str, Any]) -> None:
    """Parents and data sets exist, kinds fit, weights fit, no cycles, soups share one root."""
    for name, spec in data_specs.items():
        if spec["kind"] == "verifier_pairs" and spec.get("model") not in specs:
            raise ConfigError(f"datasets.{name}.model: {spec.get('model')!r} is not a run in `runs`")
    for name, spec in specs.items():
        kind, parents = spec["kind"], spec.get("parents", [])
        if kind in ("external", "base") and parents:
            raise ConfigError(
                f"runs.{name}.parents: a {kind} run is given by path or built from scratch; it has no parents"
            )
        if kind in TRAINED and len(parents) != 1:
            raise ConfigError(f"runs.{name}.parents: a {kind} run starts from exactly one parent, got {len(parents)}")
        for parent in parents:
            if parent not in specs:
                raise ConfigError(
                    f"runs.{name}.parents: {parent!r} is not a run in `runs` (known runs: {', '.join(sorted(specs))})"
                )
            if parent == name:
                raise ConfigError(f"runs.{name}.parents: a run cannot be its own parent")
        if len(set(parents)) != len(parents):
            raise ConfigError(
                f"runs.{name}.parents: {parents} names a parent twice; a soup weighs each parent once "
                "(give it a larger weight instead)"
            )
        for dataset in spec.get("data", []):
            if dataset not in data_specs:
                raise ConfigError(
                    f"runs.{name}.data: {dataset!r} is not a data set in `datasets` "
                    f"(known: {', '.join(sorted(data_specs))})"
                )
            allowed = DATA_KINDS.get(kind, ())
            if data_specs[dataset]["kind"] not in allowed:
                what = "preference pairs" if kind == "dpo" else "chat rows"
                raise ConfigError(
                    f"runs.{name}.data: an {kind} run needs {what} (a data set of kind "
                    f"{' | '.join(allowed)}), {dataset!r} is {data_specs[dataset]['kind']}"
                )
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
            by_parent = {parent: roots(parent, specs) for parent in spec["parents"]}
            if len(set().union(*by_parent.values())) != 1:
                detail = "; ".join(f"{parent} from {', '.join(sorted(r))}" for parent, r in by_parent.items())
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
            raise ConfigError(
                f"runs.{start}.parents: the lineage has a cycle: {' -> '.join([*path[path.index(name) :], name])}"
            )
        path.append(name)
        samplers = [data_specs[d]["model"] for d in specs[name].get("data", []) if "model" in data_specs.get(d, {})]
        for parent in [*specs[name].get("parents", []), *samplers]:
            visit(parent)
        path.pop()

    visit(start)


def roots(name: str, specs) -> set[str]:
    parents = specs[name].get("parents", [])
    return {name} if not parents else set().union(*(roots(p, specs) for p in parents))


def check_stage1_source(config: Mapping[str, Any], specs) -> None:
    """`scales.<scale>.stage1.from` is external or a trained run that does not itself start from Stage 1."""
    for scale, settings in config["scales"].items():
        source = settings["stage1"]["from"]
        if source == "external":
            continue
        key = f"scales.{scale}.stage1.from"
        if source not in specs or specs[source]["kind"] not in TRAINED:
            trained = ", ".join(n for n, s in specs.items() if s["kind"] in TRAINED)
            raise ConfigError(f"{key}: {source!r} must be 'external' or a trained run of the chain ({trained})")
        if any(specs[r]["kind"] == "external" for r in roots(source, specs)):
            raise ConfigError(
                f"{key}: {source!r} descends from the Stage-1 checkpoint itself; "
                "name the last run of the chain that starts from the base model"
            )


def check_lineage(lineage, config: Mapping[str, Any]) -> None:
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


def check_paths(lineage, settings: Mapping[str, Any], base: Path) -> None:
    """Inputs given by path exist (the chain's only when the chain is built)."""
    scale = lineage.scale
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
            key = (
                f"scales.{scale}.eval.items.{part.benchmark}"
                if part.benchmark in listed
                else f"the sample items of lineage/evaluation/benchmarks/{part.benchmark}.py"
            )
            paths[key] = part.items
    for key, value in paths.items():
        if not (base / value).exists():
            raise ConfigError(
                f"{key}: {value!r} does not exist. Point it at your copy "
                f"(e.g. --config scale={scale} plus a --configfile overlay that sets {key})."
            )
    check_general_mix_supply(settings["general_mix"], base, scale)
    if settings["stage1"]["from"] != "external":
        check_source_formats(settings, base, scale)
    check_item_counts(lineage, base)
    check_verifier_prompts(lineage, base)


def check_item_counts(lineage, base: Path) -> None:
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


def check_general_mix_supply(mix: Mapping[str, Any], base: Path, scale: str) -> None:
    """More general-mix rows than the local sources hold can never be sampled: refuse before any job.

    Counts JSONL lines (each row is one; Parquet files say their rows in their footer) and stops as soon as
    there are enough, so a large mixture costs Snakemake's start-up only as many lines as the rows asked for;
    hub sources are not counted, and rows over max_tokens show only when the tokenizer has measured them,
    inside the job.
    """
    local = [base / source for source in mix["sources"] if (base / source).is_file()]
    if len(local) != len(mix["sources"]):
        return
    available = 0
    for path in local:
        available += count_rows(path, limit=mix["rows"] - available)
        if available >= mix["rows"]:
            return
    if mix["rows"] > available:
        raise ConfigError(
            f"scales.{scale}.general_mix.rows: {mix['rows']:,} rows asked for, but its sources hold {available:,} "
            f"({', '.join(str(p) for p in local)}); lower rows or add a source"
        )


FIRST_ROWS_READ = 20  # lines read for a first parseable row: a bad line is the job's to quarantine, not a format


def check_source_formats(settings: Mapping[str, Any], base: Path, scale: str) -> None:
    """Each local SFT and preference source is in a layout its job reads: its first row read here by the job's own
    reader (lineage/data/general_mix.py to_messages, lineage/pair_rows.py pair_conversation), so a file as its
    publisher ships it in a layout we do not read is refused at the dry run, not in its job."""
    from lineage.data.general_mix import to_messages
    from lineage.io import DataError, read_rows_lenient
    from lineage.pair_rows import pair_conversation

    readers = {"general_mix": to_messages, "preference_mix": pair_conversation}
    for section, reader in readers.items():
        for number, source in enumerate(settings[section]["sources"]):
            path = base / source
            if not path.is_file():  # a hub id or a dataset directory: read in the job
                continue
            key = f"scales.{scale}.{section}.sources[{number}]"
            rows = ((line, row) for line, row, _, _ in read_rows_lenient(path) if row is not None)
            first = next((item for _, item in zip(range(FIRST_ROWS_READ), rows)), None)
            if first is None:
                raise ConfigError(f"{key}: {source}: no row in its first {FIRST_ROWS_READ} lines is a JSON object")
            try:
                reader(first[1], f"{source}:{first[0]}")
            except DataError as error:
                raise ConfigError(f"{key}: {error} (docs/formats.md lists the layouts read)") from None


def check_verifier_prompts(lineage, base: Path) -> None:
    """No verifier prompt repeats an item of a benchmark's item file (normalized text: find_overlap of
    lineage/data/verifier.py, which verifier_pairs.py --eval-items runs by hand). Checked here, before any job,
    so the item files are no input of the verifier rounds: pointing a benchmark at another file reruns its
    evaluations, not the Stage-1 chain."""
    if not lineage.verifier_rounds:
        return
    from lineage.data.verifier import find_overlap
    from lineage.io import read_jsonl, read_rows

    scale, prompts_file = lineage.scale, lineage.verifier.prompts
    item_files = {p.benchmark: p.items for p in lineage.eval.parts if p.sizes}
    prompts = _read_or_refuse(read_jsonl, base / prompts_file, f"scales.{scale}.verifier.prompts")
    evaluation = {
        name: _read_or_refuse(read_rows, base / path, f"the {name} items") for name, path in item_files.items()
    }
    overlap = find_overlap(
        [row for _, row in prompts], {name: [row for _, row in rows] for name, rows in evaluation.items()}
    )
    if not overlap:
        return
    first = overlap[0]
    line, prompt = prompts[first.prompt]
    row, item = evaluation[first.source][first.item]
    items_file = item_files[first.source]
    more = f", and {len(overlap) - 1} more" if len(overlap) > 1 else ""
    raise ConfigError(
        f"scales.{scale}.verifier.prompts: {prompts_file}:{line} (prompt {prompt.get('id')!r}) repeats item "
        f"{_item_id(first.source, item)!r} of {items_file} (row {row}) in normalized text{more}; a verifier round "
        f"must not train on an evaluation item: remove the prompt from {prompts_file} or the item from {items_file}"
    )


def _read_or_refuse(reader, path: Path, what: str) -> list[tuple[int, dict[str, Any]]]:
    """Every (row, object) of a file, or a ConfigError naming what it is and its bad row."""
    from lineage.io import DataError

    try:
        return list(reader(path))
    except DataError as error:
        raise ConfigError(f"{what}: {error}") from None


def _item_id(benchmark: str, item: Mapping[str, Any]) -> str:
    """The id the evaluation gives the item: its own, or the one derived from its content (the first of identical
    items is the one find_overlap names, so it is numbered as no repeat)."""
    from lineage.evaluation.items import derived_id

    bench = BENCHMARKS[benchmark]
    return bench.item_id(item) if item.get(bench.id_field) not in (None, "") else derived_id(bench, item, 0)
