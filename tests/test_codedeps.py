"""A job's code: its script's import closure in workflow/scripts, read from the source, each file by its syntax."""

import json
import os
from pathlib import Path

import pytest

from lineage.workflow.codedeps import code_digest, import_closure, syntax_digest

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = REPO / "workflow" / "scripts"


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def closure(root: Path, script: str) -> set[str]:
    return {str(Path(p).relative_to(root)) for p in import_closure(root / script, root)}


def test_imports_of_every_form_are_followed_and_nothing_else(tmp_path):
    write(
        tmp_path,
        {
            "job.py": "import json\nimport torch\nfrom pkg import helper\nimport sibling\n",
            "sibling.py": "def f():\n    from pkg.sub import deep  # inside a function: still code the job runs\n",
            "pkg/__init__.py": "VALUE = 1\n",
            "pkg/helper.py": "from . import other\nfrom .sub.deep import thing\n",
            "pkg/other.py": "from pkg import VALUE  # an attribute of the package, not a module\n",
            "pkg/sub/__init__.py": "",
            "pkg/sub/deep.py": "thing = 2\n",
            "pkg/unused.py": "raise SystemExit('never imported')\n",
            "unrelated.py": "import pkg.unused\n",
        },
    )
    assert closure(tmp_path, "job.py") == {
        "job.py",
        "sibling.py",
        "pkg/__init__.py",
        "pkg/helper.py",
        "pkg/other.py",
        "pkg/sub/__init__.py",
        "pkg/sub/deep.py",
    }


def test_import_cycles_end(tmp_path):
    write(tmp_path, {"a.py": "import b\n", "b.py": "import a\n"})
    assert closure(tmp_path, "a.py") == {"a.py", "b.py"}


def test_a_syntax_error_names_the_file(tmp_path):
    write(tmp_path, {"job.py": "import broken\n", "broken.py": "def (:\n"})
    with pytest.raises(SyntaxError, match="broken.py: cannot compute its imports"):
        import_closure(tmp_path / "job.py", tmp_path)


def test_paths_are_spelled_under_the_root_as_given():
    found = import_closure(SCRIPTS / "soup.py", SCRIPTS)
    assert found == sorted(found) and all(p.startswith(f"{SCRIPTS}/") for p in found)


@pytest.mark.parametrize(
    "script, present, absent",
    [
        (
            "make_eval_table.py",
            {
                "lineage/evaluation/table.py",
                "lineage/evaluation/benchmarks/__init__.py",
                "lineage/evaluation/benchmarks/margin.py",
            },
            {"lineage/training/loop.py", "lineage/soup/methods.py"},
        ),
        (
            "soup.py",
            {"lineage/soup/methods.py", "lineage/soup/stream.py", "lineage/checkpoints/write.py"},
            {"lineage/training/loop.py", "lineage/evaluation/table.py"},
        ),
        ("clean_battles.py", {"lineage/data/citations.py"}, {"lineage/data/dedup.py", "lineage/training/loop.py"}),
        (
            "train_sft.py",
            {
                "lineage/training/loop.py",
                "lineage/training/recipe.py",
                "lineage/canonical.py",
                "lineage/families/nemotron_h.py",  # loaded by the families' registry, found by listing its folder
                "lineage/families/qwen3_moe.py",
            },
            {"lineage/soup/methods.py", "lineage/evaluation/table.py", "lineage/workflow/runs.py"},
        ),
        (
            "eval_model.py",
            {"lineage/evaluation/tasks.py", "lineage/evaluation/benchmarks/gsm8k.py"},
            {"lineage/evaluation/table.py", "lineage/training/loop.py"},
        ),
    ],
)
def test_the_workflow_scripts_depend_on_what_they_import(script, present, absent):
    found = closure(SCRIPTS, script)
    assert script in found and present <= found and not absent & found, sorted(found)
    assert all((SCRIPTS / p).is_file() for p in found)


def test_the_syntax_digest_ignores_comments_docstrings_and_layout_and_sees_every_statement(tmp_path):
    path = tmp_path / "m.py"

    def digest(text: str) -> str:
        path.write_text(text)
        return syntax_digest(path)

    base = digest('"""Doc."""\n\ndef f(x):\n    """Why."""\n    return x + 1  # add\n')
    assert digest('"""Other words."""\n\n\n# a comment\ndef f( x ):\n    return (x + 1)\n') == base
    assert digest("def f(x):\n    'Why, reworded.'\n    return x+1\n") == base
    assert digest('"""Doc."""\n\ndef f(x):\n    return x + 2\n') != base  # a constant
    assert digest('"""Doc."""\n\ndef f(y):\n    return y + 1\n') != base  # a name
    assert digest('"""Doc."""\n\ndef f(x):\n    return x + 1\n\nLIMIT = 3\n') != base  # a statement


def test_the_code_param_names_each_file_of_the_closure_with_its_digest():
    value = code_digest(SCRIPTS / "train_dpo.py", SCRIPTS)
    names = [item.rsplit(":", 1)[0] for item in value.split()]
    assert names == sorted(names) and "train_dpo.py" in names and "lineage/training/pairs.py" in names
    assert all(len(item.rsplit(":", 1)[1]) == 16 for item in value.split())


def test_facts_kept_across_processes_are_found_by_the_bytes_not_the_file(tmp_path):
    """A Snakemake start reads the kept facts (keep_facts) instead of parsing: keyed by the source's sha256, so an
    edit is parsed anew whatever its modification time, and a file that returns to old bytes reuses their facts."""
    import subprocess
    import sys

    module = tmp_path / "m.py"
    kept = tmp_path / "facts.json"
    code = (
        "import sys; from pathlib import Path; from lineage.workflow import codedeps as c; "
        f"c.keep_facts({str(kept)!r}); print(c.syntax_digest(Path({str(module)!r})))"
    )

    def digest_in_a_new_process(text: str) -> str:
        module.write_text(text)
        os.utime(module, ns=(0, 0))  # the same mtime every time: only the bytes can tell
        proc = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(SCRIPTS)}
        )
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.strip()

    first = digest_in_a_new_process("def f(x):\n    return x + 1\n")
    assert len(json.loads(kept.read_text())) == 1
    assert digest_in_a_new_process("def f(x):\n    return x + 2\n") != first
    assert digest_in_a_new_process("def f(x):\n    return x + 1\n") == first
    assert syntax_digest(module) == first  # and this process, which never read the kept file, agrees
