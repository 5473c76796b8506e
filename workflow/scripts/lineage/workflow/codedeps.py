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
import functools
import hashlib
from pathlib import Path


def import_closure(script: str | Path, root: str | Path) -> list[str]:
    """`script` and every project module it imports transitively, as sorted paths relative to
    the current directory's view of `root` (the spelling Snakemake compares)."""
    root = Path(root)
    found: set[Path] = set()
    pending = [Path(script)]
    while pending:
        path = pending.pop()
        if path in found:
            continue
        found.add(path)
        pending.extend(_imported_files(path.resolve(), root.resolve()))
    base = root.resolve()
    return sorted(str(root / p.resolve().relative_to(base)) for p in found)


def code_digest(script: str | Path, root: str | Path) -> str:
    """`<file>:<digest>` for `script` and every project module it imports, space-separated, in
    path order (paths relative to `root`; 16 hex digits of each file's syntax digest)."""
    root = Path(root)
    return " ".join(
        f"{Path(name).relative_to(root)}:{syntax_digest(Path(name).resolve())[:16]}"
        for name in import_closure(script, root)
    )


@functools.cache
def syntax_digest(path: Path) -> str:
    """sha256 of a module's syntax without its docstrings: what runs, not how it is written."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                node.body = node.body[1:] or [ast.Pass()]
    return hashlib.sha256(ast.unparse(tree).encode("utf-8")).hexdigest()


@functools.cache
def _imported_files(path: Path, root: Path) -> tuple[Path, ...]:
    """Project files that importing `path` executes directly (not transitively)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except SyntaxError as err:
        raise SyntaxError(f"{path}: cannot compute its imports ({err.msg}, line {err.lineno})") from None
    package = _package_of(path, root)
    files: list[Path] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                files += _module_files(alias.name.split("."), root)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve_from(node, package)
            if base is None:
                continue
            files += _module_files(base, root)
            for alias in node.names:  # `from pkg import mod` imports pkg/mod.py when it is a module
                if alias.name != "*":
                    files += _module_files([*base, alias.name], root, only_last=True)
    return tuple(dict.fromkeys(f for f in files if f != path))


def _package_of(path: Path, root: Path) -> list[str]:
    """The dotted package `path` belongs to, as parts (empty for a top-level script)."""
    relative = path.relative_to(root) if path.is_relative_to(root) else Path(path.name)
    return list(relative.parts[:-1])


def _resolve_from(node: ast.ImportFrom, package: list[str]) -> list[str] | None:
    """The module parts named by `from X import ...`, with relative levels resolved."""
    names = node.module.split(".") if node.module else []
    if node.level == 0:
        return names
    if node.level - 1 > len(package):
        return None
    return [*package[: len(package) - (node.level - 1)], *names]


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


@functools.cache
def _lists_its_folder(init: Path) -> bool:
    """A package that imports its modules by listing its folder (`pkgutil.iter_modules(__path__)`,
    a registry such as lineage.evaluation.benchmarks) depends on every module it finds there."""
    tree = ast.parse(init.read_text(encoding="utf-8"), filename=str(init))
    return any(
        isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == "iter_modules"
        for node in ast.walk(tree)
    )
