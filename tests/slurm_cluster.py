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

SLURM_CONF = """\
# Written by tests/slurm_cluster.py for the workflow's tests; removed when the cluster stops.
ClusterName=lineage-test
SlurmctldHost={host}
SlurmctldPort=7817
SlurmdPort=7818
AuthType=auth/none
CredType=cred/none
SlurmUser=root
SlurmdUser=root
StateSaveLocation={state}/state
SlurmdSpoolDir={state}/spool
SlurmctldPidFile={state}/slurmctld.pid
SlurmdPidFile={state}/slurmd.pid
SlurmctldLogFile={state}/log/slurmctld.log
SlurmdLogFile={state}/log/slurmd.log
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
SlurmdParameters=config_overrides
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
    CONF.write_text(SLURM_CONF.format(host=host, state=STATE_DIR, cpus=cpus, mem_mb=mem_mb))
    subprocess.run(["slurmctld", "-c"], check=True)  # -c: start clean, no jobs from an earlier run
    subprocess.run(["slurmd"], check=True)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = subprocess.run(["sinfo", "-h", "-o", "%t"], capture_output=True, text=True).stdout.strip()
        if state in ("idle", "mix", "alloc"):
            return STATE_DIR
        time.sleep(0.5)
    logs = "\n".join(p.read_text()[-2000:] for p in (STATE_DIR / "log").glob("*.log"))
    stop()
    raise RuntimeError(f"the Slurm node did not become idle within {timeout:.0f} s; daemon logs:\n{logs}")


def stop() -> None:
    """Cancel jobs, stop both daemons by their pids, and remove the config."""
    if shutil.which("scancel") and running():
        subprocess.run(["scancel", "--user", "root"], capture_output=True)
    for name in ("slurmd", "slurmctld"):
        pid = _pid(name)
        if _alive(pid):
            os.kill(pid, signal.SIGTERM)
            for _ in range(100):
                if not _alive(pid):
                    break
                time.sleep(0.1)
            else:
                os.kill(pid, signal.SIGKILL)
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


if __name__ == "__main__":
    command = sys.argv[1] if len(sys.argv) > 1 else "start"
    if command == "start":
        print(start())
    elif command == "stop":
        stop()
    else:
        sys.exit(f"usage: {sys.argv[0]} start|stop")
