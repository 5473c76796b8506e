"""Greedy decoding with a static KV cache and one decode step replayed as a CUDA graph.

Why: at evaluation batch sizes a decode step of a 1B model is launch-bound (16.5 ms per step
at batch 32 where its weights take ~1 ms to read, benchmarks/RESULTS.md): Python walks every
layer and the GPU waits for each launch. transformers' own answer (a static cache plus
torch.compile) spends 30-60 s compiling each set of shapes, more than a 200-prompt run saves.
Capturing the model's eager decode step once as a CUDA graph removes the launches without a
compiler: the same kernels run, so the logits are the eager ones, and capture costs one step.

One `GraphDecoder` serves every batch of a call: its cache holds `batch_size` rows of
`cache_len` positions and one graph is captured on the first batch and replayed for all.
Each batch is prefilled by the model's own forward (left-padded, 2D attention mask, the
positions generate() would give), then every decode step is the captured one:
  mask the keys that are padding or not yet written -> forward one token per row ->
  argmax -> feed it back, advance the positions, record it.
With a `SeededSampler` the argmax is taken over the temperature/top-p logits plus each row's
Gumbel noise (lineage/evaluation/seeded_sampling.py): the verifier rounds' sampling, captured too.
Everything a step changes lives in fixed tensors updated in place, so the graph needs no
inputs; the host looks at the stop flags only every `check_every` steps.

Rows are independent (each attends to its own cache rows), so a row's tokens do not depend on
its neighbours; a finished row keeps decoding until the batch stops and its tail is cut, as
generate() does. Without CUDA the same loop runs eagerly (how CPU tests check it).
"""

from __future__ import annotations

import contextlib
import sys
import traceback
from collections.abc import Iterator, Sequence

import torch

from lineage import families

MASK_IMPLEMENTATIONS = {"sdpa", "eager"}


def _attention_implementation(config) -> str:
    return getattr(config, "_attn_implementation", None) or "eager"


def unsupported_reason(model) -> str | None:
    """Why this model cannot decode through `GraphDecoder`, or None when it can."""
    implementation = _attention_implementation(model.config)
    if implementation not in MASK_IMPLEMENTATIONS:
        return f"attention implementation {implementation!r} takes no 4D mask (use sdpa or eager)"
    kinds = set(_layer_types(model.config))
    unknown = kinds - set(families.layer_caches())  # a layer type no family knows
    if unknown:
        return f"layer types {sorted(unknown)} need masks of their own (sliding or chunked attention)"
    return None


def _layer_types(config) -> list[str]:
    text = config.get_text_config(decoder=True) if hasattr(config, "get_text_config") else config
    return list(getattr(text, "layer_types", None) or ["full_attention"])


def layer_masks(visible: torch.Tensor, kinds: list[str], additive: torch.dtype | None):
    """The decode step's attention masks from (rows x cache positions) visibility: a 4D boolean mask, or
    additive in dtype `additive` (eager attention adds it to its scores), by layer type where types mix."""
    if additive is not None:
        visible = torch.zeros(visible.shape, dtype=additive, device=visible.device).masked_fill_(
            ~visible, torch.finfo(additive).min
        )
    mask = visible[:, None, None, :]
    if kinds == ["full_attention"]:
        return mask
    caches = families.layer_caches()  # the types that keep keys read them through the mask; the others need none
    return {kind: (mask if caches[kind] == "keys" else None) for kind in kinds}


@contextlib.contextmanager
def capturable_experts(model) -> Iterator[None]:
    """Routed experts that a CUDA graph can capture, for the duration of a decode step.

    torch's grouped_mm takes bf16 on CUDA; at other dtypes it reads the group sizes on the host,
    which a capture refuses (float32 decoding then ran eagerly). transformers' batched_mm has no
    host read: each token's experts are gathered and multiplied as a batch, which costs memory in
    proportion to the tokens, and a decode step has one token per row. bf16 keeps grouped_mm."""
    from lineage.modeling import routed_experts

    current = getattr(model.config, "_experts_implementation", None)
    device = next(model.parameters()).device
    dtype = next(model.parameters()).dtype
    if device.type != "cuda" or dtype == torch.bfloat16 or not routed_experts(model.config) or current != "grouped_mm":
        yield
        return
    model.set_experts_implementation("batched_mm")
    try:
        yield
    finally:
        model.set_experts_implementation(current)


