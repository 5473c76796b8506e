"""The workflow is lint-clean (`snakemake --lint`) and formatted (`snakefmt --check`)."""

import subprocess
import sys
from pathlib import Path

from workflow_helpers import REPO, snakemake


def test_snakemake_lint_is_clean():
    proc = snakemake("--lint", cwd=REPO)
    assert "Congratulations, your workflow is in a good condition!" in proc.stdout + proc.stderr, proc.stdout


def test_snakefmt_leaves_the_rules_unchanged():
    snakefmt = Path(sys.executable).with_name("snakefmt")
    proc = subprocess.run(
        [str(snakefmt), "--check", "Snakefile", "rules/"], cwd=REPO, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
