"""Model soups: a weighted average of checkpoints that share one initialization.

Averaging weights only makes sense between models fine-tuned from the same starting point
(Model Soups, Wortsman et al. 2022: such models lie in one low-error basin), that read the
same token ids and serve the same prompts. So every check here runs before any weight is
read, and each refusal names what differs.

The average streams block by block. `ShardReader` maps each parent, one shard at a time; a
`StreamingVerifier` thread hashes those very bytes against the sha256 in the parent's
lineage.json (each parent is read once, and a damaged shard aborts the soup before it is
published); the sum is accumulated in fp32 and rounded once to the parents' dtype straight
into a planned `ShardWriter`'s staging buffers, which one thread writes and another hashes.
Memory stays at a few blocks whatever the model size. The arithmetic is numpy's (bfloat16
and float8 from ml_dtypes), which rounds exactly as torch does, so a soup never waits seconds
for torch to import.
"""

from __future__ import annotations

import collections
import contextlib
import json
import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from lineage.checkpoint import (
    BUNDLE_FILES,
    CONFIG_NAME,
    LINEAGE_NAME,
    TOKENIZER_FILES,
    copy_companion_files,
    init_root,
    lineage_record,
    parent_entry,
    read_lineage,
    unchanged_files,
    verify_checkpoint,
    write_lineage,
)
from lineage.io import atomic_path, sha256_file
from lineage.shards import (
    CheckpointError,
    ShardReader,
    ShardWriter,
    StreamingVerifier,
    TensorEntry,
    read_header,
    shown_dtype,
    weight_map,
)

# Config fields that do not change what the weights mean: where the config was loaded from, the
# library that saved it, the dtype a loader defaults to (the tensors' real dtypes are compared one by
# one) and the KV-cache switch trainers turn off for gradient checkpointing.
CONFIG_IGNORED = frozenset(
    {"_name_or_path", "_commit_hash", "transformers_version", "dtype", "torch_dtype", "use_cache"}
)
# Files that must be identical: the soup serves one tokenizer, chat template and system prompt.
MATCHED_FILES = (*TOKENIZER_FILES, "tokenizer.model", "vocab.json", "merges.txt", "added_tokens.json",
                 "chat_template.jinja", "chat_template.json", "system_prompt.txt")
# Files copied from the first parent; a difference is reported, not refused (sampling defaults only).
NOTED_FILES = ("generation_config.json", "serving_config.json")
WEIGHT_TOLERANCE = 1e-6
# Bytes of each parent read (and hashed) at a time, and averaged at a time. Large reads keep
# the per-block bookkeeping of reader, verifier and writer small against the bytes moved; small
# compute slices keep the fp32 scratch in the L2 cache (1 MiB slices measured slower than 256 KiB).
READ_BYTES = 4 * 1024**2
COMPUTE_BYTES = 256 * 1024
VERIFY_AHEAD = 4  # blocks the average may run ahead of the parents' sha256
SHOWN = 5  # differences listed in a message before "(+N more)"
# How parent shards are checked against lineage.json: "stat" re-hashes only shards whose size or
# mtime changed since they were recorded (see lineage.checkpoint), "content" re-hashes every byte.
VERIFY_MODES = ("stat", "content")


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


# --------------------------------------------------------------------------------------------
# Weights


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
            raise SoupError(f"weights {weights} sum to {total:.9g}, not 1 (tolerance {WEIGHT_TOLERANCE:g}); "
                            "rescale them, or pass --allow-unnormalized to scale the model on purpose")
        if min(weights) < 0:
            raise SoupError(f"weights {weights} include a negative weight, which extrapolates beyond the parents; "
                            "pass --allow-unnormalized to do that on purpose")
    return weights


# --------------------------------------------------------------------------------------------
# Initialization root


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


# --------------------------------------------------------------------------------------------
# Config, tokenizer and bundle files


def config_differences(a: Any, b: Any, prefix: str = "") -> list[str]:
    """Paths where two configs differ, ignoring CONFIG_IGNORED keys at any depth."""
    if isinstance(a, dict) and isinstance(b, dict):
        found = []
        for key in sorted(set(a) | set(b), key=str):
            if key in CONFIG_IGNORED:
                continue
            path = f"{prefix}{key}"
            if key not in a or key not in b:
                found.append(f"{path}: {'missing' if key not in a else repr(a[key])} vs "
                             f"{'missing' if key not in b else repr(b[key])}")
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
                f"{_listed(found)}. Only checkpoints of one architecture and size can be averaged "
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
        return None if not found else f"fields differ: {_listed(found)}"
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
                notes.append(f"{name} of {other.name} differs from {parents[0].name} ({differs}); "
                             f"the soup keeps {parents[0].name}'s")
                continue
            raise SoupError(
                f"{name} of {parents[0].name} and {other.name} differ: {differs}. A soup serves one tokenizer, "
                "chat template and system prompt; build both parents with the same bundle or leave one out."
            )
    return notes


