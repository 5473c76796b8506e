"""The card's benchmarks, one module each: the single list the rules, the item loader, the runner,
the table and the published card read.

A module here declares `BENCHMARK` (lineage.evaluation.benchmark.Benchmark): its item schema and
checks, prompts, runner, table rows, model-index entry and sample items. Adding a benchmark is
adding a module and its item file (docs/add-a-benchmark.md). Modules import torch only inside their
runners, so Snakemake reads this package without it. The import closure of a script that imports
this package holds every module in it (lineage/workflow/codedeps.py: a package that lists its
folder depends on all it finds there).
"""

from __future__ import annotations

import importlib
import pkgutil

from lineage.evaluation.benchmark import Benchmark


def _collect() -> dict[str, Benchmark]:
    found = []
    for module in pkgutil.iter_modules(__path__):
        declared = getattr(importlib.import_module(f"{__name__}.{module.name}"), "BENCHMARK", None)
        if not isinstance(declared, Benchmark):
            raise TypeError(f"{__name__}.{module.name} declares no BENCHMARK = Benchmark(...)")
        if declared.name != module.name:
            raise TypeError(f"{__name__}.{module.name}: BENCHMARK.name is {declared.name!r}; name it after its module")
        found.append(declared)
    return {b.name: b for b in sorted(found, key=lambda b: (b.card_position, b.name))}


BENCHMARKS: dict[str, Benchmark] = _collect()
PART_NAMES: tuple[str, ...] = tuple(name for b in BENCHMARKS.values() for name in b.part_names)
