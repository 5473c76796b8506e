"""The workflow is lint-clean (`snakemake --lint`, `ruff check`) and formatted (`snakefmt`, `ruff format`)."""

import subprocess
import sys
from pathlib import Path

from workflow_helpers import REPO, snakemake


def test_snakemake_lint_is_clean():
    proc = snakemake("--lint", cwd=REPO)
    assert "Congratulations, your workflow is in a good condition!" in proc.stdout + proc.stderr, proc.stdout


def test_snakefmt_leaves_the_rules_unchanged():
    snakefmt = Path(sys.executable).with_name("snakefmt")
    proc = subprocess.run([str(snakefmt), "--check", "Snakefile", "rules/"], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def ruff(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(Path(sys.executable).with_name("ruff")), *args], cwd=REPO, capture_output=True, text=True
    )


def test_ruff_check_is_clean():
    """The lint rules of pyproject.toml (pyflakes, pycodestyle, import order, pyupgrade, bugbear)."""
    proc = ruff("check", ".")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ruff_format_leaves_the_code_unchanged():
    proc = ruff("format", "--check", ".")
    assert proc.returncode == 0, proc.stdout + proc.stderr
