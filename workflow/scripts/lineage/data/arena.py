"""Adapter from the public Chatbot Arena export to the native battle rows.

Arena rows name two models (`model_a`, `model_b`), a `winner` (model_a | model_b | tie |
"tie (bothbad)"), and both full conversations ending with each model's answer. Given which
model is ours, our side becomes `own` and the other `other`; the winner maps to
own_better / other_better / tie / both_bad. The prompt is the conversation without its final
assistant turn, and it must be the same on both sides (a multi-turn battle whose earlier
answers differ is not one prompt, so it is quarantined). Rows where both models are ours are
quarantined (the vote compares nothing); rows where neither is are set aside: most of the public
export is battles between two other models, sound rows that say nothing about ours.

Identifiers: `prompt_id` is `question_id` when that is already an integer, else the first 8
hex digits of its sha256 read as an integer (stable across runs and machines). `battle_id` is
`<question_id>-<n>`, n counting the rows with that question_id in file order from 1.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
from collections import Counter
from typing import Any

from lineage.data.battles import RowError, SetAside, validate_messages

WINNERS = {"model_a": "a", "model_b": "b", "tie": "tie", "tie (bothbad)": "both_bad"}
REQUIRED = ("question_id", "model_a", "model_b", "winner", "conversation_a", "conversation_b", "tstamp")


def prompt_id_for(question_id: Any) -> int:
    """An integer prompt id: the question_id itself if it is an int, else a stable hash of it."""
    if isinstance(question_id, int) and not isinstance(question_id, bool):
        return question_id
    return int(hashlib.sha256(str(question_id).encode("utf-8")).hexdigest()[:8], 16)


def timestamp_iso(value: Any) -> str:
    """Arena `tstamp` (unix seconds, or already a string) as an ISO-8601 UTC string."""
    if isinstance(value, bool):
        raise RowError("tstamp", "must be unix seconds or an ISO-8601 string, got a boolean")
    if isinstance(value, int | float):
        try:
            return _dt.datetime.fromtimestamp(value, tz=_dt.UTC).isoformat()
        except (OverflowError, OSError, ValueError):
            raise RowError("tstamp", f"{value!r} is not a representable unix time") from None
    if isinstance(value, str):
        return value
    raise RowError("tstamp", f"must be unix seconds or an ISO-8601 string, got {type(value).__name__}")


def translate_field(name: str, names: dict[str, str]) -> str:
    """Rename a native field path (`own.answer`, `messages[2].role`) to the export's own name."""
    for native, exported in names.items():
        if name == native or name.startswith(native + ".") or name.startswith(native + "["):
            return exported + name[len(native) :]
    return name


class ArenaAdapter:
    """Converts arena rows one at a time; remembers question_id counts for unique battle ids."""

    def __init__(self, our_model: str):
        self.our_model = our_model
        self.seen: Counter[str] = Counter()

    def to_native(self, obj: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
        """Return (native row, native field name → arena field name); RowError if unusable."""
        if "question_id" in obj:
            self.seen[str(obj["question_id"])] += 1
        for name in REQUIRED:
            if name not in obj:
                raise RowError(name, "missing field")
        question_id = obj["question_id"]
        if isinstance(question_id, bool) or not isinstance(question_id, str | int) or question_id == "":
            raise RowError("question_id", f"must be a non-empty string or an integer, got {question_id!r}")
        for name in ("model_a", "model_b", "winner"):
            if not isinstance(obj[name], str) or not obj[name].strip():
                raise RowError(name, f"must be a non-empty string, got {obj[name]!r}")
        battle_id = f"{question_id}-{self.seen[str(question_id)]}"
        model_a, model_b = obj["model_a"], obj["model_b"]
        if model_a == self.our_model and model_b == self.our_model:
            raise RowError("model_a", f"both sides are our model {self.our_model!r}; the vote compares nothing")
        if model_a == self.our_model:
            own, other = "a", "b"
        elif model_b == self.our_model:
            own, other = "b", "a"
        else:
            raise SetAside(
                "model_a",
                f"neither model_a ({model_a!r}) nor model_b ({model_b!r}) is our model {self.our_model!r}",
            )
        winner = obj["winner"]
        if winner not in WINNERS:
            raise RowError("winner", f"unknown winner {winner!r}; expected one of {', '.join(map(repr, WINNERS))}")
        mapped = WINNERS[winner]
        vote = {own: "own_better", other: "other_better"}.get(mapped, mapped)

        conversations = {side: validate_messages(obj[f"conversation_{side}"], f"conversation_{side}") for side in "ab"}
        for side, turns in conversations.items():
            if turns[-1]["role"] != "assistant":
                raise RowError(f"conversation_{side}", "must end with the model's answer (an assistant turn)")
        prompt_a, prompt_b = conversations["a"][:-1], conversations["b"][:-1]
        if prompt_a != prompt_b:
            raise RowError(
                "conversation_b",
                "the conversation before the final answer differs from conversation_a, so the two answers "
                "do not answer the same prompt",
            )
        names = {
            "messages": f"conversation_{own}",
            "own.answer": f"conversation_{own}[-1].content",
            "own.model": f"model_{own}",
            "own": f"model_{own}",
            "other.answer": f"conversation_{other}[-1].content",
            "other.model": f"model_{other}",
            "other": f"model_{other}",
            "vote": "winner",
            "prompt_id": "question_id",
            "battle_id": "question_id",
            "created_at": "tstamp",
        }
        native = {
            "battle_id": battle_id,
            "prompt_id": prompt_id_for(question_id),
            "messages": prompt_a,
            "own": {"model": obj[f"model_{own}"], "answer": conversations[own][-1]["content"]},
            "other": {"model": obj[f"model_{other}"], "answer": conversations[other][-1]["content"]},
            "vote": vote,
            "created_at": timestamp_iso(obj["tstamp"]),
        }
        return native, names
