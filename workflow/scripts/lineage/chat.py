"""Chat rendering and assistant-only labels, shared by SFT, DPO and the evaluations.

Every stage must see a conversation exactly as the served model will: the bundle's chat
template, and the bundle's system prompt when a conversation brings none. Labels come from
character offsets in the rendered string (open-instruct's method): an assistant turn's span
starts after its header and ends after its end-of-turn token, and a token is trained when its
characters overlap a span. The trained tokens are then decoded and compared with the turn's
content + end-of-turn, so a template or tokenizer that breaks the spans is caught, not trained on.
"""

from __future__ import annotations

import hashlib
import json
import os
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

IGNORE_INDEX = -100
END_OF_TURN = "<|im_end|>"
DROPPED_ROWS_KEPT = 100  # distinct dropped rows named in lineage.json (the counts are always whole)
SYSTEM_PROMPT_FILE = "system_prompt.txt"
CHAT_TEMPLATE_FILE = "chat_template.jinja"
TRUNCATION_MODES = ("drop", "truncate")

Message = Mapping[str, str]


class ChatFormatError(ValueError):
    """A conversation or template that cannot be rendered or labelled; the message says why."""


@dataclass(frozen=True)
class Bundle:
    """What is served with a model: its chat template and its system prompt."""

    chat_template: str
    system_prompt: str


def token_array(values: Iterable[int]) -> array:
    """Token ids (or labels) held as 4-byte ints: a Python list of ints costs ~36 bytes a token, and every rank
    holds all its data set's rows (Stage 1's mixture: hundreds of millions of tokens)."""
    return array("i", values)


@dataclass(frozen=True)
class TokenizedRow:
    """One rendered conversation: token ids and labels (IGNORE_INDEX where no loss is taken), as token_array()s."""

    input_ids: Sequence[int]
    labels: Sequence[int]
    truncated: bool = False

    @property
    def trained_tokens(self) -> int:
        return len(self.labels) - self.labels.count(IGNORE_INDEX)


@dataclass
class TokenizeStats:
    """Counts reported after tokenizing a data set, so silent drops cannot happen."""

    rows_in: int = 0
    rows_kept: int = 0
    truncated: int = 0
    dropped: Counter = field(default_factory=Counter)
    dropped_rows: list[dict[str, Any]] = field(default_factory=list)  # each distinct dropped row: first index, copies
    tokens: int = 0
    trained_tokens: int = 0

    def summary(self) -> str:
        drops = ", ".join(f"{reason}: {n}" for reason, n in sorted(self.dropped.items())) or "none"
        return (
            f"{self.rows_kept}/{self.rows_in} rows kept ({self.truncated} truncated; dropped: {drops}); "
            f"{self.tokens:,} tokens, {self.trained_tokens:,} trained"
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "rows_in": self.rows_in,
            "rows_kept": self.rows_kept,
            "truncated": self.truncated,
            "dropped": dict(self.dropped),
            "dropped_rows": self.dropped_rows[:DROPPED_ROWS_KEPT],
            "tokens": self.tokens,
            "trained_tokens": self.trained_tokens,
        }


def load_bundle(directory: str | os.PathLike) -> Bundle:
    """Read the chat template and system prompt of a bundle or checkpoint directory."""
    directory = Path(directory)
    missing = [name for name in (CHAT_TEMPLATE_FILE, SYSTEM_PROMPT_FILE) if not (directory / name).is_file()]
    if missing:
        raise ChatFormatError(
            f"{directory}: missing {', '.join(missing)}; a bundle (resources/bundle) or a checkpoint built by "
            "this workflow carries both files"
        )
    return Bundle(
        chat_template=(directory / CHAT_TEMPLATE_FILE).read_text(encoding="utf-8"),
        system_prompt=(directory / SYSTEM_PROMPT_FILE).read_text(encoding="utf-8").strip(),
    )


def with_system(messages: Sequence[Message], system_prompt: str | None) -> list[dict[str, str]]:
    """Check the messages and prepend the bundle's system turn when the conversation has none."""
    checked = []
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping) or not isinstance(message.get("role"), str):
            raise ChatFormatError(f"message {i}: expected {{'role': str, 'content': str}}, got {message!r:.80}")
        content = message.get("content")
        if not isinstance(content, str):
            kind = type(content).__name__
            raise ChatFormatError(f"message {i} ({message['role']}): content must be a string, got {kind}")
        checked.append({"role": message["role"], "content": message["content"]})
    if system_prompt and not any(m["role"] == "system" for m in checked):
        checked.insert(0, {"role": "system", "content": system_prompt})
    return checked


