"""Benchmark scores, each defined as the reference implementation defines it.

- MMLU: the letter of highest log-likelihood. Under a chat template lm-eval joins context and
  choice with an empty delimiter (PR #2475), so the continuation is "A", not " A", right after
  the assistant header. lm-eval then moves the context's trailing whitespace (the header's
  newline) into the continuation, so the scored tokens are "\n" + letter; the newline's
  log-prob is the same for all four letters, so it never changes the choice.
- GSM8K: lm-eval's gsm8k filters and exact_match settings, copied verbatim: strict-match takes
  the first "#### N", flexible-extract the last number-like span; both sides then lose commas,
  "$", everything up to "#### " and a final "." before a case-insensitive comparison.
- Gen degen: seq-rep-4 (Welleck et al. 2019), 1 - unique 4-grams / 4-grams of the generated
  token ids, averaged over responses. A response with fewer than 4 tokens has no 4-gram; it
  counts as 0 (no repetition) and is counted separately so a collapse to empty answers shows.
- Battle margin: share of pairs where the summed log-prob of the preferred answer beats the
  losing one (ties count as not preferred), plus the same with per-token means, which removes
  the advantage a shorter answer has under a sum.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

# lm_eval/tasks/gsm8k/gsm8k.yaml (0.4.13)
GSM8K_STRICT_PATTERN = r"#### (\-?[0-9\.\,]+)"
GSM8K_FLEXIBLE_PATTERN = r"(-?[$0-9.,]{2,})|(-?[0-9]+)"
GSM8K_IGNORE = (",", "\\$", "(?s).*#### ", "\\.$")
INVALID = "[invalid]"


def mmlu_choice(logprobs: Sequence[float]) -> int:
    """Index of the highest log-likelihood (first on ties, as numpy.argmax in lm-eval)."""
    if not logprobs:
        raise ValueError("no choices")
    return max(range(len(logprobs)), key=lambda i: (logprobs[i], -i))


def _regex_extract(text: str, pattern: str, group_select: int) -> str:
    """lm-eval's RegexFilter.apply on one response."""
    matches = re.findall(pattern, text if isinstance(text, str) else "")
    if not matches:
        return INVALID
    match = matches[group_select]
    if isinstance(match, tuple):
        found = [m for m in match if m]
        match = found[0] if found else INVALID
    return match.strip()


def gsm8k_strict(text: str) -> str:
    return _regex_extract(text, GSM8K_STRICT_PATTERN, 0)


def gsm8k_flexible(text: str) -> str:
    return _regex_extract(text, GSM8K_FLEXIBLE_PATTERN, -1)


def gsm8k_normalize(text: str) -> str:
    for pattern in GSM8K_IGNORE:
        text = re.sub(pattern, "", text)
    return text.lower()


def gsm8k_target(answer: str) -> str:
    """The gold number: the text after '####', normalized like a prediction."""
    return gsm8k_normalize(answer)


def gsm8k_exact_match(prediction: str, answer: str) -> bool:
    return gsm8k_normalize(prediction) == gsm8k_target(answer)


def seq_rep_n(tokens: Sequence[int], n: int = 4) -> float | None:
    """1 - |unique n-grams| / |n-grams|; None when the sequence has no n-gram."""
    grams = [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]
    if not grams:
        return None
    return 1.0 - len(set(grams)) / len(grams)


def degen_score(responses: Iterable[Sequence[int]], n: int = 4) -> dict[str, Any]:
    """Mean seq-rep-n over responses; short responses count as 0 and are reported."""
    values, short = [], 0
    for tokens in responses:
        value = seq_rep_n(tokens, n)
        if value is None:
            short += 1
            value = 0.0
        values.append(value)
    if not values:
        raise ValueError("no responses to score")
    return {"score": sum(values) / len(values), "n": len(values), "n_short": short, "per_item": values}


def margin_accuracy(chosen: Sequence[float], rejected: Sequence[float]) -> float:
    """Share of pairs with chosen strictly above rejected."""
    if len(chosen) != len(rejected) or not chosen:
        raise ValueError(f"need equal, non-zero numbers of scores (got {len(chosen)} chosen, {len(rejected)} rejected)")
    return sum(c > r for c, r in zip(chosen, rejected)) / len(chosen)
