"""Training rows of the planner's lengths, made up on the spot: the steps' shapes without the data.

A rehearsal needs the step's shapes, not its text: every row is max_length tokens (the planner's upper bound,
workflow/scripts/planning/lineage.py), drawn at random from the vocabulary, its last `loss_share` of tokens labelled as an
assistant answer (a chat row's share, planning.measured.CHAT_LOSS_SHARE). A DPO pair is two such rows sharing
their prompt. The trainers' own batching (train_sft.row_steps, train_dpo.pair_steps) packs them.
"""

from __future__ import annotations

import numpy as np
import torch

from lineage.chat import IGNORE_INDEX, TokenizedRow
from lineage.training.pairs import Pair

DISTINCT_ROWS = 64  # rows drawn; a step's rows are picked from them by the trainer's seeded order


def made_up_rows(length: int, vocab_size: int, loss_share: float, count: int = DISTINCT_ROWS, seed: int = 0):
    """`count` rows of `length` random token ids (never 0, the pad id), the tail labelled."""
    generator = np.random.default_rng(seed)
    prompt = length - max(1, round(length * loss_share))
    rows = []
    for _ in range(count):
        ids = generator.integers(1, vocab_size, size=length, dtype=np.int64)
        labels = ids.copy()
        labels[:prompt] = IGNORE_INDEX
        rows.append(TokenizedRow(input_ids=ids, labels=labels))
    return rows


def made_up_pairs(length: int, vocab_size: int, loss_share: float, count: int = DISTINCT_ROWS, seed: int = 0):
    """(pairs, reference log-probs) of `count` pairs whose sides are `length` tokens and share their prompt."""
    chosen = made_up_rows(length, vocab_size, loss_share, count, seed)
    rejected = made_up_rows(length, vocab_size, loss_share, count, seed + 1)
    pairs = []
    for index, (a, b) in enumerate(zip(chosen, rejected, strict=True)):
        prompt = int(np.argmax(a.labels != IGNORE_INDEX))
        b.input_ids[:prompt] = a.input_ids[:prompt]
        pairs.append(Pair(chosen=a, rejected=b, row=index, key=f"made-up-{index}"))
    # log-probs of about ln(1/vocab) a labelled token: the loss starts near ln 2, as a real reference's would
    labelled = float((chosen[0].labels != IGNORE_INDEX).sum())
    references = torch.full((count, 2), -labelled * float(np.log(vocab_size)), dtype=torch.float64)
    return pairs, references
