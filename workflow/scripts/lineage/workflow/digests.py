"""Content digests of the lineage's artifacts, so that what reruns follows bytes, not file times.

Every large artifact (a checkpoint directory, a data set, a reference or eval records file) has a
companion `<artifact>.sha256` in sha256sum's format (`sha256sum -c` reads it), written by the job
that made the artifact (workflow/scripts/digest_artifact.py). A job downstream takes the
companion as its input and the artifact with its time ignored (rules/common.smk `by_content`).
Snakemake records the checksum of small inputs and does not rerun a job whose input is newer
but holds the bytes it recorded: a copy or a restored backup, with every time new, plans nothing,
and a changed artifact plans what it feeds.

At start-up (the main Snakemake process only):
- external inputs (the battle export, the Stage-1 checkpoint, mixture files) get a companion
  under results/<scale>/inputs/, rewritten only when their content changed (`record_external`);
- every companion is checked against its artifact (`check_companions`); an artifact that no
  longer matches is set aside (`<artifact>.damaged`) and its companion names the files, so the
  job that made it is planned again before any job reads it.
Both hash a file only when its size or mtime moved since it was last hashed (`DigestCache`, the
rule git and rsync use; a checkpoint's lineage.json vouches for its own files the same way), so
a start-up does not reread tens of GB that did not change.

Nothing here imports torch: the rules read it while Snakemake parses.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from lineage.checkpoints.directory import read_lineage
from lineage.checkpoints.format import LINEAGE_NAME, CheckpointError
from lineage.checkpoints.verify import unchanged_files
from lineage.io import sha256_file, write_text

SUFFIX = ".sha256"
DAMAGED = ".damaged"
EXTERNAL_DIR = "inputs"


def companion_of(artifact: str | os.PathLike) -> Path:
    """`results/x/models/sftw2` -> `results/x/models/sftw2.sha256` (beside it, file or directory)."""
    return Path(str(artifact).rstrip("/") + SUFFIX)


def external_companion(artifact: str | os.PathLike, root: str | os.PathLike) -> Path:
    """An external input's companion: its path mirrored under `<root>/inputs/` (`..` spelled `up`)."""
    parts = [part.replace("..", "up") for part in Path(artifact).parts if part != "/"]
    mirrored = Path(root, EXTERNAL_DIR, *parts)
    return mirrored.with_name(mirrored.name + SUFFIX)


def artifact_files(artifact: Path) -> list[Path]:
    """The files that make an artifact: itself, or every file under the directory (Snakemake's
    own markers left out)."""
    if artifact.is_file():
        return [artifact]
    return sorted(p for p in artifact.rglob("*") if p.is_file() and not p.name.startswith(".snakemake"))


@dataclass
class DigestCache:
    """sha256 of files by path, trusted while the file keeps the size and mtime it was hashed at.

    An entry made within the file system's clock tick of the file's mtime is not trusted (git's
    "racy" case: a rewrite in the same tick keeps the mtime). Saved atomically; concurrent
    writers lose at most each other's entries, which costs a rehash, never a wrong digest.
    """

    path: Path | None = None
    entries: dict[str, list[int | str]] = field(default_factory=dict)
    hashed_bytes: int = 0
    hashed_files: int = 0
    trusted_bytes: int = 0
    changed: bool = False

    @classmethod
    def load(cls, path: str | os.PathLike) -> DigestCache:
        path = Path(path)
        try:
            entries = json.loads(path.read_text())["files"]
        except (FileNotFoundError, ValueError, KeyError, TypeError):
            entries = {}
        return cls(path=path, entries=entries)

    def sha256(self, file: Path, vouched: str | None = None) -> str:
        """The file's sha256: from the cache while its stat holds, else `vouched` (a digest some
        record made at the file's current stat, e.g. lineage.json's), else read."""
        stat = file.stat()
        key = str(file)
        entry = self.entries.get(key)
        if entry and entry[:2] == [stat.st_size, stat.st_mtime_ns] and stat.st_mtime_ns < int(entry[3]):
            self.trusted_bytes += stat.st_size
            return str(entry[2])
        if vouched is not None:
            digest = vouched
            self.trusted_bytes += stat.st_size
        else:
            digest = sha256_file(file)
            self.hashed_bytes += stat.st_size
            self.hashed_files += 1
        self.entries[key] = [stat.st_size, stat.st_mtime_ns, digest, time.time_ns()]
        self.changed = True
        return digest

    def save(self) -> None:
        if not (self.changed and self.path):
            return
        write_text(self.path, json.dumps({"files": self.entries}, sort_keys=True) + "\n")
        self.changed = False


