"""The holdout split is by prompt: prompt_id % modulus == 0, and the pairs follow it."""

from __future__ import annotations

import pytest

from lineage.data.preferences import battle_pairs, split_holdout


def preferred(prompt_id, rejected="No."):
    return {
        "prompt_id": prompt_id,
        "battle_id": f"b{prompt_id}",
        "messages": [{"role": "user", "content": "q"}],
        "preferred": "Yes.",
        "preferred_side": "own",
        "rejected": rejected,
    }


def test_split_by_modulus():
    train, holdout = split_holdout([preferred(i) for i in range(12)], 5)
    assert [r["prompt_id"] for r in holdout] == [0, 5, 10]
    assert len(train) == 9


def test_modulus_must_be_positive():
    with pytest.raises(ValueError):
        split_holdout([preferred(1)], 0)


@pytest.mark.parametrize(("in_training", "n_train_pairs"), [(True, 5), (False, 3)])
def test_pairs_respect_holdout_switch(in_training, n_train_pairs):
    rows = [preferred(i) for i in range(1, 7)]
    rows[2]["rejected"] = None  # prompt 3: no known loser, no pair
    pairs, holdout_pairs = battle_pairs(rows, holdout_prompts={5, 6}, holdout_in_training=in_training)
    assert [p["prompt_id"] for p in holdout_pairs] == [5, 6]
    assert len(pairs) == n_train_pairs
    assert all(set(p) == {"messages", "chosen", "rejected", "prompt_id", "battle_id"} for p in pairs)
