"""Training processes live exactly as long as their job, and one run's state has one writer.

- Launchers (torchrun, `accelerate launch`) start each rank in a session of its own, so a
  SIGKILL of Snakemake's process group (or of a Slurm step) reaches the launcher but not the
  ranks, which then train on and publish a checkpoint nobody waits for. Each launched rank asks
  the kernel for SIGKILL when its parent dies (Linux `PR_SET_PDEATHSIG`); a rank whose launcher is
  already gone exits at once.
- A run's state directory is locked (`flock`) by rank 0 for as long as it trains: a second run
  writing the same state (two Snakemake instances, a manual rerun beside a Slurm job) is refused,
  naming the holder. The lock is the kernel's: it is released however the holder ends.
"""

from __future__ import annotations

import ctypes
import datetime as _dt
import fcntl
import json
import os
import signal
import socket
import sys
from pathlib import Path

PR_SET_PDEATHSIG = 1
LOCK_FILE = ".lock"


class StateLockedError(RuntimeError):
    """Another process holds this run's state directory; the message names it."""


def die_with_parent() -> bool:
    """Under a launcher (WORLD_SIZE set): SIGKILL this rank when the launcher dies. True if armed."""
    if "WORLD_SIZE" not in os.environ or not sys.platform.startswith("linux"):
        return False
    parent = os.getppid()
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        return False
    if os.getppid() != parent:  # the launcher died before the request took effect
        os._exit(128 + signal.SIGKILL)
    return True


class StateLock:
    """An exclusive lock on a state directory, held until release() or the end of the process."""

    def __init__(self, state_dir: str | os.PathLike):
        self.path = Path(state_dir) / LOCK_FILE
        self.handle = None

    def acquire(self) -> StateLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = self.path.open("a+")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "an unknown process"
            handle.close()
            raise StateLockedError(
                f"{self.path.parent} is in use by {holder}; wait for that run to end (or stop it) before "
                "starting another writer of the same state"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(
            json.dumps(
                {
                    "pid": os.getpid(),
                    "host": socket.gethostname(),
                    "since": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
                    "command": " ".join(sys.argv)[:300],
                }
            )
        )
        handle.flush()
        self.handle = handle
        return self

    def release(self) -> None:
        if self.handle is not None:
            fcntl.flock(self.handle, fcntl.LOCK_UN)
            self.handle.close()
            self.handle = None
