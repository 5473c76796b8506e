"""Preference pairs as token sequences, their reference log-probabilities, and their batches.

A pair is the prompt rendered with the generation prompt plus the chosen or the rejected answer,
labelled on the answer and its end-of-turn. Its key is a digest of both sides' tokens and labels:
a reference file scored from other tokens (another chat template, max length or truncation)
matches no key, and its lines may come in any order.

A batch of pairs holds the sequences chosen, rejected, chosen, rejected, ... padded (one row
each) or packed (lineage.training.data.collate_packed: a pair never straddles two packs). The
positions whose next token is labelled, their targets and each one's place in a dense
(sequences x width) grid are computed here on the host, so the device never waits to find them
and each sequence's sum is taken in a fixed order (`sequence_sums`): the same on every run.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from lineage.chat import IGNORE_INDEX, TokenizedRow, completion_logprob_inputs
from lineage.io import DataError, read_jsonl, sha256_file, sha256_json
from lineage.pair_rows import pair_conversation
from lineage.screening import chat_refusal
from lineage.training.data import collate, collate_packed

FORMAT = "reference-logprobs/1"


@dataclass(frozen=True)
class Pair:
    chosen: TokenizedRow
    rejected: TokenizedRow
    row: int  # 0-based over the data files, in order
    key: str

    @property
    def length(self) -> int:
        return len(self.chosen.input_ids) + len(self.rejected.input_ids)


def pair_key(chosen: TokenizedRow, rejected: TokenizedRow) -> str:
    return sha256_json([list(chosen.input_ids), list(chosen.labels), list(rejected.input_ids), list(rejected.labels)])


def pair_refusal(prompt: list[dict[str, str]], chosen: str, rejected: str, tokens: tuple[str, ...]) -> str | None:
    """Why a pair must not train, or None: what the content screen refuses in its prompt and either answer
    (lineage.screening; an empty answer is allowed, a verifier round may reject one), or two answers that
    are the same text (no preference)."""
    for side, answer in (("chosen", chosen), ("rejected", rejected)):
        reason = chat_refusal([*prompt, {"role": "assistant", "content": answer}], tokens, empty_answers=True)
        if reason:
            return reason.replace(f"messages[{len(prompt)}].content", side)
    if " ".join(chosen.split()) == " ".join(rejected.split()):
        return "rejected: the same text as chosen, no preference"
    return None


def tokenize_pairs(
    tokenizer,
    raw: Sequence[dict],
    system_prompt: str | None,
    max_length: int,
    truncation: str,
    where: Callable[[int], str] = "pair {}".format,
    tokens: tuple[str, ...] = (),
):
    """(pairs, a summary line, {drop reason: count}); a pair is dropped when either side is. A row that is no
    pair (pair_conversation) or that the screen refuses (pair_refusal, `tokens` the chat template's control
    tokens) is dropped with its reason, the row named by `where(index)` (LoadedRows.where)."""
    pairs, dropped = [], Counter()
    for index, row in enumerate(raw):
        try:
            prompt, *answers = pair_conversation(row, where(index))
        except DataError as err:
            dropped[str(err)] += 1
            continue
        refusal = pair_refusal(prompt, *answers, tokens)
        if refusal:
            dropped[f"{where(index)}: {refusal}"] += 1
            continue
        sides = [
            completion_logprob_inputs(
                tokenizer, prompt, answer, system_prompt=system_prompt, max_length=max_length, truncation=truncation
            )
            for answer in answers
        ]
        reasons = [reason for _, reason in sides if reason]
        if reasons:
            dropped[reasons[0]] += 1
        else:
            chosen, rejected = sides[0][0], sides[1][0]
            pairs.append(Pair(chosen, rejected, index, pair_key(chosen, rejected)))
    drops = ", ".join(f"{k}: {v}" for k, v in sorted(dropped.items())) or "none"
    return pairs, f"{len(pairs)}/{len(raw)} pairs kept (dropped: {drops})", dict(dropped)


def scoring_request(row: TokenizedRow) -> tuple[list[int], list[int]]:
    """(context, continuation) of a sequence whose labels are one run: what the eval's scoring takes.

    Tokens after the last label are left out: under a causal model they change no score.
    """
    labelled = [i for i, label in enumerate(row.labels) if label != IGNORE_INDEX]
    first, last = labelled[0], labelled[-1]
    if first == 0 or len(labelled) != last - first + 1:
        raise DataError(
            "a DPO sequence's labels must be one run after a prompt, "
            f"got labelled positions {labelled[:4]}...{labelled[-2:]}"
        )
    return list(row.input_ids[:first]), list(row.input_ids[first : last + 1])


# -- the reference file ---------------------------------------------------------------------------


def checkpoint_identity(lineage: dict[str, Any]) -> str:
    """A digest of a checkpoint's files as its lineage.json lists them (its root for external ones)."""
    return sha256_json(lineage.get("files") or lineage.get("root"))


def reference_header(parent: dict[str, Any], init: str, data_records: list[dict], settings: dict) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "model": {"run": parent.get("run"), "path": str(init), "identity": checkpoint_identity(parent)},
        "data": data_records,
        **settings,
    }


