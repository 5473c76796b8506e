"""Start a training script's ranks with `accelerate launch`, and end the way its failed rank ended.

accelerate's launcher re-raises torch elastic's ChildFailedError: a traceback and a failure table
follow the rank's one-line error in the job log, and the job exits 1 whatever the rank's code (3
for bad data, 8 for a diverged run, ...). Here the same launcher runs in this process, and:

- a failed rank's exit code is the job's, and its one-line error (lineage.errors leaves it in the
  error file torch elastic gives each rank) is the log's last line;
- a stop signal (Slurm's SIGTERM on preemption) is forwarded to the ranks by the launcher as
  before, and the job exits 128 + signal, as a shell reports a signalled process.

Arguments are `accelerate launch`'s. This file imports nothing of the project: it starts it.
"""

from __future__ import annotations

import subprocess
import sys

from accelerate.commands.launch import launch_command, launch_command_parser
from torch.distributed.elastic.multiprocessing.api import SignalException
from torch.distributed.elastic.multiprocessing.errors import ChildFailedError

PROG = "launch_ranks.py"


def shell_code(returncode: int) -> int:
    """A process's code as a shell reports it: a signal n is 128 + n."""
    return 128 - returncode if returncode < 0 else returncode


def main(argv: list[str] | None = None) -> int:
    args = launch_command_parser().parse_args(argv)
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
        print(f"{PROG}: stopped by {stopped.sigval.name}; the ranks were asked to save and stop", file=sys.stderr)
        return shell_code(-int(stopped.sigval))
    return 0


if __name__ == "__main__":
    sys.exit(main())
