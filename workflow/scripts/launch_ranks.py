"""Start a training script's ranks with `accelerate launch`, and end the way its failed rank ended.

accelerate's launcher re-raises torch elastic's ChildFailedError: a traceback and a failure table
follow the rank's one-line error in the job log, and the job exits 1 whatever the rank's code (3
for bad data, 8 for a diverged run, ...). Here the same launcher runs in this process, and:

- a failed rank's exit code is the job's, and its one-line error (lineage.errors leaves it in the
  error file torch elastic gives each rank) is the log's last line;
- a stop signal (Slurm's SIGTERM on preemption) is forwarded to the ranks by the launcher as
  before, which waits TORCH_ELASTIC_SHUTDOWN_TIMEOUT seconds for them to save (the training rules set it,
  lineage/workflow/cluster.py), and the job exits 128 + signal, as a shell reports a signalled process;
  the last line says which state the ranks left in the script's --state-dir, for the rerun to resume.

Arguments are `accelerate launch`'s. This file imports nothing of the project: it starts it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from importlib.metadata import version
from pathlib import Path

from accelerate.commands.launch import launch_command, launch_command_parser
from torch.distributed.elastic.multiprocessing.api import SignalException
from torch.distributed.elastic.multiprocessing.errors import ChildFailedError

PROG = "launch_ranks.py"


def shell_code(returncode: int) -> int:
    """A process's code as a shell reports it: a signal n is 128 + n."""
    return 128 - returncode if returncode < 0 else returncode


def parser():
    """accelerate launch's own arguments, under this script's name and purpose (its --help says what runs)."""
    accelerate_parser = launch_command_parser()
    accelerate_parser.prog = PROG
    accelerate_parser.description = (
        __doc__.split("\n\n")[0] + " The arguments are `accelerate launch`'s (accelerate "
        f"{version('accelerate')}); see the module docstring for what differs."
    )
    return accelerate_parser


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        launch_command(args)
    except ChildFailedError as failed:
        rank, failure = failed.get_first_failure()
        if failure.error_file_data.get("message"):  # the rank's own one-line error, printed above as well
            print(failure.message, file=sys.stderr)
        else:
            print(f"{PROG}: rank {rank} exited with code {failure.exitcode}; its output is above", file=sys.stderr)
        return shell_code(failure.exitcode) or 1
    except subprocess.CalledProcessError as failed:  # one process: accelerate ran it as a plain child
        return shell_code(failed.returncode) or 1
    except SignalException as stopped:
        grace = os.environ.get("TORCH_ELASTIC_SHUTDOWN_TIMEOUT", "30")
        print(
            f"{PROG}: stopped by {stopped.sigval.name}; the ranks had {grace} s to save and stop: "
            f"{saved_state(args.training_script_args)}",
            file=sys.stderr,
        )
        return shell_code(-int(stopped.sigval))
    return 0


def saved_state(script_args: list[str]) -> str:
    """What the ranks left in the training script's --state-dir: its newest complete state, and any state whose
    write was cut off (the next start removes it)."""
    if "--state-dir" not in script_args[:-1]:
        return "the script keeps no state (no --state-dir), so the rerun starts over"
    root = Path(script_args[script_args.index("--state-dir") + 1])
    complete = sorted(root.glob("*/step_*/COMPLETE"), key=lambda marker: marker.stat().st_mtime)
    cut = sorted(str(path) for path in root.glob("*/.step_*.tmp"))
    said = (
        f"the newest complete state is {complete[-1].parent} (written {time.time() - complete[-1].stat().st_mtime:.0f} "
        "s ago): the rerun resumes from it"
        if complete
        else f"no complete state in {root}: the rerun starts over"
    )
    return said + (f"; cut off while written, removed at the next start: {', '.join(cut)}" if cut else "")


if __name__ == "__main__":
    sys.exit(main())
