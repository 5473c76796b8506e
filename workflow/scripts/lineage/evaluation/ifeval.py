"""IFEval checking with lm-evaluation-harness's own instruction checkers.

Each instruction is built exactly as `lm_eval/tasks/ifeval/utils.py` builds it: falsy kwargs
are dropped (lm-eval filters with `if v`, which drops None but also 0 and ""), then
`build_description(**kwargs)`, then `build_description(prompt=...)` when the instruction
takes the prompt. Strict: the response is non-empty and passes. Loose: any of lm-eval's 8
variants passes (the response, without its first line, last line or both, each with and
without "*"). langdetect, used by three checkers, is seeded so a borderline text gets the
same verdict on every run (lm-eval leaves it unseeded).

One verdict per response, on every run and machine. lm-eval fills an argument an item leaves out
(or gives falsy) from Python's global, unseeded `random`, and its letter-frequency checker counts
a random letter when the item asks for a character that is not an ASCII letter ("# at least 3
times"): such verdicts change from run to run. Here every instruction is built under a seed of
its own (the item's key and the instruction's position), so a left-out argument gets one fixed
draw from lm-eval's own distribution, and a non-letter is counted as the character the prompt
asks for. The public IFEval prompts give every argument; two of the 541 ask for a non-letter
(key 1122: "#" at least 4 times, key 1129: "!" at least 6 times), where lm-eval's verdict is a
draw. `lm_eval_chance` names each such instruction with the share of lm-eval's draws that pass
the same response; every other verdict is lm-eval's.
"""

from __future__ import annotations

import json
import random
import string
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

from lineage.evaluation.nltk_setup import ensure_punkt

LANGDETECT_SEED = 0
LM_EVAL_DRAWS = 64  # lm-eval builds of a chance-dependent instruction, to estimate how often it passes
LETTER_FREQUENCY = "keywords:letter_frequency"


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


@contextmanager
def seeded(seed: str) -> Iterator[None]:
    """Python's global `random` (what lm-eval's checkers draw from) under `seed`, restored afterwards.
    A string seed is hashed with SHA-512, the same on every process and machine."""
    state = random.getstate()
    random.seed(seed)
    try:
        yield
    finally:
        random.setstate(state)


def literal_character(instruction_id: str, kwargs: Mapping[str, Any]) -> str | None:
    """The character a letter-frequency instruction asks for when it is not an ASCII letter."""
    letter = kwargs.get("letter")
    if instruction_id != LETTER_FREQUENCY or not isinstance(letter, str) or len(letter.strip()) != 1:
        return None
    letter = letter.strip().lower()
    return None if letter in string.ascii_lowercase else letter


def build_instruction(
    instruction_id: str, kwargs: Mapping[str, Any] | None, prompt: str, *, seed: str = "", as_lm_eval: bool = False
):
    """lm-eval's checker for one instruction, built under `seed`; `as_lm_eval` keeps lm-eval's random
    letter for a non-letter (to measure how its verdicts vary), otherwise that character is counted."""
    checkers = registry()
    if instruction_id not in checkers:
        raise KeyError(f"unknown IFEval instruction id {instruction_id!r}; lm-eval knows {len(checkers)} ids")
    given = {k: v for k, v in (kwargs or {}).items() if v}
    literal = None if as_lm_eval else literal_character(instruction_id, given)
    with seeded(f"ifeval/{seed}/{instruction_id}"):
        instruction = checkers[instruction_id](instruction_id)
        instruction.build_description(**(given | {"letter": "a"} if literal else given))
        if literal:
            instruction._letter = literal  # lm-eval's check_following counts self._letter in the lowercased text
        args = instruction.get_instruction_args()
        if args and "prompt" in args:
            instruction.build_description(prompt=prompt)
    return instruction


def passes(instruction, response: str) -> tuple[bool, bool]:
    """(strict, loose) verdicts of one built instruction."""
    strict = bool(response.strip() and instruction.check_following(response))
    return strict, any(v.strip() and instruction.check_following(v) for v in loose_variants(response))


@lru_cache(maxsize=4096)
def lm_eval_draws(instruction_id: str, kwargs_json: str, prompt: str) -> tuple | None:
    """LM_EVAL_DRAWS builds as lm-eval makes them, under different seeds; None when they are all the
    same instruction (lm-eval's verdict does not depend on chance). Cached: one item, many responses."""
    kwargs = json.loads(kwargs_json)
    builds = tuple(
        build_instruction(instruction_id, kwargs, prompt, seed=f"draw{k}", as_lm_eval=True)
        for k in range(LM_EVAL_DRAWS)
    )
    if len({json.dumps(b.get_instruction_args() or {}, sort_keys=True, default=str) for b in builds}) == 1:
        return None
    return builds


def lm_eval_pass_rate(instruction_id: str, kwargs, prompt: str, response: str) -> float | None:
    """Share of lm-eval's draws whose strict verdict passes `response`; None without chance."""
    builds = lm_eval_draws(instruction_id, json.dumps(kwargs or {}, sort_keys=True), prompt)
    return None if builds is None else sum(passes(b, response)[0] for b in builds) / len(builds)


def check_response(item: Mapping[str, Any], response: str) -> dict[str, list]:
    """Per-instruction strict and loose verdicts for one IFEval item and one response, the same on
    every run; `lm_eval_chance` lists the instructions whose lm-eval verdict is a draw."""
    strict, loose, chance = [], [], []
    key = item.get("key", item["prompt"])
    for index, instruction_id in enumerate(item["instruction_id_list"]):
        kwargs = item["kwargs"][index]
        instruction = build_instruction(instruction_id, kwargs, item["prompt"], seed=f"{key}/{index}")
        verdict = passes(instruction, response)
        strict.append(verdict[0])
        loose.append(verdict[1])
        rate = lm_eval_pass_rate(instruction_id, kwargs, item["prompt"], response)
        if rate is not None:
            chance.append({"instruction": index, "id": instruction_id, "ours": verdict[0], "lm_eval_pass_rate": rate})
    return {"strict": strict, "loose": loose, "lm_eval_chance": chance}


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
