"""How every run is evaluated: the benchmark parts of a scale, their item files and sizes, and the
settings that change a part's result (an evaluation job's flags are exactly these)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lineage.evaluation.benchmark import Benchmark
from lineage.evaluation.benchmarks import BENCHMARKS
from lineage.workflow.checks import ConfigError, flags


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
    max_new_tokens: int | None  # None: each benchmark's own length
    cache: str
    bucket: int
    seed: int
    parts: tuple[EvalPart, ...]

    def options(self, benchmark: Benchmark) -> dict[str, Any]:
        """The settings that change a result of `benchmark` (generation length only where it generates)."""
        options = {
            "device": self.device,
            "dtype": self.dtype,
            "batch_size": self.batch_size,
            "max_batch_tokens": self.max_batch_tokens,
            "seed": self.seed,
        }
        generation = {"max_new_tokens": self.max_new_tokens, "cache": self.cache, "bucket": self.bucket}
        return options | (generation if benchmark.generates else {"pack_tokens": self.pack_tokens})

    @property
    def sampling_cache(self) -> str:
        """The cache the verifier rounds sample on: the eval's, graph where that is continuous (continuous
        batching decodes greedily; lineage/evaluation/decoders.py)."""
        return "graph" if self.cache == "continuous" else self.cache

    def scoring_pack_tokens(self, longest: int) -> int:
        """Packs for scoring sequences of up to `longest` tokens outside an eval job (a DPO reference): the eval's
        pack size, raised to hold the longest; 0 where the eval scores padded batches."""
        return max(self.pack_tokens, longest) if self.pack_tokens else 0

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
        words = [
            flags("items", [f"{name}={p.items}" for name, p in benchmarks.items()]),
            flags("sizes", [f"{name}={','.join(map(str, p.sizes))}" for name, p in benchmarks.items() if p.sizes]),
            flags("parts", [",".join(p.name for p in parts)]),
        ]
        words += [flags(key.replace("_", "-"), [value]) for key, value in sorted(options.items()) if value is not None]
        return " ".join(w for w in words if w)


def eval_settings(spec: Mapping[str, Any], seed: int, data_dir: str) -> EvalSettings:
    """The parts of every benchmark, with their item files and sizes: the scale's `eval.items` and
    `eval.sizes`, else (where the scale's `eval.unlisted` is `sample`) the module's shipped sample."""
    sized = {b.name: b for b in BENCHMARKS.values() if b.sized}
    given = {key: spec.get(key) or {} for key in ("items", "sizes")}
    for key, values in given.items():
        unknown = sorted(set(values) - set(sized))
        if unknown:
            raise ConfigError(
                f"eval.{key}: unknown {', '.join(unknown)} (the benchmarks with item files, "
                f"modules of lineage/evaluation/benchmarks: {', '.join(sized)})"
            )
    parts = []
    for bench in BENCHMARKS.values():
        if not bench.sized:
            items, sizes = f"{data_dir}/{bench.items_from}", None
        elif bench.name in given["items"]:
            if bench.name not in given["sizes"] and bench.sample is None:
                raise ConfigError(
                    f"eval.sizes: missing {bench.name} (eval.items names its file; give the items "
                    f"of each of its parts {', '.join(bench.parts)})"
                )
            items = given["items"][bench.name]
            sizes = tuple(given["sizes"].get(bench.name) or bench.sample.sizes)
        elif spec["unlisted"] == "sample" and bench.sample is not None:
            items = bench.sample.items
            sizes = tuple(given["sizes"].get(bench.name) or bench.sample.sizes)
        else:
            raise ConfigError(
                f"eval.items: missing {bench.name} (lineage/evaluation/benchmarks/{bench.name}.py); "
                "this scale's eval.unlisted is error: name its item file and sizes"
            )
        if sizes is not None and len(sizes) != len(bench.parts):
            raise ConfigError(
                f"eval.sizes.{bench.name}: {len(sizes)} sizes for the {len(bench.parts)} parts "
                f"({', '.join(bench.parts)}) of {bench.name}"
            )
        parts += [EvalPart(bench.name, part, items, sizes) for part in bench.parts]
    return EvalSettings(
        group_by=spec["group_by"],
        device=spec["device"],
        dtype=spec["dtype"],
        batch_size=spec["batch_size"],
        max_batch_tokens=spec["max_batch_tokens"],
        pack_tokens=spec["pack_tokens"],
        max_new_tokens=spec["max_new_tokens"],
        cache=spec["cache"],
        bucket=spec["bucket"],
        seed=seed,
        parts=tuple(parts),
    )
