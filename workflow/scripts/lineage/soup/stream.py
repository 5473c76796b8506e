"""A soup streamed from the parents' shards to the output's: bounded memory at the disk's speed.

`ShardReader` maps each parent, one shard at a time; a `StreamingVerifier` thread hashes those
very bytes against the sha256 in the parent's lineage.json (each parent is read once, and a
damaged shard aborts the soup before it is published); the method of lineage/soup/methods.py
combines the slices in fp32 and rounds once to the parents' dtype straight into a planned
`ShardWriter`'s staging buffers, which one thread writes and another hashes. Memory stays at a
few blocks whatever the model size. The arithmetic is numpy's (bfloat16 and float8 from
ml_dtypes), which rounds exactly as torch does, so a soup never waits seconds for torch to import.
"""

from __future__ import annotations

import collections
import contextlib
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from lineage.checkpoints.directory import finish_checkpoint, lineage_record, parent_entry
from lineage.checkpoints.format import BUNDLE_FILES, CONFIG_NAME, TensorEntry
from lineage.checkpoints.read import ShardReader
from lineage.checkpoints.verify import StreamingVerifier, unchanged_files, verify_checkpoint
from lineage.checkpoints.write import ShardWriter
from lineage.io import atomic_path
from lineage.soup.checks import (
    MATCHED_FILES,
    Parent,
    SoupError,
    check_configs,
    check_files,
    check_roots,
    check_tensors,
    check_weights,
    read_layout,
    trace_root,
)
from lineage.soup.methods import DEFAULT, METHODS
from lineage.soup.translate import translation

# Bytes of each parent read (and hashed) at a time, and averaged at a time. Large reads keep
# the per-block bookkeeping of reader, verifier and writer small against the bytes moved; small
# compute slices keep the fp32 scratch in the L2 cache (1 MiB slices measured slower than 256 KiB).
READ_BYTES = 4 * 1024**2
COMPUTE_BYTES = 256 * 1024
VERIFY_AHEAD = 4  # blocks the average may run ahead of the parents' sha256
# How parent shards are checked against lineage.json: "stat" re-hashes only shards whose size or
# mtime changed since they were recorded (see lineage.checkpoints.verify), "content" re-hashes every byte.
VERIFY_MODES = ("stat", "content")


def read_order(parents: Sequence[Parent]) -> list[str]:
    """Tensor order that reads every parent's shards one after another.

    Sorted by each parent's shard (but those read through a translation), then by the first parent's
    byte offset: when the parents are sharded alike (or cut from one tensor order at other sizes) each shard file is opened
    once and read front to back.
    """
    ranks = [{shard: i for i, shard in enumerate(sorted({s for s, _ in p.layout.values()}))} for p in parents]

    def key(name: str) -> tuple[int, ...]:  # a parent read through a translation is read out of order anyway
        shards = (rank[p.layout[name][0]] for rank, p in zip(ranks, parents, strict=True) if p.segments is None)
        return (*shards, parents[0].layout[name][1].start)

    return sorted(parents[0].layout, key=key)


def prepare_parents(
    specs: Sequence[tuple[str, str | os.PathLike]],
    weights: Sequence[float] | None,
    allow_unnormalized: bool = False,
    *,
    verify: str = "stat",
) -> list[Parent]:
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
    for other in parents[1:]:  # one model in another layout: read through a translation to the first's names
        if set(other.layout) != set(parents[0].layout):
            other.segments = translation(parents[0], other)
    check_tensors(parents)
    return parents


