"""The recipe of a training run: every value that shapes its weights, documented, checked in one place.

The workflow resolves a run's recipe from config.yaml (lineage/workflow/runs.py) and hands it to the
trainer as canonical JSON (`--recipe`); lineage.json stores it verbatim. The same fields are
command-line flags for direct use, where a flag overrides the value from `--recipe` and the
defaults below apply to what neither gives (the workflow always gives every field).

Two sets decide what a saved state may be resumed under (`resume_key`): RESUME_FIELDS must
match; ROUNDING_FIELDS change the result only by float rounding (how a batch is split and
computed) and may differ. Every field is in exactly one of them.
"""

from __future__ import annotations

import argparse
import dataclasses
import types
import typing
from dataclasses import dataclass, field
from typing import Any

from lineage.canonical import canonical, plain
from lineage.chat import TRUNCATION_MODES
from lineage.cli import json_object

SCHEDULES = ("cosine", "constant", "linear")
PRECISIONS = ("bf16", "fp32")
PACKED_ATTENTION = ("sdpa", "flex_attention", "varlen", "fa4")
FUSED_LOSSES = ("none", "liger", "cce", "compiled", "inplace", "inplace_chunked")
EXPERTS = ("grouped_mm", "eager")
DPO_FUSED_LOSSES = ("none", "compiled", "inplace", "inplace_chunked")  # those that give per-token log-probs


class RecipeError(ValueError):
    """A recipe value is missing or out of range; the message names the field."""


def setting(default: Any = dataclasses.MISSING, *, doc: str, choices: tuple[str, ...] | None = None) -> Any:
    """A recipe field with its documentation (the flag's help) and allowed values."""
    return field(default=default, metadata={"doc": doc, "choices": choices})


