"""Sample the general-mix rows: chat rows from the Stage-1 SFT mixture, length-filtered, seeded.

Sources are local JSONL or Parquet files (read directly; Parquet is how the Hub publishes the
Tulu-3 SFT mixture) or Hugging Face hub ids (loaded with
`datasets.load_dataset(id, split="train")`, which needs hub access or a populated offline
cache). Rows may be in `messages` form ({role, content}) or ShareGPT `conversations` form
({from, value}); both come out as `messages`, with the row's `id` and `source` kept.

Rows that must not train are quarantined with their reason, never sampled: a shape that is not a
conversation, and what the content screen refuses (lineage/screening.py: the chat template's control
tokens in any turn, no user text, an empty answer).

Sampling: every row of every source is one candidate. A seeded `random.Random(seed)` shuffles
the candidates once, and rows are taken in that order, skipping those whose full chat-template
rendering is longer than the token limit, until N are taken. That is a uniform sample without
replacement from the rows that fit, the same as filtering everything first, but only the rows
looked at are tokenized (the full mixture has close to a million rows).
"""

from __future__ import annotations

import os
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lineage.data.quarantine import entry
from lineage.io import DataError, LineError, read_rows_lenient
from lineage.screening import CHAT_ROLES, screen_chat

SHAREGPT_ROLES = {"human": "user", "user": "user", "gpt": "assistant", "assistant": "assistant", "system": "system"}
STAGE = "sample_general_mix"


@dataclass
class Source:
    """One input: its name (file stem or hub id), its rows, and how to name a row in errors."""

    spec: str
    name: str
    rows: Sequence[dict[str, Any]]
    lines: list[int] | None = None  # line numbers for local files
    unreadable: list[dict[str, Any]] = field(default_factory=list)  # quarantine entries of lines that did not parse

    def where(self, index: int) -> str:
        if self.lines is not None:
            return f"{self.spec}:{self.lines[index]}"
        return f"{self.spec} (train row {index})"


def load_source(spec: str) -> Source:
    """A local .jsonl or .parquet file, a local dataset directory, or a hub id."""
    path = Path(spec)
    if path.is_file():
        rows, lines, unreadable = [], [], []
        for line, obj, error, raw in read_rows_lenient(path):
            if error is None:
                rows.append(obj)
                lines.append(line)
            else:
                unreadable.append(
                    entry(
                        STAGE,
                        spec,
                        line,
                        error.reason,
                        field=error.field,
                        raw=raw.decode("utf-8", errors="backslashreplace"),
                    )
                )
        return Source(spec, path.stem, rows, lines, unreadable)
    try:
        import datasets

        rows = datasets.load_dataset(spec, split="train")
    except Exception as err:  # noqa: BLE001 - any failure gets the same advice
        raise DataError(
            f"could not load general-mix source {spec!r} ({type(err).__name__}: {err}). "
            "Without hub access, download it on a machine that has it and point the source at the local copy: "
            "--source /path/to/rows.jsonl (one JSON object a line with a `messages` list), or set "
            "HF_DATASETS_OFFLINE=1 with a Hugging Face cache that already holds the dataset."
        ) from None
    return Source(spec, spec, rows)


def to_messages(row: dict[str, Any], where: str) -> list[dict[str, str]]:
    """The row's conversation as [{role, content}], from `messages` or ShareGPT `conversations`."""
    if isinstance(row.get("messages"), list):
        turns, role_key, content_key, roles = row["messages"], "role", "content", {r: r for r in CHAT_ROLES}
        field = "messages"
    elif isinstance(row.get("conversations"), list):
        turns, role_key, content_key, roles = row["conversations"], "from", "value", SHAREGPT_ROLES
        field = "conversations"
    else:
        raise DataError(f"{where}: field 'messages': missing; expected a list of {{role, content}} turns")
    if not turns:
        raise DataError(f"{where}: field '{field}': empty conversation")
    out = []
    for index, turn in enumerate(turns):
        if not isinstance(turn, dict) or turn.get(role_key) not in roles:
            got = turn.get(role_key) if isinstance(turn, dict) else turn
            raise DataError(f"{where}: field '{field}[{index}].{role_key}': unknown role {got!r}")
        content = turn.get(content_key)
        if not isinstance(content, str):
            raise DataError(f"{where}: field '{field}[{index}].{content_key}': must be a string")
        out.append({"role": roles[turn[role_key]], "content": content})
    return out