# --------------------------------------------------------------------------------------------
# Tensors


def read_layout(directory: Path) -> dict[str, tuple[str, TensorEntry]]:
    """Every tensor's shard and byte range, from the index and the shard headers only."""
    mapping = weight_map(directory)
    headers = {shard: read_header(directory / shard) for shard in sorted(set(mapping.values()))}
    layout = {}
    for name, shard in mapping.items():
        if name not in headers[shard]:
            raise CheckpointError(f"{directory / shard}: the index maps {name} to this shard, which lacks it; "
                                  "the index and the shards disagree. Rebuild the checkpoint.")
        layout[name] = (shard, headers[shard][name])
    for shard, entries in headers.items():
        unlisted = sorted(set(entries) - set(mapping))
        if unlisted:
            raise CheckpointError(f"{directory / shard}: holds tensors the index does not list: {_listed(unlisted)}")
    return layout


def tensor_differences(a: Parent, b: Parent) -> list[str]:
    """Missing or extra names, then shape and dtype differences, in a's order."""
    found = []
    missing = [name for name in a.layout if name not in b.layout]
    extra = [name for name in b.layout if name not in a.layout]
    if missing:
        found.append(f"{len(missing)} tensor(s) of {a.name} missing in {b.name}: {_listed(missing)}")
    if extra:
        found.append(f"{len(extra)} tensor(s) of {b.name} missing in {a.name}: {_listed(extra)}")
    shapes, dtypes = [], []
    for name, (_, entry) in a.layout.items():
        if name in b.layout:
            other = b.layout[name][1]
            if other.shape != entry.shape:
                shapes.append(f"{name} {list(entry.shape)} vs {list(other.shape)}")
            if other.dtype != entry.dtype:
                dtypes.append(f"{name} {shown_dtype(entry.dtype)} vs {shown_dtype(other.dtype)}")
    if shapes:
        found.append(f"{len(shapes)} shape(s) differ: {_listed(shapes)}")
    if dtypes:
        found.append(f"{len(dtypes)} dtype(s) differ: {_listed(dtypes)}")
    return found


def check_tensors(parents: Sequence[Parent]) -> None:
    for other in parents[1:]:
        found = tensor_differences(parents[0], other)
        if found:
            raise SoupError(f"tensors of {parents[0].name} and {other.name} differ: {'; '.join(found)}. "
                            "Only checkpoints with the same tensor names, shapes and dtypes can be averaged.")


def read_order(parents: Sequence[Parent]) -> list[str]:
    """Tensor order that reads every parent's shards one after another.

    Sorted by each parent's shard, then by the first parent's byte offset: when the parents
    are sharded alike (or cut from one tensor order at other sizes) each shard file is opened
    once and read front to back.
    """
    ranks = [{shard: i for i, shard in enumerate(sorted({s for s, _ in p.layout.values()}))} for p in parents]

    def key(name: str) -> tuple[int, ...]:
        shards = (rank[p.layout[name][0]] for rank, p in zip(ranks, parents, strict=True))
        return (*shards, parents[0].layout[name][1].start)

    return sorted(parents[0].layout, key=key)


def average_into(out: np.ndarray, sources: Sequence[np.ndarray], weights: Sequence[np.floating],
                 acc: np.ndarray, tmp: np.ndarray) -> None:
    """out = w0*s0 + w1*s1 + ..., computed in acc's dtype and rounded once into out's dtype.

    Flat arrays no longer than the scratch buffers acc and tmp; `weights` in acc's dtype. Each
    widening is exact and each product and sum is one rounding in acc's dtype (no fused
    multiply-add), so the result equals `(w0 * s0.float() + w1 * s1.float() + ...).to(out.dtype)`
    in torch bit for bit: both round to nearest even.
    """
    count = out.size
    total, part = acc[:count], tmp[:count]
    _scaled(sources[0], weights[0], total)
    for source, weight in zip(sources[1:], weights[1:], strict=True):
        _scaled(source, weight, part)
        np.add(total, part, out=total)
    np.copyto(out, total, casting="unsafe")


def _scaled(source: np.ndarray, weight: np.floating, into: np.ndarray) -> None:
    if source.dtype != into.dtype:
        np.copyto(into, source)  # widening to fp32/fp64 is exact
        source = into
    np.multiply(source, weight, out=into)


# --------------------------------------------------------------------------------------------
# The soup


