"""The battle export: validate every row, keep the good ones, quarantine the rest with a reason.

A battle is one human vote between our model's answer (`own`) and another model's answer
(`other`) to the same conversation. The native export has one JSON object a line:

    battle_id   str, unique
    prompt_id   int; the same prompt always carries the same conversation
    messages    [{"role": "user"|"assistant"|"system", "content": str}, ...], ending with the
                user turn that both sides answered
    own, other  {"model": str, "answer": str | null}
    vote        own_better | other_better | tie | both_bad
    created_at  ISO-8601 timestamp

Policy: a row is quarantined (not kept) when it cannot be trusted as a vote: unreadable line,
missing or mistyped field, unknown vote, an empty preferred answer, an empty answer on either
side of a tie or both_bad vote, a battle_id already kept, or a prompt_id already kept with a
different conversation (the first kept row wins; the later one names it). An empty *losing*
answer is not a bad vote: the row is kept with that answer set to null, and the later stages
either recover a loser from another battle or build no pair for it.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lineage.io import DataError, LineError, iter_lines, parse_json_line
from lineage.quarantine import describe, entry
from lineage.screen import is_empty_text, screen_battle

VOTES = ("own_better", "other_better", "tie", "both_bad")
WINNER_SIDE = {"own_better": "own", "other_better": "other"}
SIDES = ("own", "other")
ROLES = ("system", "user", "assistant")
FIELDS = ("battle_id", "prompt_id", "messages", "own", "other", "vote", "created_at")
FORMATS = ("native", "arena")
STAGE = "read_battles"


class RowError(LineError):
    """A problem with one field of one row."""


class SetAside(RowError):
    """A sound row that is not about our model (an arena battle between two other models): kept apart, not bad."""


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


def is_blank(text: Any) -> bool:
    """True for None, and for strings of only whitespace and invisible characters (lineage.screen)."""
    return text is None or (isinstance(text, str) and is_empty_text(text))


def normalize_space(text: str) -> str:
    """Collapse every run of whitespace to one space, so answers differing only in layout compare equal."""
    return " ".join(text.split())


def parse_time(value: str) -> _dt.datetime:
    """Parse an ISO-8601 timestamp; naive times are taken as UTC so all times compare."""
    parsed = _dt.datetime.fromisoformat(value)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=_dt.timezone.utc)
    return parsed


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def validate_messages(value: Any, name: str = "messages") -> list[dict[str, str]]:
    """A non-empty list of {role, content} turns; returned with only those two keys."""
    if not isinstance(value, list):
        raise RowError(name, f"must be a list of turns, got {_type_name(value)}")
    if not value:
        raise RowError(name, "is empty; it must hold at least the user turn that was answered")
    turns = []
    for index, turn in enumerate(value):
        where = f"{name}[{index}]"
        if not isinstance(turn, dict):
            raise RowError(where, f"must be an object with role and content, got {_type_name(turn)}")
        role, content = turn.get("role"), turn.get("content")
        if role not in ROLES:
            raise RowError(f"{where}.role", f"must be one of {', '.join(ROLES)}, got {role!r}")
        if not isinstance(content, str):
            raise RowError(f"{where}.content", f"must be a string, got {_type_name(content)}")
        turns.append({"role": role, "content": content})
    return turns


def _validate_side(obj: dict[str, Any], side: str) -> dict[str, Any]:
    value = obj[side]
    if not isinstance(value, dict):
        raise RowError(side, f"must be an object with model and answer, got {_type_name(value)}")
    if "model" not in value:
        raise RowError(f"{side}.model", "missing field")
    if "answer" not in value:
        raise RowError(f"{side}.answer", "missing field (use null for a missing answer)")
    model, answer = value["model"], value["answer"]
    if not isinstance(model, str) or not model.strip():
        raise RowError(f"{side}.model", f"must be a non-empty string, got {model!r}")
    if answer is not None and not isinstance(answer, str):
        raise RowError(f"{side}.answer", f"must be a string or null, got {_type_name(answer)}")
    return {"model": model, "answer": answer}


def apply_answer_policy(sides: dict[str, dict[str, Any]], vote: str, why: str = "is empty") -> None:
    """Empty answers: a decisive vote's preferred one, or either of a tie / both_bad, makes the row untrustworthy
    (RowError); an empty losing answer becomes null (kept: no pair can be built from this battle)."""
    if vote in WINNER_SIDE:
        winner = WINNER_SIDE[vote]
        loser = "other" if winner == "own" else "own"
        if is_blank(sides[winner]["answer"]):
            raise RowError(f"{winner}.answer", f"the preferred answer of a {vote} vote {why}")
        if is_blank(sides[loser]["answer"]):
            sides[loser]["answer"] = None
    else:
        for side in SIDES:
            if is_blank(sides[side]["answer"]):
                raise RowError(f"{side}.answer", f"a {vote} vote needs both answers; this one {why}")


def validate_battle(obj: dict[str, Any]) -> dict[str, Any]:
    """Check one native row and return it normalized (fixed key order, blank losers as null).

    Raises RowError naming the first bad field.
    """
    for name in FIELDS:
        if name not in obj:
            raise RowError(name, "missing field")
    battle_id = obj["battle_id"]
    if not isinstance(battle_id, str) or not battle_id.strip():
        raise RowError("battle_id", f"must be a non-empty string, got {battle_id!r}")
    prompt_id = obj["prompt_id"]
    if isinstance(prompt_id, bool) or not isinstance(prompt_id, int):
        raise RowError("prompt_id", f"must be an integer, got {_type_name(prompt_id)} {prompt_id!r}")
    messages = validate_messages(obj["messages"])
    if messages[-1]["role"] != "user":
        raise RowError(
            "messages",
            f"must end with the user turn that was answered; the last turn is {messages[-1]['role']!r}",
        )
    sides = {side: _validate_side(obj, side) for side in SIDES}
    vote = obj["vote"]
    if vote not in VOTES:
        raise RowError("vote", f"unknown vote {vote!r}; expected one of {', '.join(VOTES)}")
    created_at = obj["created_at"]
    if not isinstance(created_at, str):
        raise RowError("created_at", f"must be an ISO-8601 string, got {_type_name(created_at)}")
    try:
        parse_time(created_at)
    except ValueError:
        raise RowError("created_at", f"not an ISO-8601 timestamp: {created_at!r}") from None

    apply_answer_policy(sides, vote)
    return {
        "battle_id": battle_id,
        "prompt_id": prompt_id,
        "messages": messages,
        "own": sides["own"],
        "other": sides["other"],
        "vote": vote,
        "created_at": created_at,
    }



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
    `control_tokens` are the chat template's markers that no content may hold (lineage.screen).
    """
    from lineage import arena  # local import: arena builds on this module

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
                    raise RowError(f"{side}.answer", f"is {len(answer):,} characters, over export.max_answer_chars "
                                                     f"({max_answer_chars:,}): a runaway generation, not an answer")
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
        raise DataError(f"{path}: none of its {result.n_read} battles has our model on a side; "
                        "check export.our_model against the export's model names")
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