class TokenCounter:
    """Tokens of a conversation's full rendering with the tokenizer's chat template (or plain text)."""

    def __init__(self, tokenizer_dir: str | os.PathLike):
        from transformers import AutoTokenizer

        try:
            self.tokenizer = AutoTokenizer.from_pretrained(str(tokenizer_dir))
        except Exception as err:  # noqa: BLE001
            raise DataError(f"cannot load a tokenizer from {tokenizer_dir}: {err}") from None
        self.has_template = bool(getattr(self.tokenizer, "chat_template", None))

    def render(self, messages: list[dict[str, str]]) -> str:
        if self.has_template:
            return self.tokenizer.apply_chat_template(messages, tokenize=False)
        return "\n".join(turn["content"] for turn in messages)

    def count(self, messages: list[dict[str, str]], where: str = "") -> int:
        try:
            text = self.render(messages)
        except Exception as err:  # noqa: BLE001 - template errors name the row
            raise DataError(f"{where}: the chat template cannot render this row: {err}") from None
        return len(self.tokenizer(text, add_special_tokens=False)["input_ids"])


def sample_rows(
    sources: list[Source],
    n_rows: int,
    seed: int,
    counter: TokenCounter,
    max_tokens: int,
    control_tokens: tuple[str, ...] = (),
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Take n_rows rows that fit in max_tokens and pass the screen, in seeded random order; error if too few do."""
    index = [(s, i) for s, source in enumerate(sources) for i in range(len(source.rows))]
    order = list(range(len(index)))
    random.Random(seed).shuffle(order)
    kept, lengths, too_long, examined = [], [], 0, 0
    bad = [record for source in sources for record in source.unreadable]
    for position in order:
        if len(kept) == n_rows:
            break
        source_no, row_no = index[position]
        source = sources[source_no]
        row = source.rows[row_no]
        where = source.where(row_no)
        line = source.lines[row_no] if source.lines else row_no
        try:
            messages = to_messages(row, where)
        except DataError as err:  # a row of the wrong shape: set aside with its reason, never a stop
            bad.append(entry(STAGE, source.spec, line, str(err).removeprefix(f"{where}: ")))
            continue
        try:
            screen_chat(messages, control_tokens)
        except LineError as err:
            bad.append(entry(STAGE, source.spec, line, err.reason, field=err.field))
            continue
        examined += 1
        tokens = counter.count(messages, where)
        if tokens > max_tokens:
            too_long += 1
            continue
        lengths.append(tokens)
        kept.append(
            {
                "id": row.get("id") if row.get("id") is not None else f"{source.name}:{row_no}",
                "source": row.get("source") or source.name,
                "messages": messages,
            }
        )
    if len(kept) < n_rows:
        sources_text = ", ".join(s.spec for s in sources)
        raise DataError(
            f"only {len(kept)} of {len(index)} rows in {sources_text} fit in {max_tokens} tokens "
            f"({too_long} longer); {n_rows} were asked for. Lower --rows, raise --max-tokens or add a --source."
        )
    stats = {
        "sources": [{"source": s.spec, "rows": len(s.rows)} for s in sources],
        "rows_total": len(index),
        "rows_examined": examined,
        "rows_too_long": too_long,
        "rows_bad": len(bad),
        "rows_kept": len(kept),
        "max_tokens": max_tokens,
        "seed": seed,
        "chat_template": counter.has_template,
        "tokens": {
            "min": min(lengths, default=0),
            "max": max(lengths, default=0),
            "mean": round(sum(lengths) / len(lengths), 1) if lengths else 0,
        },
    }
    stats["quarantine"] = bad
    return kept, stats
