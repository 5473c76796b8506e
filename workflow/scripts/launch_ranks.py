"""Start a script's ranks on this machine, pass a stop signal on, and end the way the ranks ended.

Every training job (and a reference, evaluation or sampling job given several GPUs) starts here. The ranks get
torchrun's environment (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR, MASTER_PORT,
OMP_NUM_THREADS, TORCHELASTIC_ERROR_FILE), so the same scripts run under `torchrun` or `accelerate launch` too;
the flags are the `accelerate launch` ones the workflow uses, `--config_file` included. Why not those launchers:

- they import torch (and accelerate) before the first rank starts: 3.4 s of every job here, ~0.05 s;
- a stop signal (Slurm's SIGTERM at `--signal=TERM@300`) is forwarded to the ranks, which finish their step and
  save; the ranks then get TORCH_ELASTIC_SHUTDOWN_TIMEOUT seconds (the training rules set it,
  lineage/workflow/cluster.py STOP_GRACE_S) before they are killed, and the last line says what happened: the
  ranks' codes and times, and which state they left in the script's --state-dir for the rerun;
- a failed rank's exit code is the job's and its one-line error (lineage.errors leaves it in the rank's
  TORCHELASTIC_ERROR_FILE) is the log's last line, with no launcher traceback after it.

Each rank runs in a session of its own (as under torchrun), so only this launcher signals it; a rank whose
launcher dies is killed by the kernel (lineage/training/lifetime.py). This file imports nothing of the project.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

PROG = "launch_ranks.py"
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGUSR1)
DEFAULT_STOP_GRACE_S = 30.0  # torch elastic's default for TORCH_ELASTIC_SHUTDOWN_TIMEOUT
FAILED_PEERS_GRACE_S = 10.0  # after a rank fails, the others are waiting in a collective: nothing to save
POLL_S = 0.05


def shell_code(returncode: int) -> int:
    """A process's code as a shell reports it: a signal n is 128 + n."""
    return 128 - returncode if returncode < 0 else returncode


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    p.add_argument("--config_file", type=Path, help="an accelerate config (YAML); its launch keys are the defaults")
    p.add_argument("--num_processes", type=int, help="ranks of the whole job (every machine)")
    p.add_argument("--num_machines", type=int, help="machines of the job (each runs this launcher)")
    p.add_argument("--machine_rank", type=int, help="this machine's index, 0 on the one that hosts the store")
    p.add_argument("--main_process_ip", help="address of machine 0 (default 127.0.0.1)")
    p.add_argument("--main_process_port", type=int, help="port of the rendezvous store; 0 picks a free one")
    p.add_argument("--num_cpu_threads_per_process", type=int, help="OMP_NUM_THREADS of each rank")
    p.add_argument("script", type=Path, help="the Python script every rank runs")
    p.add_argument("script_args", nargs=argparse.REMAINDER, help="its arguments")
    return p


@dataclass(frozen=True)
class Layout:
    """Where this machine's ranks sit in the job."""

    world: int
    machines: int
    machine: int
    address: str
    port: int
    threads: int | None

    @property
    def per_machine(self) -> int:
        return self.world // self.machines

    def rank_env(self, local: int, error_file: Path) -> dict[str, str]:
        rank = self.machine * self.per_machine + local
        env = {
            "RANK": rank,
            "LOCAL_RANK": local,
            "WORLD_SIZE": self.world,
            "LOCAL_WORLD_SIZE": self.per_machine,
            "GROUP_RANK": self.machine,
            "GROUP_WORLD_SIZE": self.machines,
            "ROLE_RANK": rank,
            "ROLE_WORLD_SIZE": self.world,
            "MASTER_ADDR": self.address,
            "MASTER_PORT": self.port,
            "TORCHELASTIC_ERROR_FILE": error_file,
        }
        if self.threads:
            env["OMP_NUM_THREADS"] = self.threads
        elif "OMP_NUM_THREADS" not in os.environ and self.per_machine > 1:
            env["OMP_NUM_THREADS"] = 1  # torchrun's default: ranks do not oversubscribe the machine's cores
        return {key: str(value) for key, value in env.items()}


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def layout_of(args: argparse.Namespace) -> Layout:
    """The flags over the config file's keys over one machine of one rank; a layout that cannot start is refused."""
    config = (yaml.safe_load(args.config_file.read_text()) or {}) if args.config_file else {}

    def pick(key: str, default):
        given = getattr(args, key)
        return given if given is not None else config.get(key, default)

    world, machines, machine = pick("num_processes", 1), pick("num_machines", 1), pick("machine_rank", 0)
    if world < 1 or machines < 1 or world % machines or not 0 <= machine < machines:
        raise SystemExit(
            f"{PROG}: --num_processes {world} over --num_machines {machines} (this one {machine}): the processes "
            "must split evenly over the machines and the machine rank must be below their count"
        )
    port = pick("main_process_port", 0) or 0
    if not port:
        if machines > 1:
            raise SystemExit(f"{PROG}: a job of {machines} machines needs --main_process_port (all must agree)")
        port = free_port()
    return Layout(
        world, machines, machine, pick("main_process_ip", None) or "127.0.0.1", port, args.num_cpu_threads_per_process
    )


