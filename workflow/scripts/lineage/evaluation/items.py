"""Benchmark item files: validation with file/line/field errors, and disjoint seeded parts.

The card reports every benchmark on two or three disjoint item sets (A/B, and C for
instruction following). All parts come from one seeded permutation of the item file's ids,
cut into consecutive slices, so parts are disjoint by construction and a part's items do
not depend on which other parts are evaluated.
"""

from __future__ import annotations

import os
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from lineage.evaluation.benchmark import Benchmark
from lineage.evaluation.benchmarks import BENCHMARKS
from lineage.io import DataError, read_rows, sha256_json

PART_NAMES = ("A", "B", "C")


def benchmark_of(name: str) -> Benchmark:
    if name not in BENCHMARKS:
        raise ValueError(f"unknown benchmark {name!r}; expected one of {', '.join(BENCHMARKS)}")
    return BENCHMARKS[name]


def item_id(benchmark: str, item: Mapping[str, Any]) -> str:
    """The item's id as a string (IFEval keys are ints; ids are compared as text everywhere)."""
    return BENCHMARKS[benchmark].item_id(item)


def _check_item(bench: Benchmark, path: Path, line: int, item: dict[str, Any]) -> None:
    id_field, where = bench.id_field, f"{path}:{line}"
    if id_field not in item or item[id_field] in (None, ""):
        raise DataError(f"{where}: missing id field {id_field!r}")
    for name, kind in bench.fields.items():
        if name not in item:
            raise DataError(f"{where}: item {item[id_field]!r} has no field {name!r}")
        if not isinstance(item[name], kind) or (kind is int and isinstance(item[name], bool)):
            raise DataError(
                f"{where}: item {item[id_field]!r} field {name!r} should be {getattr(kind, '__name__', kind)}, "
                f"got {type(item[name]).__name__}"
            )
    problem = bench.check(item)
    if problem:
        raise DataError(f"{where}: item {item[id_field]!r} {problem}")


def derived_id(bench: Benchmark, item: Mapping[str, Any], earlier: int) -> str:
    """An id for an item published without one (GSM8K and MMLU on the Hub): a digest of its content, so it does not
    depend on the file's order, numbered where identical items repeat (`earlier`: how many came before)."""
    digest = sha256_json({k: v for k, v in item.items() if k != bench.id_field})[:16]
    return f"{bench.name}-{digest}" + (f"-{earlier + 1}" if earlier else "")


def load_items(benchmark: str, path: str | os.PathLike) -> list[dict[str, Any]]:
    """Read and validate an item file (JSONL, or Parquet as the Hub serves it); ids must be unique. Items without
    an id get one derived from their content (derived_id); the records and the parts use it like a given one."""
    bench = benchmark_of(benchmark)
    path = Path(path)
    items, seen, repeats = [], {}, {}
    for line, item in read_rows(path):
        if item.get(bench.id_field) in (None, ""):
            base = derived_id(bench, item, 0)
            item[bench.id_field] = derived_id(bench, item, repeats.get(base, 0))
            repeats[base] = repeats.get(base, 0) + 1
        _check_item(bench, path, line, item)
        key = bench.item_id(item)
        if key in seen:
            raise DataError(f"{path}:{line}: duplicate id {key!r} (first on line {seen[key]})")
        seen[key] = line
        items.append(item)
    if not items:
        raise DataError(f"{path}: no items")
    return items


def parse_part_sizes(spec: str | None, sample: int | None) -> dict[str, int]:
    """Sizes of parts A, B, C: `200,400,753` (in part order) or `A=200,B=400,C=753`; `--sample N` alone
    means every part has N items."""
    if spec:
        sizes = {}
        for position, piece in enumerate(p.strip() for p in spec.split(",")):
            name, sep, value = piece.rpartition("=") if "=" in piece else (None, "", piece)
            name = name.strip() if sep else (PART_NAMES[position] if position < len(PART_NAMES) else "?")
            if name not in PART_NAMES or not value.strip().isdigit():
                raise ValueError(f"--sizes: bad entry {piece!r}; expected e.g. 200,400,753 or A=200,B=400,C=753")
            sizes[name] = int(value)
        return sizes
    if sample is None:
        return {}
    return dict.fromkeys(PART_NAMES, sample)


def sample_part(ids: Sequence[str], part: str, sizes: Mapping[str, int], seed: int) -> list[str]:
    """The ids of one part: a slice of a seeded permutation of the sorted ids.

    Part A is the first sizes['A'] ids of the permutation, part B the next sizes['B'], C the
    next. The permutation depends only on the id set and the seed, never on the file order.
    """
    if part not in PART_NAMES:
        raise ValueError(f"unknown part {part!r}; expected one of {', '.join(PART_NAMES)}")
    order = sorted(ids)
    random.Random(seed).shuffle(order)
    index = PART_NAMES.index(part)
    missing = [p for p in PART_NAMES[: index + 1] if p not in sizes]
    if missing:
        raise ValueError(f"part {part} needs the sizes of parts {', '.join(missing)}")
    start = sum(sizes[p] for p in PART_NAMES[:index])
    stop = start + sizes[part]
    if stop > len(order):
        raise DataError(
            f"part {part} needs items {start + 1}..{stop} of the permutation but only {len(order)} items are available"
        )
    return order[start:stop]


def select_items(
    benchmark: str,
    items: list[dict[str, Any]],
    *,
    part: str | None,
    sizes: Mapping[str, int],
    seed: int,
    keep_ids: Sequence[str] | None = None,
    source: str = "items",
) -> list[dict[str, Any]]:
    """Restrict to `keep_ids` (a split), then take the part; without a part, all remaining items."""
    by_id = {item_id(benchmark, it): it for it in items}
    if keep_ids is not None:
        unknown = [i for i in keep_ids if i not in by_id]
        if unknown:
            raise DataError(f"{source}: split lists {len(unknown)} ids not in the item file, e.g. {unknown[:3]}")
        by_id = {i: by_id[i] for i in keep_ids}
    if part is None:
        return list(by_id.values())
    return [by_id[i] for i in sample_part(list(by_id), part, sizes, seed)]
