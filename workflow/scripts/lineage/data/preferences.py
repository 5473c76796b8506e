"""Training rows built from the preferred answers: holdout split, winner rows, tie rows, pairs.

The holdout is every prompt with prompt_id % modulus == 0 (the card: every fifth, 29 pairs).
The card trained on 140 x 40 = 5,600 winner rows, which is only possible if the holdout
prompts were trained on too; `holdout_in_training=True` reproduces that (and the audit flags
the leak), `False` gives the clean split.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from lineage.data.battles import SIDES
from lineage.data.dedup import battle_order


def is_holdout(prompt_id: int, modulus: int) -> bool:
    return prompt_id % modulus == 0


def split_holdout(rows: Iterable[dict[str, Any]], modulus: int) -> tuple[list[dict], list[dict]]:
    """(train, holdout) by prompt_id % modulus == 0."""
    if modulus < 1:
        raise ValueError(f"the holdout modulus must be >= 1, got {modulus}")
    train, holdout = [], []
    for row in rows:
        (holdout if is_holdout(row["prompt_id"], modulus) else train).append(row)
    return train, holdout


def chat_row(messages: list[dict], answer: str, **fields: Any) -> dict[str, Any]:
    """A chat training row: the conversation plus the answer as the final assistant turn."""
    return {"messages": [*messages, {"role": "assistant", "content": answer}], **fields}


def winner_rows(
    train: Iterable[dict[str, Any]],
    holdout: Iterable[dict[str, Any]],
    repeat: int,
    holdout_in_training: bool = True,
) -> list[dict[str, Any]]:
    """Each preferred answer as a chat row, `repeat` adjacent copies, in prompt_id order."""
    if repeat < 1:
        raise ValueError(f"repeat must be >= 1, got {repeat}")
    chosen = list(train) + (list(holdout) if holdout_in_training else [])
    out = []
    for row in sorted(chosen, key=lambda r: r["prompt_id"]):
        for copy in range(repeat):
            out.append(
                chat_row(
                    row["messages"],
                    row["preferred"],
                    source="winners",
                    prompt_id=row["prompt_id"],
                    battle_id=row["battle_id"],
                    side=row["preferred_side"],
                    copy=copy,
                )
            )
    return out


def latest_ties(battles: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Tie battles, one per prompt: the latest (created_at, then battle_id)."""
    latest: dict[int, dict[str, Any]] = {}
    for row in battles:
        if row["vote"] != "tie":
            continue
        current = latest.get(row["prompt_id"])
        if current is None or battle_order(row) > battle_order(current):
            latest[row["prompt_id"]] = row
    return [latest[key] for key in sorted(latest)]


def tie_rows(
    battles: Iterable[dict[str, Any]], repeat: int, exclude_prompts: set[int] = frozenset()
) -> list[dict[str, Any]]:
    """Both answers of each (deduplicated) tie battle as chat rows, `repeat` copies each."""
    out = []
    for row in latest_ties(battles):
        if row["prompt_id"] in exclude_prompts:
            continue
        for side in SIDES:
            for copy in range(repeat):
                out.append(
                    chat_row(
                        row["messages"],
                        row[side]["answer"],
                        source="ties",
                        prompt_id=row["prompt_id"],
                        battle_id=row["battle_id"],
                        side=side,
                        copy=copy,
                    )
                )
    return out


def battle_pairs(
    preferred: Iterable[dict[str, Any]], holdout_prompts: set[int], holdout_in_training: bool = True
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(training pairs, holdout pairs) from preferred rows that have a rejected answer."""
    pairs, holdout_pairs = [], []
    for row in sorted(preferred, key=lambda r: r["prompt_id"]):
        if row["rejected"] is None:
            continue
        pair = {
            "messages": row["messages"],
            "chosen": row["preferred"],
            "rejected": row["rejected"],
            "prompt_id": row["prompt_id"],
            "battle_id": row["battle_id"],
        }
        in_holdout = row["prompt_id"] in holdout_prompts
        if in_holdout:
            holdout_pairs.append(pair)
        if holdout_in_training or not in_holdout:
            pairs.append(pair)
    return pairs, holdout_pairs