def prepare_parents(specs: Sequence[tuple[str, str | os.PathLike]], weights: Sequence[float] | None,
                    allow_unnormalized: bool = False, *, verify: str = "stat") -> list[Parent]:
    """Run every check on the parents' lineage, configs and shard headers; return them ready to average.

    Every file but the weight shards is hashed here. Which shards to hash is decided here too
    (`verify`, one of VERIFY_MODES) and left to `stream_average`, which hashes each parent's
    `hash_while_streaming` from the very bytes it reads. Every other check runs here, before any
    weight is read.
    """
    if verify not in VERIFY_MODES:
        raise ValueError(f"verify={verify!r}: expected one of {', '.join(VERIFY_MODES)}")
    names = [name for name, _ in specs]
    if len(specs) < 2:
        raise SoupError(f"a soup needs at least two parents, got {len(specs)}")
    if len(set(names)) != len(names):
        raise SoupError(f"parent names must be unique, got {names}")
    weights = check_weights(weights, len(specs), allow_unnormalized)
    parents = []
    for name, directory, weight in zip(names, (Path(d) for _, d in specs), weights, strict=True):
        lineage = verify_checkpoint(directory, defer_shards=True)
        root, chain = trace_root(directory)
        parent = Parent(name, directory, weight, lineage, root, chain, read_layout(directory))
        shards = {shard for shard, _ in parent.layout.values()}
        recorded = {shard: digest for shard, digest in lineage.get("files", {}).items() if shard in shards}
        trusted = unchanged_files(directory, lineage) & set(recorded) if verify == "stat" else set()
        parent.trusted_by_stat = sorted(trusted)
        parent.hash_while_streaming = {s: d for s, d in sorted(recorded.items()) if s not in trusted}
        parents.append(parent)
    check_roots(parents)
    check_configs(parents)
    check_tensors(parents)
    return parents


def make_soup(specs: Sequence[tuple[str, str | os.PathLike]], out: str | os.PathLike, *, run: str,
              weights: Sequence[float] | None = None, allow_unnormalized: bool = False,
              max_shard_bytes: int = 1024**3, progress: bool | None = None,
              log: Callable[[str], None] = lambda message: None, block_bytes: int = READ_BYTES,
              verify: str = "stat") -> dict[str, Any]:
    """Average checkpoints `specs` [(name, directory), ...] into `out`; return its lineage record.

    Every parent is checked before any weight is read; its shards are verified against the
    sha256 in its lineage.json (`verify`: "content" hashes every shard, "stat" only those whose
    size or mtime changed since recorded) from the bytes the average reads (one pass over each
    parent).
    `out` appears only when complete (written to a temporary sibling, then renamed).
    `progress=None` shows a bar only on a terminal. `block_bytes` is how much of a tensor is
    read (and hashed) from each parent at a time, at most READ_BYTES; it only affects speed.
    """
    started = time.time()
    out = Path(out)
    if block_bytes <= 0 or block_bytes % 8 or block_bytes > READ_BYTES:
        raise ValueError(f"block_bytes={block_bytes} must be a positive multiple of 8 (the widest element), "
                         f"at most {READ_BYTES}")
    for _, directory in specs:
        here, there = Path(directory).resolve(), out.resolve()
        if here == there or here in there.parents or there in here.parents:
            raise SoupError(f"--out {out} overlaps parent {directory}; write the soup to its own directory")
    parents = prepare_parents(specs, weights, allow_unnormalized, verify=verify)
    root = check_roots(parents)
    notes = check_files(parents)
    for note in notes:
        log(f"note: {note}")
    phases = {"check": time.time() - started}
    with atomic_path(out) as tmp:
        tmp.mkdir()
        writer, opens = stream_average(parents, tmp, run=run, max_shard_bytes=max_shard_bytes,
                                       block_bytes=block_bytes, progress=progress)
        phases["average_and_verify"] = time.time() - started - phases["check"]
        copy_companion_files(parents[0].directory, tmp, (CONFIG_NAME, *MATCHED_FILES, *BUNDLE_FILES))
        record = lineage_record(
            run=run, kind="soup", root=root,
            parents=[{**parent_entry(p.name, p.directory), "weight": p.weight} for p in parents],
            recipe={"method": "linear", "parents": [p.name for p in parents], "weights": [p.weight for p in parents],
                    "allow_unnormalized": allow_unnormalized, "accumulate_dtype": "float32"},
            started=started, weights=[p.weight for p in parents],
            tensors=len(parents[0].layout), total_bytes=writer.total_bytes, shard_opens=opens, notes=notes,
            parent_shards_verified={p.name: {"by_content": sorted(p.hash_while_streaming), "by_stat": p.trusted_by_stat}
                                    for p in parents},
            phase_s={key: round(value, 3) for key, value in phases.items()},
        )
        record = write_lineage(tmp, record, known_sha256=writer.sha256)
    return record


