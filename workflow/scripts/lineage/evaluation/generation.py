"""Batched greedy generation that returns exactly what one-prompt-at-a-time decoding returns.

Prompts are sorted by length (so a batch wastes little padding), left-padded with an
attention mask and decoded by `model.generate` with its KV cache (and, for hybrid models,
its SSM state cache). Each row stops at its first stop token (end of turn `<|im_end|>` or
EOS) or after `max_new_tokens`; rows that finish early are padded by generate and cut here,
so a row's output never depends on the other rows of its batch. The decoding settings start
from the checkpoint's own generation_config.json, forced to greedy.

With `cache="static"` the KV cache is allocated once per batch at its final length, which lets
transformers compile the decode step (CUDA graphs, on GPUs) instead of launching every kernel of
every layer from Python at each token; `bucket` pads each batch's prompts up to a multiple of
that many tokens (left, masked: the output does not change) so that few distinct shapes compile.
`cache="graph"` keeps the static cache but skips the compiler: the eager decode step is captured
once as a CUDA graph and replayed (lineage/evaluation/graph_decoding.py). `cache="continuous"`
decodes the same way but refills a row as soon as its answer ends, from prompts prefilled alone
(lineage/evaluation/continuous_decoding.py): no row waits for the longest answer of its batch.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from lineage.evaluation.replicas import ONE, Replicas


@dataclass(frozen=True)
class Generation:
    """Generated token ids (stop token excluded) and why decoding ended: 'stop' or 'length'."""

    token_ids: tuple[int, ...]
    finish_reason: str
    stop_token: int | None = None


CACHES = ("dynamic", "static", "graph", "continuous")


def greedy_config(model, *, max_new_tokens: int, stop_ids: Sequence[int], pad_id: int, cache: str = "dynamic"):
    """The checkpoint's generation config with sampling off, our stop tokens, length and cache."""
    if cache not in CACHES:
        raise ValueError(f"cache {cache!r}: expected one of {', '.join(CACHES)}")
    from transformers import GenerationConfig

    base = copy.deepcopy(getattr(model, "generation_config", None)) or GenerationConfig()
    base.do_sample = False
    base.num_beams = 1
    base.temperature = None
    base.top_p = None
    base.top_k = None
    base.max_new_tokens = max_new_tokens
    base.max_length = None
    base.min_new_tokens = None
    base.eos_token_id = list(stop_ids)
    base.pad_token_id = pad_id
    base.stop_strings = None
    base.cache_implementation = "static" if cache == "static" else None  # graph decodes without generate()
    return base


def cut_at_stop(new_tokens: Sequence[int], stop_ids: Sequence[int]) -> Generation:
    stops = set(stop_ids)
    for i, tok in enumerate(new_tokens):
        if tok in stops:
            return Generation(tuple(new_tokens[:i]), "stop", int(tok))
    return Generation(tuple(new_tokens), "length")


