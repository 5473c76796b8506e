"""Battle holdout margins: does the model give the preferred answer of each held-out battle the
higher log-prob (summed, and per token)? The items are the holdout pairs a data stage writes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lineage.evaluation import metrics
from lineage.evaluation.benchmark import Benchmark, ModelIndexEntry, TableRow, check_conversation


def summed_margin(record: Mapping[str, Any]) -> float:
    return float(record["chosen_logprob"]) - float(record["rejected_logprob"])


def per_token_margin(record: Mapping[str, Any]) -> float:
    return float(record["chosen_logprob"]) / max(1, int(record["chosen_tokens"])) - float(
        record["rejected_logprob"]
    ) / max(1, int(record["rejected_tokens"]))


def run(model, chat, items: Sequence[dict], opts):
    """Share of held-out battles where the preferred answer has the higher summed (and per-token mean) log-prob."""
    from lineage.evaluation.scoring import encode_pairs
    from lineage.evaluation.tasks import completion_text, score_requests

    texts = [completion_text(chat, item["messages"], item[side]) for item in items for side in ("chosen", "rejected")]
    encoded = encode_pairs(chat.encode_batch, texts)
    requests = [(context, continuation) for context, continuation, _ in encoded]
    boundary_merges = sum(not clean for _, _, clean in encoded)
    prompts = [prompt for prompt, _ in texts[0::2]]
    scores = score_requests(model, requests, opts, chat.pad_token_id())
    chosen, rejected = scores[0::2], scores[1::2]
    records = [
        {
            "id": BENCHMARK.item_id(item),
            "prompt_id": item.get("prompt_id"),
            "prompt": prompt,
            "chosen_logprob": c.logprob,
            "chosen_tokens": c.n_tokens,
            "rejected_logprob": r.logprob,
            "rejected_tokens": r.n_tokens,
            "correct": c.logprob > r.logprob,
            "correct_per_token": c.mean_logprob > r.mean_logprob,
            "margin": c.logprob - r.logprob,
            "per_token_margin": c.mean_logprob - r.mean_logprob,
            "truncated": c.truncated or r.truncated,
        }
        for item, prompt, c, r in zip(items, prompts, chosen, rejected)
    ]
    extras = {
        "score": metrics.margin_accuracy([c.logprob for c in chosen], [r.logprob for r in rejected]),
        "per_token_margin_acc": metrics.margin_accuracy(
            [c.mean_logprob for c in chosen], [r.mean_logprob for r in rejected]
        ),
        "mean_margin": sum(c.logprob - r.logprob for c, r in zip(chosen, rejected)) / len(items),
        "mean_per_token_margin": sum(c.mean_logprob - r.mean_logprob for c, r in zip(chosen, rejected)) / len(items),
        "n_truncated": sum(rec["truncated"] for rec in records),
        "n_boundary_merges": boundary_merges,
    }
    return extras, records, sum(s.n_tokens for s in scores)


BENCHMARK = Benchmark(
    name="margin",
    parts=("A",),
    id_field="battle_id",
    fields={"messages": list, "chosen": str, "rejected": str},
    check=check_conversation,
    run=run,
    # The card's accuracy, then the margins themselves: they move where accuracies sit at the floor.
    rows=(
        TableRow("Battle holdout margin acc", "Battle holdout margin acc", (None,), False),
        TableRow("Battle mean margin (log-prob)", None, (None,), False, "mean_margin", summed_margin),
        TableRow("Battle per-token margin", None, (None,), False, "mean_per_token_margin", per_token_margin),
    ),
    generates=False,
    unit="scored",
    model_index=ModelIndexEntry("Battle holdout margin", "margin_accuracy"),
    card_position=5,
    items_from="holdout_pairs.jsonl",
)