def stream_average(parents: Sequence[Parent], directory: Path, *, run: str, max_shard_bytes: int, block_bytes: int,
                   progress: bool | None) -> tuple[ShardWriter, dict[str, dict[str, int]]]:
    """Write the weighted average of `parents` as shards into `directory`.

    Returns the closed writer (its `sha256` and `total_bytes`) and how often each parent shard
    was opened. Each parent's `hash_while_streaming` shards are checked against their sha256
    from the very bytes averaged, hashed in a thread as they go by; a mismatch
    raises before the function returns, so the caller discards what was written. Parents are
    read through memory maps, averaged from the page cache without a copy. Memory: the mapped
    pages of a few blocks per parent, two fp32 scratch slices and the writer's staging
    buffers, whatever the model size.
    """
    hashed: collections.deque[list[Future[None]]] = collections.deque()  # per block, oldest first
    step = min(block_bytes, COMPUTE_BYTES)  # elements per slice: as many as a slice of 1-byte parents holds
    scratch = {wide: (np.empty(step, dtype=wide), np.empty(step, dtype=wide),
                      [wide(p.weight) for p in parents])
               for wide in (np.float32, np.float64)}
    layout = parents[0].layout
    with contextlib.ExitStack() as stack:
        readers = [stack.enter_context(ShardReader(p.directory, _headers(p))) for p in parents]
        verifiers = [stack.enter_context(StreamingVerifier(p.directory, p.hash_while_streaming))
                     for p in parents]
        current: list[str | None] = [None] * len(parents)
        # One compute thread, on cache-sized slices. The writer's two threads write and hash
        # finished staging buffers, each parent's verifier thread hashes that parent's blocks.
        stack.enter_context(np.errstate(all="ignore"))  # inf and NaN weights average as IEEE says, silently
        writer = stack.enter_context(ShardWriter(directory, max_shard_bytes=max_shard_bytes, background=True))
        total = sum(entry.nbytes for _, entry in layout.values())
        bar = stack.enter_context(tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024, desc=run,
                                       disable=None if progress is None else not progress))
        order = writer.plan([(name, layout[name][1].dtype, layout[name][1].shape) for name in read_order(parents)])
        for name in order:
            entry = layout[name][1]
            acc, part, factors = scratch[np.float64 if entry.dtype == "F64" else np.float32]
            dtype = entry.numpy_dtype
            for number, parent in enumerate(parents):
                shard = parent.layout[name][0]
                if shard != current[number]:
                    if current[number] is not None:
                        verifiers[number].close_shard(current[number])
                    current[number] = shard
            for begin in range(0, entry.nbytes, block_bytes):
                size = min(block_bytes, entry.nbytes - begin)
                views = [reader.view(name, begin, size) for reader in readers]
                futures = [verifier.feed(parent.layout[name][0], parent.layout[name][1].start + begin, view)
                           for verifier, view, parent in zip(verifiers, views, parents, strict=True)]
                hashed.append([future for future in futures if future is not None])
                while len(hashed) > VERIFY_AHEAD:  # bound how far the verifiers lag (and raise a mismatch early)
                    for future in hashed.popleft():
                        future.result()
                sources = [np.frombuffer(view, dtype) for view in views]
                target = writer.claim(size, dtype.itemsize).view(dtype)
                if entry.is_float:
                    for at in range(0, target.size, step):
                        average_into(target[at:at + step], [source[at:at + step] for source in sources], factors,
                                     acc, part)
                else:
                    _check_equal(name, parents, sources)
                    target[:] = sources[0]
            bar.update(entry.nbytes)
        for verifier, parent in zip(verifiers, parents, strict=True):
            verifier.finish(sorted({shard for shard, _ in parent.layout.values()}))
    return writer, {p.name: dict(r.opens) for p, r in zip(parents, readers, strict=True)}


def _headers(parent: Parent) -> dict[str, dict[str, TensorEntry]]:
    headers: dict[str, dict[str, TensorEntry]] = {}
    for name, (shard, entry) in parent.layout.items():
        headers.setdefault(shard, {})[name] = entry
    return headers


def _check_equal(name: str, parents: Sequence[Parent], sources: Sequence[np.ndarray]) -> None:
    """Integer and bool tensors (buffers, masks) cannot be averaged; they must be identical."""
    for parent, source in zip(parents[1:], sources[1:], strict=True):
        if not np.array_equal(source, sources[0]):
            raise SoupError(f"{name} is a {sources[0].dtype.name} tensor, which is copied rather than averaged, "
                            f"but {parents[0].name} and {parent.name} hold different values")


def _listed(items: Sequence[str]) -> str:
    shown = ", ".join(items[:SHOWN])
    return shown + (f" (+{len(items) - SHOWN} more)" if len(items) > SHOWN else "")
