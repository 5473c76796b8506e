"""A preference row's prompt, chosen and rejected answers, in whichever layout its publisher ships it.

Torch-free, so the config checks read a source's first row at the dry run with the trainer's own reader.
"""

from __future__ import annotations

from typing import Any

from lineage.io import DataError
from lineage.screening import turns_problem

PAIR_FIELDS = ("chosen", "rejected")  # every layout of pair_conversation has them


def _turns(value, field: str, where: str) -> list[dict[str, str]]:
    """`value` as chat turns, or DataError naming the row and field."""
    problem = turns_problem(value, field)
    if problem:
        raise DataError(f"{where}: field {problem}")
    return value


def _answer(value, field: str, where: str) -> str:
    """An answer given as a string, an assistant message, or a list holding one."""
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if isinstance(value, dict) and value.get("role") == "assistant":
        value = value.get("content")
    if not isinstance(value, str):
        raise DataError(f"{where}: field '{field}': expected the answer as text or an assistant message")
    return value


def _is_conversation(value) -> bool:
    return isinstance(value, list) and len(value) > 1


def pair_conversation(row: dict[str, Any], where: str) -> tuple[list[dict[str, str]], str, str]:
    """(prompt turns, chosen answer, rejected answer) of a preference row, in any layout its sources ship:

    - ours and TRL's conversational layout: `messages` (or `prompt` as turns) ending with a user turn, and
      `chosen`, `rejected` each the answer's text, an assistant message or a list holding one;
    - the Tulu-3 preference mixture's and UltraFeedback's (binarized): `chosen` and `rejected` each the whole
      conversation, the same prompt turns then the answer; their `prompt` text is not read, and
      UltraFeedback's `messages` (the chosen conversation again) must agree;
    - TRL's standard layout: `prompt` as text (one user turn), `chosen` and `rejected` as text.
    """
    chosen, rejected = row.get("chosen"), row.get("rejected")
    if _is_conversation(chosen) or _is_conversation(rejected):
        if not (_is_conversation(chosen) and _is_conversation(rejected)):
            raise DataError(f"{where}: fields 'chosen', 'rejected': one is a whole conversation, the other is not")
        chosen, rejected = _turns(chosen, "chosen", where), _turns(rejected, "rejected", where)
        prompt = chosen[:-1]
        if rejected[:-1] != prompt:
            raise DataError(f"{where}: field 'rejected': its turns before the answer differ from 'chosen''s")
        if row.get("messages") not in (None, prompt, chosen):
            raise DataError(f"{where}: field 'messages': neither the prompt of 'chosen' nor its whole conversation")
        chosen, rejected = chosen[-1], rejected[-1]
    elif "messages" in row:
        prompt = _turns(row["messages"], "messages", where)
    elif isinstance(row.get("prompt"), str):
        prompt = [{"role": "user", "content": row["prompt"]}]
    elif "prompt" in row:
        prompt = _turns(row["prompt"], "prompt", where)
    else:
        raise DataError(
            f"{where}: no prompt: give 'messages' (or 'prompt'), or 'chosen' and 'rejected' as conversations"
        )
    if not prompt or prompt[-1]["role"] != "user":
        raise DataError(
            f"{where}: the prompt must end with a user turn (got {prompt[-1]['role'] if prompt else 'none'})"
        )
    return prompt, _answer(chosen, "chosen", where), _answer(rejected, "rejected", where)