def read_reference(path: str | Path, parent: dict[str, Any], max_length: int, truncation: str):
    """(header, {pair key: (chosen logp, rejected logp)}) of a reference file made for this parent and data.

    Refuses a file of another format, another reference checkpoint or other tokenization settings,
    saying how to rebuild it.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(
            f"{path}: reference log-probs not found; build them with workflow/scripts/reference_logprobs.py"
        )
    lines = read_jsonl(path)
    try:
        _, header = next(lines)
    except StopIteration:
        raise DataError(f"{path}: empty reference file") from None
    rebuild = "rebuild it with reference_logprobs.py (snakemake reruns the run's _reference rule)"
    if header.get("format") != FORMAT:
        raise DataError(f"{path}:1: format {header.get('format')!r}, expected {FORMAT!r}; {rebuild}")
    if header["model"]["identity"] != checkpoint_identity(parent):
        raise DataError(
            f"{path}:1: scored with checkpoint {header['model']['path']} ({header['model']['run']}), "
            f"not with this run's parent {parent.get('run')}; {rebuild}"
        )
    for name, value in (("max_length", max_length), ("truncation", truncation)):
        if header.get(name) != value:
            raise DataError(f"{path}:1: {name} {header.get(name)!r}, the run's is {value!r}; {rebuild}")
    table = {}
    for line_no, entry in lines:
        try:
            table[entry["key"]] = (float(entry["chosen"]), float(entry["rejected"]))
        except (KeyError, TypeError, ValueError) as error:
            raise DataError(f"{path}:{line_no}: expected key, chosen and rejected numbers ({error})") from None
    return header | {"sha256": sha256_file(path), "file": str(path)}, table


def reference_logprobs(
    pairs: Sequence[Pair], table: dict[str, tuple[float, float]], path: str, where: Callable[[int], str]
) -> torch.Tensor:
    """(pairs, 2) float64: each pair's reference (chosen, rejected) log-probs, looked up by key; `where` names a
    pair's row (LoadedRows.where)."""
    missing = [pair for pair in pairs if pair.key not in table]
    if missing:
        where = where(missing[0].row)
        raise DataError(
            f"{path}: no reference log-probs for {len(missing)} pair(s), the first {where}; the file "
            "was scored from other pairs or tokens: rebuild it (reference_logprobs.py)"
        )
    return torch.tensor([table[pair.key] for pair in pairs], dtype=torch.float64)


# -- batches ----------------------------------------------------------------------------------------


def scored_positions(
    labels: torch.Tensor, sequence_of_token: torch.Tensor, sequences: int
) -> dict[str, torch.Tensor | int]:
    """Where the head runs and how `sequences` sequences sum its log-probs, from unshifted labels (rows x length).

    positions: flat indices of the positions whose next token is labelled; targets: those tokens;
    slots: each position's index into a (sequences x width) grid, row = its sequence, column = its
    rank within it. An empty batch gets one position with no sequence (its log-prob is multiplied
    by 0 so every rank's gradients still cover the head).
    """
    length = labels.shape[1]
    rows, columns = (labels[:, 1:] != IGNORE_INDEX).nonzero(as_tuple=True)
    positions = rows * length + columns
    if not positions.numel():
        zero = torch.zeros(1, dtype=torch.long)
        return {"positions": zero, "targets": zero, "slots": zero, "sequences": 0, "width": 1}
    targets = labels.flatten()[positions + 1]
    sequence = sequence_of_token.flatten()[positions + 1].long()
    counts = torch.bincount(sequence, minlength=sequences)
    starts = torch.cumsum(counts, 0) - counts
    width = int(counts.max())
    slots = sequence * width + torch.arange(positions.numel()) - starts[sequence]
    return {"positions": positions, "targets": targets, "slots": slots, "sequences": sequences, "width": width}


def collate_pairs(
    pairs: Sequence[Pair], pad_id: int, pack_length: int | None = None, multiple: int | None = None
) -> dict[str, torch.Tensor | int]:
    """The sequences chosen_1, rejected_1, chosen_2, ... padded (no pack_length) or in one pack."""
    rows = [side for pair in pairs for side in (pair.chosen, pair.rejected)]
    if pack_length is not None:
        batch = collate_packed(rows, pad_id, pack_length, multiple)
        sequence_of_token = batch["seq_idx"]
    else:
        batch = collate(rows, pad_id)
        sequence_of_token = torch.arange(len(rows)).unsqueeze(1).expand_as(batch["labels"])
    return batch | scored_positions(batch["labels"], sequence_of_token, len(rows))


def sequence_sums(token_logprobs: torch.Tensor, batch: dict) -> torch.Tensor:
    """Each sequence's summed log-prob, shape (sequences,): a dense grid summed row by row (no atomics)."""
    grid = token_logprobs.new_zeros(batch["sequences"] * batch["width"])
    if not batch["sequences"]:
        return grid
    grid = grid.index_put((batch["slots"],), token_logprobs)
    return grid.view(batch["sequences"], batch["width"]).sum(1)
