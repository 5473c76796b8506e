"""Chat rendering for evaluation: the checkpoint's own chat template and system prompt, always.

The card evaluates "with the bundle's chat template and system prompt everywhere". The
template is read from the checkpoint's `chat_template.jinja` (not whatever the tokenizer
config carries) and `system_prompt.txt` becomes the first (system) turn. Benchmark prompt
layouts (each benchmark's module) follow lm-evaluation-harness under `--apply_chat_template --system_instruction`:
its task description is joined to the system turn with a blank line, the question is the
user turn, and the answer is scored or generated after the assistant header.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from lineage.chat import load_bundle
from lineage.checkpoints.format import CheckpointError


class ChatRenderer:
    """Render conversations with a checkpoint's template and system prompt, and tokenize them."""

    def __init__(self, checkpoint: str | os.PathLike, tokenizer=None):
        from transformers import AutoTokenizer

        self.directory = Path(checkpoint)
        # The same reading of the bundle files as training uses (lineage.chat), so prompts match.
        bundle = load_bundle(self.directory)
        self.chat_template = bundle.chat_template
        self.system_prompt = bundle.system_prompt
        self.tokenizer = tokenizer or AutoTokenizer.from_pretrained(self.directory)

    def with_system(self, messages: Sequence[Mapping[str, str]], extra_system: str = "") -> list[dict[str, str]]:
        """Prepend the system turn; `extra_system` (a task description) is joined with a blank line.

        As in training (lineage.chat.with_system), a conversation that brings its own system turn keeps it.
        """
        messages = [dict(m) for m in messages]
        if messages and messages[0]["role"] == "system":
            return messages
        system = join_system(self.system_prompt, extra_system)
        return ([{"role": "system", "content": system}] if system else []) + messages

    def render(self, messages: Sequence[Mapping[str, str]], *, add_generation_prompt: bool = True) -> str:
        return self.tokenizer.apply_chat_template(
            list(messages),
            chat_template=self.chat_template,
            add_generation_prompt=add_generation_prompt,
            tokenize=False,
        )

    def encode(self, text: str) -> list[int]:
        """Token ids of rendered text; special tokens come from the template text itself, none are added."""
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        """`encode` of each text in one call (a fast tokenizer spreads it over its threads)."""
        return [list(ids) for ids in self.tokenizer(list(texts), add_special_tokens=False)["input_ids"]]

    def stop_token_ids(self) -> list[int]:
        """End of turn (`<|im_end|>` when the vocabulary has it) and the tokenizer's EOS."""
        ids = []
        vocab = self.tokenizer.get_vocab()
        if "<|im_end|>" in vocab:
            ids.append(vocab["<|im_end|>"])
        if self.tokenizer.eos_token_id is not None and self.tokenizer.eos_token_id not in ids:
            ids.append(self.tokenizer.eos_token_id)
        if not ids:
            raise CheckpointError(
                f"{self.directory}: tokenizer has neither <|im_end|> nor an EOS token to stop generation"
            )
        return ids

    def pad_token_id(self) -> int:
        tok = self.tokenizer
        for candidate in (tok.pad_token_id, tok.eos_token_id):
            if candidate is not None:
                return candidate
        return self.stop_token_ids()[0]


def join_system(system_prompt: str, description: str) -> str:
    """lm-eval's `maybe_delimit(system_instruction, description, "\\n\\n")`."""
    if not system_prompt:
        return description
    if not description:
        return system_prompt
    if system_prompt[-1].isspace() or description[0].isspace():
        return system_prompt + description
    return system_prompt + "\n\n" + description
