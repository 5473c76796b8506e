"""Load a checkpoint sharded over the launched ranks, then save it from every rank (a test helper).

Run under the workflow's launcher: `launch_ranks.py ... _save_roundtrip.py --init A --out B`.
`--pause-after-rows FILE` touches FILE once this rank wrote its rows and sleeps, so a test can
kill the job in the middle of a save; `--bytes-read DIR` writes DIR/rank<N>: the checkpoint bytes that
rank read while loading.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch

from lineage.checkpoints import distributed as checkpoint_io
from lineage.checkpoints.load import tied_aliases
from lineage.training import fsdp
from lineage.training.dist import close, init_distributed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--init", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--max-shard-bytes", type=int, default=2 * 1024**3)
    parser.add_argument("--dtype", choices=("fp32", "bf16"), default="fp32")
    parser.add_argument("--native", action="store_true", help="write the model's own names, whatever the parent's")
    parser.add_argument("--pause-after-rows", type=Path, default=None)
    parser.add_argument("--bytes-read", type=Path, default=None)
    args = parser.parse_args()
    torch.set_num_threads(1)
    env = init_distributed("cpu")
    try:
        if args.bytes_read is not None:
            load_into = fsdp.load_into

            def counted(*a, **k):
                layout, read = load_into(*a, **k)
                args.bytes_read.mkdir(parents=True, exist_ok=True)
                (args.bytes_read / f"rank{env.rank}").write_text(str(read))
                return layout, read

            fsdp.load_into = counted
        model = fsdp.load_sharded_model(args.init, env, precision="fp32", trainable=False)
        if args.pause_after_rows is not None:
            write_rows = checkpoint_io.write_rows

            def write_then_pause(*a, **k):
                write_rows(*a, **k)
                args.pause_after_rows.touch()
                time.sleep(600)

            checkpoint_io.write_rows = write_then_pause
        checkpoint_io.save_from(
            model,
            args.out,
            env,
            layout=None if args.native else model.checkpoint_layout,
            config=model.config,
            companions_from=args.init,
            lineage={"run": args.out.name, "kind": "roundtrip", "root": {"run": "base"}},
            dtype={"fp32": torch.float32, "bf16": torch.bfloat16}[args.dtype],
            skip=list(tied_aliases(model)),
            max_shard_bytes=args.max_shard_bytes,
        )
    finally:
        close()


if __name__ == "__main__":
    main()