class StepReplay:
    """Runs a step: eagerly without CUDA; on a GPU the first call warms the kernels (and autotuners)
    up with an eager step and captures the graph, every later call replays it. A step that cannot be
    captured (a host read, a CPU tensor) runs eagerly from then on, and says where it failed."""

    def __init__(self, step, device: torch.device):
        self.step = step
        self.capture = device.type == "cuda"
        self.graph: torch.cuda.CUDAGraph | None = None

    def __call__(self) -> None:
        if not self.capture:
            self.step()
            return
        if self.graph is None:
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                self.step()
            torch.cuda.current_stream().wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            try:
                with torch.cuda.graph(graph):  # records a step without running it: the state stays as it was
                    self.step()
            except RuntimeError as err:  # a host read or a CPU tensor inside the model's step
                self.capture = False
                frames = traceback.extract_tb(err.__traceback__)
                frame = next((f for f in reversed(frames) if "/torch/" not in f.filename), frames[-1])
                print(
                    f"graph decoding: capture failed at {frame.filename}:{frame.lineno} ({frame.name}): "
                    f"{str(err).splitlines()[0]}; decoding eagerly on the static cache instead",
                    file=sys.stderr,
                    flush=True,
                )
                return
            self.graph = graph
            return
        self.graph.replay()


class StaticDecoder:
    """What the decoders share: a static cache of `batch_size` x `cache_len` positions, the fixed tensors
    a decode step reads and writes in place, and the step's replay (`advance`). Subclasses write `_step`."""

    what = "graph decoding"

    def __init__(
        self,
        model,
        *,
        batch_size: int,
        cache_len: int,
        max_new_tokens: int,
        stop_ids: Sequence[int],
        check_every: int,
        sampler=None,
    ):
        from transformers import StaticCache

        reason = unsupported_reason(model)
        if reason:
            raise ValueError(f"{self.what}: {reason}; set eval.cache to dynamic or static")
        self.model = model
        self.device = next(model.parameters()).device
        self.dtype = next(model.parameters()).dtype
        self.batch_size, self.cache_len, self.max_new_tokens = batch_size, cache_len, max_new_tokens
        self.check_every = check_every
        self.cache = StaticCache(config=model.config, max_cache_len=cache_len)
        self.mask_kinds = sorted(set(_layer_types(model.config)))
        self.additive = _attention_implementation(model.config) == "eager"  # eager adds the mask to its scores
        on = {"device": self.device}
        self.stops = torch.tensor(list(stop_ids), dtype=torch.long, **on)
        self.key_index = torch.arange(cache_len, **on)
        self.tokens = torch.zeros((batch_size, 1), dtype=torch.long, **on)
        self.positions = torch.zeros((batch_size, 1), dtype=torch.long, **on)
        self.key_ok = torch.zeros((batch_size, cache_len), dtype=torch.bool, **on)  # cache positions a row sees
        self.limit = torch.full((batch_size,), max_new_tokens, dtype=torch.long, **on)  # tokens a row may have
        self.sampler = sampler  # a picker (lineage/evaluation/pickers.py); None: greedy
        if sampler is not None:
            sampler.bind(batch_size, self.device)
        self.advance = StepReplay(self._captured_step, self.device)

    def masks(self, visible: torch.Tensor):
        return layer_masks(visible, self.mask_kinds, self.dtype if self.additive else None)

    def _captured_step(self) -> None:
        with capturable_experts(self.model):
            self._step()

    def _step(self) -> None:
        raise NotImplementedError

    def _choose(self, logits: torch.Tensor, step: int | torch.Tensor) -> torch.Tensor:
        """The next token per row from the last position's logits: argmax, or the sampler's draw for `step`."""
        logits = logits.float()
        if self.sampler is not None:
            logits = self.sampler(logits, step)
        return logits.argmax(-1)

    def _next_tokens(self, visible: torch.Tensor, step: torch.Tensor | None = None) -> torch.Tensor:
        """Forward one token per row over the cache positions `visible`; feed the choice back (capturable)."""
        out = self.model(
            input_ids=self.tokens,
            position_ids=self.positions,
            attention_mask=self.masks(visible),
            past_key_values=self.cache,
            use_cache=True,
            logits_to_keep=1,
        )
        chosen = self._choose(out.logits[:, -1], step)
        self.tokens.copy_(chosen[:, None])
        self.positions.add_(1)
        return chosen


