"""Train the embedded scale's tokenizer: byte-level BPE on the workflow's own sample text.

The embedded scale builds its model from a config, so it needs a tokenizer that exists
without a download. A small byte-level BPE (every byte is in the alphabet, so no text is ever
unknown) trained on the JSONL files that the workflow trains and evaluates on is enough.
The bundle's system prompt is added to the corpus, since it opens every conversation.
The output directory is a PreTrainedTokenizerFast with the bundle's chat template, plus the
bundle files (system prompt, generation and serving configs) with the special-token ids
filled in, so init_model.py can copy it whole into the first checkpoint.

Run as:
    python workflow/scripts/build_tokenizer.py --corpus resources/sample/general_mix.jsonl \
        --vocab-size 2048 --bundle resources/bundle --out results/embedded/tokenizer
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
from transformers import PreTrainedTokenizerFast

from lineage.chat import CHAT_TEMPLATE_FILE, END_OF_TURN, SYSTEM_PROMPT_FILE
from lineage.errors import run_cli
from lineage.io import DataError, atomic_path, read_rows_lenient

END_OF_TEXT = "<|endoftext|>"
START_OF_TURN = "<|im_start|>"
SPECIAL_TOKENS = (END_OF_TEXT, START_OF_TURN, END_OF_TURN)  # ids 0, 1, 2
# Identifiers and labels, not text the model reads.
SKIPPED_KEYS = frozenset(
    {"id", "battle_id", "prompt_id", "created_at", "source", "dataset", "split", "model", "model_a", "model_b", "vote"}
)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", action="append", required=True, help="JSONL file to learn from (repeatable)")
    parser.add_argument("--vocab-size", type=int, default=2048, help="total vocabulary incl. the 3 special tokens")
    parser.add_argument("--min-frequency", type=int, default=2, help="a pair must occur this often to be merged")
    parser.add_argument(
        "--bundle", type=Path, default=Path("resources/bundle"), help="chat template + system prompt + configs"
    )
    parser.add_argument("--out", type=Path, required=True, help="output directory (written atomically)")
    return parser.parse_args(argv)


def strings(value, key: str | None = None) -> Iterator[str]:
    """Every string inside a JSON value (message contents, questions, choices, answers ...)."""
    if key in SKIPPED_KEYS:
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k in sorted(value):
            yield from strings(value[k], k)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def corpus_texts(paths: list[str]) -> list[str]:
    """The strings of every readable row; an unreadable line is skipped and counted (the data stages that
    train on these files quarantine it with its reason, so it is in the audit, not lost)."""
    texts = []
    for path in paths:
        if not Path(path).is_file():
            raise DataError(f"{path}: corpus file not found")
        skipped = 0
        for _, row, error, _ in read_rows_lenient(path):
            if error is not None:
                skipped += 1
                continue
            texts.extend(text for text in strings(row) if text)
        if skipped:
            print(f"tokenizer: {path}: {skipped} unreadable line(s) left out of the corpus")
    if not texts:
        raise DataError(f"no text found in {', '.join(paths)}; expected JSONL rows with string fields")
    return texts


def train_bpe(texts: list[str], vocab_size: int, min_frequency: int) -> Tokenizer:
    """Byte-level BPE; offsets are not trimmed so label spans can be derived from them."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=min_frequency,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(texts, trainer=trainer, length=len(texts))
    return tokenizer


def main(args) -> int:
    bundle = args.bundle
    for name in (CHAT_TEMPLATE_FILE, SYSTEM_PROMPT_FILE, "generation_config.json", "serving_config.json"):
        if not (bundle / name).is_file():
            raise FileNotFoundError(f"{bundle / name}: bundle file missing; --bundle must point at resources/bundle")
    if args.vocab_size < 256 + len(SPECIAL_TOKENS):
        raise ValueError(f"--vocab-size {args.vocab_size} is below the byte alphabet + special tokens (259)")

    # The system prompt opens every training conversation, so it belongs in the corpus.
    texts = [(bundle / SYSTEM_PROMPT_FILE).read_text(encoding="utf-8"), *corpus_texts(args.corpus)]
    fast = PreTrainedTokenizerFast(
        tokenizer_object=train_bpe(texts, args.vocab_size, args.min_frequency),
        bos_token=END_OF_TEXT,
        eos_token=END_OF_TURN,  # generation ends at the end of the assistant turn
        pad_token=END_OF_TEXT,
        additional_special_tokens=[START_OF_TURN],
        model_max_length=int(json.loads((bundle / "serving_config.json").read_text())["max_model_len"]),
        clean_up_tokenization_spaces=False,
    )
    fast.chat_template = (bundle / CHAT_TEMPLATE_FILE).read_text(encoding="utf-8")

    generation = json.loads((bundle / "generation_config.json").read_text())
    generation.update(
        bos_token_id=fast.bos_token_id,
        eos_token_id=fast.convert_tokens_to_ids(END_OF_TURN),
        pad_token_id=fast.pad_token_id,
    )
    with atomic_path(args.out) as tmp:
        fast.save_pretrained(tmp)
        for name in (SYSTEM_PROMPT_FILE, "serving_config.json"):
            shutil.copy2(bundle / name, tmp / name)
        (tmp / "generation_config.json").write_text(json.dumps(generation, indent=2) + "\n")
    print(f"tokenizer: {len(fast)} tokens from {len(texts):,} texts in {len(args.corpus)} file(s) -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(lambda: main(parse_args())))
