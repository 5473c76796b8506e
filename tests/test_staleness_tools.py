"""What the staleness docs tell users to run, against Snakemake itself: docs/staleness.md sends them to `-n` and
why_rerun.py, not to `--list-params-changes`, which in Snakemake 9.27 lists outputs whose params did not change.
Checked on a one-rule workflow of its own, so that the day Snakemake fixes it this test fails and the docs change."""

from __future__ import annotations

import subprocess
import sys

SNAKEFILE = """
rule made:
    output: "made.txt"
    params: value="unchanged"
    shell: "echo {params.value} > {output}"
"""


def snakemake(*args: str, cwd) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", "1", *args], cwd=cwd, capture_output=True, text=True, check=True
    )
    return done.stdout


def test_list_params_changes_lists_an_unchanged_output_where_a_dry_run_plans_nothing(tmp_path):
    (tmp_path / "Snakefile").write_text(SNAKEFILE)
    snakemake("made.txt", cwd=tmp_path)
    assert "Nothing to be done" in snakemake("-n", "made.txt", cwd=tmp_path)
    listed = snakemake("--list-params-changes", "made.txt", cwd=tmp_path).split()
    assert listed == ["made.txt"], "Snakemake no longer lists unchanged params: update docs/staleness.md"
