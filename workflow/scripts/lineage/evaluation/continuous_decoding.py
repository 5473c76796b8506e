"""Greedy decoding with continuous batching: a finished row takes the next waiting prompt at once.

Why: with fixed batches a batch runs until its longest answer ends, so short answers leave their
rows idle (a GSM8K batch of 32 where one answer runs to the length limit decodes 32 rows for the
whole limit). Here the decoder keeps `batch_size` rows busy: every `check_every` steps the host
looks at the stop flags, takes the finished rows' tokens and puts waiting prompts in their place.

Each row is independent of the others, so an item's tokens do not depend on what shares the
batch or when it came in:
- a prompt is prefilled alone (batch of one, no padding) by the model's own forward, and its
  keys/values and Mamba-2 states are copied into its row of the static cache;
- each row writes its keys at its own position (`RowStaticLayer`: the prompt at 0..n-1, then one
  column per new token), so a row's cache is laid out the same whenever it was filled;
- the decode step is the GraphDecoder's (one token per row, argmax, in place; captured once as a
  CUDA graph on a GPU), with a per-row count of tokens written.
Rows whose answer ended keep stepping until the next check (their extra tokens are not recorded).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

import torch

from lineage.evaluation.graph_decoding import StaticDecoder


def _row_static_layer():
    """transformers' StaticLayer, writing each row's new key/value at that row's own column."""
    from transformers.cache_utils import StaticLayer

    class RowStaticLayer(StaticLayer):
        def __init__(self, max_cache_len: int, columns: torch.Tensor):
            super().__init__(max_cache_len=max_cache_len)
            self.columns = columns  # (rows,): where each row's token of this step goes

        def update(self, key_states, value_states, *args, **kwargs):
            if not self.is_initialized:
                self.lazy_initialization(key_states, value_states)
            rows = torch.arange(key_states.shape[0], device=key_states.device)
            self.keys[rows, :, self.columns] = key_states[:, :, -1]
            self.values[rows, :, self.columns] = value_states[:, :, -1]
            return self.keys, self.values

    return RowStaticLayer


