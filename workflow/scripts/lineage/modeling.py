"""Model shapes built from a config (no download), and the parameter counts that MFU needs.

The shapes and config classes are the families' (lineage/families/: Nemotron-H, the card's hybrid of
Mamba-2, attention and MoE layers; Llama, the dense model used to measure GPU throughput; Qwen3-MoE,
attention-only experts for machines without the Mamba kernels), gathered here by (family, size).
Vocabulary and special-token ids always come from the tokenizer the model is built for.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass

import torch
from transformers import PreTrainedConfig

from lineage import families

SHAPES: dict[tuple[str, str], dict] = {
    (family.name, size): shape for family in families.every() for size, shape in family.shapes.items()
}
CONFIG_CLASSES = {family.name: family.config_class for family in families.every()}


class ModelShapeError(ValueError):
    """A model that cannot be built as asked (an unknown shape, fewer embedding rows than token ids)."""


def build_config(family: str, size: str, tokenizer, vocab_size: int | None = None) -> PreTrainedConfig:
    """The config of a named shape, with the tokenizer's vocabulary (or `vocab_size` rows: the tokenizer's ids
    first, the rest never produced by it, as a real model pads its vocabulary) and special-token ids."""
    if (family, size) not in SHAPES:
        known = ", ".join(f"{f}/{s}" for f, s in SHAPES)
        raise ModelShapeError(f"no model shape {family}/{size}; known shapes: {known}")
    if vocab_size is not None and hasattr(tokenizer, "__len__") and vocab_size < len(tokenizer):
        raise ModelShapeError(
            f"vocab_size {vocab_size:,} is below the tokenizer's {len(tokenizer):,} ids: give at least that many rows"
        )
    return CONFIG_CLASSES[family](
        **SHAPES[(family, size)],
        vocab_size=vocab_size or len(tokenizer),
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        use_cache=True,
    )


class KernelShapeError(ValueError):
    """A model shape the installed GPU kernels cannot run; the message says which sizes to change."""


def prepare_kernels(config, device) -> None:
    """Ready the family's GPU kernels for a model about to run on `device`: on a GPU, refuse a shape they cannot
    run (its family says which sizes to change); on the CPU, keep its tensors off them."""
    family = families.of_model_type(getattr(config, "model_type", None))
    if family is None:
        return
    problem = family.kernel_misfit(config, device)
    if problem:
        raise KernelShapeError(problem)
    if torch.device(device).type == "cpu":
        family.kernels_off_cpu()


@dataclass(frozen=True)
class ParamCounts:
    """Parameters of a model, split the way FLOP counts need them (tied matrices counted once).

    total: every parameter once. active: those one token uses (routed experts top-k of n).
    embedding: the input embedding when it is not also the LM head (a lookup, no matmul).
    head: the LM head matrix (with tied embeddings, the shared matrix).
    attention_width: the query width (heads x head dim) summed over the attention layers.
    """

    total: int
    active: int
    embedding: int
    head: int
    attention_width: int = 0

    @property
    def body(self) -> int:
        """Active parameters in matmuls per input token: everything but the embedding lookup and the head."""
        return self.active - self.embedding - self.head

    def step_flops(self, tokens: int, head_tokens: int, attention_pairs: int = 0) -> float:
        """Training FLOPs of `tokens` input tokens whose logits are needed at `head_tokens` positions.

        6 per parameter and token (forward + backward), and for the attention scores 12 per query
        width and causal (query, key) pair of a row, the pairs each row attends within itself
        (causal_pairs): QK^T and the weighted sum of V, 2 FLOPs a multiply-add each, backward twice
        the forward. A kernel's recomputation and masked tiles are not model FLOPs; the Mamba
        scan is not counted either.
        """
        return 6.0 * (self.body * tokens + self.head * head_tokens) + 12.0 * self.attention_width * attention_pairs


def causal_pairs(lengths) -> int:
    """(query, key) pairs that causal attention computes over rows of these lengths, each row alone."""
    return sum(n * (n + 1) // 2 for n in lengths)


def routed_experts(config) -> int | None:
    """Routed experts per MoE layer (each family names its key); None for dense models."""
    return next((getattr(config, key) for key in families.expert_count_keys() if getattr(config, key, None)), None)


def count_params(model: torch.nn.Module) -> ParamCounts:
    """Counts for MFU. Routed experts count top-k of n toward the active share; attention layers are
    the modules named "...Attention" with a q_proj (transformers' Llama, Nemotron-H and most others).

    Experts are the 3-D parameters of the families' routed-expert modules (families.expert_modules: the
    fused layout of transformers 5). A parameter registered under two names counts once.
    """
    config = getattr(model, "config", None)
    routed = routed_experts(config)
    top_k = getattr(config, "num_experts_per_tok", None)
    experts = {id(module) for module in families.expert_modules(model)} if routed and top_k else set()
    seen: set[int] = set()
    total = active = 0
    for module in model.modules():
        is_experts = id(module) in experts
        for param in module.parameters(recurse=False):
            if id(param) in seen:
                continue
            seen.add(id(param))
            n = param.numel()
            total += n
            active += n * top_k // routed if is_experts and param.dim() == 3 else n
    head_module, embedding_module = model.get_output_embeddings(), model.get_input_embeddings()
    head = head_module.weight.numel() if head_module is not None else 0
    tied = head_module is not None and (
        head_module.weight is embedding_module.weight or bool(getattr(config, "tie_word_embeddings", False))
    )
    embedding = 0 if tied else embedding_module.weight.numel()
    attention_width = sum(
        module.q_proj.out_features
        for module in model.modules()
        if type(module).__name__.endswith("Attention") and hasattr(module, "q_proj")
    )
    return ParamCounts(total=total, active=active, embedding=embedding, head=head, attention_width=attention_width)


def state_fingerprint(state_dict: Mapping[str, torch.Tensor]) -> str:
    """sha256 over names, dtypes, shapes and bytes of every tensor, in name order."""
    digest = hashlib.sha256()
    for name in sorted(state_dict):
        tensor = state_dict[name].detach().contiguous().cpu()
        digest.update(f"{name}|{tensor.dtype}|{tuple(tensor.shape)}|".encode())
        digest.update(tensor.view(torch.uint8).numpy().tobytes() if tensor.numel() else b"")
    return digest.hexdigest()
