"""Write the content digest (`<artifact>.sha256`, sha256sum's format) of a job's large outputs.

The last step of every job whose outputs other jobs read by content (rules/common.smk, "content"):
given all the job's outputs, it writes the companion of each output whose companion is among
them. A checkpoint's files are not read again: its lineage.json, written by the same job,
holds their sha256 at their current size and mtime (lineage/workflow/digests.py).

Run as:
    python workflow/scripts/digest_artifact.py results/embedded/models/sftw2 results/embedded/models/sftw2.sha256
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from lineage.errors import run_cli
from lineage.workflow.digests import companion_of, write_companion


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("outputs", nargs="+", type=Path, help="the job's outputs, companions among them")
    args = parser.parse_args(argv)
    outputs = {path.resolve() for path in args.outputs}
    artifacts = [path for path in args.outputs if companion_of(path).resolve() in outputs]
    if not artifacts:
        parser.error("no output has its companion (<output>.sha256) among the outputs")
    for artifact in artifacts:
        print(f"digest_artifact: {write_companion(artifact)}")
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