def _vouched(artifact: Path) -> dict[Path, str]:
    """Digests a checkpoint's lineage.json holds for files still at the size and mtime it recorded."""
    if not (artifact.is_dir() and (artifact / LINEAGE_NAME).is_file()):
        return {}
    try:
        lineage = read_lineage(artifact)
    except (CheckpointError, ValueError):  # unreadable: every file is read instead
        return {}
    files = lineage.get("files", {})
    return {artifact / name: files[name] for name in unchanged_files(artifact, lineage) if name in files}


def digest_lines(artifact: str | os.PathLike, cache: DigestCache | None = None, base: Path | None = None) -> str:
    """sha256sum's lines for an artifact, names relative to `base` (default: the companion's folder)."""
    artifact = Path(artifact)
    if not artifact.exists():
        raise FileNotFoundError(f"{artifact}: no such file or directory to digest")
    cache = cache or DigestCache()
    base = base or companion_of(artifact).parent
    vouched = _vouched(artifact)
    lines = []
    for file in artifact_files(artifact):
        name = os.path.relpath(file, base)
        lines.append(f"{cache.sha256(file, vouched.get(file))}  {name}\n")
    return "".join(lines)


def write_if_changed(path: Path, text: str) -> bool:
    """Write `text` atomically unless the file already holds it (its mtime then stays)."""
    try:
        if path.read_text() == text:
            return False
    except FileNotFoundError:
        pass
    write_text(path, text)
    return True


def write_companion(artifact: str | os.PathLike, cache: DigestCache | None = None) -> Path:
    """A job's last step: the companion of what it wrote."""
    companion = companion_of(artifact)
    write_if_changed(companion, digest_lines(artifact, cache))
    return companion


def record_external(artifact: str | os.PathLike, companion: Path, cache: DigestCache) -> bool:
    """An external input's companion (names relative to the working directory); True when its
    content changed. A missing input writes nothing: Snakemake reports it as a missing input."""
    if not Path(artifact).exists():
        return False
    return write_if_changed(companion, digest_lines(artifact, cache, base=Path(".")))


def mismatches(companion: Path, cache: DigestCache) -> list[str]:
    """What no longer matches a companion: files missing or holding other bytes."""
    problems = []
    artifact = Path(str(companion).removesuffix(SUFFIX))
    vouched = _vouched(artifact)
    for line in companion.read_text().splitlines():
        if line.startswith("#"):
            continue
        digest, _, name = line.partition("  ")
        file = companion.parent / name
        if not file.is_file():
            problems.append(f"{file}: missing")
        elif cache.sha256(file, vouched.get(file)) != digest:
            problems.append(f"{file}: other bytes than its digest in {companion.name}")
    return problems


def check_companions(companions: Iterable[Path], cache: DigestCache) -> dict[Path, list[str]]:
    """Set aside each artifact whose bytes changed since its job wrote it; {artifact: problems}.

    The artifact moves to `<artifact>.damaged` (a rename: nothing is read or lost, and nothing can
    read it by its name any more), and its companion gets the problems as `# damaged:` lines. So
    Snakemake sees what it needs to plan the job again: the readers' input (the companion) holds
    other bytes than they recorded, and the artifact they need is missing.
    """
    damaged = {}
    for companion in companions:
        artifact = Path(str(companion).removesuffix(SUFFIX))
        if not artifact.exists():  # set aside before, or removed: Snakemake plans its job when needed
            continue
        problems = mismatches(companion, cache)
        if problems:
            aside = artifact.with_name(artifact.name + DAMAGED)
            if aside.is_dir():
                shutil.rmtree(aside)  # an older damaged copy of the same artifact
            os.replace(artifact, aside)
            with companion.open("a") as out:
                out.writelines(f"# damaged: {problem}\n" for problem in problems)
            damaged[artifact] = problems
    return damaged


def companions_under(root: str | os.PathLike) -> list[Path]:
    """The companions of the artifacts the workflow made under `root` (external ones excluded)."""
    root = Path(root)
    return sorted(
        p for p in root.rglob(f"*{SUFFIX}") if p.is_file() and EXTERNAL_DIR not in p.relative_to(root).parts[:1]
    )