class Ranks:
    """This machine's rank processes: started, watched, signalled, reaped."""

    def __init__(self, layout: Layout, command: list[str]):
        self.errors = Path(tempfile.mkdtemp(prefix="launch_ranks-"))
        self.first_rank = layout.machine * layout.per_machine
        self.procs = []
        for local in range(layout.per_machine):
            env = {**os.environ, **layout.rank_env(local, self.errors / f"rank{local}.json")}
            self.procs.append(subprocess.Popen(command, env=env, start_new_session=True))

    def codes(self) -> list[int | None]:
        return [proc.poll() for proc in self.procs]

    def signal(self, sig: int) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                try:
                    os.kill(proc.pid, sig)
                except ProcessLookupError:
                    pass

    def wait(self, seconds: float, interrupted=lambda: False) -> bool:
        """Wait until every rank exited (True) or `seconds` passed or `interrupted()` (False)."""
        deadline = time.monotonic() + seconds
        while any(code is None for code in self.codes()):
            if time.monotonic() >= deadline or interrupted():
                return False
            time.sleep(POLL_S)
        return True

    def kill(self) -> None:
        self.signal(signal.SIGKILL)
        for proc in self.procs:
            proc.wait()

    def error_message(self, local: int) -> str | None:
        """The rank's one-line error, where lineage.errors left it."""
        try:
            return json.loads((self.errors / f"rank{local}.json").read_text()).get("message")
        except (OSError, ValueError):
            return None

    def close(self) -> None:
        shutil.rmtree(self.errors, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    layout = layout_of(args)
    stops: list[int] = []

    def on_stop(signum: int, frame) -> None:
        stops.append(signum)

    for sig in STOP_SIGNALS:
        signal.signal(sig, on_stop)
    ranks = Ranks(layout, [sys.executable, str(args.script), *args.script_args])
    try:
        while not stops:
            codes = ranks.codes()
            failed = [local for local, code in enumerate(codes) if code not in (None, 0)]
            if failed:
                return failure(ranks, failed)
            if all(code == 0 for code in codes):
                return 0
            time.sleep(POLL_S)
        return stopped(ranks, stops, args.script_args)
    finally:
        if any(code is None for code in ranks.codes()):
            ranks.kill()
        ranks.close()


def failure(ranks: Ranks, failed: list[int]) -> int:
    """End the job as its first failed rank ended: that rank's code, its one-line error last."""
    local = next((n for n in failed if ranks.error_message(n)), failed[0])
    code = ranks.procs[local].returncode
    ranks.signal(signal.SIGTERM)
    if not ranks.wait(FAILED_PEERS_GRACE_S):
        ranks.kill()
    message = ranks.error_message(local)
    rank = ranks.first_rank + local
    print(message or f"{PROG}: rank {rank} exited with code {shell_code(code)}; its output is above", file=sys.stderr)
    return shell_code(code) or 1


def stopped(ranks: Ranks, stops: list[int], script_args: list[str]) -> int:
    """Forward the stop, give the ranks their grace to save, and say what they did with it."""
    sig = signal.Signals(stops[0])
    grace = float(os.environ.get("TORCH_ELASTIC_SHUTDOWN_TIMEOUT", DEFAULT_STOP_GRACE_S))
    started = time.monotonic()
    ranks.signal(sig)
    finished = ranks.wait(grace, interrupted=lambda: len(stops) > 1)  # a second stop does not wait
    took = time.monotonic() - started
    if finished:
        codes = sorted({shell_code(code) for code in ranks.codes()})
        what = f"the ranks exited ({', '.join(map(str, codes))}) {took:.0f} s later, within their {grace:.0f} s"
    else:
        ranks.kill()
        why = "a second stop signal" if len(stops) > 1 else f"their {grace:.0f} s to save"
        what = f"the ranks were killed after {took:.0f} s ({why})"
    print(f"{PROG}: stopped by {sig.name}; {what}: {saved_state(script_args)}", file=sys.stderr)
    return shell_code(-int(sig))


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
