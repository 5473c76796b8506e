"""Reading the battle export, native or arena: every row validated, kept, set aside or quarantined.

The row schema and its checks are lineage.data.battles; the arena adapter (lineage.data.arena)
turns a public Arena row into a native one first. Every line read is accounted for: kept, set
aside (an arena battle between two other models) or quarantined with its file, line, field and reason.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lineage.data import arena
from lineage.data.battles import VOTES, RowError, SetAside, normalize_space, validate_battle
from lineage.data.quarantine import describe, entry
from lineage.data.screen import screen_battle
from lineage.io import DataError, LineError, iter_lines, parse_json_line

FORMATS = ("native", "arena")
STAGE = "read_battles"


@dataclass
class ReadResult:
    """What reading an export gave: rows kept, quarantine entries, and how many rows were read."""

    kept: list[dict[str, Any]] = field(default_factory=list)
    quarantine: list[dict[str, Any]] = field(default_factory=list)
    set_aside: list[dict[str, Any]] = field(default_factory=list)
    n_read: int = 0

    def vote_counts(self) -> dict[str, int]:
        counts = Counter(row["vote"] for row in self.kept)
        return {vote: counts.get(vote, 0) for vote in VOTES}


MAX_ANSWER_CHARS = 100_000  # export.max_answer_chars's default (config.schema.yaml says why)
_BATTLE_ID = re.compile(rb'"battle_id"\s*:\s*"([^"\\\x00-\x1f]{1,200})"')


def readable_battle_id(raw: bytes) -> str | None:
    """The battle id a line spells plainly, read from its bytes: a line refused before it parses
    (a control character, a duplicate key, a bad byte elsewhere) is still recorded under its id."""
    match = _BATTLE_ID.search(raw)
    if not match:
        return None
    try:
        return match.group(1).decode("utf-8")
    except UnicodeDecodeError:
        return None


def read_export(
    path: str | os.PathLike,
    fmt: str = "native",
    our_model: str | None = None,
    strict: bool = False,
    control_tokens: tuple[str, ...] = (),
    max_answer_chars: int = MAX_ANSWER_CHARS,
) -> ReadResult:
    """Read, validate and screen an export; bad rows become quarantine entries (or a DataError if strict).

    Arena battles without our model are set aside (`set_aside`), not counted as bad rows;
    `control_tokens` are the chat template's markers that no content may hold (lineage.data.screen).
    """
    if fmt not in FORMATS:
        raise DataError(f"unknown export format {fmt!r}; expected one of {', '.join(FORMATS)}")
    if fmt == "arena" and not our_model:
        raise DataError("the arena format needs --our-model NAME to know which side is ours")
    path = Path(path)
    result = ReadResult()
    kept_ids: dict[str, int] = {}
    kept_prompts: dict[int, tuple[int, list[str]]] = {}
    adapter = arena.ArenaAdapter(our_model) if fmt == "arena" else None

    for line_no, raw in iter_lines(path):
        result.n_read += 1
        battle_id = readable_battle_id(raw)  # for the quarantine record, should the line be refused
        names: dict[str, str] = {}
        try:
            obj = parse_json_line(raw, first=line_no == 1)
            if adapter is not None:
                obj, names = adapter.to_native(obj)
            if isinstance(obj.get("battle_id"), str):
                battle_id = obj["battle_id"]
            row = validate_battle(obj)
            screen_battle(row, control_tokens)
            for side in ("own", "other"):
                answer = row[side]["answer"]
                if answer is not None and len(answer) > max_answer_chars:
                    raise RowError(
                        f"{side}.answer",
                        f"is {len(answer):,} characters, over export.max_answer_chars "
                        f"({max_answer_chars:,}): a runaway generation, not an answer",
                    )
            if fmt == "native" and our_model and row["own"]["model"] != our_model:
                raise RowError("own.model", f"is {row['own']['model']!r}, not our model {our_model!r}")
            if row["battle_id"] in kept_ids:
                raise RowError("battle_id", f"duplicate of the battle kept from line {kept_ids[row['battle_id']]}")
            shape = [f"{turn['role']}:{normalize_space(turn['content'])}" for turn in row["messages"]]
            first = kept_prompts.get(row["prompt_id"])
            if first is not None and first[1] != shape:
                raise RowError(
                    "messages",
                    f"prompt_id {row['prompt_id']} was kept from line {first[0]} with different messages; "
                    "give this conversation its own prompt_id",
                )
        except LineError as err:
            field_name = arena.translate_field(err.field, names)
            record = entry(
                STAGE,
                str(path),
                line_no,
                err.reason,
                battle_id=battle_id,
                field=field_name,
                raw=raw.decode("utf-8", errors="backslashreplace"),
            )
            if isinstance(err, SetAside):
                result.set_aside.append(record)
                continue
            if strict:
                raise DataError(f"{describe(record)} (rerun without --strict to quarantine bad rows instead)") from None
            result.quarantine.append(record)
            continue
        kept_ids[row["battle_id"]] = line_no
        kept_prompts.setdefault(row["prompt_id"], (line_no, shape))
        result.kept.append(row)

    accounted = len(result.kept) + len(result.quarantine) + len(result.set_aside)
    assert result.n_read == accounted, "a row was dropped without a quarantine entry"
    return result


def check_quarantine_fraction(result: ReadResult, max_fraction: float, path: str | os.PathLike) -> None:
    """Fail when too many rows were quarantined: the export is probably in another format."""
    if result.n_read == 0:
        raise DataError(f"{path}: the export holds no rows")
    about_us = result.n_read - len(result.set_aside)
    if about_us == 0:
        raise DataError(
            f"{path}: none of its {result.n_read} battles has our model on a side; "
            "check export.our_model against the export's model names"
        )
    share = len(result.quarantine) / about_us
    if share <= max_fraction:
        return
    reasons = Counter((q["field"], q["reason"].split(";")[0]) for q in result.quarantine)
    top = "; ".join(f"{n}x field '{f}': {r}" for (f, r), n in reasons.most_common(3))
    raise DataError(
        f"{path}: {len(result.quarantine)} of {about_us} rows ({share:.1%}) would be quarantined, more than "
        f"--max-quarantine-fraction {max_fraction} (export.max_quarantine_fraction). The export is probably in "
        "another format "
        f"(try --format native|arena, and --our-model for arena) or damaged. Most common: {top}. "
        f"First: {describe(result.quarantine[0])}"
    )
