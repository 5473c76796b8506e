"""The caches prompts decode on (`eval.cache`), each behind one interface the generation loop drives.

- dynamic: transformers' generate on its dynamic KV cache (and, for hybrid models, its SSM state cache);
- static: generate with the KV cache allocated once per batch at its final length, which lets
  transformers compile the decode step; `bucket` pads each batch's prompts up to a multiple of that
  many tokens (left, masked: the output does not change) so that few distinct shapes compile;
- graph: our static cache with the eager decode step captured once as a CUDA graph and replayed
  (lineage/evaluation/graph_decoding.py);
- continuous: the same step, a row refilled as soon as its answer ends from a prompt prefilled alone
  (lineage/evaluation/continuous_decoding.py): no row waits for the longest answer of its batch.

A decoder plans the prompts (in the loop's order) into units that the loop deals to the ranks: a
fixed batch, or for continuous one prompt. It decodes this rank's units into each prompt's rows of
new tokens, one per sample, stop tokens still in (the loop cuts them). Rows are independent, so a
row's tokens never depend on the other rows of its batch. The pick of each token is the picker's
(lineage/evaluation/pickers.py), on every cache that `draws`; continuous batching decodes greedily.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Sequence

import torch

from lineage.evaluation.pickers import Picker

Rows = list[list[int]]  # a prompt's new tokens, one list per sample


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


def generate_config(model, *, max_new_tokens: int, stop_ids: Sequence[int], pad_id: int, static: bool = False):
    """The checkpoint's generation config with sampling off (a picker's processors do any drawing), our
    stop tokens, length and cache."""
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
    base.cache_implementation = "static" if static else None
    return base


class Batches:
    """Fixed batches of `batch_size` prompts, left-padded, each prompt's row repeated per sample and
    decoded until the batch's last row ends. Subclasses decode one batch (`_batch`)."""

    draws = True  # runs a sampling picker
    takes_limits = False  # a length of its own per prompt

    def __init__(self, model, picker: Picker, prompts, *, max_new_tokens, stop_ids, pad_id, batch_size, bucket):
        self.model, self.picker, self.prompts = model, picker, prompts
        self.max_new_tokens, self.stop_ids, self.pad_id = max_new_tokens, stop_ids, pad_id
        self.batch_size, self.bucket = batch_size, bucket

    def plan(self, order: list[int]) -> list[list[int]]:
        return [order[start : start + self.batch_size] for start in range(0, len(order), self.batch_size)]

    def decode(self, units: list[list[int]], limits: Sequence[int] | None) -> Iterator[tuple[int, Rows]]:
        samples = self.picker.samples
        for batch in units:
            padded = left_padded([self.prompts[i] for i in batch], self.pad_id, self.bucket)
            ids, mask = (t.repeat_interleave(samples, dim=0) for t in padded)
            keys = torch.tensor([i * samples + s for i in batch for s in range(samples)])  # prompt x samples + sample
            rows = None if limits is None else [limits[i] for i in batch for _ in range(samples)]
            new = self._batch(ids, mask, rows, keys)
            for r, i in enumerate(batch):  # each prompt's samples are consecutive rows
                cut = None if limits is None else limits[i]
                yield i, [row.tolist()[:cut] for row in new[r * samples : (r + 1) * samples]]

    def _batch(self, ids: torch.Tensor, mask: torch.Tensor, limits, keys: torch.Tensor) -> torch.Tensor:
        """New token ids (rows x steps) of one left-padded batch."""
        raise NotImplementedError


class Dynamic(Batches):
    """transformers' generate, its picks made by the picker's logits processors."""

    static = False

    def __init__(self, model, picker, prompts, **shape):
        super().__init__(model, picker, prompts, **shape)
        self.device = next(model.parameters()).device
        self.config = generate_config(
            model, max_new_tokens=self.max_new_tokens, stop_ids=self.stop_ids, pad_id=self.pad_id, static=self.static
        )

    def _batch(self, ids, mask, limits, keys):
        from transformers import LogitsProcessorList

        out = self.model.generate(
            input_ids=ids.to(self.device),
            attention_mask=mask.to(self.device),
            generation_config=self.config,
            logits_processor=LogitsProcessorList(self.picker.processors(keys, ids.shape[1])),
        )
        return out[:, ids.shape[1] :]


class Static(Dynamic):
    static = True


class Graph(Batches):
    """One `GraphDecoder` for every batch of the call: its cache holds the widest batch."""

    takes_limits = True

    def __init__(self, model, picker, prompts, **shape):
        from lineage.evaluation.graph_decoding import GraphDecoder

        super().__init__(model, picker, prompts, **shape)
        self.decoder = GraphDecoder(
            model,
            batch_size=min(self.batch_size, len(prompts)) * picker.samples,
            cache_len=padded_width(max(len(p) for p in prompts), self.bucket) + self.max_new_tokens,
            max_new_tokens=self.max_new_tokens,
            stop_ids=self.stop_ids,
            sampler=picker,
        )

    def _batch(self, ids, mask, limits, keys):
        return self.decoder.decode(ids, mask, limits, keys=keys)


class Continuous:
    """Rows refilled as answers end: each rank decodes every N-th prompt of the loop's order, in rows of
    the same count on every rank (bucket does not apply: a prompt is prefilled alone)."""

    draws = False
    takes_limits = True

    def __init__(self, model, picker, prompts, *, max_new_tokens, stop_ids, pad_id, batch_size, bucket):
        from lineage.evaluation.continuous_decoding import ContinuousDecoder

        self.prompts = prompts
        self.decoder = ContinuousDecoder(
            model,
            batch_size=min(batch_size, len(prompts)),
            cache_len=max(len(p) for p in prompts) + max_new_tokens,
            max_new_tokens=max_new_tokens,
            stop_ids=stop_ids,
        )

    def plan(self, order: list[int]) -> list[list[int]]:
        return [[i] for i in order]

    def decode(self, units: list[list[int]], limits: Sequence[int] | None) -> Iterator[tuple[int, Rows]]:
        mine = [i for unit in units for i in unit]
        new = self.decoder.decode(
            [self.prompts[i] for i in mine], None if limits is None else [limits[i] for i in mine]
        )
        for i, tokens in zip(mine, new, strict=True):
            yield i, [tokens]


DECODERS = {"dynamic": Dynamic, "static": Static, "graph": Graph, "continuous": Continuous}
CACHES = tuple(DECODERS)
SAMPLING_CACHES = tuple(name for name, decoder in DECODERS.items() if decoder.draws)


def decoder_kind(cache: str, picker: Picker):
    """The decoder class of `cache`, refusing a cache that cannot run `picker`."""
    if cache not in DECODERS:
        raise ValueError(f"cache {cache!r}: expected one of {', '.join(CACHES)}")
    if not (picker.greedy or DECODERS[cache].draws):
        raise ValueError(f"cache {cache} decodes greedily; sample with cache {', '.join(SAMPLING_CACHES)}")
    return DECODERS[cache]
