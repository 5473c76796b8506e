"""A battle row: its fields, their checks, and the answer policy (reading the export: lineage.data.export).

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
from typing import Any

from lineage.io import LineError
from lineage.screening import is_empty_text

VOTES = ("own_better", "other_better", "tie", "both_bad")
WINNER_SIDE = {"own_better": "own", "other_better": "other"}
SIDES = ("own", "other")
ROLES = ("system", "user", "assistant")
FIELDS = ("battle_id", "prompt_id", "messages", "own", "other", "vote", "created_at")


class RowError(LineError):
    """A problem with one field of one row."""


class SetAside(RowError):
    """A sound row that is not about our model (an arena battle between two other models): kept apart, not bad."""


def is_blank(text: Any) -> bool:
    """True for None, and for strings of only whitespace and invisible characters (lineage.screening)."""
    return text is None or (isinstance(text, str) and is_empty_text(text))


def normalize_space(text: str) -> str:
    """Collapse every run of whitespace to one space, so answers differing only in layout compare equal."""
    return " ".join(text.split())


def parse_time(value: str) -> _dt.datetime:
    """Parse an ISO-8601 timestamp; naive times are taken as UTC so all times compare."""
    parsed = _dt.datetime.fromisoformat(value)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=_dt.UTC)
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