class ContinuousDecoder(StaticDecoder):
    """`batch_size` rows of a static cache of `cache_len` positions, refilled as answers end."""

    what = "continuous decoding"

    def __init__(self, model, *, check_every: int = 8, **shape):
        """shape: batch_size, cache_len, max_new_tokens, stop_ids (as StaticDecoder takes them)."""
        if shape.get("sampler") is not None:
            raise ValueError("continuous batching decodes greedily; sample with cache graph or dynamic")
        super().__init__(model, check_every=check_every, **shape)
        batch_size, cache_len, max_new_tokens = self.batch_size, self.cache_len, self.max_new_tokens
        on = {"device": self.device}
        self.row_index = torch.arange(batch_size, **on)
        self.every_row = torch.ones((batch_size,), dtype=torch.bool, **on)
        self.columns = torch.zeros((batch_size,), dtype=torch.long, **on)  # each row's next cache column
        self.generated = torch.zeros((batch_size, max_new_tokens + 1), dtype=torch.long, **on)  # last: scratch
        self.count = torch.zeros((batch_size,), dtype=torch.long, **on)  # tokens recorded per row
        self.done = torch.ones((batch_size,), dtype=torch.bool, **on)
        row_layer = _row_static_layer()
        self.stop_set = set(self.stops.tolist())  # host copy: an insert checks its first token without a sync
        self.attention_layers = set()
        for index, layer in enumerate(self.cache.layers):
            if type(layer).__name__ == "StaticLayer":
                self.cache.layers[index] = row_layer(cache_len, self.columns)
                self.attention_layers.add(index)
        self.initialized = False

    # -- the captured step -----------------------------------------------------------------------

    def _step(self) -> None:
        """One token for every row: no host reads, no new shapes."""
        # this step's key is written at each row's column, and seen by its own query (no host value: capturable)
        self.key_ok.index_put_((self.row_index, self.columns), self.every_row)
        chosen = self._next_tokens(self.key_ok)
        self.columns.copy_((self.columns + 1).clamp_(max=self.cache_len - 1))  # a finished row may run on
        at = torch.where(self.done, self.max_new_tokens, self.count)
        self.generated.scatter_(1, at[:, None], chosen[:, None])
        self.count.add_((~self.done).long())
        self.done.logical_or_(torch.isin(chosen, self.stops) | (self.count >= self.limit))

    # -- prompts in and answers out (host side, between steps) -------------------------------------

    def _initialize(self, prefill_cache) -> None:
        """Allocate every layer's static tensors at the shapes the first prefill produced."""
        rows = self.batch_size
        for index, layer in enumerate(self.cache.layers):
            source = prefill_cache.layers[index]
            if index in self.attention_layers:
                keys, values = source.keys, source.values
                layer.lazy_initialization(
                    keys.new_zeros((rows, *keys.shape[1:2], 1, keys.shape[-1])),
                    values.new_zeros((rows, *values.shape[1:2], 1, values.shape[-1])),
                )
            elif hasattr(layer, "conv_states"):
                for state in range(layer.number_of_states):
                    conv, recurrent = source.conv_states[state], source.recurrent_states[state]
                    if conv is None and recurrent is None:
                        continue
                    layer.lazy_initialization(
                        conv_states=None if conv is None else conv.new_zeros((rows, *conv.shape[1:])),
                        recurrent_states=None
                        if recurrent is None
                        else recurrent.new_zeros((rows, *recurrent.shape[1:])),
                        state_idx=state,
                    )
                    layer.has_previous_state[state] = True  # the decode path (one token on a cached state)
        self.initialized = True

    def _insert(self, row: int, prompt: Sequence[int], limit: int) -> None:
        """Prefill `prompt` alone and put it in `row`: its cache, its first new token, its counters."""
        n = len(prompt)
        out = self.model(
            input_ids=torch.tensor([list(prompt)], device=self.device),
            position_ids=torch.arange(n, device=self.device)[None],
            use_cache=True,
            logits_to_keep=1,
        )
        prefill = out.past_key_values
        if not self.initialized:
            self._initialize(prefill)
        for index, layer in enumerate(self.cache.layers):
            source = prefill.layers[index]
            if index in self.attention_layers:
                layer.keys[row, :, :n] = source.keys[0, :, :n]
                layer.values[row, :, :n] = source.values[0, :, :n]
            elif hasattr(layer, "conv_states"):
                for state in range(layer.number_of_states):
                    if source.conv_states[state] is not None:
                        layer.conv_states[state][row] = source.conv_states[state][0]
                    if source.recurrent_states[state] is not None:
                        layer.recurrent_states[state][row] = source.recurrent_states[state][0]
        first = int(out.logits[0, -1].float().argmax())
        self.tokens[row, 0] = first
        self.positions[row, 0] = n
        self.columns[row] = n
        self.key_ok[row] = self.key_index < n
        self.generated[row].zero_()
        self.generated[row, 0] = first
        self.count[row] = 1
        self.limit[row] = limit
        self.done[row] = first in self.stop_set or limit == 1

    @torch.inference_mode()
    def decode(self, prompts: Sequence[Sequence[int]], limits: Sequence[int] | None = None) -> list[list[int]]:
        """New token ids of every prompt (in prompt order), up to and including a stop token, at most
        `max_new_tokens` or the prompt's own limit."""
        limits = list(limits) if limits is not None else [self.max_new_tokens] * len(prompts)
        if len(limits) != len(prompts) or not all(1 <= n <= self.max_new_tokens for n in limits):
            raise ValueError(f"limits: one per prompt, each in 1..{self.max_new_tokens}")
        longest = max((len(p) for p in prompts), default=0)
        if longest + self.max_new_tokens > self.cache_len:
            raise ValueError(f"a prompt of {longest} tokens does not fit the decoder's {self.cache_len} positions")
        if min((len(p) for p in prompts), default=1) == 0:
            raise ValueError("empty prompt")
        waiting = deque(range(len(prompts)))
        owner: list[int | None] = [None] * self.batch_size
        results: list[list[int] | None] = [None] * len(prompts)
        self.done.fill_(True)
        while True:
            finished = self.done.tolist()
            counts = self.count.tolist()
            for row, item in enumerate(owner):
                if item is not None and finished[row]:
                    results[item] = self.generated[row, : counts[row]].tolist()
                    owner[row] = None
                if owner[row] is None and waiting:
                    owner[row] = waiting.popleft()
                    self._insert(row, prompts[owner[row]], limits[owner[row]])
            if all(item is None for item in owner):
                return results  # type: ignore[return-value]
            if bool(self.done.all()):  # every new prompt ended at its first token
                continue
            for _ in range(self.check_every):
                self.advance()
