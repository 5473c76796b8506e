"""Time the streamed soup against plain file copies, a naive whole-state-dict soup and mergekit.

Two random-init bf16 parents of a Llama shape are written once per size (sharing one root),
then each method runs as its own process, timed (wall) and measured (peak RSS) by
/usr/bin/time, with the page cache warm (parents read just before) and cold (dropped just
before). The read (both parents to /dev/null) is the floor of any soup; the copy is the floor any
soup that writes pays: each parent shard read once, one parent's
bytes written and fsynced, as the soup fsyncs its output (mergekit, which leaves its output in
the page cache, is timed up to a `sync` of it too). `ours` checks the parents' shards by their
recorded size and mtime (the soup's default), `ours-content` re-hashes every byte of them.
Everything is written under --workdir, never in the repository.

Run as:
    .venv/bin/python benchmarks/soup.py --mergekit-bin /tmp/mk-venv/bin/mergekit-yaml     # two ~1.5B parents
    .venv/bin/python benchmarks/soup.py --sizes 0.4B,0.75B,1.5B --repeats 1 --cache warm  # peak RSS vs size
    .venv/bin/python benchmarks/soup.py --hidden 256 --layers 2 --repeats 1               # a quick look
    .venv/bin/python benchmarks/soup.py --outdir /dev/shm --cache warm  # outputs in memory: no disk in the way
    .venv/bin/python benchmarks/soup.py --from-json a.json b.json --plot rss.png          # tables of earlier runs
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

# torch and the workflow's modules are imported where needed, so that the copy+sha256 baseline,
# which runs this file again, starts as fast as a plain script.
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow" / "scripts"))

METHODS = ("read", "copy", "copy+sha256", "naive", "ours", "ours-content", "mergekit")
# A TinyLlama-like block (hidden 2048, MLP 5632, 32 heads, 4 KV heads, vocab 32000); layers set the size.
SHAPE = dict(hidden_size=2048, intermediate_size=5632, num_attention_heads=32, num_key_value_heads=4, vocab_size=32000)


def parse_count(text: str) -> int:
    match = re.fullmatch(r"(\d+(?:\.\d+)?)([kmb]?)", text.strip().lower())
    if not match:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a parameter count such as 1.5B, 400M or 1500000000")
    return int(float(match[1]) * {"": 1, "k": 1e3, "m": 1e6, "b": 1e9}[match[2]])


def llama_config(params: int | None, hidden: int | None = None, layers: int | None = None):
    """A Llama config of about `params` parameters (or of the given hidden size and layer count)."""
    import torch
    from transformers import LlamaConfig

    shape = dict(SHAPE)
    if hidden:
        shape.update(
            hidden_size=hidden,
            intermediate_size=hidden * 11 // 4,
            num_attention_heads=max(1, hidden // 64),
            num_key_value_heads=max(1, hidden // 512),
        )
    h, kv = shape["hidden_size"], shape["hidden_size"] // shape["num_attention_heads"] * shape["num_key_value_heads"]
    per_layer = 2 * h * h + 2 * h * kv + 3 * h * shape["intermediate_size"] + 2 * h
    if layers is None:
        layers = max(1, round(((params or 1_500_000_000) - 2 * shape["vocab_size"] * h - h) / per_layer))
    config = LlamaConfig(**shape, num_hidden_layers=layers, tie_word_embeddings=False)
    config.architectures = ["LlamaForCausalLM"]
    config.dtype = torch.bfloat16
    return config


def make_parents(directory: Path, config, shard_bytes: int) -> list[Path]:
    """Two parents with random weights (seeds 1 and 2) and one shared root; reused when present
    (and rewritten when their lineage.json predates recorded file sizes and times)."""
    import torch
    from transformers import LlamaForCausalLM

    from lineage.checkpoints.directory import lineage_record, write_lineage
    from lineage.checkpoints.write import ShardWriter

    with torch.device("meta"):
        shapes = {name: tuple(t.shape) for name, t in LlamaForCausalLM(config).state_dict().items()}
    root = {"run": "bench-init", "fingerprint": "0" * 64}
    parents = []
    for seed, name in ((1, "parentA"), (2, "parentB")):
        target = directory / name
        parents.append(target)
        if (target / "lineage.json").is_file() and "file_stats" in json.loads((target / "lineage.json").read_text()):
            continue
        shutil.rmtree(target, ignore_errors=True)
        generator = torch.Generator().manual_seed(seed)
        started = time.time()
        with ShardWriter(target, max_shard_bytes=shard_bytes) as writer:
            for tensor_name, shape in shapes.items():
                writer.add(tensor_name, torch.randn(shape, generator=generator, dtype=torch.bfloat16).mul_(0.02))
        config.save_pretrained(target)
        write_lineage(target, lineage_record(run=name, kind="sft", root=root), known_sha256=writer.sha256)
        print(f"  wrote {target} ({writer.total_bytes / 1e9:.2f} GB) in {time.time() - started:.0f} s", flush=True)
    return parents


def shards(parent: Path) -> list[Path]:
    index = json.loads((parent / "model.safetensors.index.json").read_text())
    return [parent / name for name in sorted(set(index["weight_map"].values()))]


def drop_caches(files: list[Path]) -> str:
    """Empty the page cache; falls back to evicting just `files` when /proc/sys/vm is read-only."""
    subprocess.run(["sync"], check=True)
    try:
        Path("/proc/sys/vm/drop_caches").write_text("1\n")
        return "drop_caches"
    except OSError:
        for file in files:
            fd = os.open(file, os.O_RDONLY)
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)
        return "posix_fadvise(DONTNEED)"


def warm(files: list[Path]) -> None:
    subprocess.run(["sync"], check=True)
    subprocess.run(["cat", *map(str, files)], stdout=subprocess.DEVNULL, check=True)


def commands(method: str, a: Path, b: Path, out: Path, mergekit: str | None) -> list[str]:
    """The process each method runs; `out` is an empty directory it may fill."""
    # the shell only redirects; every path is quoted (--workdir may hold spaces or shell characters)
    if method == "read":  # the floor of any soup: read both parents once, write nothing
        return ["sh", "-c", f"{shlex.join(['cat', *map(str, shards(a) + shards(b))])} > /dev/null"]
    if method == "copy":
        copy = shlex.quote(str(out / "copy.bin"))
        script = (
            f"{shlex.join(['cat', *map(str, shards(a))])} > {copy} && "
            f"{shlex.join(['cat', *map(str, shards(b))])} > /dev/null && sync {copy}"
        )
        return ["sh", "-c", script]
    if method == "copy+sha256":
        return [sys.executable, __file__, "--copy-sha256", str(a), str(b), str(out / "copy+sha256")]
    if method == "naive":
        return [sys.executable, __file__, "--naive-soup", str(a), str(b), str(out / "naive")]
    if method in ("ours", "ours-content"):  # parent shards verified by recorded size and mtime, or by every byte
        return [
            sys.executable,
            str(REPO / "workflow" / "scripts" / "soup.py"),
            "--parent",
            f"a={a}",
            "--parent",
            f"b={b}",
            "--run",
            "bench",
            "--out",
            str(out / method),
            "--no-progress",
            "--max-shard-bytes",
            "1GiB",
            "--verify",
            "content" if method == "ours-content" else "stat",
        ]
    config = out / "mergekit.yml"
    config.write_text(
        f"models:\n  - model: {a}\n    parameters: {{weight: 0.5}}\n  - model: {b}\n    parameters: {{weight: 0.5}}\n"
        "merge_method: linear\ndtype: float32\nout_dtype: bfloat16\n"
    )
    merge = shlex.join(
        [
            mergekit,
            str(config),
            str(out / "mergekit"),
            "--lazy-unpickle",
            "--no-copy-tokenizer",
            "--quiet",
            "--out-shard-size",
            "1B",
            "--no-write-model-card",
        ]
    )
    # mergekit leaves its output in the page cache; like copy and ours, it is timed until the output is on disk
    return ["sh", "-c", f"{merge} && sync {shlex.quote(str(out / 'mergekit'))}/*.safetensors"]


def measure(command: list[str], log: Path) -> tuple[float, int, float]:
    """Wall seconds, peak RSS bytes and CPU seconds (user + system) of one fresh process.

    CPU time is reported beside wall time because this machine's 2 cores are shared: other
    work inflates wall time but not the CPU a method needs.
    """
    stats = log.with_suffix(".time")
    if Path("/usr/bin/time").is_file():
        wrapped = ["/usr/bin/time", "-f", "%M %U %S", "-o", str(stats), *command]
    else:  # a fresh child whose only child is the command: RUSAGE_CHILDREN is that command's
        wrapped = [sys.executable, "-c", RUSAGE_CHILD, str(stats), *command]
    started = time.perf_counter()
    with log.open("w") as handle:
        code = subprocess.run(
            wrapped, stdout=handle, stderr=subprocess.STDOUT, env={**os.environ, "HF_HUB_OFFLINE": "1"}
        ).returncode
    wall = time.perf_counter() - started
    if code != 0:
        raise RuntimeError(f"{command[0]} exited {code}; see {log}:\n{log.read_text()[-2000:]}")
    rss, user, system = stats.read_text().split()[-3:]
    return wall, int(rss) * 1024, float(user) + float(system)


RUSAGE_CHILD = """
import resource, subprocess, sys
code = subprocess.run(sys.argv[2:]).returncode
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
open(sys.argv[1], "w").write(f"{usage.ru_maxrss} {usage.ru_utime} {usage.ru_stime}")
sys.exit(code)
"""


def check_output(method: str, out: Path, a: Path, b: Path) -> str:
    """Compare three tensors of a method's output with 0.5*a + 0.5*b computed in fp32."""
    import torch
    from safetensors import safe_open

    directory = out / method
    files = sorted(directory.glob("*.safetensors"))
    if not files:
        return "-"
    located = {}
    for file in files:
        with safe_open(file, "pt") as handle:
            located.update(dict.fromkeys(handle.keys(), file))
    names = sorted(located)
    worst = 0
    for name in (names[0], names[len(names) // 2], names[-1]):
        with (
            safe_open(located[name], "pt") as h,
            safe_open(_locate(a, name), "pt") as ha,
            safe_open(_locate(b, name), "pt") as hb,
        ):
            got = h.get_tensor(name)
            want = (0.5 * ha.get_tensor(name).float() + 0.5 * hb.get_tensor(name).float()).to(torch.bfloat16)
        worst = max(worst, int((got.view(torch.int16).int() - want.view(torch.int16).int()).abs().max()))
    return "bit-exact" if worst == 0 else f"off by up to {worst} ulp"


def _locate(parent: Path, name: str) -> Path:
    return parent / json.loads((parent / "model.safetensors.index.json").read_text())["weight_map"][name]


def copy_sha256(a: Path, b: Path, out: Path) -> None:
    """The floor for a soup that verifies its parents and records its output's checksum.

    Hashes every parent shard (two threads, like verify_checkpoint), then copies one parent's
    shards while hashing them, and fsyncs: what a soup must do besides computing, with no torch.
    """

    def digest(path: Path) -> str:
        hasher, buffer = hashlib.sha256(), bytearray(1 << 24)
        with open(path, "rb", buffering=0) as handle:
            while size := handle.readinto(buffer):
                hasher.update(memoryview(buffer)[:size])
        return hasher.hexdigest()

    with ThreadPoolExecutor(2) as pool:
        list(pool.map(digest, shards(a) + shards(b)))
    out.mkdir(parents=True)
    buffer = bytearray(1 << 24)
    for number, path in enumerate(shards(a)):
        hasher = hashlib.sha256()
        with open(path, "rb", buffering=0) as source, open(out / f"{number}.bin", "wb") as target:
            while size := source.readinto(buffer):
                target.write(memoryview(buffer)[:size])
                hasher.update(memoryview(buffer)[:size])
            target.flush()
            os.fsync(target.fileno())


def naive_soup(a: Path, b: Path, out: Path) -> None:
    """Load both state dicts whole, average in fp32, save one file: what a short script would do."""
    from safetensors.torch import load_file, save_file

    left = {k: v for f in shards(a) for k, v in load_file(f).items()}
    right = {k: v for f in shards(b) for k, v in load_file(f).items()}
    soup = {k: (0.5 * left[k].float() + 0.5 * right[k].float()).to(left[k].dtype) for k in left}
    out.mkdir(parents=True)
    save_file(soup, out / "model.safetensors", metadata={"format": "pt"})
    with open(out / "model.safetensors", "rb") as handle:
        os.fsync(handle.fileno())


def run_size(label: str, config, args, report: list[dict]) -> None:
    directory = args.workdir / label
    print(f"{label}: {config.num_hidden_layers} layers, hidden {config.hidden_size}", flush=True)
    a, b = make_parents(directory, config, args.shard_bytes)
    files = shards(a) + shards(b)
    size = sum(f.stat().st_size for f in shards(a))
    methods = [m for m in args.methods if m != "mergekit" or args.mergekit_bin]
    if "mergekit" in args.methods and not args.mergekit_bin:
        print("  mergekit skipped: no --mergekit-bin given (or it does not exist)", flush=True)
    for cache in args.cache:
        for repeat in range(args.repeats):
            for method in methods:
                out = Path(tempfile.mkdtemp(prefix=f"{method}-", dir=args.outdir or directory))
                how = drop_caches(files) if cache == "cold" else (warm(files) or "warm")
                load = os.getloadavg()[0]
                wall, rss, cpu = measure(commands(method, a, b, out, args.mergekit_bin), out.with_suffix(".log"))
                check = check_output(method, out, a, b) if repeat == 0 and cache == args.cache[0] else None
                phases = None
                if method.startswith("ours"):
                    phases = json.loads((out / method / "lineage.json").read_text())["phase_s"]
                report.append(
                    dict(
                        size=label,
                        parent_bytes=size,
                        params=_params(a),
                        cache=cache,
                        cache_method=how,
                        method=method,
                        repeat=repeat,
                        wall_s=wall,
                        rss_bytes=rss,
                        cpu_s=cpu,
                        load=load,
                        check=check,
                        phases=phases,
                    )
                )
                print(
                    f"  {cache:4} {method:12} #{repeat}: {wall:7.2f} s, CPU {cpu:7.2f} s, "
                    f"peak RSS {rss / 2**30:6.2f} GiB, "
                    f"load before {load:.1f}"
                    + (f", {check}" if check else "")
                    + (f", phases {phases}" if phases else ""),
                    flush=True,
                )
                shutil.rmtree(out)
                out.with_suffix(".log").unlink()
                out.with_suffix(".time").unlink()


def _params(parent: Path) -> int:
    index = json.loads((parent / "model.safetensors.index.json").read_text())
    return index["metadata"]["total_size"] // 2


def table(report: list[dict]) -> str:
    """Markdown: min / median / max wall time, median peak RSS and the goal ratios."""
    lines = [
        "| parents | cache | method | wall min / median / max (s) | CPU (s) | peak RSS (GiB) | wall vs copy | "
        "wall vs copy+sha256 | parents read (GB/s) | wall vs read | mergekit / ours | output |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    groups: dict[tuple, list[dict]] = {}
    for row in report:
        groups.setdefault((row["size"], row["cache"], row["method"]), []).append(row)

    def median_wall(size: str, cache: str, method: str) -> float | None:
        rows = groups.get((size, cache, method))
        return statistics.median(r["wall_s"] for r in rows) if rows else None

    for (size, cache, method), rows in groups.items():
        walls = [r["wall_s"] for r in rows]
        median = statistics.median(walls)
        ratios = []
        for base in ("copy", "copy+sha256"):
            floor = median_wall(size, cache, base)
            ratios.append(f"{median / floor:.2f}x" if floor else "-")
        read = median_wall(size, cache, "read")
        rate = 2 * rows[0]["parent_bytes"] / 1e9 / median  # both parents
        ours = median_wall(size, cache, "ours")
        mk = f"{median / ours:.2f}x" if method == "mergekit" and ours else ""
        check = next((r["check"] for r in rows if r["check"]), "") or ""
        gb = rows[0]["parent_bytes"] / 1e9
        lines.append(
            f"| {size} ({rows[0]['params'] / 1e9:.2f}B params, {gb:.2f} GB each) | {cache} | {method} | "
            f"{min(walls):.2f} / {median:.2f} / {max(walls):.2f} | "
            f"{statistics.median(r['cpu_s'] for r in rows):.1f} | "
            f"{statistics.median(r['rss_bytes'] for r in rows) / 2**30:.2f} | {ratios[0]} | {ratios[1]} | "
            f"{rate:.2f} | {f'{median / read:.2f}x' if read else '-'} | {mk} | {check} |"
        )
    phased = [r for r in report if r.get("phases")]
    if phased:
        lines += [
            "",
            "Where our soup's time goes (median s; the rest of the wall time is interpreter start, "
            "imports, the final fsync and exit):",
            "",
            "| parents | cache | method | checks (+ small files' sha256) | average (read, verify parents, "
            "compute, write, hash output) | rest |",
            "|---|---|---|---|---|---|",
        ]
        for (size, cache, method), rows in groups.items():
            if not method.startswith("ours"):
                continue
            med = {k: statistics.median(r["phases"][k] for r in rows) for k in rows[0]["phases"]}
            rest = statistics.median(r["wall_s"] - sum(r["phases"].values()) for r in rows)
            lines.append(
                f"| {size} | {cache} | {method} | {med['check']:.2f} | {med['average_and_verify']:.2f} | {rest:.2f} |"
            )
    sizes = list(dict.fromkeys(r["size"] for r in report))
    methods = [m for m in METHODS if any(r["method"] == m for r in report)]
    if len(sizes) > 1:
        lines += [
            "",
            "Peak RSS (GiB, median over cache modes and repeats) against the size of one parent:",
            "",
            "| parents | " + " | ".join(methods) + " |",
            "|---" * (len(methods) + 1) + "|",
        ]
        for size in sizes:
            rows = {m: [r["rss_bytes"] for r in report if r["size"] == size and r["method"] == m] for m in methods}
            gb = next(r["parent_bytes"] for r in report if r["size"] == size) / 1e9
            cells = [f"{statistics.median(v) / 2**30:.2f}" if v else "-" for v in rows.values()]
            lines.append(f"| {size} ({gb:.2f} GB) | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot(report: list[dict], path: Path) -> None:
    """Peak RSS against parent size, one line per method."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(6, 4))
    for method in METHODS:
        rows = [r for r in report if r["method"] == method]
        sizes = sorted({r["parent_bytes"] for r in rows})
        rss = [statistics.median(r["rss_bytes"] for r in rows if r["parent_bytes"] == s) / 2**30 for s in sizes]
        if sizes:
            axis.plot([s / 1e9 for s in sizes], rss, marker="o", label=method)
    axis.set(xlabel="size of one parent (GB, bf16)", ylabel="peak RSS (GiB)", title="Soup of two parents: peak RSS")
    axis.grid(alpha=0.3)
    axis.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=120)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--params", type=parse_count, default=None, help="parameters per parent (default 1.5B)")
    parser.add_argument("--sizes", default=None, help="comma-separated parameter counts, e.g. 0.4B,0.75B,1.5B")
    parser.add_argument("--hidden", type=int, default=None, help="hidden size (scales heads and MLP with it)")
    parser.add_argument("--layers", type=int, default=None, help="layer count (overrides --params)")
    parser.add_argument("--shard-bytes", type=int, default=10**9, help="parents' shard size (default 1 GB)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cache", default="warm,cold", help="warm, cold or warm,cold")
    parser.add_argument("--methods", default=",".join(METHODS), help=f"subset of {','.join(METHODS)}")
    parser.add_argument(
        "--mergekit-bin", default=None, help="mergekit-yaml of a separate venv; mergekit is skipped without it"
    )
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/soup-bench"))
    parser.add_argument(
        "--outdir",
        type=Path,
        default=None,
        help="where the methods write their outputs (default: beside the parents); a tmpfs such "
        "as /dev/shm takes the disk's write speed out of the comparison",
    )
    parser.add_argument("--json", type=Path, default=None, help="also write every measurement here")
    parser.add_argument("--plot", type=Path, default=None, help="also draw peak RSS against size into this PNG")
    parser.add_argument(
        "--from-json",
        type=Path,
        nargs="*",
        default=None,
        help="measure nothing: print the tables (and --plot) of earlier --json files",
    )
    parser.add_argument("--naive-soup", nargs=3, type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--copy-sha256", nargs=3, type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.naive_soup:
        naive_soup(*args.naive_soup)
        return 0
    if args.copy_sha256:
        copy_sha256(*args.copy_sha256)
        return 0
    if args.mergekit_bin and not Path(args.mergekit_bin).is_file():
        print(f"mergekit skipped: {args.mergekit_bin} does not exist", flush=True)
        args.mergekit_bin = None
    if REPO in args.workdir.resolve().parents or args.workdir.resolve() == REPO:
        parser.error(
            f"--workdir {args.workdir} is inside the repository; choose a path outside it, e.g. /tmp/soup-bench"
        )
    args.methods = [m for m in args.methods.split(",") if m]
    args.cache = [c for c in args.cache.split(",") if c]
    if unknown := set(args.methods) - set(METHODS) or set(args.cache) - {"warm", "cold"}:
        parser.error(f"unknown method or cache mode: {', '.join(sorted(unknown))}")
    if args.from_json is not None:
        report = [row for path in args.from_json for row in json.loads(path.read_text())]
        print(table(report))
        if args.plot:
            plot(report, args.plot)
        return 0
    args.workdir.mkdir(parents=True, exist_ok=True)

    if args.hidden or args.layers:
        label = f"h{args.hidden or SHAPE['hidden_size']}-l{args.layers or 'auto'}"
        sizes = [(label, llama_config(args.params, args.hidden, args.layers))]
    else:
        counts = [parse_count(s) for s in args.sizes.split(",")] if args.sizes else [args.params or 1_500_000_000]
        sizes = [(f"{c / 1e9:g}B", llama_config(c)) for c in counts]
    free = shutil.disk_usage(args.workdir).free
    import torch

    print(
        f"{dt.datetime.now():%Y-%m-%d %H:%M}, {os.cpu_count()} CPUs, {platform.python_version()}, "
        f"torch {torch.__version__}, "
        f"{free / 1e9:.0f} GB free in {args.workdir}, load average {os.getloadavg()[0]:.2f}",
        flush=True,
    )
    report: list[dict] = []
    for label, config in sizes:
        run_size(label, config, args, report)
    print()
    print(table(report))
    print(
        f"\ncold cache by {next((r['cache_method'] for r in report if r['cache'] == 'cold'), '-')}; "
        f"peak RSS from /usr/bin/time (%M), wall from the parent process"
    )
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    if args.plot:
        plot(report, args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
