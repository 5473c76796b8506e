"""Each conda environment of envs/ lists every package its rules' scripts import (issue: GPU environments that build).

The rule files name, per rule, the environments it may run in (`conda:`, a CPU and a GPU choice for the training
and evaluation rules) and the scripts its shell runs. A script's imports are read from its source and its project
modules', followed as Python follows them: what a module imports at its top (and in class bodies) is needed as
soon as the script starts; what a function imports is needed when that path runs. An environment must list:
- every package imported at start-up, whatever the device;
- in a GPU environment, also every package a function imports: the full scale takes every path (a CPU
  environment's on-demand imports are the GPU paths' kernels and loaders its rules never call, which a static
  scan cannot tell apart; the CPU paths run end to end in the tests);
- neither, for imports inside `try: ... except ImportError` (optional by design) or `if TYPE_CHECKING:`.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = REPO / "workflow" / "scripts"
LAUNCHER = "launch_ranks.py"  # {params.launch}: the workflow's launcher, which starts the script's ranks

# torch's Linux wheel depends on the triton it was built with: a separate pin could only disagree with it
PROVIDED = {"triton": "torch"}
# the optional FlashAttention-4 beta (requirements-gpu.txt says why it is left out of envs/): refused with a
# message naming it where a recipe asks for it (lineage/training/flash_attention_4.py)
# the trackers a user may name besides the shipped TensorBoard files (README "Tracking"): imported only when named,
# refused at the trainer's command line with the pip command where absent (lineage/training/tracking.py)
UNLISTED = {"flash_attn", "wandb", "mlflow", "trackio"}
DISTRIBUTION = {"yaml": "pyyaml", "lm_eval": "lm-eval", "huggingface_hub": "huggingface-hub"}


class Imports:
    """Third-party modules a script needs, at start-up and on demand, across its project modules."""

    def __init__(self):
        self.at_start: dict[str, str] = {}  # module -> the project file that imports it
        self.on_demand: dict[str, str] = {}
        self._seen: dict[Path, bool] = {}

    def follow(self, path: Path, at_start: bool = True) -> None:
        if self._seen.get(path) is True or (path in self._seen and not at_start):
            return
        self._seen[path] = at_start
        tree = ast.parse(path.read_text(), filename=str(path))
        for node, in_function, optional in _imports(tree.body):
            if optional:
                continue
            for name, files in _resolved(node, path):
                needed_now = at_start and not in_function
                if files:
                    for file in files:
                        self.follow(file, needed_now)
                elif name not in sys.stdlib_module_names:
                    (self.at_start if needed_now else self.on_demand).setdefault(name, _relative(path))
        listing = _lists_folder(tree) if path.name == "__init__.py" else None
        if listing:  # a registry that imports the modules its folder holds (pkgutil.iter_modules)
            for module in sorted(path.parent.glob("*.py")):
                if module != path:
                    self.follow(module, at_start and listing == "at start")


def _lists_folder(tree: ast.Module) -> str | None:
    """ "at start" where a package lists its folder to import its modules at import time (at module level, or in
    a function module-level code calls, as `BENCHMARKS = _collect()`), "on demand" where only a later call does
    (the families' registry), None where it does not list it."""

    def lists(node) -> bool:
        return any(isinstance(n, ast.Call) and ast.unparse(n.func).endswith("iter_modules") for n in ast.walk(node))

    listers = {f.name for f in tree.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and lists(f)}
    top = [n for n in tree.body if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    called = {ast.unparse(n.func) for s in top for n in ast.walk(s) if isinstance(n, ast.Call)}
    if any(lists(s) for s in top) or listers & called:
        return "at start"
    return "on demand" if listers else None


def _imports(body, in_function=False, optional=False):
    """(import node, inside a function, optional) for every import under `body`."""
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node, in_function, optional
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield from _imports(node.body, True, optional)
        elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        elif isinstance(node, ast.Try):
            guarded = any(
                h.type is not None and re.search(r"ImportError|ModuleNotFoundError", ast.unparse(h.type))
                for h in node.handlers
            )
            yield from _imports(node.body, in_function, optional or guarded)
            for part in (*(h.body for h in node.handlers), node.orelse, node.finalbody):
                yield from _imports(part, in_function, optional)
        else:
            for field in ("body", "orelse", "finalbody"):
                if isinstance(getattr(node, field, None), list):
                    yield from _imports(getattr(node, field), in_function, optional)


def _resolved(node, path: Path):
    """(top-level name, project files it is) for each module an import names (no files: not the project's)."""
    if isinstance(node, ast.Import):
        modules = [alias.name for alias in node.names]
    elif node.level:  # relative: always the project's
        base = path.parent
        for _ in range(node.level - 1):
            base = base.parent
        parts = (node.module or "").split(".") if node.module else []
        target = base.joinpath(*parts)
        files = [f for f in (target.with_suffix(".py"), target / "__init__.py") if f.is_file()]
        files += [base.joinpath(*parts, a.name).with_suffix(".py") for a in node.names]
        return [("", [f for f in files if f.is_file()])]
    else:
        modules = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
    out = []
    for module in modules:
        parts = module.split(".")
        files = []
        for depth in range(1, len(parts) + 1):
            target = SCRIPTS.joinpath(*parts[:depth])
            files += [f for f in (target.with_suffix(".py"), target / "__init__.py") if f.is_file()]
        out.append((parts[0], files) if files or not _is_project(parts[0]) else ("", []))
    return out


def _is_project(name: str) -> bool:
    return (SCRIPTS / name).is_dir() or (SCRIPTS / f"{name}.py").is_file()


def _relative(path: Path) -> str:
    return str(path.relative_to(REPO))


def script_imports(script: str) -> Imports:
    found = Imports()
    found.follow(SCRIPTS / script)
    return found


def rule_blocks() -> list[tuple[str, str]]:
    """(rule name, its text) for every rule of rules/*.smk, the loops' rules included."""
    blocks = []
    for smk in sorted((REPO / "rules").glob("*.smk")):
        text = smk.read_text()
        starts = [m for m in re.finditer(r"^\s*rule(\s+\w+)?:", text, re.M)]
        for here, after in zip(starts, [*starts[1:], None]):
            block = text[here.start() : after.start() if after else len(text)]
            line = text.count("\n", 0, here.start()) + 1
            blocks.append((f"{smk.name}:{(here.group(1) or '').strip() or f'line{line}'}", block))
    return blocks


def env_packages(env: str) -> set[str]:
    """What the env file lists, and what its post-deploy script builds (the Mamba-2 kernels' script)."""
    spec = yaml.safe_load((REPO / env).read_text())
    names = set()
    for dep in spec["dependencies"]:
        for item in dep.get("pip", []) if isinstance(dep, dict) else [dep]:
            names.add(_normal(re.split(r"[=<>!\[ ]", item, maxsplit=1)[0]))
    post_deploy = (REPO / env).with_suffix(".post-deploy.sh")
    if post_deploy.is_file() and "envs/mamba-kernels.sh" in post_deploy.read_text():
        names |= {_normal(name) for name in kernel_pins()}
    return names


def kernel_pins() -> dict[str, str]:
    """The `<NAME>_PIN=package==version` lines of envs/mamba-kernels.sh."""
    text = (REPO / "envs/mamba-kernels.sh").read_text()
    return dict(re.findall(r"^\w+_PIN=([A-Za-z0-9_.-]+)==(\S+)", text, flags=re.M))


def _normal(name: str) -> str:
    return name.lower().replace("_", "-")


def _distribution(module: str) -> str:
    module = PROVIDED.get(module, module)
    return _normal(DISTRIBUTION.get(module, module))


def rules_with_envs():
    out = []
    for name, block in rule_blocks():
        envs = sorted(set(re.findall(r'"\.\./(envs/[^"]+\.yaml)"', block)))
        scripts = sorted(set(re.findall(r"workflow/scripts/(\w+\.py)", block)))
        if re.search(r'script=f"\{SCRIPTS\}/train_\{_run\.kind\}\.py"', block):
            scripts += ["train_sft.py", "train_dpo.py"]  # the training rule: one script per run kind
        if "{params.launch}" in block:
            scripts.append(LAUNCHER)
        if "-m snakemake" in block:
            scripts.append("(snakemake)")
        if envs and scripts:
            out.append((name, envs, scripts))
    return out


def missing(env: str, scripts: list[str]) -> list[str]:
    listed = env_packages(env)
    gpu = "gpu" in Path(env).stem
    problems = []
    for script in scripts:
        if script == "(snakemake)":
            needs = {"snakemake": "the rule's shell"}
            lazy: dict[str, str] = {}
        else:
            found = script_imports(script)
            needs, lazy = found.at_start, found.on_demand
        for module, where in {**lazy, **needs}.items():
            if module in UNLISTED or (module in lazy and module not in needs and not gpu):
                continue
            if _distribution(module) not in listed:
                when = "at start-up" if module in needs else "on demand"
                problems.append(f"{env}: {script} imports {module} ({when}, in {where}): not listed")
    return problems


RULES = rules_with_envs()


def test_the_rule_files_name_scripts_and_environments():
    """The parse finds what the test checks: every script of workflow/scripts a rule runs, every env file."""
    named = {s for _, _, scripts in RULES for s in scripts}
    assert {"train_sft.py", "train_dpo.py", "eval_model.py", "soup.py", LAUNCHER, "digest_artifact.py"} <= named
    envs = {e for _, es, _ in RULES for e in es}
    assert envs == {f"envs/{p.name}" for p in (REPO / "envs").glob("*.yaml")}, envs


@pytest.mark.parametrize("rule,envs,scripts", RULES, ids=[r[0] for r in RULES])
def test_each_environment_lists_what_its_rule_s_scripts_import(rule, envs, scripts):
    problems = [p for env in envs for p in missing(env, scripts)]
    assert not problems, "\n".join(problems)


def test_the_scan_sees_imports_as_python_runs_them():
    """A start-up import through a project module counts, a function's import is on demand, an optional or
    type-checking one does not count: the scan of a real script against what the interpreter loads."""
    sft = script_imports("train_sft.py")
    assert {"torch", "transformers", "safetensors", "numpy"} <= set(sft.at_start)
    assert {"liger_kernel", "mamba_ssm"} <= set(sft.on_demand) and "liger_kernel" not in sft.at_start
    digest = script_imports("digest_artifact.py")
    assert (
        "torch" not in digest.at_start and "ml_dtypes" in digest.at_start
    )  # lineage.checkpoints.format reads bf16 headers
