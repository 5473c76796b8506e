"""Evaluate one checkpoint on every benchmark part of the table, loading it once.

Each part is exactly what `eval_benchmark.py` computes (the same arguments, the same result
and records files); this only shares one interpreter start, one checkpoint verification and
one model load between the parts. On a laptop those dominate a small model's evaluation; on
a cluster the workflow runs the parts as separate jobs instead (see `eval.one_job_per_run`).

Run as:
    python workflow/scripts/eval_run.py --model results/embedded/models/soupF2 --run soupF2 \\
        --items mmlu=resources/sample/eval/mmlu.jsonl --sizes mmlu=40,40 \\
        --items margin=results/embedded/data/holdout_pairs.jsonl \\
        --out-dir results/embedded/eval/soupF2 -- --device cpu --batch-size 16 --max-new-tokens 48
Arguments after `--` are passed to every part. Outputs: `<out-dir>/<benchmark>_<part>.json`
and `.records.jsonl`; a benchmark without sizes is evaluated whole, as part A.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import eval_benchmark  # noqa: E402
from lineage.evaluation.tasks import RUNNERS  # noqa: E402

PART_NAMES = "ABC"


def pairs(values: list[str], flag: str) -> dict[str, str]:
    found = {}
    for value in values:
        benchmark, sep, rest = value.partition("=")
        if not sep or benchmark not in RUNNERS or not rest:
            raise SystemExit(f"{flag} {value!r}: expected BENCHMARK=VALUE with BENCHMARK one of {', '.join(RUNNERS)}")
        if benchmark in found:
            raise SystemExit(f"{flag}: {benchmark} given twice")
        found[benchmark] = rest
    return found


def parse_args(argv=None) -> tuple[argparse.Namespace, list[str]]:
    argv = list(sys.argv[1:] if argv is None else argv)
    shared = argv[argv.index("--") + 1:] if "--" in argv else []
    own = argv[: argv.index("--")] if "--" in argv else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="checkpoint directory")
    parser.add_argument("--run", help="column name in the table (default: the run recorded in lineage.json)")
    parser.add_argument("--items", action="append", default=[], metavar="BENCHMARK=FILE", required=True)
    parser.add_argument("--sizes", action="append", default=[], metavar="BENCHMARK=N,N,...",
                        help="items per part; one number per part (A, B, C)")
    parser.add_argument("--out-dir", required=True, type=Path)
    return parser.parse_args(own), shared


def part_arguments(args: argparse.Namespace, shared: list[str]) -> list[argparse.Namespace]:
    """The eval_benchmark arguments of every part, in table order."""
    items, sizes = pairs(args.items, "--items"), pairs(args.sizes, "--sizes")
    unknown = sorted(set(sizes) - set(items))
    if unknown:
        raise SystemExit(f"--sizes for {', '.join(unknown)} without --items")
    common = ["--model", args.model, *(["--run", args.run] if args.run else []), *shared]
    parts = []
    for benchmark, path in items.items():
        counts = sizes[benchmark].split(",") if benchmark in sizes else []
        for number in range(max(1, len(counts))):
            name = PART_NAMES[number]
            selection = ["--part", name, "--sizes", sizes[benchmark]] if counts else []
            out = args.out_dir / f"{benchmark}_{name}"
            parts.append(eval_benchmark.parse_args(
                [*common, "--benchmark", benchmark, "--items", path, *selection,
                 "--out-json", f"{out}.json", "--out-records", f"{out}.records.jsonl"]
            ))
    return parts


def main(argv=None) -> int:
    started = time.perf_counter()
    args, shared = parse_args(argv)
    parts = part_arguments(args, shared)
    selections = [eval_benchmark.select(part) for part in parts]  # every item file checked before the load
    loaded = eval_benchmark.load(parts[0])
    print(f"loaded {args.model} in {time.perf_counter() - started:.1f}s; {len(parts)} parts", flush=True)
    for number, (part, selected) in enumerate(zip(parts, selections, strict=True), start=1):
        print(f"[{number}/{len(parts)}] ", end="", flush=True)
        eval_benchmark.evaluate(part, selected, *loaded)
    print(f"{len(parts)} parts of {args.model} in {time.perf_counter() - started:.1f}s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
