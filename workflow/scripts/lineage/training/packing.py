"""Which models may train on packed rows, and the row-boundary inputs each one needs to keep them apart.

A packed sequence holds several rows; every token mixer must see where one row ends:
- attention sees it through position_ids restarting per row (SDPA / FlexAttention masks) or
  `cu_seq_lens` (the varlen kernel), which the collator gives for every pack;
- a Mamba-2 mixer carries state along the sequence in its causal convolution and in the SSD scan.
  mamba-ssm's fused kernel takes `seq_idx` (each token's row number) and stops both at a row's
  end; transformers hands it through unchanged. Its PyTorch fallback has no such input, so without
  the kernels packing is refused and padded training (which needs no boundaries) is the way.
Each model family says which inputs its layers read and which kernels they need (lineage/families/).
"""

from __future__ import annotations

import torch

from lineage import families
from lineage.training.varlen_attention import grid_length


class PackingError(ValueError):
    """This model cannot keep packed rows apart here; the message says what to install or drop."""


def boundary_inputs(
    model_type: str,
    device: torch.device,
    *,
    what: str = "--packing",
    otherwise: str = "drop --packing: padded training works everywhere",
) -> tuple[str, ...]:
    """The packed micro-batch's inputs that this model's forward takes besides input_ids.

    `what` names the packed use in a refusal and `otherwise` what the caller can do instead.
    """
    family = families.of_model_type(model_type)
    if family is None:
        known = ", ".join(sorted(families.model_types()))
        raise PackingError(
            f"{what} is not supported for {model_type!r} models (only {known}): nothing keeps "
            f"packed rows apart in their layers; {otherwise}"
        )
    packing = family.packing
    if not packing.kernels:
        return packing.inputs
    missing = family.missing_kernels()
    if missing or device.type != "cuda":
        why = f"{' and '.join(missing)} not installed" if missing else f"their kernels need CUDA, not {device.type}"
        raise PackingError(
            f"{what} of {model_type!r} models needs {packing.needs} ({why}): {packing.install}, or {otherwise}"
        )
    return packing.inputs


def seq_idx_from_cu_seq_lens(cu_seq_lens: torch.Tensor, length: int) -> torch.Tensor:
    """Each token's row number, shape (1, length), int32, from the cumulative row lengths of one pack."""
    counts = (cu_seq_lens[1:] - cu_seq_lens[:-1]).long()
    if int(cu_seq_lens[0]) != 0 or int(cu_seq_lens[-1]) != length or bool((counts <= 0).any()):
        raise ValueError(f"cu_seq_lens {cu_seq_lens.tolist()} does not split {length} tokens into rows")
    rows = torch.arange(counts.numel(), dtype=torch.int32, device=cu_seq_lens.device)
    return rows.repeat_interleave(counts).unsqueeze(0)


def backbone_inputs(batch: dict, boundaries: tuple[str, ...], varlen: bool) -> dict:
    """The backbone's keyword arguments for one collated batch: padded, or packed (lineage.training.data).

    The one place where packed rows are handed to the model, for SFT, DPO and scoring alike:
    `boundaries` (from boundary_inputs; empty for padded rows) name what the model's own layers
    read (position_ids, the Mamba-2 `seq_idx`), and `varlen` adds the row boundaries and the
    longest row that the variable-length attention kernel takes (lineage.training.varlen_attention).
    No KV cache: with one, packed rows would see each other.
    """
    inputs = {"input_ids": batch["input_ids"], "use_cache": False} | {key: batch[key] for key in boundaries}
    if varlen:
        longest = grid_length(batch["longest"])
        inputs |= dict(
            cu_seq_lens_q=batch["cu_seq_lens"],
            cu_seq_lens_k=batch["cu_seq_lens"],
            max_length_q=longest,
            max_length_k=longest,
        )
    return inputs
