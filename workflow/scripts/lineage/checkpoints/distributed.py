"""Checkpoint I/O from every rank: each reads the bytes of its own shard and writes its own rows.

Loading: every rank maps the checkpoint's safetensors and reads, for each of its sharded
parameters, only the rows FSDP gave it (`safetensors` slices), straight into its local shard.
No rank holds the whole model, and the checkpoint may be in any layout `lineage.checkpoints.layouts` resolves
(the Hub's `backbone.*` with one tensor per expert, or transformers' own names).

Saving: the shards are planned first, by the format's one plan (`plan_shards`: tensors in state-dict
order, a new file when the next one would pass `max_shard_bytes`, each file's tensors in safetensors'
order), so every rank knows each tensor's byte range in each file. Rank 0 creates the
files with their headers; every rank writes its rows at their offsets (pwrite: no gather, no rank
holds more than a tensor's local rows); then each rank hashes and fsyncs its share of the files
from the page cache. The result is byte for byte what one writer of the full state dict produces,
in the names and shapes of the parent's layout, so a lineage started from a Hub checkpoint
publishes the Hub's layout.

Every phase ends with `agree`: a failure on any rank stops every rank with that rank's message,
never a hang at the next collective, and nothing appears at the output unless every rank wrote
its part (lineage.io.atomic_path on rank 0).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import torch
import torch.distributed as dist
from safetensors import safe_open
from torch.distributed.tensor import DTensor, Replicate

from lineage.checkpoints.directory import finish_checkpoint
from lineage.checkpoints.format import (
    INDEX_NAME,
    WRITE_BYTES,
    CheckpointError,
    PlannedShard,
    dtype_name,
    index_bytes,
    plan_shards,
)
from lineage.checkpoints.layouts import Layout, Piece, checkpoint_layout, native_layout
from lineage.checkpoints.load import load_model
from lineage.checkpoints.read import weight_map
from lineage.checkpoints.verify import verify_checkpoint
from lineage.io import atomic_path, sha256_file


class Ranks(Protocol):
    """What a checkpoint phase needs of the job's ranks (lineage.training.dist.DistEnv has it)."""

    rank: int
    world_size: int

    @property
    def is_main(self) -> bool: ...


__all__ = ["agree", "load_into", "load_replica", "phase", "save_from", "verify_shared"]


# -- agreement between ranks -------------------------------------------------------------------------


class RankError(CheckpointError):
    """A rank failed a checkpoint phase; every rank raises it with that rank's message."""


def agree(env: Ranks, error: BaseException | None) -> None:
    """Collective: raise on every rank when any rank brings an error (the first one's message and kind)."""
    if env.world_size == 1:
        if error is not None:
            raise error
        return
    found: list[Any] = [None] * env.world_size
    dist.all_gather_object(found, None if error is None else (type(error).__name__, str(error)))
    failed = [(rank, item) for rank, item in enumerate(found) if item is not None]
    if not failed:
        return
    if error is not None:
        raise error
    rank, (kind, message) = failed[0]
    raise RankError(f"rank {rank} stopped ({kind}): {message}")


@contextlib.contextmanager
def phase(env: Ranks) -> Iterator[None]:
    """Run a block's local work, then `agree`: every rank leaves it, or every rank raises."""
    error = None
    try:
        yield
    except Exception as err:  # handed to every rank by agree
        error = err
    agree(env, error)


def verify_shared(directory: str | os.PathLike, env: Ranks) -> dict[str, Any]:
    """verify_checkpoint with the hashing spread over the ranks (each its share of the files); every rank
    returns the lineage record or raises the same error."""
    record: dict[str, Any] = {}
    with phase(env):
        record = verify_checkpoint(directory, share=(env.rank, env.world_size))
    return record


def load_replica(directory: str | os.PathLike, env: Ranks, *, dtype: torch.dtype | None = None) -> torch.nn.Module:
    """The whole model on every rank (evaluation and reference replicas): the ranks hash a share of the
    checkpoint's files each (not every rank all 63 GB), and a failure on any rank stops them all with its
    message, never a hang. `env` also needs `device`."""
    verify_shared(directory, env)
    model = None
    with phase(env):
        model = load_model(directory, dtype=dtype, device=env.device, verify=False)
    return model.eval()


# -- which rows a rank holds -------------------------------------------------------------------------


@dataclass(frozen=True)
class Block:
    """The part of a tensor this rank holds: `offsets`/`sizes` per dimension of the full tensor."""

    offsets: tuple[int, ...]
    sizes: tuple[int, ...]
    writes: bool  # False on a replica that another rank writes

    @property
    def empty(self) -> bool:
        return any(size == 0 for size in self.sizes)

    def rows(self, shape: Sequence[int]) -> tuple[int, int]:
        """[first, end) rows of dimension 0; the block must span every other dimension whole."""
        if tuple(self.offsets[1:]) != (0,) * (len(shape) - 1) or tuple(self.sizes[1:]) != tuple(shape[1:]):
            raise CheckpointError(
                f"a block at {list(self.offsets)} of {list(self.sizes)} is not whole rows of {list(shape)}; "
                "only sharding along dimension 0 (FSDP's) is supported"
            )
        return self.offsets[0], self.offsets[0] + self.sizes[0]


