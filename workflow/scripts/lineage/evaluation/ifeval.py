"""IFEval checking with lm-evaluation-harness's own instruction checkers.

Each instruction is built exactly as `lm_eval/tasks/ifeval/utils.py` builds it: falsy kwargs
are dropped (lm-eval filters with `if v`, which drops None but also 0 and ""), then
`build_description(**kwargs)`, then `build_description(prompt=...)` when the instruction
takes the prompt. Strict: the response is non-empty and passes. Loose: any of lm-eval's 8
variants passes (the response, without its first line, last line or both, each with and
without "*"). langdetect, used by three checkers, is seeded so a borderline text gets the
same verdict on every run (lm-eval leaves it unseeded).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from lineage.evaluation.nltk_setup import ensure_punkt

LANGDETECT_SEED = 0


@lru_cache(maxsize=1)
def registry() -> Mapping[str, Any]:
    """lm-eval's INSTRUCTION_DICT, imported only after NLTK is pointed at the installed Punkt model."""
    ensure_punkt()
    import langdetect

    langdetect.DetectorFactory.seed = LANGDETECT_SEED
    from lm_eval.tasks.ifeval import instructions_registry

    return instructions_registry.INSTRUCTION_DICT


def loose_variants(response: str) -> list[str]:
    """lm-eval's test_instruction_following_loose variants, in its order."""
    lines = response.split("\n")
    remove_first = "\n".join(lines[1:]).strip()
    remove_last = "\n".join(lines[:-1]).strip()
    remove_both = "\n".join(lines[1:-1]).strip()
    return [
        response,
        response.replace("*", ""),
        remove_first,
        remove_last,
        remove_both,
        remove_first.replace("*", ""),
        remove_last.replace("*", ""),
        remove_both.replace("*", ""),
    ]


def build_instruction(instruction_id: str, kwargs: Mapping[str, Any] | None, prompt: str):
    checkers = registry()
    if instruction_id not in checkers:
        raise KeyError(f"unknown IFEval instruction id {instruction_id!r}; lm-eval knows {len(checkers)} ids")
    instruction = checkers[instruction_id](instruction_id)
    instruction.build_description(**{k: v for k, v in (kwargs or {}).items() if v})
    args = instruction.get_instruction_args()
    if args and "prompt" in args:
        instruction.build_description(prompt=prompt)
    return instruction


def check_response(item: Mapping[str, Any], response: str) -> dict[str, list[bool]]:
    """Per-instruction strict and loose verdicts for one IFEval item and one response."""
    variants = loose_variants(response)
    strict, loose = [], []
    for index, instruction_id in enumerate(item["instruction_id_list"]):
        instruction = build_instruction(instruction_id, item["kwargs"][index], item["prompt"])
        strict.append(bool(response.strip() and instruction.check_following(response)))
        loose.append(any(v.strip() and instruction.check_following(v) for v in variants))
    return {"strict": strict, "loose": loose}


def aggregate(verdicts: Sequence[Mapping[str, Sequence[bool]]]) -> dict[str, float]:
    """Prompt-level (all instructions pass) and instruction-level (micro-average) accuracy."""
    if not verdicts:
        raise ValueError("no IFEval verdicts to aggregate")
    out = {}
    for mode in ("strict", "loose"):
        out[f"prompt_level_{mode}_acc"] = sum(all(v[mode]) for v in verdicts) / len(verdicts)
        flat = [x for v in verdicts for x in v[mode]]
        out[f"inst_level_{mode}_acc"] = sum(flat) / len(flat) if flat else 0.0
    return out
