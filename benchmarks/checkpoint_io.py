"""Checkpoint load and save of a sharded model: rank 0 alone (the former path) against every rank its own rows.

A random-init model of a named shape (default: Nemotron-H at the card's widths, `30b_a3b_reduced`,
vocabulary 131,072) is written once in the Hub's layout by transformers' own `save_pretrained`
(`backbone.*`, one tensor per expert) and once in transformers' internal layout. Then each path
runs as its own process (so peak host RSS is its own), on the device of the launched ranks:

  rank0-load     rank 0 reads the whole checkpoint in fp32 and broadcasts it (set_model_state_dict,
                 broadcast_from_rank0); internal layout only: the former path refused the Hub's
  ranks-load     every rank reads only its rows (lineage.checkpoints.distributed.load_into)
  ranks-load-hub the same from the Hub's layout
  rank0-save     the full state gathered to rank 0 (cpu_offload), written by save_checkpoint
  ranks-save     every rank writes its rows, the files hashed by all ranks (save_from), Hub layout
  state-sync     a resumable state (fp32 weights and AdamW's moments) by torch.distributed.checkpoint, waited for
  state-async    the same in the background (lineage.training.state.StateSaver): the pause, then the whole write

Each prints one JSON line: seconds, peak host RSS of the process (ru_maxrss), bytes read or
written by this rank. Outputs go under --workdir (never the repository).

Run as (one GPU):
    python benchmarks/checkpoint_io.py --workdir /tmp/ckpt-bench
    python benchmarks/checkpoint_io.py --workdir /tmp/ckpt-bench --size tiny --vocab 2048   # a quick look on CPU
    python benchmarks/checkpoint_io.py --workdir /tmp/state-bench --layers ME --phases state-sync,state-async
Several GPUs: the phases run under `accelerate launch --num_processes N benchmarks/checkpoint_io.py --phase ...`.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
import types
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow" / "scripts"))

PHASES = ("rank0-load", "ranks-load", "ranks-load-hub", "rank0-save", "ranks-save", "state-sync", "state-async")


def rss_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def write_checkpoints(args) -> None:
    """The model's random init, saved by transformers (Hub layout) and by our single writer (internal)."""
    import torch
    from transformers import AutoModelForCausalLM

    from lineage.checkpoints.directory import save_checkpoint
    from lineage.modeling import build_config

    token_ids = types.SimpleNamespace(bos_token_id=1, eos_token_id=2, pad_token_id=0)
    config = build_config(args.family, args.size, token_ids, vocab_size=args.vocab)
    if args.layers:  # fewer layers of the same widths (a state of the full shape may not fit the disk)
        from lineage.families.card import CARD_LAYERS

        config.layers_block_type = [CARD_LAYERS[c] for c in args.layers]
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    started = time.perf_counter()
    model.save_pretrained(args.workdir / "hub", max_shard_size="2GB")
    hub_s = time.perf_counter() - started
    state = {name: tensor for name, tensor in model.state_dict().items()}
    save_checkpoint(args.workdir / "native", state, config=config, companions_from=None, lineage={"run": "native"})
    params = sum(t.numel() for t in state.values())
    print(json.dumps({"phase": "write", "parameters": params, "transformers_save_pretrained_s": round(hub_s, 2)}))