def local_block(tensor: torch.Tensor) -> Block:
    """Where `tensor`'s local data lies in the full tensor (a DTensor's chunk; a plain tensor: all of it, rank 0 writes)."""
    if not isinstance(tensor, DTensor):
        rank = dist.get_rank() if dist.is_initialized() else 0
        return Block((0,) * tensor.dim(), tuple(tensor.shape), writes=rank == 0)
    chunks = tensor.__create_chunk_list__()  # torch.distributed.checkpoint's own account of the shard
    if len(chunks) != 1:
        raise CheckpointError(f"a DTensor with {len(chunks)} local chunks; expected one")
    coordinate = tensor.device_mesh.get_coordinate() or []
    first_replica = all(
        coordinate[dim] == 0 for dim, placement in enumerate(tensor.placements) if isinstance(placement, Replicate)
    )
    return Block(tuple(chunks[0].offsets), tuple(chunks[0].sizes), writes=first_replica)


def local_data(tensor: torch.Tensor) -> torch.Tensor:
    return tensor.to_local() if isinstance(tensor, DTensor) else tensor


# -- loading -----------------------------------------------------------------------------------------


class RowReader:
    """Read rows of a checkpoint's tensors through safetensors' memory-mapped slices, one handle per shard."""

    def __init__(self, directory: str | os.PathLike):
        self.directory = Path(directory)
        self.weight_map = weight_map(self.directory)
        self._stack = contextlib.ExitStack()
        self._handles: dict[str, Any] = {}
        self.bytes_read = 0

    def _handle(self, name: str):
        shard = self.weight_map[name]
        if shard not in self._handles:
            try:
                self._handles[shard] = self._stack.enter_context(safe_open(self.directory / shard, framework="pt"))
            except Exception as err:  # safetensors' own error types
                raise CheckpointError(f"{self.directory / shard}: unreadable safetensors shard ({err})") from None
        return self._handles[shard]

    def _rows(self, name: str, index: tuple[slice, ...]) -> torch.Tensor:
        handle = self._handle(name)
        return handle.get_slice(name)[index] if index else handle.get_tensor(name)

    def read(self, piece: Piece, block: Block) -> torch.Tensor:
        """The block of the model tensor `piece` describes, as stored (dtype of the checkpoint)."""
        index = tuple(slice(o, o + s) for o, s in zip(block.offsets, block.sizes, strict=True))
        if not piece.stacked:
            tensor = self._rows(piece.sources[0], index)
        else:
            tensor = torch.stack([self._rows(name, index[1:]) for name in piece.sources[index[0]]])
        self.bytes_read += tensor.nbytes
        return tensor

    def close(self) -> None:
        self._stack.close()
        self._handles.clear()

    def __enter__(self) -> RowReader:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def load_into(
    model: torch.nn.Module, directory: str | os.PathLike, env: Ranks, *, skip: Sequence[str] = ()
) -> tuple[Layout, int]:
    """Fill every rank's local shard of `model` (sharded, materialised) from the checkpoint; return its
    layout and the bytes this rank read. `skip` names tied aliases, filled through their first name."""
    layout: Layout | None = None
    with phase(env):
        layout = checkpoint_layout(directory, model, skip)
    assert layout is not None
    read = 0
    with phase(env), RowReader(directory) as reader, torch.no_grad():
        for name, tensor in model.state_dict(keep_vars=True).items():
            if name in skip:
                continue
            block, local = local_block(tensor), local_data(tensor)
            if block.empty:
                continue
            data = reader.read(layout.pieces[name], block)
            if tuple(data.shape) != tuple(local.shape):
                raise CheckpointError(
                    f"{directory}: read {list(data.shape)} for {name} but this rank holds {list(local.shape)}"
                )
            local.copy_(data)
        read = reader.bytes_read
    return layout, read


# -- saving ------------------------------------------------------------------------------------------