@dataclass(frozen=True)
class TrainRecipe:
    """What SFT and DPO share."""

    lr: float = setting(5e-6, doc="peak learning rate (the card's lr times the scale's lr_scale)")
    schedule: str = setting("cosine", doc="decay after warmup", choices=SCHEDULES)
    steps: int = setting(24, doc="optimizer steps")
    warmup_steps: int = setting(0, doc="linear warmup steps before the decay (0 = none)")
    min_lr_ratio: float = setting(0.0, doc="lr at the end of the decay, as a share of lr")
    seed: int = setting(0, doc="seed of the data order")
    weight_decay: float = setting(0.0, doc="AdamW weight decay on matrices (not on vectors)")
    adam_betas: tuple[float, float] = setting((0.9, 0.999), doc="AdamW beta1,beta2")
    adam_eps: float = setting(1e-8, doc="AdamW epsilon")
    grad_clip: float = setting(1.0, doc="max global gradient norm (0 = no clipping)")
    global_batch_rows: int = setting(512, doc="rows (DPO: pairs) per optimizer step, all ranks together")
    micro_batch_rows: int = setting(1, doc="rows per forward/backward on one rank")
    max_length: int = setting(4096, doc="tokens per row")
    truncation: str = setting(
        "drop", doc="rows longer than max_length: drop them or cut them", choices=TRUNCATION_MODES
    )
    precision: str = setting(
        "bf16", doc="bf16: bf16 compute over fp32 master weights and reductions; fp32: all fp32", choices=PRECISIONS
    )
    activation_checkpointing: bool | str = setting(
        False,
        doc="recompute each block's activations in backward: true (all of them), selective (keep the matrix "
        "products' and attention's outputs, recompute the elementwise work; lineage/training/checkpointing.py) "
        "or false",
    )
    # How rows are batched and computed: none of it changes the result beyond float rounding.
    packing: bool = setting(
        False,
        doc="pack each rank's rows (DPO: pairs) of a step into sequences of pack_tokens (attention stays within a row)",
    )
    pack_tokens: int | None = setting(
        None, doc="tokens per packed micro-batch (default: max_length; DPO: twice that, a pair)"
    )
    packed_attention: str = setting(
        "sdpa",
        doc="how packed rows are kept apart: sdpa (dense row mask), flex_attention (block mask), varlen "
        "(FlashAttention 2's variable-length kernel, CUDA only) or fa4 (the same through flash-attn-4's kernels, "
        "Hopper and Blackwell GPUs)",
        choices=PACKED_ATTENTION,
    )
    ce_chunk_tokens: int = setting(
        0,
        doc="without a fused loss: the head and cross-entropy over this many trained "
        "tokens at a time, recomputed in backward (0 = all at once)",
    )
    fused_loss: str = setting(
        "none",
        doc="LM head and cross-entropy fused by a kernel library, never keeping the "
        "logits: liger (liger-kernel) or cce (cut-cross-entropy), CUDA only; or "
        "compiled (the head's bf16 logits, then a torch.compile'd cross-entropy: "
        "no fp32 copy of them); or inplace (the bf16 logits, then one Triton kernel "
        "that writes the loss's gradient over them in the forward pass, CUDA only); "
        "or inplace_chunked (that kernel 2,048 positions at a time, each chunk's "
        "gradients finished in the forward pass, DPO's in the backward: no logits kept, no wait for the GPU)",
        choices=FUSED_LOSSES,
    )
    experts: str = setting(
        "grouped_mm",
        doc="MoE experts as grouped GEMMs over expert-sorted tokens (grouped_mm) or "
        "one matmul pair per expert (eager); transformers' experts_implementation",
        choices=EXPERTS,
    )
    compile: bool = setting(False, doc="torch.compile each transformer block (its Mamba-2 mixer, if any, stays eager)")

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            choices = f.metadata.get("choices")
            if choices and getattr(self, f.name) not in choices:
                raise RecipeError(f"{f.name}: {getattr(self, f.name)!r} is not one of {', '.join(choices)}")
        positive = ("lr", "steps", "global_batch_rows", "micro_batch_rows", "max_length", "adam_eps")
        for name in positive:
            if not getattr(self, name) > 0:
                raise RecipeError(f"{name} must be positive, got {getattr(self, name)!r}")
        if not 0 <= self.warmup_steps <= self.steps:
            raise RecipeError(f"warmup_steps must be in [0, steps={self.steps}], got {self.warmup_steps}")
        if not 0.0 <= self.min_lr_ratio <= 1.0:
            raise RecipeError(f"min_lr_ratio must be in [0, 1], got {self.min_lr_ratio}")
        if self.weight_decay < 0 or self.grad_clip < 0:
            raise RecipeError("weight_decay and grad_clip must be >= 0")
        if not all(0.0 < b < 1.0 for b in self.adam_betas):
            raise RecipeError(f"adam_betas must lie in (0, 1), got {list(self.adam_betas)}")
        if not self.packing and (self.pack_tokens is not None or self.packed_attention != "sdpa"):
            raise RecipeError("pack_tokens and packed_attention need packing")
        if self.pack_tokens is not None and self.pack_tokens < self.row_tokens:
            raise RecipeError(
                f"pack_tokens {self.pack_tokens} is below {self.row_tokens} tokens, the longest "
                f"{self.row_unit} at max_length {self.max_length}: it would not fit"
            )
        if self.ce_chunk_tokens < 0:
            raise RecipeError(f"ce_chunk_tokens must be 0 (off) or positive, got {self.ce_chunk_tokens}")
        if self.fused_loss != "none" and self.ce_chunk_tokens:
            raise RecipeError(f"fused_loss {self.fused_loss} chunks the loss itself; set ce_chunk_tokens to 0")

    row_unit = "row"  # what one data row trains on: a conversation (SFT) or a chosen and a rejected sequence (DPO)

    @property
    def row_tokens(self) -> int:
        """Tokens of the longest data row: max_length, a pair twice that."""
        return self.max_length

    @property
    def tokens_per_pack(self) -> int:
        return self.pack_tokens or self.row_tokens

    @property
    def micro_batch_tokens(self) -> int:
        """Tokens of one micro-batch at most: a pack, or micro_batch_rows rows (DPO: pairs) at max_length."""
        return self.tokens_per_pack if self.packing else self.micro_batch_rows * self.row_tokens

    # -- conversion ---------------------------------------------------------------------------

    @classmethod
    def from_mapping(cls, values: dict[str, Any], *, complete: bool = False) -> TrainRecipe:
        """A recipe from JSON-like values, each coerced to its field's type; unknown keys are refused.

        `complete` refuses a mapping that leaves any field to its default (the workflow's case).
        """
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - names)
        if unknown:
            raise RecipeError(
                f"{cls.__name__} has no field(s) {', '.join(unknown)} (fields: {', '.join(sorted(names))})"
            )
        if complete and set(values) != names:
            raise RecipeError(f"{cls.__name__}: no value for {', '.join(sorted(names - set(values)))}")
        hints = typing.get_type_hints(cls)
        return cls(**{name: _coerce(name, value, hints[name]) for name, value in values.items()})

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready fields (what lineage.json records as `recipe`)."""
        return plain(self)

    def to_json(self) -> str:
        return canonical(self)

    def resume_key(self) -> dict[str, Any]:
        """The fields a saved state must share with this recipe to be resumed."""
        return {name: value for name, value in self.as_dict().items() if name in RESUME_FIELDS}


@dataclass(frozen=True)
class SftRecipe(TrainRecipe):
    """SFT: the shared fields, rows of one conversation each."""


@dataclass(frozen=True)
class DpoRecipe(TrainRecipe):
    """DPO adds its temperature; a packed pair keeps its chosen and rejected sequences in one pack."""

    row_unit = "pair"

    lr: float = setting(1e-6, doc="peak learning rate (the card's lr times the scale's lr_scale)")
    beta: float = setting(0.1, doc="DPO inverse temperature")

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.beta > 0:
            raise RecipeError(f"beta must be positive, got {self.beta}")
        if self.fused_loss not in DPO_FUSED_LOSSES:
            raise RecipeError(
                f"fused_loss {self.fused_loss}: DPO needs each token's log-probability, which "
                f"{self.fused_loss}'s fused loss does not return; use one of {', '.join(DPO_FUSED_LOSSES)}"
            )

    @property
    def row_tokens(self) -> int:
        return 2 * self.max_length


RECIPES: dict[str, type[TrainRecipe]] = {"sft": SftRecipe, "dpo": DpoRecipe}

# A saved state resumes only under the same values of these...
RESUME_FIELDS = frozenset(
    {
        "lr",
        "schedule",
        "steps",
        "warmup_steps",
        "min_lr_ratio",
        "seed",
        "weight_decay",
        "adam_betas",
        "adam_eps",
        "grad_clip",
        "global_batch_rows",
        "max_length",
        "truncation",
        "precision",
        "beta",
    }
)
# ...while these may change between the save and the resume (split and computation of a batch).
ROUNDING_FIELDS = frozenset(
    {
        "micro_batch_rows",
        "activation_checkpointing",
        "packing",
        "pack_tokens",
        "packed_attention",
        "ce_chunk_tokens",
        "fused_loss",
        "experts",
        "compile",
    }
)


# -- command line ---------------------------------------------------------------------------------


def add_recipe_arguments(parser: argparse.ArgumentParser, cls: type[TrainRecipe]) -> None:
    """`--recipe JSON` plus one flag per field (which overrides the JSON's value)."""
    group = parser.add_argument_group("recipe (lineage.json records it; --recipe gives all of it at once)")
    group.add_argument(
        "--recipe",
        type=json_object,
        default={},
        metavar="JSON",
        help="the resolved recipe as a JSON object (the workflow passes this)",
    )
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        flag = "--" + f.name.replace("_", "-")
        default = f.default
        shown = ",".join(map(str, default)) if isinstance(default, tuple) else default
        options: dict[str, Any] = {"dest": f.name, "default": None, "help": f"{f.metadata['doc']} (default {shown})"}
        if hints[f.name] is bool:
            group.add_argument(flag, action=argparse.BooleanOptionalAction, **options)
        elif hints[f.name] == bool | str:  # a switch that also takes a named mode: --flag, --flag MODE
            group.add_argument(flag, nargs="?", const=True, type=_flag_parser(f.name, hints[f.name]), **options)
        else:
            group.add_argument(
                flag, type=_flag_parser(f.name, hints[f.name]), choices=f.metadata.get("choices"), **options
            )


def recipe_from_args(args: argparse.Namespace, cls: type[TrainRecipe]) -> TrainRecipe:
    """The recipe given by --recipe, with each explicitly given flag replacing its value."""
    values = dict(args.recipe)
    for f in dataclasses.fields(cls):
        given = getattr(args, f.name)
        if given is not None:
            values[f.name] = given
    return cls.from_mapping(values)


def _flag_parser(name: str, hint: Any):
    def parse(text: str) -> Any:
        value: Any = text.split(",") if typing.get_origin(hint) is tuple else text
        try:
            return _coerce(name, value, hint)
        except RecipeError as err:
            raise argparse.ArgumentTypeError(str(err)) from None

    return parse


def _coerce(name: str, value: Any, hint: Any) -> Any:
    """`value` as the field's type: ints stay ints, floats from any number, tuples from lists."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType) and type(None) in args:
        if value is None:
            return None
        (hint,) = [a for a in args if a is not type(None)]
        return _coerce(name, value, hint)
    if origin is tuple:
        if not isinstance(value, (list, tuple)) or len(value) != len(args):
            raise RecipeError(f"{name}: expected {len(args)} numbers, got {value!r}")
        return tuple(_coerce(name, v, a) for v, a in zip(value, args, strict=True))
    if hint is bool:
        if not isinstance(value, bool):
            raise RecipeError(f"{name}: expected true or false, got {value!r}")
        return value
    if hint == bool | str:  # activation_checkpointing: true / false, or a mode by name
        words = {"true": True, "full": True, "false": False, "none": False, "selective": "selective"}
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in words:
            return words[value.lower()]
        raise RecipeError(f"{name}: expected true, false or selective, got {value!r}")
    if hint is int:
        number = _number(name, value)
        if number != int(number):
            raise RecipeError(f"{name}: expected a whole number, got {value!r}")
        return int(number)
    if hint is float:
        return float(_number(name, value))
    if hint is str:
        if not isinstance(value, str):
            raise RecipeError(f"{name}: expected text, got {value!r}")
        return value
    raise TypeError(f"{name}: unsupported recipe type {hint!r}")


def _number(name: str, value: Any) -> float | int:
    if isinstance(value, bool):
        raise RecipeError(f"{name}: expected a number, got {value!r}")
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            try:
                return float(value)
            except ValueError:
                pass
    raise RecipeError(f"{name}: expected a number, got {value!r}")