def make_soup(
    specs: Sequence[tuple[str, str | os.PathLike]],
    out: str | os.PathLike,
    *,
    run: str,
    weights: Sequence[float] | None = None,
    allow_unnormalized: bool = False,
    max_shard_bytes: int = 1024**3,
    progress: bool | None = None,
    log: Callable[[str], None] = lambda message: None,
    block_bytes: int = READ_BYTES,
    verify: str = "stat",
    method: str = DEFAULT,
) -> dict[str, Any]:
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
    if method not in METHODS:
        raise SoupError(f"unknown soup method {method!r}; known: {', '.join(METHODS)}")
    if block_bytes <= 0 or block_bytes % 8 or block_bytes > READ_BYTES:
        raise ValueError(
            f"block_bytes={block_bytes} must be a positive multiple of 8 (the widest element), at most {READ_BYTES}"
        )
    for _, directory in specs:
        here, there = Path(directory).resolve(), out.resolve()
        if here == there or here in there.parents or there in here.parents:
            raise SoupError(f"--out {out} overlaps parent {directory}; write the soup to its own directory")
    parents = prepare_parents(specs, weights, allow_unnormalized, verify=verify)
    root = check_roots(parents)
    notes = check_files(parents)
    notes += [
        f"{p.name} holds the model in another checkpoint layout; read through a translation to {parents[0].name}'s"
        for p in parents
        if p.segments is not None
    ]
    for note in notes:
        log(f"note: {note}")
    phases = {"check": time.time() - started}
    with atomic_path(out) as tmp:
        tmp.mkdir()
        writer, opens = stream_average(
            parents,
            tmp,
            run=run,
            method=method,
            max_shard_bytes=max_shard_bytes,
            block_bytes=block_bytes,
            progress=progress,
        )
        phases["average_and_verify"] = time.time() - started - phases["check"]
        record = lineage_record(
            run=run,
            kind="soup",
            root=root,
            parents=[{**parent_entry(p.name, p.directory), "weight": p.weight} for p in parents],
            recipe={
                "method": method,
                "parents": [p.name for p in parents],
                "weights": [p.weight for p in parents],
                "allow_unnormalized": allow_unnormalized,
                "accumulate_dtype": "float32",
            },
            started=started,
            weights=[p.weight for p in parents],
            tensors=len(parents[0].layout),
            total_bytes=writer.total_bytes,
            shard_opens=opens,
            notes=notes,
            parent_shards_verified={
                p.name: {"by_content": sorted(p.hash_while_streaming), "by_stat": p.trusted_by_stat} for p in parents
            },
            phase_s={key: round(value, 3) for key, value in phases.items()},
        )
        record = finish_checkpoint(
            tmp,
            record,
            writer.sha256,
            companions_from=parents[0].directory,
            companion_names=(CONFIG_NAME, *MATCHED_FILES, *BUNDLE_FILES),
        )
    return record


