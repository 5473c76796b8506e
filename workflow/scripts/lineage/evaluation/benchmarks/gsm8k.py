"""GSM8K zero-shot in a chat: a worked answer, scored by lm-eval's strict-match and flexible-extract.

The question is lm-eval's gsm8k layout plus a request for GSM8K's own "#### N" answer line, so
strict-match (the card's score) applies and a check line after the answer does not change it;
flexible-extract (the last number) is reported beside it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lineage.evaluation import metrics
from lineage.evaluation.benchmark import Benchmark, ModelIndexEntry, Sample, TableRow

QUESTION = (
    "Question: {question}\n"
    'Solve the problem step by step, then give the final answer on its own line as "#### <number>".'
)


def messages(item: Mapping[str, Any]) -> list[dict[str, str]]:
    return [{"role": "user", "content": QUESTION.format(question=item["question"])}]


def check(item: Mapping[str, Any]) -> str | None:
    return None if "####" in item["answer"] else "field 'answer' has no '#### <number>' line"


def run(model, chat, items: Sequence[dict], opts):
    """Generate a worked answer; exact match of strict-match (the score) and flexible-extract."""
    from lineage.evaluation.tasks import generate

    prompts, outs, texts = generate(model, chat, [messages(it) for it in items], opts, BENCHMARK)
    records, flexible, strict = [], 0, 0
    for item, prompt, out, text in zip(items, prompts, outs, texts):
        pred_flex, pred_strict = metrics.gsm8k_flexible(text), metrics.gsm8k_strict(text)
        ok_flex = metrics.gsm8k_exact_match(pred_flex, item["answer"])
        ok_strict = metrics.gsm8k_exact_match(pred_strict, item["answer"])
        flexible += ok_flex
        strict += ok_strict
        records.append(
            {
                "id": BENCHMARK.item_id(item),
                "prompt": prompt,
                "output": text,
                "finish_reason": out.finish_reason,
                "target": metrics.gsm8k_target(item["answer"]),
                "flexible_extract": pred_flex,
                "strict_match": pred_strict,
                "correct": ok_strict,
                "correct_flexible": ok_flex,
            }
        )
    n = len(items)
    extras = {
        "score": strict / n,
        "flexible_extract": flexible / n,
        "strict_match": strict / n,
        "n_length_stopped": sum(o.finish_reason == "length" for o in outs),
    }
    return extras, records, sum(len(o.token_ids) for o in outs)


BENCHMARK = Benchmark(
    name="gsm8k",
    parts=("A", "B"),
    id_field="id",
    fields={"question": str, "answer": str},
    check=check,
    run=run,
    rows=(TableRow("GSM8K A / B", "GSM8K A / B (300 each)", ("A", "B"), True),),
    generates=True,
    unit="generated",
    model_index=ModelIndexEntry("GSM8K", "exact_match", "openai/gsm8k"),
    card_position=2,
    sample=Sample("resources/sample/eval/gsm8k.jsonl", (16, 16)),
    max_new_tokens=512,
)
