"""Verifier pairs: preference pairs from a model's own samples, judged by programmatic checkers.

The Stage-1 recipe's DPO rounds 2-4 train on samples the model itself generated for
training-split prompts of two kinds: GSM8K-style math (the final number must equal the
answer, extracted as lm-eval's GSM8K task does) and IFEval-style constraints (every
instruction must pass the IFEval checker, strict). A prompt whose samples include both a
verified and a failed answer gives pairs: verified = chosen, failed = rejected. Training
prompts must never be evaluation items: `find_overlap` compares them by normalized text (the workflow at
start-up, lineage/workflow/checks.py; verifier_pairs.py --eval-items when run by hand). It imports no torch:
Snakemake's start-up reads it.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from lineage.evaluation import metrics
from lineage.evaluation.benchmarks import gsm8k as gsm8k_benchmark
from lineage.evaluation.benchmarks import ifeval as ifeval_benchmark
from lineage.io import DataError, control_character

PROMPT_TYPES = ("math", "if")
# Text fields of eval items that a training prompt must not repeat, per item format.
EVAL_TEXT_FIELDS = ("question", "prompt")


def check_prompt(item: Mapping[str, Any], where: str) -> None:
    """A verifier prompt: {id, type: math, question, answer: '... #### N'} or {id, type: if, prompt,
    instruction_id_list, kwargs}; DataError naming the line and field otherwise."""
    kind = item.get("type")
    if kind not in PROMPT_TYPES:
        raise DataError(f"{where}: field 'type' must be one of {', '.join(PROMPT_TYPES)}, got {kind!r}")
    needed = ("id", "question", "answer") if kind == "math" else ("id", "prompt", "instruction_id_list", "kwargs")
    for name in needed:
        if name not in item:
            raise DataError(f"{where}: field {name!r} is missing (a {kind} prompt needs {', '.join(needed)})")
    if kind == "math" and "####" not in str(item["answer"]):
        raise DataError(f"{where}: field 'answer' must end with '#### <number>' as GSM8K answers do")
    if kind == "if" and len(item["instruction_id_list"]) != len(item["kwargs"]):
        raise DataError(f"{where}: fields 'instruction_id_list' and 'kwargs' must have the same length")


def messages(item: Mapping[str, Any]) -> list[dict[str, str]]:
    """The user turn, phrased exactly as the evaluation phrases its prompts of this type."""
    return gsm8k_benchmark.messages(item) if item["type"] == "math" else ifeval_benchmark.messages(item)


def verify(item: Mapping[str, Any], response: str) -> bool:
    """Does the response pass the programmatic check of its prompt?"""
    if item["type"] == "math":
        return metrics.gsm8k_exact_match(metrics.gsm8k_flexible(response), item["answer"])
    from lineage.evaluation import ifeval

    return all(ifeval.check_response(item, response)["strict"])


def build_pairs(
    items: Sequence[Mapping[str, Any]],
    samples: Sequence[Sequence[str]],
    verdicts: Sequence[Sequence[bool]],
    *,
    max_pairs_per_prompt: int,
    round_name: str,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """DPO rows (verified sample chosen, failed sample rejected) and acceptance statistics.

    Identical texts are counted once per prompt, so a sampler that repeats itself does not
    inflate the pairs; the i-th distinct verified answer is paired with the i-th distinct failed one.
    """
    rows: list[dict[str, Any]] = []
    counts: dict[str, Counter] = defaultdict(Counter)
    for item, texts, passed in zip(items, samples, verdicts, strict=True):
        tally = counts[item["type"]]
        tally["prompts"] += 1
        tally["samples"] += len(texts)
        tally["verified"] += sum(passed)
        # a sample with a control character is not text a pair may train on (the readers refuse it)
        usable = [t.strip() != "" and control_character(t) is None for t in texts]
        tally["control_characters"] += sum(1 for t in texts if control_character(t) is not None)
        good = list(dict.fromkeys(t for t, ok, use in zip(texts, passed, usable, strict=True) if ok and use))
        bad = list(dict.fromkeys(t for t, ok, use in zip(texts, passed, usable, strict=True) if not ok and use))
        made = 0
        for chosen, rejected in zip(good, bad):
            if made == max_pairs_per_prompt:
                break
            rows.append(
                {
                    "messages": messages(item),
                    "chosen": chosen,
                    "rejected": rejected,
                    "source": f"verifier:{round_name}",
                    "type": item["type"],
                    "prompt_id": item["id"],
                }
            )
            made += 1
        tally["prompts_with_pairs"] += made > 0
        tally["pairs"] += made
    by_type = {kind: _rates(counts[kind]) for kind in PROMPT_TYPES if kind in counts}
    total = _rates(sum(counts.values(), Counter()))
    return rows, {"round": round_name, "by_type": by_type, "total": total}


def _rates(tally: Counter) -> dict[str, Any]:
    keys = ("prompts", "samples", "verified", "prompts_with_pairs", "pairs")
    stats = {key: int(tally[key]) for key in keys}
    stats["acceptance_rate"] = round(tally["verified"] / tally["samples"], 4) if tally["samples"] else None
    return stats


def normalize(text: str) -> str:
    """Case-, accent-, punctuation- and whitespace-insensitive form of a prompt, for overlap checks."""
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text).split())


def prompt_text(item: Mapping[str, Any]) -> str:
    return str(item.get("question") or item.get("prompt") or "")


class Overlap(NamedTuple):
    """A training prompt whose normalized text is an eval item's, by position in find_overlap's arguments (so a
    caller names the rows it read them from)."""

    prompt: int  # index into `train`
    source: str  # key of `evaluation`
    item: int  # index into evaluation[source]


def find_overlap(
    train: Iterable[Mapping[str, Any]], evaluation: Mapping[str, Iterable[Mapping[str, Any]]]
) -> list[Overlap]:
    """Every training prompt whose normalized text is an eval item's, with the first such item."""
    seen: dict[str, tuple[str, int]] = {}
    for source, items in evaluation.items():
        for number, item in enumerate(items):
            for field in EVAL_TEXT_FIELDS:
                if item.get(field):
                    seen.setdefault(normalize(str(item[field])), (source, number))
    return [
        Overlap(position, *seen[key])
        for position, item in enumerate(train)
        if (key := normalize(prompt_text(item))) in seen
    ]
