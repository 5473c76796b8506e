"""Checkpoint directories of the lineage: write them whole or not at all, verify before reading.

A checkpoint is a Hugging Face directory (sharded safetensors + index, `config.json`,
tokenizer files) plus the bundle files served with the model and a `lineage.json` that
records where it came from and the sha256 of every file. Readers call `verify_checkpoint`
first, so a truncated or altered shard is refused before anything trains on it.

lineage.json also records each file's size and modification time. A reader that may trust
them (the soup, by default) re-hashes only files that `unchanged_files` does not vouch for, the
rule git, rsync and make use: it catches truncation, rewrites and replaced files at no cost,
and leaves bit rot or a deliberately restored mtime to a full check.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lineage.io import atomic_path, sha256_file, sha256_json
from lineage.shards import INDEX_NAME, CheckpointError, ShardWriter, checksum_mismatch, shard_files, weight_map

if TYPE_CHECKING:
    import torch

LINEAGE_NAME = "lineage.json"
BUNDLE_FILES = ("chat_template.jinja", "system_prompt.txt", "generation_config.json", "serving_config.json")
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")
CONFIG_NAME = "config.json"

__all__ = [
    "BUNDLE_FILES",
    "CheckpointError",
    "LINEAGE_NAME",
    "copy_companion_files",
    "init_root",
    "load_model",
    "read_lineage",
    "save_checkpoint",
    "unchanged_files",
    "verify_checkpoint",
    "write_lineage",
]


def read_lineage(directory: str | os.PathLike) -> dict[str, Any]:
    """The checkpoint's lineage record; external checkpoints without one get a synthesised record."""
    directory = Path(directory)
    path = directory / LINEAGE_NAME
    if path.is_file():
        try:
            return json.loads(path.read_text())
        except json.JSONDecodeError as err:
            raise CheckpointError(f"{path}: invalid JSON ({err.msg} at line {err.lineno})") from None
    weight_map(directory)  # raises a clear error for missing or pickled weights
    return {"run": directory.name, "kind": "external", "root": external_root(directory), "files": {}}


def external_root(directory: str | os.PathLike) -> dict[str, str]:
    """Identity of a checkpoint that was not built here: a hash of its config, index and shard sizes.

    Cheap (no pass over tens of GB of shards) yet changes whenever the weights' files change.
    """
    directory = Path(directory)
    sizes = {name: (directory / name).stat().st_size for name in shard_files(directory)}
    config = (directory / CONFIG_NAME).read_text() if (directory / CONFIG_NAME).is_file() else ""
    index = (directory / INDEX_NAME).read_text() if (directory / INDEX_NAME).is_file() else ""
    return {"run": directory.name, "fingerprint": sha256_json([config, index, sizes])}


def init_root(lineage: Mapping[str, Any]) -> dict[str, str]:
    """The initialisation a checkpoint descends from (shared by all runs trained from it)."""
    root = lineage.get("root")
    if not root:
        raise CheckpointError(f"lineage of run {lineage.get('run')!r} has no 'root' entry")
    return dict(root)


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
    a job split the reading (lineage.training.checkpoint_io.verify_shared); presence is checked by all.
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


