"""Model shapes built from a config (no download), and the parameter counts that MFU needs.

The embedded scale uses a tiny model of the card's family: Nemotron-H, a hybrid of Mamba-2
mixers, attention and mixture-of-experts layers. The 1B Llama shape (hidden 2048, 16 layers,
32 heads / 8 kv heads, intermediate 8192, tied embeddings) is the dense model used to measure
GPU throughput. The reduced-depth MoE shapes keep the card's widths and expert shape with a few
layers, so MoE throughput can be measured on 2 GPUs: Nemotron-H itself, and an attention-only
Qwen3-MoE for machines without the Mamba kernels. Vocabulary and special-token ids always come
from the tokenizer the model is built for.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass

import torch
from transformers import LlamaConfig, NemotronHConfig, PreTrainedConfig, Qwen3MoeConfig

# layers_block_type names in transformers 5: linear_attention = Mamba-2 mixer, full_attention,
# moe (routed + shared experts), mlp.
_CARD_LAYERS = {"M": "linear_attention", "E": "moe", "*": "full_attention"}
# The card Base's 52 layers (23 Mamba-2, 23 MoE, 6 attention), by the letters above
_CARD_PATTERN = "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME"
# The card Base's widths, heads and experts (see 30b_a3b below), shared by its reduced-depth variants.
_CARD_WIDTHS = dict(
    hidden_size=2688,
    num_attention_heads=32,
    num_key_value_heads=2,
    head_dim=128,
    intermediate_size=1856,
    num_experts_per_tok=6,
    moe_intermediate_size=1856,
    max_position_embeddings=4096,
    tie_word_embeddings=False,
)
_CARD_MAMBA = dict(
    mamba_num_heads=64,
    mamba_head_dim=64,
    n_groups=8,
    ssm_state_size=128,
    conv_kernel=4,
    chunk_size=128,
    n_routed_experts=128,
    moe_shared_expert_intermediate_size=3712,
)
SHAPES: dict[tuple[str, str], dict] = {
    ("nemotron_h", "tiny"): dict(
        hidden_size=64,
        layers_block_type=["linear_attention", "moe", "full_attention", "moe"],
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=16,
        intermediate_size=128,
        # 8 heads: the Mamba-2 input projection is then 296 wide and the convolution 160 channels, multiples
        # of 8 as the CUDA kernels need (mamba_kernel_misfit); 4 heads made them 164 and 96
        mamba_num_heads=8,
        mamba_head_dim=16,
        n_groups=1,
        ssm_state_size=16,
        conv_kernel=4,
        chunk_size=64,
        n_routed_experts=4,
        num_experts_per_tok=2,
        moe_intermediate_size=64,
        moe_shared_expert_intermediate_size=64,
        max_position_embeddings=4096,
        tie_word_embeddings=False,
    ),
    # The card's 52-layer pattern (23 Mamba-2, 23 MoE, 6 attention) at widths that train in seconds on one GPU:
    # the `gpu` scale's Base (386M parameters, 229M active per token at the 131,072-row vocabulary; its Mamba-2
    # projection 2,576 wide and convolution 1,536 channels, multiples of 8 as the CUDA kernels need).
    ("nemotron_h", "card_pattern_small"): dict(
        layers_block_type=[_CARD_LAYERS[c] for c in _CARD_PATTERN],
        hidden_size=512,
        num_attention_heads=8,
        num_key_value_heads=2,
        head_dim=64,
        intermediate_size=1024,
        mamba_num_heads=16,
        mamba_head_dim=64,
        n_groups=4,
        ssm_state_size=64,
        conv_kernel=4,
        chunk_size=128,
        n_routed_experts=32,
        num_experts_per_tok=6,
        moe_intermediate_size=256,
        moe_shared_expert_intermediate_size=512,
        max_position_embeddings=4096,
        tie_word_embeddings=False,
    ),
    # The card's Base shape, for planning only (built on the meta device, never trained here):
    # assumed from the public Nemotron-3 Nano 30B-A3B config, as the card names the Base but not its
    # sizes: 52 layers (23 Mamba-2, 23 MoE, 6 attention), 128 routed experts, top-6.
    ("nemotron_h", "30b_a3b"): dict(
        layers_block_type=[_CARD_LAYERS[c] for c in _CARD_PATTERN],
        **_CARD_WIDTHS,
        **_CARD_MAMBA,
    ),
    # The card's first seven layers (3 Mamba-2, 3 MoE, 1 attention; 4.0B parameters at a 2k vocabulary):
    # the Base's layer types and expert shape at a depth that trains on 2 GPUs with fp32 master weights.
    ("nemotron_h", "30b_a3b_reduced"): dict(
        layers_block_type=[_CARD_LAYERS[c] for c in "MEMEM*E"],
        **_CARD_WIDTHS,
        **_CARD_MAMBA,
    ),
    # One rank of the card's node at expert_parallel 8: the Base's 52 layers with the 16 routed experts a rank
    # holds of each MoE layer's 128 (still top-6: an expert then gets the rows the 8 ranks route to it), for
    # measuring a full-scale rank's step on one GPU: its expert GEMM shapes, its expert weights per layer
    # (what FSDP copies each micro-batch) and the activations of all 52 layers. Its dense part is whole here
    # (a rank holds 1/8 of it), so its optimizer state is 5.9B parameters' against 3.95B.
    ("nemotron_h", "30b_a3b_rank8"): dict(
        layers_block_type=[_CARD_LAYERS[c] for c in _CARD_PATTERN],
        **_CARD_WIDTHS,
        **(_CARD_MAMBA | {"n_routed_experts": 16}),
    ),
    ("llama", "tiny"): dict(
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        intermediate_size=256,
        max_position_embeddings=4096,
        tie_word_embeddings=True,
    ),
    # The ~100M dense shape of benchmarks/eval.py (124.7M there with its 32,000 vocabulary), for
    # benchmarks that need a real checkpoint directory (benchmarks/eval_vs_lm_eval.py).
    ("llama", "100m"): dict(
        hidden_size=768,
        num_hidden_layers=12,
        num_attention_heads=12,
        num_key_value_heads=4,
        intermediate_size=2048,
        max_position_embeddings=4096,
        tie_word_embeddings=True,
    ),
    ("llama", "1b"): dict(
        hidden_size=2048,
        num_hidden_layers=16,
        num_attention_heads=32,
        num_key_value_heads=8,
        intermediate_size=8192,
        max_position_embeddings=4096,
        rope_parameters={"rope_theta": 500000.0, "rope_type": "default"},
        tie_word_embeddings=True,
    ),
    # Attention-only MoE with the card's attention and routed experts (128 of 1856 wide, top-6; no shared
    # expert), for measuring MoE training where the Mamba kernels are missing. Its experts are gated
    # (SwiGLU: 3 matrices, Nemotron-H's have 2), so a layer holds 1.9B parameters; 4 layers (7.8B) is
    # what fits 2 GPUs of 139 GiB at 16 bytes per parameter with room for activations.
    ("qwen3_moe", "card_experts_4l"): dict(
        num_hidden_layers=4,
        num_experts=128,
        norm_topk_prob=True,
        **_CARD_WIDTHS,
    ),
    ("qwen3_moe", "tiny"): dict(
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=16,
        intermediate_size=128,
        num_experts=8,
        num_experts_per_tok=2,
        moe_intermediate_size=32,
        norm_topk_prob=True,
        max_position_embeddings=4096,
        tie_word_embeddings=False,
    ),
}
CONFIG_CLASSES = {"nemotron_h": NemotronHConfig, "llama": LlamaConfig, "qwen3_moe": Qwen3MoeConfig}


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


def check_kernel_shape(config, device) -> None:
    """On a GPU with causal-conv1d installed (transformers then takes its path), refuse a shape it cannot run."""
    import importlib.util

    if str(device).startswith("cuda") and importlib.util.find_spec("causal_conv1d") is not None:
        problem = mamba_kernel_misfit(config)
        if problem:
            raise KernelShapeError(problem)


def mamba_kernel_misfit(config) -> str | None:
    """Why the Mamba-2 CUDA kernels cannot run this shape, or None.

    causal-conv1d reads the convolution's input as a channel-last view of the input projection's
    output and needs its strides (the projection's width) to be multiples of 8; mamba-ssm's fused
    scan needs the convolution's channels to be a multiple of 8.
    """
    if getattr(config, "model_type", None) != "nemotron_h":
        return None
    inner = config.mamba_num_heads * config.mamba_head_dim
    channels = inner + 2 * config.n_groups * config.ssm_state_size
    width = inner + channels + config.mamba_num_heads
    if width % 8 == 0 and channels % 8 == 0:
        return None
    return (
        f"the Mamba-2 input projection is {width} wide and its convolution has {channels} channels "
        f"({config.mamba_num_heads} heads of {config.mamba_head_dim}, {config.n_groups} group(s) of state "
        f"{config.ssm_state_size}); the CUDA kernels (causal-conv1d, mamba-ssm) need multiples of 8. Choose "
        "the Mamba sizes to fit (heads a multiple of 8 does it), or uninstall causal-conv1d to run the reference path"
    )


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
    """Routed experts per MoE layer (the key differs between model families); None for dense models."""
    return next(
        (
            getattr(config, key)
            for key in ("n_routed_experts", "num_local_experts", "num_experts")
            if getattr(config, key, None)
        ),
        None,
    )


def count_params(model: torch.nn.Module) -> ParamCounts:
    """Counts for MFU. Routed experts count top-k of n toward the active share; attention layers are
    the modules named "...Attention" with a q_proj (transformers' Llama, Nemotron-H and most others).

    Experts are recognised as 3-D parameters of a module whose class name ends in "Experts"
    (the fused layout of transformers 5). A parameter registered under two names counts once.
    """
    config = getattr(model, "config", None)
    routed = routed_experts(config)
    top_k = getattr(config, "num_experts_per_tok", None)
    seen: set[int] = set()
    total = active = 0
    for module in model.modules():
        is_experts = type(module).__name__.endswith("Experts") and routed and top_k
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
