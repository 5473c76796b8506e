"""A real single-node Slurm cluster for tests, from Debian's slurmctld and slurmd packages.

The cluster has no accounting database, so the executor plugin must query job states with
squeue (`--slurm-status-command squeue`). The config goes to /etc/slurm/slurm.conf, the path
compiled into Debian's Slurm, because the job-step plugin drops SLURM_CONF inside jobs.
Daemons are stopped by the pids they wrote, never by name.

Run as (root):
    python tests/slurm_cluster.py start     # prints the state directory
    python tests/slurm_cluster.py stop
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

CONF = Path("/etc/slurm/slurm.conf")
STATE_DIR = Path(os.environ.get("SLURM_TEST_STATE", "/tmp/lineage-slurm"))
PACKAGES = ("slurmctld", "slurmd", "slurm-client")

# What every test cluster shares: no munge (auth/none), root daemons, no cgroups (containers), no
# accounting database, finished jobs kept visible to squeue for the plugin's status checks.
SHARED_SETTINGS = """\
AuthType=auth/none
CredType=cred/none
SlurmUser=root
SlurmdUser=root
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
MinJobAge=7200
KillWait=5
SlurmdParameters=config_overrides"""

SLURM_CONF = """\
# Written by tests/slurm_cluster.py for the workflow's tests; removed when the cluster stops.
ClusterName=lineage-test
SlurmctldHost={host}
SlurmctldPort=7817
SlurmdPort=7818
StateSaveLocation={state}/state
SlurmdSpoolDir={state}/spool
SlurmctldPidFile={state}/slurmctld.pid
SlurmdPidFile={state}/slurmd.pid
SlurmctldLogFile={state}/log/slurmctld.log
SlurmdLogFile={state}/log/slurmd.log
{shared}
NodeName={host} CPUs={cpus} RealMemory={mem_mb} State=UNKNOWN
PartitionName=cpu Nodes={host} Default=YES MaxTime=INFINITE State=UP
"""


def installed() -> bool:
    return all(shutil.which(b) for b in ("slurmctld", "slurmd", "sbatch", "squeue"))


def install() -> None:
    """Install Debian's Slurm packages (root only)."""
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", *PACKAGES], check=True, env=env)


def _pid(name: str) -> int | None:
    path = STATE_DIR / f"{name}.pid"
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def _alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


def terminate(pid: int | None, grace_s: float = 10) -> None:
    """SIGTERM a daemon, then SIGKILL it if it is still there after `grace_s`."""
    if not _alive(pid):
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if _alive(pid):
        os.kill(pid, signal.SIGKILL)


def running() -> bool:
    return _alive(_pid("slurmctld")) and _alive(_pid("slurmd"))


def start(cpus: int = 4, mem_mb: int = 16000, timeout: float = 60) -> Path:
    """Write the config, start slurmctld and slurmd, and wait until the node is idle."""
    if os.geteuid() != 0:
        raise PermissionError("the test cluster runs its daemons as root")
    if not installed():
        install()
    if running():
        return STATE_DIR
    host = socket.gethostname().split(".")[0]
    for sub in ("state", "spool", "log"):
        (STATE_DIR / sub).mkdir(parents=True, exist_ok=True)
    CONF.parent.mkdir(parents=True, exist_ok=True)
    CONF.write_text(SLURM_CONF.format(host=host, state=STATE_DIR, cpus=cpus, mem_mb=mem_mb, shared=SHARED_SETTINGS))
    subprocess.run(["slurmctld", "-c"], check=True)  # -c: start clean, no jobs from an earlier run
    subprocess.run(["slurmd"], check=True)
    wait_until_up({host}, timeout, STATE_DIR, stop)
    return STATE_DIR


def wait_until_up(nodes: set[str], timeout: float, state_dir: Path, stop_cluster) -> None:
    """Return once every node answers (idle, mix or alloc); else stop the cluster and raise with its logs."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        out = subprocess.run(["sinfo", "-h", "-N", "-o", "%N %t"], capture_output=True, text=True).stdout
        states = dict(line.split() for line in out.splitlines() if line.strip())
        if set(states) >= nodes and all(states[n] in ("idle", "mix", "alloc") for n in nodes):
            return
        time.sleep(0.5)
    logs = "\n".join(p.read_text()[-2000:] for p in (state_dir / "log").glob("*.log"))
    stop_cluster()
    raise RuntimeError(f"Slurm nodes {sorted(nodes)} did not come up within {timeout:.0f} s; daemon logs:\n{logs}")


def stop() -> None:
    """Cancel jobs, stop both daemons by their pids, and remove the config."""
    if shutil.which("scancel") and running():
        subprocess.run(["scancel", "--user", "root"], capture_output=True)
    for name in ("slurmd", "slurmctld"):
        terminate(_pid(name))
    if CONF.is_file() and CONF.read_text().startswith("# Written by tests/slurm_cluster.py"):
        CONF.unlink()


def squeue_jobs() -> list[dict[str, str]]:
    """Every job the controller remembers (finished ones stay MinJobAge seconds): id, name, state, comment."""
    out = subprocess.run(
        ["squeue", "--states=all", "-h", "-o", "%i|%j|%T|%k"], capture_output=True, text=True, check=True
    ).stdout
    jobs = []
    for line in out.splitlines():
        job_id, name, state, comment = line.split("|", 3)
        jobs.append({"id": job_id, "name": name, "state": state, "comment": comment})
    return jobs


def cli(start_cluster, stop_cluster) -> None:
    """`python <module> start|stop` of a test cluster module."""
    command = sys.argv[1] if len(sys.argv) > 1 else "start"
    if command == "start":
        print(start_cluster())
    elif command == "stop":
        stop_cluster()
    else:
        sys.exit(f"usage: {sys.argv[0]} start|stop")


if __name__ == "__main__":
    cli(start, stop)