class RowWriter:
    """pwrite this rank's rows into the planned files (opened once each, in the temporary directory)."""

    def __init__(self, directory: Path, files: Sequence[PlannedShard]):
        self.directory = directory
        self.where = {name: (f.name, offset) for f in files for name, offset in f.offsets.items()}
        self._fds: dict[str, int] = {}
        self.bytes_written = 0

    def write(self, name: str, data: torch.Tensor, skip_bytes: int = 0) -> None:
        """Write `data` (contiguous, CPU) at checkpoint tensor `name`'s offset plus `skip_bytes`."""
        file, offset = self.where[name]
        if file not in self._fds:
            self._fds[file] = os.open(self.directory / file, os.O_WRONLY)
        raw = memoryview(data.contiguous().reshape(-1).view(torch.uint8).numpy())
        at = offset + skip_bytes
        for begin in range(0, raw.nbytes, WRITE_BYTES):
            piece = raw[begin : begin + WRITE_BYTES]
            while piece.nbytes:  # pwrite may write less than asked
                done = os.pwrite(self._fds[file], piece, at)
                piece, at = piece[done:], at + done
        self.bytes_written += raw.nbytes

    def close(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()


def write_rows(writer: RowWriter, piece: Piece, block: Block, data: torch.Tensor, shape: Sequence[int]) -> None:
    """Write a rank's block of one model tensor: a row range of one stored tensor, or whole stored rows."""
    first, end = block.rows(shape) if len(shape) else (0, 1)
    if not piece.stacked:
        row_bytes = data[0].nbytes if data.dim() else 0
        writer.write(piece.sources[0], data, skip_bytes=first * row_bytes)
        return
    for row in range(first, end):
        writer.write(piece.sources[row], data[row - first])


def _stored(tensor: torch.Tensor, dtype: torch.dtype | None) -> torch.dtype:
    return dtype if dtype is not None and tensor.dtype.is_floating_point else tensor.dtype


@contextlib.contextmanager
def shared_atomic_dir(out: str | os.PathLike, env: Ranks) -> Iterator[Path]:
    """A temporary directory rank 0 renames onto `out` once every rank's block succeeded (all ranks yield it)."""
    with contextlib.ExitStack() as stack:
        path: list[Any] = [None]
        with phase(env):
            if env.is_main:
                tmp = stack.enter_context(atomic_path(out))
                tmp.mkdir()
                path[0] = str(tmp)
        if env.world_size > 1:
            dist.broadcast_object_list(path, src=0)
        error = None
        try:
            yield Path(path[0])
        except Exception as err:
            error = err
        agree(env, error)  # a rank that failed removes the temporary on rank 0 (the ExitStack unwinds with it)


def save_from(
    model: torch.nn.Module,
    out: str | os.PathLike,
    env: Ranks,
    *,
    layout: Layout | None,
    config: Any,
    companions_from: str | os.PathLike | None,
    lineage: Mapping[str, Any],
    dtype: torch.dtype | None = None,
    skip: Sequence[str] = (),
    max_shard_bytes: int = 2 * 1024**3,
) -> dict[str, int]:
    """Write `model` (sharded) as a checkpoint at `out` in `layout` (None: the model's own names), from
    every rank. Returns this rank's counts (bytes written, bytes hashed). Collective."""
    state = {name: tensor for name, tensor in model.state_dict().items() if name not in set(skip)}
    shapes = {name: tuple(tensor.shape) for name, tensor in state.items()}
    layout = layout or native_layout(list(state))
    stored = {name: dtype_name(_stored(tensor, dtype)) for name, tensor in state.items()}
    specs = [(ckpt, stored[target], shape) for target, ckpt, shape in layout.checkpoint_specs(shapes)]
    files, total = plan_shards(specs, max_shard_bytes)
    counts = {"bytes_written": 0, "bytes_hashed": 0}
    with shared_atomic_dir(out, env) as tmp:
        with phase(env):
            if env.is_main:
                for planned in files:
                    with open(tmp / planned.name, "wb") as handle:
                        handle.write(planned.prefix)
                        handle.truncate(planned.size)
        with phase(env):
            writer = RowWriter(tmp, files)
            try:
                for name, tensor in state.items():
                    block = local_block(tensor)
                    if block.empty or not block.writes:
                        continue
                    data = local_data(tensor).detach().to(_stored(tensor, dtype)).cpu()
                    write_rows(writer, layout.pieces[name], block, data, shapes[name])
            finally:
                writer.close()
            counts["bytes_written"] = writer.bytes_written
        digests: dict[str, str] = {}
        with phase(env):
            for planned in files[env.rank :: env.world_size]:
                digests[planned.name] = sha256_file(tmp / planned.name)
                counts["bytes_hashed"] += planned.size
                fd = os.open(tmp / planned.name, os.O_RDONLY)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
        if env.world_size > 1:
            shares: list[Any] = [None] * env.world_size
            dist.all_gather_object(shares, digests)
            digests = {name: digest for share in shares for name, digest in share.items()}
        with phase(env):
            if env.is_main:
                weight_names = {ckpt: f.name for f in files for ckpt in f.offsets}
                text = index_bytes(weight_names, {"total_size": total})
                (tmp / INDEX_NAME).write_bytes(text)
                digests[INDEX_NAME] = hashlib.sha256(text).hexdigest()
                finish_checkpoint(tmp, lineage, digests, companions_from=companions_from, config=config, dtype=dtype)
    return counts
