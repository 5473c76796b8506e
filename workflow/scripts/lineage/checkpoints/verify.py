"""Verifying checkpoints against the sha256 their lineage.json recorded, before anything reads them.

Readers call `verify_checkpoint` first, so a truncated or altered shard is refused before anything
trains on it; a soup hashes the shards from the very bytes it averages (`StreamingVerifier`).

lineage.json also records each file's size and modification time. A reader that may trust them
(the soup, by default) re-hashes only files that `unchanged_files` does not vouch for, the rule git,
rsync and make use: it catches truncation, rewrites and replaced files at no cost, and leaves bit rot
or a deliberately restored mtime to a full check.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from lineage.checkpoints.directory import read_lineage
from lineage.checkpoints.format import INDEX_NAME, LINEAGE_NAME, CheckpointError
from lineage.checkpoints.read import shard_files
from lineage.io import sha256_file


def checksum_mismatch(path: Path, actual: str, expected: str) -> CheckpointError:
    """The error for a file whose sha256 is not the one lineage.json recorded."""
    run = path.parent.name
    return CheckpointError(
        f"{path}: sha256 {actual[:16]}… does not match {expected[:16]}… recorded in lineage.json; the file is "
        f"truncated or was altered. Rebuild this checkpoint: snakemake {run} --forcerun {run} (a checkpoint "
        "given by path: restore your copy)."
    )


class StreamingVerifier:
    """Check shard files against their recorded sha256 with the bytes a reader reads anyway.

    A soup reads every byte of its parents once; hashing those bytes as they go by, in a thread
    beside the arithmetic, costs no second pass over tens of GB. Each shard is hashed in file
    order: a block is fed after it was read, bytes the reader skipped (the header, or a tensor
    it will read later) are read from the file, and `close_shard` hashes the rest and compares.
    A mismatch is raised by the next `wait`/`finish`, naming the file, and must abort whatever
    was built from the shard (callers write into a temporary that is then discarded).
    """

    def __init__(self, directory: str | os.PathLike, expected: Mapping[str, str]):
        self.directory = Path(directory)
        self.expected = dict(expected)
        self._digests: dict[str, hashlib._Hash] = {}
        self._positions: dict[str, int] = {}
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="shard-verifier")  # one thread keeps file order
        self._pending: list[Future[None]] = []
        self.verified: list[str] = []

    def feed(self, shard: str, position: int, data: memoryview) -> Future[None] | None:
        """Hash `data`, read from `shard` at byte `position`; the caller keeps `data` intact until the
        returned future is done."""
        if shard not in self.expected:
            return None
        return self._submit(self._hash_through, shard, position, data)

    def close_shard(self, shard: str) -> None:
        if shard in self.expected:
            self._submit(self._finish_shard, shard)

    def finish(self, shards: Iterable[str]) -> list[str]:
        """Close `shards` (all a reader used, or all of the checkpoint) and wait; return the verified names."""
        for shard in shards:
            if shard in self.expected and shard not in self.verified:
                self.close_shard(shard)
        self.wait()
        return self.verified

    def wait(self) -> None:
        pending, self._pending = self._pending, []
        for future in pending:
            future.result()

    def shutdown(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)

    def _submit(self, fn, *args) -> Future[None]:
        future = self._pool.submit(fn, *args)
        self._pending.append(future)
        if len(self._pending) > 256:  # drop finished futures, raising a mismatch found meanwhile
            done = [f for f in self._pending if f.done()]
            self._pending = [f for f in self._pending if not f.done()]
            for f in done:
                f.result()
        return future

    def _hash_through(self, shard: str, position: int, data: memoryview) -> None:
        digest = self._digests.setdefault(shard, hashlib.sha256())
        done = self._positions.get(shard, 0)
        if position > done:
            self._hash_file(shard, digest, done, position)
            done = position
        end = position + data.nbytes
        if end > done:
            digest.update(data[done - position :])
            done = end
        self._positions[shard] = done

    def _finish_shard(self, shard: str) -> None:
        if shard in self.verified:
            return
        digest = self._digests.setdefault(shard, hashlib.sha256())
        path = self.directory / shard
        self._hash_file(shard, digest, self._positions.get(shard, 0), path.stat().st_size)
        actual = digest.hexdigest()
        if actual != self.expected[shard]:
            raise checksum_mismatch(path, actual, self.expected[shard])
        self.verified.append(shard)

    def _hash_file(self, shard: str, digest, begin: int, end: int, chunk_bytes: int = 1 << 24) -> None:
        if end <= begin:
            return
        with open(self.directory / shard, "rb") as handle:
            handle.seek(begin)
            while begin < end and (chunk := handle.read(min(chunk_bytes, end - begin))):
                digest.update(chunk)
                begin += len(chunk)
        self._positions[shard] = begin

    def __enter__(self) -> StreamingVerifier:
        return self

    def __exit__(self, *exc) -> None:
        self.shutdown()


def verify_checkpoint(
    directory: str | os.PathLike, *, defer_shards: bool = False, share: tuple[int, int] = (0, 1)
) -> dict[str, Any]:
    """Check every file listed in lineage.json against its sha256; return the lineage record.

    Raises CheckpointError naming the first missing, truncated or altered file. Files are
    hashed in parallel threads (hashlib releases the GIL), since hashing tens of GB of shards
    on one core would otherwise cost more than reading them. With `defer_shards` the weight
    shards are only checked to exist: the caller reads them all anyway and checks their
    sha256 from those very bytes (`StreamingVerifier`) before it publishes anything. With
    `share=(rank, ranks)` only every ranks-th listed file from the rank-th is hashed: the ranks of
    a job split the reading (lineage.checkpoints.distributed.verify_shared); presence is checked by all.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise CheckpointError(f"{directory}: checkpoint directory does not exist")
    lineage = read_lineage(directory)
    expected = dict(sorted(lineage.get("files", {}).items()))
    for name in expected:
        if not (directory / name).is_file():
            raise CheckpointError(f"{directory / name}: listed in {LINEAGE_NAME} but missing")
    if defer_shards:
        expected = {name: digest for name, digest in expected.items() if not name.endswith(".safetensors")}
    rank, ranks = share
    expected = dict(list(expected.items())[rank::ranks])
    workers = max(1, min(len(expected), os.cpu_count() or 1, 8))
    with ThreadPoolExecutor(workers) as pool:
        actual = dict(zip(expected, pool.map(sha256_file, [directory / name for name in expected]), strict=True))
    for name, digest in expected.items():
        if actual[name] != digest:
            raise checksum_mismatch(directory / name, actual[name], digest)
    for shard in shard_files(directory):
        if not (directory / shard).is_file():
            raise CheckpointError(f"{directory / shard}: listed in {INDEX_NAME} but missing")
    return lineage


def unchanged_files(directory: str | os.PathLike, lineage: Mapping[str, Any]) -> set[str]:
    """Files whose size and mtime are still those lineage.json recorded, so their sha256 still holds.

    A file recorded with the very mtime lineage.json itself has is left out (the "racy" case of
    git's index): it could have been rewritten within one tick of the file system's clock
    after it was recorded, keeping its mtime. Checkpoints written before sizes and times were
    recorded have none, and all their files are hashed.
    """
    directory = Path(directory)
    recorded = lineage.get("file_stats") or {}
    try:
        written = (directory / LINEAGE_NAME).stat().st_mtime_ns
    except FileNotFoundError:
        return set()
    trusted = set()
    for name, stat in recorded.items():
        try:
            now = (directory / name).stat()
        except FileNotFoundError:
            continue
        if [now.st_size, now.st_mtime_ns] == [stat.get("size"), stat.get("mtime_ns")] and now.st_mtime_ns < written:
            trusted.add(name)
    return trusted