class GraphDecoder(StaticDecoder):
    """Sorted, left-padded batches decoded one after another, each until its last row ends."""

    def __init__(self, model, *, check_every: int = 16, **shape):
        """shape: batch_size, cache_len, max_new_tokens, stop_ids (as StaticDecoder takes them)."""
        super().__init__(model, check_every=check_every, **shape)
        batch_size, max_new_tokens = self.batch_size, self.max_new_tokens
        on = {"device": self.device}
        self.write_at = torch.zeros((), dtype=torch.long, **on)  # the cache slot this step's token fills
        self.generated = torch.zeros((batch_size, max_new_tokens), dtype=torch.long, **on)
        self.column = torch.zeros((), dtype=torch.long, **on)  # where in `generated` this step writes
        self.done = torch.zeros((batch_size,), dtype=torch.bool, **on)

    def _step(self) -> None:
        """One decode step, written so that it can be captured: no host reads, no new shapes."""
        chosen = self._next_tokens(self.key_ok & (self.key_index <= self.write_at), self.column)
        self.write_at.add_(1)
        self.generated.index_copy_(1, self.column.reshape(1), chosen[:, None])
        self.column.add_(1)
        self.done.logical_or_(torch.isin(chosen, self.stops) | (self.column >= self.limit))

    def _prefill(self, ids: torch.Tensor, mask: torch.Tensor) -> None:
        """The model's own forward over the left-padded prompts; leaves the first new token in place."""
        self.cache.reset()
        width = ids.shape[1]
        positions = (mask.cumsum(-1) - 1).masked_fill(mask == 0, 0)
        out = self.model(
            input_ids=ids,
            attention_mask=mask,
            position_ids=positions,
            past_key_values=self.cache,
            use_cache=True,
            logits_to_keep=1,
        )
        chosen = self._choose(out.logits[:, -1], 0)
        self.tokens.copy_(chosen[:, None])
        self.positions.copy_(positions[:, -1:] + 1)
        self.write_at.fill_(width)
        self.key_ok.fill_(True)
        self.key_ok[:, :width] = mask.bool()
        self.generated.zero_()
        self.generated[:, 0] = chosen
        self.column.fill_(1)
        self.done.copy_(torch.isin(chosen, self.stops) | (self.limit <= 1))

    @torch.inference_mode()
    def decode(
        self,
        ids: torch.Tensor,
        mask: torch.Tensor,
        limits: Sequence[int] | None = None,
        keys: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """New token ids (rows x steps, cut at the last step run) for one left-padded batch; a row with
        a limit counts as finished after that many tokens (the caller cuts its tail). `keys`: each
        row's draw key, with a sampler."""
        rows, width = ids.shape
        if rows > self.batch_size or width + self.max_new_tokens > self.cache_len:
            raise ValueError(
                f"batch {rows} x {width} does not fit the decoder's {self.batch_size} x "
                f"{self.cache_len - self.max_new_tokens} prompt positions"
            )
        if rows < self.batch_size:  # fill the fixed batch with copies of the last row, dropped below
            fill = self.batch_size - rows
            ids = torch.cat([ids, ids[-1:].expand(fill, -1)])
            mask = torch.cat([mask, mask[-1:].expand(fill, -1)])
        self.limit.fill_(self.max_new_tokens)
        if limits is not None:
            self.limit[:rows] = torch.tensor(list(limits), dtype=torch.long)
        if self.sampler is not None:
            if keys is None or len(keys) != rows:
                raise ValueError("a sampling decoder needs one key per row")
            self.sampler.set_keys(keys)
        self._prefill(ids.to(self.device), mask.to(self.device))
        steps = 1
        while steps < self.max_new_tokens:
            self.advance()
            steps += 1
            if steps % self.check_every == 0 and bool(self.done[:rows].all()):
                break
        return self.generated[:rows, :steps].cpu()