def run_phase(args) -> None:
    import torch
    from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict, set_model_state_dict
    from transformers import AutoConfig, AutoModelForCausalLM

    from lineage.checkpoints.directory import save_checkpoint
    from lineage.checkpoints.load import tied_aliases
    from lineage.checkpoints.read import iter_shard_tensors, shard_files
    from lineage.training import checkpoint_io
    from lineage.training.dist import barrier, close, init_distributed
    from lineage.training.fsdp import load_sharded_model, shard

    env = init_distributed("auto")
    source = args.workdir / ("hub" if args.phase == "ranks-load-hub" else "native")
    result = {"phase": args.phase, "world_size": env.world_size, "rank": env.rank}
    config = AutoConfig.from_pretrained(source)
    if args.phase.endswith("load") or args.phase.endswith("load-hub"):  # built and sharded alike, untimed
        with torch.device("meta"):
            model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
        aliases = tied_aliases(model)
        shard(model, env, "bf16")
        model.to_empty(device=env.device)
        result["rss_before_gib"] = round(rss_gib(), 2)
        barrier()
        started = time.perf_counter()
    if args.phase == "rank0-load":
        state = {}
        if env.is_main:
            for file in shard_files(source):
                for name, tensor in iter_shard_tensors(source / file):
                    state[name] = tensor.float()
            for alias, first in aliases.items():
                state[alias] = state[first]
        options = StateDictOptions(full_state_dict=True, broadcast_from_rank0=True)
        set_model_state_dict(model, state, options=options)
        del state
    elif args.phase in ("ranks-load", "ranks-load-hub"):
        _, result["bytes_read"] = checkpoint_io.load_into(model, source, env, skip=list(aliases))
    elif args.phase.startswith("state"):
        from lineage.training.optim import build_optimizer
        from lineage.training.state import StateSaver, save_state

        model = load_sharded_model(args.workdir / "hub", env, precision="bf16")
        optimizer = build_optimizer(model, lr=1e-6, betas=(0.9, 0.95), weight_decay=0.0, eps=1e-8)
        for param in model.parameters():
            param.grad = torch.zeros_like(param)
        optimizer.step()  # AdamW's moments exist from here on
        out = args.workdir / f"out-{args.phase}"
        shutil.rmtree(out, ignore_errors=True)
        result["rss_before_gib"] = round(rss_gib(), 2)
        barrier()
        started = time.perf_counter()
        if args.phase == "state-sync":
            save_state(out, 1, model, optimizer, env, {"recipe_hash": "bench"})
        else:
            saver = StateSaver(out, env)
            saver.save(1, model, optimizer, {"recipe_hash": "bench"})
            result["pause_s"] = round(time.perf_counter() - started, 2)
            saver.wait()
        result["state_gib"] = round(sum(f.stat().st_size for f in out.rglob("*") if f.is_file()) / 2**30, 2)
        shutil.rmtree(out, ignore_errors=True)  # a state is 12 bytes a parameter: leave the disk to the next phase
    else:
        model = load_sharded_model(args.workdir / "hub", env, precision="bf16", trainable=False)
        out = args.workdir / f"out-{args.phase}"
        shutil.rmtree(out, ignore_errors=True)
        result["rss_before_gib"] = round(rss_gib(), 2)
        barrier()
        started = time.perf_counter()
        if args.phase == "rank0-save":
            aliases = tied_aliases(model)
            options = StateDictOptions(full_state_dict=True, cpu_offload=True)
            state = {k: v for k, v in get_model_state_dict(model, options=options).items() if k not in aliases}
            if env.is_main:
                save_checkpoint(
                    out, state, config=model.config, companions_from=None, lineage={"run": "x"}, dtype=torch.bfloat16
                )
            del state
        else:
            counts = checkpoint_io.save_from(
                model,
                out,
                env,
                layout=model.checkpoint_layout,
                config=model.config,
                companions_from=None,
                lineage={"run": "x"},
                dtype=torch.bfloat16,
                skip=list(tied_aliases(model)),
            )
            result.update(counts)
    if env.device.type == "cuda":
        torch.cuda.synchronize()
    barrier()
    result["seconds"] = round(time.perf_counter() - started, 2)
    result["peak_rss_gib"] = round(rss_gib(), 2)
    result["checkpoint_gib"] = round(sum(f.stat().st_size for f in source.glob("*.safetensors")) / 2**30, 2)
    print(json.dumps(result), flush=True)
    close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--family", default="nemotron_h")
    parser.add_argument("--size", default="30b_a3b_reduced")
    parser.add_argument("--vocab", type=int, default=131072)
    parser.add_argument(
        "--layers", default=None, help="layer pattern of the card's letters (M Mamba-2, E MoE, * attention)"
    )
    parser.add_argument(
        "--phase", choices=PHASES, default=None, help="run one phase here (default: all, each its own process)"
    )
    parser.add_argument("--phases", default=",".join(PHASES))
    parser.add_argument("--drop-caches", action="store_true", help="drop the page cache before each phase (root)")
    args = parser.parse_args()
    if args.phase:
        run_phase(args)
        return
    args.workdir.mkdir(parents=True, exist_ok=True)
    if not (args.workdir / "native" / "lineage.json").is_file():
        write_checkpoints(args)
    for phase in args.phases.split(","):
        if args.drop_caches:
            subprocess.run(["sync"], check=False)
            try:
                Path("/proc/sys/vm/drop_caches").write_text("3\n")
            except OSError as err:
                print(f"note: page cache not dropped ({err})", file=sys.stderr)
        command = [sys.executable, __file__, "--workdir", str(args.workdir), "--phase", phase]
        subprocess.run(command, check=True, env={**os.environ, "PYTHONPATH": str(REPO / "workflow" / "scripts")})


if __name__ == "__main__":
    main()
