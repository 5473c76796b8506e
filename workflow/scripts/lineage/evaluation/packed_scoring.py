"""Log-likelihood on packed sequences: no padding, and the LM head on the scored positions only.

A padded batch computes every pad position and projects a whole tail of each row onto the
vocabulary. Here the requests (longest first) are packed first-fit into sequences of at most
`pack_tokens` tokens. position_ids restart at each request and the row boundaries reach every
token mixer, so no request sees another: FlashAttention's variable-length kernel for attention
layers on CUDA (`cu_seq_lens`; lineage.training.varlen_attention), transformers' block-diagonal
mask from the restarting positions elsewhere, and `seq_idx` for the Mamba-2 kernels
(lineage.training.packing, which refuses models nothing keeps apart).

The backbone runs once per pack. Only the positions that predict a continuation token go
through the head, `chunk_tokens` of them at a time; each row's log-probability (the softmax
normaliser in float32, as in the padded path) and argmax come from one pass over its logits
(lineage.evaluation.token_logprobs). They stay on the device until the end, so the host packs
the next sequence while the device runs the last one and waits once per call, then sums them per
request in a fixed order (float64): the same sums on every run. On CUDA the varlen kernel takes
bfloat16 or float16 only; float32 models are scored padded there.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from lineage.evaluation.replicas import ONE, Replicas
from lineage.evaluation.scoring import Score, model_max_length, prepare_requests
from lineage.evaluation.token_logprobs import target_logprobs
from lineage.training import varlen_attention
from lineage.training.head_loss import HeadLossError, plain_head
from lineage.training.packing import PackingError, backbone_inputs, boundary_inputs, seq_idx_from_cu_seq_lens

PAD_MULTIPLE = 128  # a pack's length is rounded up to this: fewer distinct shapes for the kernels
REFUSAL = {"what": "packed scoring", "otherwise": "score padded (eval.pack_tokens: 0), which works everywhere"}


@dataclass(frozen=True)
class Pack:
    """One packed sequence and where its scored positions are."""

    input_ids: torch.Tensor  # (1, length)
    position_ids: torch.Tensor  # (1, length), restarting per request; the padding tail is a row of its own
    cu_seq_lens: torch.Tensor  # (rows + 1,) int32: request boundaries (and the tail's)
    longest: int  # tokens of the longest row
    scored: torch.Tensor  # (n,) positions whose next token is a continuation token
    targets: torch.Tensor  # (n,) those next tokens


def packing_inputs(model) -> tuple[tuple[str, ...], torch.nn.Module]:
    """(the boundary inputs the model's forward takes, its LM head); PackingError or HeadLossError
    when nothing keeps packed requests apart in this model on its device."""
    parameter = next(model.parameters())
    boundaries = boundary_inputs(model.config.model_type, parameter.device, **REFUSAL)
    head = plain_head(model)
    if parameter.is_cuda and (problem := varlen_attention.dtype_refusal(parameter.dtype)):
        raise PackingError(f"packed scoring on CUDA: {problem}; evaluate in bfloat16 or score padded")
    return boundaries, head


def unpackable_reason(model) -> str | None:
    """Why `model` cannot be scored packed on its device (None when it can)."""
    try:
        packing_inputs(model)
    except (PackingError, HeadLossError) as error:
        return str(error)
    return None


def scoring_packs(model, pack_tokens: int) -> tuple[int, str | None]:
    """(pack size, why padded): what a scoring job asked for (`pack_tokens`, 0 for padded batches), or 0
    and the reason where `model` cannot be packed on its device. Every job that scores decides here."""
    reason = unpackable_reason(model) if pack_tokens else None
    return (0, reason) if reason else (pack_tokens, None)


def first_fit(lengths: Sequence[int], budget: int) -> list[list[int]]:
    """Indices grouped longest first into bins of at most `budget` tokens (a longer request gets a bin
    of its own): fewer, fuller sequences than packing in order."""
    bins: list[list[int]] = []
    free: list[int] = []
    for i in sorted(range(len(lengths)), key=lambda i: -lengths[i]):
        slot = next((b for b, room in enumerate(free) if lengths[i] <= room), None)
        if slot is None:
            bins.append([i])
            free.append(budget - lengths[i])
        else:
            bins[slot].append(i)
            free[slot] -= lengths[i]
    return bins


def build_pack(members: list[int], prepared: Sequence[tuple[list[int], list[int], bool]], pad_id: int) -> Pack:
    """The context + continuation tokens of the requests `members`, in that order, padded to a multiple
    of PAD_MULTIPLE."""
    used = sum(len(prepared[i][0]) + len(prepared[i][1]) for i in members)
    length = -(-used // PAD_MULTIPLE) * PAD_MULTIPLE
    tokens: list[int] = []
    positions: list[int] = []
    bounds = [0]
    scored: list[int] = []
    targets: list[int] = []
    for i in members:
        context, continuation, _ = prepared[i]
        start = len(tokens)
        tokens += context + continuation
        positions += range(len(context) + len(continuation))
        bounds.append(len(tokens))
        first = start + len(context) - 1  # predicts the first continuation token
        scored += range(first, first + len(continuation))
        targets += continuation
    longest = max(b - a for a, b in zip(bounds, bounds[1:]))
    if used < length:
        tokens += [pad_id] * (length - used)
        positions += range(length - used)
        bounds.append(length)
    return Pack(
        input_ids=torch.tensor([tokens]),
        position_ids=torch.tensor([positions]),
        cu_seq_lens=torch.tensor(bounds, dtype=torch.int32),
        longest=longest,
        scored=torch.tensor(scored),
        targets=torch.tensor(targets),
    )


@contextlib.contextmanager
def attention_for_packing(model) -> Iterator[bool]:
    """Switch attention to the varlen kernel on CUDA for the duration (yields whether it did)."""
    previous = model.config._attn_implementation
    device = next(model.parameters()).device
    if device.type != "cuda" or previous == varlen_attention.NAME:
        yield previous == varlen_attention.NAME
        return
    model.set_attn_implementation(varlen_attention.register())
    try:
        yield True
    finally:
        model.set_attn_implementation(previous)


def _to(tensor: torch.Tensor, device: torch.device) -> torch.Tensor:
    if device.type == "cuda":
        return tensor.pin_memory().to(device, non_blocking=True)
    return tensor.to(device)


@torch.inference_mode()
def packed_loglikelihood(
    model,
    requests: Sequence[tuple[Sequence[int], Sequence[int]]],
    *,
    pack_tokens: int,
    pad_id: int = 0,
    max_length: int | None = None,
    chunk_tokens: int = 4096,
    replicas: Replicas = ONE,
) -> list[Score]:
    """Score every (context, continuation) request on packed sequences; results in request order
    (each rank of `replicas` scores its share of the packs; every rank returns all the scores).

    Raises PackingError when nothing keeps packed requests apart in this model here
    (`unpackable_reason` says so up front; the padded `scoring.loglikelihood` works everywhere).
    """
    device = next(model.parameters()).device
    boundaries, head = packing_inputs(model)
    backbone = model.get_decoder()
    prepared = prepare_requests(requests, max_length or model_max_length(model))
    if not prepared:
        return []
    lengths = [len(c) + len(k) for c, k, _ in prepared]
    logprobs, hits, order = [], [], []  # per scored position, in pack order; the requests in that order
    with attention_for_packing(model) as varlen:
        for _, members in replicas.mine(first_fit(lengths, pack_tokens)):
            pack = build_pack(members, prepared, pad_id)
            batch = {
                "input_ids": pack.input_ids,
                "position_ids": pack.position_ids,
                "cu_seq_lens": pack.cu_seq_lens,
                "seq_idx": seq_idx_from_cu_seq_lens(pack.cu_seq_lens, pack.input_ids.shape[1]),
            }
            batch = {key: _to(value, device) for key, value in batch.items()} | {"longest": pack.longest}
            hidden = backbone(**backbone_inputs(batch, boundaries, varlen)).last_hidden_state[0]
            picked = hidden.index_select(0, _to(pack.scored, device))
            targets = _to(pack.targets, device)
            for a in range(0, targets.numel(), chunk_tokens):
                chunk_logprobs, chunk_hits = target_logprobs(
                    head(picked[a : a + chunk_tokens]), targets[a : a + chunk_tokens]
                )
                logprobs.append(chunk_logprobs)
                hits.append(chunk_hits)
            order += members
    if not order:  # more ranks than packs
        return replicas.merge([None] * len(prepared), {})
    # Summed on the host in a fixed order: the same float64 sums on every run (device atomics would not be).
    values = torch.cat(logprobs).cpu().double().numpy()
    greedy = torch.cat(hits).cpu().numpy()
    counts = [len(prepared[i][1]) for i in order]
    starts = np.cumsum([0] + counts[:-1])
    sums, all_hit = np.add.reduceat(values, starts), np.logical_and.reduceat(greedy, starts)
    computed = {i: Score(float(sums[k]), counts[k], bool(all_hit[k]), prepared[i][2]) for k, i in enumerate(order)}
    return replicas.merge([None] * len(prepared), computed)
