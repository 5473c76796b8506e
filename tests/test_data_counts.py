"""The card's counts are the acceptance test of the data stages, run here on the shipped sample export.

236 battles = 106 own_better / 72 other_better / 34 tie / 24 both_bad; 140 preferred answers
after deduplication; 29 holdout pairs; 135 pairs with a known loser; 140 x 40 = 5,600 winner rows.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lineage.battles import read_export
from lineage.citations import clean_battles
from lineage.dedup import dedup_preferred
from lineage.preferences import battle_pairs, split_holdout, winner_rows

SAMPLE = Path(__file__).resolve().parents[1] / "resources" / "sample" / "battles.jsonl"
CARD = {"battles": 236, "own_better": 106, "other_better": 72, "tie": 34, "both_bad": 24, "preferred": 140,
        "holdout_pairs": 29, "recovered_pairs": 135, "winner_rows": 5600}


@pytest.fixture(scope="module")
def stages():
    if not SAMPLE.is_file():
        pytest.skip(f"{SAMPLE} does not exist yet; generate it with tools/make_sample_data.py")
    read = read_export(SAMPLE)
    cleaned, _, _ = clean_battles(read.kept)
    preferred, superseded = dedup_preferred(list(enumerate(cleaned, start=1)))
    train, holdout = split_holdout(preferred, 5)
    pairs, holdout_pairs = battle_pairs(preferred, {row["prompt_id"] for row in holdout}, holdout_in_training=True)
    winners = winner_rows(train, holdout, 40, holdout_in_training=True)
    return {"read": read, "preferred": preferred, "superseded": superseded, "pairs": pairs,
            "holdout_pairs": holdout_pairs, "winners": winners}


def test_battles_and_votes(stages):
    read = stages["read"]
    assert not read.quarantine, [q["reason"] for q in read.quarantine]
    assert len(read.kept) == CARD["battles"]
    votes = read.vote_counts()
    assert [votes[v] for v in ("own_better", "other_better", "tie", "both_bad")] == [
        CARD["own_better"], CARD["other_better"], CARD["tie"], CARD["both_bad"]]


def test_preferred_after_dedup(stages):
    assert len(stages["preferred"]) == CARD["preferred"]
    assert len(stages["preferred"]) + len(stages["superseded"]) == CARD["own_better"] + CARD["other_better"]


def test_pairs(stages):
    assert len(stages["holdout_pairs"]) == CARD["holdout_pairs"]
    assert len(stages["pairs"]) == CARD["recovered_pairs"]


def test_winner_rows(stages):
    assert len(stages["winners"]) == CARD["winner_rows"]
