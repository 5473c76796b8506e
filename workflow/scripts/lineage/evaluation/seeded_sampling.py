"""Sampling whose draws belong to the prompt: the same answers whatever batch or rank a prompt lands in.

A sampler that draws from the device's generator gives a prompt's answers from wherever that
generator stands when the prompt's batch runs, so they change with the batch size, the batch's
order and the number of ranks. Here each token is drawn by the Gumbel-max rule: the argmax of
(temperature-scaled, top-p filtered) logits plus Gumbel noise, which samples exactly from their
softmax. The noise is a hash of (seed, prompt, sample, position, token id), counter-based like
Philox, computed on the device in int64: a prompt's k-th answer depends on the seed and on the
prompt alone (up to the float rounding of its logits in another batch).
"""

from __future__ import annotations

import torch

_GOLDEN = 0x9E3779B97F4A7C15 - (1 << 64)  # splitmix64's constants as signed int64
_MIX1 = 0xBF58476D1CE4E5B9 - (1 << 64)
_MIX2 = 0x94D049BB133111EB - (1 << 64)


def _shift_right(x: torch.Tensor, bits: int) -> torch.Tensor:
    """Logical right shift of int64 (torch shifts arithmetically)."""
    return (x >> bits) & ((1 << (64 - bits)) - 1)


def _mix(x: torch.Tensor) -> torch.Tensor:
    """splitmix64's finalizer: every input bit moves every output bit (int64 products wrap)."""
    x = (x ^ _shift_right(x, 30)) * _MIX1
    x = (x ^ _shift_right(x, 27)) * _MIX2
    return x ^ _shift_right(x, 31)


def uniform(seed: int, keys: torch.Tensor, step: int | torch.Tensor, vocab: int) -> torch.Tensor:
    """(rows, vocab) float64 in (0, 1), a function of (seed, each row's key, step, token id) only.
    `step` may be a device tensor (a decoder's step counter, read inside a captured graph)."""
    step = torch.as_tensor(step, dtype=torch.int64, device=keys.device)
    row = _mix(keys.to(torch.int64) * _GOLDEN + _mix(step + seed * 1_000_003))
    tokens = torch.arange(vocab, dtype=torch.int64, device=keys.device)
    bits = _mix(row[:, None] + (tokens[None, :] + 1) * _GOLDEN)
    return (_shift_right(bits, 11).double() + 0.5) / float(1 << 53)


def gumbel(seed: int, keys: torch.Tensor, step: int | torch.Tensor, vocab: int) -> torch.Tensor:
    return -torch.log(-torch.log(uniform(seed, keys, step, vocab)))


def sampling_warpers(temperature: float, top_p: float) -> list:
    """transformers' temperature and top-p warpers, in generate's order."""
    from transformers import TemperatureLogitsWarper, TopPLogitsWarper

    return [TemperatureLogitsWarper(temperature)] + ([TopPLogitsWarper(top_p)] if top_p < 1 else [])


class SeededSampler:
    """A picker (lineage/evaluation/pickers.py) that draws `samples` answers per prompt: temperature and
    top-p by transformers' own warpers, then each row's Gumbel noise (`noised`, the one place both kinds
    of decoder draw through). Row keys are prompt index x samples + sample index. Batches keep the
    prompt order the verifier rounds have always sampled in (another order would regroup the prompts
    and move their logits by float rounding)."""

    greedy = False
    longest_first = False

    def __init__(self, seed: int, temperature: float, top_p: float, samples: int = 1):
        if samples < 1 or temperature <= 0 or not 0 < top_p <= 1:
            raise ValueError(f"samples={samples}, temperature={temperature}, top_p={top_p}: need >= 1, > 0, (0, 1]")
        self.seed, self.samples = seed, samples
        self.warpers = sampling_warpers(temperature, top_p)
        self.keys: torch.Tensor | None = None

    def noised(self, logits: torch.Tensor, keys: torch.Tensor, step: int | torch.Tensor) -> torch.Tensor:
        """The warped logits plus each row's noise for `step`: their argmax is the draw."""
        for warper in self.warpers:
            logits = warper(None, logits)
        return logits + gumbel(self.seed, keys, step, logits.shape[-1]).to(logits.dtype)

    def processors(self, keys: torch.Tensor, prompt_width: int) -> list:
        return [_GenerateNoise(self, keys, prompt_width)]

    def bind(self, rows: int, device: torch.device) -> None:
        self.keys = torch.zeros((rows,), dtype=torch.int64, device=device)

    def set_keys(self, keys: torch.Tensor) -> None:
        """Row r draws as key keys[r]; rows past len(keys) (a batch's filler) repeat the last key."""
        assert self.keys is not None, "bind() first"
        self.keys[: len(keys)] = keys.to(self.keys.device)
        self.keys[len(keys) :] = keys[-1]

    def __call__(self, logits: torch.Tensor, step: int | torch.Tensor) -> torch.Tensor:
        assert self.keys is not None, "bind() first"
        return self.noised(logits, self.keys, step)


class _GenerateNoise:
    """The sampler as one transformers logits processor: the step is the count of tokens generated so far
    (`input_ids` beyond the padded prompt width)."""

    def __init__(self, sampler: SeededSampler, keys: torch.Tensor, prompt_width: int):
        self.sampler, self.keys, self.prompt_width = sampler, keys, prompt_width

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        return self.sampler.noised(scores, self.keys.to(scores.device), input_ids.shape[1] - self.prompt_width)
