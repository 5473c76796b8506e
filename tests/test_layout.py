"""The package layout is the architecture: the core imports no layer, no layer imports `workflow`,
and no two modules import each other, directly or around a longer circle (deferred imports count)."""

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest
from workflow_helpers import REPO

PACKAGE = REPO / "workflow" / "scripts" / "lineage"
LAYERS = ("checkpoints", "data", "training", "soup", "evaluation", "workflow")
CORE_PACKAGES = ("families",)  # packages of the core: they import no layer, as its modules


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports_of(path: Path) -> set[str]:
    """The lineage modules a file imports anywhere in its body (a deferred import is still an edge)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "lineage":
            for alias in node.names:
                candidate = f"{node.module}.{alias.name}"
                found.add(candidate if candidate in MODULES else node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "lineage")
    return {name for name in found if name in MODULES}


GRAPH = {name: imports_of(path) - {name} for name, path in MODULES.items()}


def layer_of(module: str) -> str:
    """`core` for the modules directly in lineage/ and in its core packages, else the layer package's name."""
    parts = module.split(".")
    return parts[1] if len(parts) >= 2 and parts[1] in LAYERS else "core"


def test_every_module_sits_in_the_core_or_a_named_layer():
    packages = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert packages == set(LAYERS) | set(CORE_PACKAGES)
    for layer in (*LAYERS, *CORE_PACKAGES):
        docstring = ast.get_docstring(ast.parse((PACKAGE / layer / "__init__.py").read_text()))
        assert docstring, f"lineage/{layer}/__init__.py must say what lives there and what may import it"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if layer_of(m) == "core"))
def test_the_core_imports_no_layer(module):
    layered = sorted(m for m in GRAPH[module] if layer_of(m) != "core")
    assert not layered, f"{MODULES[module].relative_to(REPO)} (core) imports {layered}: move it into a layer"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if layer_of(m) not in ("core", "workflow")))
def test_no_layer_imports_the_workflow_package(module):
    upward = sorted(m for m in GRAPH[module] if layer_of(m) == "workflow")
    assert not upward, f"{MODULES[module].relative_to(REPO)} imports {upward}, which only rule files may import"


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle (its modules in order), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt] if nxt in path else [node, nxt]
            if nxt not in state and (cycle := visit(nxt, [*path, nxt])):
                return cycle
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start, [start])):
            return cycle
    return None


def test_no_module_import_circle():
    # A package's __init__ is not an edge to its own modules: importing lineage.data.x runs lineage/data/__init__.
    graph = {m: {d for d in deps if not m.startswith(d + ".")} for m, deps in GRAPH.items()}
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph))


def test_the_layers_form_no_circle():
    edges = {layer: set() for layer in ("core", *LAYERS)}
    for module, deps in GRAPH.items():
        edges[layer_of(module)].update(layer_of(d) for d in deps if layer_of(d) != layer_of(module))
    assert find_cycle(edges) is None, " -> ".join(find_cycle(edges))


def test_the_circle_finder_finds_a_circle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_what_the_rule_files_import_needs_no_torch():
    """Snakemake parses the workflow in a second: the modules rules/common.smk imports, and the
    benchmark declarations they read, load without torch or transformers."""
    imported = [
        line.split()[1]
        for line in (REPO / "rules" / "common.smk").read_text().splitlines()
        if line.startswith("from lineage")
    ]
    assert "lineage.evaluation.benchmarks" in imported
    code = (
        "import sys\n"
        + "".join(f"import {name}\n" for name in imported)
        + "print(sorted({'torch', 'transformers'} & set(sys.modules)))"
    )
    env = {**os.environ, "PYTHONPATH": str(PACKAGE.parent)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_start_up_checks_import_no_torch():
    """Building the lineage at start-up runs the checks that read files (lineage/workflow/checks.py: the source
    formats, the verifier prompts against the eval items, whose find_overlap lives in lineage/data/verifier.py):
    their deferred imports load without torch or transformers too."""
    code = (
        "import sys\nfrom pathlib import Path\nimport yaml\n"
        "from lineage.canonical import numbers_by_schema\n"
        "from lineage.workflow.runs import build_lineage\n"
        "from lineage.workflow.schema import load_schema\n"
        "schema = load_schema(Path('workflow/schemas/config.schema.yaml'))\n"
        "lineage = build_lineage(numbers_by_schema(yaml.safe_load(Path('config.yaml').read_text()), schema))\n"
        "assert lineage.verifier_rounds and 'lineage.data.verifier' in sys.modules\n"
        "print(sorted({'torch', 'transformers'} & set(sys.modules)))"
    )
    env = {**os.environ, "PYTHONPATH": str(PACKAGE.parent)}
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "[]"
