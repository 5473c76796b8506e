"""The project's errors at a command line: one line on stderr, no traceback, one exit code per kind.

Every script's `__main__` goes through `run_cli`, so a Snakemake log or a Slurm job's output
shows what to fix, and a caller can tell a bad input from a damaged checkpoint by the code:

  2  usage: a flag is missing or malformed (argparse's own code)
  3  data: a bad input file, row or field (DataError and the row-level errors)
  4  config: a recipe, config or combination of settings that cannot run here
  5  integrity: a checkpoint or state whose bytes or shape are not what was recorded
  6  disk: the filesystem filled up; the partial output was removed
  7  environment: a package, kernel or resource this step needs is missing or busy
  8  diverged: a training step's loss or gradient norm is not finite; nothing after the last state is saved
143  preempted: stopped by SIGTERM after a saved step (lineage.training.preemption)
  1  anything else: a bug, shown with its traceback

Errors are recognised by class name along their MRO, so this module imports nothing heavy.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable

EXIT_CODES = {
    "DataError": 3,
    "LineError": 3,
    "InputError": 3,
    "ChatFormatError": 3,
    "BatchPlanError": 3,
    "FileNotFoundError": 3,
    "ConfigError": 4,
    "RecipeError": 4,
    "SoupError": 4,
    "PackingError": 4,
    "HeadLossError": 4,
    "FlashAttention4Error": 4,
    "MeshError": 4,
    "KernelShapeError": 4,
    "ModelShapeError": 4,
    "CheckpointError": 5,
    "IntegrityError": 5,
    "DiskFullError": 6,
    "PunktMissingError": 7,
    "DeviceMissingError": 7,
    "StateLockedError": 7,
    "TrackerError": 7,
    "DivergedError": 8,
}
CODE_NAMES = {
    2: "usage",
    3: "data",
    4: "config",
    5: "integrity",
    6: "disk",
    7: "environment",
    8: "diverged",
    143: "preempted",
}


def exit_code(error: BaseException) -> int | None:
    """The exit code of a known error (None: not one of the project's, a bug)."""
    for cls in type(error).__mro__:
        if cls.__name__ in EXIT_CODES:
            return EXIT_CODES[cls.__name__]
    return None


def report(prog: str, error: BaseException, note: str = "") -> int:
    """Print `prog: <kind> error: message` on stderr and return the error's exit code (1 when not one of ours)."""
    code = exit_code(error) or 1
    kind = f"{CODE_NAMES[code]} " if code in CODE_NAMES else ""
    line = f"{prog}: {kind}error: {error}{note}"
    print(line, file=sys.stderr)
    leave_for_launcher(line)
    return code


def leave_for_launcher(line: str) -> None:
    """Under torch elastic, write the one-line error where the launcher looks for a rank's failure
    (TORCHELASTIC_ERROR_FILE), so workflow/scripts/launch_ranks.py can end the job's log with it."""
    path = os.environ.get("TORCHELASTIC_ERROR_FILE")
    if not path:
        return
    try:
        partial = f"{path}.partial"
        with open(partial, "w", encoding="utf-8") as out:
            json.dump({"message": line, "timestamp": int(time.time())}, out)
        os.replace(partial, path)
    except OSError:  # the error itself is already on stderr; a launcher without the file says less
        pass


class InputError(Exception):
    """An input the script could not read (a directory, no permission): bad input, code 3."""


def run_cli(
    main: Callable[[], int | None], prog: str | None = None, input_errors: tuple[type[BaseException], ...] = ()
) -> int:
    """Run a script's main; a known error is reported (see `report`) instead of raised. `input_errors`:
    what else the script raises only on a bad input (a data stage's OSError), reported as a data error."""
    prog = prog or os.path.basename(sys.argv[0])
    try:
        return main() or 0
    except Exception as error:  # noqa: BLE001 - sorted below: the project's errors, or re-raised
        if exit_code(error) is None and isinstance(error, input_errors):
            return report(prog, InputError(error))
        if exit_code(error) is None:
            raise
        return report(prog, error)
