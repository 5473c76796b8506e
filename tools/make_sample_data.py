"""Write the sample data that the embedded scale ships in resources/sample.

The embedded scale runs the whole lineage on two CPU cores, so it needs small stand-ins for
the private battle export, the public general SFT mixture and the benchmarks. Every text here
comes from the templates of tools/sample_data/ (one module per file written, beside the word
banks of text_banks.json),
drawn with a fixed seed: a rerun gives byte-identical files, and nothing is downloaded or copied
from a public dataset.

The battle export is laid out to the card's counts under the dedup policy of the clean stage
(236 battles = 106 / 72 / 34 / 24 by vote, 140 preferred answers, 29 holdout prompts, 135
recovered pairs), so the data stages can be checked against the card at this scale too.

Files written under --out:
    battles.jsonl            236 battles in the native export format
    battles_arena.jsonl      24 battles in the public Chatbot Arena export format
    general_mix.jsonl        ~3,000 short chat rows standing in for the Stage-1 SFT mixture
    eval/mmlu.jsonl          240 four-choice questions over ten subjects
    eval/gsm8k.jsonl         160 grade-school word problems ("#### N" final line)
    eval/ifeval.jsonl        240 instruction-following prompts in the IFEval format
    eval/gen_prompts.jsonl   120 open-ended generation prompts

Run as:
python tools/make_sample_data.py --out resources/sample
python tools/make_sample_data.py --out /tmp/sample --seed 7   # another draw, same counts
"""

import argparse
from pathlib import Path

from sample_data.arena import make_arena
from sample_data.battles import make_battles
from sample_data.common import norm, write_jsonl
from sample_data.gen_prompts import make_gen_prompts
from sample_data.general_mix import make_general_mix
from sample_data.gsm8k import make_gsm8k
from sample_data.ifeval import make_ifeval
from sample_data.mmlu import make_mmlu

parser = argparse.ArgumentParser(description="Write the embedded-scale sample data (battles, general mix, eval items)")
parser.add_argument("--out", type=Path, default=Path("resources/sample"), help="output folder")
parser.add_argument("--seed", type=int, default=0, help="seed of every draw; 0 is the shipped sample")

if __name__ == "__main__":
    args = parser.parse_args()
    out = args.out
    general_mix = make_general_mix(args.seed)
    taken = {norm(m["content"]) for row in general_mix for m in row["messages"]}  # eval items must not meet these
    files = {
        "battles.jsonl": make_battles(args.seed),
        "battles_arena.jsonl": make_arena(args.seed),
        "general_mix.jsonl": general_mix,
        "eval/mmlu.jsonl": make_mmlu(args.seed, taken),
        "eval/gsm8k.jsonl": make_gsm8k(args.seed, taken),
        "eval/ifeval.jsonl": make_ifeval(args.seed, taken),
        "eval/gen_prompts.jsonl": make_gen_prompts(args.seed, taken),
    }
    for name, rows in files.items():
        write_jsonl(out / name, rows)
        print(f"{out / name}: {len(rows)} rows, {(out / name).stat().st_size:,} bytes")