def stream_average(
    parents: Sequence[Parent],
    directory: Path,
    *,
    run: str,
    method: str,
    max_shard_bytes: int,
    block_bytes: int,
    progress: bool | None,
) -> tuple[ShardWriter, dict[str, dict[str, int]]]:
    """Write `method`'s combination of `parents` as shards into `directory`.

    Returns the closed writer (its `sha256` and `total_bytes`) and how often each parent shard
    was opened. Each parent's `hash_while_streaming` shards are checked against their sha256
    from the very bytes averaged, hashed in a thread as they go by; a mismatch
    raises before the function returns, so the caller discards what was written. Parents are
    read through memory maps, averaged from the page cache without a copy. Memory: the mapped
    pages of a few blocks per parent, two fp32 scratch slices and the writer's staging
    buffers, whatever the model size.
    """
    combine = METHODS[method]
    hashed: collections.deque[list[Future[None]]] = collections.deque()  # per block, oldest first
    step = min(block_bytes, COMPUTE_BYTES)  # elements per slice: as many as a slice of 1-byte parents holds
    scratch = {
        wide: (np.empty(step, dtype=wide), np.empty(step, dtype=wide), [wide(p.weight) for p in parents])
        for wide in (np.float32, np.float64)
    }
    layout = parents[0].layout
    with contextlib.ExitStack() as stack:
        readers = [stack.enter_context(ShardReader(p.directory, _headers(p))) for p in parents]
        verifiers = [stack.enter_context(StreamingVerifier(p.directory, p.hash_while_streaming)) for p in parents]
        current: list[str | None] = [None] * len(parents)
        # One compute thread, on cache-sized slices. The writer's two threads write and hash
        # finished staging buffers, each parent's verifier thread hashes that parent's blocks.
        stack.enter_context(np.errstate(all="ignore"))  # inf and NaN weights average as IEEE says, silently
        writer = stack.enter_context(ShardWriter(directory, max_shard_bytes=max_shard_bytes, background=True))
        total = sum(entry.nbytes for _, entry in layout.values())
        bar = stack.enter_context(
            tqdm(
                total=total,
                unit="B",
                unit_scale=True,
                unit_divisor=1024,
                desc=run,
                disable=None if progress is None else not progress,
            )
        )
        order = writer.plan([(name, layout[name][1].dtype, layout[name][1].shape) for name in read_order(parents)])
        for name in order:
            entry = layout[name][1]
            acc, part, factors = scratch[np.float64 if entry.dtype == "F64" else np.float32]
            dtype = entry.numpy_dtype
            for number, parent in enumerate(parents):
                if parent.segments is not None:  # read out of order: its shards are closed at the end
                    continue
                shard = parent.layout[name][0]
                if shard != current[number]:
                    if current[number] is not None:
                        verifiers[number].close_shard(current[number])
                    current[number] = shard
            for begin in range(0, entry.nbytes, block_bytes):
                size = min(block_bytes, entry.nbytes - begin)
                views, futures = [], []
                for reader, verifier, parent in zip(readers, verifiers, parents, strict=True):
                    pieces = [
                        (n, at, reader.view(n, at, nbytes)) for n, at, nbytes in _pieces(parent, name, begin, size)
                    ]
                    futures += [
                        verifier.feed(parent.layout[n][0], parent.layout[n][1].start + at, v) for n, at, v in pieces
                    ]
                    views.append(pieces[0][2] if len(pieces) == 1 else b"".join(v for _, _, v in pieces))
                hashed.append([future for future in futures if future is not None])
                while len(hashed) > VERIFY_AHEAD:  # bound how far the verifiers lag (and raise a mismatch early)
                    for future in hashed.popleft():
                        future.result()
                sources = [np.frombuffer(view, dtype) for view in views]
                target = writer.claim(size, dtype.itemsize).view(dtype)
                if entry.is_float:
                    for at in range(0, target.size, step):
                        combine(
                            target[at : at + step], [source[at : at + step] for source in sources], factors, acc, part
                        )
                else:
                    _check_equal(name, parents, sources)
                    target[:] = sources[0]
            bar.update(entry.nbytes)
        for verifier, parent in zip(verifiers, parents, strict=True):
            verifier.finish(sorted({shard for shard, _ in parent.layout.values()}))
    return writer, {p.name: dict(r.opens) for p, r in zip(parents, readers, strict=True)}


def _pieces(parent: Parent, name: str, begin: int, size: int) -> list[tuple[str, int, int]]:
    """(the parent's tensor, byte offset, bytes) covering bytes [begin, begin + size) of the first parent's `name`."""
    if parent.segments is None:
        return [(name, begin, size)]
    pieces, at = [], 0
    for segment in parent.segments[name]:
        low, high = max(begin, at), min(begin + size, at + segment.nbytes)
        if low < high:
            pieces.append((segment.name, segment.offset + low - at, high - low))
        at += segment.nbytes
    return pieces


def _headers(parent: Parent) -> dict[str, dict[str, TensorEntry]]:
    headers: dict[str, dict[str, TensorEntry]] = {}
    for name, (shard, entry) in parent.layout.items():
        headers.setdefault(shard, {})[name] = entry
    return headers


def _check_equal(name: str, parents: Sequence[Parent], sources: Sequence[np.ndarray]) -> None:
    """Integer and bool tensors (buffers, masks) cannot be averaged; they must be identical."""
    for parent, source in zip(parents[1:], sources[1:], strict=True):
        if not np.array_equal(source, sources[0]):
            raise SoupError(
                f"{name} is a {sources[0].dtype.name} tensor, which is copied rather than averaged, "
                f"but {parents[0].name} and {parent.name} hold different values"
            )
