# Sourced by the GPU training benchmarks: the data stages on the shipped sample (CPU, seconds).
# make_gpu_data OUT writes OUT/data/{winners_x40,winners,general_mix}.jsonl and OUT/tokenizer.
make_gpu_data() {
  local out=$1 s=workflow/scripts d=$1/data
  mkdir -p "$d"
  echo "== data stages (CPU)"
  python3 $s/read_battles.py --export resources/sample/battles.jsonl --out $d/battles.jsonl --quarantine $d/q.jsonl
  python3 $s/clean_battles.py --in $d/battles.jsonl --out $d/clean.jsonl --stats $d/clean_stats.json
  python3 $s/dedup_battles.py --in $d/clean.jsonl --out $d/preferred.jsonl --quarantine $d/dup.jsonl
  python3 $s/split_holdout.py --in $d/preferred.jsonl --out-train $d/train.jsonl --out-holdout $d/holdout.jsonl
  python3 $s/winner_rows.py --train $d/train.jsonl --holdout $d/holdout.jsonl --repeat 40 --out $d/winners_x40.jsonl
  python3 $s/winner_rows.py --train $d/train.jsonl --holdout $d/holdout.jsonl --repeat 1 --out $d/winners.jsonl
  python3 $s/build_tokenizer.py --corpus resources/sample/battles.jsonl --corpus resources/sample/general_mix.jsonl \
    --vocab-size 2048 --bundle resources/bundle --out $out/tokenizer
  python3 $s/sample_general_mix.py --source resources/sample/general_mix.jsonl --rows 1200 --seed 1234 \
    --tokenizer $out/tokenizer --max-tokens 512 --out $d/general_mix.jsonl --stats $d/mix_stats.json
}
