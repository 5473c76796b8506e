"""Nemotron-H, the card's family: a hybrid of Mamba-2 mixers, attention and mixture-of-experts layers.

Each block holds one mixer (`block.mixer`): a Mamba-2 mixer, attention, a MoE (routed experts plus a shared
expert) or a dense MLP. The Mamba-2 mixer's CUDA kernels (mamba-ssm, causal-conv1d) keep packed rows apart
through `seq_idx` and constrain the shapes they run; torch.compile cannot trace them, so the mixer runs eager.
"""

from __future__ import annotations

import functools
import importlib.util
import inspect

import torch
from transformers import NemotronHConfig

from lineage.families.card import CARD_LAYERS, CARD_MAMBA, CARD_PATTERN, CARD_WIDTHS
from lineage.families.family import Family, Packing, Tail

SHAPES = {
    "tiny": dict(
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
    "card_pattern_small": dict(
        layers_block_type=[CARD_LAYERS[c] for c in CARD_PATTERN],
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
    # The card's Base shape, for planning only (built on the meta device, never trained here): 52 layers
    # (23 Mamba-2, 23 MoE, 6 attention), 128 routed experts, top-6.
    "30b_a3b": dict(
        layers_block_type=[CARD_LAYERS[c] for c in CARD_PATTERN],
        **CARD_WIDTHS,
        **CARD_MAMBA,
    ),
    # The card's first seven layers (3 Mamba-2, 3 MoE, 1 attention; 4.0B parameters at a 2k vocabulary):
    # the Base's layer types and expert shape at a depth that trains on 2 GPUs with fp32 master weights.
    "30b_a3b_reduced": dict(
        layers_block_type=[CARD_LAYERS[c] for c in "MEMEM*E"],
        **CARD_WIDTHS,
        **CARD_MAMBA,
    ),
    # One rank of the card's node at expert_parallel 8: the Base's 52 layers with the 16 routed experts a rank
    # holds of each MoE layer's 128 (still top-6: an expert then gets the rows the 8 ranks route to it), for
    # measuring a full-scale rank's step on one GPU: its expert GEMM shapes, its expert weights per layer
    # (what FSDP copies each micro-batch) and the activations of all 52 layers. Its dense part is whole here
    # (a rank holds 1/8 of it), so its optimizer state is 5.9B parameters' against 3.95B.
    "30b_a3b_rank8": dict(
        layers_block_type=[CARD_LAYERS[c] for c in CARD_PATTERN],
        **CARD_WIDTHS,
        **(CARD_MAMBA | {"n_routed_experts": 16}),
    ),
}
MAMBA_KERNELS = {"mamba_ssm": "mamba-ssm", "causal_conv1d": "causal-conv1d"}


def _modeling():
    from transformers.models.nemotron_h import modeling_nemotron_h

    return modeling_nemotron_h


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


# transformers' module functions that call an installed Mamba-2 kernel in place of their reference code
KERNEL_FUNCTIONS = (
    "causal_conv1d_fn",
    "causal_conv1d_update",
    "mamba2_split_conv1d_scan_combined",
    "mamba2_selective_state_update",
    "mamba2_chunk_scan",
)


def kernels_off_cpu() -> None:
    """Send CPU tensors to the reference functions. transformers calls the kernels whenever they are installed,
    whatever the device, and they refuse CPU tensors ("Expected x.is_cuda() to be true"): without this a CPU
    job (the embedded scale, a CPU evaluation) fails on a GPU machine that has them. Idempotent; CUDA tensors
    still take the kernels."""
    if not any(importlib.util.find_spec(module) for module in MAMBA_KERNELS):
        return
    modeling = _modeling()
    for name in KERNEL_FUNCTIONS:
        chosen = getattr(modeling, name)
        reference = inspect.unwrap(chosen)
        if reference is not chosen and not getattr(chosen, "routes_by_device", False):
            setattr(modeling, name, _by_device(chosen, reference))


def _by_device(kernel, reference):
    accepted = set(inspect.signature(reference).parameters)

    @functools.wraps(kernel)
    def call(*args, **kwargs):
        first = next(a for a in (*args, *kwargs.values()) if isinstance(a, torch.Tensor))
        if first.is_cuda:
            return kernel(*args, **kwargs)
        if kwargs.get("seq_idx") is not None or kwargs.get("cu_seqlens") is not None:
            raise ValueError(
                f"{reference.__name__}: packed rows on the CPU: the reference path cannot keep them apart "
                "(the Mamba-2 kernels do, on CUDA); run this job unpacked or on a GPU"
            )
        return reference(*args, **{k: v for k, v in kwargs.items() if k in accepted})

    call.routes_by_device = True
    return call


def kernel_misfit(config, device) -> str | None:
    """On a GPU with causal-conv1d installed (transformers then takes its path), why it cannot run this shape."""
    if str(device).startswith("cuda") and importlib.util.find_spec("causal_conv1d") is not None:
        return mamba_kernel_misfit(config)
    return None


def _shared_first_moe_forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
    """transformers' NemotronHMoE forward with the shared expert before the routed ones, whose down GEMM
    (moe_dispatch.py's eager tail) is then the block's last product."""
    shared = self.shared_experts(hidden_states)
    _, top_k_weights, top_k_index = self.gate(hidden_states)
    flat = hidden_states.view(-1, hidden_states.shape[-1])
    return self.experts(flat, top_k_index, top_k_weights).view(hidden_states.shape) + shared


def _mamba_forward_out_proj_last(self, hidden_states: torch.Tensor, cache_params=None, attention_mask=None, **kwargs):
    """transformers' NemotronHMamba2Mixer training forward on mamba-ssm's fused kernel, its out_proj moved
    out of the kernel (same product, same inputs), eager after it; other calls go to transformers' forward."""
    if not (self.training and cache_params is None and hidden_states.is_cuda):
        return type(self).forward(self, hidden_states, cache_params, attention_mask, **kwargs)
    from mamba_ssm.ops.triton.ssd_combined import mamba_split_conv1d_scan_combined

    projected = self.in_proj(_modeling().apply_mask_to_padding_states(hidden_states, attention_mask))
    scanned = mamba_split_conv1d_scan_combined(
        projected,
        self.conv1d.weight.squeeze(1),
        self.conv1d.bias,
        self.dt_bias,
        -torch.exp(self.A_log.float()),
        self.D,
        self.chunk_size,
        seq_idx=kwargs.get("seq_idx"),  # packed rows (lineage/training/packing.py)
        dt_limit=self.time_step_limit,
        activation=self.activation,
        rmsnorm_weight=self.norm.weight,
        rmsnorm_eps=self.norm.variance_epsilon,
        headdim=self.head_dim,
        ngroups=self.n_groups,
        norm_before_gate=False,
    )
    return self.out_proj(scanned)


def last_products(block: torch.nn.Module) -> list[Tail]:
    """One mixer per block, each with its own last product: the Mamba-2 out_proj (after the kernel; without
    the kernels transformers' own forward already ends with it), the attention's o_proj, the routed experts'
    down GEMM (the shared expert moved first; not with a latent projection after the experts), the MLP's down_proj."""
    modeling, mixer = _modeling(), getattr(block, "mixer", None)
    if isinstance(mixer, modeling.NemotronHMamba2Mixer):
        return [Tail(mixer, _mamba_forward_out_proj_last, kernels=True)]
    if isinstance(mixer, modeling.NemotronHAttention):
        return [Tail(mixer.o_proj)]
    if isinstance(mixer, modeling.NemotronHMoE):
        latent = not isinstance(mixer.fc2_latent_proj, torch.nn.Identity)  # a product after the experts
        return [] if latent else [Tail(mixer, _shared_first_moe_forward, experts=mixer.experts)]
    down = getattr(mixer, "down_proj", None)
    return [Tail(down)] if isinstance(down, torch.nn.Linear) else []


FAMILY = Family(
    name="nemotron_h",
    model_types=("nemotron_h",),
    config_class=NemotronHConfig,
    shapes=SHAPES,
    block_types=lambda: (_modeling().NemotronHBlock,),
    layer_kinds=lambda config: list(config.layers_block_type),
    layer_caches={"full_attention": "keys", "linear_attention": "state", "moe": None, "mlp": None},
    expert_types=lambda: (_modeling().NemotronHExperts,),
    expert_count_key="n_routed_experts",
    eager_mixer_types=lambda: (_modeling().NemotronHMamba2Mixer,),
    packing=Packing(
        inputs=("position_ids", "seq_idx"),
        kernels=MAMBA_KERNELS,
        needs="the Mamba-2 kernels, which keep packed rows apart in the convolution and the scan",
        install="build them with `bash envs/mamba-kernels.sh` on a CUDA machine (docs/full-scale.md 'GPU clusters')",
    ),
    kernel_misfit=kernel_misfit,
    kernels_off_cpu=kernels_off_cpu,
    last_products=last_products,
)


def missing_mamba_kernels() -> list[str]:
    """The Mamba-2 kernel distributions that do not import here."""
    return FAMILY.missing_kernels()
