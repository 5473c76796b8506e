"""Instruction following (IFEval's format): strict prompt-level accuracy by lm-eval's own checkers,
plus loose and instruction-level (lineage/evaluation/ifeval.py runs the checkers)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lineage.evaluation.benchmark import Benchmark, ModelIndexEntry, Sample, TableRow


def messages(item: Mapping[str, Any]) -> list[dict[str, str]]:
    return [{"role": "user", "content": item["prompt"]}]


def check(item: Mapping[str, Any]) -> str | None:
    if len(item["kwargs"]) != len(item["instruction_id_list"]):
        return f"has {len(item['instruction_id_list'])} instructions but {len(item['kwargs'])} kwargs entries"
    return None


def run(model, chat, items: Sequence[dict], opts):
    """Strict prompt-level accuracy (the card's score), plus loose and instruction-level."""
    from lineage.evaluation import ifeval
    from lineage.evaluation.tasks import generate

    ifeval.registry()  # fail on a missing Punkt model before spending time on generation
    prompts, outs, texts = generate(model, chat, [messages(it) for it in items], opts, BENCHMARK)
    records, verdicts = [], []
    for item, prompt, out, text in zip(items, prompts, outs, texts):
        verdict = ifeval.check_response(item, text)
        verdicts.append(verdict)
        records.append(
            {
                "id": BENCHMARK.item_id(item),
                "prompt": prompt,
                "output": text,
                "finish_reason": out.finish_reason,
                "instruction_id_list": item["instruction_id_list"],
                "strict": verdict["strict"],
                "loose": verdict["loose"],
                "correct": all(verdict["strict"]),
                "lm_eval_chance": verdict["lm_eval_chance"],
            }
        )
    agg = ifeval.aggregate(verdicts)
    # Where lm-eval's verdict is a draw (lineage/evaluation/ifeval.py): ours, and how often lm-eval's passes.
    chance = [{"item": rec["id"], **c} for rec in records for c in rec["lm_eval_chance"]]
    extras = {
        "score": agg["prompt_level_strict_acc"],
        **agg,
        "n_length_stopped": sum(o.finish_reason == "length" for o in outs),
        "lm_eval_chance": chance,
    }
    return extras, records, sum(len(o.token_ids) for o in outs)


BENCHMARK = Benchmark(
    name="ifeval",
    parts=("A", "B", "C"),
    id_field="key",
    fields={"prompt": str, "instruction_id_list": list, "kwargs": list},
    check=check,
    run=run,
    rows=(
        TableRow("Instruction-following A / B", "Instruction-following A / B", ("A", "B"), True),
        TableRow("Instruction-following C", "Instruction-following C (753)", ("C",), True),
    ),
    generates=True,
    unit="generated",
    model_index=ModelIndexEntry("Instruction-following", "prompt_level_strict_acc"),
    card_position=3,
    sample=Sample("resources/sample/eval/ifeval.jsonl", (16, 24, 32)),
    max_new_tokens=1280,
)
