"""How a decoder picks each next token: greedily, or by a seeded draw (lineage/evaluation/seeded_sampling.py).

Why one interface: every decoder takes the argmax of what its picker returns, so the greedy picker is
the one that changes nothing and a sampler is the same loop with noise added. A picker serves both kinds
of decoder: transformers' generate through `processors` (logits processors run before its argmax), and
the static-cache decoders by a call on the step's float32 logits, with each row's key in a fixed device
tensor (`bind`, then `set_keys` per batch) that a captured CUDA graph reads.
"""

from __future__ import annotations

from typing import Protocol

import torch


class Picker(Protocol):
    greedy: bool  # draws nothing: every answer of a prompt is the same one
    samples: int  # answers per prompt: consecutive rows of a batch
    longest_first: bool  # batches planned from the longest prompt down (else in prompt order)

    def processors(self, keys: torch.Tensor, prompt_width: int) -> list:
        """transformers logits processors that make generate's argmax this picker's choice; `keys[r]` names
        row r's draw, `prompt_width` is the batch's padded prompt length."""
        ...

    def bind(self, rows: int, device: torch.device) -> None: ...

    def set_keys(self, keys: torch.Tensor) -> None: ...

    def __call__(self, logits: torch.Tensor, step: int | torch.Tensor) -> torch.Tensor:
        """The float32 `logits` of the last position whose argmax is the pick at `step` (tokens so far)."""
        ...


class Greedy:
    """The most likely token, always. Batches go longest prompt first: a batch's prompts have similar
    lengths, so it wastes little padding."""

    greedy = True
    samples = 1
    longest_first = True

    def processors(self, keys: torch.Tensor, prompt_width: int) -> list:
        return []

    def bind(self, rows: int, device: torch.device) -> None:
        pass

    def set_keys(self, keys: torch.Tensor) -> None:
        pass

    def __call__(self, logits: torch.Tensor, step: int | torch.Tensor) -> torch.Tensor:
        return logits


GREEDY = Greedy()
