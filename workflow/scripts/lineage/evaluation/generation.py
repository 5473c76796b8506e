"""Batched generation that returns exactly what one-prompt-at-a-time decoding returns.

One loop for every way of decoding: a picker chooses each token (greedy, or seeded draws:
lineage/evaluation/pickers.py) and a decoder runs the cache (`cache`: dynamic, static, graph or
continuous, lineage/evaluation/decoders.py). Prompts are sorted by length for greedy decoding (so a
batch wastes little padding), planned into the decoder's units, dealt to the ranks, decoded and cut:
each row stops at its first stop token (end of turn `<|im_end|>` or EOS) or after `max_new_tokens`;
rows that finish early are padded and cut here, so a row's output never depends on the other rows of
its batch. The decoding settings start from the checkpoint's own generation_config.json.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from lineage.evaluation.decoders import decoder_kind
from lineage.evaluation.pickers import GREEDY, Picker
from lineage.evaluation.replicas import ONE, Replicas


@dataclass(frozen=True)
class Generation:
    """Generated token ids (stop token excluded) and why decoding ended: 'stop' or 'length'."""

    token_ids: tuple[int, ...]
    finish_reason: str
    stop_token: int | None = None


def cut_at_stop(new_tokens: Sequence[int], stop_ids: Sequence[int]) -> Generation:
    stops = set(stop_ids)
    for i, tok in enumerate(new_tokens):
        if tok in stops:
            return Generation(tuple(new_tokens[:i]), "stop", int(tok))
    return Generation(tuple(new_tokens), "length")


@torch.inference_mode()
def generate(
    model,
    prompts: Sequence[Sequence[int]],
    picker: Picker = GREEDY,
    *,
    max_new_tokens: int,
    stop_ids: Sequence[int],
    pad_id: int,
    batch_size: int = 8,
    cache: str = "dynamic",
    bucket: int = 1,
    replicas: Replicas = ONE,
    limits: Sequence[int] | None = None,
) -> list[list[Generation]]:
    """Each prompt's `picker.samples` continuations, in prompt order (each rank of `replicas` decodes its
    share of the units; every rank returns all the generations). `batch_size` counts prompts (a batch
    has that many times `picker.samples` rows). `limits` gives each prompt a length of its own, at most
    max_new_tokens (graph and continuous caches).

    A seeded picker's draws depend on the seed and on the prompt's place in `prompts` alone
    (lineage/evaluation/seeded_sampling.py): the same answers for any batch size, cache, on one rank
    or several, up to the float rounding of its logits in another batch.
    """
    if max_new_tokens < 1:
        raise ValueError("max_new_tokens must be at least 1")
    kind = decoder_kind(cache, picker)
    if limits is not None and (not kind.takes_limits or len(limits) != len(prompts)):
        raise ValueError("limits: one per prompt, with cache graph or continuous")
    if not prompts:
        return []
    shape = dict(max_new_tokens=max_new_tokens, stop_ids=stop_ids, pad_id=pad_id, batch_size=batch_size, bucket=bucket)
    decoder = kind(model, picker, prompts, **shape)
    order = list(range(len(prompts)))
    if picker.longest_first:
        order.sort(key=lambda i: -len(prompts[i]))
    units = [unit for _, unit in replicas.mine(decoder.plan(order))]
    computed = {i: [cut_at_stop(row, stop_ids) for row in rows] for i, rows in decoder.decode(units, limits)}
    return replicas.merge([None] * len(prompts), computed)


def generate_greedy(model, prompts: Sequence[Sequence[int]], **options) -> list[Generation]:
    """Greedy continuations of token-id prompts, one per prompt (options: as `generate` takes them)."""
    return [answer for (answer,) in generate(model, prompts, GREEDY, **options)]


@torch.inference_mode()
def naive_generate(
    model, prompts: Sequence[Sequence[int]], *, max_new_tokens: int, stop_ids: Sequence[int]
) -> list[Generation]:
    """One prompt at a time, no padding, no cache: a full forward per new token. The reference."""
    device = next(model.parameters()).device
    stops = set(stop_ids)
    results = []
    for prompt in prompts:
        ids = list(prompt)
        new: list[int] = []
        for _ in range(max_new_tokens):
            logits = model(input_ids=torch.tensor([ids], device=device), use_cache=False).logits[0, -1]
            tok = int(logits.argmax())
            if tok in stops:
                results.append(Generation(tuple(new), "stop", tok))
                break
            new.append(tok)
            ids.append(tok)
        else:
            results.append(Generation(tuple(new), "length"))
    return results


@torch.inference_mode()
def sequential_generate(
    model, prompts: Sequence[Sequence[int]], *, max_new_tokens: int, stop_ids: Sequence[int], pad_id: int
) -> list[Generation]:
    """One prompt at a time through generate (KV cache, no padding): the fair speed baseline."""
    return [
        generate_greedy(model, [p], max_new_tokens=max_new_tokens, stop_ids=stop_ids, pad_id=pad_id, batch_size=1)[0]
        for p in prompts
    ]