def render(tokenizer, messages: Sequence[Message], *, add_generation_prompt: bool = False) -> str:
    """The conversation as the template renders it (a string, not tokens)."""
    if not getattr(tokenizer, "chat_template", None):
        raise ChatFormatError("the tokenizer has no chat template; build it with build_tokenizer.py --bundle")
    return tokenizer.apply_chat_template(list(messages), tokenize=False, add_generation_prompt=add_generation_prompt)


def assistant_spans(
    tokenizer, messages: Sequence[Message], *, last_only: bool = False
) -> tuple[str, list[tuple[int, int]]]:
    """The full rendering and the character span [start, end) of each assistant turn to train.

    A span starts where the generation prompt ends (after the assistant header) and ends after
    the turn's end-of-turn token; the separator that follows is not trained.
    """
    full = render(tokenizer, messages)
    spans = []
    indices = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
    for i in indices[-1:] if last_only else indices:
        prompt = render(tokenizer, messages[:i], add_generation_prompt=True)
        upto = render(tokenizer, messages[: i + 1])
        if not (full.startswith(prompt) and full.startswith(upto)):
            raise ChatFormatError(
                f"assistant turn {i}: the rendering of the conversation up to this turn is not a prefix of the whole "
                "rendering; the chat template must render every turn the same way wherever it sits"
            )
        target = messages[i]["content"] + END_OF_TURN
        if not upto.startswith(target, len(prompt)):
            raise ChatFormatError(
                f"assistant turn {i}: expected the content followed by {END_OF_TURN} right after the assistant header, "
                f"found {upto[len(prompt) : len(prompt) + 60]!r}; is the template ChatML-like with {END_OF_TURN}?"
            )
        spans.append((len(prompt), len(prompt) + len(target)))
    return full, spans


def label_tokens(offsets: Sequence[tuple[int, int]], spans: Sequence[tuple[int, int]]) -> list[bool]:
    """True for each token whose characters overlap a span (empty offsets never do)."""
    trained = []
    for start, end in offsets:
        trained.append(end > start and any(start < s_end and end > s_start for s_start, s_end in spans))
    return trained


def _runs(mask: Sequence[bool]) -> list[tuple[int, int]]:
    """Maximal [start, end) runs of True."""
    runs, start = [], None
    for i, flag in enumerate([*mask, False]):
        if flag and start is None:
            start = i
        elif not flag and start is not None:
            runs.append((start, i))
            start = None
    return runs


def verify_spans(
    tokenizer, input_ids: Sequence[int], trained: Sequence[bool], expected: Sequence[str], cut: bool
) -> None:
    """Decode each run of trained tokens and compare it with the expected assistant text.

    With `cut` (the row was truncated), the last run may be a prefix of its expected text.
    """
    runs = _runs(trained)
    if len(runs) != len(expected) and not (cut and len(runs) < len(expected)):
        raise ChatFormatError(f"found {len(runs)} trained spans for {len(expected)} assistant turns")
    for n, ((start, end), text) in enumerate(zip(runs, expected, strict=False)):
        decoded = tokenizer.decode(
            list(input_ids[start:end]), skip_special_tokens=False, clean_up_tokenization_spaces=False
        )
        last_cut = cut and n == len(runs) - 1
        ok = text.startswith(decoded.rstrip("\ufffd")) if last_cut else decoded == text
        if not ok:
            raise ChatFormatError(
                f"trained span {n} decodes to {decoded[:60]!r}…, expected {text[:60]!r}…; a token straddles the "
                "assistant header (e.g. content starting with a newline) or the tokenizer's offsets are trimmed"
            )


