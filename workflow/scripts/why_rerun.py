"""Say why built jobs are stale, in the workflow's own terms: which module's syntax, which input's bytes.

`snakemake -n` gives Snakemake's reasons ("params have changed", "updated input files"). This reads
what Snakemake recorded for each built output (.snakemake/metadata) and compares it with today:

- the code param of every job lists its import closure with a digest of each file's syntax
  (lineage/workflow/codedeps.py): a file whose digest moved is named with both digests; a file added to or
  dropped from the closure is named too;
- the checksums Snakemake recorded for a job's small inputs (the companions `<artifact>.sha256` of
  lineage/workflow/digests.py among them): an input whose bytes moved is named, a missing one too.

Other params (recipes, settings) are Snakemake's to diff: `snakemake --list-params-changes`.

Run as (in the workflow's directory):
    python workflow/scripts/why_rerun.py              # every built job that is stale by code or data
    python workflow/scripts/why_rerun.py --rule sftw2
    python workflow/scripts/why_rerun.py --code-only  # exit 1 unless every stale job is stale by code alone

`--code-only` is the check before taking a refactor whose outputs were proven byte-identical without
rebuilding (`snakemake --touch <target>`, docs/staleness.md "Taking a refactor"): it fails when any job is
stale by data, which a refactor never makes. Recipe and setting edits are params it does not compare: take
a refactor onto a config you have not edited since the build.
"""

from __future__ import annotations

import argparse
import ast
import base64
import json
import re
import sys
from pathlib import Path

from lineage.errors import run_cli
from lineage.io import sha256_file
from lineage.workflow.codedeps import syntax_digest

CODE_PARAM = re.compile(r"^(?:\S+\.py:[0-9a-f]{16})(?: \S+\.py:[0-9a-f]{16})*$")
SCRIPTS = Path("workflow/scripts")


def records(metadata: Path):
    """(output path, record) for each output Snakemake recorded (a long name is split into folders)."""
    for entry in sorted(p for p in metadata.rglob("*") if p.is_file()):
        name = "".join(entry.relative_to(metadata).parts)
        try:
            output = base64.b64decode(name.replace("@", "/") + "=" * (-len(name) % 4)).decode()
            yield output, json.loads(entry.read_text())
        except (ValueError, UnicodeDecodeError):
            continue


def param_text(value) -> str | None:
    """A recorded param as the text it was (Snakemake stores the repr of each value)."""
    if not isinstance(value, str):
        return None
    try:
        value = ast.literal_eval(value)
    except (ValueError, SyntaxError):
        pass
    return value if isinstance(value, str) else None


def code_reasons(params: list) -> list[str]:
    reasons = []
    for value in map(param_text, params or []):
        if not (value and CODE_PARAM.match(value)):
            continue
        for item in value.split():
            name, _, recorded = item.rpartition(":")
            path = SCRIPTS / name
            if not path.is_file():
                reasons.append(f"code: {name} is gone (it was in the job's import closure)")
                continue
            now = syntax_digest(path)[:16]
            if now != recorded:
                reasons.append(f"code: the syntax of {name} changed ({recorded} -> {now})")
    return reasons


def data_reasons(checksums: dict) -> list[str]:
    reasons = []
    for name, recorded in sorted((checksums or {}).items()):
        path = Path(name)
        if not path.is_file():
            reasons.append(f"data: {name} is missing")
            continue
        now = "sha256:" + sha256_file(path)
        if now != (recorded if ":" in recorded else f"sha256:{recorded}"):
            kind = "the digest of its artifact" if name.endswith(".sha256") else "its bytes"
            reasons.append(f"data: {name} changed ({kind})")
    return reasons


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rule", action="append", default=[], help="only jobs of this rule (repeatable)")
    parser.add_argument("--metadata", type=Path, default=Path(".snakemake/metadata"))
    parser.add_argument(
        "--code-only", action="store_true", help="exit 1 unless every stale job is stale by code alone (no data)"
    )
    args = parser.parse_args(argv)
    if not args.metadata.is_dir():
        print(f"why_rerun: no {args.metadata}: nothing was built here yet", file=sys.stderr)
        return 0
    seen: dict[tuple[str, str], list[str]] = {}
    for output, record in records(args.metadata):
        rule = record.get("rule", "?")
        if args.rule and rule not in args.rule:
            continue
        key = (rule, str(record.get("job_hash")))
        if key in seen:
            continue
        seen[key] = code_reasons(record.get("params")) + data_reasons(record.get("input_checksums"))
        if seen[key]:
            print(f"{rule} ({output}):")
            for reason in seen[key]:
                print(f"  {reason}")
    stale = sum(1 for reasons in seen.values() if reasons)
    print(f"why_rerun: {stale} of {len(seen)} built jobs are stale by code or data")
    by_data = sorted(rule for (rule, _), reasons in seen.items() if any(r.startswith("data:") for r in reasons))
    if args.code_only and by_data:
        print(f"why_rerun: stale by data, not code alone: {', '.join(by_data)}; rebuild them, do not --touch")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
