"""A real two-node Slurm cluster for tests: one slurmctld and two slurmd, each slurmd a node of its own.

Each node is a network namespace (its own interfaces, address and ports) with its own hostname
(UTS namespace) and /etc/hosts (mount namespace); a bridge in the host namespace joins them to
the controller, which runs in the host's network namespace under the controller's hostname.
Processes a node's slurmd starts (job steps, the training ranks) live in that node's namespaces,
so two ranks on two nodes talk over the bridge exactly as over a cluster network. Nothing leaves
the bridge: it has no uplink and no forwarding. Each node has one gres GPU (a character device
file, as slurmd needs) so jobs can ask for GPUs per node as on a GPU cluster.

Everything it creates (namespaces, bridge, /etc/slurm/slurm.conf and gres.conf, state under
SLURM_NODES_STATE) is removed by stop(). Daemons are stopped by the pids they wrote.

Run as (root):
    python tests/slurm_nodes_cluster.py start
    python tests/slurm_nodes_cluster.py stop
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import slurm_cluster

CONF = slurm_cluster.CONF
GRES_CONF = CONF.with_name("gres.conf")
STATE_DIR = Path(os.environ.get("SLURM_NODES_STATE", "/tmp/lineage-slurm-nodes"))
BRIDGE = "lnslurm0"
SUBNET = "10.231.7"
CONTROLLER = ("lineage-ctl", f"{SUBNET}.1")
NODES = {"lineage-n1": f"{SUBNET}.11", "lineage-n2": f"{SUBNET}.12"}
PARTITIONS = {"cpu": ["lineage-n1"], "gpu": list(NODES)}  # cpu is the default partition
MARK = "# Written by tests/slurm_nodes_cluster.py"

SLURM_CONF = """\
{mark} for the workflow's tests; removed when the cluster stops.
ClusterName=lineage-nodes
SlurmctldHost={ctl}({ctl_addr})
SlurmctldPort=7827
SlurmdPort=7828
StateSaveLocation={state}/state
SlurmdSpoolDir={state}/spool-%n
SlurmctldPidFile={state}/slurmctld.pid
SlurmdPidFile={state}/slurmd-%n.pid
SlurmctldLogFile={state}/log/slurmctld.log
SlurmdLogFile={state}/log/slurmd-%n.log
{shared}
GresTypes=gpu
{nodes}
{partitions}
"""


def _run(*argv: str, namespace: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
    # nsenter, not `ip netns exec`: that remounts /sys, which hides the cgroup tree slurmd reads
    prefix = ["nsenter", f"--net=/run/netns/{namespace}"] if namespace else []
    return subprocess.run([*prefix, *argv], check=check, capture_output=True, text=True)


def _hosts_file() -> Path:
    lines = ["127.0.0.1 localhost", f"{CONTROLLER[1]} {CONTROLLER[0]}"]
    lines += [f"{addr} {name}" for name, addr in NODES.items()]
    path = STATE_DIR / "hosts"
    path.write_text("\n".join(lines) + "\n")
    return path


def _in_namespaces(name: str, hosts: Path, command: list[str]) -> list[str]:
    """`command` under hostname `name` and our hosts file (new UTS and mount namespaces)."""
    script = f'hostname {name} && mount --bind {hosts} /etc/hosts && exec "$@"'
    return ["unshare", "--uts", "--mount", "--propagation", "private", "sh", "-c", script, "sh", *command]


def _network() -> None:
    _run("ip", "link", "add", BRIDGE, "type", "bridge")
    _run("ip", "addr", "add", f"{CONTROLLER[1]}/24", "dev", BRIDGE)
    _run("ip", "link", "set", BRIDGE, "up")
    for index, (name, addr) in enumerate(NODES.items()):
        outside, inside = f"lnslurm{index}h", f"lnslurm{index}n"
        _run("ip", "netns", "add", name)
        _run("ip", "link", "add", outside, "type", "veth", "peer", "name", inside)
        _run("ip", "link", "set", inside, "netns", name)
        _run("ip", "link", "set", outside, "master", BRIDGE)
        _run("ip", "link", "set", outside, "up")
        _run("ip", "addr", "add", f"{addr}/24", "dev", inside, namespace=name)
        _run("ip", "link", "set", inside, "up", namespace=name)
        _run("ip", "link", "set", "lo", "up", namespace=name)


def _gres() -> str:
    """One fake GPU per node: a character device node slurmd can stat (no driver behind it)."""
    lines = [f"{MARK}; removed when the cluster stops."]
    for name in NODES:
        device = STATE_DIR / "dev" / name / "nvidia0"
        device.parent.mkdir(parents=True, exist_ok=True)
        if not device.exists():
            os.mknod(device, 0o666 | 0o020000, os.makedev(195, 0))
        lines.append(f"NodeName={name} Name=gpu File={device}")
    return "\n".join(lines) + "\n"


def running() -> bool:
    pids = [_pid("slurmctld"), *(_pid(f"slurmd-{name}") for name in NODES)]
    return all(slurm_cluster._alive(pid) for pid in pids)


def _pid(name: str) -> int | None:
    try:
        return int((STATE_DIR / f"{name}.pid").read_text().strip())
    except (OSError, ValueError):
        return None


def start(cpus: int = 2, mem_mb: int = 12000, timeout: float = 90) -> Path:
    """Namespaces, bridge, config; slurmctld and both slurmd; wait until both nodes are idle."""
    if os.geteuid() != 0:
        raise PermissionError("the test cluster creates network namespaces and runs its daemons as root")
    if not slurm_cluster.installed():
        slurm_cluster.install()
    if not shutil.which("ip"):
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", "iproute2"], check=True, env=env)
    if running():
        return STATE_DIR
    if slurm_cluster.running():
        raise RuntimeError("the single-node test cluster (tests/slurm_cluster.py) holds /etc/slurm; stop it first")
    stop()  # whatever an aborted run left behind
    for sub in ("state", "log"):
        (STATE_DIR / sub).mkdir(parents=True, exist_ok=True)
    hosts = _hosts_file()
    _network()
    CONF.parent.mkdir(parents=True, exist_ok=True)
    nodes = "\n".join(
        f"NodeName={name} NodeAddr={addr} NodeHostname={name} CPUs={cpus} RealMemory={mem_mb} Gres=gpu:1 State=UNKNOWN"
        for name, addr in NODES.items()
    )
    partitions = "\n".join(
        f"PartitionName={part} Nodes={','.join(members)} Default={'YES' if part == 'cpu' else 'NO'} "
        "MaxTime=INFINITE State=UP"
        for part, members in PARTITIONS.items()
    )
    CONF.write_text(
        SLURM_CONF.format(
            mark=MARK,
            ctl=CONTROLLER[0],
            ctl_addr=CONTROLLER[1],
            state=STATE_DIR,
            shared=slurm_cluster.SHARED_SETTINGS,
            nodes=nodes,
            partitions=partitions,
        )
    )
    GRES_CONF.write_text(_gres())
    subprocess.run(_in_namespaces(CONTROLLER[0], hosts, ["slurmctld", "-c"]), check=True)
    for name in NODES:
        (STATE_DIR / f"spool-{name}").mkdir(exist_ok=True)
        _run(*_in_namespaces(name, hosts, ["slurmd", "-N", name]), namespace=name)
    slurm_cluster.wait_until_up(set(NODES), timeout, STATE_DIR, stop)
    return STATE_DIR


def stop() -> None:
    """Cancel jobs, stop the daemons by their pids, remove namespaces, bridge and config."""
    if shutil.which("scancel") and running():
        subprocess.run(["scancel", "--user", "root"], capture_output=True)
        time.sleep(1)
    for name in [*(f"slurmd-{n}" for n in NODES), "slurmctld"]:
        slurm_cluster.terminate(_pid(name))
    for name in NODES:
        for pid in namespace_pids(name):  # job processes a killed slurmd left behind
            os.kill(pid, signal.SIGKILL)
        _run("ip", "netns", "delete", name, check=False)
    _run("ip", "link", "delete", BRIDGE, check=False)
    for path in (CONF, GRES_CONF):
        if path.is_file() and path.read_text().startswith(MARK):
            path.unlink()


def namespace_pids(node: str) -> list[int]:
    """Processes running in a node's network namespace (the ranks of its job steps, its slurmd)."""
    try:
        target = os.stat(f"/run/netns/{node}").st_ino
    except OSError:
        return []
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.stat(entry / "ns" / "net").st_ino == target:
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def processes_on(node: str, needle: str) -> list[int]:
    """Pids on `node` whose command line contains `needle`."""
    found = []
    for pid in namespace_pids(node):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if needle in cmdline:
            found.append(pid)
    return found


if __name__ == "__main__":
    slurm_cluster.cli(start, stop)