def padded_width(longest: int, bucket: int = 1) -> int:
    """`longest` rounded up to a multiple of `bucket`."""
    return -(-longest // max(1, bucket)) * max(1, bucket)


def left_padded(prompts: Sequence[Sequence[int]], pad_id: int, bucket: int = 1) -> tuple[torch.Tensor, torch.Tensor]:
    """(input_ids, attention_mask) of token-id prompts padded on the left to the longest, rounded up
    to a multiple of `bucket`."""
    if min(len(p) for p in prompts) == 0:
        raise ValueError("empty prompt")
    width = padded_width(max(len(p) for p in prompts), bucket)
    ids = torch.full((len(prompts), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(prompts), width), dtype=torch.long)
    for row, prompt in enumerate(prompts):
        ids[row, width - len(prompt) :] = torch.tensor(list(prompt))
        mask[row, width - len(prompt) :] = 1
    return ids, mask


def _device(model) -> torch.device:
    return next(model.parameters()).device


@torch.inference_mode()
def generate_greedy(
    model,
    prompts: Sequence[Sequence[int]],
    *,
    max_new_tokens: int,
    stop_ids: Sequence[int],
    pad_id: int,
    batch_size: int = 8,
    cache: str = "dynamic",
    bucket: int = 1,
    replicas: Replicas = ONE,
    limits: Sequence[int] | None = None,
) -> list[Generation]:
    """Greedy continuations of token-id prompts, in prompt order (each rank of `replicas` decodes
    its share of the batches; every rank returns all the generations). `limits` gives each prompt
    a length of its own, at most max_new_tokens (graph and continuous caches)."""
    if max_new_tokens < 1:
        raise ValueError("max_new_tokens must be at least 1")
    if limits is not None and (cache not in ("graph", "continuous") or len(limits) != len(prompts)):
        raise ValueError("limits: one per prompt, with cache graph or continuous")
    if not prompts:
        return []
    device = _device(model)
    config = greedy_config(model, max_new_tokens=max_new_tokens, stop_ids=stop_ids, pad_id=pad_id, cache=cache)
    order = sorted(range(len(prompts)), key=lambda i: -len(prompts[i]))
    if cache == "continuous":
        return _generate_continuous(model, prompts, order, max_new_tokens, stop_ids, batch_size, replicas, limits)
    decoder = None
    if cache == "graph":
        from .graph_decoding import GraphDecoder

        widest = padded_width(len(prompts[order[0]]), bucket)
        decoder = GraphDecoder(
            model,
            batch_size=min(batch_size, len(prompts)),
            cache_len=widest + max_new_tokens,
            max_new_tokens=max_new_tokens,
            stop_ids=stop_ids,
        )
    computed: dict[int, Generation] = {}
    planned = [order[start : start + batch_size] for start in range(0, len(order), batch_size)]
    for _, batch in replicas.mine(planned):
        ids, mask = left_padded([prompts[i] for i in batch], pad_id, bucket)
        if decoder is not None:
            new = decoder.decode(ids, mask, None if limits is None else [limits[i] for i in batch])
        else:
            out = model.generate(input_ids=ids.to(device), attention_mask=mask.to(device), generation_config=config)
            new = out[:, ids.shape[1] :]
        for r, i in enumerate(batch):
            computed[i] = cut_at_stop(new[r].tolist()[: None if limits is None else limits[i]], stop_ids)
    return replicas.merge([None] * len(prompts), computed)


def _generate_continuous(
    model, prompts, order, max_new_tokens, stop_ids, batch_size, replicas, limits=None
) -> list[Generation]:
    """Continuous batching (lineage/evaluation/continuous_decoding.py): each rank decodes every N-th
    prompt of the longest-first order, in rows of the same count on every rank."""
    from .continuous_decoding import ContinuousDecoder

    mine = [i for _, i in replicas.mine(order)]
    decoder = ContinuousDecoder(
        model,
        batch_size=min(batch_size, len(prompts)),
        cache_len=len(prompts[order[0]]) + max_new_tokens,
        max_new_tokens=max_new_tokens,
        stop_ids=stop_ids,
    )
    new = decoder.decode([prompts[i] for i in mine], None if limits is None else [limits[i] for i in mine])
    computed = {i: cut_at_stop(tokens, stop_ids) for i, tokens in zip(mine, new, strict=True)}
    return replicas.merge([None] * len(prompts), computed)


@torch.inference_mode()
def naive_generate(
    model, prompts: Sequence[Sequence[int]], *, max_new_tokens: int, stop_ids: Sequence[int]
) -> list[Generation]:
    """One prompt at a time, no padding, no cache: a full forward per new token. The reference."""
    device = _device(model)
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


@torch.inference_mode()
def generate_sampled(
    model,
    prompts: Sequence[Sequence[int]],
    *,
    samples: int,
    temperature: float,
    top_p: float,
    seed: int,
    max_new_tokens: int,
    stop_ids: Sequence[int],
    pad_id: int,
    batch_size: int = 8,
    cache: str = "dynamic",
    replicas: Replicas = ONE,
) -> list[list[Generation]]:
    """`samples` sampled continuations per prompt, in prompt order (batched, left-padded, KV cache:
    `generate`'s for cache dynamic or static, the CUDA-graph decoder for cache graph).

    Each prompt's draws depend on the seed and on the prompt's place in `prompts` alone
    (lineage/evaluation/seeded_sampling.py): the same answers for any batch size, cache, on one rank
    or several, up to the float rounding of its logits in another batch.
    """
    from transformers import LogitsProcessorList

    from lineage.evaluation.seeded_sampling import PromptSeededNoise, SeededSampler, sampling_warpers

    if samples < 1 or temperature <= 0 or not 0 < top_p <= 1:
        raise ValueError(f"samples={samples}, temperature={temperature}, top_p={top_p}: need >= 1, > 0, (0, 1]")
    if cache not in ("dynamic", "static", "graph"):
        raise ValueError(f"cache {cache!r}: sampling runs on dynamic, static or graph")
    if not prompts:
        return []
    device = _device(model)
    # greedy over Gumbel-perturbed logits is a draw from their softmax; each prompt's row repeated per sample
    config = greedy_config(model, max_new_tokens=max_new_tokens, stop_ids=stop_ids, pad_id=pad_id, cache=cache)
    decoder = None
    if cache == "graph":
        from .graph_decoding import GraphDecoder

        decoder = GraphDecoder(
            model,
            batch_size=min(batch_size, len(prompts)) * samples,
            cache_len=max(len(p) for p in prompts) + max_new_tokens,
            max_new_tokens=max_new_tokens,
            stop_ids=stop_ids,
            sampler=SeededSampler(seed, temperature, top_p),
        )
    computed: dict[int, list[Generation]] = {}
    starts = list(range(0, len(prompts), batch_size))
    for _, start in replicas.mine(starts):
        batch = prompts[start : start + batch_size]
        ids, mask = (t.repeat_interleave(samples, dim=0) for t in left_padded(batch, pad_id))
        width = ids.shape[1]
        keys = torch.arange(start * samples, (start + len(batch)) * samples)  # prompt x samples + sample
        if decoder is not None:
            new = decoder.decode(ids, mask, keys=keys)
        else:
            warpers = sampling_warpers(temperature, top_p)
            out = model.generate(
                input_ids=ids.to(device),
                attention_mask=mask.to(device),
                generation_config=config,
                logits_processor=LogitsProcessorList([*warpers, PromptSeededNoise(seed, keys, width)]),
            )
            new = out[:, width:]
        for row in range(len(batch)):  # each prompt's samples are consecutive rows
            rows = new[row * samples : (row + 1) * samples]
            computed[start + row] = [cut_at_stop(r.tolist(), stop_ids) for r in rows]
    return replicas.merge([None] * len(prompts), computed)