def tokenize_conversation(
    tokenizer,
    messages: Sequence[Message],
    *,
    system_prompt: str | None,
    max_length: int | None,
    truncation: str = "drop",
    last_only: bool = False,
) -> tuple[TokenizedRow | None, str | None]:
    """Render, tokenize and label one conversation; return (row, None) or (None, reason it was dropped)."""
    if truncation not in TRUNCATION_MODES:
        raise ValueError(f"truncation must be one of {TRUNCATION_MODES}, got {truncation!r}")
    messages = with_system(messages, system_prompt)
    if not any(m["role"] == "assistant" for m in messages):
        return None, "no assistant turn"
    full, spans = assistant_spans(tokenizer, messages, last_only=last_only)
    encoding = tokenizer(full, add_special_tokens=False, return_offsets_mapping=True)
    input_ids, offsets = list(encoding["input_ids"]), list(encoding["offset_mapping"])
    cut = max_length is not None and len(input_ids) > max_length
    if cut:
        if truncation == "drop":
            return None, "longer than max length"
        input_ids, offsets = input_ids[:max_length], offsets[:max_length]
    trained = label_tokens(offsets, spans)
    if not any(trained):
        return None, "no trained tokens left after truncation" if cut else "no trained tokens"
    try:
        verify_spans(tokenizer, input_ids, trained, [full[s:e] for s, e in spans], cut)
    except ChatFormatError:
        return None, "label spans do not decode to the assistant text"
    labels = [tok if flag else IGNORE_INDEX for tok, flag in zip(input_ids, trained, strict=True)]
    return TokenizedRow(input_ids=token_array(input_ids), labels=token_array(labels), truncated=cut), None


def tokenize_rows(
    tokenizer,
    conversations: Iterable[Sequence[Message]],
    *,
    system_prompt: str | None,
    max_length: int | None,
    truncation: str = "drop",
    refuse: Callable[[Any], str | None] | None = None,
) -> tuple[list[TokenizedRow], TokenizeStats]:
    """Tokenize many conversations for SFT; dropped rows are counted by reason.

    `refuse(messages)` says why a conversation must not train (lineage.screening.chat_refusal), or None:
    such a row is dropped with that reason, never tokenized. A repeated conversation (the card's winner
    rows x40) is rendered and tokenized once and its row shared: rendering is most of the data stage's
    time and rows are never modified.
    """
    rows, stats = [], TokenizeStats()
    seen: dict[bytes, tuple[TokenizedRow | None, str | None]] = {}  # by digest: the texts are not kept
    first_drop: dict[bytes, int] = {}
    for messages in conversations:
        stats.rows_in += 1
        key = hashlib.sha256(json.dumps(messages, sort_keys=True, ensure_ascii=False).encode()).digest()
        if key not in seen:
            reason = refuse(messages) if refuse else None
            seen[key] = (
                (None, reason)
                if reason
                else tokenize_conversation(
                    tokenizer, messages, system_prompt=system_prompt, max_length=max_length, truncation=truncation
                )
            )
        row, reason = seen[key]
        if row is None:
            stats.dropped[reason] += 1
            if key not in first_drop:
                first_drop[key] = len(stats.dropped_rows)
                stats.dropped_rows.append({"row": stats.rows_in - 1, "rows": 0, "reason": reason})
            stats.dropped_rows[first_drop[key]]["rows"] += 1
            continue
        stats.rows_kept += 1
        stats.truncated += row.truncated
        stats.tokens += len(row.input_ids)
        stats.trained_tokens += row.trained_tokens
        rows.append(row)
    return rows, stats


def completion_logprob_inputs(
    tokenizer,
    messages: Sequence[Message],
    completion: str,
    *,
    system_prompt: str | None,
    max_length: int | None = None,
    truncation: str = "drop",
) -> tuple[TokenizedRow | None, str | None]:
    """Tokens of prompt + completion with labels only on the completion (and its end-of-turn).

    The prompt is the conversation rendered with add_generation_prompt=True; the completion is
    the suffix that the full rendering adds to it. Used for DPO and for the battle margin.
    """
    messages = with_system(messages, system_prompt)
    if messages and messages[-1]["role"] == "assistant":
        raise ChatFormatError("the prompt conversation must end with a user turn, not an assistant turn")
    conversation = [*messages, {"role": "assistant", "content": completion}]
    row, reason = tokenize_conversation(
        tokenizer, conversation, system_prompt=None, max_length=max_length, truncation=truncation, last_only=True
    )
    if row is not None:
        prompt_ids = tokenizer(render(tokenizer, messages, add_generation_prompt=True), add_special_tokens=False)[
            "input_ids"
        ]
        first = next(i for i, label in enumerate(row.labels) if label != IGNORE_INDEX)
        if list(row.input_ids[: len(prompt_ids)]) != list(prompt_ids)[: len(row.input_ids)] or first != len(prompt_ids):
            raise ChatFormatError(
                "the tokens of the prompt are not a prefix of the tokens of prompt + completion; the completion's "
                "first token merges with the assistant header"
            )
    return row, reason
