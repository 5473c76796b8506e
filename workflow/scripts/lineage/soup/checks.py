"""What a soup checks before it reads a weight: one initialization, one architecture, one tokenizer.

Averaging weights only makes sense between models fine-tuned from the same starting point
(Model Soups, Wortsman et al. 2022: such models lie in one low-error basin), that read the
same token ids and serve the same prompts. Every check here runs on lineage records, configs,
companion files and shard headers, and each refusal names what differs.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lineage.checkpoints.directory import init_root, read_lineage
from lineage.checkpoints.format import CONFIG_NAME, LINEAGE_NAME, TOKENIZER_FILES, TensorEntry, listed, shown_dtype
from lineage.checkpoints.read import tensor_entries
from lineage.io import sha256_file

# Config fields that do not change what the weights mean: where the config was loaded from, the
# library that saved it, the dtype a loader defaults to (the tensors' real dtypes are compared one by
# one) and the KV-cache switch trainers turn off for gradient checkpointing.
CONFIG_IGNORED = frozenset(
    {"_name_or_path", "_commit_hash", "transformers_version", "dtype", "torch_dtype", "use_cache"}
)
# Files that must be identical: the soup serves one tokenizer, chat template and system prompt.
MATCHED_FILES = (
    *TOKENIZER_FILES,
    "tokenizer.model",
    "vocab.json",
    "merges.txt",
    "added_tokens.json",
    "chat_template.jinja",
    "chat_template.json",
    "system_prompt.txt",
)
# Files copied from the first parent; a difference is reported, not refused (sampling defaults only).
NOTED_FILES = ("generation_config.json", "serving_config.json")
# Fields a writer may leave out without changing the model (transformers' save_pretrained records the class,
# a config saved on its own does not): compared only when both configs have them.
CONFIG_OPTIONAL = frozenset({"architectures"})
WEIGHT_TOLERANCE = 1e-6


class SoupError(ValueError):
    """The parents cannot be averaged; the message says what differs and how to fix it."""


@dataclass
class Parent:
    """One ingredient of a soup, after its checkpoint was verified."""

    name: str
    directory: Path
    weight: float
    lineage: dict[str, Any] = field(default_factory=dict)
    root: dict[str, str] = field(default_factory=dict)
    chain: list[str] = field(default_factory=list)
    layout: dict[str, tuple[str, TensorEntry]] = field(default_factory=dict)  # name -> (shard, entry)
    hash_while_streaming: dict[str, str] = field(default_factory=dict)  # shard -> sha256 to check as it is read
    trusted_by_stat: list[str] = field(default_factory=list)  # shards whose recorded size and mtime still hold
    # another layout of the first parent's model: its tensors as byte ranges of this one's (soup/translate.py)
    segments: dict[str, list[Any]] | None = None


def check_weights(weights: Sequence[float] | None, count: int, allow_unnormalized: bool = False) -> list[float]:
    """Equal weights by default; given weights must be finite, one per parent and sum to 1.

    A sum other than 1 rescales the model (and negative weights extrapolate past the parents),
    which is no longer a soup; `allow_unnormalized` permits both on purpose.
    """
    if weights is None:
        return [1.0 / count] * count
    weights = [float(w) for w in weights]
    if len(weights) != count:
        raise SoupError(f"{len(weights)} weights given for {count} parents; give one weight per --parent, in order")
    if not all(math.isfinite(w) for w in weights):
        raise SoupError(f"weights {weights} are not all finite numbers")
    if not allow_unnormalized:
        total = sum(weights)
        if abs(total - 1.0) > WEIGHT_TOLERANCE:
            raise SoupError(
                f"weights {weights} sum to {total:.9g}, not 1 (tolerance {WEIGHT_TOLERANCE:g}); "
                "rescale them, or pass --allow-unnormalized to scale the model on purpose"
            )
        if min(weights) < 0:
            raise SoupError(
                f"weights {weights} include a negative weight, which extrapolates beyond the parents; "
                "pass --allow-unnormalized to do that on purpose"
            )
    return weights


def trace_root(directory: str | os.PathLike, _seen: frozenset[Path] = frozenset()) -> tuple[dict[str, str], list[str]]:
    """The root recorded in lineage.json, cross-checked against every parent still on disk.

    Returns (root, chain), the chain being the run names from this checkpoint back to its
    root along first parents (for messages). A parent whose lineage.json changed since the
    child was built is a different checkpoint now and is not used for the cross-check.
    """
    directory = Path(directory)
    lineage = read_lineage(directory)
    root = init_root(lineage)
    chain = [str(lineage.get("run") or directory.name)]
    for number, parent in enumerate(lineage.get("parents") or []):
        path = Path(parent.get("path") or "")
        lineage_file = path / LINEAGE_NAME
        if not parent.get("path") or path.resolve() in _seen or not lineage_file.is_file():
            continue
        if parent.get("lineage_sha256") and sha256_file(lineage_file) != parent["lineage_sha256"]:
            continue
        parent_root, parent_chain = trace_root(path, _seen | {directory.resolve()})
        if parent_root != root:
            raise SoupError(
                f"{directory / LINEAGE_NAME} records root {show_root(root)}, but its parent {parent.get('run')} "
                f"({path}) descends from {show_root(parent_root)}; the lineage is inconsistent. "
                f"Rebuild {chain[0]} from its parents."
            )
        if number == 0:
            chain += parent_chain
    return root, chain


def show_root(root: Mapping[str, str]) -> str:
    return f"{root.get('run')}@{str(root.get('fingerprint', ''))[:12]}"


def check_roots(parents: Sequence[Parent]) -> dict[str, str]:
    """All parents must descend from one initialization; return it."""
    first = parents[0]
    for other in parents[1:]:
        if other.root != first.root:
            raise SoupError(
                f"parents do not share one initialization: {first.name} ({' <- '.join(first.chain)}) descends from "
                f"{show_root(first.root)}, {other.name} ({' <- '.join(other.chain)}) from {show_root(other.root)}. "
                "Averaging weights is only meaningful between checkpoints fine-tuned from the same start; "
                "soup runs trained from the same parent (see each lineage.json 'root')."
            )
    return first.root


def config_differences(a: Any, b: Any, prefix: str = "") -> list[str]:
    """Paths where two configs differ, ignoring CONFIG_IGNORED keys at any depth."""
    if isinstance(a, dict) and isinstance(b, dict):
        found = []
        for key in sorted(set(a) | set(b), key=str):
            if key in CONFIG_IGNORED:
                continue
            path = f"{prefix}{key}"
            if key in CONFIG_OPTIONAL and (key not in a or key not in b):
                continue
            if key not in a or key not in b:
                found.append(
                    f"{path}: {'missing' if key not in a else repr(a[key])} vs "
                    f"{'missing' if key not in b else repr(b[key])}"
                )
            else:
                found += config_differences(a[key], b[key], path + ".")
        return found
    return [] if a == b else [f"{prefix.rstrip('.')}: {a!r} vs {b!r}"]


def read_config(parent: Parent) -> dict[str, Any]:
    path = parent.directory / CONFIG_NAME
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise SoupError(f"{path}: missing; parent {parent.name} is not a loadable checkpoint") from None
    except json.JSONDecodeError as err:
        raise SoupError(f"{path}: invalid JSON ({err.msg} at line {err.lineno})") from None


def check_configs(parents: Sequence[Parent]) -> None:
    """Architecture, sizes, vocabulary and every other config field must agree."""
    first = read_config(parents[0])
    for other in parents[1:]:
        found = config_differences(first, read_config(other))
        if found:
            raise SoupError(
                f"config.json of {parents[0].name} and {other.name} differ in {len(found)} field(s): "
                f"{listed(found)}. Only checkpoints of one architecture and size can be averaged "
                f"(ignored fields: {', '.join(sorted(CONFIG_IGNORED))})."
            )


def file_difference(a: Path, b: Path) -> str | None:
    """How two optional companion files differ (None when equal); JSON compared by value."""
    if not a.is_file() and not b.is_file():
        return None
    if a.is_file() != b.is_file():
        return f"present only in {a.parent if a.is_file() else b.parent}"
    left, right = a.read_bytes(), b.read_bytes()
    if left == right:
        return None
    if a.suffix == ".json":
        try:
            found = config_differences(json.loads(left), json.loads(right))
        except ValueError:
            found = ["contents"]
        return None if not found else f"fields differ: {listed(found)}"
    lines_a, lines_b = left.decode(errors="replace").splitlines(), right.decode(errors="replace").splitlines()
    for number, (line_a, line_b) in enumerate(zip(lines_a, lines_b), start=1):
        if line_a != line_b:
            return f"first difference at line {number}: {line_a[:80]!r} vs {line_b[:80]!r}"
    return f"one is a prefix of the other ({len(lines_a)} vs {len(lines_b)} lines)"


def check_files(parents: Sequence[Parent]) -> list[str]:
    """Refuse differing tokenizer, chat template or system prompt; return notes for the rest."""
    notes = []
    for other in parents[1:]:
        for name in (*MATCHED_FILES, *NOTED_FILES):
            differs = file_difference(parents[0].directory / name, other.directory / name)
            if differs is None:
                continue
            if name in NOTED_FILES:
                notes.append(
                    f"{name} of {other.name} differs from {parents[0].name} ({differs}); "
                    f"the soup keeps {parents[0].name}'s"
                )
                continue
            raise SoupError(
                f"{name} of {parents[0].name} and {other.name} differ: {differs}. A soup serves one tokenizer, "
                "chat template and system prompt; build both parents with the same bundle or leave one out."
            )
    return notes


def read_layout(directory: Path) -> dict[str, tuple[str, TensorEntry]]:
    """Every tensor's shard and byte range, from the index and the shard headers only; a soup refuses
    tensors a shard holds but the index does not list (it would drop them silently)."""
    return tensor_entries(directory, unlisted_ok=False)


def tensor_differences(a: Parent, b: Parent) -> list[str]:
    """Missing or extra names, then shape and dtype differences, in a's order."""
    found = []
    missing = [name for name in a.layout if name not in b.layout]
    extra = [name for name in b.layout if name not in a.layout]
    if missing:
        found.append(f"{len(missing)} tensor(s) of {a.name} missing in {b.name}: {listed(missing)}")
    if extra:
        found.append(f"{len(extra)} tensor(s) of {b.name} missing in {a.name}: {listed(extra)}")
    shapes, dtypes = [], []
    for name, (_, entry) in a.layout.items():
        if name in b.layout:
            other = b.layout[name][1]
            if other.shape != entry.shape:
                shapes.append(f"{name} {list(entry.shape)} vs {list(other.shape)}")
            if other.dtype != entry.dtype:
                dtypes.append(f"{name} {shown_dtype(entry.dtype)} vs {shown_dtype(other.dtype)}")
    if shapes:
        found.append(f"{len(shapes)} shape(s) differ: {listed(shapes)}")
    if dtypes:
        found.append(f"{len(dtypes)} dtype(s) differ: {listed(dtypes)}")
    return found


def check_tensors(parents: Sequence[Parent]) -> None:
    """Same names, shapes and dtypes as the first parent (a parent read through a translation was checked there)."""
    for other in parents[1:]:
        if other.segments is not None:
            continue
        found = tensor_differences(parents[0], other)
        if found:
            raise SoupError(
                f"tensors of {parents[0].name} and {other.name} differ: {'; '.join(found)}. "
                "Only checkpoints with the same tensor names, shapes and dtypes can be averaged."
            )
