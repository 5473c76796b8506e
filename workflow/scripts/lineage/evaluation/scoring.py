"""Batched log-likelihood of continuations given contexts, as lm-evaluation-harness computes it.

A request is (context ids, continuation ids). Requests are sorted longest first (the first
batch shows at once whether memory suffices), grouped into batches of at most `batch_size`
rows and, optionally, `max_batch_tokens` padded tokens (the vocabulary-wide logits of a batch
grow with both), right-padded and run one forward per batch. A row's padding comes after its
real tokens, so under a causal mask it changes nothing for attention or SSM layers.
Log-softmax is taken in float32 on the positions that predict the continuation only, and sums
are accumulated in float64. When the model accepts `logits_to_keep`, only the tail of the
sequence that holds those positions is projected onto the vocabulary.

`packed_scoring.packed_loglikelihood` computes the same scores on packed sequences, without padding.

`choice_logprobs` is the fast path for multiple choice with one-token answers (MMLU's
letters): the prompt runs once and every candidate is read from the same last-position
distribution. `naive_loglikelihood` is the one-request-at-a-time reference used by tests
and the benchmark.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from lineage.evaluation.replicas import ONE, Replicas


@dataclass(frozen=True)
class Score:
    """Summed log-probability of a continuation, its token count, and whether greedy decoding yields it."""

    logprob: float
    n_tokens: int
    is_greedy: bool
    truncated: bool = False

    @property
    def mean_logprob(self) -> float:
        return self.logprob / self.n_tokens if self.n_tokens else 0.0


def encode_pair(encode, context: str, continuation: str) -> tuple[list[int], list[int], bool]:
    """lm-eval's `_encode_pair`: tokenize context+continuation together and split at the context length.

    Trailing whitespace of the context moves to the continuation first. Returns
    (context ids, continuation ids, clean) where clean says the context's own tokenization is
    a prefix of the joint one (no token straddles the boundary).
    """
    context, continuation = _move_trailing_whitespace(context, continuation)
    return _split(list(encode(context + continuation)), list(encode(context)))


def encode_pairs(encode_batch, pairs: Sequence[tuple[str, str]]) -> list[tuple[list[int], list[int], bool]]:
    """`encode_pair` of every (context, continuation), the texts tokenized in two batched calls."""
    moved = [_move_trailing_whitespace(context, continuation) for context, continuation in pairs]
    wholes = encode_batch([context + continuation for context, continuation in moved])
    contexts = encode_batch([context for context, _ in moved])
    return [_split(list(whole), list(context)) for whole, context in zip(wholes, contexts)]


def _move_trailing_whitespace(context: str, continuation: str) -> tuple[str, str]:
    if not context:
        raise ValueError("empty context: log-likelihood needs a prompt")
    n_spaces = len(context) - len(context.rstrip())
    if n_spaces:
        return context[:-n_spaces], context[-n_spaces:] + continuation
    return context, continuation


def _split(whole: list[int], context_ids: list[int]) -> tuple[list[int], list[int], bool]:
    return whole[: len(context_ids)], whole[len(context_ids) :], whole[: len(context_ids)] == context_ids


def _supports_logits_to_keep(model) -> bool:
    try:
        return "logits_to_keep" in inspect.signature(model.forward).parameters
    except (TypeError, ValueError):
        return False


def _plain_head(model) -> torch.nn.Module | None:
    from lineage.training.head_loss import HeadLossError, plain_head

    try:
        return plain_head(model) if model.get_decoder() is not model else None
    except HeadLossError:
        return None


def _device(model) -> torch.device:
    return next(model.parameters()).device


def forward_tail_logits(model, input_ids: torch.Tensor, attention_mask: torch.Tensor, keep: int) -> torch.Tensor:
    """Logits of the last `keep` positions, in the head's dtype (all positions if the model cannot restrict them).

    A plain linear head runs on the backbone's last `keep` hidden states directly: some models'
    forward casts the logits to float32 (Nemotron-H), which doubles a bf16 batch's largest tensor
    and rounds a float64 one.
    """
    head = _plain_head(model)
    if head is not None:
        hidden = model.get_decoder()(input_ids=input_ids, attention_mask=attention_mask, use_cache=False)
        return head(hidden.last_hidden_state[:, -keep:])
    if _supports_logits_to_keep(model):
        logits = model(input_ids=input_ids, attention_mask=attention_mask, logits_to_keep=keep, use_cache=False).logits
        return logits[:, -keep:]
    return model(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).logits[:, -keep:]


def _truncate(context: list[int], continuation: list[int], max_length: int | None) -> tuple[list[int], list[int], bool]:
    """Drop context tokens from the left so context+continuation fits (lm-eval does the same)."""
    if max_length is None or len(context) + len(continuation) <= max_length:
        return context, continuation, False
    if len(continuation) >= max_length:
        raise ValueError(f"continuation of {len(continuation)} tokens does not fit the model's {max_length} positions")
    return context[len(context) + len(continuation) - max_length :], continuation, True


def prepare_requests(
    requests: Sequence[tuple[Sequence[int], Sequence[int]]], max_length: int | None
) -> list[tuple[list[int], list[int], bool]]:
    """(context, continuation, truncated) per request, checked and cut to fit `max_length` positions."""
    prepared = []
    for i, (context, continuation) in enumerate(requests):
        if not continuation:
            raise ValueError(f"request {i}: empty continuation")
        if not context:
            raise ValueError(f"request {i}: empty context")
        prepared.append(_truncate(list(context), list(continuation), max_length))
    return prepared


def batches(order: Sequence[int], lengths: Sequence[int], batch_size: int, max_tokens: int | None) -> list[list[int]]:
    """Consecutive groups of `order` (longest first) with at most batch_size rows and, when given,
    at most max_tokens padded tokens (rows x longest row), so long rows make smaller batches."""
    groups: list[list[int]] = []
    for i in order:
        if (
            groups
            and len(groups[-1]) < batch_size
            and (max_tokens is None or (len(groups[-1]) + 1) * lengths[groups[-1][0]] <= max_tokens)
        ):
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups


def model_max_length(model) -> int | None:
    return getattr(model.config, "max_position_embeddings", None)


@torch.inference_mode()
def loglikelihood(
    model,
    requests: Sequence[tuple[Sequence[int], Sequence[int]]],
    *,
    batch_size: int = 8,
    pad_id: int = 0,
    max_length: int | None = None,
    max_batch_tokens: int | None = None,
    replicas: Replicas = ONE,
) -> list[Score]:
    """Score every (context, continuation) request; results in request order (each rank of
    `replicas` runs its share of the batches; every rank returns all the scores)."""
    device = _device(model)
    prepared = prepare_requests(requests, max_length or model_max_length(model))
    lengths = [len(c) + len(k) for c, k, _ in prepared]
    order = sorted(range(len(prepared)), key=lambda i: -lengths[i])
    computed: dict[int, Score] = {}
    for _, batch in replicas.mine(batches(order, lengths, batch_size, max_batch_tokens)):
        rows = [prepared[i][0] + prepared[i][1] for i in batch]
        width = max(len(r) for r in rows)
        ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for r, row in enumerate(rows):
            ids[r, : len(row)] = torch.tensor(row)
            mask[r, : len(row)] = 1
        # Position p predicts token p+1; the earliest needed position is the first context's end - 1.
        first = min(len(prepared[i][0]) - 1 for i in batch)
        keep = width - first
        logits = forward_tail_logits(model, ids.to(device), mask.to(device), keep)
        for r, i in enumerate(batch):
            context, continuation, truncated = prepared[i]
            lo = len(context) - 1 - first
            row_logits = logits[r, lo : lo + len(continuation)]
            row_logits = row_logits.to(torch.promote_types(row_logits.dtype, torch.float32))  # float64 stays float64
            logprobs = torch.log_softmax(row_logits, dim=-1)
            target = torch.tensor(continuation, device=logprobs.device)
            picked = logprobs.gather(-1, target[:, None]).squeeze(-1)
            greedy = bool((row_logits.argmax(-1) == target).all())
            computed[i] = Score(float(picked.double().sum()), len(continuation), greedy, truncated)
    return replicas.merge([None] * len(prepared), computed)


@torch.inference_mode()
def choice_logprobs(
    model,
    contexts: Sequence[Sequence[int]],
    choice_ids: Sequence[int],
    *,
    scored_tail: Sequence[int] | None = None,
    batch_size: int = 8,
    pad_id: int = 0,
    max_length: int | None = None,
    max_batch_tokens: int | None = None,
    replicas: Replicas = ONE,
) -> list[list[float]]:
    """Log-probability of each one-token choice after each context, one forward per batch of contexts.

    `scored_tail[i]` trailing tokens of context i belong to every continuation (lm-eval moves
    the prompt's trailing whitespace into the continuation): their log-probability is added
    to each choice, so the numbers equal full continuation scoring.
    """
    device = _device(model)
    max_length = max_length or model_max_length(model)
    tails = list(scored_tail) if scored_tail is not None else [0] * len(contexts)
    prepared = []
    for i, context in enumerate(contexts):
        if len(context) <= tails[i]:
            raise ValueError(f"context {i} has {len(context)} tokens, not more than its scored tail of {tails[i]}")
        prepared.append(list(context)[-(max_length - 1) :] if max_length else list(context))
    lengths = [len(p) for p in prepared]
    order = sorted(range(len(prepared)), key=lambda i: -lengths[i])
    computed: dict[int, list[float]] = {}
    targets = torch.tensor(list(choice_ids))
    for _, batch in replicas.mine(batches(order, lengths, batch_size, max_batch_tokens)):
        width = max(len(prepared[i]) for i in batch)
        ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
        mask = torch.zeros((len(batch), width), dtype=torch.long)
        for r, i in enumerate(batch):
            ids[r, : len(prepared[i])] = torch.tensor(prepared[i])
            mask[r, : len(prepared[i])] = 1
        first = min(len(prepared[i]) - 1 - tails[i] for i in batch)
        logits = forward_tail_logits(model, ids.to(device), mask.to(device), width - first)
        for r, i in enumerate(batch):
            end = len(prepared[i]) - 1 - first
            logprobs = torch.log_softmax(logits[r, end - tails[i] : end + 1].float(), dim=-1)
            shared = 0.0
            if tails[i]:
                tail_ids = torch.tensor(prepared[i][-tails[i] :], device=logprobs.device)
                shared = float(logprobs[:-1].gather(-1, tail_ids[:, None]).double().sum())
            computed[i] = (logprobs[-1][targets.to(logprobs.device)] + shared).tolist()
    return replicas.merge([None] * len(prepared), computed)


@torch.inference_mode()
def naive_loglikelihood(model, requests: Sequence[tuple[Sequence[int], Sequence[int]]]) -> list[Score]:
    """One request at a time, no padding, full logits: the reference the batched path must match."""
    device = _device(model)
    scores = []
    for context, continuation in requests:
        ids = torch.tensor([list(context) + list(continuation)], device=device)
        logits = model(input_ids=ids, use_cache=False).logits[0, len(context) - 1 : -1].float()
        target = torch.tensor(list(continuation), device=device)
        logprobs = torch.log_softmax(logits, dim=-1).gather(-1, target[:, None]).squeeze(-1)
        scores.append(
            Score(float(logprobs.double().sum()), len(continuation), bool((logits.argmax(-1) == target).all()))
        )
    return scores
