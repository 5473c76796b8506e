"""Do the decoders write the same answers? A trained checkpoint, the generating benchmarks, each cache.

Run as: python benchmarks/decoders_agree.py --model results/embedded/models/soupF2 --device cuda \\
            --dtypes float32,bfloat16 --max-new-tokens 128

The model answers the shipped GSM8K and IFEval items through the benchmarks' own runners with each
generation cache: transformers' generate on its dynamic cache (the reference), our static cache with
the step replayed as a CUDA graph in fixed batches (graph), and the same step with rows refilled as
answers end (continuous). Printed per dtype and benchmark: the score of each cache with its 95%
interval, and for how many items each cache's text equals the reference's; the first differing
items are shown with the position where the texts part.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow" / "scripts"))

from lineage.checkpoints.load import load_model  # noqa: E402
from lineage.evaluation.benchmarks import BENCHMARKS  # noqa: E402
from lineage.evaluation.items import load_items  # noqa: E402
from lineage.evaluation.prompts import ChatRenderer  # noqa: E402
from lineage.evaluation.stats import wilson  # noqa: E402
from lineage.evaluation.tasks import RunOptions  # noqa: E402

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}
CACHES = ("dynamic", "graph", "continuous")


def parting(a: str, b: str) -> int:
    """The first character where two texts differ."""
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


def answers(bench, model, chat, items, opts) -> tuple[float | None, list[dict]]:
    """(score, records) from the benchmark's runner; where its checkers are not installed (IFEval's
    need lm-eval and NLTK), the answers alone, through the same generation call, and no score."""
    try:
        extras, records, _ = bench.run(model, chat, items, opts)
        return extras["score"], records
    except ImportError as missing:
        print(f"  {bench.name}: no score ({missing}); comparing the answers only", flush=True)
    from lineage.evaluation.tasks import generate

    module = sys.modules[bench.run.__module__]
    _, _, texts = generate(model, chat, [module.messages(item) for item in items], opts, bench)
    return None, [{"id": bench.item_id(item), "output": text} for item, text in zip(items, texts)]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--dtypes", default="float32")
    parser.add_argument("--benchmarks", default="gsm8k,ifeval")
    parser.add_argument("--max-new-tokens", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    chat = ChatRenderer(args.model)
    rows = []
    for dtype in args.dtypes.split(","):
        model = load_model(args.model, dtype=DTYPES[dtype], device=args.device).eval()
        for name in args.benchmarks.split(","):
            bench = BENCHMARKS[name]
            items = load_items(name, REPO / bench.sample.items)
            records = {}
            for cache in CACHES:
                opts = RunOptions(
                    batch_size=args.batch_size, max_new_tokens=args.max_new_tokens, cache=cache, bucket=64
                )
                score, records[cache] = answers(bench, model, chat, items, opts)
                low, high = (None, None) if score is None else wilson(round(score * len(items)), len(items))
                rows.append(
                    {
                        "dtype": dtype,
                        "benchmark": name,
                        "cache": cache,
                        "n": len(items),
                        "score": None if score is None else round(score, 4),
                        "interval95": None if low is None else [round(low, 4), round(high, 4)],
                        "same_text_as_dynamic": sum(
                            a["output"] == b["output"] for a, b in zip(records[cache], records["dynamic"])
                        ),
                    }
                )
                print(json.dumps(rows[-1]), flush=True)
            for cache in CACHES[1:]:
                for a, b in zip(records[cache], records["dynamic"]):
                    if a["output"] != b["output"]:
                        at = parting(a["output"], b["output"])
                        print(
                            f"  {dtype} {name} {cache} item {a['id']}: parts at char {at}: "
                            f"{a['output'][at : at + 40]!r} vs dynamic {b['output'][at : at + 40]!r}"
                        )
        del model
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
