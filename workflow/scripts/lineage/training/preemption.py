"""Stop cleanly when the scheduler asks: finish the step, save the state, exit for a rerun.

Slurm preempts or times out a job by sending SIGTERM to every task, then SIGKILL after
KillWait (30 s by default); `sbatch --signal=USR1@120` warns earlier. The handler here only
sets a flag. The training loop reads it at the start of each step inside the step's first
all-reduce, so every rank stops after the same step, saves one consistent state and exits
with `PREEMPTED_EXIT_CODE`; the rerun (Snakemake's `retries`, or a requeue) resumes from it.
A SIGKILL cannot be caught: that run resumes from its last periodic state instead.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType

PREEMPTED_EXIT_CODE = 128 + signal.SIGTERM  # what a shell reports for a SIGTERM'd process
STOP_SIGNALS = (signal.SIGTERM, signal.SIGUSR1)


class Preempted(SystemExit):
    """Raised by the training loop after it saved its state on a stop request."""

    def __init__(self, message: str):
        super().__init__(PREEMPTED_EXIT_CODE)
        self.message = message

    def __str__(self) -> str:
        return self.message


class StopRequest:
    """Context manager that turns SIGTERM / SIGUSR1 into a flag (`requested`), then restores handlers.

    Outside the main thread (where Python cannot install handlers) it does nothing.
    """

    def __init__(self, signals: tuple[signal.Signals, ...] = STOP_SIGNALS):
        self.signals = signals
        self.requested: str | None = None  # the signal's name once one arrived
        self._previous: dict[signal.Signals, object] = {}

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.requested = signal.Signals(signum).name

    def __enter__(self) -> StopRequest:
        if threading.current_thread() is threading.main_thread():
            for sig in self.signals:
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()
