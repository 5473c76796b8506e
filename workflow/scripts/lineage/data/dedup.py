"""One preferred answer per prompt: the deduplication policy of the winner data.

Why: a prompt asked in several battles would otherwise enter winner-SFT once per battle and be
trained on two, three, five times as often as a prompt asked once; it could even be trained
on two different "preferred" answers. One target per prompt keeps every user question at the
same weight (the card's 140 preferred answers from 178 decisive battles).

Policy, per prompt_id, over decisive battles only (own_better / other_better):

1. The candidate of a battle is the winner's cleaned answer. Candidates are grouped by their
   whitespace-normalized text, so the same answer seen in several battles is one candidate.
2. The kept candidate is the one with the most decisive wins; ties are broken by the latest
   created_at among its battles, then by the larger battle_id (compared in natural order,
   so "b-10" > "b-9").
3. The kept battle is the latest battle (created_at, then battle_id) with that answer; its
   messages, side, models and timestamp describe the output row.
4. The rejected answer is the kept battle's loser. When that is null (the loser was not
   recorded), it is recovered from the latest other decisive battle of the same prompt with
   the same preferred text and a recorded loser; `loser_recovered_from` names that battle.
   If none has one, `rejected` stays null and no pair is built for the prompt.
5. Every other decisive battle of the prompt gets a quarantine entry "superseded duplicate of
   <kept battle_id>": not an error, a record for the audit.

Tie and both_bad battles are not preferences and do not enter this stage.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from lineage.data.battles import WINNER_SIDE, normalize_space, parse_time
from lineage.data.quarantine import entry

STAGE = "dedup_battles"


def natural_key(text: str) -> tuple:
    """Sort key that orders digit runs by value: b-9 < b-10."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", text) if part)


def battle_order(row: dict[str, Any]) -> tuple[_dt.datetime, tuple]:
    """Later battles sort higher: by created_at, then by battle_id."""
    return parse_time(row["created_at"]), natural_key(row["battle_id"])


def loser_side(row: dict[str, Any]) -> str:
    return "other" if WINNER_SIDE[row["vote"]] == "own" else "own"


def preferred_text(row: dict[str, Any]) -> str:
    return row[WINNER_SIDE[row["vote"]]]["answer"]


def dedup_preferred(
    rows: Iterable[tuple[int, dict[str, Any]]], file: str = "battles_clean.jsonl"
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Apply the policy to (line_no, battle) pairs; return (preferred rows by prompt_id, quarantine)."""
    by_prompt: dict[int, list[tuple[int, dict[str, Any]]]] = defaultdict(list)
    for line_no, row in rows:
        if row["vote"] in WINNER_SIDE:
            by_prompt[row["prompt_id"]].append((line_no, row))

    preferred, quarantine = [], []
    for prompt_id in sorted(by_prompt):
        battles = by_prompt[prompt_id]
        groups: dict[str, list[tuple[int, dict[str, Any]]]] = defaultdict(list)
        for line_no, row in battles:
            groups[normalize_space(preferred_text(row))].append((line_no, row))

        def group_key(members: list[tuple[int, dict[str, Any]]]) -> tuple:
            latest = max(battle_order(row) for _, row in members)
            return len(members), latest

        winners = max(groups.values(), key=group_key)
        kept_line, kept = max(winners, key=lambda item: battle_order(item[1]))
        winner, loser = WINNER_SIDE[kept["vote"]], loser_side(kept)
        rejected, rejected_model, recovered_from = kept[loser]["answer"], kept[loser]["model"], None
        if rejected is None:
            donors = [row for _, row in winners if row is not kept and row[loser_side(row)]["answer"] is not None]
            if donors:
                donor = max(donors, key=battle_order)
                rejected = donor[loser_side(donor)]["answer"]
                rejected_model = donor[loser_side(donor)]["model"]
                recovered_from = donor["battle_id"]
        preferred.append(
            {
                "prompt_id": prompt_id,
                "battle_id": kept["battle_id"],
                "messages": kept["messages"],
                "preferred": kept[winner]["answer"],
                "preferred_side": winner,
                "preferred_model": kept[winner]["model"],
                "rejected": rejected,
                "rejected_model": rejected_model,
                "n_battles": len(battles),
                "n_wins": len(winners),
                "loser_recovered_from": recovered_from,
                "created_at": kept["created_at"],
            }
        )
        for line_no, row in battles:
            if row is not kept:
                quarantine.append(
                    entry(
                        STAGE,
                        file,
                        line_no,
                        f"superseded duplicate of {kept['battle_id']}",
                        battle_id=row["battle_id"],
                        prompt_id=prompt_id,
                        kind="superseded",
                    )
                )
    return preferred, quarantine
