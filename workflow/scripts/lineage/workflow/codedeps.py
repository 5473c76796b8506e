"""The code a workflow script runs: its import closure inside `workflow/scripts`, by meaning.

A job's output depends on the script it runs and on every module of the project that script
imports, directly or through other modules. The workflow gives each job a tracked param naming
those files, each with a digest of its syntax (`code_digest`): the module parsed, its docstrings
dropped, written back by `ast.unparse`, so comments, docstrings, blank lines, quoting and
formatting change nothing, nor do a file's modification time or a copy of the project. A package
that imports its modules by listing its folder depends on each module there. A
changed statement changes its file's digest: exactly the jobs whose code holds it rerun (and
what descends from them), and the param's change says which file. The closure is read from the source with `ast`, never by importing it: an import
anywhere in a file counts (inside functions too), and importing a module also runs the
`__init__.py` of every package above it. Imports of anything outside the root (the standard
library, torch, ...) are not followed; their versions are the software environment's business.
"""

from __future__ import annotations

import ast
import atexit
import functools
import hashlib
import json
import os
from pathlib import Path


def import_closure(script: str | Path, root: str | Path) -> list[str]:
    """`script` and every project module it imports transitively, as sorted paths relative to
    the current directory's view of `root` (the spelling Snakemake compares)."""
    base = Path(root).resolve()
    return sorted(str(Path(root) / path.relative_to(base)) for path in _closure(Path(script).resolve(), base))


@functools.cache
def code_digest(script: str | Path, root: str | Path) -> str:
    """`<file>:<digest>` for `script` and every project module it imports, space-separated, in
    path order (paths relative to `root`; 16 hex digits of each file's syntax digest). Once per script
    and process: the rules of many runs share a script, and a parse asks for each rule's code."""
    base = Path(root).resolve()
    files = sorted((path.relative_to(base), path) for path in _closure(Path(script).resolve(), base))
    return " ".join(f"{relative}:{syntax_digest(path)[:16]}" for relative, path in files)


def _closure(script: Path, base: Path) -> set[Path]:
    """The absolute paths of `script` and of every project module it imports, transitively."""
    found: set[Path] = set()
    pending = [script]
    while pending:
        path = pending.pop()
        if path not in found:
            found.add(path)
            pending.extend(_imported_files(path, base))
    return found


def syntax_digest(path: Path) -> str:
    """sha256 of a module's syntax without its docstrings: what runs, not how it is written."""
    return _facts(path)["digest"]


# What a parse learns of a source file (its syntax digest, its import statements, whether it lists its folder)
# depends on the file's bytes alone: kept by the bytes' sha256, in this process and, once `keep_facts` named a
# file, across processes. Every Snakemake start (each job of a Slurm run starts one) parses every module of
# every rule's closure otherwise; reading and hashing the bytes is ~1% of that.
_KNOWN: dict[str, dict] = {}
_USED: set[str] = set()


def keep_facts(path: str | Path) -> None:
    """Read the facts kept in `path` and write back the ones this process used when it exits (atomically; two
    writers lose at most each other's entries, which costs a parse, never a wrong digest)."""
    path = Path(path)
    try:
        _KNOWN.update(json.loads(path.read_text()))
    except (FileNotFoundError, ValueError, TypeError):
        pass

    def save() -> None:
        if not _USED:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        temporary.write_text(json.dumps({key: _KNOWN[key] for key in sorted(_USED)}))
        os.replace(temporary, path)

    atexit.register(save)


def _facts(path: Path) -> dict:
    stat = path.stat()  # a file is read and hashed once a process while its size and time stay
    return _facts_of_version(path, stat.st_mtime_ns, stat.st_size)


@functools.cache
def _facts_of_version(path: Path, mtime_ns: int, size: int) -> dict:
    source = path.read_bytes()
    key = hashlib.sha256(source).hexdigest()
    _USED.add(key)
    if key not in _KNOWN:
        _KNOWN[key] = _parse_facts(source, path)
    return _KNOWN[key]


def _parse_facts(source: bytes, path: Path) -> dict:
    try:
        tree = ast.parse(source.decode("utf-8"), filename=str(path))
    except SyntaxError as err:
        raise SyntaxError(f"{path}: cannot compute its imports ({err.msg}, line {err.lineno})") from None
    imports, lists_folder = [], False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imports += [[0, alias.name, None] for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            imports.append([node.level, node.module, [alias.name for alias in node.names]])
        elif (
            isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == "iter_modules"
        ):
            lists_folder = True
    for node in ast.walk(tree):  # the docstrings dropped: what runs, not how it is written
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                node.body = node.body[1:] or [ast.Pass()]
    digest = hashlib.sha256(ast.unparse(tree).encode("utf-8")).hexdigest()
    return {"digest": digest, "imports": imports, "lists_folder": lists_folder}


@functools.cache
def _imported_files(path: Path, root: Path) -> tuple[Path, ...]:
    """Project files that importing `path` executes directly (not transitively)."""
    package = _package_of(path, root)
    files: list[Path] = []
    for level, module, names in _facts(path)["imports"]:
        if names is None:  # import a.b.c
            files += _module_files(module.split("."), root)
            continue
        base = _resolve_from(level, module, package)
        if base is None:
            continue
        files += _module_files(base, root)
        for name in names:  # `from pkg import mod` imports pkg/mod.py when it is a module
            if name != "*":
                files += _module_files([*base, name], root, only_last=True)
    return tuple(dict.fromkeys(f for f in files if f != path))


def _package_of(path: Path, root: Path) -> list[str]:
    """The dotted package `path` belongs to, as parts (empty for a top-level script)."""
    relative = path.relative_to(root) if path.is_relative_to(root) else Path(path.name)
    return list(relative.parts[:-1])


def _resolve_from(level: int, module: str | None, package: list[str]) -> list[str] | None:
    """The module parts named by `from X import ...` (`level` dots before X), with relative levels resolved."""
    names = module.split(".") if module else []
    if level == 0:
        return names
    if level - 1 > len(package):
        return None
    return [*package[: len(package) - (level - 1)], *names]


def _module_files(parts: list[str], root: Path, *, only_last: bool = False) -> list[Path]:
    """Files under `root` executed by importing the dotted module `parts`: each package's
    `__init__.py` on the way, then the module itself (as `x.py` or `x/__init__.py`)."""
    files = []
    for depth in range(1, len(parts) + 1):
        if only_last and depth < len(parts):
            continue
        stem = root.joinpath(*parts[:depth])
        if (stem / "__init__.py").is_file():
            files.append(stem / "__init__.py")
            if _lists_its_folder(stem / "__init__.py"):
                files += sorted(p for p in stem.glob("*.py") if p.name != "__init__.py")
        elif stem.with_suffix(".py").is_file():
            files.append(stem.with_suffix(".py"))
            break  # a module, not a package: what follows is an attribute
        else:
            break  # not ours (standard library, site-packages) or an attribute
    return files


def _lists_its_folder(init: Path) -> bool:
    """A package that imports its modules by listing its folder (`pkgutil.iter_modules(__path__)`,
    a registry such as lineage.evaluation.benchmarks) depends on every module it finds there."""
    return _facts(init)["lists_folder"]
