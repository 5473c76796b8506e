"""Generation degeneration: mean seq-rep-4 over each response's generated token ids (lower is better)."""

from __future__ import annotations

from collections.abc import Sequence

from lineage.evaluation import metrics
from lineage.evaluation.benchmark import Benchmark, ModelIndexEntry, Sample, TableRow, check_conversation


def run(model, chat, items: Sequence[dict], opts):
    from lineage.evaluation.tasks import generate

    prompts, outs, texts = generate(model, chat, [it["messages"] for it in items], opts, BENCHMARK)
    result = metrics.degen_score([o.token_ids for o in outs])
    records = [
        {
            "id": BENCHMARK.item_id(item),
            "prompt": prompt,
            "output": text,
            "n_tokens": len(out.token_ids),
            "finish_reason": out.finish_reason,
            "seq_rep_4": value,
            "short": len(out.token_ids) < 4,
        }
        for item, prompt, out, text, value in zip(items, prompts, outs, texts, result["per_item"])
    ]
    extras = {
        "score": result["score"],
        "n_short": result["n_short"],
        "mean_tokens": sum(len(o.token_ids) for o in outs) / len(outs),
        "n_length_stopped": sum(o.finish_reason == "length" for o in outs),
    }
    return extras, records, sum(len(o.token_ids) for o in outs)


BENCHMARK = Benchmark(
    name="degen",
    parts=("A",),
    id_field="id",
    fields={"messages": list},
    check=check_conversation,
    run=run,
    rows=(
        TableRow(
            "Gen degen (lower better)",
            "Gen degen (lower better)",
            (None,),
            False,
            value=lambda r: float(r["seq_rep_4"]),
        ),
    ),
    generates=True,
    unit="generated",
    model_index=ModelIndexEntry("Gen degen (seq-rep-4, lower is better)", "seq_rep_4"),
    card_position=4,
    sample=Sample("resources/sample/eval/gen_prompts.jsonl", (24,)),
    max_new_tokens=512,
)