def write_lineage(
    directory: str | os.PathLike, record: Mapping[str, Any], known_sha256: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """Write lineage.json with the sha256, size and mtime of every other file in the directory.

    `known_sha256` holds checksums computed while the files were written (ShardWriter.sha256);
    those files are not read again, which for a large checkpoint saves a full pass over its shards.
    """
    directory = Path(directory)
    known = dict(known_sha256 or {})
    paths = {
        str(p.relative_to(directory)): p
        for p in sorted(directory.rglob("*"))
        if p.is_file() and p.name != LINEAGE_NAME and not p.name.startswith(".snakemake")
    }
    files = {name: known.get(name) or sha256_file(p) for name, p in paths.items()}
    stats = {name: {"size": st.st_size, "mtime_ns": st.st_mtime_ns} for name, p in paths.items() for st in [p.stat()]}
    full = {**record, "files": files, "file_stats": stats}
    (directory / LINEAGE_NAME).write_text(json.dumps(full, indent=2, default=str) + "\n")
    return full


def copy_companion_files(
    source: str | os.PathLike, target: str | os.PathLike, names: Iterable[str] | None = None
) -> None:
    """Copy config, tokenizer and bundle files (whichever exist) from one checkpoint to another."""
    source, target = Path(source), Path(target)
    for name in names or (CONFIG_NAME, *TOKENIZER_FILES, *BUNDLE_FILES):
        if (source / name).is_file():
            shutil.copy2(source / name, target / name)


def code_version() -> str:
    """The git commit of the workflow (with '-dirty' when the tree has local edits), or 'unknown'."""
    here = Path(__file__).resolve().parent
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, check=True, timeout=10
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=here,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
        return commit + ("-dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def lineage_record(
    *,
    run: str,
    kind: str,
    root: Mapping[str, str],
    parents: list[Mapping[str, Any]] | None = None,
    recipe: Mapping[str, Any] | None = None,
    data: list[Mapping[str, Any]] | None = None,
    started: float | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """Assemble the common fields of a lineage record (files are added by write_lineage)."""
    return {
        "run": run,
        "kind": kind,
        "root": dict(root),
        "parents": [dict(p) for p in parents or []],
        "recipe": dict(recipe or {}),
        "config_hash": sha256_json(recipe or {}),
        "data": [dict(d) for d in data or []],
        "code_version": code_version(),
        "slurm_job_id": os.environ.get("SLURM_JOB_ID"),
        "created_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "wall_time_s": round(time.time() - started, 3) if started else None,
        **extra,
    }


def parent_entry(run: str, directory: str | os.PathLike) -> dict[str, Any]:
    """How a child records one parent: name, path and the hash of the parent's lineage file."""
    directory = Path(directory)
    lineage_file = directory / LINEAGE_NAME
    return {
        "run": run,
        "path": str(directory),
        "lineage_sha256": sha256_file(lineage_file) if lineage_file.is_file() else None,
    }


def save_checkpoint(
    out_dir: str | os.PathLike,
    state_dict: Mapping[str, torch.Tensor],
    *,
    config: Any,
    companions_from: str | os.PathLike | None,
    lineage: Mapping[str, Any],
    dtype: torch.dtype | None = None,
    max_shard_bytes: int = 2 * 1024**3,
) -> dict[str, Any]:
    """Write a complete checkpoint directory atomically and return its lineage record.

    `config` is a transformers PretrainedConfig (saved as config.json); tokenizer and bundle
    files are copied from `companions_from`. Nothing appears at `out_dir` unless all of it was written.
    """
    with atomic_path(out_dir) as tmp:
        tmp.mkdir()
        with ShardWriter(tmp, max_shard_bytes=max_shard_bytes) as writer:
            for name, tensor in state_dict.items():
                writer.add(name, tensor.to(dtype) if dtype is not None and tensor.is_floating_point() else tensor)
        if companions_from is not None:
            copy_companion_files(companions_from, tmp, (*TOKENIZER_FILES, *BUNDLE_FILES))
        if dtype is not None:
            config.dtype = dtype
        config.save_pretrained(tmp)
        record = write_lineage(tmp, lineage, known_sha256=writer.sha256)
    return record


def load_model(
    directory: str | os.PathLike,
    *,
    dtype: torch.dtype | None = None,
    device: str | torch.device = "cpu",
    trust_remote_code: bool = False,
    verify: bool = True,
):
    """Verify a checkpoint (unless the caller did: `verify=False`), then load it with transformers
    from safetensors only."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    from lineage.modeling import check_kernel_shape

    if verify:
        verify_checkpoint(directory)
    device = torch.device(device)
    check_kernel_shape(AutoConfig.from_pretrained(directory), device)
    # straight onto a GPU: several ranks of one node would otherwise each hold the whole model in host memory
    placement = {"device_map": device} if device.type == "cuda" else {}
    model = AutoModelForCausalLM.from_pretrained(
        directory, dtype=dtype, use_safetensors=True, trust_remote_code=trust_remote_code, **placement
    )
    return model.to(device)
